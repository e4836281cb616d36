/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timeouts — the TCP deadlines of a server block's listeners, in CoreDNS's
 * syntax:
 *
 *   timeouts {
 *       read DURATION
 *       write DURATION
 *       idle DURATION
 *       maxtcpqueries MAXIMUM
 *   }
 *
 * Not in the query chain: setup() writes the block's tcp_timeouts
 * (src/server/server.h, which says what each value means), the server
 * merges the blocks listening on one address and port, and its TCP code
 * applies them. As in CoreDNS, a bare number is seconds, every duration lies
 * between 1 second and 24 hours, every occurrence in the block is read (a
 * later value wins), and a block that sets nothing is an error.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/gofmt.h"
#include "server/plugin.h"
#include "server/server.h"

#define NS_PER_S 1000000000LL
#define TIMEOUT_MIN_NS NS_PER_S
#define TIMEOUT_MAX_NS (24 * 3600 * NS_PER_S)

/* Go's strconv.Atoi: an optional sign and decimal digits, within int64.
 * 0, or -1 with Go's error text in err. */
static int go_atoi(const char *s, long long *out, char *err, size_t errlen)
{
    const char *p = s + (*s == '+' || *s == '-');
    if (!*p || p[strspn(p, "0123456789")] != '\0') {
        snprintf(err, errlen, "strconv.Atoi: parsing \"%s\": invalid syntax", s);
        return -1;
    }
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) {
        snprintf(err, errlen, "strconv.Atoi: parsing \"%s\": value out of range", s);
        return -1;
    }
    *out = v;
    return 0;
}

/* CoreDNS's duration argument: a bare integer counts seconds, anything else
 * is Go's time.ParseDuration; then the 1 s .. 24 h bounds. */
static int parse_timeout(cf_disp *d, const char *arg, int64_t *ns)
{
    char buf[64], err[128];
    long long n;
    if (go_atoi(arg, &n, err, sizeof err) == 0) {
        snprintf(buf, sizeof buf, "%.60ss", arg);
        arg = buf;
    }
    if (cf_go_duration(arg, ns, err, sizeof err) < 0)
        return cf_err(d, "plugin/timeouts: failed to parse duration '%s'", arg);
    if (*ns < TIMEOUT_MIN_NS || *ns > TIMEOUT_MAX_NS) {
        char txt[32];
        go_duration_str(*ns, txt, sizeof txt);
        return cf_err(d, "plugin/timeouts: timeout provided '%s' needs to be between 1 second "
                      "and 24 hours", txt);
    }
    return 0;
}

/* -1 (unlimited) or a positive count; larger than an int means unlimited. */
static int parse_max_queries(cf_disp *d, const char *arg, int *out)
{
    char err[128];
    long long n;
    if (go_atoi(arg, &n, err, sizeof err) < 0)
        return cf_err(d, "plugin/timeouts: invalid value for maxtcpqueries '%s': %s", arg, err);
    if (n == 0 || n < -1)
        return cf_err(d, "plugin/timeouts: maxtcpqueries provided '%lld' needs to be -1 "
                      "(unlimited) or a positive integer", n);
    *out = n > INT_MAX ? -1 : (int)n;
    return 0;
}

/* One line of the block: "NAME VALUE", in CoreDNS's order of checks (the
 * argument count, then the value, then the name). */
static int parse_option(cf_disp *d, tcp_timeouts *t)
{
    char name[32];
    snprintf(name, sizeof name, "%s", cf_val(d));
    const char *args[2];
    if (cf_remaining_args(d, args, 2) != 1)
        return cf_err(d, "plugin/timeouts: Wrong argument count or unexpected line ending");
    if (strcmp(name, "maxtcpqueries") == 0)
        return parse_max_queries(d, args[0], &t->max_queries);
    int64_t ns;
    if (parse_timeout(d, args[0], &ns) < 0)
        return -1;
    if (strcmp(name, "read") == 0)
        t->read_ns = ns;
    else if (strcmp(name, "write") == 0)
        t->write_ns = ns;
    else if (strcmp(name, "idle") == 0)
        t->idle_ns = ns;
    else
        return cf_err(d, "plugin/timeouts: unknown option: '%s'", name);
    return 0;
}

static int timeouts_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    tcp_timeouts t = ctx->blk->timeouts;
    while (cf_next(d)) {
        if (cf_next_arg(d))
            return cf_err(d, "plugin/timeouts: Wrong argument count or unexpected line ending");
        int n = 0;
        for (; cf_next_block(d); n++)
            if (parse_option(d, &t) < 0)
                return -1;
        if (n == 0)
            return cf_err(d, "plugin/timeouts: timeouts block with no timeouts specified");
    }
    ctx->blk->timeouts = t;
    *inst = NULL;
    return 0;
}

const plugin_def plugin_timeouts = {
    .name = "timeouts",
    .setup = timeouts_setup,
};
