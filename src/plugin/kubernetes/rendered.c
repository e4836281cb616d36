/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rendered.c — pre-rendered answers: a per-worker memo of A/AAAA answers in
 * wire form, so that a repeated question costs a hash lookup and a copy
 * instead of the name grammar, the store lookups, the topology decision
 * and the encoder.
 *
 * What is memoised: a positive A or AAAA answer of the slow path (answer.c)
 * whose records are all addresses owned by the qname — no CNAME, no chase,
 * no truncation (but see "big" below) — as the records' octets after the
 * owner name (type,
 * class, TTL, RDLENGTH, RDATA), with what it depended on:
 *   key      the lower-cased qname, the qtype and the client's variant:
 *            "" for an answer that depends on no client (ClusterIP, a
 *            headless Service without policy), else the variant the cache
 *            plugin uses too (topo_client_variant: "z:<zone>", "n:<node>",
 *            "?" for an unknown client). A client-dependent answer also
 *            leaves a marker under "" that says which dimension (zone or
 *            node) to look up: what an answer depends on is a property of
 *            the Service and its endpoints, never of the client.
 *   version  store_version() and topo_state_version() loaded before the
 *            slow path looked: an entry is used only while both are
 *            unchanged, so any write to the store (a Service, slice, pod,
 *            node or namespace event) or a same-zone Prefer change makes
 *            the next query take the slow path and memoise again. A change
 *            seen is answered at once.
 *   topology the policy/outcome the slow path counted (topo_count), so a
 *            hit counts topodns_topology_answers_total the same, and the
 *            dependency for topo_mark (the reply's ECS scope).
 * A hit writes header + question + (qname as asked + octets) per record
 * with req_write_raw(): ID, flags and the case of the name come from the
 * query, EDNS is echoed by the server exactly as for any reply.
 *
 * Which queries may take the fast path (kube_rend_serve): A or AAAA, a
 * client's query over UDP or TCP with no write hook registered by a plugin
 * before us (req_raw_ok: cache, loadbalance, rewrite... need r->resp's
 * records), no EDNS Client Subnet option (its scope is the slow path's),
 * served by a worker (req_worker_index) below KREND_MAX_WORKERS. Everything
 * before us in the chain (log, errors, prometheus, metadata, acl, ...) ran
 * already; the done hooks run as for any reply. A reply that does not fit
 * the client's size uncompressed goes the slow path (it compresses or
 * truncates).
 *
 * Big entries: over TCP the slow path sends a large headless Service's
 * answer as the uncompressed records that fit 65,535 octets, with TC when
 * that is not all of them (answer.c builds a few more than fit and stops:
 * q->cut). Such an answer larger than KREND_MAX_WIRE is kept for TCP
 * queries without EDNS only (no OPT record to make room for), at most
 * KREND_BIG_MAX per worker; a hit sends the same prefix — the records of
 * one answer are all of one size — and sets TC the same way. The reply is
 * written into the worker's 64 KB wbuf; a hit for the same question, as
 * asked, as the last one rewrites only the header.
 *
 * Threads and memory: k->rend[i] is worker i's memo — made, read, written
 * and replaced only by worker i's thread (no locks, no atomics), freed by
 * kube_rend_free() from the plugin's destroy, after every worker stopped.
 * An entry holds no store pointers (only octets and strings it owns), so
 * it never outlives what it points to. Beside the answers each memo keeps
 * KLOC_SLOTS clients' variants by address (topo_locate's result as
 * strings, valid for one store version): a hit on a client-dependent
 * answer then needs no store lookup at all. Each memo has KREND_SLOTS
 * direct-mapped slots: a colliding key replaces the entry, bounding the
 * memory to KREND_SLOTS entries of at most KREND_MAX_WIRE octets per
 * worker, plus KREND_BIG_MAX big ones and wbuf (64 KB each).
 *
 * The switch: TOPODNS_NO_PRERENDER=1 in the environment (read at setup)
 * turns the fast path off: every query takes the slow path
 * (docs/testing.md; tests/integration/prerender_parity.sh compares both).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/reqtopo.h"
#include "topology/topology.h"

struct krend_entry {
    uint64_t sver, tver;            /* versions it was made at */
    uint32_t hash;
    uint16_t qtype;
    uint8_t namelen;                /* key: name then variant, in data */
    uint16_t varlen;
    uint8_t dep;                    /* TOPO_DEP_* of the answer */
    uint8_t marker;                 /* 1: "look up the client's variant" */
    uint8_t counted;                /* topo_count(policy, outcome) per hit */
    uint8_t big;                    /* larger than KREND_MAX_WIRE: TCP only */
    uint64_t serial;                /* big: which entry wbuf was written from */
    uint8_t policy, outcome;
    uint16_t ancount;
    uint16_t taillen;               /* record octets after the owner names */
    uint8_t data[];                 /* name, variant, tails */
};

/* A client's variants, by its address: what topo_locate() found, valid
 * while the store's version is the one it was made at (a client moves only
 * with a store write). A variant that does not fit is not kept. */
#define KLOC_SLOTS 256
#define KLOC_ZONE 72                /* "z:" + a label value (63) */
#define KLOC_NODE 264               /* "n:" + a node name (253) */

struct kloc {
    st_ip ip;
    uint8_t valid;
    uint16_t zl, nl;
    uint64_t sver;
    char zone[KLOC_ZONE], node[KLOC_NODE];
};

struct krend {
    struct krend_entry *slot[KREND_SLOTS];
    struct kloc loc[KLOC_SLOTS];
    unsigned nbig;                  /* big entries in slot[] (<= KREND_BIG_MAX) */
    uint8_t *wbuf;                  /* 64 KB to write a big entry's reply in */
    uint64_t serials;               /* big entries made */
    uint64_t wserial;               /* the one in wbuf, 0: none */
};

int kube_rend_env(void)
{
    const char *v = getenv("TOPODNS_NO_PRERENDER");
    return !(v && *v && strcmp(v, "0") != 0);
}

void kube_rend_free(kube *k)
{
    for (int i = 0; i < KREND_MAX_WORKERS; i++) {
        struct krend *m = k->rend[i];
        if (!m)
            continue;
        for (size_t s = 0; s < KREND_SLOTS; s++)
            free(m->slot[s]);
        free(m->wbuf);
        free(m);
        k->rend[i] = NULL;
    }
}

static uint32_t key_hash(const uint8_t *name, size_t nl, uint16_t qtype, const char *var,
                         size_t vl)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ qtype;
    size_t i = 0;
    for (; i + 8 <= nl; i += 8) {
        uint64_t w;
        memcpy(&w, name + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < nl; i++)
        h = (h ^ name[i]) * 0x100000001b3ull;
    for (size_t j = 0; j < vl; j++)
        h = (h ^ (uint8_t)var[j]) * 0x100000001b3ull;
    h ^= h >> 32;
    return (uint32_t)h;
}

static struct krend_entry *find(struct krend *m, uint32_t hash, const uint8_t *name, size_t nl,
                                uint16_t qtype, const char *var, size_t vl)
{
    struct krend_entry *e = m->slot[hash & (KREND_SLOTS - 1)];
    if (!e || e->hash != hash || e->qtype != qtype || e->namelen != nl || e->varlen != vl ||
        memcmp(e->data, name, nl) || memcmp(e->data + nl, var, vl))
        return NULL;
    return e;
}

static void put(struct krend *m, struct krend_entry *e)
{
    struct krend_entry **s = &m->slot[e->hash & (KREND_SLOTS - 1)];
    if (*s && (*s)->big)
        m->nbig--;
    free(*s);
    *s = e;
    if (e->big)
        m->nbig++;
}

static struct krend *memo_of(kube *k, const dns_req *r, int create)
{
    int w = req_worker_index(r);
    if (w < 0 && k->rend_unthreaded)
        w = 0;                      /* single-threaded tests */
    if (w < 0 || w >= KREND_MAX_WORKERS)
        return NULL;
    if (!k->rend[w] && create)
        k->rend[w] = calloc(1, sizeof *k->rend[w]);
    return k->rend[w];
}

static int eligible(const kube *k, const dns_req *r)
{
    return k->prerender && (r->q.qtype == T_A || r->q.qtype == T_AAAA) && req_raw_ok(r) &&
           !r->q.edns.has_ecs;
}

/* The client's variant in dimension dep (var points into the worker's
 * client table): 0, or -1 when it cannot be told here (no address, ECS). */
static int client_variant(kube *k, struct krend *m, const dns_req *r, int dep, uint64_t sver,
                          const char **var, size_t *vl)
{
    st_ip ip;
    int ecs = 0;
    memset(&ip, 0, sizeof ip);
    if (!topo_engine_store(k->topo))
        return -1;
    topo_client cl;
    req_topo_client(r, &cl);
    if (topo_client_addr(topo_engine_cfg(k->topo), &cl, &ip, &ecs) < 0 || ecs)
        return -1;
    uint32_t h = key_hash(ip.addr, 16, ip.family, "", 0);
    struct kloc *c = &m->loc[h & (KLOC_SLOTS - 1)];
    if (!c->valid || c->sver != sver || memcmp(&c->ip, &ip, sizeof ip)) {
        topo_loc loc;
        store_read_begin();
        topo_locate_ip(k->topo, &ip, &loc);
        size_t zl = kube_loc_variant(&loc, TOPO_DEP_ZONE, c->zone, sizeof c->zone);
        size_t nl = kube_loc_variant(&loc, TOPO_DEP_NODE, c->node, sizeof c->node);
        store_read_end();
        c->valid = 0;
        if (zl == SIZE_MAX || nl == SIZE_MAX)
            return -1;
        c->ip = ip;
        c->sver = sver;
        c->zl = (uint16_t)zl;
        c->nl = (uint16_t)nl;
        c->valid = 1;
    }
    *var = dep == TOPO_DEP_NODE ? c->node : c->zone;
    *vl = dep == TOPO_DEP_NODE ? c->nl : c->zl;
    return 0;
}

int kube_rend_serve(kube *k, const handler *h, dns_req *r, const uint8_t *low, uint64_t sver,
                    uint64_t tver)
{
    if (!eligible(k, r))
        return -1;
    struct krend *m = memo_of(k, r, 0);
    if (!m)
        return -1;
    size_t nl = dname_len(low);
    uint16_t qtype = r->q.qtype;
    uint32_t hash = key_hash(low, nl, qtype, "", 0);
    struct krend_entry *e = find(m, hash, low, nl, qtype, "", 0);
    if (!e || e->sver != sver || e->tver != tver)
        return -1;
    if (e->marker) {
        if (!k->topo)
            return -1;
        const char *var;
        size_t vl;
        if (client_variant(k, m, r, e->dep, sver, &var, &vl) < 0)
            return -1;
        hash = key_hash(low, nl, qtype, var, vl);
        e = find(m, hash, low, nl, qtype, var, vl);
        if (!e || e->sver != sver || e->tver != tver || e->marker)
            return -1;
    }
    /* header, question, then each record: the qname as asked + its octets */
    uint8_t sbuf[KREND_MAX_WIRE + 64], *buf = sbuf;
    const uint8_t *qn = r->q.qname;
    size_t total = 12 + nl + 4 + (size_t)e->ancount * nl + e->taillen;
    uint16_t ancount = e->ancount, tc = 0;
    if (e->big) {
        /* over TCP without EDNS the slow path sends the records that fit
         * 65,535 octets uncompressed and sets TC when that is not all of
         * them: the same prefix, the records being of one size */
        if (r->proto != PROTO_TCP || r->q.edns.present)
            return -1;
        if (!m->wbuf && !(m->wbuf = malloc(65536)))
            return -1;
        buf = m->wbuf;
        size_t rl = nl + e->taillen / e->ancount, fit = (65535 - 16 - nl) / rl;
        if (fit < ancount) {
            ancount = (uint16_t)fit;
            tc = F_TC;
        }
        total = 12 + nl + 4 + (size_t)ancount * rl;
    } else if (total > sizeof sbuf) {
        return -1;
    }
    uint16_t flags = (uint16_t)(F_QR | F_AA | tc | (r->q.flags & (0x7800 | F_RD | F_CD)));
    buf[0] = (uint8_t)(r->q.id >> 8);
    buf[1] = (uint8_t)r->q.id;
    buf[2] = (uint8_t)(flags >> 8);
    buf[3] = (uint8_t)flags;                    /* rcode NOERROR */
    buf[4] = 0, buf[5] = 1;
    buf[6] = (uint8_t)(ancount >> 8), buf[7] = (uint8_t)ancount;
    memset(buf + 8, 0, 4);
    uint8_t *p = buf + 12;
    uint8_t qtail[4] = { (uint8_t)(qtype >> 8), (uint8_t)qtype, (uint8_t)(r->q.qclass >> 8),
                         (uint8_t)r->q.qclass };
    /* a big reply written for the same question (octets as asked) before:
     * only the header differs */
    int again = e->big && m->wserial == e->serial && !memcmp(p, qn, nl) &&
                !memcmp(p + nl, qtail, 4);
    if (e->big && !again)
        m->wserial = 0;             /* being rewritten */
    memcpy(p, qn, nl);
    p += nl;
    memcpy(p, qtail, 4);
    p += 4;
    const uint8_t *t = e->data + e->namelen + e->varlen;
    if (again)
        p = buf + total;
    for (uint16_t i = 0; !again && i < ancount; i++) {
        memcpy(p, qn, nl);
        p += nl;
        size_t rl = 10 + (size_t)(t[8] << 8 | t[9]);
        memcpy(p, t, rl);
        p += rl;
        t += rl;
    }
    if (e->big)
        m->wserial = e->serial;
    int dep = e->dep, counted = e->counted;
    topo_result res = { .policy = (topo_policy)e->policy, .outcome = (topo_outcome)e->outcome };
    uint8_t dep0 = r->topo_dep, ecs0 = r->topo_ecs;
    if (dep)
        req_topo_mark(r, dep, 0);
    int rc = req_write_raw(r, h, buf, (size_t)(p - buf));
    if (rc < 0) {
        r->topo_dep = dep0;         /* the slow path marks it again */
        r->topo_ecs = ecs0;
        return -1;
    }
    if (counted && k->topo)
        topo_count(k->topo, &res);
    return rc;
}

static struct krend_entry *entry_new(uint32_t hash, const uint8_t *low, size_t nl,
                                     uint16_t qtype, const char *var, size_t vl, size_t taillen)
{
    struct krend_entry *e = malloc(sizeof *e + nl + vl + taillen);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    e->hash = hash;
    e->qtype = qtype;
    e->namelen = (uint8_t)nl;
    e->varlen = (uint16_t)vl;
    memcpy(e->data, low, nl);
    memcpy(e->data + nl, var, vl);
    return e;
}

void kube_rend_store(kq *q, const uint8_t *low, const krrvec *ans, uint64_t sver, uint64_t tver)
{
    kube *k = q->k;
    dns_req *r = q->r;
    /* a cut answer (bounded, q->cut) only over TCP: there it is the
     * uncompressed prefix that fits 64 KB, which a hit can cut again */
    if (!eligible(k, r) || q->truncated || (q->cut && r->proto != PROTO_TCP) || q->nchases ||
        q->want_soa || ans->n == 0 ||
        ans->n > 65535 || q->topo_counts > 1 || (q->topo_dep && (!q->located || q->loc.ecs)))
        return;
    uint16_t qtype = r->q.qtype;
    size_t taillen = 0;
    for (size_t i = 0; i < ans->n; i++) {
        const krr *rr = &ans->v[i];
        if (rr->type != qtype || rr->rdata || rr->chase || rr->owner != r->q.qname)
            return;
        taillen += 10 + (qtype == T_A ? 4 : 16);
    }
    size_t nl = dname_len(low);
    int big = 12 + nl + 4 + ans->n * nl + taillen > KREND_MAX_WIRE;
    if (taillen > UINT16_MAX || (big && (r->proto != PROTO_TCP || r->q.edns.present)))
        return;
    struct krend *m = memo_of(k, r, 1);
    if (!m || (big && m->nbig >= KREND_BIG_MAX))
        return;
    char var[KREND_MAX_VARIANT];
    size_t vl = kube_loc_variant(&q->loc, q->topo_dep, var, sizeof var);
    if (vl == SIZE_MAX)
        return;
    uint32_t hash = key_hash(low, nl, qtype, var, vl);
    struct krend_entry *e = entry_new(hash, low, nl, qtype, var, vl, taillen);
    if (!e)
        return;
    e->sver = sver;
    e->tver = tver;
    e->dep = (uint8_t)q->topo_dep;
    e->counted = (uint8_t)q->topo_counts;
    e->policy = (uint8_t)q->topo_policy;
    e->outcome = (uint8_t)q->topo_outcome;
    e->ancount = (uint16_t)ans->n;
    e->taillen = (uint16_t)taillen;
    e->big = (uint8_t)big;
    if (big)
        e->serial = ++m->serials;
    uint8_t *t = e->data + nl + vl;
    for (size_t i = 0; i < ans->n; i++) {
        const krr *rr = &ans->v[i];
        uint16_t al = qtype == T_A ? 4 : 16;
        t[0] = (uint8_t)(qtype >> 8), t[1] = (uint8_t)qtype;
        t[2] = 0, t[3] = C_IN;
        t[4] = (uint8_t)(rr->ttl >> 24), t[5] = (uint8_t)(rr->ttl >> 16);
        t[6] = (uint8_t)(rr->ttl >> 8), t[7] = (uint8_t)rr->ttl;
        t[8] = 0, t[9] = (uint8_t)al;
        memcpy(t + 10, rr->ip.addr, al);
        t += 10 + al;
    }
    if (q->topo_dep) {
        /* the marker: this name's answers depend on the client's variant */
        uint32_t h0 = key_hash(low, nl, qtype, "", 0);
        struct krend_entry *mk = entry_new(h0, low, nl, qtype, "", 0, 0);
        if (!mk) {
            free(e);
            return;
        }
        mk->sver = sver;
        mk->tver = tver;
        mk->dep = (uint8_t)q->topo_dep;
        mk->marker = 1;
        if ((h0 & (KREND_SLOTS - 1)) == (hash & (KREND_SLOTS - 1))) {
            free(mk);               /* one would evict the other: keep neither */
            free(e);
            return;
        }
        put(m, mk);
    }
    put(m, e);
}
