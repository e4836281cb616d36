/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology — the `topology` directive: turns on topology-aware answers for
 * headless Services in its server block.
 *
 *   topology {
 *       client_subnet CIDR...
 *       hints consume|compute|off
 *       internal_traffic_policy on|off
 *       zone_label LABEL
 *       region_label LABEL
 *       explain [ADDR]          # no host: loopback only
 *       events
 *       node NAME               # node-local: every client is on NAME
 *       locate SOURCE...        # pods endpoints podcidr cilium calico
 *   }
 *
 * The plugin does not serve queries itself: it parses the directive into
 * the engine's configuration (topo_cfg), creates the engine (src/topology/)
 * and publishes it in its server block (TOPO_ENGINE_KEY). The kubernetes
 * plugin of the same block finds it there, binds its cluster store to it and
 * asks it which endpoints a client receives; the cache finds it to key
 * answers by the client's zone or node. The plugin runs the engine's
 * observer (Events, per-Service state gauges) and the explain endpoint
 * (explain.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "server/plugin.h"
#include "server/server.h"
#include "server/http.h"
#include "cluster/prefix.h"
#include "topology/topology.h"
#include "plugin/topology/topo_plugin.h"

/* ---- setup ---------------------------------------------------------------- */

static int on_off(cf_disp *d, int *out)
{
    const char *v[2];
    if (cf_remaining_args(d, v, 2) != 1)
        return cf_arg_err(d);
    if (!strcmp(v[0], "on"))
        *out = 1;
    else if (!strcmp(v[0], "off"))
        *out = 0;
    else
        return cf_err(d, "internal_traffic_policy must be 'on' or 'off'");
    return 0;
}

static int one_arg(cf_disp *d, char **out)
{
    const char *v[2];
    if (cf_remaining_args(d, v, 2) != 1)
        return cf_arg_err(d);
    free(*out);
    *out = strdup(v[0]);
    return *out ? 0 : cf_err(d, "out of memory");
}

static int prop_subnets(cf_disp *d, topo_cfg *c)
{
    int any = 0;
    while (cf_next_arg(d)) {
        if (c->nsubnets == TOPO_MAX_SUBNETS)
            return cf_err(d, "too many client_subnet entries (max %d)", TOPO_MAX_SUBNETS);
        if (cidr_parse_host(cf_val(d), &c->subnets[c->nsubnets]) < 0)
            return cf_err(d, "invalid CIDR");
        c->nsubnets++;
        any = 1;
    }
    return any ? 0 : cf_arg_err(d);
}

static int prop_hints(cf_disp *d, topo_cfg *c)
{
    const char *v[2];
    if (cf_remaining_args(d, v, 2) != 1)
        return cf_arg_err(d);
    if (!strcmp(v[0], "consume"))
        c->hints = TOPO_HINTS_CONSUME;
    else if (!strcmp(v[0], "compute"))
        c->hints = TOPO_HINTS_COMPUTE;
    else if (!strcmp(v[0], "off"))
        c->hints = TOPO_HINTS_OFF;
    else
        return cf_err(d, "hints must be consume, compute or off");
    return 0;
}

/* `explain [ADDRESS]`. The endpoint tells whoever reaches it any client's
 * pod, node and zone, so without a host it listens on loopback only: no
 * ADDRESS is EXPLAIN_DEFAULT, ":PORT" and "PORT" are 127.0.0.1:PORT (not
 * every interface, as ":PORT" is for health or prometheus). An explicit
 * host, 0.0.0.0 or [::] included, is honoured. */
#define EXPLAIN_DEFAULT "127.0.0.1:8182"

static int prop_explain(cf_disp *d, topo_cfg *c)
{
    const char *v[2];
    int n = cf_remaining_args(d, v, 2);
    if (n > 1)
        return cf_arg_err(d);
    char addr[300], err[512];
    const char *a = n ? v[0] : "";
    if (strlen(a) > 256)
        return cf_err(d, "explain address too long");
    if (!*a)
        snprintf(addr, sizeof addr, "%s", EXPLAIN_DEFAULT);
    else if (*a == ':' || strspn(a, "0123456789") == strlen(a))
        snprintf(addr, sizeof addr, "127.0.0.1%s%s", *a == ':' ? "" : ":", a);
    else
        snprintf(addr, sizeof addr, "%s", a);
    if (http_addr_check(addr, err, sizeof err) < 0)
        return cf_err(d, "%s", err);
    free(c->explain);
    c->explain = strdup(addr);
    return c->explain ? 0 : cf_err(d, "out of memory");
}

/* A DNS-1123 subdomain, as the API server validates a Node's name:
 * dot-separated labels of [a-z0-9-], each starting and ending with an
 * alphanumeric, 253 characters at most. */
static int dns1123_subdomain(const char *n)
{
    size_t len = strlen(n);
    if (!len || len > 253)
        return 0;
    for (const char *l = n; *l;) {
        size_t ll = strcspn(l, ".");
        if (!ll || !isalnum((unsigned char)l[0]) || !isalnum((unsigned char)l[ll - 1]))
            return 0;
        for (size_t i = 0; i < ll; i++)
            if (!(islower((unsigned char)l[i]) || isdigit((unsigned char)l[i]) || l[i] == '-'))
                return 0;
        l += ll;
        if (*l == '.' && !*++l)
            return 0;                         /* a trailing dot */
    }
    return 1;
}

/* Events say whether a Service's computed policy can be honoured, which
 * takes every node's zone and CPU; a node-local instance knows one node,
 * and one per node would post the same Event thousands of times. */
#define NODE_EVENTS \
    "events and node cannot be combined: Events need every node (post them from a central instance)"

/* `node NAME`: node-local mode. Operators write `node {$NODE_NAME}` with
 * NODE_NAME from the downward API (spec.nodeName), so an empty value (the
 * variable unset) is named as such. */
static int prop_node(cf_disp *d, topo_cfg *c)
{
    const char *v[2];
    if (c->node)
        return cf_err(d, "node given twice");
    if (c->events)
        return cf_err(d, NODE_EVENTS);
    if (cf_remaining_args(d, v, 2) != 1)
        return cf_arg_err(d);
    if (!*v[0])
        return cf_err(d, "node name is empty (is the environment variable set?)");
    if (!dns1123_subdomain(v[0]))
        return cf_err(d, "invalid node name '%s': must be a lowercase DNS-1123 subdomain", v[0]);
    c->node = strdup(v[0]);
    return c->node ? 0 : cf_err(d, "out of memory");
}

/* `locate SOURCE...`: where a client address is looked up, in order
 * (locator.h). Each word once; an unknown one stops the load at it. */
static int prop_locate(cf_disp *d, topo_cfg *c)
{
    if (c->locate.n)
        return cf_err(d, "locate given twice");
    while (cf_next_arg(d)) {
        int src = locator_source_parse(cf_val(d));
        if (src < 0)
            return cf_err(d, "unknown locate source '%s': must be pods, endpoints, podcidr, "
                          "cilium or calico", cf_val(d));
        if (locator_uses(&c->locate, src) && c->locate.n)
            return cf_err(d, "locate source '%s' given twice", cf_val(d));
        c->locate.src[c->locate.n++] = (uint8_t)src;
    }
    return c->locate.n ? 0 : cf_arg_err(d);
}

static int parse_prop(cf_disp *d, topo_cfg *c)
{
    const char *p = cf_val(d);
    if (!strcmp(p, "client_subnet"))
        return prop_subnets(d, c);
    if (!strcmp(p, "hints"))
        return prop_hints(d, c);
    if (!strcmp(p, "internal_traffic_policy"))
        return on_off(d, &c->itp);
    if (!strcmp(p, "zone_label"))
        return one_arg(d, &c->zone_label);
    if (!strcmp(p, "region_label"))
        return one_arg(d, &c->region_label);
    if (!strcmp(p, "explain"))
        return prop_explain(d, c);
    if (!strcmp(p, "node"))
        return prop_node(d, c);
    if (!strcmp(p, "locate"))
        return prop_locate(d, c);
    if (!strcmp(p, "events")) {
        if (cf_next_arg(d))
            return cf_arg_err(d);
        if (c->node)
            return cf_err(d, NODE_EVENTS);
        c->events = 1;
        return 0;
    }
    return cf_prop_err(d);
}

static void topo_destroy(void *inst);

static int topo_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    topo_cfg cfg = { .hints = TOPO_HINTS_COMPUTE, .itp = 1 };
    while (cf_next(d)) {
        if (cf_next_arg(d)) {
            topo_cfg_clear(&cfg);
            return cf_arg_err(d);
        }
        while (cf_next_block(d))
            if (parse_prop(d, &cfg) < 0) {
                topo_cfg_clear(&cfg);
                return -1;
            }
    }
    topo_inst *t = calloc(1, sizeof *t);
    if (t)
        t->engine = topo_engine_new(&cfg, instance_metrics(ctx->ins));
    topo_cfg_clear(&cfg);
    if (!t || !t->engine || block_set_value(ctx->blk, TOPO_ENGINE_KEY, t->engine, NULL) < 0) {
        topo_destroy(t);
        return cf_err(d, "out of memory");
    }
    t->blk = ctx->blk;
    t->ins = ctx->ins;
    *inst = t;
    return 0;
}

/* ---- lifecycle -------------------------------------------------------------- */

/* The kubernetes plugin (earlier in the chain, so started first) bound its
 * store to the engine; without it there is nothing to decide over. */
static int topo_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    topo_inst *t = inst;
    t->ins = ins;
    if (!topo_engine_store(t->engine)) {
        snprintf(err, errlen, "plugin/topology: needs the kubernetes plugin in the same server block");
        return -1;
    }
    if (topo_engine_cfg(t->engine)->explain && topo_explain_start(t, err, errlen) < 0)
        return -1;
    return topo_observer_start(t->engine, err, errlen);
}

/* In the chain next to kubernetes, whose answers the engine shapes: a
 * query reaching it is passed on (it is listed in coredns_plugin_enabled
 * as the chain's plugins are). */
static int topo_serve(const handler *h, dns_req *r)
{
    return plugin_next(h, r);
}

static void topo_stop(void *inst)
{
    topo_observer_stop(((topo_inst *)inst)->engine);
}

static void topo_destroy(void *inst)
{
    topo_inst *t = inst;
    if (!t)
        return;
    topo_engine_free(t->engine);
    free(t);
}

const plugin_def plugin_topology = {
    .name = "topology",
    .flags = PLUGIN_ONCE,
    .setup = topo_setup,
    .start = topo_start,
    .stop = topo_stop,
    .destroy = topo_destroy,
    .serve = topo_serve,
};
