/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup.c — `rewrite` lines into rules, with CoreDNS's grammar and error
 * texts (see rewrite.h for who owns what).
 *
 *   rewrite [continue|stop] name [exact|prefix|suffix|substring|regex] FROM TO
 *           [answer auto | answer name FROM TO | answer value FROM TO]...
 *   rewrite [continue|stop] type FROM TO
 *   rewrite [continue|stop] class FROM TO
 *   rewrite [continue|stop] ttl [MATCH] NAME SECONDS|MIN-MAX
 *   rewrite [continue|stop] rcode [MATCH] NAME FROM TO
 *   rewrite [continue|stop] cname [MATCH] FROM TO
 *   rewrite [continue|stop] edns0 local|nsid|subnet set|append|replace|unset ... [revert]
 *
 * A line with fewer than two words takes its words from the block that
 * follows it, all of them flattened into one rule, as CoreDNS reads them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "plugin/rewrite/rewrite.h"
#include "common/vec.h"

#define RW_MAX_ARGS 64

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static char *lower_dup(const char *s)
{
    char *d = strdup(s);
    if (d)
        for (char *p = d; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    return d;
}

/* Go's dns.Fqdn: a final dot unless the name ends in an unescaped one. */
static int has_final_dot(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || s[n - 1] != '.')
        return 0;
    size_t bs = 0;
    while (bs + 1 < n && s[n - 2 - bs] == '\\')
        bs++;
    return bs % 2 == 0;
}

/* CoreDNS's plugin.Name(s).Normalize(): lower case, fully qualified. */
static char *normalize(const char *s)
{
    char *l = lower_dup(s);
    if (!l || has_final_dot(l))
        return l;
    size_t n = strlen(l);
    char *d = realloc(l, n + 2);
    if (!d) {
        free(l);
        return NULL;
    }
    d[n] = '.';
    d[n + 1] = '\0';
    return d;
}

/* How many of {0} .. {100} a replacement uses. */
static size_t subexp_usage(const char *s)
{
    size_t n = 0;
    char k[16];
    for (int i = 0; i <= 100; i++) {
        snprintf(k, sizeof k, "{%d}", i);
        if (strstr(s, k))
            n++;
    }
    return n;
}

/* CoreDNS's isValidRegexPattern(from, to); the message adds Go's reason. */
static int valid_pattern(const char *from, const char *to, goregex **out, char *err, size_t errlen)
{
    char why[256];
    if (strlen(from) > GOREGEX_MAX_LEN)
        return fail(err, errlen, "regex pattern too long: %zu > %d", strlen(from), GOREGEX_MAX_LEN);
    goregex *re = NULL;
    if (goregex_compile(from, &re, why, sizeof why) != GOREGEX_OK)
        return fail(err, errlen, "invalid regex matching pattern: %s: %s", from, why);
    if (subexp_usage(to) > goregex_ngroups(re)) {
        goregex_free(re);
        return fail(err, errlen, "the rewrite regex pattern (%s) uses more subexpressions than its "
                                 "corresponding matching regex pattern (%s)", to, from);
    }
    if (out)
        *out = re;
    else
        goregex_free(re);
    return 0;
}

static int add_static(rw_rule *rule, rw_static s)
{
    if (VEC_RESIZE(rule->statics, rule->nstatics + 1) < 0)
        return -1;
    rule->statics[rule->nstatics++] = s;
    return 0;
}

/* `answer auto | answer name FROM TO | answer value FROM TO`, the word
 * `answer` optional after the first (CoreDNS's parseAnswerRules). */
static int parse_answers(rw_rule *rule, const char *mt, const char *const *a, size_t n,
                         char *err, size_t errlen)
{
    if (n < 2)
        return fail(err, errlen, "invalid arguments for %s rule", mt);
    size_t i = 0, names = 0;
    const char *last = "";
    while (i < n) {
        if (!*last && strcmp(a[i], "answer"))
            return fail(err, errlen, "exceeded the number of arguments for a non-answer rule "
                                     "argument for %s rule", mt);
        if (!strcmp(a[i], "answer"))
            i++;
        if (i == n)
            return fail(err, errlen, "type missing for answer rule for %s rule", mt);
        last = a[i++];
        if (!strcmp(last, "auto")) {
            rule->auto_answer = 1;
            continue;
        }
        int value = !strcmp(last, "value");
        if (!value && strcmp(last, "name"))
            return fail(err, errlen, "invalid type \"%s\" for answer rule for %s rule", last, mt);
        if (n - i < 2)
            return fail(err, errlen, "%s answer rule for %s rule: 2 arguments required", last, mt);
        char why[512];
        rw_static s = { .value = value };
        if (valid_pattern(a[i], a[i + 1], &s.s.re, why, sizeof why) < 0)
            return fail(err, errlen, "%s answer rule for %s rule: %s", last, mt, why);
        s.s.to = normalize(a[i + 1]);
        if (!s.s.to || add_static(rule, s) < 0) {
            goregex_free(s.s.re);
            free(s.s.to);
            return fail(err, errlen, "out of memory");
        }
        i += 2;
        names += !value;
    }
    if (rule->auto_answer && names)
        return fail(err, errlen, "auto name answer rule cannot be combined with explicit name "
                                 "anwer rules");
    return 0;
}

static int match_type(const char *s, enum rw_match *m)
{
    static const char *const names[] = { "exact", "prefix", "suffix", "substring", "regex" };
    for (int i = 0; i < 5; i++)
        if (!strcasecmp(s, names[i])) {
            *m = (enum rw_match)i;
            return 0;
        }
    return -1;
}

static int parse_name(rw_rule *rule, const char *const *a, size_t n, char *err, size_t errlen)
{
    if (n < 2)
        return fail(err, errlen, "too few arguments for a name rule");
    char *mt = n == 2 ? strdup("exact") : lower_dup(a[0]);
    if (!mt)
        return fail(err, errlen, "out of memory");
    int known = match_type(mt, &rule->match) == 0;
    const char *from = n == 2 ? a[0] : a[1], *to = n == 2 ? a[1] : a[2];
    int rc = -1;
    if (known && rule->match == RW_REGEX) {
        rule->from = strdup(from);
        rule->to = normalize(to);
    } else {
        rule->from = normalize(from);
        rule->to = normalize(to);
    }
    if (!rule->from || !rule->to) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    if (n > 3 && parse_answers(rule, mt, a + 3, n - 3, err, errlen) < 0)
        goto out;
    if (!known) {
        fail(err, errlen, "name rule supports only exact, prefix, suffix, substring, and regex "
                          "name matching, received: %s", mt);
        goto out;
    }
    switch (rule->match) {
    case RW_EXACT:
        /* CoreDNS checks TO as a pattern here too */
        if (valid_pattern(rule->to, rule->from, NULL, err, errlen) < 0)
            goto out;
        rule->auto_answer = 1;
        break;
    case RW_REGEX:
        if (valid_pattern(from, to, &rule->re, err, errlen) < 0)
            goto out;
        break;
    case RW_SUFFIX:
        if (rule->auto_answer) {
            /* the suffix swapped back: better than remapping whole names */
            rule->auto_answer = 0;
            rw_static back[2] = {
                { .value = 0, .s = { .is_suffix = 1, .from = strdup(rule->to), .to = strdup(rule->from) } },
                { .value = 1, .s = { .is_suffix = 1, .from = strdup(rule->to), .to = strdup(rule->from) } },
            };
            size_t had = rule->nstatics;
            for (int i = 0; i < 2; i++)
                if (!back[i].s.from || !back[i].s.to || add_static(rule, back[i]) < 0) {
                    free(back[i].s.from);
                    free(back[i].s.to);
                    fail(err, errlen, "out of memory");
                    goto out;
                }
            /* the swap comes before the explicit answer rules */
            rw_static tmp[2] = { rule->statics[had], rule->statics[had + 1] };
            memmove(rule->statics + 2, rule->statics, had * sizeof *rule->statics);
            rule->statics[0] = tmp[0];
            rule->statics[1] = tmp[1];
        }
        break;
    default:
        break;
    }
    rc = 0;
out:
    free(mt);
    return rc;
}

static int parse_code_pair(rw_rule *rule, const char *const *a, int is_type, char *err, size_t errlen)
{
    for (int i = 0; i < 2; i++) {
        char up[32];
        size_t k = 0;
        for (; a[i][k] && k + 1 < sizeof up; k++)
            up[k] = (char)toupper((unsigned char)a[i][k]);
        up[k] = '\0';
        int v = is_type ? rr_type_from_name(up) : rr_class_from_name(up);
        if (v < 0 || a[i][k])
            return fail(err, errlen, "invalid %s \"%s\"", is_type ? "type" : "class", up);
        if (i == 0)
            rule->from_code = (uint16_t)v;
        else
            rule->to_code = (uint16_t)v;
    }
    return 0;
}

/* Go's strconv.ParseUint(s, 10, 32). */
static int parse_u32(const char *s, uint32_t *out)
{
    if (!*s)
        return -1;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX)
            return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

/* SECONDS, MIN-MAX, MIN- (up to 2^31-1) or -MAX. */
static int parse_ttl_range(const char *s, uint32_t *min, uint32_t *max)
{
    const char *dash = strchr(s, '-');
    if (!dash)
        return parse_u32(s, min) < 0 ? -1 : (*max = *min, 0);
    if (strchr(dash + 1, '-'))
        return -1;
    char lo[32];
    size_t n = (size_t)(dash - s);
    if (n >= sizeof lo)
        return -1;
    memcpy(lo, s, n);
    lo[n] = '\0';
    *min = 0;
    if (n && parse_u32(lo, min) < 0)
        return -1;
    if (!dash[1]) {
        if (!n)
            return -1;
        *max = 2147483647;
    } else if (parse_u32(dash + 1, max) < 0) {
        return -1;
    }
    return *min > *max ? -1 : 0;
}

/* The name matcher of ttl, rcode: MATCH NAME (regex compiled). */
static int parse_matcher(rw_rule *rule, const char *mt, const char *name, const char *what,
                         char *err, size_t errlen)
{
    if (match_type(mt, &rule->match) < 0)
        return fail(err, errlen, "%s rule supports only exact, prefix, suffix, substring, and "
                                 "regex name matching", what);
    if (rule->match != RW_REGEX) {
        rule->from = normalize(name);
        return rule->from ? 0 : fail(err, errlen, "out of memory");
    }
    if (strlen(name) > GOREGEX_MAX_LEN)
        return fail(err, errlen, "regex pattern too long in a %s rule: %zu > %d", what,
                    strlen(name), GOREGEX_MAX_LEN);
    char why[256];
    if (goregex_compile(name, &rule->re, why, sizeof why) != GOREGEX_OK)
        return fail(err, errlen, "invalid regex pattern in a %s rule: %s: %s", what, name, why);
    rule->from = strdup(name);
    return rule->from ? 0 : fail(err, errlen, "out of memory");
}

static int parse_ttl(rw_rule *rule, const char *const *a, size_t n, char *err, size_t errlen)
{
    if (n < 2)
        return fail(err, errlen, "too few (%zu) arguments for a ttl rule", n);
    const char *s = n == 2 ? a[1] : n == 3 ? a[2] : "";
    if (parse_ttl_range(s, &rule->ttl_min, &rule->ttl_max) < 0)
        return fail(err, errlen, "invalid TTL '%s' for a ttl rule", s);
    if (n == 3)
        return parse_matcher(rule, a[0], a[1], "ttl", err, errlen);
    rule->match = RW_EXACT;
    rule->from = normalize(a[0]);
    return rule->from ? 0 : fail(err, errlen, "out of memory");
}

/* 0..23, or a name of miekg/dns's table. */
static int parse_rcode(const char *s, int *out)
{
    uint32_t v;
    if (parse_u32(s, &v) == 0 && v <= 23) {
        *out = (int)v;
        return 0;
    }
    char up[32];
    size_t k = 0;
    for (; s[k] && k + 1 < sizeof up; k++)
        up[k] = (char)toupper((unsigned char)s[k]);
    up[k] = '\0';
    int rc = s[k] ? -1 : rcode_from_name(up);
    if (rc < 0)
        return -1;
    *out = rc;
    return 0;
}

static int parse_rcode_rule(rw_rule *rule, const char *const *a, size_t n, char *err, size_t errlen)
{
    if (n < 3)
        return fail(err, errlen, "too few (%zu) arguments for a rcode rule", n);
    const char *o = n == 3 ? a[1] : n == 4 ? a[2] : "", *w = n == 3 ? a[2] : n == 4 ? a[3] : "";
    if (parse_rcode(o, &rule->rc_old) < 0)
        return fail(err, errlen, "invalid matching RCODE '%s' for a rcode rule", o);
    if (parse_rcode(w, &rule->rc_new) < 0)
        return fail(err, errlen, "invalid replacement RCODE '%s' for a rcode rule", w);
    if (n == 4)
        return parse_matcher(rule, a[0], a[1], "rcode", err, errlen);
    rule->match = RW_EXACT;
    rule->from = normalize(a[0]);
    return rule->from ? 0 : fail(err, errlen, "out of memory");
}

static int parse_cname(rw_rule *rule, const char *const *a, size_t n, char *err, size_t errlen)
{
    if (n == 3) {
        char *mt = lower_dup(a[0]);
        int bad = !mt || match_type(mt, &rule->match) < 0;
        if (bad) {
            fail(err, errlen, "unknown cname rewrite type: %s", mt ? mt : a[0]);
            free(mt);
            return -1;
        }
        free(mt);
        rule->from = lower_dup(a[1]);
        rule->to = lower_dup(a[2]);
    } else if (n == 2) {
        rule->match = RW_EXACT;
        rule->from = lower_dup(a[0]);
        rule->to = lower_dup(a[1]);
    } else {
        return fail(err, errlen, "too few (%zu) arguments for a cname rule", n);
    }
    if (!rule->from || !rule->to)
        return fail(err, errlen, "out of memory");
    if (rule->match == RW_EXACT) {
        char *f = normalize(rule->from), *t = normalize(rule->to);
        free(rule->from);
        free(rule->to);
        rule->from = f;
        rule->to = t;
        if (!f || !t)
            return fail(err, errlen, "out of memory");
    }
    if (rule->match == RW_REGEX) {
        if (strlen(rule->from) > GOREGEX_MAX_LEN)
            return fail(err, errlen, "regex pattern too long in a cname rule: %zu > %d",
                        strlen(rule->from), GOREGEX_MAX_LEN);
        char why[256];
        if (goregex_compile(rule->from, &rule->re, why, sizeof why) != GOREGEX_OK)
            return fail(err, errlen, "invalid cname rewrite regex pattern: %s", why);
    }
    return 0;
}

/* Go's strconv.ParseUint(s, 0, 16): 0x.., 0o.., 0b.., 0.. (octal), decimal,
 * underscores between digits with a prefix. */
static int parse_u16_base0(const char *s, uint16_t *out, char *err, size_t errlen)
{
    const char *p = s;
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
        base = 16, p += 2;
    else if (p[0] == '0' && (p[1] == 'o' || p[1] == 'O'))
        base = 8, p += 2;
    else if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B'))
        base = 2, p += 2;
    else if (p[0] == '0' && p[1])
        base = 8, p += 1;
    uint64_t v = 0;
    int digits = 0, range = 0;
    for (; *p; p++) {
        if (*p == '_' && base != 10 && digits)
            continue;
        int d = isdigit((unsigned char)*p) ? *p - '0'
              : isalpha((unsigned char)*p) ? tolower((unsigned char)*p) - 'a' + 10 : 99;
        if (d >= base)
            return fail(err, errlen, "strconv.ParseUint: parsing \"%s\": invalid syntax", s);
        v = v * (uint64_t)base + (uint64_t)d;
        if (v > 0xffff)
            range = 1, v = 0xffff;
        digits++;
    }
    if (!digits && !(base == 8 && s[0] == '0' && !s[1]))
        return fail(err, errlen, "strconv.ParseUint: parsing \"%s\": invalid syntax", s);
    if (range)
        return fail(err, errlen, "strconv.ParseUint: parsing \"%s\": value out of range", s);
    *out = (uint16_t)v;
    return 0;
}

static void add_echo(rw_conf *c, uint16_t code)
{
    for (size_t i = 0; i < c->necho; i++)
        if (c->echo_codes[i] == code)
            return;
    if (c->necho < sizeof c->echo_codes / sizeof c->echo_codes[0])
        c->echo_codes[c->necho++] = code;
}

static int hexval(int ch)
{
    return isdigit(ch) ? ch - '0' : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10
         : (ch >= 'A' && ch <= 'F') ? ch - 'A' + 10 : -1;
}

static int parse_local(rw_rule *rule, rw_conf *c, const char *code, const char *data,
                       char *err, size_t errlen)
{
    if (parse_u16_base0(code, &rule->opt_code, err, errlen) < 0)
        return -1;
    if (!strncmp(data, "0x", 2)) {
        const char *h = data + 2;
        size_t n = strlen(h);
        rule->data = malloc(n / 2 + 1);
        if (!rule->data)
            return fail(err, errlen, "out of memory");
        for (size_t i = 0; i + 1 < n; i += 2) {
            int hi = hexval((unsigned char)h[i]), lo = hexval((unsigned char)h[i + 1]);
            if (hi < 0 || lo < 0) {
                char bad = hi < 0 ? h[i] : h[i + 1];
                return fail(err, errlen, "encoding/hex: invalid byte: U+%04X '%c'",
                            (unsigned char)bad, bad);
            }
            rule->data[rule->datalen++] = (uint8_t)(hi << 4 | lo);
        }
        if (n % 2) {
            if (hexval((unsigned char)h[n - 1]) < 0)
                return fail(err, errlen, "encoding/hex: invalid byte: U+%04X '%c'",
                            (unsigned char)h[n - 1], h[n - 1]);
            return fail(err, errlen, "encoding/hex: odd length hex string");
        }
    } else {
        rule->datalen = strlen(data);
        rule->data = (uint8_t *)strdup(data);
        if (!rule->data)
            return fail(err, errlen, "out of memory");
    }
    add_echo(c, rule->opt_code);
    return 0;
}

static int is_variable(const char *v)
{
    static const char *const known[] = { "{qname}", "{qtype}", "{client_ip}", "{client_port}",
                                         "{protocol}", "{server_ip}", "{server_port}" };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(v, known[i]))
            return 1;
    /* a metadata label: {plugin/name} */
    size_t n = strlen(v);
    if (n < 2 || v[0] != '{' || v[n - 1] != '}')
        return 0;
    const char *slash = memchr(v + 1, '/', n - 2);
    return slash && slash > v + 1 && slash < v + n - 2 &&
           !memchr(slash + 1, '/', (size_t)(v + n - 1 - (slash + 1)));
}

static int parse_subnet(rw_rule *rule, const char *v4, const char *v6, char *err, size_t errlen)
{
    uint16_t a, b;
    if (parse_u16_base0(v4, &a, err, errlen) < 0)
        return -1;
    if (a > 32)
        return fail(err, errlen, "invalid IPv4 bit mask length %u", a);
    if (parse_u16_base0(v6, &b, err, errlen) < 0)
        return -1;
    if (b > 128)
        return fail(err, errlen, "invalid IPv6 bit mask length %u", b);
    rule->v4_bits = (uint8_t)a;
    rule->v6_bits = (uint8_t)b;
    return 0;
}

static int parse_edns0(rw_rule *rule, rw_conf *c, const char *const *a, size_t n,
                       char *err, size_t errlen)
{
    if (n < 2)
        return fail(err, errlen, "too few arguments for an EDNS0 rule");
    char *rt = lower_dup(a[0]), *act = lower_dup(a[1]);
    int rc = -1;
    if (!rt || !act) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    if (!strcmp(act, "append"))
        rule->action = RW_APPEND;
    else if (!strcmp(act, "replace"))
        rule->action = RW_REPLACE;
    else if (!strcmp(act, "set"))
        rule->action = RW_SET;
    else if (!strcmp(act, "unset"))
        rule->action = RW_UNSET;
    else {
        fail(err, errlen, "invalid action: \"%s\"", act);
        goto out;
    }
    if (rule->action == RW_UNSET) {
        if (!strcmp(rt, "local")) {
            if (n != 3) {
                fail(err, errlen, "local unset action requires exactly two arguments");
                goto out;
            }
            rule->kind = RW_EDNS_LOCAL;
            rc = parse_local(rule, c, a[2], "", err, errlen);
        } else if (!strcmp(rt, "nsid")) {
            rule->kind = RW_EDNS_NSID;
            rc = n != 2 ? fail(err, errlen, "nsid unset action requires exactly one argument") : 0;
        } else if (!strcmp(rt, "subnet")) {
            rule->kind = RW_EDNS_SUBNET;
            rc = n != 2 ? fail(err, errlen, "subnet unset action requires exactly one argument") : 0;
        } else {
            fail(err, errlen, "invalid rule type \"%s\"", rt);
        }
        goto out;
    }
    if (!strcmp(a[n - 1], "revert")) {
        rule->revert = 1;
        n--;
    }
    if (!strcmp(rt, "local")) {
        if (n != 4) {
            fail(err, errlen, "EDNS0 local rules require three or four args");
            goto out;
        }
        size_t dl = strlen(a[3]);
        if (dl && a[3][0] == '{' && a[3][dl - 1] == '}') {
            rule->kind = RW_EDNS_VAR;
            if (parse_u16_base0(a[2], &rule->opt_code, err, errlen) < 0)
                goto out;
            if (!is_variable(a[3])) {
                fail(err, errlen, "unsupported variable name \"%s\"", a[3]);
                goto out;
            }
            rule->var = strdup(a[3]);
            if (!rule->var) {
                fail(err, errlen, "out of memory");
                goto out;
            }
            add_echo(c, rule->opt_code);
            rc = 0;
        } else {
            rule->kind = RW_EDNS_LOCAL;
            rc = parse_local(rule, c, a[2], a[3], err, errlen);
        }
    } else if (!strcmp(rt, "nsid")) {
        rule->kind = RW_EDNS_NSID;
        rc = n != 2 ? fail(err, errlen, "EDNS0 NSID rules can accept no more than one arg") : 0;
    } else if (!strcmp(rt, "subnet")) {
        rule->kind = RW_EDNS_SUBNET;
        if (n != 4)
            fail(err, errlen, "EDNS0 subnet rules require three or four args");
        else
            rc = parse_subnet(rule, a[2], a[3], err, errlen);
    } else {
        fail(err, errlen, "invalid rule type \"%s\"", rt);
    }
out:
    free(rt);
    free(act);
    return rc;
}

int rw_rule_parse(rw_rule *rule, const char *const *args, size_t n, rw_conf *c,
                  char *err, size_t errlen)
{
    memset(rule, 0, sizeof *rule);
    rule->stop = 1;
    if (n == 0)
        return fail(err, errlen, "no rule type specified for rewrite");
    size_t start = 1, expect = n;
    const char *type = args[0];
    if (!strcasecmp(args[0], "continue") || !strcasecmp(args[0], "stop")) {
        rule->stop = !strcasecmp(args[0], "stop");
        if (n < 2)
            return fail(err, errlen, "%s rule must begin with a rule type",
                        rule->stop ? "stop" : "continue");
        type = args[1];
        start = 2;
        expect = n - 1;
    }
    const char *const *a = args + start;
    size_t na = n - start;
    if (!strcasecmp(type, "answer"))
        return fail(err, errlen, "response rewrites must begin with a name rule");
    if (!strcasecmp(type, "name")) {
        rule->kind = RW_NAME;
        return parse_name(rule, a, na, err, errlen);
    }
    if (!strcasecmp(type, "class") || !strcasecmp(type, "type")) {
        int is_type = !strcasecmp(type, "type");
        rule->kind = is_type ? RW_TYPE : RW_CLASS;
        if (expect != 3)
            return fail(err, errlen, "%s rules must have exactly two arguments",
                        is_type ? "type" : "class");
        return parse_code_pair(rule, a, is_type, err, errlen);
    }
    if (!strcasecmp(type, "edns0"))
        return parse_edns0(rule, c, a, na, err, errlen);
    if (!strcasecmp(type, "ttl")) {
        rule->kind = RW_TTL;
        return parse_ttl(rule, a, na, err, errlen);
    }
    if (!strcasecmp(type, "cname")) {
        rule->kind = RW_CNAME;
        return parse_cname(rule, a, na, err, errlen);
    }
    if (!strcasecmp(type, "rcode")) {
        rule->kind = RW_RCODE;
        return parse_rcode_rule(rule, a, na, err, errlen);
    }
    return fail(err, errlen, "invalid rule type \"%s\"", args[0]);
}

void rw_rule_free(rw_rule *rule)
{
    free(rule->from);
    free(rule->to);
    goregex_free(rule->re);
    for (size_t i = 0; i < rule->nstatics; i++) {
        goregex_free(rule->statics[i].s.re);
        free(rule->statics[i].s.from);
        free(rule->statics[i].s.to);
    }
    free(rule->statics);
    free(rule->data);
    free(rule->var);
    memset(rule, 0, sizeof *rule);
}

void rw_conf_free(rw_conf *c)
{
    for (size_t i = 0; i < c->nrules; i++)
        rw_rule_free(&c->rules[i]);
    free(c->rules);
    c->rules = NULL;
    c->nrules = 0;
}

int rw_parse(cf_disp *d, rw_conf *c)
{
    while (cf_next(d)) {
        const char *args[RW_MAX_ARGS + 1];
        int k = cf_remaining_args(d, args, RW_MAX_ARGS + 1);
        size_t n = (size_t)k;
        if (n < 2) {
            /* the rule's words are the block's, all of them */
            while (cf_next_block(d)) {
                if (n >= RW_MAX_ARGS)
                    return cf_err(d, "plugin/rewrite: more than %d words in a rule", RW_MAX_ARGS);
                args[n++] = cf_val(d);
                int more = cf_remaining_args(d, args + n, (int)(RW_MAX_ARGS - n));
                if ((size_t)more > RW_MAX_ARGS - n)
                    return cf_err(d, "plugin/rewrite: more than %d words in a rule", RW_MAX_ARGS);
                n += (size_t)more;
            }
        } else if (n > RW_MAX_ARGS) {
            return cf_err(d, "plugin/rewrite: more than %d words in a rule", RW_MAX_ARGS);
        } else if (cf_next_block(d)) {
            return cf_err(d, "plugin/rewrite: invalid rule type \"{\"");
        }
        if (VEC_RESIZE(c->rules, c->nrules + 1) < 0)
            return cf_err(d, "plugin/rewrite: out of memory");
        char err[768];
        if (rw_rule_parse(&c->rules[c->nrules], args, n, c, err, sizeof err) < 0) {
            rw_rule_free(&c->rules[c->nrules]);
            return cf_err(d, "plugin/rewrite: %s", err);
        }
        c->nrules++;
    }
    return 0;
}
