/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locator.c — client address → source → node → zone. See locator.h.
 *
 * The store keeps exactly the indexes this needs: pods by IP (ranked so
 * that a running pod wins over a terminating or pending one sharing a
 * reused IP), the endpoint addresses of Services (the PTR index), one
 * longest-prefix index per range source and a node-address index, so a
 * lookup is a few hash probes and binary searches.
 */
#include <assert.h>
#include <string.h>
#include "cluster/locator.h"
#include "cluster/pmap.h"

static const char *const src_names[LOC_SRC_COUNT] = {
    "pods", "endpoints", "podcidr", "cilium", "calico",
};

int locator_source_parse(const char *word)
{
    for (int i = 0; word && i < LOC_SRC_COUNT; i++)
        if (!strcmp(src_names[i], word))
            return i;
    return -1;
}

const char *locator_source_name(int src)
{
    return src >= 0 && src < LOC_SRC_COUNT ? src_names[src] : "?";
}

int locator_uses(const loc_sources *list, int src)
{
    if (!list || !list->n)
        return src == LOC_SRC_PODS;
    for (uint8_t i = 0; i < list->n; i++)
        if (list->src[i] == src)
            return 1;
    return 0;
}

const char *locator_via_name(int via)
{
    static const char *const names[LOC_VIA_COUNT] = {
        "unknown", "pods", "node", "node_local", "endpoints", "podcidr", "cilium", "calico",
    };
    return via >= 0 && via < LOC_VIA_COUNT ? names[via] : "unknown";
}

int locator_via_source(int via)
{
    static const int src[LOC_VIA_COUNT] = {
        -1, LOC_SRC_PODS, -1, -1, LOC_SRC_ENDPOINTS, LOC_SRC_PODCIDR, LOC_SRC_CILIUM,
        LOC_SRC_CALICO,
    };
    return via >= 0 && via < LOC_VIA_COUNT ? src[via] : -1;
}

static void from_node(topo_loc *out, const st_node *n)
{
    out->node = n;
    if (!n)
        return;
    out->node_name = n->name;
    out->zone = n->zone;
    out->region = n->region;
}

/* Located on the node named name (its labels when the store has it). */
static int on_node(store *st, topo_loc *out, int via, const char *name)
{
    out->via = via;
    from_node(out, store_node(st, name));
    out->node_name = name;
    return via;
}

static int try_source(store *st, const st_ip *ip, int src, topo_loc *out)
{
    const char *name;
    switch (src) {
    case LOC_SRC_PODS: {
        const st_pod *p = store_pod_by_ip(st, ip);
        if (!p || p->host_network || p->phase == ST_PHASE_SUCCEEDED ||
            p->phase == ST_PHASE_FAILED)
            return LOC_UNKNOWN;
        out->pod = p;
        return on_node(st, out, LOC_POD, p->node_name);
    }
    case LOC_SRC_ENDPOINTS:
        name = store_endpoint_node(st, ip);
        return name ? on_node(st, out, LOC_ENDPOINT, name) : LOC_UNKNOWN;
    case LOC_SRC_PODCIDR:
        name = store_node_by_range(st, ST_RANGE_PODCIDR, ip);
        return name ? on_node(st, out, LOC_PODCIDR, name) : LOC_UNKNOWN;
    case LOC_SRC_CILIUM:
        name = store_node_by_range(st, ST_RANGE_CILIUM, ip);
        return name ? on_node(st, out, LOC_CILIUM, name) : LOC_UNKNOWN;
    case LOC_SRC_CALICO:
        name = store_node_by_range(st, ST_RANGE_CALICO, ip);
        return name ? on_node(st, out, LOC_CALICO, name) : LOC_UNKNOWN;
    default:
        return LOC_UNKNOWN;
    }
}

int locator_find_in(store *st, const st_ip *ip, const loc_sources *list, const char *self,
                    topo_loc *out)
{
    assert(st && ip && out);
    assert(pmap_read_ongoing());            /* inside store_read_begin/_end */
    static const loc_sources dflt = { 1, { LOC_SRC_PODS } };
    memset(out, 0, sizeof *out);
    out->ip = *ip;
    if (!list || !list->n)
        list = &dflt;
    for (uint8_t i = 0; i < list->n; i++)
        if (try_source(st, ip, list->src[i], out) != LOC_UNKNOWN)
            return out->via;
    const st_node *n = store_node_by_addr(st, ip);
    if (n) {
        out->via = LOC_NODE_ADDR;
        from_node(out, n);
        return out->via;
    }
    if (self)
        return on_node(st, out, LOC_NODE_LOCAL, self);
    return out->via;
}

int locator_find(store *st, const st_ip *ip, topo_loc *out)
{
    return locator_find_in(st, ip, NULL, NULL, out);
}

int locator_find_on(store *st, const st_ip *ip, const char *self, topo_loc *out)
{
    return locator_find_in(st, ip, NULL, self, out);
}
