/* SPDX-License-Identifier: Apache-2.0 */
/*
 * query.c — the rules applied to a query, one at a time, in the order of
 * the Corefile (see rewrite.h). Each rule that matches changes the working
 * copy of the query and adds the response actions it asks for to the
 * request's rw_state; reply.c applies those to the reply.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/rewrite/rewrite.h"
#include "common/vec.h"

int rw_add_act(rw_state *st, rw_act a)
{
    if (VEC_RESERVE_FROM(st->acts, st->capacts, st->nacts + 1, 4) < 0) {
        free(a.remap_from);
        free(a.remap_to);
        free(a.data);
        return -1;
    }
    st->acts[st->nacts++] = a;
    return 0;
}

void rw_state_free(rw_state *st)
{
    if (!st)
        return;
    for (size_t i = 0; i < st->nacts; i++) {
        free(st->acts[i].remap_from);
        free(st->acts[i].remap_to);
        free(st->acts[i].data);
    }
    free(st->acts);
    lookup_free(st->ls);
    free(st);
}

static void copy_str(char *out, size_t cap, const char *s, size_t n)
{
    if (cap == 0)
        return;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, s, n);
    out[n] = '\0';
}

/* out = s with every occurrence of pat replaced by rep (Go's ReplaceAll). */
static void replace_all(const char *s, const char *pat, const char *rep, char *out, size_t cap)
{
    size_t pl = strlen(pat), rl = strlen(rep), o = 0;
    if (cap == 0)
        return;
    if (pl == 0) {
        copy_str(out, cap, s, strlen(s));
        return;
    }
    while (*s) {
        const char *hit = strstr(s, pat);
        size_t take = hit ? (size_t)(hit - s) : strlen(s);
        for (size_t i = 0; i < take && o + 1 < cap; i++)
            out[o++] = s[i];
        if (!hit)
            break;
        for (size_t i = 0; i < rl && o + 1 < cap; i++)
            out[o++] = rep[i];
        s = hit + pl;
    }
    out[o] = '\0';
}

void rw_expand(const char *tmpl, const char *src, const long *m, size_t ngroups,
               char *out, size_t cap)
{
    char cur[RW_NAME_MAX * 4], next[RW_NAME_MAX * 4], key[32], val[RW_NAME_MAX];
    copy_str(cur, sizeof cur, tmpl, strlen(tmpl));
    if (ngroups > RW_MAX_GROUPS)
        ngroups = RW_MAX_GROUPS;
    for (size_t g = 0; g <= ngroups; g++) {
        snprintf(key, sizeof key, "{%zu}", g);
        if (!strstr(cur, key))
            continue;
        long a = m[2 * g], b = m[2 * g + 1];
        if (a < 0 || b < a)
            val[0] = '\0';
        else
            copy_str(val, sizeof val, src + a, (size_t)(b - a));
        replace_all(cur, key, val, next, sizeof next);
        memcpy(cur, next, sizeof cur);
    }
    copy_str(out, cap, cur, strlen(cur));
}

static int starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends_with(const char *s, const char *p)
{
    size_t n = strlen(s), k = strlen(p);
    return n >= k && strcmp(s + n - k, p) == 0;
}

int rw_match_name(const rw_rule *rule, const char *name)
{
    switch (rule->match) {
    case RW_EXACT: return strcmp(rule->from, name) == 0;
    case RW_PREFIX: return starts_with(name, rule->from);
    case RW_SUFFIX: return ends_with(name, rule->from);
    case RW_SUBSTRING: return strstr(name, rule->from) != NULL;
    case RW_REGEX: return goregex_match(rule->re, name, NULL, 0);
    }
    return 0;
}

int rw_str_apply(const rw_str *s, const char *src, char *out, size_t cap)
{
    if (s->is_suffix) {
        if (!ends_with(src, s->from))
            return 0;
        size_t keep = strlen(src) - strlen(s->from);
        snprintf(out, cap, "%.*s%s", (int)keep, src, s->to);
        return strcmp(out, src) != 0;
    }
    long m[2 * (RW_MAX_GROUPS + 1)];
    if (!goregex_match(s->re, src, m, RW_MAX_GROUPS + 1))
        return 0;
    rw_expand(s->to, src, m, goregex_ngroups(s->re), out, cap);
    return strcmp(out, src) != 0;
}

/* The name rule: new name for a match, or 0. */
static int rewrite_name(const rw_rule *rule, const char *name, char *out, size_t cap)
{
    switch (rule->match) {
    case RW_EXACT:
        if (strcmp(rule->from, name))
            return 0;
        copy_str(out, cap, rule->to, strlen(rule->to));
        return 1;
    case RW_PREFIX:
        if (!starts_with(name, rule->from))
            return 0;
        snprintf(out, cap, "%s%s", rule->to, name + strlen(rule->from));
        return 1;
    case RW_SUFFIX:
        if (!ends_with(name, rule->from))
            return 0;
        snprintf(out, cap, "%.*s%s", (int)(strlen(name) - strlen(rule->from)), name, rule->to);
        return 1;
    case RW_SUBSTRING:
        if (!strstr(name, rule->from))
            return 0;
        replace_all(name, rule->from, rule->to, out, cap);
        return 1;
    case RW_REGEX: {
        long m[2 * (RW_MAX_GROUPS + 1)];
        if (!goregex_match(rule->re, name, m, RW_MAX_GROUPS + 1))
            return 0;
        rw_expand(rule->to, name, m, goregex_ngroups(rule->re), out, cap);
        return 1;
    }
    }
    return 0;
}

static int apply_name(const rw_rule *rule, dns_msg *q, char *name, rw_state *st)
{
    char out[RW_NAME_MAX];
    if (!rewrite_name(rule, name, out, sizeof out))
        return RW_IGNORED;
    if (rule->auto_answer) {
        /* the new name mapped back to the old one, in owners and values */
        for (int value = 0; value < 2; value++) {
            rw_act a = { .kind = value ? ACT_VALUE : ACT_NAME,
                         .remap_from = strdup(out), .remap_to = strdup(name) };
            if (!a.remap_from || !a.remap_to || rw_add_act(st, a) < 0) {
                free(a.remap_from);
                free(a.remap_to);
                return RW_ERROR;
            }
        }
    }
    for (size_t i = 0; i < rule->nstatics; i++) {
        rw_act a = { .kind = rule->statics[i].value ? ACT_VALUE : ACT_NAME,
                     .s = &rule->statics[i].s };
        if (rw_add_act(st, a) < 0)
            return RW_ERROR;
    }
    copy_str(name, RW_NAME_MAX, out, strlen(out));
    if (dname_from_str(q->qname, out) < 0)
        return RW_ERROR;            /* reported as an invalid name */
    return RW_DONE;
}

/* ---- EDNS0 ------------------------------------------------------------ */

/* Option codes miekg/dns decodes into types of their own: a `local` rule
 * never matches those as an existing option. */
static int typed_option(uint16_t code)
{
    return (code >= 1 && code <= 3) || (code >= 5 && code <= 12) || code == 15;
}

static void ensure_opt(dns_msg *q)
{
    if (q->edns.present)
        return;
    q->edns.present = 1;
    q->edns.version = 0;
    q->edns.do_bit = 0;
    q->edns.udp_size = 4096;
    q->edns.has_ecs = 0;
    q->edns.opts_len = 0;
}

/* Replace the data of the first option `code` (the others kept in place). */
static int opt_replace_first(dns_edns *e, uint16_t code, const uint8_t *data, uint16_t len)
{
    uint8_t buf[EDNS_OPTS_MAX];
    size_t o = 0;
    int done = 0;
    for (size_t off = 0; off + 4 <= e->opts_len;) {
        uint16_t c = (uint16_t)(e->opts[off] << 8 | e->opts[off + 1]);
        uint16_t l = (uint16_t)(e->opts[off + 2] << 8 | e->opts[off + 3]);
        const uint8_t *d = e->opts + off + 4;
        uint16_t wl = l;
        if (c == code && !done) {
            d = data;
            wl = len;
            done = 1;
        }
        if (o + 4 + wl > sizeof buf)
            return -1;
        buf[o] = (uint8_t)(c >> 8);
        buf[o + 1] = (uint8_t)c;
        buf[o + 2] = (uint8_t)(wl >> 8);
        buf[o + 3] = (uint8_t)wl;
        memcpy(buf + o + 4, d, wl);
        o += 4 + wl;
        off += 4 + (size_t)l;
    }
    memcpy(e->opts, buf, o);
    e->opts_len = (uint16_t)o;
    return done ? 0 : -1;
}

static int add_revert(rw_state *st, enum rw_act_kind kind, uint16_t code,
                      const uint8_t *old, uint16_t len)
{
    rw_act a = { .kind = kind, .code = code, .len = len };
    if (old && len) {
        a.data = malloc(len);
        if (!a.data)
            return -1;
        memcpy(a.data, old, len);
    }
    return rw_add_act(st, a);
}

/* Set/append/replace an option whose data is given (local, variable,
 * nsid). existing: the rule may change an option of that code already in
 * the query; append_existing: what an `append` does when there is one
 * (0: ignored, as the variable rule; 1: a second one, as the others). */
static int put_option(const rw_rule *rule, dns_msg *q, rw_state *st, uint16_t code,
                      const uint8_t *data, uint16_t len, int existing, int append_existing)
{
    uint16_t oldlen = 0;
    const uint8_t *old = existing ? edns_opt_find(&q->edns, code, &oldlen) : NULL;
    if (old) {
        if (rule->action == RW_REPLACE || rule->action == RW_SET) {
            uint8_t saved[EDNS_OPTS_MAX];
            memcpy(saved, old, oldlen);
            if (rule->revert && add_revert(st, ACT_OPT_RESTORE, code, saved, oldlen) < 0)
                return RW_ERROR;
            return opt_replace_first(&q->edns, code, data, len) < 0 ? RW_ERROR : RW_DONE;
        }
        if (!append_existing)
            return RW_IGNORED;
    }
    if (rule->action == RW_APPEND || rule->action == RW_SET) {
        if (edns_opt_add(&q->edns, code, data, len) < 0)
            return RW_ERROR;
        if (rule->revert && add_revert(st, ACT_OPT_REMOVE, code, NULL, 0) < 0)
            return RW_ERROR;
        return RW_DONE;
    }
    return RW_IGNORED;
}

static size_t sa_addr(const struct sockaddr_storage *ss, uint8_t *out, uint16_t *port)
{
    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *s = (const struct sockaddr_in *)ss;
        memcpy(out, &s->sin_addr, 4);
        *port = ntohs(s->sin_port);
        return 4;
    }
    if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)ss;
        memcpy(out, &s->sin6_addr, 16);
        *port = ntohs(s->sin6_port);
        return 16;
    }
    *port = 0;
    return 0;
}

/* The data of a variable, or -1 when it has none for this request. */
static int variable_data(const rw_rule *rule, const dns_msg *q, const dns_req *r,
                         uint8_t *out, size_t cap, uint16_t *len)
{
    const char *v = rule->var;
    uint8_t a[16];
    uint16_t port;
    if (!strcmp(v, "{qname}")) {
        char s[RW_NAME_MAX];
        size_t n = dname_to_str(s, sizeof s, q->qname);
        if (n > cap)
            return -1;
        memcpy(out, s, n);
        *len = (uint16_t)n;
        return 0;
    }
    if (!strcmp(v, "{qtype}")) {
        out[0] = (uint8_t)(q->qtype >> 8);
        out[1] = (uint8_t)q->qtype;
        *len = 2;
        return 0;
    }
    if (!strcmp(v, "{client_ip}") || !strcmp(v, "{server_ip}")) {
        size_t n = sa_addr(!strcmp(v, "{client_ip}") ? &r->peer : &r->local, a, &port);
        if (!n)
            return -1;
        memcpy(out, a, n);
        *len = (uint16_t)n;
        return 0;
    }
    if (!strcmp(v, "{client_port}") || !strcmp(v, "{server_port}")) {
        if (!sa_addr(!strcmp(v, "{client_port}") ? &r->peer : &r->local, a, &port))
            return -1;
        out[0] = (uint8_t)(port >> 8);
        out[1] = (uint8_t)port;
        *len = 2;
        return 0;
    }
    if (!strcmp(v, "{protocol}")) {
        const char *p = r->proto == PROTO_TCP ? "tcp" : "udp";
        *len = (uint16_t)strlen(p);
        memcpy(out, p, *len);
        return 0;
    }
    /* a metadata label */
    char label[256], buf[512];
    size_t n = strlen(v);
    if (n - 2 >= sizeof label)
        return -1;
    memcpy(label, v + 1, n - 2);
    label[n - 2] = '\0';
    const char *val = req_meta_get(r, label, buf, sizeof buf);
    if (!val || !*val || strlen(val) > cap)
        return -1;
    *len = (uint16_t)strlen(val);
    memcpy(out, val, *len);
    return 0;
}

/* The client's address cut to the rule's prefix lengths (CoreDNS's
 * fillEcsData). */
static int fill_ecs(const rw_rule *rule, const dns_req *r, dns_ecs *e)
{
    uint8_t a[16];
    uint16_t port;
    size_t n = sa_addr(&r->peer, a, &port);
    if (!n)
        return -1;
    memset(e, 0, sizeof *e);
    e->family = n == 4 ? 1 : 2;
    e->source_prefix = n == 4 ? rule->v4_bits : rule->v6_bits;
    e->scope_prefix = 0;
    for (size_t i = 0; i < n; i++) {
        int bits = (int)e->source_prefix - (int)(8 * i);
        uint8_t mask = bits >= 8 ? 0xff : bits <= 0 ? 0 : (uint8_t)(0xff << (8 - bits));
        e->addr[i] = a[i] & mask;
    }
    return 0;
}

static int apply_edns(const rw_rule *rule, dns_msg *q, rw_state *st)
{
    ensure_opt(q);
    switch (rule->kind) {
    case RW_EDNS_LOCAL:
        if (rule->action == RW_UNSET) {
            edns_opt_remove(&q->edns, rule->opt_code);
            if (rule->opt_code == EDNS_OPT_ECS)
                q->edns.has_ecs = 0;
            return RW_DONE;
        }
        return put_option(rule, q, st, rule->opt_code, rule->data, (uint16_t)rule->datalen,
                          !typed_option(rule->opt_code), 1);
    case RW_EDNS_VAR: {
        uint8_t data[RW_NAME_MAX];
        uint16_t len = 0;
        if (variable_data(rule, q, st->r, data, sizeof data, &len) < 0)
            return RW_IGNORED;
        return put_option(rule, q, st, rule->opt_code, data, len, !typed_option(rule->opt_code), 0);
    }
    case RW_EDNS_NSID:
        if (rule->action == RW_UNSET) {
            edns_opt_remove(&q->edns, EDNS_OPT_NSID);
            return RW_DONE;
        }
        return put_option(rule, q, st, EDNS_OPT_NSID, NULL, 0, 1, 1);
    case RW_EDNS_SUBNET:
        if (rule->action == RW_UNSET) {
            q->edns.has_ecs = 0;
            return RW_DONE;
        }
        if (q->edns.has_ecs) {
            if (rule->action != RW_REPLACE && rule->action != RW_SET)
                return RW_IGNORED;
            if (rule->revert && add_revert(st, ACT_OPT_RESTORE, EDNS_OPT_ECS, NULL, 0) < 0)
                return RW_ERROR;
            return fill_ecs(rule, st->r, &q->edns.ecs) < 0 ? RW_IGNORED : RW_DONE;
        }
        if (rule->action == RW_APPEND || rule->action == RW_SET) {
            if (fill_ecs(rule, st->r, &q->edns.ecs) < 0)
                return RW_IGNORED;
            q->edns.has_ecs = 1;
            if (rule->revert && add_revert(st, ACT_OPT_REMOVE, EDNS_OPT_ECS, NULL, 0) < 0)
                return RW_ERROR;
            return RW_DONE;
        }
        return RW_IGNORED;
    default:
        return RW_IGNORED;
    }
}

int rw_apply(const rw_rule *rule, dns_msg *q, char *name, rw_state *st)
{
    switch (rule->kind) {
    case RW_NAME:
        return apply_name(rule, q, name, st);
    case RW_TYPE:
        if (q->qtype != rule->from_code)
            return RW_IGNORED;
        q->qtype = rule->to_code;
        return RW_DONE;
    case RW_CLASS:
        if (q->qclass != rule->from_code)
            return RW_IGNORED;
        q->qclass = rule->to_code;
        return RW_DONE;
    case RW_TTL:
    case RW_RCODE:
        if (!rw_match_name(rule, name))
            return RW_IGNORED;
        return rw_add_act(st, (rw_act){ .kind = rule->kind == RW_TTL ? ACT_TTL : ACT_RCODE,
                                        .rule = rule }) < 0 ? RW_ERROR : RW_DONE;
    case RW_CNAME:
        return rw_add_act(st, (rw_act){ .kind = ACT_CNAME, .rule = rule }) < 0 ? RW_ERROR : RW_DONE;
    default:
        return apply_edns(rule, q, st);
    }
}
