/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metadata — collects request metadata from the plugins that provide it.
 *
 *   metadata [ZONES...]        default: the server block's zones
 *
 * First in the chain (only `root` comes before it in plugin.cfg), so it
 * runs before every other plugin of the block, as CoreDNS's server calls
 * the metadata collector before the chain: it turns the request's store on
 * (req_meta_enable; plugins may then set values while serving, as the log
 * plugin's log/type and log/class), and for a query whose name lies in
 * ZONES, every plugin instance of the block with a metadata() callback
 * (plugin_def.metadata: the kubernetes plugin's kubernetes/... labels)
 * registers its values in the request's store (req_meta_set); then the
 * query goes on. Other plugins read the values (req_meta_get): the log
 * plugin's {/LABEL} placeholders. Without this plugin, no values exist and
 * {/LABEL} prints "-".
 *
 * The instance (zones) is written by setup on the loading thread, read by
 * workers, freed by destroy.
 */
#include <stdlib.h>
#include <string.h>
#include "server/plugin.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

typedef struct metadata {
    uint8_t (*zones)[DNAME_MAX];
    size_t nzones;
} metadata;

static void metadata_destroy(void *p)
{
    metadata *m = p;
    if (m)
        free(m->zones);
    free(m);
}

static int add_zone(cf_disp *d, metadata *m, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int k = zone_from_key(text, &z);
    if (k < 0)
        return cf_err(d, "plugin/metadata: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(m->zones, m->nzones + (size_t)k) < 0) {
        free(z);
        return cf_err(d, "plugin/metadata: out of memory");
    }
    for (int i = 0; i < k; i++)
        dname_from_str(m->zones[m->nzones++], z[i]);
    free(z);
    return 0;
}

/* One occurrence, its zones, and nothing else (CoreDNS: an argument error
 * for a block or a second occurrence). */
static int parse(cf_disp *d, const setup_ctx *ctx, metadata *m)
{
    const char *args[256];
    cf_next(d);
    int n = cf_remaining_args(d, args, 256);
    if (n > 256)
        return cf_err(d, "plugin/metadata: too many zones");
    for (int i = 0; i < n; i++)
        if (add_zone(d, m, args[i]) < 0)
            return -1;
    for (size_t i = 0; n == 0 && ctx && i < ctx->blk->nkeys; i++)
        if (add_zone(d, m, ctx->blk->keys[i].zone) < 0)
            return -1;
    if (cf_next_block(d) || cf_next(d))
        return cf_arg_err(d);
    return 0;
}

static int metadata_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    metadata *m = calloc(1, sizeof *m);
    if (!m)
        return cf_err(d, "plugin/metadata: out of memory");
    if (parse(d, ctx, m) < 0) {
        metadata_destroy(m);
        return -1;
    }
    *inst = m;
    return 0;
}

static int in_zones(const metadata *m, const uint8_t *name)
{
    for (size_t i = 0; i < m->nzones; i++)
        if (dname_is_sub(name, m->zones[i]))
            return 1;
    return 0;
}

static int metadata_serve(const handler *h, dns_req *r)
{
    const metadata *m = h->inst;
    const server_block *b = r->block;
    req_meta_enable(r);
    if (b && in_zones(m, r->q.qname))
        for (size_t i = 0; i < b->nhandlers; i++)
            if (b->handlers[i].def->metadata)
                b->handlers[i].def->metadata(&b->handlers[i], r);
    return plugin_next(h, r);
}

const plugin_def plugin_metadata = {
    .name = "metadata",
    .setup = metadata_setup,
    .destroy = metadata_destroy,
    .serve = metadata_serve,
};
