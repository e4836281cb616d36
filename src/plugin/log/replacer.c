/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replacer.c — compiled query-log formats, reply size and reply classes.
 * See replacer.h for the rules; this file follows CoreDNS's
 * plugin/pkg/replacer (parsing and placeholder values) and
 * plugin/pkg/response (Typify/Classify).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire/dname.h"
#include "wire/msg.h"
#include "common/gofmt.h"
#include "plugin/log/replacer.h"
#include "common/vec.h"

enum node_type { N_LITERAL, N_LABEL, N_META };

enum label {
    L_TYPE, L_NAME, L_CLASS, L_PROTO, L_SIZE, L_REMOTE, L_PORT, L_LOCAL,
    L_ID, L_OPCODE, L_DO, L_BUFSIZE, L_RCODE, L_RSIZE, L_DURATION, L_RFLAGS,
};

static const char *const label_names[] = {
    [L_TYPE] = "{type}", [L_NAME] = "{name}", [L_CLASS] = "{class}",
    [L_PROTO] = "{proto}", [L_SIZE] = "{size}", [L_REMOTE] = "{remote}",
    [L_PORT] = "{port}", [L_LOCAL] = "{local}", [L_ID] = "{>id}",
    [L_OPCODE] = "{>opcode}", [L_DO] = "{>do}", [L_BUFSIZE] = "{>bufsize}",
    [L_RCODE] = "{rcode}", [L_RSIZE] = "{rsize}", [L_DURATION] = "{duration}",
    [L_RFLAGS] = "{>rflags}",
};

typedef struct fnode {
    enum node_type type;
    int label;
    char *text;                 /* literal text or metadata name */
    size_t len;
} fnode;

struct log_format {
    fnode *nodes;
    size_t n, cap;
};

/* ---- compiling ----------------------------------------------------------- */

static int add_node(log_format *f, enum node_type t, int label, const char *s, size_t len)
{
    if (VEC_RESERVE(f->nodes, f->cap, f->n + 1) < 0)
        return -1;
    fnode *nd = &f->nodes[f->n];
    nd->type = t;
    nd->label = label;
    nd->text = NULL;
    nd->len = len;
    if (t != N_LABEL) {
        nd->text = malloc(len + 1);
        if (!nd->text)
            return -1;
        memcpy(nd->text, s, len);
        nd->text[len] = '\0';
    }
    f->n++;
    return 0;
}

static int find_label(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof label_names / sizeof label_names[0]; i++)
        if (strlen(label_names[i]) == len && memcmp(label_names[i], s, len) == 0)
            return (int)i;
    return -1;
}

/* Replace every occurrence of `from` by `to` (malloc'd result). */
static char *replace_all(const char *s, const char *from, const char *to)
{
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + fl, from))
        n++;
    char *out = malloc(strlen(s) + n * (tl > fl ? tl - fl : 0) + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (const char *p; (p = strstr(s, from)); s = p + fl) {
        memcpy(o, s, (size_t)(p - s));
        o += p - s;
        memcpy(o, to, tl);
        o += tl;
    }
    strcpy(o, s);
    return out;
}

static int compile_into(log_format *f, const char *s)
{
    for (;;) {
        const char *close = strchr(s, '}');
        if (!close)
            break;
        const char *open = NULL;
        for (const char *p = close; p-- > s;)
            if (*p == '{') {
                open = p;
                break;
            }
        if (!open) {                    /* "A } {x}": "A }" is literal */
            if (add_node(f, N_LITERAL, 0, s, (size_t)(close - s) + 1) < 0)
                return -1;
            s = close + 1;
            continue;
        }
        size_t vlen = (size_t)(close - open) + 1;
        int label = find_label(open, vlen);
        int meta = label < 0 && vlen >= 2 && open[1] == '/';
        if (label < 0 && !meta) {       /* unknown: literal up to '}' */
            if (add_node(f, N_LITERAL, 0, s, (size_t)(close - s) + 1) < 0)
                return -1;
            s = close + 1;
            continue;
        }
        if (open > s && add_node(f, N_LITERAL, 0, s, (size_t)(open - s)) < 0)
            return -1;
        if (meta ? add_node(f, N_META, 0, open + 2, vlen - 3) < 0
                 : add_node(f, N_LABEL, label, NULL, 0) < 0)
            return -1;
        s = close + 1;
    }
    if (*s && add_node(f, N_LITERAL, 0, s, strlen(s)) < 0)
        return -1;
    return 0;
}

log_format *logfmt_compile(const char *fmt)
{
    log_format *f = calloc(1, sizeof *f);
    char *a = replace_all(fmt, "{common}", LOG_COMMON_FORMAT);
    char *b = a ? replace_all(a, "{combined}", LOG_COMBINED_FORMAT) : NULL;
    if (!f || !b || compile_into(f, b) < 0) {
        free(a);
        free(b);
        logfmt_free(f);
        return NULL;
    }
    free(a);
    free(b);
    return f;
}

void logfmt_free(log_format *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->n; i++)
        free(f->nodes[i].text);
    free(f->nodes);
    free(f);
}

size_t logfmt_nodes(const log_format *f)
{
    return f->n;
}

/* ---- values -------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t len, cap;             /* cap includes the NUL */
} sbuf;

static void put(sbuf *b, const char *s, size_t n)
{
    if (b->len + 1 >= b->cap)
        return;
    size_t room = b->cap - 1 - b->len;
    if (n > room)
        n = room;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

static void putf_u(sbuf *b, unsigned long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lu", v);
    put(b, t, (size_t)n);
}

/* IPv6 addresses in brackets (RFC 3986), as CoreDNS does. */
static void put_addr(sbuf *b, const struct sockaddr_storage *ss, int *port)
{
    char a[INET6_ADDRSTRLEN];
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof a);
        if (port)
            *port = ntohs(s6->sin6_port);
        puts_(b, "[");
        puts_(b, a);
        puts_(b, "]");
    } else if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &s4->sin_addr, a, sizeof a);
        if (port)
            *port = ntohs(s4->sin_port);
        puts_(b, a);
    } else {
        puts_(b, "-");
    }
}

static void put_rflags(sbuf *b, uint16_t fl)
{
    static const struct { uint16_t bit; const char *name; } bits[] = {
        { F_QR, "qr" }, { F_AA, "aa" }, { F_TC, "tc" }, { F_RD, "rd" },
        { F_RA, "ra" }, { 0x0040, "z" }, { F_AD, "ad" }, { F_CD, "cd" },
    };
    int first = 1;
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++) {
        if (!(fl & bits[i].bit))
            continue;
        if (!first)
            puts_(b, ",");
        puts_(b, bits[i].name);
        first = 0;
    }
}

static void put_rcode(sbuf *b, unsigned rc)
{
    char t[16];
    rcode_name(rc, t);
    if (strncmp(t, "RCODE", 5) == 0)      /* unknown codes print as numbers */
        putf_u(b, rc);
    else
        puts_(b, t);
}

static void put_name(sbuf *b, const dns_req *r)
{
    char name[DNAME_STR_MAX];
    if (!r->q.has_question) {
        puts_(b, ".");
        return;
    }
    dname_to_str(name, sizeof name, r->q.qname);
    for (char *p = name; *p; p++)     /* CoreDNS logs the lower-cased name */
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    puts_(b, name);
}

/* {rsize}: the reply's length as CoreDNS's recorder counts it, summed over
 * every message of a transfer (their uncompressed wire length). */
static size_t reply_len(const dns_req *r)
{
    if (!r->written)
        return 0;
    return r->nsent > 1 ? r->resp_size : log_reply_len(&r->resp);
}

static void put_label(sbuf *b, int label, const dns_req *r, uint64_t now_ns)
{
    char t[64];
    int port = 0;
    switch (label) {
    case L_TYPE: puts_(b, r->q.has_question ? rr_type_name(r->q.qtype, t) : ""); break;
    case L_NAME: put_name(b, r); break;
    case L_CLASS: puts_(b, r->q.has_question ? rr_class_name(r->q.qclass, t) : ""); break;
    case L_PROTO: puts_(b, r->proto == PROTO_TCP ? "tcp" : "udp"); break;
    case L_SIZE: putf_u(b, r->rawlen); break;
    case L_REMOTE: put_addr(b, &r->peer, NULL); break;
    case L_LOCAL: put_addr(b, &r->local, NULL); break;
    case L_PORT: {
        sbuf scratch = { t, 0, sizeof t };
        put_addr(&scratch, &r->peer, &port);
        putf_u(b, (unsigned long)port);
        break;
    }
    case L_ID: putf_u(b, r->q.id); break;
    case L_OPCODE: putf_u(b, msg_opcode(&r->q)); break;
    case L_DO: puts_(b, r->q.edns.present && r->q.edns.do_bit ? "true" : "false"); break;
    case L_BUFSIZE: putf_u(b, req_max_size(r)); break;
    case L_RCODE:
        if (r->written)
            put_rcode(b, r->resp.rcode);
        else
            puts_(b, "-");
        break;
    case L_RSIZE: putf_u(b, reply_len(r)); break;
    case L_DURATION: {
        int64_t d = now_ns > r->start_ns ? (int64_t)(now_ns - r->start_ns) : 0;
        go_seconds(d, t, sizeof t);
        puts_(b, t);
        puts_(b, "s");
        break;
    }
    case L_RFLAGS:
        if (r->written)
            put_rflags(b, r->resp.flags);
        else
            puts_(b, "-");
        break;
    default: puts_(b, "-"); break;
    }
}

/* {/LABEL}: the request's metadata value (the metadata plugin collects
 * them), or CoreDNS's EmptyValue "-" when there is none. */
static void put_meta(sbuf *b, const char *label, const dns_req *r)
{
    char buf[1024];
    const char *v = req_meta_get(r, label, buf, sizeof buf);
    puts_(b, v ? v : "-");
}

size_t logfmt_render(const log_format *f, const dns_req *r, uint64_t now_ns, char *out, size_t cap)
{
    sbuf b = { out, 0, cap };
    if (cap)
        out[0] = '\0';
    for (size_t i = 0; i < f->n; i++) {
        const fnode *nd = &f->nodes[i];
        if (nd->type == N_LITERAL)
            put(&b, nd->text, nd->len);
        else if (nd->type == N_META)
            put_meta(&b, nd->text, r);
        else
            put_label(&b, nd->label, r, now_ns);
    }
    return b.len;
}

/* ---- sizes and classes ----------------------------------------------------- */

size_t log_reply_len(const dns_msg *m)
{
    size_t n = 12;
    if (m->has_question)
        n += dname_len(m->qname) + 4;
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned c = msg_count(m, sec);
        for (unsigned i = 0; i < c; i++) {
            dns_rr rr = msg_rr(m, sec, i);
            n += dname_len(rr.owner) + 10 + rr.rdlen;
        }
    }
    return n;
}

int log_class_from_str(const char *s)
{
    static const char *const names[] = { "all", "success", "denial", "error" };
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* miekg/dns RRSIG.ValidityPeriod: serial-number arithmetic on 32-bit times. */
static int rrsig_valid(const dns_rr *rr, time_t now)
{
    if (rr->rdlen < 18)
        return 1;
    const int64_t year68 = (int64_t)1 << 31;
    int64_t utc = (int64_t)now;
    int64_t exp = get32(rr->rdata + 8), inc = get32(rr->rdata + 12);
    int64_t ti = inc + ((inc - utc) / year68) * year68;
    int64_t te = exp + ((exp - utc) / year68) * year68;
    return ti <= utc && utc <= te;
}

static int has_expired_sig(const dns_msg *m, time_t now)
{
    for (int sec = 0; sec < SEC_COUNT; sec++)
        for (unsigned i = 0; i < msg_count(m, sec); i++) {
            dns_rr rr = msg_rr(m, sec, i);
            if (rr.type == T_RRSIG && !rrsig_valid(&rr, now))
                return 1;
        }
    return 0;
}

int log_typify(const dns_msg *m, time_t now)
{
    unsigned op = msg_opcode(m);
    if (op == 5)
        return LOG_TYPE_UPDATE;
    if (op == 4 || (m->has_question && (m->qtype == T_AXFR || m->qtype == T_IXFR)))
        return LOG_TYPE_META;               /* NOTIFY, transfers */
    if (m->edns.present && m->edns.do_bit && has_expired_sig(m, now))
        return LOG_TYPE_OTHERERROR;
    unsigned an = msg_count(m, SEC_ANSWER);
    if (an > 0 && m->rcode == RC_NOERROR)
        return LOG_TYPE_NOERROR;
    if (an > 0 && m->rcode == RC_NXDOMAIN)
        return LOG_TYPE_OTHERERROR;
    int soa = 0, ns = 0;
    for (unsigned i = 0; i < msg_count(m, SEC_AUTHORITY); i++) {
        uint16_t t = msg_rr(m, SEC_AUTHORITY, i).type;
        soa |= t == T_SOA;
        ns += t == T_NS;
    }
    if (soa && m->rcode == RC_NOERROR)
        return LOG_TYPE_NODATA;
    if (m->rcode == RC_NXDOMAIN)
        return LOG_TYPE_NXDOMAIN;
    if (m->rcode == RC_SERVFAIL || m->rcode == RC_NOTIMP)
        return LOG_TYPE_SERVERERROR;
    if (ns > 0 && m->rcode == RC_NOERROR)
        return LOG_TYPE_DELEGATION;
    return m->rcode == RC_NOERROR ? LOG_TYPE_NOERROR : LOG_TYPE_OTHERERROR;
}

const char *log_type_name(int type)
{
    static const char *const names[] = {
        [LOG_TYPE_NOERROR] = "NOERROR", [LOG_TYPE_NXDOMAIN] = "NXDOMAIN",
        [LOG_TYPE_SERVERERROR] = "SERVERERROR", [LOG_TYPE_NODATA] = "NODATA",
        [LOG_TYPE_DELEGATION] = "DELEGATION", [LOG_TYPE_META] = "META",
        [LOG_TYPE_UPDATE] = "UPDATE", [LOG_TYPE_OTHERERROR] = "OTHERERROR",
    };
    return type >= 0 && type <= LOG_TYPE_OTHERERROR ? names[type] : "";
}

int log_class_of(int type)
{
    switch (type) {
    case LOG_TYPE_NOERROR: case LOG_TYPE_DELEGATION: return LOG_CLASS_SUCCESS;
    case LOG_TYPE_NXDOMAIN: case LOG_TYPE_NODATA: return LOG_CLASS_DENIAL;
    default: return LOG_CLASS_ERROR;
    }
}

const char *log_class_name(int cls)
{
    static const char *const names[] = { "all", "success", "denial", "error" };
    return cls >= 0 && cls <= LOG_CLASS_ERROR ? names[cls] : "";
}

int log_classify(const dns_msg *m, time_t now)
{
    return log_class_of(log_typify(m, now));
}
