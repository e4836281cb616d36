/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plugin.h — what a plugin is, and how the server instantiates it.
 *
 * A plugin is a plugin_def (one per folder under src/plugin/, exported as
 * `plugin_<name>` and listed in the composition root's table, src/plugins.c,
 * which main() hands to the server). The server knows plugins only through
 * this interface and the chain order of names (order.h).
 *
 * Threads and lifetime:
 *   - setup(), start(), stop() and destroy() run on the thread that loads
 *     and starts the configuration (the main thread; a reload builds a new
 *     instance there beside the running one, so two instances of the same
 *     plugin exist for a while: plugin instances share no mutable state).
 *     For every server block that uses its directive, setup() runs once with
 *     a dispenser over all occurrences of the directive in that block and
 *     returns an instance. After every block has been set up, start() runs
 *     for each instance in chain order (bind HTTP listeners, start threads);
 *     stop() and destroy() undo it, in reverse order, at shutdown or after a
 *     reload.
 *   - serve() runs on a DNS worker thread: the one that received the query,
 *     or, for an internal request (req_new_internal), the thread driving that
 *     request's event base (a worker, for requests a plugin starts while
 *     serving). It must never block; see request.h.
 *   - ready() runs on the HTTP thread of the ready plugin.
 *   - metadata() runs on the worker serving a request, when the metadata
 *     plugin of its block collects the request's metadata (request.h).
 *
 * Instances with a serve() function form the block's chain, ordered by
 * order.h, not by the order in the Corefile. ready() lets the ready plugin
 * ask whether the instance is ready (NULL: it does not report).
 *
 * A setup error is reported through the dispenser (cf_err) and stops startup
 * with "file:line: message near 'token'".
 */
#ifndef TOPODNS_PLUGIN_H
#define TOPODNS_PLUGIN_H

#include <stddef.h>
#include "corefile/corefile.h"
#include "server/request.h"

#define PLUGIN_ONCE 0x1          /* at most one occurrence per server block */
/* Queries of every class, not only IN, reach the chains of the server
 * blocks that use this plugin's directive, and of every block sharing
 * their listen address and port (CoreDNS's EnableChaos: chaos, forward). */
#define PLUGIN_ANY_CLASS 0x2

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
    /* A metadata provider: registers its values for r with req_meta_set()
     * when the block's metadata plugin collects them, before the chain
     * runs (worker thread; quick, never blocking). NULL: provides none. */
    void (*metadata)(const struct handler *h, dns_req *r);
} plugin_def;

typedef struct handler {
    const plugin_def *def;
    void *inst;
    const struct handler *next;      /* next in the chain, NULL at the end */
} handler;

/* Position of a directive name in the chain order (order.h); -1 for a name
 * that no CoreDNS or topodns plugin has. */
int plugin_order(const char *name);
/* The plugin of that name in a NULL-terminated table, or NULL. */
const plugin_def *plugin_find(const plugin_def *const *table, const char *name);

#endif
