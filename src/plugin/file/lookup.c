/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup.c — answering a question from an fzone, as CoreDNS's file plugin
 * (Zone.Lookup) does.
 *
 *   - apex SOA: SOA in the answer, apex NS in authority; apex NS: the NS set
 *     with its in-bailiwick glue (A then AAAA) in additional.
 *   - The name is walked from the apex down, one hash probe per label. A node
 *     below the apex owning NS is a zone cut: referral (NS in authority, glue
 *     in additional), except a DS question at the cut itself.
 *   - Exact match: CNAME (unless the question is CNAME) is chased; the type's
 *     records go in the answer with the apex NS in authority and the A/AAAA of
 *     in-zone MX/SRV/SVCB/HTTPS targets in additional; no such type is
 *     NODATA with the SOA (its TTL as written) in authority. An empty
 *     non-terminal is NOERROR with the SOA (FR_ENT).
 *   - No match: the wildcard "*.<closest encloser>" (RFC 4592) synthesizes
 *     the answer with the query name as owner; an empty wildcard node is
 *     NODATA; no wildcard is NXDOMAIN with the SOA.
 *   - CNAME chasing follows in-zone targets (at most 8 more links, stopping
 *     at a name already in the chain); a target that is not a node of the
 *     zone (a missing name, a wildcard match, another zone of the instance)
 *     is looked up again from the top, like CoreDNS's self-lookup, and its
 *     answer and rcode are merged; a target outside every zone of the
 *     instance is left for the client to resolve.
 */
#include <stdlib.h>
#include <string.h>
#include "plugin/file/file.h"

#define MAX_DEPTH 8
#define MAX_CHAIN 10
#define MAX_TARGETS 64

static int res_add(fres *res, int sec, const uint8_t *owner, const frr *rr)
{
    fsections *s = &res->s;
    if (s->n[sec] == s->cap[sec]) {
        unsigned cap = s->cap[sec] * 2;
        fentry *v = s->e[sec] == s->inl[sec] ? malloc(cap * sizeof *v)
                                              : realloc(s->e[sec], cap * sizeof *v);
        if (!v)
            return -1;
        if (s->e[sec] == s->inl[sec])
            memcpy(v, s->inl[sec], s->n[sec] * sizeof *v);
        s->e[sec] = v;
        s->cap[sec] = cap;
    }
    s->e[sec][s->n[sec]++] = (fentry){ owner, rr };
    return 0;
}

static void res_add_set(fres *res, int sec, const uint8_t *owner, const frrset *set)
{
    for (unsigned i = 0; set && i < set->n; i++)
        res_add(res, sec, owner, &set->rrs[i]);
}

static const uint8_t *owner_buf(fres *res, const uint8_t *name)
{
    if (res->nowners == FRES_OWNERS)
        return NULL;
    uint8_t *b = res->owners[res->nowners++];
    memcpy(b, name, dname_len(name));
    dname_lower(b);
    return b;
}

static void add_soa(fres *res, const fzone *z)
{
    res_add(res, SEC_AUTHORITY, z->soa_owner, &z->soa);
}

static void add_ns(fres *res, const fzone *z)
{
    res_add_set(res, SEC_AUTHORITY, z->origin, &z->ns);
}

/* A then AAAA of the node named name (lower-case), when it exists. */
static void add_addresses(fres *res, int sec, const fzone *z, const uint8_t *name)
{
    const fnode *n = fzone_find(z, name);
    if (!n)
        return;
    res_add_set(res, sec, n->name, fnode_type(n, T_A));
    res_add_set(res, sec, n->name, fnode_type(n, T_AAAA));
}

/* Glue of an NS set: addresses of targets below the NS owner. */
static void add_glue(fres *res, const fzone *z, const uint8_t *owner, const frrset *ns)
{
    for (unsigned i = 0; ns && i < ns->n; i++)
        if (dname_is_sub(ns->rrs[i].rdata, owner))
            add_addresses(res, SEC_ADDITIONAL, z, ns->rrs[i].rdata);
}

/* Offset of the target name in rdata of the types additional processing
 * follows, or -1. */
static int target_offset(uint16_t type)
{
    switch (type) {
    case T_SRV: return 6;
    case T_MX: case T_SVCB: case T_HTTPS: return 2;
    default: return -1;
    }
}

/* CoreDNS's additionalProcessing: addresses of in-zone targets of the
 * answer's MX/SRV/SVCB/HTTPS records, once per target. */
static void add_additional(fres *res, const fzone *z)
{
    uint8_t seen[MAX_TARGETS][DNAME_MAX];
    unsigned nseen = 0;
    for (unsigned i = 0; i < res->s.n[SEC_ANSWER]; i++) {
        const frr *rr = res->s.e[SEC_ANSWER][i].rr;
        int off = target_offset(rr->type);
        if (off < 0 || rr->rdlen <= off)
            continue;
        uint8_t t[DNAME_MAX];
        size_t len = dname_len(rr->rdata + off);
        if (len > DNAME_MAX || (size_t)off + len > rr->rdlen)
            continue;
        memcpy(t, rr->rdata + off, len);
        dname_lower(t);
        if (!dname_is_sub(t, z->origin))
            continue;
        unsigned j;
        for (j = 0; j < nseen && !dname_equal(seen[j], t); j++)
            ;
        if (j < nseen)
            continue;
        if (nseen < MAX_TARGETS)
            memcpy(seen[nseen++], t, len);
        add_addresses(res, SEC_ADDITIONAL, z, t);
    }
}

/* A referral at node n, if it is a zone cut for qname/qtype. */
static int delegation(fres *res, const fzone *z, const fnode *n, const uint8_t *q, uint16_t qtype)
{
    const frrset *ns = fnode_type(n, T_NS);
    if (!ns || (qtype == T_DS && dname_equal(n->name, q)))
        return 0;
    res_add_set(res, SEC_AUTHORITY, n->name, ns);
    add_glue(res, z, n->name, ns);
    return 1;
}

/* The first zone cut between the apex and name (exact: its node, or NULL). */
static int find_delegation(fres *res, const fzone *z, const uint8_t *name, uint16_t qtype,
                           const fnode *exact)
{
    int nl = dname_labels(name);
    for (int k = z->olabels + 1; k <= nl; k++) {
        const fnode *n = k == nl ? exact : fzone_find(z, dname_suffix(name, k));
        if (!n)
            return 0;
        if (delegation(res, z, n, name, qtype))
            return 1;
    }
    return 0;
}

static enum fres_kind do_lookup(fres *res, fzone *z, const uint8_t *q, uint16_t qtype, int depth);

static enum fres_kind positive(fres *res, const fzone *z)
{
    add_ns(res, z);
    add_additional(res, z);
    return FR_SUCCESS;
}

/* The zone a target is looked up in again: the instance's best match,
 * else z itself when the target is inside it; NULL when none serves it. */
static fzone *target_zone(fres *res, fzone *z, const uint8_t *target)
{
    if (res->others && res->others->acquire && res->nheld < FRES_ZONES) {
        fzone *o = res->others->acquire(res->others->ctx, target);
        if (o) {
            res->held[res->nheld++] = o;
            return o;
        }
    }
    return dname_is_sub(target, z->origin) ? z : NULL;
}

/* CoreDNS's upstream self-lookup of a CNAME target, merged into the answer. */
static enum fres_kind relookup(fres *res, fzone *z, const uint8_t *target, uint16_t qtype, int depth)
{
    fzone *tz = target_zone(res, z, target);
    if (!tz)
        return positive(res, z);
    unsigned na = res->s.n[SEC_AUTHORITY], nd = res->s.n[SEC_ADDITIONAL];
    unsigned before = res->s.n[SEC_ANSWER];
    enum fres_kind k = do_lookup(res, tz, target, qtype, depth + 1);
    res->s.n[SEC_AUTHORITY] = na;
    res->s.n[SEC_ADDITIONAL] = nd;
    int added = res->s.n[SEC_ANSWER] > before;
    if (k == FR_NXDOMAIN || (k != FR_SERVFAIL && !added)) {
        add_soa(res, z);
        add_additional(res, z);
        return k == FR_NXDOMAIN ? FR_NXDOMAIN : FR_NODATA;
    }
    if (k == FR_SERVFAIL) {
        add_ns(res, z);
        add_additional(res, z);
        return FR_SERVFAIL;
    }
    return positive(res, z);
}

static int in_chain(const uint8_t *const *chain, unsigned n, const uint8_t *name)
{
    for (unsigned i = 0; i < n; i++)
        if (dname_equal(chain[i], name))
            return 1;
    return 0;
}

/* CoreDNS's externalLookup: the CNAME set at owner, then its target. */
static enum fres_kind chase(fres *res, fzone *z, const uint8_t *owner, const frrset *cname,
                            uint16_t qtype, int depth)
{
    const uint8_t *chain[MAX_CHAIN];
    unsigned nchain = 0;
    chain[nchain++] = owner;
    res_add_set(res, SEC_ANSWER, owner, cname);
    const uint8_t *target = cname->rrs[0].rdata;
    for (int hops = 0;; hops++) {
        const fnode *n = dname_is_sub(target, z->origin) ? fzone_find(z, target) : NULL;
        if (n && n->nsets == 0)
            n = NULL;                  /* CoreDNS's tree holds no empty non-terminals */
        if (dname_is_sub(target, z->origin) && find_delegation(res, z, target, qtype, n))
            return FR_DELEGATION;
        if (!n || qtype == T_NS || (qtype == T_SOA && dname_equal(target, z->origin)))
            return relookup(res, z, target, qtype, depth);
        const frrset *c = fnode_type(n, T_CNAME);
        if (!c) {
            res_add_set(res, SEC_ANSWER, n->name, fnode_type(n, qtype));
            return positive(res, z);
        }
        if (in_chain(chain, nchain, n->name) || nchain == MAX_CHAIN || hops >= MAX_DEPTH)
            return positive(res, z);
        chain[nchain++] = n->name;
        res_add_set(res, SEC_ANSWER, n->name, c);
        target = c->rrs[0].rdata;
    }
}

/* The records of node (owned by owner: its name, or the query name for a
 * wildcard) for qtype. */
static enum fres_kind answer_node(fres *res, fzone *z, const fnode *n, const uint8_t *owner,
                                  uint16_t qtype, int depth)
{
    const frrset *c = fnode_type(n, T_CNAME);
    if (c && qtype != T_CNAME)
        return chase(res, z, owner, c, qtype, depth);
    const frrset *set = fnode_type(n, qtype);
    if (!set) {
        add_soa(res, z);
        return FR_NODATA;
    }
    res_add_set(res, SEC_ANSWER, owner, set);
    return positive(res, z);
}

/* The name is not in the zone; ce is its closest encloser. */
static enum fres_kind missing(fres *res, fzone *z, const fnode *ce, const uint8_t *q,
                              uint16_t qtype, int depth)
{
    uint8_t wname[DNAME_MAX + 2];
    size_t celen = dname_len(ce->name);
    const fnode *w = NULL;
    if (celen + 2 <= DNAME_MAX) {
        wname[0] = 1;
        wname[1] = '*';
        memcpy(wname + 2, ce->name, celen);
        w = fzone_find(z, wname);
    }
    if (!w) {
        add_soa(res, z);
        return FR_NXDOMAIN;
    }
    if (w->nsets == 0) {
        add_soa(res, z);
        return FR_NODATA;
    }
    const uint8_t *owner = owner_buf(res, q);
    if (!owner)
        return FR_SERVFAIL;
    return answer_node(res, z, w, owner, qtype, depth);
}

static enum fres_kind apex(fres *res, const fzone *z, uint16_t qtype)
{
    if (qtype == T_SOA) {
        res_add(res, SEC_ANSWER, z->soa_owner, &z->soa);
        add_ns(res, z);
    } else {
        res_add_set(res, SEC_ANSWER, z->origin, &z->ns);
        add_glue(res, z, z->origin, &z->ns);
    }
    return FR_SUCCESS;
}

static enum fres_kind do_lookup(fres *res, fzone *z, const uint8_t *q, uint16_t qtype, int depth)
{
    if (depth > MAX_DEPTH || !dname_is_sub(q, z->origin))
        return FR_SERVFAIL;
    if (dname_equal(q, z->origin) && (qtype == T_SOA || qtype == T_NS))
        return apex(res, z, qtype);
    int ql = dname_labels(q);
    const fnode *ce = z->apex;
    for (int k = z->olabels + 1; k <= ql; k++) {
        const fnode *n = fzone_find(z, dname_suffix(q, k));
        if (!n)
            return missing(res, z, ce, q, qtype, depth);
        if (delegation(res, z, n, q, qtype))
            return FR_DELEGATION;
        ce = n;
    }
    if (ce->nsets == 0) {
        add_soa(res, z);
        return FR_ENT;
    }
    return answer_node(res, z, ce, ce->name, qtype, depth);
}

void fzone_lookup(fzone *z, const fzone_set *others, const uint8_t *qname,
                  uint16_t qtype, fres *res)
{
    memset(res->s.n, 0, sizeof res->s.n);
    for (int s = 0; s < SEC_COUNT; s++) {
        res->s.e[s] = res->s.inl[s];
        res->s.cap[s] = FRES_INLINE;
    }
    res->nowners = 0;
    res->nheld = 0;
    res->others = others;
    const uint8_t *q = owner_buf(res, qname);
    res->kind = do_lookup(res, z, q, qtype, 0);
}

void fres_done(fres *res)
{
    for (int s = 0; s < SEC_COUNT; s++)
        if (res->s.e[s] != res->s.inl[s])
            free(res->s.e[s]);
    for (unsigned i = 0; i < res->nheld; i++)
        fzone_unref(res->held[i]);
    res->nheld = 0;
    memset(res->s.n, 0, sizeof res->s.n);
    for (int s = 0; s < SEC_COUNT; s++)
        res->s.e[s] = res->s.inl[s];
}

int fres_to_msg(const fres *res, dns_msg *m)
{
    for (int s = 0; s < SEC_COUNT; s++)
        for (unsigned i = 0; i < res->s.n[s]; i++) {
            const fentry *e = &res->s.e[s][i];
            if (msg_add_rr(m, s, e->owner, e->rr->type, e->rr->rclass, e->rr->ttl,
                           e->rr->rdata, e->rr->rdlen) < 0)
                return -1;
        }
    return 0;
}
