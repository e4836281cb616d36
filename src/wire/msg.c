/* SPDX-License-Identifier: Apache-2.0 */
/*
 * msg.c — DNS messages: storage, strict parser, compressing encoder with
 * CoreDNS-style truncation (see msg.h).
 *
 * Queries. msg_query() writes a whole query packet directly (header,
 * question, optional OPT): every query topodns makes itself goes through it.
 *
 * Storage. Records are kept in one array (m->recs) ordered by section
 * (answer, authority, additional). Each record points at its owner name and
 * rdata, stored back to back in the message arena. The arena is a list of
 * chunks that never move: m->arena points at the first chunk, whose header
 * also remembers the chunk being filled. So a dns_rr view returned by
 * msg_rr() stays valid until msg_reset()/msg_free() — adding records never
 * invalidates it, and a record's own owner or rdata may be passed back to an
 * adder of the same message. (msg.h promises less; callers may rely on this.)
 * msg_reset() keeps the chunks (freeing all but the first when the arena grew
 * past ARENA_KEEP), so a reused message builds replies without allocating.
 *
 * Rdata. Owner names and names inside rdata are stored uncompressed. A small
 * schema per type says where names sit in the rdata, so the parser can
 * decompress them (NS, CNAME, PTR, MX, SOA, DNAME, SRV, MB, MD, MF, MG, MR,
 * MINFO, RP, AFSDB, RT, PX, NAPTR, KX) and the encoder can compress them —
 * the latter only for the RFC 1035 types (RFC 3597 section 4), like miekg/dns.
 * Rdata of length 0 is accepted from the wire for every type (RFC 2136
 * updates; miekg/dns does the same) and written back as is.
 *
 * Compression. The encoder keeps up to COMP_MAX offsets of name suffixes
 * already written below 0x4000 and looks each new suffix up there through a
 * hash of its octets (no scan of the names written before). Like
 * miekg/dns, a suffix matches only when its octets are identical (so the case
 * of every name is kept exactly), and names that may not be compressed are
 * still remembered as targets for later names.
 *
 * EDNS. The OPT record lives in m->edns, not among the records: version,
 * DO, UDP size, the client subnet (parsed), and every other option kept as
 * wire octets (edns_opt_find/add/remove), written after ECS.
 *
 * Truncation (msg_encode). Exactly miekg/dns Msg.Truncate: limit max (at
 * least 512), minus the OPT record's length when EDNS is present; header and
 * question first; then answer, authority, additional records in order until
 * the first one that does not fit, which is dropped with everything after it
 * (in all sections); TC set when anything was dropped; OPT written last. The
 * TC bit msg_encode sets is remembered in a private bit of m->flags (bit 0,
 * which the header word never uses since the rcode lives in m->rcode), so
 * encoding the same message again with a larger limit clears it.
 */
#include <assert.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ldns/ldns.h>
#include "wire/msg.h"

#define F_TC_OURS 0x0001            /* private: TC was set by msg_encode */

struct msg_rec {
    const uint8_t *owner;
    const uint8_t *rdata;
    uint32_t ttl;
    uint16_t type, rclass, rdlen;
    uint8_t sec;
};
static_assert(SEC_COUNT <= UINT8_MAX, "a record's section fits msg_rec.sec");
static_assert(EDNS_OPTS_MAX <= UINT16_MAX, "dns_edns.opts_len counts up to EDNS_OPTS_MAX");

/* ---- arena ------------------------------------------------------------- */

typedef struct chunk {
    struct chunk *next;
    struct chunk *cur;              /* first chunk only: the one being filled */
    size_t cap, used;
    uint8_t data[];
} chunk;

#define CHUNK_MIN 4096
#define CHUNK_GROW_MAX 65536
#define ARENA_KEEP (256 * 1024)
#define ARENA_LIMIT ((size_t)1 << 26)

static chunk *chunk_new(size_t cap)
{
    chunk *c = malloc(sizeof *c + cap);
    if (c) {
        c->next = c->cur = NULL;
        c->cap = cap;
        c->used = 0;
    }
    return c;
}

/* n octets from the arena; NULL when out of memory or past the limit. */
static uint8_t *arena_alloc(dns_msg *m, size_t n)
{
    chunk *head = (chunk *)(void *)m->arena;
    if (!head) {
        if (!(head = chunk_new(n > CHUNK_MIN ? n : CHUNK_MIN)))
            return NULL;
        head->cur = head;
        m->arena = (uint8_t *)head;
        m->arena_cap = head->cap;
    }
    chunk *c = head->cur;
    while (c->cap - c->used < n) {
        if (!c->next) {
            size_t want = c->cap < CHUNK_GROW_MAX ? c->cap * 2 : CHUNK_GROW_MAX;
            if (want < n)
                want = n;
            if (m->arena_cap + want > ARENA_LIMIT || !(c->next = chunk_new(want)))
                return NULL;
            m->arena_cap += want;
        }
        c = c->next;
    }
    head->cur = c;
    uint8_t *p = c->data + c->used;
    c->used += n;
    m->arena_len += n;
    return p;
}

static void arena_reset(dns_msg *m)
{
    chunk *head = (chunk *)(void *)m->arena;
    if (!head)
        return;
    if (m->arena_cap > ARENA_KEEP) {
        chunk *c = head->next;
        while (c) {
            chunk *nx = c->next;
            free(c);
            c = nx;
        }
        head->next = NULL;
        m->arena_cap = head->cap;
    }
    for (chunk *c = head; c; c = c->next)
        c->used = 0;
    head->cur = head;
    m->arena_len = 0;
}

static void arena_free(dns_msg *m)
{
    chunk *c = (chunk *)(void *)m->arena;
    while (c) {
        chunk *nx = c->next;
        free(c);
        c = nx;
    }
    m->arena = NULL;
    m->arena_len = m->arena_cap = 0;
}

/* ---- rdata schemas ----------------------------------------------------- */

/* 'n' a name, 's' a character-string, '1'..'9' that many fixed octets,
 * 'F' twenty fixed octets (SOA). NULL: opaque rdata. */
static const char *schema(uint16_t type)
{
    switch (type) {
    case T_NS: case T_CNAME: case T_PTR: case T_DNAME:
    case 3: case 4: case 7: case 8: case 9:
        return "n";                 /* + MD MF MB MG MR */
    case T_MX: case 18: case 21: case 36:
        return "2n";                /* MX AFSDB RT KX */
    case T_SOA:
        return "nnF";
    case 14: case 17:
        return "nn";                /* MINFO RP */
    case T_SRV:
        return "6n";
    case 26:
        return "2nn";               /* PX */
    case 35:
        return "4sssn";             /* NAPTR */
    case T_HINFO:
        return "ss";
    default:
        return NULL;
    }
}

/* Types whose rdata names may be compressed (RFC 1035 types). */
static int compressible(uint16_t type)
{
    switch (type) {
    case T_NS: case T_CNAME: case T_PTR: case T_MX: case T_SOA:
    case 3: case 4: case 7: case 8: case 9: case 14:
        return 1;
    default:
        return 0;
    }
}

/* Length of a well-formed uncompressed name at p (at most len octets
 * readable), or 0 when it is not one. */
static size_t name_ok(const uint8_t *p, size_t len)
{
    size_t off = 0;
    while (off < len && p[off]) {
        if (p[off] > 63)
            return 0;
        off += (size_t)p[off] + 1;
        if (off >= DNAME_MAX)
            return 0;
    }
    return off < len ? off + 1 : 0;
}

/* Is rd a well-formed rdata of this type (names uncompressed)? */
int msg_rdata_ok(uint16_t type, const uint8_t *rd, size_t len)
{
    assert(rd || len == 0);
    if (type == T_A)
        return len == 4;
    if (type == T_AAAA)
        return len == 16;
    if (type == T_TXT) {
        size_t off = 0;
        while (off < len)
            off += (size_t)rd[off] + 1;
        return len > 0 && off == len;
    }
    const char *s = schema(type);
    if (!s)
        return 1;
    size_t off = 0;
    for (; *s; s++) {
        if (*s == 'n') {
            size_t n = name_ok(rd + off, len - off);
            if (!n)
                return 0;
            off += n;
        } else if (*s == 's') {
            if (off >= len)
                return 0;
            off += (size_t)rd[off] + 1;
        } else {
            off += (*s == 'F') ? 20 : (size_t)(*s - '0');
        }
        if (off > len)
            return 0;
    }
    return off == len;
}

/* ---- life -------------------------------------------------------------- */

void msg_init(dns_msg *m)
{
    assert(m);
    memset(m, 0, sizeof *m);
}

void msg_reset(dns_msg *m)
{
    assert(m);
    /* field by field: the name and option buffers (most of the struct)
     * are only read up to their lengths, so they are not cleared */
    m->id = 0;
    m->flags = 0;
    m->rcode = 0;
    m->has_question = 0;
    m->qname[0] = 0;
    m->qtype = 0;
    m->qclass = 0;
    memset(&m->edns, 0, offsetof(dns_edns, opts));
    m->nrecs = 0;
    arena_reset(m);
}

void msg_free(dns_msg *m)
{
    free(m->recs);
    arena_free(m);
    memset(m, 0, sizeof *m);
}

static int recs_reserve(dns_msg *m, unsigned n)
{
    if (n <= m->caprecs)
        return 0;
    unsigned nc = m->caprecs ? m->caprecs : 16;
    while (nc < n)
        nc *= 2;
    struct msg_rec *nr = realloc(m->recs, nc * sizeof *nr);
    if (!nr)
        return -1;
    m->recs = nr;
    m->caprecs = nc;
    return 0;
}

/* Append a record whose owner is copied into the arena; returns where its
 * rdlen octets of rdata go (to be filled by the caller), or NULL. */
static uint8_t *store_alloc(dns_msg *m, int sec, const uint8_t *owner, size_t olen,
                            uint16_t type, uint16_t rclass, uint32_t ttl, size_t rdlen)
{
    if (rdlen > 65535 || recs_reserve(m, m->nrecs + 1) < 0)
        return NULL;
    uint8_t *p = arena_alloc(m, olen + rdlen);
    if (!p)
        return NULL;
    memcpy(p, owner, olen);
    unsigned pos = m->nrecs;
    while (pos > 0 && m->recs[pos - 1].sec > sec)
        pos--;
    memmove(&m->recs[pos + 1], &m->recs[pos], (m->nrecs - pos) * sizeof *m->recs);
    m->recs[pos] = (struct msg_rec){ .owner = p, .rdata = p + olen, .ttl = ttl, .type = type,
                                     .rclass = rclass, .rdlen = (uint16_t)rdlen,
                                     .sec = (uint8_t)sec };
    m->nrecs++;
    return p + olen;
}

/* Store a record: owner and rdata are copied into the arena. */
static int store(dns_msg *m, int sec, const uint8_t *owner, size_t olen, uint16_t type,
                 uint16_t rclass, uint32_t ttl, const uint8_t *rd, size_t rdlen)
{
    uint8_t *p = store_alloc(m, sec, owner, olen, type, rclass, ttl, rdlen);
    if (!p)
        return -1;
    if (rdlen)
        memcpy(p, rd, rdlen);
    return 0;
}

int msg_copy(dns_msg *dst, const dns_msg *src)
{
    assert(dst && src);
    if (dst == src)
        return 0;
    msg_reset(dst);
    struct msg_rec *recs = dst->recs;
    unsigned cap = dst->caprecs;
    uint8_t *arena = dst->arena;
    size_t acap = dst->arena_cap;
    *dst = *src;
    dst->recs = recs;
    dst->caprecs = cap;
    dst->arena = arena;
    dst->arena_cap = acap;
    dst->arena_len = 0;
    dst->nrecs = 0;
    if (recs_reserve(dst, src->nrecs) < 0)
        return -1;
    for (unsigned i = 0; i < src->nrecs; i++) {
        const struct msg_rec *r = &src->recs[i];
        if (store(dst, r->sec, r->owner, dname_len(r->owner), r->type, r->rclass, r->ttl,
                  r->rdata, r->rdlen) < 0)
            return -1;
    }
    return 0;
}

/* ---- adding and reading records ---------------------------------------- */

static int add_checked(dns_msg *m, int sec, const uint8_t *owner, uint16_t type,
                       uint16_t rclass, uint32_t ttl, const uint8_t *rd, size_t rdlen)
{
    size_t olen;
    if (sec < 0 || sec >= SEC_COUNT || !owner || !(olen = name_ok(owner, DNAME_MAX)))
        return -1;
    if (rdlen > 65535 || (rdlen && !rd) || !msg_rdata_ok(type, rd, rdlen))
        return -1;
    if (type == T_OPT)
        return -1;                  /* EDNS lives in m->edns, written last */
    return store(m, sec, owner, olen, type, rclass, ttl, rd, rdlen);
}

int msg_add_rr(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint16_t rclass,
               uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
    return add_checked(m, sec, owner, type, rclass, ttl, rdata, rdlen);
}

int msg_add_a(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in_addr *a)
{
    return add_checked(m, sec, owner, T_A, C_IN, ttl, (const uint8_t *)a, 4);
}

int msg_add_aaaa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in6_addr *a)
{
    return add_checked(m, sec, owner, T_AAAA, C_IN, ttl, (const uint8_t *)a, 16);
}

int msg_add_name(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint32_t ttl,
                 const uint8_t *target)
{
    size_t tl = target ? name_ok(target, DNAME_MAX) : 0;
    if (!tl)
        return -1;
    return add_checked(m, sec, owner, type, C_IN, ttl, target, tl);
}

static void put16b(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32b(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int msg_add_srv(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t prio,
                uint16_t weight, uint16_t port, const uint8_t *target)
{
    uint8_t rd[6 + DNAME_MAX];
    size_t tl = target ? name_ok(target, DNAME_MAX) : 0;
    if (!tl)
        return -1;
    put16b(rd, prio);
    put16b(rd + 2, weight);
    put16b(rd + 4, port);
    memcpy(rd + 6, target, tl);
    return add_checked(m, sec, owner, T_SRV, C_IN, ttl, rd, 6 + tl);
}

int msg_add_mx(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t pref,
               const uint8_t *exchange)
{
    uint8_t rd[2 + DNAME_MAX];
    size_t tl = exchange ? name_ok(exchange, DNAME_MAX) : 0;
    if (!tl)
        return -1;
    put16b(rd, pref);
    memcpy(rd + 2, exchange, tl);
    return add_checked(m, sec, owner, T_MX, C_IN, ttl, rd, 2 + tl);
}

int msg_add_txt(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl,
                const char *const *strs, int n)
{
    size_t olen, total = 0;
    if (n < 1 || sec < 0 || sec >= SEC_COUNT || !owner || !(olen = name_ok(owner, DNAME_MAX)))
        return -1;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(strs[i]);
        total += 1 + (l > 255 ? 255 : l);
    }
    uint8_t *rd = store_alloc(m, sec, owner, olen, T_TXT, C_IN, ttl, total);
    if (!rd)
        return -1;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(strs[i]);
        if (l > 255)
            l = 255;
        rd[off++] = (uint8_t)l;
        memcpy(rd + off, strs[i], l);
        off += l;
    }
    return 0;
}

int msg_add_soa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const uint8_t *mname,
                const uint8_t *rname, uint32_t serial, uint32_t refresh, uint32_t retry,
                uint32_t expire, uint32_t minimum)
{
    uint8_t rd[2 * DNAME_MAX + 20];
    size_t a = mname ? name_ok(mname, DNAME_MAX) : 0, b = rname ? name_ok(rname, DNAME_MAX) : 0;
    if (!a || !b)
        return -1;
    memcpy(rd, mname, a);
    memcpy(rd + a, rname, b);
    uint32_t v[5] = { serial, refresh, retry, expire, minimum };
    for (int i = 0; i < 5; i++)
        put32b(rd + a + b + 4 * i, v[i]);
    return add_checked(m, sec, owner, T_SOA, C_IN, ttl, rd, a + b + 20);
}

static unsigned sec_start(const dns_msg *m, int sec)
{
    unsigned i = 0;
    while (i < m->nrecs && m->recs[i].sec < sec)
        i++;
    return i;
}

unsigned msg_count(const dns_msg *m, int sec)
{
    assert(m && sec >= 0 && sec < SEC_COUNT);
    unsigned s = sec_start(m, sec), e = s;
    while (e < m->nrecs && m->recs[e].sec == sec)
        e++;
    return e - s;
}

/* Index of the i-th record of sec in m->recs, or -1. The records are kept
 * grouped by section, so the i-th is valid when it is still in sec: no
 * count of the section (a caller walking a section record by record would
 * otherwise pay the square of its size). */
static long rec_index(const dns_msg *m, int sec, unsigned i)
{
    if (sec < 0 || sec >= SEC_COUNT)
        return -1;
    size_t k = (size_t)sec_start(m, sec) + i;
    return k < m->nrecs && m->recs[k].sec == sec ? (long)k : -1;
}

dns_rr msg_rr(const dns_msg *m, int sec, unsigned i)
{
    assert(m);
    static const uint8_t root[1] = { 0 };
    long k = rec_index(m, sec, i);
    if (k < 0)
        return (dns_rr){ .owner = root, .rdata = root };
    const struct msg_rec *r = &m->recs[k];
    return (dns_rr){ r->owner, r->type, r->rclass, r->ttl, r->rdata, r->rdlen };
}

void msg_set_ttl(dns_msg *m, int sec, unsigned i, uint32_t ttl)
{
    assert(m);
    long k = rec_index(m, sec, i);
    if (k >= 0)
        m->recs[k].ttl = ttl;
}

void msg_permute(dns_msg *m, int sec, const unsigned *perm, unsigned n)
{
    assert(m && sec >= 0 && sec < SEC_COUNT);
    assert(perm || n == 0);
    unsigned cnt = sec >= 0 && sec < SEC_COUNT ? msg_count(m, sec) : 0;
    if (n > cnt)
        return;
    for (unsigned i = 0; i < n; i++)
        if (perm[i] >= n)
            return;
    unsigned s = sec_start(m, sec);
    struct msg_rec tmp[64];
    struct msg_rec *buf = n <= 64 ? tmp : malloc(n * sizeof *buf);
    if (!buf)
        return;
    for (unsigned i = 0; i < n; i++)
        buf[i] = m->recs[s + perm[i]];
    memcpy(&m->recs[s], buf, n * sizeof *buf);
    if (buf != tmp)
        free(buf);
}

void msg_clear_section(dns_msg *m, int sec)
{
    assert(m && sec >= 0 && sec < SEC_COUNT);
    unsigned s = sec_start(m, sec), e = s;
    while (e < m->nrecs && m->recs[e].sec == sec)
        e++;
    memmove(&m->recs[s], &m->recs[e], (m->nrecs - e) * sizeof *m->recs);
    m->nrecs -= e - s;
}

void msg_reply_to(dns_msg *resp, const dns_msg *q)
{
    assert(resp && q);
    uint8_t qname[DNAME_MAX];
    uint16_t id = q->id, flags = q->flags, qtype = q->qtype, qclass = q->qclass;
    int has_q = q->has_question;
    memcpy(qname, q->qname, sizeof qname);  /* resp may be q */
    msg_reset(resp);
    resp->id = id;
    resp->flags = (uint16_t)(F_QR | (flags & (0x7800 | F_RD | F_CD)));
    resp->rcode = RC_NOERROR;
    resp->has_question = has_q;
    memcpy(resp->qname, qname, sizeof qname);
    resp->qtype = qtype;
    resp->qclass = qclass;
}

/* ---- queries ----------------------------------------------------------- */

int msg_query(const dns_query *q, uint8_t *buf, size_t cap)
{
    assert(q && q->qname && buf);
    size_t nl = dname_len(q->qname);
    size_t len = 12 + nl + 4 + (q->edns_size ? 11 : 0);
    if (nl > DNAME_MAX || len > cap)
        return -1;
    memset(buf, 0, 12);
    put16b(buf, q->id);
    put16b(buf + 2, (uint16_t)(q->flags & 0xfff0));
    put16b(buf + 4, 1);                         /* QDCOUNT */
    uint8_t *p = buf + 12;
    memcpy(p, q->qname, nl);
    p += nl;
    put16b(p, q->qtype);
    put16b(p + 2, q->qclass);
    if (q->edns_size) {
        put16b(buf + 10, 1);                    /* ARCOUNT: the OPT */
        p += 4;
        p[0] = 0;                               /* root owner */
        put16b(p + 1, T_OPT);
        put16b(p + 3, q->edns_size);
        put32b(p + 5, q->do_bit ? 0x8000u : 0); /* ext. rcode 0, version 0 */
        put16b(p + 9, 0);                       /* no options */
    }
    return (int)len;
}

/* ---- parsing ----------------------------------------------------------- */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Read a possibly compressed name at *off (reading below len) into out,
 * uncompressed. Every pointer must point before the start of the run of
 * labels that holds it (the name's start, or the previous pointer's target),
 * so targets strictly decrease and loops are impossible; 0x40/0x80 label
 * types and names over 255 octets are errors. Returns its length or -1. */
static int read_name(const uint8_t *w, size_t len, size_t *off, uint8_t *out)
{
    size_t pos = *off, o = 0, seg = *off;
    int jumped = 0;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t c = w[pos];
        if ((c & 0xc0) == 0xc0) {
            if (pos + 1 >= len)
                return -1;
            size_t target = (size_t)(c & 0x3f) << 8 | w[pos + 1];
            if (target >= seg)
                return -1;          /* forward or self pointer, or a loop */
            if (!jumped)
                *off = pos + 2;
            jumped = 1;
            pos = seg = target;
            continue;
        }
        if (c & 0xc0)
            return -1;              /* 0x40 / 0x80 label types */
        if (pos + 1 + c > len || o + 1 + c > DNAME_MAX)
            return -1;
        memcpy(out + o, w + pos, (size_t)c + 1);
        o += (size_t)c + 1;
        pos += (size_t)c + 1;
        if (c == 0)
            break;
    }
    if (!jumped)
        *off = pos;
    return (int)o;
}

/* Longest decompressed rdata of a schema type: NAPTR, 4 + 3 strings + name. */
#define RDATA_DECOMP_MAX (4 + 3 * 256 + DNAME_MAX)

/* Decompress the schema-typed rdata at w[off..off+rdlen) into out. */
static int read_rdata(const uint8_t *w, size_t off, size_t end, const char *s, uint8_t *out,
                      size_t *outlen)
{
    size_t o = 0;
    for (; *s; s++) {
        if (*s == 'n') {
            int n = read_name(w, end, &off, out + o);
            if (n < 0)
                return -1;
            o += (size_t)n;
            continue;
        }
        size_t n = *s == 'F' ? 20 : *s == 's' ? (off < end ? (size_t)w[off] + 1 : 1)
                                              : (size_t)(*s - '0');
        if (off + n > end)
            return -1;
        memcpy(out + o, w + off, n);
        o += n;
        off += n;
    }
    if (off != end)
        return -1;
    *outlen = o;
    return 0;
}

/* RFC 7871 client subnet. Family 0 with prefix 0 is what dig +subnet=0
 * sends; it is accepted (miekg/dns does) and kept with family 0. */
static int parse_ecs(dns_edns *x, const uint8_t *p, uint16_t olen)
{
    dns_ecs *e = &x->ecs;
    if (olen < 4)
        return -1;
    uint16_t family = get16(p);
    uint8_t src = p[2], scope = p[3];
    int max = family == 1 ? 32 : family == 2 ? 128 : family == 0 ? 0 : -1;
    if (max < 0 || src > max || scope > max || (size_t)olen - 4 != (size_t)(src + 7) / 8)
        return -1;
    if (x->has_ecs)
        return 0;                   /* first one wins */
    e->family = family;
    e->source_prefix = src;
    e->scope_prefix = scope;
    memset(e->addr, 0, sizeof e->addr);
    memcpy(e->addr, p + 4, (size_t)olen - 4);
    if (src % 8)
        e->addr[src / 8] &= (uint8_t)(0xff << (8 - src % 8));
    x->has_ecs = 1;
    return 0;
}

static int parse_opt(dns_msg *m, const uint8_t *owner, uint16_t cls, uint32_t ttl,
                     const uint8_t *rd, uint16_t rdlen)
{
    if (owner[0] != 0 || m->edns.present)
        return -1;
    m->edns.present = 1;
    m->edns.udp_size = cls;
    m->edns.ext_rcode = (uint8_t)(ttl >> 24);
    m->edns.version = (uint8_t)(ttl >> 16);
    m->edns.do_bit = (ttl >> 15) & 1;
    size_t off = 0;
    while (off < rdlen) {
        if (off + 4 > rdlen)
            return -1;
        uint16_t code = get16(rd + off), olen = get16(rd + off + 2);
        off += 4;
        if (off + olen > rdlen)
            return -1;
        if (code == EDNS_OPT_ECS && parse_ecs(&m->edns, rd + off, olen) < 0)
            return -1;
        /* RFC 7873 5.2.2: a COOKIE option of another length is malformed,
         * FORMERR to a query (5.3: a response with one is discarded) */
        if (code == EDNS_OPT_COOKIE && olen != 8 && (olen < 16 || olen > 40))
            return -1;
        if (code != EDNS_OPT_ECS)
            edns_opt_add(&m->edns, code, rd + off, olen);   /* kept while it fits */
        off += olen;
    }
    return 0;
}

/* One resource record at *off into section sec. */
static int parse_rr(dns_msg *m, int sec, const uint8_t *w, size_t len, size_t *off)
{
    uint8_t owner[DNAME_MAX], rd[RDATA_DECOMP_MAX];
    int olen = read_name(w, len, off, owner);
    if (olen < 0 || *off + 10 > len)
        return -1;
    const uint8_t *h = w + *off;
    uint16_t type = get16(h), cls = get16(h + 2), rdlen = get16(h + 8);
    uint32_t ttl = get32(h + 4);
    size_t start = *off + 10, end = start + rdlen;
    if (end > len)
        return -1;
    *off = end;
    if (type == T_OPT)
        return sec == SEC_ADDITIONAL ? parse_opt(m, owner, cls, ttl, w + start, rdlen) : -1;
    const char *s = schema(type);
    if (rdlen == 0 || !s) {
        if (!msg_rdata_ok(type, w + start, rdlen) && rdlen != 0)
            return -1;
        return store(m, sec, owner, (size_t)olen, type, cls, ttl, w + start, rdlen);
    }
    size_t outlen;
    if (read_rdata(w, start, end, s, rd, &outlen) < 0)
        return -1;
    return store(m, sec, owner, (size_t)olen, type, cls, ttl, rd, outlen);
}

int msg_parse(dns_msg *m, const uint8_t *w, size_t len, int *hdr_ok)
{
    assert(m && (w || len == 0) && hdr_ok);
    msg_reset(m);
    *hdr_ok = 0;
    if (len < 12)
        return RC_FORMERR;
    m->id = get16(w);
    uint16_t fl = get16(w + 2);
    m->flags = fl & 0xfff0;
    m->rcode = fl & 0xf;
    *hdr_ok = 1;
    unsigned qd = get16(w + 4);
    unsigned counts[3] = { get16(w + 6), get16(w + 8), get16(w + 10) };
    size_t off = 12;
    if (qd > 1)
        return RC_FORMERR;
    if (qd == 1) {
        if (read_name(w, len, &off, m->qname) < 0 || off + 4 > len)
            return RC_FORMERR;
        m->qtype = get16(w + off);
        m->qclass = get16(w + off + 2);
        m->has_question = 1;
        off += 4;
    }
    for (int sec = 0; sec < SEC_COUNT; sec++)
        for (unsigned i = 0; i < counts[sec]; i++)
            if (parse_rr(m, sec, w, len, &off) < 0)
                return RC_FORMERR;
    if (off != len)
        return RC_FORMERR;          /* trailing garbage */
    m->rcode |= (uint16_t)(m->edns.ext_rcode << 4);
    return 0;
}

/* ---- EDNS options ------------------------------------------------------ */

const uint8_t *edns_opt_find(const dns_edns *e, uint16_t code, uint16_t *len)
{
    assert(e && len);
    assert(e->opts_len <= EDNS_OPTS_MAX);
    for (size_t off = 0; off + 4 <= e->opts_len;) {
        uint16_t c = get16(e->opts + off), l = get16(e->opts + off + 2);
        if (c == code) {
            *len = l;
            return e->opts + off + 4;
        }
        off += 4 + (size_t)l;
    }
    return NULL;
}

int edns_opt_add(dns_edns *e, uint16_t code, const void *data, uint16_t len)
{
    assert(e && (data || len == 0));
    assert(e->opts_len <= EDNS_OPTS_MAX);
    if (code == EDNS_OPT_ECS || (size_t)e->opts_len + 4 + len > EDNS_OPTS_MAX)
        return -1;
    put16b(e->opts + e->opts_len, code);
    put16b(e->opts + e->opts_len + 2, len);
    if (len)
        memcpy(e->opts + e->opts_len + 4, data, len);
    e->opts_len = (uint16_t)(e->opts_len + 4 + len);
    return 0;
}

void edns_opt_remove(dns_edns *e, uint16_t code)
{
    assert(e && e->opts_len <= EDNS_OPTS_MAX);
    size_t in = 0, out = 0;
    while (in + 4 <= e->opts_len) {
        size_t n = 4 + (size_t)get16(e->opts + in + 2);
        if (get16(e->opts + in) != code) {
            memmove(e->opts + out, e->opts + in, n);
            out += n;
        }
        in += n;
    }
    e->opts_len = (uint16_t)out;
}

/* ---- changing a received message in place ------------------------------ */

int msg_wire_set_udp_size(uint8_t *w, size_t len, uint16_t size)
{
    assert(w || len == 0);
    if (len < 12)
        return -1;
    unsigned qd = get16(w + 4), nrr = (unsigned)get16(w + 6) + get16(w + 8) + get16(w + 10);
    size_t off = 12;
    uint8_t name[DNAME_MAX];
    for (unsigned i = 0; i < qd; i++) {
        if (read_name(w, len, &off, name) < 0 || off + 4 > len)
            return -1;
        off += 4;
    }
    for (unsigned i = 0; i < nrr; i++) {
        if (read_name(w, len, &off, name) < 0 || off + 10 > len)
            return -1;
        size_t next = off + 10 + get16(w + off + 8);
        if (next > len)
            return -1;
        if (get16(w + off) == T_OPT) {
            put16b(w + off + 2, size);
            return 0;
        }
        off = next;
    }
    return -1;
}

/* ---- encoding ---------------------------------------------------------- */

#define COMP_MAX 256
#define COMP_SLOTS 512              /* hash index over comp[], a power of 2 */

typedef struct enc {
    uint8_t *buf;
    size_t cap, len;
    int compress;
    unsigned ncomp;
    uint16_t comp[COMP_MAX];        /* offsets of name suffixes written */
    uint32_t comp_hash[COMP_MAX];   /* the hash of each one's octets */
    uint16_t slot[COMP_SLOTS];      /* index + 1 into comp[], 0: empty */
} enc;

/* Does the (possibly compressed) name at buf[off] equal the wire name n,
 * octet for octet? Only what is already written counts: the name being
 * written right now may be a prefix of n and runs into unwritten octets. */
static int name_at_equal(const enc *e, size_t off, const uint8_t *n)
{
    for (int jumps = 0; jumps < 128;) {
        if (off >= e->len)
            return 0;
        uint8_t c = e->buf[off];
        if ((c & 0xc0) == 0xc0) {
            if (off + 1 >= e->len)
                return 0;
            off = (size_t)(c & 0x3f) << 8 | e->buf[off + 1];
            jumps++;
            continue;
        }
        if (c != n[0] || off + 1 + c > e->len || memcmp(e->buf + off + 1, n + 1, c) != 0)
            return 0;
        if (c == 0)
            return 1;
        off += (size_t)c + 1;
        n += c + 1;
    }
    return 0;
}

static int put_bytes(enc *e, const void *p, size_t n)
{
    if (e->len + n > e->cap)
        return -1;
    memcpy(e->buf + e->len, p, n);
    e->len += n;
    return 0;
}

static int put16(enc *e, uint16_t v)
{
    uint8_t b[2];
    put16b(b, v);
    return put_bytes(e, b, 2);
}

/* The suffixes remembered are found through a hash of their octets (exact
 * case, as compared): comp[] keeps them in the order written, slot[] is an
 * open-addressing index over it. Each distinct suffix is remembered once
 * (only when no earlier one equals it), so the lookup finds the one entry
 * the scan of comp[] in order found, at a cost independent of how many
 * names were written. Entries at or past ncomp (dropped by a truncation)
 * are skipped. */
static long comp_find(const enc *e, uint32_t h, const uint8_t *n)
{
    for (unsigned i = h & (COMP_SLOTS - 1);; i = (i + 1) & (COMP_SLOTS - 1)) {
        unsigned x = e->slot[i];
        if (!x)
            return -1;
        if (x - 1 < e->ncomp && e->comp_hash[x - 1] == h && name_at_equal(e, e->comp[x - 1], n))
            return (long)(x - 1);
    }
}

static void comp_add(enc *e, uint32_t h)
{
    unsigned i = h & (COMP_SLOTS - 1);
    while (e->slot[i] && e->slot[i] - 1u < e->ncomp)
        i = (i + 1) & (COMP_SLOTS - 1);
    e->comp[e->ncomp] = (uint16_t)e->len;
    e->comp_hash[e->ncomp] = h;
    e->slot[i] = (uint16_t)++e->ncomp;
}

/* Write a name; with e->compress every suffix is remembered, and a known
 * suffix is replaced by a pointer when may_point. */
static int put_name(enc *e, const uint8_t *n, int may_point)
{
    if (!e->compress)
        return put_bytes(e, n, dname_len(n));
    /* the hash of every suffix, from the last label back */
    const uint8_t *lab[128];
    uint32_t hs[128];
    int nl = 0;
    for (const uint8_t *p = n; p[0] && nl < 128; p += p[0] + 1)
        lab[nl++] = p;
    uint32_t h = 2166136261u;
    for (int i = nl - 1; i >= 0; i--) {
        for (unsigned j = 0; j <= lab[i][0]; j++)
            h = (h ^ lab[i][j]) * 16777619u;
        hs[i] = h;
    }
    for (int i = 0; n[0]; i++) {
        long c = comp_find(e, hs[i], n);
        if (c >= 0 && may_point) {
            uint8_t ptr[2] = { (uint8_t)(0xc0 | e->comp[c] >> 8), (uint8_t)e->comp[c] };
            return put_bytes(e, ptr, 2);
        }
        if (c < 0 && e->len < 0x4000 && e->ncomp < COMP_MAX)
            comp_add(e, hs[i]);
        if (put_bytes(e, n, (size_t)n[0] + 1) < 0)
            return -1;
        n += n[0] + 1;
    }
    return put_bytes(e, "", 1);
}

static int put_rdata(enc *e, const struct msg_rec *r)
{
    const char *s = schema(r->type);
    if (!s || r->rdlen == 0)
        return put_bytes(e, r->rdata, r->rdlen);
    int may_point = compressible(r->type);
    const uint8_t *rd = r->rdata;
    for (; *s; s++) {
        if (*s == 'n') {
            if (put_name(e, rd, may_point) < 0)
                return -1;
            rd += dname_len(rd);
            continue;
        }
        size_t n = *s == 'F' ? 20 : *s == 's' ? (size_t)rd[0] + 1 : (size_t)(*s - '0');
        if (put_bytes(e, rd, n) < 0)
            return -1;
        rd += n;
    }
    return 0;
}

static int put_rr(enc *e, const struct msg_rec *r)
{
    uint8_t h[10];
    if (put_name(e, r->owner, 1) < 0)
        return -1;
    put16b(h, r->type);
    put16b(h + 2, r->rclass);
    put32b(h + 4, r->ttl);
    size_t lenpos = e->len + 8;
    if (put_bytes(e, h, 10) < 0 || put_rdata(e, r) < 0)
        return -1;
    size_t rdl = e->len - lenpos - 2;
    if (rdl > 65535)
        return -1;
    put16b(e->buf + lenpos, (uint16_t)rdl);
    return 0;
}

static size_t ecs_addr_len(const dns_edns *x)
{
    return ((size_t)x->ecs.source_prefix + 7) / 8;
}

static size_t opt_len(const dns_msg *m)
{
    if (!m->edns.present)
        return 0;
    return 11 + (m->edns.has_ecs ? 8 + ecs_addr_len(&m->edns) : 0) + m->edns.opts_len;
}

static int put_opt(enc *e, const dns_msg *m)
{
    const dns_edns *x = &m->edns;
    uint8_t opt[11 + 8 + 16];
    size_t alen = x->has_ecs ? ecs_addr_len(x) : 0;
    if (alen > 16)
        alen = 16;
    opt[0] = 0;                     /* root owner */
    put16b(opt + 1, T_OPT);
    put16b(opt + 3, x->udp_size);
    put32b(opt + 5, (uint32_t)(m->rcode >> 4 & 0xff) << 24 | (uint32_t)x->version << 16 |
                        (x->do_bit ? 0x8000u : 0));
    put16b(opt + 9, (uint16_t)((x->has_ecs ? 8 + alen : 0) + x->opts_len));
    size_t n = 11;
    if (x->has_ecs) {
        put16b(opt + 11, EDNS_OPT_ECS);
        put16b(opt + 13, (uint16_t)(4 + alen));
        put16b(opt + 15, x->ecs.family);
        opt[17] = x->ecs.source_prefix;
        opt[18] = x->ecs.scope_prefix;
        memcpy(opt + 19, x->ecs.addr, alen);
        if (x->ecs.source_prefix % 8 && alen)
            opt[19 + alen - 1] &= (uint8_t)(0xff << (8 - x->ecs.source_prefix % 8));
        n = 19 + alen;
    }
    if (put_bytes(e, opt, n) < 0)
        return -1;
    return put_bytes(e, x->opts, x->opts_len);
}

static void put_header(uint8_t *buf, const dns_msg *m, const unsigned *counts)
{
    put16b(buf, m->id);
    put16b(buf + 2, (uint16_t)((m->flags & 0xfff0) | (m->rcode & 0xf)));
    put16b(buf + 4, m->has_question ? 1 : 0);
    put16b(buf + 6, (uint16_t)counts[0]);
    put16b(buf + 8, (uint16_t)counts[1]);
    put16b(buf + 10, (uint16_t)(counts[2] + (m->edns.present ? 1 : 0)));
}

int msg_encode(dns_msg *m, uint8_t *buf, size_t cap, size_t max, int compress)
{
    assert(m && buf);
    if (m->flags & F_TC_OURS)
        m->flags &= (uint16_t)~(F_TC | F_TC_OURS);
    if (max < 512)
        max = 512;
    if (max > cap)
        max = cap;
    size_t olen = opt_len(m);
    enc e;
    e.buf = buf, e.cap = cap, e.len = 0, e.compress = compress, e.ncomp = 0;
    if (compress)
        memset(e.slot, 0, sizeof e.slot);
    if (max < 12 + olen)
        return -1;
    size_t budget = max - olen;
    e.len = 12;
    if (m->has_question &&
        (put_name(&e, m->qname, 1) < 0 || put16(&e, m->qtype) < 0 || put16(&e, m->qclass) < 0))
        return -1;
    if (e.len > budget)
        return -1;
    unsigned counts[SEC_COUNT] = { 0 };
    for (unsigned i = 0; i < m->nrecs; i++) {
        size_t before = e.len;
        unsigned nc = e.ncomp;
        if (put_rr(&e, &m->recs[i]) < 0 || e.len > budget) {
            e.len = before;
            e.ncomp = nc;
            if (!(m->flags & F_TC))
                m->flags |= F_TC | F_TC_OURS;
            break;
        }
        counts[m->recs[i].sec]++;
    }
    if (m->edns.present && put_opt(&e, m) < 0)
        return -1;
    put_header(buf, m, counts);
    return (int)e.len;
}

/* ---- names for humans -------------------------------------------------- */

/* miekg/dns TypeToString. */
static const char *type_str(uint16_t t)
{
    static const char *const low[] = {
        [0] = "None", [1] = "A", [2] = "NS", [3] = "MD", [4] = "MF", [5] = "CNAME",
        [6] = "SOA", [7] = "MB", [8] = "MG", [9] = "MR", [10] = "NULL", [12] = "PTR",
        [13] = "HINFO", [14] = "MINFO", [15] = "MX", [16] = "TXT", [17] = "RP",
        [18] = "AFSDB", [19] = "X25", [20] = "ISDN", [21] = "RT", [23] = "NSAP-PTR",
        [24] = "SIG", [25] = "KEY", [26] = "PX", [27] = "GPOS", [28] = "AAAA",
        [29] = "LOC", [30] = "NXT", [31] = "EID", [32] = "NIMLOC", [33] = "SRV",
        [34] = "ATMA", [35] = "NAPTR", [36] = "KX", [37] = "CERT", [39] = "DNAME",
        [41] = "OPT", [42] = "APL", [43] = "DS", [44] = "SSHFP", [45] = "IPSECKEY",
        [46] = "RRSIG", [47] = "NSEC", [48] = "DNSKEY", [49] = "DHCID", [50] = "NSEC3",
        [51] = "NSEC3PARAM", [52] = "TLSA", [53] = "SMIMEA", [55] = "HIP", [56] = "NINFO",
        [57] = "RKEY", [58] = "TALINK", [59] = "CDS", [60] = "CDNSKEY",
        [61] = "OPENPGPKEY", [62] = "CSYNC", [63] = "ZONEMD", [64] = "SVCB",
        [65] = "HTTPS", [99] = "SPF", [100] = "UINFO", [101] = "UID", [102] = "GID",
        [103] = "UNSPEC", [104] = "NID", [105] = "L32", [106] = "L64", [107] = "LP",
        [108] = "EUI48", [109] = "EUI64", [128] = "NXNAME", [249] = "TKEY",
        [250] = "TSIG", [251] = "IXFR", [252] = "AXFR", [253] = "MAILB",
        [254] = "MAILA", [255] = "ANY",
    };
    if (t < sizeof low / sizeof low[0])
        return low[t];
    switch (t) {
    case 256: return "URI";
    case 257: return "CAA";
    case 258: return "AVC";
    case 260: return "AMTRELAY";
    case 261: return "RESINFO";
    case 32768: return "TA";
    case 32769: return "DLV";
    case 65535: return "Reserved";
    default: return NULL;
    }
}

const char *rr_type_name(uint16_t type, char *buf)
{
    assert(buf);
    const char *s = type_str(type);
    if (s)
        snprintf(buf, 16, "%s", s);
    else
        snprintf(buf, 16, "TYPE%u", type);
    return buf;
}

const char *rr_class_name(uint16_t cls, char *buf)
{
    assert(buf);
    switch (cls) {
    case C_IN: snprintf(buf, 16, "IN"); break;
    case 2: snprintf(buf, 16, "CS"); break;
    case C_CH: snprintf(buf, 16, "CH"); break;
    case 4: snprintf(buf, 16, "HS"); break;
    case 254: snprintf(buf, 16, "NONE"); break;
    case C_ANY: snprintf(buf, 16, "ANY"); break;
    default: snprintf(buf, 16, "CLASS%u", cls); break;
    }
    return buf;
}

/* miekg/dns RcodeToString: 16 is "BADSIG" there (BADVERS shares the code). */
const char *rcode_name(unsigned rcode, char *buf)
{
    assert(buf);
    static const char *const names[] = {
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
        "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE", "DSOTYPENI",
        NULL, NULL, NULL, NULL, "BADSIG", "BADKEY", "BADTIME", "BADMODE",
        "BADNAME", "BADALG", "BADTRUNC", "BADCOOKIE",
    };
    if (rcode < sizeof names / sizeof names[0] && names[rcode])
        snprintf(buf, 16, "%s", names[rcode]);
    else
        snprintf(buf, 16, "RCODE%u", rcode);
    return buf;
}

int rr_type_from_name(const char *s)
{
    for (unsigned t = 1; t < 65536; t++) {
        const char *n = type_str((uint16_t)t);
        if (n && strcmp(n, s) == 0 && strcmp(n, "Reserved") != 0)
            return (int)t;
    }
    return -1;
}

int rr_class_from_name(const char *s)
{
    static const struct { const char *n; int v; } cls[] = {
        { "IN", C_IN }, { "CS", 2 }, { "CH", C_CH }, { "HS", 4 }, { "NONE", 254 },
        { "ANY", C_ANY },
    };
    for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++)
        if (strcmp(cls[i].n, s) == 0)
            return cls[i].v;
    return -1;
}

int rcode_from_name(const char *s)
{
    char buf[16];
    for (unsigned rc = 0; rc < 24; rc++)
        if (strcmp(rcode_name(rc, buf), s) == 0 && strncmp(buf, "RCODE", 5) != 0)
            return (int)rc;
    return -1;
}

int rr_to_str(const dns_rr *rr, char *out, size_t cap)
{
    assert(rr && (out || cap == 0));
    size_t ol = dname_len(rr->owner), total = ol + 10 + rr->rdlen;
    uint8_t small[1024];
    uint8_t *wire = total <= sizeof small ? small : malloc(total);
    if (!wire)
        return -1;
    memcpy(wire, rr->owner, ol);
    put16b(wire + ol, rr->type);
    put16b(wire + ol + 2, rr->rclass);
    put32b(wire + ol + 4, rr->ttl);
    put16b(wire + ol + 8, rr->rdlen);
    if (rr->rdlen)
        memcpy(wire + ol + 10, rr->rdata, rr->rdlen);
    ldns_rr *lr = NULL;
    size_t pos = 0;
    ldns_status st = ldns_wire2rr(&lr, wire, total, &pos, LDNS_SECTION_ANSWER);
    if (wire != small)
        free(wire);
    if (st != LDNS_STATUS_OK)
        return -1;
    char *s = ldns_rr2str(lr);
    ldns_rr_free(lr);
    if (!s)
        return -1;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == ' '))
        s[--n] = '\0';
    if (cap)
        snprintf(out, cap, "%s", s);
    free(s);
    return (int)n;
}
