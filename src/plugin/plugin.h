/*
 * plugin.h — what a plugin is, and how the server instantiates it.
 *
 * A plugin is a plugin_def (one per folder under src/plugin/, exported as
 * `plugin_<name>`). For every server block that uses its directive the server
 * calls setup() once with a dispenser over all occurrences of the directive in
 * that block; setup parses them and returns an instance. After every block
 * has been set up, start() runs for each instance (bind HTTP listeners, start
 * timers); stop() and destroy() undo it at shutdown or reload.
 *
 * Instances with a serve() function form the block's chain, ordered by
 * src/plugin/order.h — the one place the order is declared — not by the order
 * in the Corefile. ready() lets the ready plugin ask whether the instance is
 * ready (NULL: it does not report).
 *
 * A setup error is reported through the dispenser (cf_err) and stops startup
 * with "file:line: message near 'token'".
 */
#ifndef TOPODNS_PLUGIN_H
#define TOPODNS_PLUGIN_H

#include <stddef.h>
#include "../corefile/corefile.h"
#include "../server/request.h"

#define PLUGIN_ONCE 0x1          /* at most one occurrence per server block */

struct instance;
struct server_block;

typedef struct setup_ctx {
    struct instance *ins;            /* the configuration being built */
    struct server_block *blk;        /* the block being set up */
    const char *corefile;            /* path of the Corefile being loaded */
} setup_ctx;

typedef struct plugin_def {
    const char *name;
    unsigned flags;
    int (*setup)(cf_disp *d, setup_ctx *ctx, void **inst);
    int (*start)(void *inst, struct instance *ins, char *err, size_t errlen);
    void (*stop)(void *inst);
    void (*destroy)(void *inst);
    int (*serve)(const struct handler *h, dns_req *r);
    int (*ready)(void *inst);
} plugin_def;

typedef struct handler {
    const plugin_def *def;
    void *inst;
    const struct handler *next;      /* next in the chain, NULL at the end */
} handler;

/* Every directive name known to the order table (implemented or not), its
 * position (-1 when unknown), and the plugin_def when topodns implements it. */
int plugin_order(const char *name);
const plugin_def *plugin_lookup(const char *name);
/* Implemented plugins in chain order, for -plugins. */
size_t plugin_list(const plugin_def **out, size_t max);

#endif
