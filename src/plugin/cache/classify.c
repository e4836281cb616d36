/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classify.c — what a reply is, whether and how long the cache keeps it,
 * the key, and the compact form an entry stores.
 *
 * Classification follows CoreDNS (plugin/pkg/response Typify and the cache's
 * own rules): zone transfers are meta and never cached; an answer with
 * NOERROR is a success unless it does not answer the question and the
 * authority has an SOA (then NODATA); an SOA with NOERROR and no answer is
 * NODATA; NXDOMAIN is a name error (cached only with an SOA); SERVFAIL and
 * NOTIMP are server errors (cached for `servfail`); NS without SOA is a
 * delegation; anything else is an error that is not cached. Truncated
 * replies are never cached.
 *
 * Lifetime: the smallest TTL of every record (an SOA in a denial counting as
 * min(TTL, MINIMUM), RFC 2308), clamped to [MINTTL, TTL] of the success or
 * denial cache; 5 s when there is nothing to take a TTL from.
 *
 * An entry keeps the records as uncompressed wire data with no TTL: every
 * record is served with the entry's remaining lifetime, as CoreDNS does.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/cache/cache.h"

static int has_soa(const dns_msg *m)
{
    unsigned n = msg_count(m, SEC_AUTHORITY);
    for (unsigned i = 0; i < n; i++)
        if (msg_rr(m, SEC_AUTHORITY, i).type == T_SOA)
            return 1;
    return 0;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* RRSIG validity with serial arithmetic (RFC 4034 3.1.5). */
static int rrsig_expired(const dns_rr *rr, uint32_t now)
{
    if (rr->rdlen < 18)
        return 0;
    uint32_t exp = get32(rr->rdata + 8), inc = get32(rr->rdata + 12);
    return (int32_t)(now - inc) < 0 || (int32_t)(exp - now) < 0;
}

static int any_expired_sig(const dns_msg *m, uint32_t now)
{
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned n = msg_count(m, sec);
        for (unsigned i = 0; i < n; i++) {
            dns_rr rr = msg_rr(m, sec, i);
            if (rr.type == T_RRSIG && rrsig_expired(&rr, now))
                return 1;
        }
    }
    return 0;
}

static int class_ok(uint16_t rrclass, uint16_t qclass)
{
    return qclass == C_ANY || rrclass == qclass;
}

/* The one CNAME target of owner: 1 found, 0 none, -1 conflicting targets. */
static int cname_of(const dns_msg *m, const uint8_t *owner, uint16_t qclass, const uint8_t **target)
{
    unsigned n = msg_count(m, SEC_ANSWER);
    *target = NULL;
    for (unsigned i = 0; i < n; i++) {
        dns_rr rr = msg_rr(m, SEC_ANSWER, i);
        if (rr.type != T_CNAME || !class_ok(rr.rclass, qclass) || !dname_equal(rr.owner, owner))
            continue;
        if (*target && !dname_equal(*target, rr.rdata))
            return -1;
        *target = rr.rdata;
    }
    return *target != NULL;
}

int cache_answers(const dns_msg *m)
{
    unsigned n = msg_count(m, SEC_ANSWER);
    if (m->rcode != RC_NOERROR || !m->has_question || n == 0)
        return 0;
    const uint8_t *name = m->qname, *t;
    if (m->qtype == T_ANY) {
        for (unsigned i = 0; i < n; i++) {
            dns_rr rr = msg_rr(m, SEC_ANSWER, i);
            if (class_ok(rr.rclass, m->qclass) && dname_equal(rr.owner, name))
                return 1;
        }
        return 0;
    }
    if (m->qtype == T_CNAME)
        return cname_of(m, name, m->qclass, &t) == 1;
    /* follow the chain; more steps than records means a loop */
    for (unsigned step = 0;; step++) {
        int c = cname_of(m, name, m->qclass, &t);
        if (c < 0 || step > n)
            return 0;
        if (c == 0)
            break;
        name = t;
    }
    for (unsigned i = 0; i < n; i++) {
        dns_rr rr = msg_rr(m, SEC_ANSWER, i);
        if (rr.type == m->qtype && class_ok(rr.rclass, m->qclass) && dname_equal(rr.owner, name))
            return 1;
    }
    return 0;
}

static int is_nodata(const dns_msg *m)
{
    return msg_count(m, SEC_ANSWER) > 0 && !cache_answers(m);
}

static cache_type typify(const dns_msg *m, int do_bit, uint32_t now)
{
    if (m->has_question && (m->qtype == T_AXFR || m->qtype == T_IXFR))
        return CT_META;
    if (do_bit && any_expired_sig(m, now))
        return CT_OTHER;
    unsigned an = msg_count(m, SEC_ANSWER), ns = 0;
    if (an > 0 && m->rcode == RC_NOERROR)
        return CT_NOERROR;
    if (an > 0 && m->rcode == RC_NXDOMAIN)
        return CT_OTHER;
    int soa = 0;
    unsigned nauth = msg_count(m, SEC_AUTHORITY);
    for (unsigned i = 0; i < nauth; i++) {
        uint16_t t = msg_rr(m, SEC_AUTHORITY, i).type;
        soa |= t == T_SOA;
        ns += t == T_NS;
    }
    if (soa && m->rcode == RC_NOERROR)
        return CT_NODATA;
    if (m->rcode == RC_NXDOMAIN)
        return CT_NXDOMAIN;
    if (m->rcode == RC_SERVFAIL || m->rcode == RC_NOTIMP)
        return CT_SERVERROR;
    if (ns > 0 && m->rcode == RC_NOERROR)
        return CT_DELEGATION;
    if (m->rcode == RC_NOERROR)
        return CT_NOERROR;
    return CT_OTHER;
}

cache_type cache_classify(const dns_msg *m, int do_bit, uint32_t now)
{
    cache_type t = typify(m, do_bit, now);
    if (t == CT_NOERROR && has_soa(m) && is_nodata(m))
        return CT_NODATA;
    return t;
}

int cache_cacheable(const dns_msg *m, cache_type t)
{
    if (m->flags & F_TC)
        return 0;
    if (t == CT_OTHER || t == CT_META)
        return 0;
    if (t == CT_NXDOMAIN && !has_soa(m))
        return 0;
    if (t == CT_NOERROR && !has_soa(m) && is_nodata(m))
        return 0;
    return 1;
}

uint32_t cache_min_ttl(const dns_msg *m, cache_type t, uint32_t max)
{
    if (t != CT_NOERROR && t != CT_NXDOMAIN && t != CT_NODATA)
        return CACHE_MIN_TTL;
    int denial = t != CT_NOERROR;
    uint32_t min = max;
    unsigned total = 0;
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned n = msg_count(m, sec);
        total += n;
        for (unsigned i = 0; i < n; i++) {
            dns_rr rr = msg_rr(m, sec, i);
            uint32_t ttl = rr.ttl;
            if (denial && sec == SEC_AUTHORITY && rr.type == T_SOA && rr.rdlen >= 20) {
                uint32_t minimum = get32(rr.rdata + rr.rdlen - 4);
                if (minimum < ttl)
                    ttl = minimum;
            }
            if (ttl < min)
                min = ttl;
        }
    }
    return total ? min : CACHE_MIN_TTL;
}

static uint32_t clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
    if (v < lo)
        v = lo;
    return v > hi ? hi : v;
}

uint32_t cache_duration(const cache_cfg *c, const dns_msg *m, cache_type t)
{
    switch (t) {
    case CT_NXDOMAIN:
    case CT_NODATA:
        return clamp(cache_min_ttl(m, t, c->nttl), c->minnttl, c->nttl);
    case CT_SERVERROR:
        return (uint32_t)(c->failttl_ns / 1000000000ull);
    default:
        return clamp(cache_min_ttl(m, t, c->pttl), c->minpttl, c->pttl);
    }
}

uint64_t cache_hash(const uint8_t *lname, uint16_t qtype, uint16_t qclass, int do_bit,
                    int cd_bit, const char *variant, size_t vlen)
{
    assert(lname && (variant || vlen == 0));
    uint64_t h = 14695981039346656037ull;
#define MIX(b) (h = (h ^ (uint8_t)(b)) * 1099511628211ull)
    MIX(do_bit ? '1' : '0');
    MIX(cd_bit ? '1' : '0');
    MIX(qtype >> 8);
    MIX(qtype);
    MIX(qclass >> 8);
    MIX(qclass);
    size_t n = dname_len(lname);
    for (size_t i = 0; i < n; i++)
        MIX(lname[i]);
    for (size_t i = 0; i < vlen; i++)
        MIX(variant[i]);
#undef MIX
    /* spread the low bits (shard) and the next ones (bucket) */
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return h;
}

/* ---- entries ------------------------------------------------------------ */

/* Record layout in data: sec(1) type(2) class(2) rdlen(2) owner rdata. */
#define REC_HDR 7

static centry *alloc_entry(size_t qlen, size_t vlen, size_t rlen)
{
    centry *e = calloc(1, sizeof *e + qlen + vlen + rlen);
    if (!e)
        return NULL;
    e->qlen = (uint8_t)qlen;
    e->vlen = (uint8_t)vlen;
    e->dlen = (uint32_t)(qlen + vlen + rlen);
    return e;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

centry *centry_new(const dns_msg *m, const uint8_t *lname, int docd, const char *variant,
                   size_t vlen, uint64_t hash, uint32_t ttl, uint64_t now_ns)
{
    assert(m && lname && (variant || vlen == 0));
    size_t qlen = dname_len(lname), rlen = 0;
    unsigned nrr = 0;
    if (vlen > 255)
        return NULL;
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned n = msg_count(m, sec);
        for (unsigned i = 0; i < n; i++) {
            dns_rr rr = msg_rr(m, sec, i);
            rlen += REC_HDR + dname_len(rr.owner) + rr.rdlen;
            nrr++;
        }
    }
    if (nrr > 65535)
        return NULL;
    centry *e = alloc_entry(qlen, vlen, rlen);
    if (!e)
        return NULL;
    memcpy(e->data, lname, qlen);
    memcpy(e->data + qlen, variant, vlen);
    uint8_t *p = e->data + qlen + vlen;
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned n = msg_count(m, sec);
        for (unsigned i = 0; i < n; i++) {
            dns_rr rr = msg_rr(m, sec, i);
            size_t ol = dname_len(rr.owner);
            p[0] = (uint8_t)sec;
            put16(p + 1, rr.type);
            put16(p + 3, rr.rclass);
            put16(p + 5, rr.rdlen);
            memcpy(p + REC_HDR, rr.owner, ol);
            memcpy(p + REC_HDR + ol, rr.rdata, rr.rdlen);
            p += REC_HDR + ol + rr.rdlen;
        }
    }
    e->hash = hash;
    e->stored_ns = now_ns;
    e->orig_ttl = ttl;
    e->qtype = m->qtype;
    e->qclass = m->qclass;
    e->docd = (uint8_t)docd;
    e->rcode = m->rcode;
    e->hflags = m->flags & (F_AD | F_RA);
    e->nrr = (uint16_t)nrr;
    return e;
}

centry *centry_marker(const uint8_t *lname, uint16_t qtype, uint16_t qclass, int docd,
                      uint64_t hash, int dep)
{
    assert(lname && dep >= 0 && dep <= UINT8_MAX);
    size_t qlen = dname_len(lname);
    centry *e = alloc_entry(qlen, 0, 0);
    if (!e)
        return NULL;
    memcpy(e->data, lname, qlen);
    e->hash = hash;
    e->qtype = qtype;
    e->qclass = qclass;
    e->docd = (uint8_t)docd;
    e->dep = (uint8_t)dep;
    return e;
}

int64_t centry_ttl(const centry *e, uint64_t now_ns)
{
    uint64_t age = now_ns > e->stored_ns ? (now_ns - e->stored_ns) / 1000000000ull : 0;
    return (int64_t)e->orig_ttl - (int64_t)age;
}

int centry_to_msg(const centry *e, dns_msg *out, const dns_msg *q, uint32_t ttl)
{
    assert(e && out && q);
    msg_reply_to(out, q);
    int do_bit = q->edns.present && q->edns.do_bit;
    out->flags |= F_AA;
    out->flags |= e->hflags & F_RA;
    if ((e->hflags & F_AD) && (do_bit || (q->flags & F_AD)))
        out->flags |= F_AD;
    out->rcode = e->rcode;
    const uint8_t *p = e->data + e->qlen + e->vlen, *end = e->data + e->dlen;
    for (unsigned i = 0; i < e->nrr && p + REC_HDR <= end; i++) {
        const uint8_t *owner = p + REC_HDR;
        size_t ol = dname_len(owner);
        uint16_t rdlen = get16(p + 5);
        const uint8_t *use = !e->own_case && dname_equal(owner, q->qname) ? q->qname : owner;
        if (msg_add_rr(out, p[0], use, get16(p + 1), get16(p + 3), ttl, owner + ol, rdlen) < 0)
            return -1;
        p += REC_HDR + ol + rdlen;
    }
    return 0;
}

void centry_free(centry *e)
{
    free(e);
}
