/* SPDX-License-Identifier: Apache-2.0 */
/*
 * autopath — server-side search path completion (CoreDNS's autopath).
 *
 *   autopath [ZONE...] RESOLV-CONF     the search domains of that file
 *   autopath [ZONE...] @PLUGIN         the client's search path, per query,
 *                                      from PLUGIN (@kubernetes)
 *
 * For a query in ZONE (default: the block's zones) whose name lies under
 * the first element of the search list (the client pod's
 * <ns>.svc.<zone> with @kubernetes), the part in front of that element is
 * the name the client asked for; autopath tries it with every element
 * appended in turn (the first try is the query itself, the last the bare
 * name), each one a sub-request through the rest of this block's chain
 * (req_new_sub/req_start_next, src/server/request.h: CoreDNS calls its
 * next handler). The first reply that a plugin wrote and that is not
 * NXDOMAIN is the answer: with a CNAME from the asked name to the name
 * found in front of it (none when the query itself answered), counted in
 * coredns_autopath_success_total{server}. When every try is NXDOMAIN the
 * query's own reply is sent as it came; when a try fails with an error
 * the query fails with it, as in CoreDNS.
 *
 * The tries run one after another, asynchronously: a sub-request answered
 * at once (kubernetes, file, cache) is handled inside the loop of
 * ap_step(); one that waits (forward) returns REQ_ASYNC, and its done hook
 * (ap_done) continues the loop from the worker's event loop. The query
 * stays alive until req_finish(). Nothing blocks.
 *
 * Memory: the instance (zones, the file's list, the source found at start)
 * lives from setup to destroy; each autopathed query has an apwait on the
 * heap (its list and the replies kept), freed when it is answered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "plugin/autopath/autopath.h"
#include "runtime/metrics.h"
#include "server/plugin.h"
#include "server/server.h"
#include "server/zone.h"
#include "common/vec.h"

#define MAX_ARGS 64

typedef struct ap_inst {
    uint8_t (*zones)[DNAME_MAX];
    size_t nzones;
    autopath_list file;              /* RESOLV-CONF's list (n = 0: none) */
    char *plugin;                    /* @PLUGIN, or NULL */
    const autopath_source *src;      /* PLUGIN's source, found at start */
    server_block *blk;
    metric_family *m_success;
} ap_inst;

/* One query being autopathed. */
typedef struct apwait {
    dns_req *r;
    const handler *h;
    ap_inst *a;
    autopath_list list;
    int base;                        /* labels of the asked name */
    int i;                           /* next element to try */
    int pending, starting;           /* a try is running / inside req_start_next */
    int failed, fail_rc;             /* a try failed with an error */
    int first_rc, first_wrote;       /* the query's own try */
    dns_msg first;
    int found;                       /* a try answered (not NXDOMAIN) */
    dns_msg reply;
    uint8_t topo_dep, topo_ecs;      /* what the found answer depended on */
} apwait;

static void ap_free(apwait *w)
{
    msg_free(&w->first);
    msg_free(&w->reply);
    free(w);
}

/* ---- one try -------------------------------------------------------------------- */

static int ap_step(apwait *w);

/* A try finished: keep what the decision needs (the sub-request is freed
 * right after), then go on unless ap_step's loop is waiting for it. */
static void ap_done(dns_req *sub, int rcode, void *data)
{
    apwait *w = data;
    int wrote = sub->written && sub->writer && sub->writer[0];
    w->pending = 0;
    if (sub->err[0]) {
        req_error(w->r, sub->err_plugin ? sub->err_plugin : "autopath", "%s", sub->err);
        w->failed = 1;
        w->fail_rc = rcode_client_write(rcode) ? RC_SERVFAIL : rcode;
    } else {
        if (w->i == 1) {
            w->first_rc = rcode;
            w->first_wrote = wrote && msg_copy(&w->first, &sub->resp) == 0;
        }
        if (wrote && sub->resp.rcode != RC_NXDOMAIN && msg_copy(&w->reply, &sub->resp) == 0) {
            w->found = 1;
            w->topo_dep = sub->topo_dep;
            w->topo_ecs = sub->topo_ecs;
        }
    }
    if (w->starting)
        return;
    dns_req *r = w->r;
    int rc = ap_step(w);
    if (rc != REQ_ASYNC) {
        ap_free(w);
        req_finish(r, rc);
    }
}

/* The query with its name replaced by the expansion for element i. */
static dns_req *ap_sub(apwait *w, int i)
{
    dns_req *r = w->r;
    uint8_t name[DNAME_MAX], wire[4096];
    if (ap_expand(r->q.qname, w->base, w->list.name[i], name) < 0)
        return NULL;
    dns_msg m;
    msg_init(&m);
    int len = -1;
    if (msg_copy(&m, &r->q) == 0) {
        memcpy(m.qname, name, dname_len(name));
        len = msg_encode(&m, wire, sizeof wire, sizeof wire, 0);
    }
    msg_free(&m);
    return len < 0 ? NULL : req_new_sub(r, wire, (size_t)len);
}

/* ---- the answer ------------------------------------------------------------------ */

/* Send a kept reply as the answer to the query (the question as asked). */
static int ap_write(apwait *w, const dns_msg *m, int cname)
{
    dns_req *r = w->r;
    if (msg_copy(&r->resp, m) < 0) {
        req_error(r, "autopath", "plugin/autopath: out of memory");
        return RC_SERVFAIL;
    }
    r->resp.id = r->q.id;
    memcpy(r->resp.qname, r->q.qname, dname_len(r->q.qname));
    if (cname && ap_cnamer(&r->resp, r->q.qname) < 0) {
        req_error(r, "autopath", "plugin/autopath: out of memory");
        return RC_SERVFAIL;
    }
    return req_write(r, w->h);
}

static int ap_answer(apwait *w)
{
    dns_req *r = w->r;
    if (w->failed)
        return w->fail_rc;
    if (w->found) {
        const char *server[] = { r->server ? r->server : "" };
        if (w->topo_dep)
            r->topo_dep = w->topo_dep, r->topo_ecs = w->topo_ecs;
        metrics_add(w->a->m_success, server, 1);
        return ap_write(w, &w->reply, 1);
    }
    if (w->first_wrote)
        return ap_write(w, &w->first, 0);
    return w->first_rc;
}

/* Try the elements in order until one answers, fails, or one has to wait:
 * the answer's rcode, or REQ_ASYNC. */
static int ap_step(apwait *w)
{
    while (!w->failed && !w->found && w->i < w->list.n) {
        dns_req *sub = ap_sub(w, w->i);
        w->i++;
        if (!sub)
            continue;               /* too long a name: as if NXDOMAIN */
        w->pending = 1;
        w->starting = 1;
        req_on_done(sub, ap_done, w);
        req_start_next(sub, w->h);
        w->starting = 0;
        if (w->pending)
            return REQ_ASYNC;
    }
    return ap_answer(w);
}

/* ---- serving ------------------------------------------------------------------------ */

static int in_zones(const ap_inst *a, const uint8_t *lname)
{
    for (size_t i = 0; i < a->nzones; i++)
        if (dname_is_sub(lname, a->zones[i]))
            return 1;
    return 0;
}

static int ap_serve(const handler *h, dns_req *r)
{
    ap_inst *a = h->inst;
    uint8_t low[DNAME_MAX];
    memcpy(low, r->q.qname, dname_len(r->q.qname));
    dname_lower(low);
    if (!in_zones(a, low))
        return plugin_next(h, r);
    autopath_list dyn;
    const autopath_list *list = &a->file;
    if (a->src) {
        dyn.n = 0;
        a->src->search(a->src->data, r, &dyn);
        list = &dyn;
    }
    int base = ap_base_labels(low, list);
    apwait *w = base > 0 ? calloc(1, sizeof *w) : NULL;
    if (!w)
        return plugin_next(h, r);
    w->list.n = list->n;
    memcpy(w->list.name, list->name, (size_t)list->n * sizeof list->name[0]);
    w->base = base;
    w->r = r;
    w->h = h;
    w->a = a;
    w->first_rc = RC_SERVFAIL;
    msg_init(&w->first);
    msg_init(&w->reply);
    int rc = ap_step(w);
    if (rc != REQ_ASYNC)
        ap_free(w);
    return rc;
}

/* ---- setup ------------------------------------------------------------------------- */

static void ap_destroy(void *inst)
{
    ap_inst *a = inst;
    if (!a)
        return;
    free(a->zones);
    free(a->plugin);
    free(a);
}

static int add_zone(cf_disp *d, ap_inst *a, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int m = zone_from_key(text, &z);
    if (m < 0)
        return cf_err(d, "plugin/autopath: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(a->zones, a->nzones + (size_t)m) < 0) {
        free(z);
        return cf_err(d, "plugin/autopath: out of memory");
    }
    for (int i = 0; i < m; i++)
        if (dname_from_str(a->zones[a->nzones], z[i]) > 0)
            dname_lower(a->zones[a->nzones++]);
    free(z);
    return 0;
}

/* The search list: @PLUGIN, or a resolv.conf file read now. */
static int set_resolv(cf_disp *d, ap_inst *a, const char *resolv)
{
    if (resolv[0] == '@') {
        free(a->plugin);
        if (!(a->plugin = strdup(resolv + 1)))
            return cf_err(d, "plugin/autopath: out of memory");
        return 0;
    }
    resolv_search rs;
    const char *why = "";
    if (resolv_search_read(resolv, &rs, &why) < 0)
        return cf_err(d, "plugin/autopath: failed to parse \"%s\": open %s: %s", resolv, resolv, why);
    ap_list_from_resolv(&rs, &a->file);
    return 0;
}

/* One `autopath` line; a later line replaces the zones and the file's
 * list (an @PLUGIN stays), as in CoreDNS. */
static int one_line(cf_disp *d, setup_ctx *ctx, ap_inst *a)
{
    const char *args[MAX_ARGS];
    int n = cf_remaining_args(d, args, MAX_ARGS);
    if (n < 1)
        return cf_err(d, "plugin/autopath: no resolv-conf specified");
    if (n > MAX_ARGS)
        return cf_arg_err(d);
    if (set_resolv(d, a, args[n - 1]) < 0)
        return -1;
    a->nzones = 0;
    for (int i = 0; i < n - 1; i++)
        if (add_zone(d, a, args[i]) < 0)
            return -1;
    for (size_t i = 0; n == 1 && ctx->blk && i < ctx->blk->nkeys; i++)
        if (add_zone(d, a, ctx->blk->keys[i].zone) < 0)
            return -1;
    return 0;
}

static int ap_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    ap_inst *a = calloc(1, sizeof *a);
    if (!a)
        return cf_err(d, "plugin/autopath: out of memory");
    a->blk = ctx->blk;
    while (cf_next(d)) {
        if (one_line(d, ctx, a) < 0) {
            ap_destroy(a);
            return -1;
        }
    }
    static const char *const labels[] = { "server", NULL };
    a->m_success = metrics_family(instance_metrics(ctx->ins), "coredns_autopath_success_total",
                                  "Counter of requests that did autopath.", METRIC_COUNTER,
                                  labels, NULL, 0);
    *inst = a;
    return 0;
}

/* @PLUGIN's source in the block (published at its setup). A plugin of the
 * block that offers none is an error; one not in the block is ignored, as
 * in CoreDNS (the list of an earlier RESOLV-CONF line, if any, is used). */
static int ap_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    ap_inst *a = inst;
    if (!a->plugin || !a->blk)
        return 0;
    a->src = autopath_source_find(a->blk, a->plugin);
    if (a->src) {
        if (a->src->off)
            log_warning("plugin/autopath: %s", a->src->off);
        return 0;
    }
    for (size_t i = 0; i < a->blk->nhandlers; i++)
        if (!strcmp(a->blk->handlers[i].def->name, a->plugin)) {
            snprintf(err, errlen, "plugin/autopath: %s does not implement the AutoPather interface",
                     a->plugin);
            return -1;
        }
    return 0;
}

const plugin_def plugin_autopath = {
    .name = "autopath",
    .flags = 0,
    .setup = ap_setup,
    .start = ap_start,
    .destroy = ap_destroy,
    .serve = ap_serve,
};
