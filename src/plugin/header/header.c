/* SPDX-License-Identifier: Apache-2.0 */
/*
 * header — sets or clears header flags of queries and replies.
 *
 *   header {
 *       query|response set|clear FLAG...        FLAG: aa, ra, rd
 *   }
 *
 * As CoreDNS's header: query rules change the query before the plugins
 * after this one see it (req_set_query_flags, so a forwarded query carries
 * the change too); response rules change the flags of the reply whatever
 * plugin after this one writes it (a write hook). Rules apply in the order
 * written, so the last one for a flag wins. Bare error replies the server
 * writes itself (SERVFAIL when no plugin answered, REFUSED outside every
 * zone) are not changed, as in CoreDNS.
 *
 * Only the first occurrence of the directive that holds rules counts, as in
 * CoreDNS; one without any rule is an argument error.
 *
 * The instance (rules) is written by setup on the loading thread, read by
 * workers, freed by destroy.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "server/plugin.h"

#define HDR_MAX_RULES 64

typedef struct hdr_rule {
    uint16_t flag;                  /* F_AA, F_RA, F_RD */
    int set;
} hdr_rule;

typedef struct header {
    hdr_rule query[HDR_MAX_RULES], response[HDR_MAX_RULES];
    size_t nquery, nresponse;
} header;

static uint16_t flag_bit(const char *s)
{
    return !strcasecmp(s, "aa") ? F_AA : !strcasecmp(s, "ra") ? F_RA
         : !strcasecmp(s, "rd") ? F_RD : 0;
}

/* SELECTOR ACTION FLAG... : one line of the block. */
static int parse_line(cf_disp *d, header *h)
{
    const char *sel = cf_val(d);
    int is_query = !strcasecmp(sel, "query");
    if (!is_query && strcasecmp(sel, "response"))
        return cf_err(d, "plugin/header: setting up rule: invalid selector=%s should be query "
                         "or response", sel);
    const char *args[HDR_MAX_RULES + 1];
    int n = cf_remaining_args(d, args, HDR_MAX_RULES + 1);
    if (n == 0)
        return cf_err(d, "plugin/header: setting up rule: no flag action provided");
    if (n == 1)
        return cf_err(d, "plugin/header: setting up rule: invalid length for flags, at least one "
                         "should be provided");
    int set = !strcasecmp(args[0], "set");
    if (!set && strcasecmp(args[0], "clear"))
        return cf_err(d, "plugin/header: setting up rule: unknown flag action=%s, should be set "
                         "or clear", args[0]);
    hdr_rule *rules = is_query ? h->query : h->response;
    size_t *nr = is_query ? &h->nquery : &h->nresponse;
    for (int i = 1; i < n; i++) {
        uint16_t bit = i <= HDR_MAX_RULES ? flag_bit(args[i]) : 0;
        if (!bit)
            return cf_err(d, "plugin/header: setting up rule: unknown/unsupported flag=%s",
                          i <= HDR_MAX_RULES ? args[i] : "");
        if (*nr >= HDR_MAX_RULES)
            return cf_err(d, "plugin/header: more than %d rules", HDR_MAX_RULES);
        rules[(*nr)++] = (hdr_rule){ .flag = bit, .set = set };
    }
    return 0;
}

static int header_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    header *h = calloc(1, sizeof *h);
    if (!h)
        return cf_err(d, "plugin/header: out of memory");
    while (cf_next(d) && h->nquery + h->nresponse == 0) {
        if (cf_next_arg(d)) {
            free(h);
            return cf_arg_err(d);
        }
        while (cf_next_block(d))
            if (parse_line(d, h) < 0) {
                free(h);
                return -1;
            }
    }
    if (h->nquery + h->nresponse == 0) {
        free(h);
        return cf_arg_err(d);
    }
    *inst = h;
    return 0;
}

static void header_destroy(void *inst)
{
    free(inst);
}

static uint16_t apply(uint16_t flags, const hdr_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++)
        flags = rules[i].set ? (uint16_t)(flags | rules[i].flag)
                             : (uint16_t)(flags & ~rules[i].flag);
    return flags;
}

static void header_write(dns_req *r, void *data)
{
    const header *h = data;
    r->resp.flags = apply(r->resp.flags, h->response, h->nresponse);
}

static int header_serve(const handler *hd, dns_req *r)
{
    const header *h = hd->inst;
    if (h->nquery)
        req_set_query_flags(r, apply(r->q.flags, h->query, h->nquery));
    if (h->nresponse)
        req_on_write(r, header_write, hd->inst);
    return plugin_next(hd, r);
}

const plugin_def plugin_header = {
    .name = "header",
    .setup = header_setup,
    .destroy = header_destroy,
    .serve = header_serve,
};
