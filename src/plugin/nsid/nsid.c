/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nsid — the EDNS Name Server Identifier (RFC 5001) on replies.
 *
 *   nsid [DATA...]        DATA: the identifier, several words joined with
 *                         spaces; default the host name
 *
 * A query whose OPT record carries the NSID option gets a write hook
 * (req_on_write): whatever plugin after this one writes the reply, the
 * hook puts one NSID option holding DATA in the reply's EDNS options
 * (replacing any it has, e.g. an upstream's), making it a reply with an OPT
 * record of its own (so the server echoes none of the query's options, as
 * CoreDNS). The server echoes EDNS only to queries that had it, so only
 * those see the option; bare error replies
 * the server writes itself do not pass through hooks, as in CoreDNS.
 *
 * The instance (DATA) is written by setup on the loading thread, read by
 * workers, freed by destroy.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "server/plugin.h"

#define NSID_MAX (EDNS_OPTS_MAX - 4)

typedef struct nsid {
    uint16_t len;
    char data[NSID_MAX + 1];
} nsid;

/* DATA: every argument joined with single spaces. */
static int join_args(cf_disp *d, nsid *n)
{
    const char *args[64];
    int k = cf_remaining_args(d, args, 64);
    if (k == 0)
        return 0;
    if (k > 64)
        return cf_err(d, "plugin/nsid: too many words");
    size_t len = 0;
    for (int i = 0; i < k; i++) {
        size_t l = strlen(args[i]);
        if (len + (i > 0) + l > NSID_MAX)
            return cf_err(d, "plugin/nsid: more than %d octets of data", NSID_MAX);
        if (i > 0)
            n->data[len++] = ' ';
        memcpy(n->data + len, args[i], l);
        len += l;
    }
    n->len = (uint16_t)len;
    return 0;
}

static int nsid_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    nsid *n = calloc(1, sizeof *n);
    if (!n)
        return cf_err(d, "plugin/nsid: out of memory");
    if (gethostname(n->data, sizeof n->data - 1) < 0 || !n->data[0])
        strcpy(n->data, "localhost");
    n->len = (uint16_t)strlen(n->data);
    while (cf_next(d)) {
        if (join_args(d, n) < 0 || (cf_next_block(d) && cf_prop_err(d) < 0)) {
            free(n);
            return -1;
        }
    }
    *inst = n;
    return 0;
}

static void nsid_destroy(void *inst)
{
    free(inst);
}

static void nsid_write(dns_req *r, void *data)
{
    const nsid *n = data;
    r->resp.edns.present = 1;       /* an OPT of its own, as CoreDNS's SetEdns0 */
    edns_opt_remove(&r->resp.edns, EDNS_OPT_NSID);
    edns_opt_add(&r->resp.edns, EDNS_OPT_NSID, n->data, n->len);
}

static int nsid_serve(const handler *h, dns_req *r)
{
    uint16_t len;
    if (r->q.edns.present && edns_opt_find(&r->q.edns, EDNS_OPT_NSID, &len))
        req_on_write(r, nsid_write, h->inst);
    return plugin_next(h, r);
}

const plugin_def plugin_nsid = {
    .name = "nsid",
    .flags = PLUGIN_ONCE,
    .setup = nsid_setup,
    .destroy = nsid_destroy,
    .serve = nsid_serve,
};
