/*
 * msg.c — see msg.h.
 *
 * Storage: records are kept in one array ordered by section (answer,
 * authority, additional), each pointing into a byte arena holding owner names
 * and rdata in uncompressed wire form. The arena grows by doubling, so views
 * returned by msg_rr() are valid until the next record is added or the
 * message is reset.
 *
 * Rdata that embeds domain names is described by a small schema per type so
 * that the parser can decompress it and the encoder can compress it (only for
 * the RFC 1035 types, RFC 3597 section 4).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ldns/ldns.h>
#include "msg.h"

struct msg_rec {
    uint8_t sec;
    uint16_t type, rclass;
    uint32_t ttl;
    uint32_t owner;                 /* arena offsets */
    uint32_t rdata;
    uint16_t rdlen;
};

/* ---- rdata schemas ---------------------------------------------------- */

/* 'n' a name, 's' a character-string, '1'..'9' that many fixed octets,
 * 'F' twenty fixed octets (SOA). */
static const char *schema(uint16_t type)
{
    switch (type) {
    case T_NS: case T_CNAME: case T_PTR: case 7: case 3: case 4: case 8: case 9: case T_DNAME:
        return "n";                 /* NS CNAME PTR MB MD MF MG MR DNAME */
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
    default:
        return NULL;
    }
}

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

/* ---- life ------------------------------------------------------------- */

void msg_init(dns_msg *m)
{
    memset(m, 0, sizeof *m);
}

void msg_reset(dns_msg *m)
{
    struct msg_rec *recs = m->recs;
    uint8_t *arena = m->arena;
    unsigned cap = m->caprecs;
    size_t acap = m->arena_cap;
    memset(m, 0, sizeof *m);
    m->recs = recs;
    m->caprecs = cap;
    m->arena = arena;
    m->arena_cap = acap;
}

void msg_free(dns_msg *m)
{
    free(m->recs);
    free(m->arena);
    memset(m, 0, sizeof *m);
}

static long arena_put(dns_msg *m, const uint8_t *p, size_t n)
{
    if (m->arena_len + n > m->arena_cap) {
        size_t nc = m->arena_cap ? m->arena_cap : 1024;
        while (nc < m->arena_len + n)
            nc *= 2;
        if (nc > (1u << 26))
            return -1;
        uint8_t *na = realloc(m->arena, nc);
        if (!na)
            return -1;
        m->arena = na;
        m->arena_cap = nc;
    }
    memcpy(m->arena + m->arena_len, p, n);
    m->arena_len += n;
    return (long)(m->arena_len - n);
}

int msg_copy(dns_msg *dst, const dns_msg *src)
{
    msg_reset(dst);
    struct msg_rec *recs = dst->recs;
    uint8_t *arena = dst->arena;
    unsigned cap = dst->caprecs;
    size_t acap = dst->arena_cap;
    *dst = *src;
    dst->recs = recs;
    dst->caprecs = cap;
    dst->arena = arena;
    dst->arena_cap = acap;
    dst->nrecs = 0;
    dst->arena_len = 0;
    if (src->nrecs > dst->caprecs) {
        struct msg_rec *nr = realloc(dst->recs, src->nrecs * sizeof *nr);
        if (!nr)
            return -1;
        dst->recs = nr;
        dst->caprecs = src->nrecs;
    }
    if (src->arena_len && arena_put(dst, src->arena, src->arena_len) < 0)
        return -1;
    memcpy(dst->recs, src->recs, src->nrecs * sizeof *src->recs);
    dst->nrecs = src->nrecs;
    return 0;
}

/* ---- adding and reading records --------------------------------------- */

/* Validate rdata against the type's schema (names must be well-formed and
 * uncompressed). */
static int rdata_ok(uint16_t type, const uint8_t *rd, size_t len)
{
    const char *s = schema(type);
    if (!s)
        return 1;
    size_t off = 0;
    for (; *s; s++) {
        if (*s == 'n') {
            size_t start = off;
            while (off < len && rd[off]) {
                if (rd[off] > 63)
                    return 0;
                off += (size_t)rd[off] + 1;
            }
            if (off >= len || off - start + 1 > DNAME_MAX)
                return 0;
            off++;
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

static int add_rec(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint16_t rclass,
                   uint32_t ttl, const uint8_t *rd, uint16_t rdlen, int check)
{
    if (sec < 0 || sec >= SEC_COUNT || (check && !rdata_ok(type, rd, rdlen)))
        return -1;
    if (m->nrecs == m->caprecs) {
        unsigned nc = m->caprecs ? m->caprecs * 2 : 16;
        struct msg_rec *nr = realloc(m->recs, nc * sizeof *nr);
        if (!nr)
            return -1;
        m->recs = nr;
        m->caprecs = nc;
    }
    long o = arena_put(m, owner, dname_len(owner));
    long r = rdlen ? arena_put(m, rd, rdlen) : (long)m->arena_len;
    if (o < 0 || r < 0)
        return -1;
    unsigned pos = m->nrecs;
    while (pos > 0 && m->recs[pos - 1].sec > sec)
        pos--;
    memmove(&m->recs[pos + 1], &m->recs[pos], (m->nrecs - pos) * sizeof *m->recs);
    m->recs[pos] = (struct msg_rec){ (uint8_t)sec, type, rclass, ttl, (uint32_t)o, (uint32_t)r, rdlen };
    m->nrecs++;
    return 0;
}

int msg_add_rr(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint16_t rclass,
               uint32_t ttl, const uint8_t *rdata, uint16_t rdlen)
{
    return add_rec(m, sec, owner, type, rclass, ttl, rdata, rdlen, 1);
}

int msg_add_a(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in_addr *a)
{
    return add_rec(m, sec, owner, T_A, C_IN, ttl, (const uint8_t *)a, 4, 0);
}

int msg_add_aaaa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const struct in6_addr *a)
{
    return add_rec(m, sec, owner, T_AAAA, C_IN, ttl, (const uint8_t *)a, 16, 0);
}

int msg_add_name(dns_msg *m, int sec, const uint8_t *owner, uint16_t type, uint32_t ttl,
                 const uint8_t *target)
{
    return add_rec(m, sec, owner, type, C_IN, ttl, target, (uint16_t)dname_len(target), 1);
}

int msg_add_srv(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t prio,
                uint16_t weight, uint16_t port, const uint8_t *target)
{
    uint8_t rd[6 + DNAME_MAX];
    size_t tl = dname_len(target);
    rd[0] = (uint8_t)(prio >> 8); rd[1] = (uint8_t)prio;
    rd[2] = (uint8_t)(weight >> 8); rd[3] = (uint8_t)weight;
    rd[4] = (uint8_t)(port >> 8); rd[5] = (uint8_t)port;
    memcpy(rd + 6, target, tl);
    return add_rec(m, sec, owner, T_SRV, C_IN, ttl, rd, (uint16_t)(6 + tl), 1);
}

int msg_add_mx(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, uint16_t pref,
               const uint8_t *exchange)
{
    uint8_t rd[2 + DNAME_MAX];
    size_t tl = dname_len(exchange);
    rd[0] = (uint8_t)(pref >> 8); rd[1] = (uint8_t)pref;
    memcpy(rd + 2, exchange, tl);
    return add_rec(m, sec, owner, T_MX, C_IN, ttl, rd, (uint16_t)(2 + tl), 1);
}

int msg_add_txt(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl,
                const char *const *strs, int n)
{
    uint8_t rd[65535];
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(strs[i]);
        if (l > 255)
            l = 255;
        if (off + l + 1 > sizeof rd)
            return -1;
        rd[off++] = (uint8_t)l;
        memcpy(rd + off, strs[i], l);
        off += l;
    }
    return add_rec(m, sec, owner, T_TXT, C_IN, ttl, rd, (uint16_t)off, 0);
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

int msg_add_soa(dns_msg *m, int sec, const uint8_t *owner, uint32_t ttl, const uint8_t *mname,
                const uint8_t *rname, uint32_t serial, uint32_t refresh, uint32_t retry,
                uint32_t expire, uint32_t minimum)
{
    uint8_t rd[2 * DNAME_MAX + 20];
    size_t a = dname_len(mname), b = dname_len(rname);
    memcpy(rd, mname, a);
    memcpy(rd + a, rname, b);
    uint32_t v[5] = { serial, refresh, retry, expire, minimum };
    for (int i = 0; i < 5; i++)
        put32(rd + a + b + 4 * i, v[i]);
    return add_rec(m, sec, owner, T_SOA, C_IN, ttl, rd, (uint16_t)(a + b + 20), 1);
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
    unsigned n = 0;
    for (unsigned i = 0; i < m->nrecs; i++)
        n += m->recs[i].sec == sec;
    return n;
}

dns_rr msg_rr(const dns_msg *m, int sec, unsigned i)
{
    const struct msg_rec *r = &m->recs[sec_start(m, sec) + i];
    dns_rr v = { m->arena + r->owner, r->type, r->rclass, r->ttl, m->arena + r->rdata, r->rdlen };
    return v;
}

void msg_set_ttl(dns_msg *m, int sec, unsigned i, uint32_t ttl)
{
    m->recs[sec_start(m, sec) + i].ttl = ttl;
}

void msg_permute(dns_msg *m, int sec, const unsigned *perm, unsigned n)
{
    unsigned s = sec_start(m, sec);
    struct msg_rec tmp[256];
    struct msg_rec *buf = n <= 256 ? tmp : malloc(n * sizeof *buf);
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
    unsigned s = sec_start(m, sec), e = s;
    while (e < m->nrecs && m->recs[e].sec == sec)
        e++;
    memmove(&m->recs[s], &m->recs[e], (m->nrecs - e) * sizeof *m->recs);
    m->nrecs -= e - s;
}

void msg_reply_to(dns_msg *resp, const dns_msg *q)
{
    msg_reset(resp);
    resp->id = q->id;
    resp->flags = (uint16_t)(F_QR | (q->flags & (0x7800 | F_RD | F_CD)));
    resp->rcode = RC_NOERROR;
    resp->has_question = q->has_question;
    memcpy(resp->qname, q->qname, sizeof resp->qname);
    resp->qtype = q->qtype;
    resp->qclass = q->qclass;
}

/* ---- parsing ---------------------------------------------------------- */

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Read a possibly compressed name at *off into out (uncompressed). Pointers
 * must point backward; at most 64 of them. Returns its length or -1. */
static int read_name(const uint8_t *w, size_t len, size_t *off, uint8_t *out)
{
    size_t pos = *off, o = 0;
    int jumps = 0, jumped = 0;
    for (;;) {
        if (pos >= len)
            return -1;
        uint8_t c = w[pos];
        if ((c & 0xc0) == 0xc0) {
            if (pos + 1 >= len || ++jumps > 64)
                return -1;
            size_t target = (size_t)(c & 0x3f) << 8 | w[pos + 1];
            if (!jumped)
                *off = pos + 2;
            jumped = 1;
            if (target >= pos)
                return -1;          /* forward or self pointer */
            pos = target;
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

/* Rdata at w[off..off+rdlen) → uncompressed form in out. */
static int read_rdata(const uint8_t *w, size_t len, size_t off, uint16_t rdlen, uint16_t type,
                      uint8_t *out, size_t *outlen)
{
    const char *s = schema(type);
    size_t end = off + rdlen;
    if (end > len)
        return -1;
    if (!s) {
        memcpy(out, w + off, rdlen);
        *outlen = rdlen;
        return 0;
    }
    size_t o = 0;
    for (; *s; s++) {
        if (*s == 'n') {
            int n = read_name(w, end, &off, out + o);
            if (n < 0)
                return -1;
            o += (size_t)n;
        } else {
            size_t n = *s == 'F' ? 20 : *s == 's' ? (off < end ? (size_t)w[off] + 1 : 1)
                                                  : (size_t)(*s - '0');
            if (off + n > end)
                return -1;
            memcpy(out + o, w + off, n);
            o += n;
            off += n;
        }
    }
    if (off != end)
        return -1;
    *outlen = o;
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
        if (code == EDNS_OPT_ECS) {
            const uint8_t *p = rd + off;
            if (olen < 4 || m->edns.has_ecs)
                return -1;
            dns_ecs *e = &m->edns.ecs;
            e->family = get16(p);
            e->source_prefix = p[2];
            e->scope_prefix = p[3];
            unsigned max = e->family == 1 ? 32 : e->family == 2 ? 128 : 0;
            if (!max || e->source_prefix > max || e->scope_prefix > max ||
                (size_t)olen - 4 != (size_t)(e->source_prefix + 7) / 8)
                return -1;
            memset(e->addr, 0, sizeof e->addr);
            memcpy(e->addr, p + 4, (size_t)olen - 4);
            m->edns.has_ecs = 1;
        }
        off += olen;
    }
    return 0;
}

int msg_parse(dns_msg *m, const uint8_t *w, size_t len, int *hdr_ok)
{
    msg_reset(m);
    *hdr_ok = 0;
    if (len < 12)
        return RC_FORMERR;
    m->id = get16(w);
    uint16_t fl = get16(w + 2);
    m->flags = fl & 0xfff0;
    m->rcode = fl & 0xf;
    *hdr_ok = 1;
    unsigned qd = get16(w + 4), an = get16(w + 6), ns = get16(w + 8), ar = get16(w + 10);
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
    uint8_t owner[DNAME_MAX], rd[65535 + 2 * DNAME_MAX];
    unsigned counts[3] = { an, ns, ar };
    for (int sec = 0; sec < 3; sec++) {
        for (unsigned i = 0; i < counts[sec]; i++) {
            if (read_name(w, len, &off, owner) < 0 || off + 10 > len)
                return RC_FORMERR;
            uint16_t type = get16(w + off), cls = get16(w + off + 2);
            uint32_t ttl = get32(w + off + 4);
            uint16_t rdlen = get16(w + off + 8);
            off += 10;
            size_t outlen;
            if (off + rdlen > len || read_rdata(w, len, off, rdlen, type, rd, &outlen) < 0)
                return RC_FORMERR;
            if (type == T_OPT) {
                if (sec != SEC_ADDITIONAL || parse_opt(m, owner, cls, ttl, w + off, rdlen) < 0)
                    return RC_FORMERR;
            } else if (outlen > 65535 ||
                       add_rec(m, sec, owner, type, cls, ttl, rd, (uint16_t)outlen, 0) < 0) {
                return RC_FORMERR;
            }
            off += rdlen;
        }
    }
    if (off != len)
        return RC_FORMERR;          /* trailing garbage */
    m->rcode |= (uint16_t)(m->edns.ext_rcode << 4);
    return 0;
}

/* ---- encoding --------------------------------------------------------- */

#define COMP_MAX 256

typedef struct enc {
    uint8_t *buf;
    size_t cap, len;
    int compress;
    uint16_t comp[COMP_MAX];        /* offsets of names already written */
    unsigned ncomp;
} enc;

static inline uint8_t lcase(uint8_t c) { return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c; }

/* Does the (possibly compressed) name at buf[off] equal the wire name n? */
static int name_at_equal(const enc *e, size_t off, const uint8_t *n)
{
    int jumps = 0;
    for (;;) {
        uint8_t c = e->buf[off];
        if ((c & 0xc0) == 0xc0) {
            if (++jumps > 32)
                return 0;
            off = (size_t)(c & 0x3f) << 8 | e->buf[off + 1];
            continue;
        }
        if (c != n[0])
            return 0;
        if (c == 0)
            return 1;
        for (size_t i = 1; i <= c; i++)
            if (lcase(e->buf[off + i]) != lcase(n[i]))
                return 0;
        off += (size_t)c + 1;
        n += c + 1;
    }
}

static int put_bytes(enc *e, const void *p, size_t n)
{
    if (e->len + n > e->cap)
        return -1;
    memcpy(e->buf + e->len, p, n);
    e->len += n;
    return 0;
}

static int put_name(enc *e, const uint8_t *n, int compress)
{
    while (n[0]) {
        if (compress) {
            for (unsigned i = 0; i < e->ncomp; i++)
                if (name_at_equal(e, e->comp[i], n)) {
                    uint8_t ptr[2] = { (uint8_t)(0xc0 | e->comp[i] >> 8), (uint8_t)e->comp[i] };
                    return put_bytes(e, ptr, 2);
                }
            if (e->len < 0x4000 && e->ncomp < COMP_MAX)
                e->comp[e->ncomp++] = (uint16_t)e->len;
        }
        if (put_bytes(e, n, (size_t)n[0] + 1) < 0)
            return -1;
        n += n[0] + 1;
    }
    return put_bytes(e, "", 1);
}

static int put16(enc *e, uint16_t v)
{
    uint8_t b[2] = { (uint8_t)(v >> 8), (uint8_t)v };
    return put_bytes(e, b, 2);
}

static int put_rr(enc *e, const dns_msg *m, const struct msg_rec *r)
{
    if (put_name(e, m->arena + r->owner, e->compress) < 0 || put16(e, r->type) < 0 ||
        put16(e, r->rclass) < 0 || put16(e, (uint16_t)(r->ttl >> 16)) < 0 ||
        put16(e, (uint16_t)r->ttl) < 0)
        return -1;
    size_t lenpos = e->len;
    if (put16(e, 0) < 0)
        return -1;
    const uint8_t *rd = m->arena + r->rdata;
    const char *s = schema(r->type);
    if (!s) {
        if (put_bytes(e, rd, r->rdlen) < 0)
            return -1;
    } else {
        int comp = e->compress && compressible(r->type);
        size_t off = 0;
        for (; *s; s++) {
            if (*s == 'n') {
                if (put_name(e, rd + off, comp) < 0)
                    return -1;
                off += dname_len(rd + off);
            } else {
                size_t n = *s == 'F' ? 20 : *s == 's' ? (size_t)rd[off] + 1 : (size_t)(*s - '0');
                if (put_bytes(e, rd + off, n) < 0)
                    return -1;
                off += n;
            }
        }
    }
    size_t rdl = e->len - lenpos - 2;
    e->buf[lenpos] = (uint8_t)(rdl >> 8);
    e->buf[lenpos + 1] = (uint8_t)rdl;
    return 0;
}

static size_t opt_len(const dns_msg *m)
{
    if (!m->edns.present)
        return 0;
    size_t n = 11;
    if (m->edns.has_ecs)
        n += 4 + 4 + (size_t)(m->edns.ecs.source_prefix + 7) / 8;
    return n;
}

static int put_opt(enc *e, const dns_msg *m)
{
    const dns_edns *x = &m->edns;
    uint8_t opt[11 + 8 + 16];
    size_t n = 0, elen = 0;
    opt[n++] = 0;
    opt[n++] = 0; opt[n++] = T_OPT;
    opt[n++] = (uint8_t)(x->udp_size >> 8); opt[n++] = (uint8_t)x->udp_size;
    opt[n++] = (uint8_t)(m->rcode >> 4);
    opt[n++] = 0;                   /* version 0 */
    opt[n++] = x->do_bit ? 0x80 : 0;
    opt[n++] = 0;
    if (x->has_ecs)
        elen = (size_t)(x->ecs.source_prefix + 7) / 8;
    size_t rdl = x->has_ecs ? 8 + elen : 0;
    opt[n++] = (uint8_t)(rdl >> 8); opt[n++] = (uint8_t)rdl;
    if (x->has_ecs) {
        opt[n++] = 0; opt[n++] = EDNS_OPT_ECS;
        opt[n++] = 0; opt[n++] = (uint8_t)(4 + elen);
        opt[n++] = (uint8_t)(x->ecs.family >> 8); opt[n++] = (uint8_t)x->ecs.family;
        opt[n++] = x->ecs.source_prefix;
        opt[n++] = x->ecs.scope_prefix;
        memcpy(opt + n, x->ecs.addr, elen);
        n += elen;
    }
    return put_bytes(e, opt, n);
}

int msg_encode(dns_msg *m, uint8_t *buf, size_t cap, size_t max, int compress)
{
    if (max < 512)
        max = 512;
    if (max > cap)
        max = cap;
    enc e = { .buf = buf, .cap = cap, .compress = compress };
    uint8_t hdr[12] = {0};
    if (put_bytes(&e, hdr, 12) < 0)
        return -1;
    if (m->has_question &&
        (put_name(&e, m->qname, compress) < 0 || put16(&e, m->qtype) < 0 || put16(&e, m->qclass) < 0))
        return -1;
    size_t budget = max - opt_len(m);
    if (e.len > budget)
        return -1;
    unsigned counts[3] = {0};
    unsigned kept = 0;
    int dropped = 0;
    for (unsigned i = 0; i < m->nrecs; i++) {
        size_t before = e.len;
        unsigned nc = e.ncomp;
        if (put_rr(&e, m, &m->recs[i]) < 0 || e.len > budget) {
            e.len = before;
            e.ncomp = nc;
            dropped = 1;
            break;
        }
        counts[m->recs[i].sec]++;
        kept++;
    }
    (void)kept;
    if (dropped)
        m->flags |= F_TC;
    if (m->edns.present && put_opt(&e, m) < 0)
        return -1;
    uint16_t fl = (uint16_t)((m->flags & 0xfff0) | (m->rcode & 0xf));
    buf[0] = (uint8_t)(m->id >> 8); buf[1] = (uint8_t)m->id;
    buf[2] = (uint8_t)(fl >> 8); buf[3] = (uint8_t)fl;
    buf[5] = m->has_question ? 1 : 0;
    for (int s = 0; s < 3; s++) {
        buf[6 + 2 * s] = (uint8_t)(counts[s] >> 8);
        buf[7 + 2 * s] = (uint8_t)counts[s];
    }
    if (m->edns.present) {
        unsigned ar = counts[2] + 1;
        buf[10] = (uint8_t)(ar >> 8);
        buf[11] = (uint8_t)ar;
    }
    return (int)e.len;
}

/* ---- names for humans -------------------------------------------------- */

const char *rr_type_name(uint16_t type, char *buf)
{
    const ldns_rr_descriptor *d = ldns_rr_descript(type);
    if (d && d->_name && type != 0) {
        snprintf(buf, 16, "%s", d->_name);
        return buf;
    }
    switch (type) {
    case T_IXFR: snprintf(buf, 16, "IXFR"); return buf;
    case T_AXFR: snprintf(buf, 16, "AXFR"); return buf;
    case T_ANY: snprintf(buf, 16, "ANY"); return buf;
    default: snprintf(buf, 16, "TYPE%u", type); return buf;
    }
}

const char *rr_class_name(uint16_t cls, char *buf)
{
    switch (cls) {
    case C_IN: snprintf(buf, 16, "IN"); break;
    case C_CH: snprintf(buf, 16, "CH"); break;
    case 4: snprintf(buf, 16, "HS"); break;
    case 254: snprintf(buf, 16, "NONE"); break;
    case C_ANY: snprintf(buf, 16, "ANY"); break;
    default: snprintf(buf, 16, "CLASS%u", cls); break;
    }
    return buf;
}

const char *rcode_name(unsigned rcode, char *buf)
{
    static const char *const names[] = {
        "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
        "YXDOMAIN", "YXRRSET", "NXRRSET", "NOTAUTH", "NOTZONE",
    };
    if (rcode < sizeof names / sizeof names[0])
        snprintf(buf, 16, "%s", names[rcode]);
    else if (rcode == RC_BADVERS)
        snprintf(buf, 16, "BADVERS");
    else
        snprintf(buf, 16, "RCODE%u", rcode);
    return buf;
}

int rr_to_str(const dns_rr *rr, char *out, size_t cap)
{
    uint8_t wire[DNAME_MAX + 10 + 65535];
    size_t ol = dname_len(rr->owner);
    memcpy(wire, rr->owner, ol);
    uint8_t *p = wire + ol;
    p[0] = (uint8_t)(rr->type >> 8); p[1] = (uint8_t)rr->type;
    p[2] = (uint8_t)(rr->rclass >> 8); p[3] = (uint8_t)rr->rclass;
    put32(p + 4, rr->ttl);
    p[8] = (uint8_t)(rr->rdlen >> 8); p[9] = (uint8_t)rr->rdlen;
    memcpy(p + 10, rr->rdata, rr->rdlen);
    ldns_rr *lr = NULL;
    size_t pos = 0;
    if (ldns_wire2rr(&lr, wire, ol + 10 + rr->rdlen, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
        return -1;
    char *s = ldns_rr2str(lr);
    ldns_rr_free(lr);
    if (!s)
        return -1;
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n'))
        s[--n] = '\0';
    snprintf(out, cap, "%s", s);
    free(s);
    return (int)n;
}
