/* SPDX-License-Identifier: Apache-2.0 */
/*
 * locator.h — the client locator (the PodLocator KEP 536 planned and never
 * shipped), built from the store's indexes.
 *
 * An address is looked up in the configured sources, in their order (the
 * topology directive's `locate`, default `pods`); the first that knows it
 * wins:
 *   pods       a running, non-hostNetwork pod with that IP → spec.nodeName
 *   endpoints  an EndpointSlice endpoint with that address → its nodeName
 *   podcidr    the Node whose spec.podCIDRs holds it (longest prefix)
 *   cilium     the CiliumNode whose spec.ipam.podCIDRs holds it
 *   calico     the Node of the confirmed Calico BlockAffinity holding it
 * then, always, a node whose status.addresses holds the address
 * (hostNetwork pods, node-local caches); else, when the caller runs
 * node-local (one instance per node: self is its node's name), that node;
 * else unknown. The node found gives the labels, zone and region.
 * No allocation, no lock: hash probes and binary searches (prefix.h). The
 * result points into the store and is valid until store_read_end().
 * Called by readers (workers, the HTTP thread) inside
 * store_read_begin/_end; it keeps no state.
 */
#ifndef TOPODNS_LOCATOR_H
#define TOPODNS_LOCATOR_H

#include "cluster/store.h"

/* How an address was located (topo_loc.via). */
enum {
    LOC_UNKNOWN = 0, LOC_POD, LOC_NODE_ADDR, LOC_NODE_LOCAL,
    LOC_ENDPOINT, LOC_PODCIDR, LOC_CILIUM, LOC_CALICO, LOC_VIA_COUNT
};

/* The sources of `locate`, as written there. */
enum { LOC_SRC_PODS, LOC_SRC_ENDPOINTS, LOC_SRC_PODCIDR, LOC_SRC_CILIUM, LOC_SRC_CALICO,
       LOC_SRC_COUNT };

/* An ordered list of distinct sources; n 0 means the default, `pods`. */
typedef struct loc_sources {
    uint8_t n;
    uint8_t src[LOC_SRC_COUNT];
} loc_sources;

/* "pods", "endpoints", "podcidr", "cilium", "calico" → LOC_SRC_*; -1 for
 * any other word. */
int locator_source_parse(const char *word);
const char *locator_source_name(int src);
/* Whether list (NULL: the default) holds src. */
int locator_uses(const loc_sources *list, int src);
/* The name of a topo_loc.via: the source word for a source ("pods",
 * "endpoints", "podcidr", "cilium", "calico"), "node" for a node address,
 * "node_local" for node-local's own node, "unknown". */
const char *locator_via_name(int via);
/* The source (LOC_SRC_*) a topo_loc.via stands for, -1 for none (node
 * address, node-local, unknown). */
int locator_via_source(int via);

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

/* Fill *out for ip from the sources of list (NULL: `pods`), then node
 * addresses, then self (NULL: not node-local). Returns out->via. Inside
 * store_read_begin/_end. */
int locator_find_in(store *st, const st_ip *ip, const loc_sources *list, const char *self,
                    topo_loc *out);
/* locator_find_in with the default sources and without self. */
int locator_find(store *st, const st_ip *ip, topo_loc *out);
/* The same, but an address locator_find does not know is on node self
 * (LOC_NODE_LOCAL; out->node is NULL until that node is in the store, its
 * name is set all the same). self NULL: locator_find. */
int locator_find_on(store *st, const st_ip *ip, const char *self, topo_loc *out);

#endif
