/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s_external — external names of cluster Services, as CoreDNS's
 * k8s_external plugin:
 *
 *   k8s_external [ZONE...] {
 *       apex APEX              the label of the nameserver names (dns)
 *       ttl TTL                0..3600, default 5
 *       headless               also headless Services' ready endpoints
 *       fallthrough [ZONE...]  NXDOMAIN goes to the next plugin
 *   }
 *
 * <svc>.<ns>.<zone> answers with the Service's spec.externalIPs and
 * load-balancer ingress (a hostname as a CNAME, its target looked up
 * through this server from the top), SRV at that name and at
 * _<port>._<proto>.<svc>.<ns>.<zone>, and with `headless` a headless
 * Service's endpoints (<ep>.<svc>.<ns>.<zone>). The data comes from the
 * kubernetes plugin of the same server block (src/server/external.h);
 * without one, startup fails.
 *
 * The zone's apex has a SOA (MNAME ns1.<apex>.<zone>, RNAME
 * hostmaster.<apex>.<zone>, 7200 1800 86400, MINIMUM the ttl) and an NS
 * ns1.<apex>.<zone>, whose addresses are those of the Services fronting
 * this server (their external addresses), else our own. <apex>.<zone> is
 * an empty non-terminal, ns1.<apex>.<zone> has those addresses, anything
 * else below <apex>.<zone> does not exist. Every answer is authoritative;
 * empty ones carry the SOA. The zones are also a transfer source
 * (server/transfer.h, published at setup under "transfer/k8s_external").
 *
 * The instance is written by setup and start on the loading thread, read
 * by workers, freed by destroy. A query whose answer has load-balancer
 * hostnames waits for their lookups (REQ_ASYNC); its state lives in an
 * xwait on the heap until the reply is written.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/external.h"
#include "server/lookup.h"
#include "server/plugin.h"
#include "server/transfer.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

#define XCHASE_DEPTH 4              /* nested lookups at most */

typedef struct k8sext {
    uint8_t (*zones)[DNAME_MAX];
    size_t nzones;
    uint8_t apex[DNAME_MAX];        /* relative: wire labels with the root octet */
    uint32_t ttl;
    int headless;
    uint8_t (*fall)[DNAME_MAX];
    long nfall;                     /* -1: off; 0: every name */
    struct server_block *blk;
    struct instance *ins;
    const external_source *src;     /* found at start */
} k8sext;

/* ---- names ------------------------------------------------------------ */

/* label? + apex + zone into out; -1 when too long. */
static int apex_name(uint8_t *out, const char *label, const uint8_t *apex, const uint8_t *zone)
{
    size_t o = 0, al = dname_len(apex) - 1, zl = dname_len(zone);
    size_t ll = label ? strlen(label) : 0;
    if ((ll ? ll + 1 : 0) + al + zl > DNAME_MAX)
        return -1;
    if (ll) {
        out[o++] = (uint8_t)ll;
        memcpy(out + o, label, ll);
        o += ll;
    }
    memcpy(out + o, apex, al);
    memcpy(out + o + al, zone, zl);
    return 0;
}

static int in_zones(const uint8_t *lname, uint8_t (*zones)[DNAME_MAX], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dname_is_sub(lname, zones[i]))
            return 1;
    return 0;
}

/* The longest zone holding lname, or -1. */
static int match_zone(const k8sext *e, const uint8_t *lname)
{
    int best = -1;
    for (size_t i = 0; i < e->nzones; i++)
        if (dname_is_sub(lname, e->zones[i]) &&
            (best < 0 || dname_labels(e->zones[i]) > dname_labels(e->zones[best])))
            best = (int)i;
    return best;
}

/* ---- what the source hands over ---------------------------------------- */

typedef struct xitem {
    int kind;
    uint8_t family;
    uint8_t addr[16];
    int32_t port;
    uint32_t ttl;
    char port_name[64];
    char proto[8];
    int has_name;
    uint8_t name[DNAME_MAX];        /* the item's own name (SRV target) */
    char host[256];                 /* EXT_HOST: at most 253 characters */
} xitem;

typedef struct xvec {
    xitem *v;
    size_t n, cap;
} xvec;

static int take(void *sink, const ext_item *it)
{
    xvec *x = sink;
    if (VEC_RESERVE(x->v, x->cap, x->n + 1) < 0)
        return -1;
    xitem *o = &x->v[x->n];
    memset(o, 0, sizeof *o);
    o->kind = it->kind;
    o->family = it->family;
    memcpy(o->addr, it->addr, 16);
    o->port = it->port;
    o->ttl = it->ttl;
    if ((it->port_name && snprintf(o->port_name, sizeof o->port_name, "%s", it->port_name) >=
                              (int)sizeof o->port_name) ||
        (it->proto && snprintf(o->proto, sizeof o->proto, "%s", it->proto) >= (int)sizeof o->proto))
        return 0;                   /* not a label we could write: skip it */
    o->has_name = it->name != NULL;
    if (it->name)
        memcpy(o->name, it->name, dname_len(it->name));
    if (it->host && snprintf(o->host, sizeof o->host, "%s", it->host) >= (int)sizeof o->host)
        return 0;                   /* not a name: skip it */
    x->n++;
    return 0;
}

/* ---- lookups of load-balancer hostnames -------------------------------- */

/* A query waiting for the lookups of its items' hostnames (server/lookup.h).
 * The sub-queries carry the client's RD bit, EDNS size and DO bit, as
 * CoreDNS's upstream lookup copies the client's request. */
typedef struct xwait {
    const handler *h;
    dns_req *r;
    int zi;
    xvec items;
    lookup_set *ls;
} xwait;

static int add_chase(xwait *w, const char *host, uint16_t qtype)
{
    uint8_t name[DNAME_MAX];
    if (dname_from_str(name, host) <= 0 || lookup_find(w->ls, name, qtype) >= 0)
        return 0;
    lookup_add(w->ls, name, qtype);     /* not asked (depth): no records */
    return 0;
}

static const dns_msg *find_chase(const xwait *w, const char *host, uint16_t qtype)
{
    uint8_t name[DNAME_MAX];
    if (!w || dname_from_str(name, host) <= 0)
        return NULL;
    return lookup_reply(w->ls, lookup_find(w->ls, name, qtype));
}

/* Append the answer records of a lookup to a section; 1 when it was
 * truncated. */
static int copy_answers(dns_msg *m, int sec, const dns_msg *reply)
{
    if (!reply)
        return 0;
    unsigned n = msg_count(reply, SEC_ANSWER);
    for (unsigned i = 0; i < n; i++) {
        dns_rr rr = msg_rr(reply, SEC_ANSWER, i);
        msg_add_rr(m, sec, rr.owner, rr.type, rr.rclass, rr.ttl, rr.rdata, rr.rdlen);
    }
    return (reply->flags & F_TC) != 0;
}

static void xwait_free(xwait *w)
{
    lookup_free(w->ls);
    free(w->items.v);
    free(w);
}

/* ---- answers ------------------------------------------------------------ */

static int add_soa(const k8sext *e, dns_msg *m, int sec, int zi)
{
    const uint8_t *zone = e->zones[zi];
    uint8_t mname[DNAME_MAX], rname[DNAME_MAX];
    if (apex_name(mname, "ns1", e->apex, zone) < 0 ||
        apex_name(rname, "hostmaster", e->apex, zone) < 0)
        return -1;
    return msg_add_soa(m, sec, zone, e->ttl, mname, rname, e->src->serial(e->src->data, zone),
                       7200, 1800, 86400, e->ttl);
}

static void add_addr(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const xitem *it)
{
    if (it->family == 4)
        msg_add_a(m, sec, owner, ttl, (const struct in_addr *)it->addr);
    else
        msg_add_aaaa(m, sec, owner, ttl, (const struct in6_addr *)it->addr);
}

/* A or AAAA (family 4 or 6) at owner into the answer section: CoreDNS's
 * a()/aaaa(). w: the finished lookups of hostnames (NULL: none); cnames 0
 * leaves hostnames out. 1 when one of those lookups was truncated. */
static int add_addrs(const k8sext *e, dns_msg *m, const uint8_t *owner, const xitem *items,
                     size_t n, int family, const xwait *w, int cnames)
{
    int trunc = 0;
    for (size_t i = 0; i < n; i++) {
        const xitem *it = &items[i];
        if (it->kind == EXT_HOST) {
            if (!cnames)
                continue;
            uint8_t target[DNAME_MAX];
            if (dname_from_str(target, it->host) <= 0)
                continue;
            msg_add_name(m, SEC_ANSWER, owner, T_CNAME, it->ttl, target);
            trunc |= copy_answers(m, SEC_ANSWER, find_chase(w, it->host, family == 4 ? T_A : T_AAAA));
            continue;
        }
        if (it->family != family)
            continue;
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = items[j].kind == EXT_ADDR && items[j].family == family &&
                  !memcmp(items[j].addr, it->addr, 16);
        if (!dup)
            add_addr(m, SEC_ANSWER, owner, e->ttl, it);
    }
    return trunc;
}

/* Seen (target, port) or (target, address) pairs, CoreDNS's isDuplicate. */
typedef struct seen {
    const uint8_t *name;
    int port;                       /* -1 for an address pair */
    const xitem *addr;              /* NULL for a port pair */
} seen;

static int dup_seen(seen *s, size_t *n, const uint8_t *name, int port, const xitem *addr)
{
    for (size_t i = 0; i < *n; i++) {
        if (!dname_equal(s[i].name, name))
            continue;
        if (!addr && !s[i].addr && s[i].port == port)
            return 1;
        if (addr && s[i].addr && (addr->kind == EXT_HOST ||
            (s[i].addr->family == addr->family && !memcmp(s[i].addr->addr, addr->addr, 16))))
            return 1;
    }
    s[*n].name = name;
    s[*n].port = addr ? -1 : port;
    s[*n].addr = addr;
    (*n)++;
    return 0;
}

/* SRV at owner (CoreDNS's srv(): every item has priority 0 and weight
 * 100), their targets' addresses in the additional section when extra. */
static void add_srv(const k8sext *e, dns_msg *m, const uint8_t *owner, const xitem *items,
                    size_t n, const xwait *w, int extra)
{
    seen *s = calloc(2 * n + 1, sizeof *s);
    uint8_t (*targets)[DNAME_MAX] = calloc(n + 1, sizeof *targets);
    if (!s || !targets) {
        free(s);
        free(targets);
        return;
    }
    size_t ns = 0;
    double w1 = 100.0 / (double)(100 * (long)n) * 100;
    uint16_t weight = (uint16_t)floor(w1);
    if (weight == 0)
        weight = 1;
    for (size_t i = 0; i < n; i++) {
        const xitem *it = &items[i];
        if (it->port == -1)
            continue;
        if (it->kind == EXT_HOST) {
            if (dname_from_str(targets[i], it->host) <= 0)
                continue;
            if (!dup_seen(s, &ns, targets[i], it->port, NULL))
                msg_add_srv(m, SEC_ANSWER, owner, it->ttl, 0, weight, (uint16_t)it->port, targets[i]);
            if (!dup_seen(s, &ns, targets[i], -1, it) && extra) {
                copy_answers(m, SEC_ADDITIONAL, find_chase(w, it->host, T_A));
                copy_answers(m, SEC_ADDITIONAL, find_chase(w, it->host, T_AAAA));
            }
            continue;
        }
        if (!it->has_name)
            continue;
        if (!dup_seen(s, &ns, it->name, it->port, NULL))
            msg_add_srv(m, SEC_ANSWER, owner, it->ttl, 0, weight, (uint16_t)it->port, it->name);
        if (!dup_seen(s, &ns, it->name, -1, it) && extra)
            add_addr(m, SEC_ADDITIONAL, it->name, e->ttl, it);
    }
    free(s);
    free(targets);
}

static void answer_ptr(const k8sext *e, xwait *w)
{
    dns_msg *m = &w->r->resp;
    char zone[DNAME_STR_MAX], text[DNAME_STR_MAX * 2];
    dname_to_str(zone, sizeof zone, e->zones[0]);
    for (size_t i = 0; i < w->items.n; i++) {
        const xitem *it = &w->items.v[i];
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = !strcmp(w->items.v[j].host, it->host);
        uint8_t target[DNAME_MAX];
        snprintf(text, sizeof text, "%s.%s", it->host, strcmp(zone, ".") ? zone : "");
        if (!dup && dname_from_str(target, text) > 0)
            msg_add_name(m, SEC_ANSWER, w->r->q.qname, T_PTR, e->ttl, target);
    }
}

/* Build and write the reply for the items found (their lookups done). */
static int write_items(xwait *w)
{
    const k8sext *e = w->h->inst;
    dns_req *r = w->r;
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags |= F_AA;
    int trunc = 0;
    const uint8_t *qn = r->q.qname;
    switch (r->q.qtype) {
    case T_A: trunc = add_addrs(e, &r->resp, qn, w->items.v, w->items.n, 4, w, 1); break;
    case T_AAAA: trunc = add_addrs(e, &r->resp, qn, w->items.v, w->items.n, 6, w, 1); break;
    case T_SRV: add_srv(e, &r->resp, qn, w->items.v, w->items.n, w, 1); break;
    case T_PTR: answer_ptr(e, w); break;
    default: break;
    }
    if (trunc)
        r->resp.flags |= F_TC;
    if (msg_count(&r->resp, SEC_ANSWER) == 0)
        add_soa(e, &r->resp, SEC_AUTHORITY, w->zi);
    return req_write(r, w->h);
}

static void chase_done(lookup_set *ls, void *data)
{
    (void)ls;
    xwait *w = data;
    dns_req *r = w->r;
    int rc = write_items(w);
    xwait_free(w);
    req_finish(r, rc);
}

/* Start the lookups (those that could be made); the rcode when all
 * finished at once, else REQ_ASYNC. Takes w. */
static int run(xwait *w)
{
    if (lookup_run(w->ls, chase_done, w))
        return REQ_ASYNC;
    int rc = write_items(w);
    xwait_free(w);
    return rc;
}

/* ---- the apex ------------------------------------------------------------ */

static int collect_ns(const k8sext *e, int zi, xvec *out)
{
    return e->src->ns_addrs(e->src->data, e->zones[zi], e->headless, take, out);
}

static int serve_apex(const handler *h, dns_req *r, int zi)
{
    const k8sext *e = h->inst;
    dns_msg *m = &r->resp;
    msg_reply_to(m, &r->q);
    m->flags |= F_AA;
    if (r->q.qtype == T_SOA) {
        add_soa(e, m, SEC_ANSWER, zi);
    } else if (r->q.qtype == T_NS) {
        uint8_t ns[DNAME_MAX], glue[DNAME_MAX];
        if (apex_name(ns, "ns1", e->apex, e->zones[zi]) == 0)
            msg_add_name(m, SEC_ANSWER, e->zones[zi], T_NS, e->ttl, ns);
        xvec v = { 0 };
        collect_ns(e, zi, &v);
        if (apex_name(glue, "ns1", e->apex, r->q.qname) == 0)
            for (size_t i = 0; i < v.n; i++)
                add_addr(m, SEC_ADDITIONAL, glue, e->ttl, &v.v[i]);
        free(v.v);
    } else {
        add_soa(e, m, SEC_AUTHORITY, zi);
    }
    return req_write(r, h);
}

/* <apex>.<zone> and below: where the nameserver names live. */
static int serve_sub_apex(const handler *h, dns_req *r, const uint8_t *lname, int zi)
{
    const k8sext *e = h->inst;
    dns_msg *m = &r->resp;
    msg_reply_to(m, &r->q);
    m->flags |= F_AA;
    int labels = dname_labels(lname) - dname_labels(e->zones[zi]);
    if (labels == 2 && lname[0] == 3 && !memcmp(lname + 1, "ns1", 3)) {
        xvec v = { 0 };
        collect_ns(e, zi, &v);
        int fam = r->q.qtype == T_A ? 4 : r->q.qtype == T_AAAA ? 6 : 0;
        for (size_t i = 0; i < v.n; i++)
            if (v.v[i].family == fam)
                add_addr(m, SEC_ANSWER, r->q.qname, e->ttl, &v.v[i]);
        free(v.v);
    } else if (labels != 1) {
        m->rcode = RC_NXDOMAIN;
    }
    if (msg_count(m, SEC_ANSWER) == 0)
        add_soa(e, m, SEC_AUTHORITY, zi);
    return req_write(r, h);
}

/* ---- serve ------------------------------------------------------------ */

static int k8sext_serve(const handler *h, dns_req *r)
{
    const k8sext *e = h->inst;
    uint8_t lname[DNAME_MAX];
    memcpy(lname, r->q.qname, dname_len(r->q.qname));
    dname_lower(lname);
    int zi = match_zone(e, lname);
    if (zi < 0 || !e->src)
        return plugin_next(h, r);
    for (size_t i = 0; i < e->nzones; i++) {
        uint8_t sub[DNAME_MAX];
        if (dname_equal(lname, e->zones[i]))
            return serve_apex(h, r, zi);
        if (apex_name(sub, NULL, e->apex, e->zones[i]) == 0 && dname_is_sub(lname, sub))
            return serve_sub_apex(h, r, lname, zi);
    }
    xwait *w = calloc(1, sizeof *w);
    if (!w)
        return RC_SERVFAIL;
    w->h = h;
    w->r = r;
    w->zi = zi;
    if (!(w->ls = lookup_new(e->ins, r, XCHASE_DEPTH, LOOKUP_CLIENT_RD))) {
        xwait_free(w);
        return RC_SERVFAIL;
    }
    int rc = e->src->lookup(e->src->data, lname, e->zones[zi], r->q.qtype, e->headless, take,
                            &w->items);
    if (rc < 0) {
        xwait_free(w);
        return RC_SERVFAIL;
    }
    if (w->items.n == 0) {
        xwait_free(w);
        if (rc == RC_NXDOMAIN && e->nfall >= 0 &&
            (e->nfall == 0 || in_zones(lname, e->fall, (size_t)e->nfall)))
            return plugin_next(h, r);
        msg_reply_to(&r->resp, &r->q);
        r->resp.flags |= F_AA;
        r->resp.rcode = (uint16_t)rc;
        add_soa(e, &r->resp, SEC_AUTHORITY, zi);
        return req_write(r, h);
    }
    uint16_t qt = r->q.qtype;
    for (size_t i = 0; i < w->items.n; i++) {
        const xitem *it = &w->items.v[i];
        if (it->kind != EXT_HOST || (qt != T_A && qt != T_AAAA && qt != T_SRV))
            continue;
        if (qt == T_SRV && it->port == -1)
            continue;
        if (qt == T_A || qt == T_SRV)
            add_chase(w, it->host, T_A);
        if (qt == T_AAAA || qt == T_SRV)
            add_chase(w, it->host, T_AAAA);
    }
    return run(w);
}

/* ---- zone transfers ------------------------------------------------------ */

/* The zone as a transfer source (server/transfer.h), CoreDNS's
 * k8s_external Transfer: the SOA, the NS and ns1.<apex> addresses, then per
 * Service (in the store's order) the records its names answer:
 * A/AAAA/CNAME and SRV at <svc>.<ns>.<zone>; with headless, A/AAAA and SRV
 * at each <endpoint>.<svc>.<ns>.<zone>; SRV at
 * _<port>._<proto>.<svc>.<ns>.<zone> per named port; the SOA again.
 * Hostnames are not looked up (CNAMEs alone). */
typedef struct xfr_w {
    const k8sext *e;
    dns_msg m;
    xfr_emit_fn emit;
    void *sink;
    int failed;
    char *names;                    /* "ns\0name\0" pairs back to back */
    size_t len, cap;
} xfr_w;

static void flush(xfr_w *x)
{
    unsigned n = msg_count(&x->m, SEC_ANSWER);
    for (unsigned i = 0; i < n && !x->failed; i++) {
        dns_rr rr = msg_rr(&x->m, SEC_ANSWER, i);
        x->failed = x->emit(x->sink, &rr) < 0;
    }
    msg_reset(&x->m);
}

static int keep_name(void *sink, const char *ns, const char *name)
{
    xfr_w *x = sink;
    size_t need = strlen(ns) + strlen(name) + 2;
    if (VEC_RESERVE_FROM(x->names, x->cap, x->len + need, 4096) < 0)
        return -1;
    memcpy(x->names + x->len, ns, strlen(ns) + 1);
    x->len += strlen(ns) + 1;
    memcpy(x->names + x->len, name, strlen(name) + 1);
    x->len += strlen(name) + 1;
    return 0;
}

/* label? + name + ns + zone */
static int svc_name(uint8_t *out, const char *l1, const char *l2, const char *name,
                    const char *ns, const uint8_t *zone)
{
    const char *labels[] = { l1, l2, name, ns };
    size_t o = 0, zl = dname_len(zone);
    for (int i = 0; i < 4; i++) {
        size_t l = labels[i] ? strlen(labels[i]) : 0;
        if (!labels[i])
            continue;
        if (l == 0 || l > 63 || o + 1 + l + zl > DNAME_MAX)
            return -1;
        out[o++] = (uint8_t)l;
        memcpy(out + o, labels[i], l);
        o += l;
    }
    memcpy(out + o, zone, zl);
    return 0;
}

static void xfr_service(xfr_w *x, int zi, const char *ns, const char *name)
{
    const k8sext *e = x->e;
    const uint8_t *zone = e->zones[zi];
    uint8_t owner[DNAME_MAX];
    xvec v = { 0 }, sub = { 0 };
    if (svc_name(owner, NULL, NULL, name, ns, zone) < 0)
        return;
    if (e->src->lookup(e->src->data, owner, zone, T_A, e->headless, take, &v) < 0 || v.n == 0)
        goto out;
    sub.v = calloc(v.n, sizeof *sub.v);
    if (!sub.v) {
        x->failed = 1;
        goto out;
    }
    add_addrs(e, &x->m, owner, v.v, v.n, 4, NULL, 1);
    add_addrs(e, &x->m, owner, v.v, v.n, 6, NULL, 0);
    add_srv(e, &x->m, owner, v.v, v.n, NULL, 0);
    flush(x);
    /* endpoint names (headless): each distinct one, in order */
    for (size_t i = 0; i < v.n && !x->failed; i++) {
        const xitem *it = &v.v[i];
        int first = it->has_name && !dname_equal(it->name, owner);
        for (size_t j = 0; j < i && first; j++)
            first = !(v.v[j].has_name && dname_equal(v.v[j].name, it->name));
        if (!first)
            continue;
        sub.n = 0;
        for (size_t j = i; j < v.n; j++)
            if (v.v[j].has_name && dname_equal(v.v[j].name, it->name))
                sub.v[sub.n++] = v.v[j];
        add_addrs(e, &x->m, it->name, sub.v, sub.n, 4, NULL, 1);
        add_addrs(e, &x->m, it->name, sub.v, sub.n, 6, NULL, 0);
        add_srv(e, &x->m, it->name, sub.v, sub.n, NULL, 0);
        flush(x);
    }
    /* _<port>._<proto> names: each distinct named port */
    for (size_t i = 0; i < v.n && !x->failed; i++) {
        const xitem *it = &v.v[i];
        int first = it->port_name[0] && it->proto[0];
        for (size_t j = 0; j < i && first; j++)
            first = strcmp(v.v[j].port_name, it->port_name) || strcmp(v.v[j].proto, it->proto);
        if (!first)
            continue;
        char pl[66], tl[10];
        uint8_t srv[DNAME_MAX];
        snprintf(pl, sizeof pl, "_%s", it->port_name);
        snprintf(tl, sizeof tl, "_%s", it->proto);
        if (svc_name(srv, pl, tl, name, ns, zone) < 0)
            continue;
        sub.n = 0;
        for (size_t j = i; j < v.n; j++)
            if (!strcmp(v.v[j].port_name, it->port_name) && !strcmp(v.v[j].proto, it->proto))
                sub.v[sub.n++] = v.v[j];
        add_srv(e, &x->m, srv, sub.v, sub.n, NULL, 0);
        flush(x);
    }
out:
    free(v.v);
    free(sub.v);
}

static int k8sext_xfr_walk(void *data, const uint8_t *zone, uint32_t serial, xfr_emit_fn emit,
                           void *sink)
{
    const k8sext *e = data;
    int zi = -1;
    for (size_t i = 0; i < e->nzones && zi < 0; i++)
        if (dname_equal(zone, e->zones[i]))
            zi = (int)i;
    if (zi < 0 || !e->src)
        return XFR_NOTAUTH;
    xfr_w x = { .e = e, .emit = emit, .sink = sink };
    msg_init(&x.m);
    add_soa(e, &x.m, SEC_ANSWER, zi);
    uint32_t now = msg_count(&x.m, SEC_ANSWER) ? e->src->serial(e->src->data, e->zones[zi]) : 0;
    flush(&x);
    if (serial != 0 && serial >= now)
        goto done;                  /* up to date: the SOA alone, as CoreDNS */
    uint8_t ns[DNAME_MAX];
    if (apex_name(ns, "ns1", e->apex, e->zones[zi]) == 0) {
        msg_add_name(&x.m, SEC_ANSWER, e->zones[zi], T_NS, e->ttl, ns);
        xvec v = { 0 };
        collect_ns(e, zi, &v);
        for (size_t i = 0; i < v.n; i++)
            add_addr(&x.m, SEC_ANSWER, ns, e->ttl, &v.v[i]);
        free(v.v);
        flush(&x);
    }
    if (e->src->names(e->src->data, e->headless, keep_name, &x) < 0)
        x.failed = 1;
    for (size_t o = 0; o < x.len && !x.failed;) {
        const char *sns = x.names + o, *sname = sns + strlen(sns) + 1;
        o = (size_t)(sname - x.names) + strlen(sname) + 1;
        xfr_service(&x, zi, sns, sname);
    }
    add_soa(e, &x.m, SEC_ANSWER, zi);
    flush(&x);
done:
    msg_free(&x.m);
    free(x.names);
    return x.failed ? XFR_FAIL : XFR_OK;
}

/* ---- setup ------------------------------------------------------------ */

static int add_zones(cf_disp *d, uint8_t (**zones)[DNAME_MAX], size_t *n, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k < 0)
        return cf_err(d, "plugin/k8s_external: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(*zones, *n + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/k8s_external: out of memory");
    }
    for (int i = 0; i < k; i++) {
        dname_from_str((*zones)[*n], z[i]);
        dname_lower((*zones)[(*n)++]);
    }
    free(z);
    return 0;
}

static void k8sext_destroy(void *p)
{
    k8sext *e = p;
    if (!e)
        return;
    free(e->zones);
    free(e->fall);
    free(e);
}

/* Go's strconv.Atoi: an optional sign and decimal digits. */
static int atoi_go(const char *s, long *out)
{
    const char *p = s + (*s == '+' || *s == '-');
    if (!*p || strspn(p, "0123456789") != strlen(p) || strlen(p) > 18)
        return -1;
    *out = strtol(s, NULL, 10);
    return 0;
}

static int parse_prop(cf_disp *d, k8sext *e)
{
    const char *p = cf_val(d), *args[64];
    if (!strcmp(p, "ttl")) {
        long t;
        if (cf_remaining_args(d, args, 64) == 0)
            return cf_arg_err(d);
        if (atoi_go(args[0], &t) < 0)
            return cf_err(d, "plugin/k8s_external: strconv.Atoi: parsing \"%s\": invalid syntax",
                          args[0]);
        if (t < 0 || t > 3600)
            return cf_err(d, "plugin/k8s_external: ttl must be in range [0, 3600]: %ld", t);
        e->ttl = (uint32_t)t;
        return 0;
    }
    if (!strcmp(p, "apex")) {
        char text[DNAME_STR_MAX + 2];
        if (cf_remaining_args(d, args, 64) == 0)
            return cf_arg_err(d);
        snprintf(text, sizeof text, "%s.", args[0]);
        size_t l = strlen(text);
        if (l >= 2 && text[l - 2] == '.')
            text[l - 1] = '\0';
        if (!strcmp(text, ".") || dname_from_str(e->apex, text) <= 0)
            return cf_err(d, "plugin/k8s_external: invalid apex '%s'", args[0]);
        dname_lower(e->apex);
        return 0;
    }
    if (!strcmp(p, "headless")) {
        e->headless = 1;
        return 0;
    }
    if (!strcmp(p, "fallthrough")) {
        int n = cf_remaining_args(d, args, 64);
        size_t nf = 0;
        free(e->fall);
        e->fall = NULL;
        for (int i = 0; i < n && i < 64; i++)
            if (add_zones(d, &e->fall, &nf, args[i]) < 0)
                return -1;
        e->nfall = (long)nf;
        return 0;
    }
    return cf_err(d, "plugin/k8s_external: unknown property '%s'", p);
}

static int k8sext_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    k8sext *e = calloc(1, sizeof *e);
    if (!e)
        return cf_err(d, "plugin/k8s_external: out of memory");
    e->ttl = 5;
    e->nfall = -1;
    dname_from_str(e->apex, "dns.");
    e->blk = ctx->blk;
    int rc = 0;
    while (rc == 0 && cf_next(d)) {
        const char *args[64];
        int n = cf_remaining_args(d, args, 64);
        free(e->zones);
        e->zones = NULL;
        e->nzones = 0;
        for (int i = 0; rc == 0 && i < n && i < 64; i++)
            rc = add_zones(d, &e->zones, &e->nzones, args[i]);
        for (size_t i = 0; rc == 0 && n == 0 && ctx->blk && i < ctx->blk->nkeys; i++)
            rc = add_zones(d, &e->zones, &e->nzones, ctx->blk->keys[i].zone);
        while (rc == 0 && cf_next_block(d))
            rc = parse_prop(d, e);
    }
    xfr_source xs = { .walk = k8sext_xfr_walk, .data = e };
    if (rc == 0 && xfr_source_publish(ctx->blk, "k8s_external", &xs) < 0)
        rc = cf_err(d, "plugin/k8s_external: out of memory");
    if (rc < 0) {
        k8sext_destroy(e);
        return -1;
    }
    *inst = e;
    return 0;
}

static int k8sext_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    k8sext *e = inst;
    e->ins = ins;
    e->src = e->blk ? external_source_find(e->blk, "kubernetes") : NULL;
    if (!e->src) {
        snprintf(err, errlen, "plugin/k8s_external: kubernetes plugin not loaded");
        return -1;
    }
    return 0;
}

const plugin_def plugin_k8s_external = {
    .name = "k8s_external",
    .setup = k8sext_setup,
    .start = k8sext_start,
    .destroy = k8sext_destroy,
    .serve = k8sext_serve,
};
