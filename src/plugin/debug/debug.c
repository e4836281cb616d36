/* SPDX-License-Identifier: Apache-2.0 */
/*
 * debug — debug logging for the configuration.
 *
 *   debug
 *
 * Turns the instance's debug switch on (instance_set_debug, from setup on
 * the loading thread; the server reads it once serving): the server core
 * logs a hex dump of every packet it cannot take — malformed (answered
 * FORMERR, or dropped when not even the header is readable) or a response
 * sent to us — and plugins write their DEBUG lines (req_debug()). Not in the
 * query chain; no instance state.
 */
#include "server/plugin.h"
#include "server/server.h"

static int debug_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    while (cf_next(d))
        if (cf_next_arg(d) || cf_next_block(d))
            return cf_arg_err(d);
    if (ctx)
        instance_set_debug(ctx->ins);
    *inst = NULL;
    return 0;
}

const plugin_def plugin_debug = {
    .name = "debug",
    .setup = debug_setup,
};
