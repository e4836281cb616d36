/* SPDX-License-Identifier: Apache-2.0 */
/*
 * answer.c — records per qtype and the reply, with CoreDNS's rcode rules.
 *
 * serve(): the longest plugin zone containing the qname (none → next
 * plugin), then per qtype:
 *   A/AAAA  addresses of the entries, deduplicated; ExternalName CNAMEs are
 *           chased: inside the zone here (≤ 8 previous links, nothing at all
 *           when the target has no records), outside through the server
 *           (chase.c), CNAME first: the lookup leaves a placeholder record
 *           after the CNAME, and serve() returns REQ_ASYNC unless the chase
 *           answered at once; kube_write_chased() puts the upstream's
 *           answer records in its place, as they came, and writes the reply
 *   TXT     only dns-version.<zone>; "no records" is a name error (quirk)
 *   CNAME   the first entry when it is a CNAME
 *   SRV     weight floor(100/N) counted before dedup, (target,port) and
 *           (target,address) dedup, glue in additional, port -1 skipped
 *   PTR     ptr.c; MX never has data; SOA and NS only at the apex
 *   AXFR/IXFR REFUSED (no transfer plugin)
 *   other   an A lookup decides NODATA vs NXDOMAIN (without chasing
 *           out-of-zone targets: their records would not be used)
 * A name error goes to the next plugin when fallthrough covers the name,
 * else SERVFAIL+SOA before the watches synced, else NXDOMAIN+SOA (the rcode
 * from kube_name_error_rcode(), context.c). No records
 * is NODATA (NOERROR+SOA). Owners repeat the qname as asked.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "plugin/kubernetes/context.h"
#include "plugin/kubernetes/chase.h"
#include "server/reqtopo.h"
#include "topology/topology.h"

static int is_name_error(int e)
{
    return e == K_NOITEMS || e == K_INVALID || e == K_NSNOTEXPOSED;
}

static int addr_rr(krrvec *out, const uint8_t *owner, const kentry *e)
{
    krr rr = { .type = e->ip.family == 4 ? T_A : T_AAAA, .owner = owner, .ttl = e->ttl,
               .ip = e->ip };
    return krr_push(out, &rr);
}

/* ---- bounded answers --------------------------------------------------------
 * The smallest a record can be once encoded: its owner a 2-octet pointer,
 * 10 fixed octets, the smallest rdata of its type (an SRV target a
 * pointer too). When the records built add up to more than q->budget this
 * way, the encoder keeps only a prefix of them (truncation drops the first
 * record that does not fit and every one after it, uncompressed or
 * compressed), so the builders stop there: the reply is the same octets,
 * TC included, at a cost bounded by what is sent. Over TCP the server
 * sends the uncompressed encoding whenever it fits 65,535 octets (it
 * truncates there when it does not), so there a record's size is its
 * uncompressed size, exactly (q->plain). */
static size_t rr_size(const kq *q, uint16_t type, const uint8_t *owner, const uint8_t *target)
{
    size_t rd = type == T_A ? 4 : type == T_AAAA ? 16 : 6 + (q->plain ? dname_len(target) : 2);
    return (q->plain ? dname_len(owner) : 2) + 10 + rd;
}

/* entries to look at first: enough for records of the smallest size to
 * overflow the budget, at least floor */
static size_t entry_cap_for(const kq *q, size_t minsize, size_t floor)
{
    size_t cap = q->budget / minsize + 2;
    return cap < floor ? floor : cap;
}

/* ---- A / AAAA with CNAME chase ---------------------------------------------- */

static int a_lookup(kq *q, const uint8_t *name, const uint8_t *owner, uint16_t qtype,
                    const uint8_t *const *chain, int nchain, krrvec *out);

/* target text of an ExternalName, fully qualified, into the arena */
static const uint8_t *cname_target(kq *q, const char *host)
{
    uint8_t wire[DNAME_MAX];
    if (dname_from_str(wire, host) < 0)
        return NULL;
    return karena_dname(&q->arena, wire);
}

static int in_chain(const uint8_t *t, const uint8_t *const *chain, int n)
{
    for (int i = 0; i < n; i++)
        if (dname_equal(chain[i], t))
            return 1;
    return 0;
}

static int copy_upstream(kq *q, const dns_msg *m, krrvec *out)
{
    for (unsigned i = 0; i < msg_count(m, SEC_ANSWER); i++) {
        dns_rr x = msg_rr(m, SEC_ANSWER, i);
        krr rr = { .type = x.type, .owner = karena_dname(&q->arena, x.owner), .ttl = x.ttl };
        uint8_t *rd = karena_alloc(&q->arena, x.rdlen ? x.rdlen : 1);
        if (!rr.owner || !rd)
            return -1;
        memcpy(rd, x.rdata, x.rdlen);
        rr.rdata = rd;
        rr.rdlen = x.rdlen;
        if (krr_push(out, &rr) < 0)
            return -1;
    }
    if (m->flags & F_TC)
        q->truncated = 1;
    return 0;
}

static int chase(kq *q, const uint8_t *name, const uint8_t *owner, uint16_t qtype,
                 const kentry *e, const uint8_t *const *chain, int nchain, krrvec *out)
{
    const uint8_t *target = cname_target(q, e->host);
    if (!target || dname_equal(target, name) || nchain > 7 || in_chain(target, chain, nchain))
        return 0;
    krr cname = { .type = T_CNAME, .owner = owner, .ttl = e->ttl, .target = target };
    const uint8_t *nchainv[10];
    for (int i = 0; i < nchain; i++)
        nchainv[i] = chain[i];
    nchainv[nchain] = target;
    if (dname_is_sub(target, q->zone_q)) {
        uint8_t low[DNAME_MAX];
        memcpy(low, target, dname_len(target));
        dname_lower(low);
        krrvec next = { 0 };
        int err = a_lookup(q, low, target, qtype, nchainv, nchain + 1, &next);
        int rc = 0;
        if (err == K_OK && next.n > 0) {
            rc = krr_push(out, &cname);
            for (size_t i = 0; rc == 0 && i < next.n; i++)
                rc = krr_push(out, &next.v[i]);
        }
        krr_free(&next);
        return rc;
    }
    /* outside the zone: the CNAME, then a placeholder for the answer of a
     * query through the whole chain, made once this lookup is over
     * (chase.c); none at the nesting limit, and then no CNAME either */
    if (q->no_chase)
        return 0;
    int idx = kube_chase_add(q, target, qtype);
    if (idx < 0)
        return 0;
    krr up = { .chase = (uint16_t)(idx + 1) };
    int rc = krr_push(out, &cname);
    return rc < 0 ? rc : krr_push(out, &up);
}

/* an address record of ours (not copied from an upstream) */
static int is_addr(const krr *r)
{
    return (r->type == T_A || r->type == T_AAAA) && !r->rdata;
}

static int same_ip(const krr *have, const krr *want)
{
    return is_addr(have) && !memcmp(&have->ip, &want->ip, sizeof want->ip);
}

static int a_lookup(kq *q, const uint8_t *name, const uint8_t *owner, uint16_t qtype,
                    const uint8_t *const *chain, int nchain, krrvec *out)
{
    size_t start = out->n, minsize = rr_size(q, qtype, owner, NULL);
    int bounded = q->budget != SIZE_MAX && nchain == 0;
    size_t cap = bounded ? entry_cap_for(q, minsize, 16) : 0;
    for (;;) {
        kvec v = { 0 };
        kset seen = { 0 };
        q->entry_cap = cap;
        q->entries_cut = 0;
        int err = kube_services(q, name, qtype, &v);
        q->entry_cap = 0;
        size_t indexed = start, size = 0;
        int full = 0;
        for (size_t i = 0; err == K_OK && !full && i < v.n; i++) {
            const kentry *e = &v.v[i];
            /* every address record after start counts for the dedup,
             * those a chase of a CNAME put there too */
            for (; indexed < out->n; indexed++)
                if (is_addr(&out->v[indexed]) &&
                    kset_add(&seen, kset_ip_hash(&out->v[indexed].ip), indexed) < 0)
                    err = K_FAIL;
            int rc = 0;
            if (e->kind == KE_CNAME) {
                rc = chase(q, name, owner, qtype, e, chain, nchain, out);
            } else if (e->kind == KE_IP && e->ip.family == (qtype == T_A ? 4 : 6)) {
                krr want = { .type = qtype, .ip = e->ip };
                uint32_t h = kset_ip_hash(&e->ip);
                if (!kset_has(&seen, out, h, same_ip, &want)) {
                    rc = addr_rr(out, owner, e);
                    if (rc == 0 && kset_add(&seen, h, out->n - 1) < 0)
                        rc = -1;
                    indexed = out->n;
                    size += minsize;
                    full = bounded && !q->nchases && size > q->budget;
                }
            }
            if (rc < 0)
                err = K_FAIL;
        }
        kvec_free(&v);
        kset_free(&seen);
        if (full)
            q->cut = 1;
        if (err != K_OK || full || !q->entries_cut)
            return err;
        /* the entries stopped before the records filled the reply (a
         * repeated address): build again from more of them */
        out->n = start;
        cap *= 8;
        q->topo_quiet = 1;
    }
}

/* ---- the other qtypes -------------------------------------------------------- */

static int txt_lookup(kq *q, const uint8_t *name, krrvec *out)
{
    kvec v = { 0 };
    int err = kube_services(q, name, T_TXT, &v);
    for (size_t i = 0; err == K_OK && i < v.n; i++) {
        if (v.v[i].kind != KE_TXT)
            continue;
        krr rr = { .type = T_TXT, .owner = q->r->q.qname, .ttl = v.v[i].ttl, .txt = v.v[i].host };
        if (krr_push(out, &rr) < 0)
            err = K_FAIL;
    }
    kvec_free(&v);
    return err;
}

static int cname_lookup(kq *q, const uint8_t *name, krrvec *out)
{
    kvec v = { 0 };
    int err = kube_services(q, name, T_CNAME, &v);
    if (err == K_OK && v.n > 0 && v.v[0].kind == KE_CNAME) {
        krr rr = { .type = T_CNAME, .owner = q->r->q.qname, .ttl = v.v[0].ttl,
                   .target = cname_target(q, v.v[0].host) };
        if (rr.target && krr_push(out, &rr) < 0)
            err = K_FAIL;
    }
    kvec_free(&v);
    return err;
}

static int same_srv(const krr *have, const krr *want)
{
    return have->type == T_SRV && have->port == want->port &&
           dname_equal(have->target, want->target);
}

static int same_glue(const krr *have, const krr *want)
{
    return have->type != T_SRV && !memcmp(&have->ip, &want->ip, sizeof want->ip) &&
           dname_equal(have->owner, want->owner);
}

static int srv_lookup(kq *q, const uint8_t *name, krrvec *out, krrvec *extra)
{
    /* at least 51 entries: from 51 on the weight is 1 whatever their
     * number (100/n is 1 up to 100, then 0, written 1) */
    int bounded = q->budget != SIZE_MAX;
    size_t cap = bounded ? entry_cap_for(q, rr_size(q, T_SRV, q->r->q.qname, q->zone_q), 51)
                         : 0;
    for (;;) {
        kvec v = { 0 };
        kset srvs = { 0 }, glue = { 0 };
        q->entry_cap = cap;
        q->entries_cut = 0;
        int err = kube_services(q, name, T_SRV, &v);
        q->entry_cap = 0;
        size_t n = v.n, size = 0;
        unsigned w = n ? (unsigned)(100 / n) : 0;
        uint16_t weight = (uint16_t)(w ? (w > 65535 ? 65535 : w) : 1);
        int full = 0;
        for (size_t i = 0; err == K_OK && !full && i < n; i++) {
            const kentry *e = &v.v[i];
            if (e->kind != KE_IP || e->port < 0)
                continue;
            krr srv = { .type = T_SRV, .owner = q->r->q.qname, .ttl = e->ttl, .weight = weight,
                        .port = (uint16_t)e->port, .target = e->key };
            uint32_t hk = dname_hash(e->key);
            uint32_t hs = kset_mix(hk, &srv.port, sizeof srv.port);
            if (!kset_has(&srvs, out, hs, same_srv, &srv)) {
                if (krr_push(out, &srv) < 0 || kset_add(&srvs, hs, out->n - 1) < 0)
                    err = K_FAIL;
                size += rr_size(q, T_SRV, srv.owner, srv.target);
                full = bounded && size > q->budget;
            }
            krr a = { .owner = e->key, .ip = e->ip };
            uint32_t hg = kset_mix(hk, &e->ip, sizeof e->ip);
            if (!kset_has(&glue, extra, hg, same_glue, &a) &&
                (addr_rr(extra, e->key, e) < 0 || kset_add(&glue, hg, extra->n - 1) < 0))
                err = K_FAIL;
        }
        kvec_free(&v);
        kset_free(&srvs);
        kset_free(&glue);
        if (full)
            q->cut = 1;
        if (err != K_OK || full || !q->entries_cut)
            return err;
        out->n = 0;                 /* build again from more entries */
        extra->n = 0;
        cap *= 8;
        q->topo_quiet = 1;
    }
}

static int same_target(const krr *have, const krr *want)
{
    return dname_equal(have->target, want->target);
}

static int ns_lookup(kq *q, const uint8_t *name, krrvec *out, krrvec *extra)
{
    kvec v = { 0 };
    kset names = { 0 };
    int err = kube_services(q, name, T_NS, &v);
    for (size_t i = 0; err == K_OK && i < v.n; i++) {
        const kentry *e = &v.v[i];
        if (e->kind != KE_IP)
            continue;
        if (addr_rr(extra, e->key, e) < 0)
            err = K_FAIL;
        krr ns = { .type = T_NS, .owner = q->r->q.qname, .ttl = e->ttl, .target = e->key };
        uint32_t h = dname_hash(e->key);
        if (!kset_has(&names, out, h, same_target, &ns) &&
            (krr_push(out, &ns) < 0 || kset_add(&names, h, out->n - 1) < 0))
            err = K_FAIL;
    }
    kvec_free(&v);
    kset_free(&names);
    return err;
}

static int mx_lookup(kq *q, const uint8_t *name)
{
    kvec v = { 0 };
    int err = kube_services(q, name, T_MX, &v);
    kvec_free(&v);
    return err;                     /* Kubernetes objects never have MX data */
}

/* ---- writing ------------------------------------------------------------------- */

static int emit(dns_msg *m, int sec, const krr *rr)
{
    if (rr->rdata || (rr->type != T_A && rr->type != T_AAAA && rr->type != T_SRV &&
                      rr->type != T_TXT && !rr->target))
        return msg_add_rr(m, sec, rr->owner, rr->type, C_IN, rr->ttl, rr->rdata, rr->rdlen);
    switch (rr->type) {
    case T_A: {
        struct in_addr a;
        memcpy(&a, rr->ip.addr, 4);
        return msg_add_a(m, sec, rr->owner, rr->ttl, &a);
    }
    case T_AAAA: {
        struct in6_addr a;
        memcpy(&a, rr->ip.addr, 16);
        return msg_add_aaaa(m, sec, rr->owner, rr->ttl, &a);
    }
    case T_SRV:
        return msg_add_srv(m, sec, rr->owner, rr->ttl, rr->prio, rr->weight, rr->port, rr->target);
    case T_TXT: {
        const char *s[1] = { rr->txt };
        return msg_add_txt(m, sec, rr->owner, rr->ttl, s, 1);
    }
    default:
        return msg_add_name(m, sec, rr->owner, rr->type, rr->ttl, rr->target);
    }
}

/* CoreDNS BackendError: rcode, AA, one SOA in authority. */
static int write_soa_reply(kq *q, int rcode)
{
    dns_req *r = q->r;
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    r->resp.rcode = (uint16_t)rcode;
    if (kube_add_soa(q, &r->resp, SEC_AUTHORITY) < 0)
        return RC_SERVFAIL;
    return req_write(r, q->h);
}

static int write_soa_answer(kq *q)
{
    dns_req *r = q->r;
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    r->resp.rcode = RC_NOERROR;
    if (kube_add_soa(q, &r->resp, SEC_ANSWER) < 0)
        return RC_SERVFAIL;
    return req_write(r, q->h);
}

static int write_answer(kq *q, const krrvec *ans, const krrvec *extra)
{
    dns_req *r = q->r;
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    if (q->truncated)
        r->resp.flags |= F_TC;
    r->resp.rcode = RC_NOERROR;
    for (size_t i = 0; i < ans->n; i++)
        if (emit(&r->resp, SEC_ANSWER, &ans->v[i]) < 0)
            return RC_SERVFAIL;
    for (size_t i = 0; i < extra->n; i++)
        if (emit(&r->resp, SEC_ADDITIONAL, &extra->v[i]) < 0)
            return RC_SERVFAIL;
    return req_write(r, q->h);
}

/* ---- serve ------------------------------------------------------------------------ */

static int fallthrough(const kube *k, const uint8_t *qname)
{
    if (!k->fall)
        return 0;
    if (k->nfall == 0)
        return 1;
    for (int i = 0; i < k->nfall; i++)
        if (dname_is_sub(qname, k->fall_zones[i]))
            return 1;
    return 0;
}

static int lookup_qtype(kq *q, const uint8_t *low, krrvec *ans, krrvec *extra)
{
    const uint8_t *qname = q->r->q.qname;
    int apex = dname_equal(low, q->k->zwire[q->zi]);
    switch (q->r->q.qtype) {
    case T_A:
    case T_AAAA:
        return a_lookup(q, low, qname, q->r->q.qtype, NULL, 0, ans);
    case T_TXT:
        return txt_lookup(q, low, ans);
    case T_CNAME:
        return cname_lookup(q, low, ans);
    case T_PTR:
        return kube_ptr(q, low, ans);
    case T_MX:
        return mx_lookup(q, low);
    case T_SRV:
        return srv_lookup(q, low, ans, extra);
    case T_SOA:
        q->want_soa = apex;
        return K_OK;
    case T_NS:
        if (apex)
            return ns_lookup(q, low, ans, extra);
        /* fall through */
    default: {
        krrvec tmp = { 0 };
        q->no_chase = 1;                /* the records are not used */
        int err = a_lookup(q, low, qname, T_A, NULL, 0, &tmp);
        krr_free(&tmp);
        return err;
    }
    }
}

int kube_write_chased(kq *q, const krrvec *ans, const krrvec *extra)
{
    krrvec full = { 0 };
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < ans->n; i++) {
        const krr *rr = &ans->v[i];
        if (!rr->chase) {
            rc = krr_push(&full, rr);
        } else {
            const dns_msg *up = kube_chase_reply(q, rr->chase - 1);
            rc = up ? copy_upstream(q, up, &full) : -1;
        }
    }
    rc = rc < 0 ? RC_SERVFAIL : write_answer(q, &full, extra);
    krr_free(&full);
    return rc;
}

static void kq_free(kq *q, krrvec *ans, krrvec *extra)
{
    kube_chase_free(q);
    krr_free(ans);
    krr_free(extra);
    karena_free(&q->arena);
}

int kube_serve(const handler *h, dns_req *r)
{
    kube *k = h->inst;
    uint8_t low[DNAME_MAX];
    memcpy(low, r->q.qname, dname_len(r->q.qname));
    dname_lower(low);
    int zi = kube_match_zone(k, low);
    if (zi < 0 || !k->st)
        return plugin_next(h, r);
    if (r->q.qtype == T_AXFR || r->q.qtype == T_IXFR)
        return RC_REFUSED;
    /* the versions first: a memo made from what the lookup below sees is
     * valid while they stay (rendered.c) */
    uint64_t sver = store_version(k->st), tver = k->topo ? topo_state_version(k->topo) : 0;
    if (k->prerender) {
        int frc = kube_rend_serve(k, h, r, low, sver, tver);
        if (frc >= 0)
            return frc;
    }
    /* a reply sent as is: records past the client's size are never built */
    size_t fixed = 12 + dname_len(r->q.qname) + 4;
    kq q = { .k = k, .st = k->st, .r = r, .h = h, .zi = zi,
             .zone_q = dname_suffix(r->q.qname, k->zlabels[zi]),
             .need_keys = r->q.qtype == T_SRV,
             .sver = sver, .tver = tver,
             .budget = req_reply_budget(r, fixed),
             .plain = r->proto == PROTO_TCP };  /* a sub-request counts compressed: its parent is UDP */
    krrvec ans = { 0 }, extra = { 0 };
    store_read_begin();
    int err = lookup_qtype(&q, low, &ans, &extra);
    int rc;
    if (q.topo_dep)
        req_topo_mark(r, q.topo_dep, q.loc.ecs);
    if (err == K_OK && q.nchases > 0 && !q.want_soa) {
        /* the records hold no store pointers: the store is not needed
         * to finish this answer */
        store_read_end();
        return kube_chase_run(&q, &ans, &extra, kube_write_chased);
    }
    if (is_name_error(err)) {
        if (fallthrough(k, low)) {
            store_read_end();
            kq_free(&q, &ans, &extra);
            return plugin_next(h, r);
        }
        rc = write_soa_reply(&q, kube_name_error_rcode(k));
    } else if (err != K_OK) {
        rc = RC_SERVFAIL;
    } else if (q.want_soa) {
        rc = write_soa_answer(&q);
    } else if (ans.n == 0) {
        rc = write_soa_reply(&q, RC_NOERROR);
    } else {
        if (k->prerender)
            kube_rend_store(&q, low, &ans, sver, tver);
        rc = write_answer(&q, &ans, &extra);
    }
    store_read_end();
    kq_free(&q, &ans, &extra);
    return rc;
}
