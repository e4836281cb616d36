/*
 * locator.c — client address → pod → node → zone. See locator.h.
 *
 * The store keeps exactly the pods this needs (pods by IP, ranked so that a
 * running pod wins over a terminating or pending one sharing a reused IP) and
 * a node-address index, so a lookup is one or two hash probes.
 */
#include <string.h>
#include "cluster/locator.h"

static void from_node(topo_loc *out, const st_node *n)
{
    out->node = n;
    if (!n)
        return;
    out->node_name = n->name;
    out->zone = n->zone;
    out->region = n->region;
}

int locator_find(store *st, const st_ip *ip, topo_loc *out)
{
    memset(out, 0, sizeof *out);
    out->ip = *ip;
    const st_pod *p = store_pod_by_ip(st, ip);
    if (p && !p->host_network && p->phase != ST_PHASE_SUCCEEDED && p->phase != ST_PHASE_FAILED) {
        out->via = LOC_POD;
        out->pod = p;
        out->node_name = p->node_name;
        from_node(out, store_node(st, p->node_name));
        out->node_name = p->node_name;
        return out->via;
    }
    const st_node *n = store_node_by_addr(st, ip);
    if (n) {
        out->via = LOC_NODE_ADDR;
        from_node(out, n);
    }
    return out->via;
}

int locator_find_on(store *st, const st_ip *ip, const char *self, topo_loc *out)
{
    if (locator_find(st, ip, out) != LOC_UNKNOWN || !self)
        return out->via;
    out->via = LOC_NODE_LOCAL;
    from_node(out, store_node(st, self));
    out->node_name = self;
    return out->via;
}
