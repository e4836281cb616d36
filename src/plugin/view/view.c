/* SPDX-License-Identifier: Apache-2.0 */
/*
 * view — route a query to this server block only when expressions hold
 * (CoreDNS's view plugin; the expression language is expr.h's).
 *
 *   view NAME {
 *       expr EXPRESSION
 *   }
 *
 * setup() compiles every `expr` of every `view` occurrence of the block
 * (all must hold) and installs the block's routing filter
 * (block_set_filter, server.h): the server asks it, on the worker that
 * received the query, before the block's chain runs; blocks with a view
 * may share a zone and port with each other and with one block without.
 * An expression the language does not cover stops the load with the
 * Corefile's file:line. The instance also publishes `view/name` as
 * metadata for requests its block serves. It is not in the chain.
 *
 * Ownership: the instance (name, compiled expressions) belongs to the
 * block's handler and is freed by destroy() after the workers stopped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/view/expr.h"
#include "server/plugin.h"
#include "server/server.h"
#include "common/vec.h"

typedef struct view {
    char *name;
    expr **exprs;
    size_t nexprs;
} view;

static void view_destroy(void *inst)
{
    view *v = inst;
    if (!v)
        return;
    for (size_t i = 0; i < v->nexprs; i++)
        expr_free(v->exprs[i]);
    free(v->exprs);
    free(v->name);
    free(v);
}

static int view_filter(void *data, const dns_req *r)
{
    const view *v = data;
    for (size_t i = 0; i < v->nexprs; i++)
        if (!expr_eval(v->exprs[i], r))
            return 0;
    return 1;
}

/* The rest of the line: expr's tokens joined by one space each (the
 * Corefile lexer splits the expression at blanks; quotes it keeps). */
static int rest_of_line(cf_disp *d, char *out, size_t cap)
{
    size_t n = 0;
    int any = 0;
    while (cf_next_arg(d)) {
        const char *t = cf_val(d);
        int w = snprintf(out + n, cap - n, "%s%s", any ? " " : "", t);
        if (w < 0 || (size_t)w >= cap - n)
            return -1;
        n += (size_t)w;
        any = 1;
    }
    return any ? 0 : -1;
}

static int view_parse(cf_disp *d, setup_ctx *ctx, view *v)
{
    while (cf_next(d)) {
        if (!cf_next_arg(d))
            return cf_arg_err(d);
        if (!v->name && !(v->name = strdup(cf_val(d))))
            return cf_err(d, "out of memory");
        if (cf_next_arg(d))
            return cf_arg_err(d);
        while (cf_next_block(d)) {
            if (strcmp(cf_val(d), "expr") != 0)
                return cf_prop_err(d);
            char text[4096], why[512];
            if (rest_of_line(d, text, sizeof text) < 0)
                return cf_arg_err(d);
            expr *e = expr_compile(text, why, sizeof why);
            if (!e)
                return cf_err(d, "plugin/view: %s", why);
            if (VEC_RESIZE(v->exprs, v->nexprs + 1) < 0) {
                expr_free(e);
                return cf_err(d, "out of memory");
            }
            v->exprs[v->nexprs++] = e;
        }
    }
    if (v->nexprs && block_set_filter(ctx->blk, view_filter, v, v->name) < 0)
        return cf_err(d, "plugin/view: the block has a routing filter already");
    return 0;
}

static int view_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    view *v = calloc(1, sizeof *v);
    if (!v)
        return cf_err(d, "out of memory");
    if (view_parse(d, ctx, v) < 0) {
        view_destroy(v);
        return -1;
    }
    *inst = v;
    return 0;
}

static const char *view_meta(const dns_req *r, const char *key, const void *data, char *buf,
                             size_t cap)
{
    snprintf(buf, cap, "%s", ((const view *)data)->name);
    return buf;
}

static void view_metadata(const handler *h, dns_req *r)
{
    req_meta_set(r, "view/name", view_meta, h->inst);
}

const plugin_def plugin_view = {
    .name = "view",
    .setup = view_setup,
    .destroy = view_destroy,
    .metadata = view_metadata,
};
