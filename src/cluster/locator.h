/*
 * locator.h — the client locator (the PodLocator KEP 536 planned and never
 * shipped), built from the store's pod and node indexes.
 *
 * address → a running, non-hostNetwork pod with that IP → spec.nodeName →
 * node → labels; else a node whose status.addresses holds the address
 * (hostNetwork pods, node-local caches); else, when the caller runs
 * node-local (one instance per node: locator_find_on with its node's
 * name), that node; else unknown. One or two hash
 * lookups, no allocation. The result points into the store and is valid
 * until store_read_end(). Called by readers (workers, the HTTP thread)
 * inside store_read_begin/_end; it keeps no state.
 */
#ifndef TOPODNS_LOCATOR_H
#define TOPODNS_LOCATOR_H

#include "cluster/store.h"

enum { LOC_UNKNOWN = 0, LOC_POD, LOC_NODE_ADDR, LOC_NODE_LOCAL };

typedef struct topo_loc {
    int via;                        /* LOC_* */
    int ecs;                        /* the address came from EDNS Client Subnet */
    st_ip ip;                       /* the address located */
    const st_pod *pod;              /* LOC_POD */
                                    /* LOC_NODE_LOCAL: on the caller's own node */
    const st_node *node;            /* NULL when unknown or not (yet) in the store */
    const char *node_name;          /* the pod's spec.nodeName, or the node's name */
    const char *zone, *region;      /* NULL when the node lacks the label */
} topo_loc;

/* Fill *out for ip (inside store_read_begin/_end). Returns out->via. */
int locator_find(store *st, const st_ip *ip, topo_loc *out);
/* The same, but an address locator_find does not know is on node self
 * (LOC_NODE_LOCAL; out->node is NULL until that node is in the store, its
 * name is set all the same). self NULL: locator_find. */
int locator_find_on(store *st, const st_ip *ip, const char *self, topo_loc *out);

#endif
