/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bufsize — caps the EDNS UDP payload size of incoming queries.
 *
 *   bufsize [SIZE]        SIZE 512..4096, default 1232 (DNS Flag Day 2020)
 *
 * A query whose OPT record advertises more than SIZE is changed, before the
 * rest of the chain sees it, to advertise SIZE (req_set_query_udp_size: the
 * parsed query and the octets forward sends upstream), as CoreDNS's bufsize
 * changes the request it passes on. The reply is then cut to SIZE over UDP
 * and its OPT record carries SIZE. Queries without EDNS, or advertising
 * SIZE or less, are passed on untouched.
 *
 * The instance (the size) is written by setup on the loading thread, read
 * by workers, freed by destroy.
 */
#include <stdlib.h>
#include <string.h>
#include "server/plugin.h"

#define BUFSIZE_DEFAULT 1232
#define BUFSIZE_MIN 512
#define BUFSIZE_MAX 4096

typedef struct bufsize {
    uint16_t size;
} bufsize;

/* Atoi as CoreDNS's strconv.Atoi: an optional sign and decimal digits. */
static int parse_size(const char *s, long *out)
{
    char *end;
    if (!*s || strchr(" \t", *s))
        return -1;
    long v = strtol(s, &end, 10);
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static int bufsize_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    long size = BUFSIZE_DEFAULT;
    while (cf_next(d)) {
        const char *args[2];
        int n = cf_remaining_args(d, args, 2);
        if (n > 1)
            return cf_arg_err(d);
        if (n == 1 && (parse_size(args[0], &size) < 0 || size < BUFSIZE_MIN ||
                       size > BUFSIZE_MAX))
            return cf_arg_err(d);
        if (cf_next_block(d))
            return cf_prop_err(d);
    }
    bufsize *b = malloc(sizeof *b);
    if (!b)
        return cf_err(d, "plugin/bufsize: out of memory");
    b->size = (uint16_t)size;
    *inst = b;
    return 0;
}

static void bufsize_destroy(void *inst)
{
    free(inst);
}

static int bufsize_serve(const handler *h, dns_req *r)
{
    const bufsize *b = h->inst;
    if (r->q.edns.present && r->q.edns.udp_size > b->size)
        req_set_query_udp_size(r, b->size);
    return plugin_next(h, r);
}

const plugin_def plugin_bufsize = {
    .name = "bufsize",
    .flags = PLUGIN_ONCE,
    .setup = bufsize_setup,
    .destroy = bufsize_destroy,
    .serve = bufsize_serve,
};
