/* SPDX-License-Identifier: Apache-2.0 */
/*
 * forward/setup.c — the `forward` stanza: syntax and validation.
 *
 *   forward FROM TO... {
 *       except IGNORED_NAMES...
 *       force_tcp | prefer_udp
 *       expire DURATION | max_idle_conns N    (tls:// connection reuse)
 *       max_age DURATION                      (accepted)
 *       tls [CERT KEY [CA]] | tls CA
 *       tls_servername NAME
 *       read_timeout DURATION
 *       max_fails N
 *       max_connect_attempts N
 *       policy random|round_robin|sequential
 *       health_check DURATION [no_rec] [domain FQDN]
 *       max_concurrent N
 *       next RCODE... | next_on_nodata | failover RCODE...
 *       failfast_all_unhealthy_upstreams
 *       source_address IP
 *       add_client_subnet [IPV4_PREFIX [IPV6_PREFIX]]            (topodns's own)
 *   }
 *
 * Defaults and checks follow CoreDNS's plugin/forward/setup.go. TO is an IP
 * with an optional port (dns:// prefix allowed), tls://IP[%NAME][:PORT]
 * (DNS over TLS, port 853; NAME is that upstream's own server name), or a
 * resolv.conf-style file whose nameserver lines are used; at most 15
 * upstreams, plain and tls:// ones may be mixed as in CoreDNS. The `tls`
 * line's files are loaded when it is read (an error names its line). What
 * topodns does not implement (https://, doh_method, hostname upstreams and
 * their resolver) stops startup with a clear error rather than being
 * silently ignored.
 */
#include <assert.h>
#include <arpa/inet.h>
#include <ctype.h>
#include <netdb.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include "plugin/forward/forward.h"
#include "common/addr.h"
#include "common/log.h"
#include "server/zone.h"
#include "common/vec.h"

static const struct { const char *name; int rc; } RCODES[] = {
    { "NOERROR", 0 }, { "FORMERR", 1 }, { "SERVFAIL", 2 }, { "NXDOMAIN", 3 },
    { "NOTIMP", 4 }, { "REFUSED", 5 }, { "YXDOMAIN", 6 }, { "YXRRSET", 7 },
    { "NXRRSET", 8 }, { "NOTAUTH", 9 }, { "NOTZONE", 10 }, { "BADSIG", 16 },
    { "BADVERS", 16 }, { "BADKEY", 17 }, { "BADTIME", 18 }, { "BADMODE", 19 },
    { "BADNAME", 20 }, { "BADALG", 21 }, { "BADTRUNC", 22 }, { "BADCOOKIE", 23 },
};

int fwd_rcode_from_str(const char *s)
{
    for (size_t i = 0; i < sizeof RCODES / sizeof RCODES[0]; i++)
        if (strcasecmp(s, RCODES[i].name) == 0)
            return RCODES[i].rc;
    return -1;
}

/* ---- upstream addresses ----------------------------------------------- */

/* One upstream at ss (from common/addr's parsers); its `to` (metrics label,
 * logs) is the address and port as numbers: "ip:port", "[ip6]:port" (with
 * its zone when one was written: "[fe80::1%eth0]:53"). */
static int add_addr(cf_disp *d, fwd_stanza *st, const struct sockaddr_storage *ss, socklen_t len,
                    int tls, const char *servername)
{
    assert(ss && (ss->ss_family == AF_INET || ss->ss_family == AF_INET6));
    if (st->nups >= FWD_MAX_UP) {
        st->nups++;                      /* counted for the error message */
        return 0;
    }
    fwd_upstream *u = &st->ups[st->nups];
    memset(u, 0, sizeof *u);
    char host[INET6_ADDRSTRLEN + 1 + IF_NAMESIZE], port[8];     /* ip6%zone, 65535 */
    if (getnameinfo((const struct sockaddr *)ss, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return cf_err(d, "plugin/forward: not an IP address");
    assert(!servername || strlen(servername) < sizeof u->servername);   /* add_tls checked */
    memcpy(&u->sa, ss, len);
    u->salen = len;
    snprintf(u->to, sizeof u->to, ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
    u->st = st;
    u->tls = tls;
    if (servername)
        snprintf(u->servername, sizeof u->servername, "%s", servername);
    st->nups++;
    return 0;
}

/* nameserver lines of a resolv.conf-style file: an address each (no port,
 * as the libc resolver reads them), port 53; other lines are skipped */
static int add_file(cf_disp *d, fwd_stanza *st, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return cf_err(d, "plugin/forward: not an IP address or file: \"%s\"", path);
    char line[512];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        char *save = NULL, *k = strtok_r(line, " \t\r\n", &save);
        if (!k || strcmp(k, "nameserver") != 0)
            continue;
        char *v = strtok_r(NULL, " \t\r\n", &save);
        struct sockaddr_storage ss;
        socklen_t len;
        if (v && addr_parse_ip(v, 53, &ss, &len) == 0)
            rc = add_addr(d, st, &ss, len, 0, NULL);
    }
    fclose(fp);
    return rc;
}

/* tls://IP[%NAME][:PORT] or tls://[IP6%NAME]:PORT, port 853 by default.
 * NAME, this upstream's own tls_servername as CoreDNS reads it, runs from
 * the last '%' to the last ':' after it (or to the end), less a closing ']'
 * that stays with the address. It is taken off, and what is left is an
 * address with or without a port, read by common/addr's addr_parse as every
 * other upstream is. */
static int add_tls(cf_disp *d, fwd_stanza *st, const char *to)
{
    const char *h = to + 6, *pct = strrchr(h, '%'), *rest = "";
    size_t hl = strlen(h);
    char name[sizeof st->ups[0].servername] = "";
    if (pct) {
        const char *nm = pct + 1, *colon = strrchr(nm, ':');
        size_t nl = colon ? (size_t)(colon - nm) : strlen(nm);
        if (nl && nm[nl - 1] == ']')
            nl--;
        if (nl == 0)
            return cf_err(d, "plugin/forward: empty TLS server name in \"%s\"", to);
        if (nl >= sizeof name)
            return cf_err(d, "plugin/forward: TLS server name too long: %.*s", (int)nl, nm);
        memcpy(name, nm, nl);
        name[nl] = '\0';
        hl = (size_t)(pct - h);
        rest = nm + nl;                 /* "]", ":PORT", "]:PORT" or nothing */
    }
    char host[INET6_ADDRSTRLEN + IF_NAMESIZE + 16];       /* [ip6%zone]:port, less "%NAME" */
    struct sockaddr_storage ss;
    socklen_t len;
    if (hl + strlen(rest) >= sizeof host)
        return cf_err(d, "plugin/forward: not an IP address: \"%s\"", to);
    snprintf(host, sizeof host, "%.*s%s", (int)hl, h, rest);
    if (addr_parse(host, 853, &ss, &len) != 0)
        return cf_err(d, "plugin/forward: not an IP address: \"%s\" "
                      "(hostname upstreams are not supported by topodns)", to);
    if (name[0] && st->tls_servername[0])
        return cf_err(d, "plugin/forward: both forward ('%s') and proxy level ('%s') TLS "
                      "servernames are set for upstream proxy '%s'", st->tls_servername, name, to);
    return add_addr(d, st, &ss, len, 1, name[0] ? name : NULL);
}

int fwd_add_to(cf_disp *d, fwd_stanza *st, const char *to)
{
    if (!strncasecmp(to, "tls://", 6))
        return add_tls(d, st, to);
    if (!strncasecmp(to, "https://", 8))
        return cf_err(d, "plugin/forward: '%.*s' is not supported as a destination protocol in forward by topodns: %s",
                      (int)(strstr(to, "://") - to), to, to);
    if (!strncasecmp(to, "dns://", 6))
        to += 6;
    else if (strstr(to, "://"))
        return cf_err(d, "plugin/forward: '%.*s' is not supported as a destination protocol in forward: %s",
                      (int)(strstr(to, "://") - to), to, to);
    struct sockaddr_storage ss;
    socklen_t len;
    if (addr_parse(to, 53, &ss, &len) == 0)
        return add_addr(d, st, &ss, len, 0, NULL);
    struct stat sb;
    if (stat(to, &sb) == 0 && S_ISREG(sb.st_mode))
        return add_file(d, st, to);
    return cf_err(d, "plugin/forward: not an IP address or file: \"%s\" "
                  "(hostname upstreams are not supported by topodns)", to);
}

/* ---- options ---------------------------------------------------------- */

static int one_arg(cf_disp *d, const char **out)
{
    const char *args[2] = { NULL, NULL };
    *out = "";
    if (cf_remaining_args(d, args, 2) != 1)
        return cf_arg_err(d);
    *out = args[0];
    return 0;
}

static int no_arg(cf_disp *d, int *flag)
{
    if (cf_next_arg(d))
        return cf_arg_err(d);
    *flag = 1;
    return 0;
}

static int parse_rcodes(cf_disp *d, uint16_t *out, int *n, int failover)
{
    const char *args[FWD_MAX_RCODES];
    int k = cf_remaining_args(d, args, FWD_MAX_RCODES);
    if (k == 0 || k > FWD_MAX_RCODES)
        return cf_arg_err(d);
    for (int i = 0; i < k; i++) {
        int rc = fwd_rcode_from_str(args[i]);
        if (rc < 0)
            return cf_err(d, "plugin/forward: %s is not a valid rcode", args[i]);
        if (failover && rc == 0)
            return cf_err(d, "plugin/forward: NoError cannot be used in failover");
        out[(*n)++] = (uint16_t)rc;
        if (*n >= FWD_MAX_RCODES)
            break;
    }
    return 0;
}

static int add_except(cf_disp *d, fwd_stanza *st)
{
    const char *args[64];
    int k = cf_remaining_args(d, args, 64);
    if (k == 0)
        return cf_arg_err(d);
    for (int i = 0; i < k && i < 64; i++) {
        char (*z)[DNAME_STR_MAX];
        int nz = zone_from_key(args[i], &z);
        if (nz < 0)
            return cf_err(d, "plugin/forward: invalid name '%s'", args[i]);
        if (VEC_RESIZE(st->except, st->nexcept + (size_t)nz) != 0) {
            free(z);
            return cf_err(d, "plugin/forward: out of memory");
        }
        for (int j = 0; j < nz; j++)
            dname_from_str(st->except[st->nexcept++], z[j]);
        free(z);
    }
    return 0;
}

static int parse_health(cf_disp *d, fwd_stanza *st)
{
    const char *args[8];
    int k = cf_remaining_args(d, args, 8);
    if (k < 1 || k > 8)
        return cf_arg_err(d);
    if (cf_parse_duration(d, args[0], &st->hc_interval) < 0)
        return -1;
    if (st->hc_interval < 0)
        return cf_err(d, "plugin/forward: health_check can't be negative");
    dname_from_str(st->hc_domain, ".");
    for (int i = 1; i < k; i++) {
        if (!strcmp(args[i], "no_rec")) {
            st->hc_rd = 0;
        } else if (!strcmp(args[i], "domain")) {
            if (++i >= k)
                return cf_arg_err(d);
            if (dname_from_str(st->hc_domain, args[i]) < 0)
                return cf_err(d, "plugin/forward: health_check: invalid domain name %s", args[i]);
            dname_lower(st->hc_domain);
        } else {
            return cf_err(d, "plugin/forward: health_check: unknown option %s", args[i]);
        }
    }
    return 0;
}

static int parse_duration_opt(cf_disp *d, double *out, int positive)
{
    const char *a = "";
    if (one_arg(d, &a) < 0 || cf_parse_duration(d, a, out) < 0)
        return -1;
    if (positive && *out <= 0)
        return cf_err(d, "plugin/forward: %s must be positive: %s", "read_timeout", a);
    if (*out < 0)
        return cf_err(d, "plugin/forward: duration can't be negative: %s", a);
    return 0;
}

static int parse_source(cf_disp *d, fwd_stanza *st)
{
    const char *a = "";
    if (one_arg(d, &a) < 0)
        return -1;
    struct sockaddr_storage *src = &st->src;
    st->has_src = 1;
    socklen_t srclen;
    if (addr_parse_ip(a, 0, src, &srclen) != 0)
        return cf_err(d, "plugin/forward: invalid IP address: %s", a);
    return 0;
}

/* add_client_subnet [IPV4_PREFIX [IPV6_PREFIX]]: defaults 32 and 128. */
static int parse_add_ecs(cf_disp *d, fwd_stanza *st)
{
    const char *args[3];
    unsigned long v4 = 32, v6 = 128;
    int k = cf_remaining_args(d, args, 3);
    if (k > 2)
        return cf_arg_err(d);
    if (k >= 1 && cf_parse_uint(d, args[0], 1, 32, &v4) < 0)
        return -1;
    if (k == 2 && cf_parse_uint(d, args[1], 1, 128, &v6) < 0)
        return -1;
    st->add_ecs = 1;
    st->ecs_bits4 = (uint8_t)v4;
    st->ecs_bits6 = (uint8_t)v6;
    return 0;
}

/* tls [CERT KEY [CA]] | tls CA: the client context, built here so that a
 * file that does not load stops startup at this line. */
static int parse_tls(cf_disp *d, fwd_stanza *st)
{
    const char *a[4] = { NULL, NULL, NULL, NULL };
    int n = cf_remaining_args(d, a, 4);
    if (n > 3)
        return cf_arg_err(d);
    char err[512];
    const char *cert = n >= 2 ? a[0] : NULL, *key = n >= 2 ? a[1] : NULL;
    const char *ca = n == 1 ? a[0] : n == 3 ? a[2] : NULL;
    struct ssl_ctx_st *ctx = fwd_tls_ctx(cert, key, ca, err, sizeof err);
    if (!ctx)
        return cf_err(d, "plugin/forward: %s", err);
    fwd_tls_ctx_free(st->tls_ctx);   /* a later `tls` line wins, as in CoreDNS */
    st->tls_ctx = ctx;
    st->tls_set = 1;
    return 0;
}

static int parse_prop(cf_disp *d, fwd_stanza *st)
{
    const char *p = cf_val(d), *a = "";
    unsigned long v;
    double dummy;
    if (!strcmp(p, "except"))
        return add_except(d, st);
    if (!strcmp(p, "max_fails") || !strcmp(p, "max_connect_attempts") ||
        !strcmp(p, "max_concurrent") || !strcmp(p, "max_idle_conns")) {
        if (one_arg(d, &a) < 0 || cf_parse_uint(d, a, 0, 4294967295ul, &v) < 0)
            return -1;
        if (!strcmp(p, "max_fails"))
            st->max_fails = (unsigned)v;
        else if (!strcmp(p, "max_connect_attempts"))
            st->max_attempts = v, st->attempts_set = 1;
        else if (!strcmp(p, "max_concurrent"))
            st->max_concurrent = (long)v;
        else
            st->max_idle_conns = v;
        return 0;
    }
    if (!strcmp(p, "health_check"))
        return parse_health(d, st);
    if (!strcmp(p, "force_tcp"))
        return no_arg(d, &st->force_tcp);
    if (!strcmp(p, "prefer_udp"))
        return no_arg(d, &st->prefer_udp);
    if (!strcmp(p, "next_on_nodata"))
        return no_arg(d, &st->next_on_nodata);
    if (!strcmp(p, "failfast_all_unhealthy_upstreams"))
        return no_arg(d, &st->failfast);
    if (!strcmp(p, "expire"))
        return parse_duration_opt(d, &st->expire, 0);
    if (!strcmp(p, "max_age"))
        return parse_duration_opt(d, &dummy, 0);
    if (!strcmp(p, "read_timeout"))
        return parse_duration_opt(d, &st->read_timeout, 1);
    if (!strcmp(p, "policy")) {
        if (one_arg(d, &a) < 0)
            return -1;
        if (!strcmp(a, "random"))
            st->policy = FWD_POL_RANDOM;
        else if (!strcmp(a, "round_robin"))
            st->policy = FWD_POL_ROUND_ROBIN;
        else if (!strcmp(a, "sequential"))
            st->policy = FWD_POL_SEQUENTIAL;
        else
            return cf_err(d, "unknown policy '%s'", a);
        return 0;
    }
    if (!strcmp(p, "next"))
        return parse_rcodes(d, st->next_rc, &st->nnext, 0);
    if (!strcmp(p, "failover"))
        return parse_rcodes(d, st->failover_rc, &st->nfailover, 1);
    if (!strcmp(p, "source_address"))
        return parse_source(d, st);
    if (!strcmp(p, "add_client_subnet"))
        return parse_add_ecs(d, st);
    if (!strcmp(p, "tls"))
        return parse_tls(d, st);
    if (!strcmp(p, "tls_servername")) {
        if (one_arg(d, &a) < 0)
            return -1;
        if (strlen(a) >= sizeof st->tls_servername)
            return cf_err(d, "plugin/forward: TLS server name too long: %s", a);
        snprintf(st->tls_servername, sizeof st->tls_servername, "%s", a);
        return 0;
    }
    if (!strcmp(p, "doh_method") || !strcmp(p, "resolver"))
        return cf_err(d, "plugin/forward: '%s' is not supported by topodns (plain DNS upstreams only)", p);
    return cf_err(d, "unknown property '%s'", p);
}

/* ---- stanzas ---------------------------------------------------------- */

static fwd_stanza *stanza_new(void)
{
    fwd_stanza *st = calloc(1, sizeof *st);
    if (!st)
        return NULL;
    st->max_fails = 2;
    st->expire = 10;
    st->read_timeout = 2;
    st->hc_interval = 0.5;
    st->hc_rd = 1;
    st->policy = FWD_POL_RANDOM;
    dname_from_str(st->hc_domain, ".");
    pthread_mutex_init(&st->mu, NULL);
    return st;
}

static void stanza_free(fwd_stanza *st)
{
    if (!st)
        return;
    fwd_health_stop(st);
    assert(atomic_load(&st->loops) == NULL);   /* the owner ran fwd_loops_free */
    fwd_tls_ctx_free(st->tls_ctx);
    pthread_mutex_destroy(&st->mu);
    free(st->except);
    free(st);
}

static int parse_from(cf_disp *d, fwd_stanza *st, const char *from)
{
    char (*z)[DNAME_STR_MAX];
    const char *f = strncasecmp(from, "dns://", 6) == 0 ? from + 6 : from;
    int nz = zone_from_key(f, &z);
    if (nz < 1)
        return cf_err(d, "plugin/forward: unable to normalize '%s'", from);
    if (nz > 1)
        log_warning("plugin/forward: Unsupported CIDR notation: '%s' expands to multiple zones. Using only '%s'.",
                    from, z[0]);
    dname_from_str(st->from, z[0]);
    free(z);
    return 0;
}

static int parse_stanza(cf_disp *d, forward *f)
{
    fwd_stanza *st = stanza_new();
    if (!st)
        return cf_err(d, "plugin/forward: out of memory");
    if (VEC_RESIZE(f->st, f->nst + 1) != 0) {
        stanza_free(st);
        return cf_err(d, "plugin/forward: out of memory");
    }
    f->st[f->nst++] = st;
    const char *args[64];
    int n = cf_remaining_args(d, args, 64);
    if (n < 2)
        return cf_arg_err(d);
    if (parse_from(d, st, args[0]) < 0)
        return -1;
    while (cf_next_block(d))
        if (parse_prop(d, st) < 0)
            return -1;
    for (int i = 1; i < n && i < 64; i++)
        if (fwd_add_to(d, st, args[i]) < 0)
            return -1;
    if (st->nups > FWD_MAX_UP)
        return cf_err(d, "plugin/forward: more than %d TOs configured: %zu", FWD_MAX_UP, st->nups);
    if (st->nups == 0)
        return cf_err(d, "plugin/forward: no valid upstream addresses found");
    int any_tls = 0;
    for (size_t i = 0; i < st->nups; i++)
        any_tls |= st->ups[i].tls;
    if (any_tls && !st->tls_ctx) {  /* no `tls` line: the system's trust store */
        char err[512];
        if (!(st->tls_ctx = fwd_tls_ctx(NULL, NULL, NULL, err, sizeof err)))
            return cf_err(d, "plugin/forward: %s", err);
    }
    if (!st->attempts_set)
        st->max_attempts = 2 * st->nups;
    return 0;
}

int fwd_parse(cf_disp *d, forward *f)
{
    while (cf_next(d))
        if (parse_stanza(d, f) < 0)
            return -1;
    return 0;
}

void fwd_free(forward *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nst; i++)
        stanza_free(f->st[i]);
    free(f->st);
    free(f);
}
