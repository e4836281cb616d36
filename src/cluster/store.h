/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h — the cluster store: what topodns knows about the cluster.
 *
 * One writer, many readers. The writer is the API thread: reflector handlers
 * (src/k8s/) decode objects straight into the compact structs below and
 * publish them. Readers are the DNS workers (and the HTTP thread): they look
 * objects up without locks and never wait for the writer.
 *
 * Publication is RCU (liburcu, memb flavor, lock-free hash tables): every
 * published object is immutable; an update publishes a new object and the old
 * one is freed after every reader that could see it has left its read-side
 * section. A reader brackets its work with store_read_begin()/_end() and may
 * use every pointer it got in between, until _end(). Reader threads call
 * store_reader_register() once.
 *
 * What is kept (and only that — the JSON is freed at once):
 *   services    ns/name → st_service (kind, cluster IPs, ports, ExternalName,
 *               external IPs and load-balancer ingress, the fields and
 *               annotations topology uses)
 *   endpoints   ns/service → st_endpoints: every endpoint of every
 *               EndpointSlice labelled kubernetes.io/service-name=service,
 *               merged in slice order (not deduplicated: readers decide)
 *   pods        IP → st_pod (running, non-hostNetwork pods: the client index)
 *   nodes       name → st_node (labels, zone, region, allocatable CPU,
 *               addresses, Ready, spec.podCIDRs); address → node
 *   ranges      per range source (ST_RANGE_*), address range → node name,
 *               longest prefix first (prefix.h): Node spec.podCIDRs,
 *               CiliumNode spec.ipam.podCIDRs, Calico BlockAffinity
 *               spec.cidr (confirmed, not deleted)
 *   namespaces  name → st_namespace (labels)
 *   serviceimports  ns/name → st_svcimport (multicluster: spec.type, ips, ports)
 *   multicluster slices  ns/service → the EndpointSlices labelled
 *               multicluster.kubernetes.io/service-name=service (without
 *               kubernetes.io/service-name), each with its source cluster;
 *               kept only with store_opts.multicluster
 * Strings that repeat (label keys and values, zones, node names) are interned
 * in the store's own string table (strtab.h).
 *
 * A store is a cluster context: one per kubernetes plugin instance, owned
 * by it, with everything it needs (maps, string table, versions) inside —
 * nothing is shared with another store, so a reload builds a new one beside
 * the old and both writers run at once without touching common state.
 * store_free() runs after the writer (API thread) and every reader stopped.
 */
#ifndef TOPODNS_STORE_H
#define TOPODNS_STORE_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "common/cidr.h"

struct cJSON;

typedef struct st_ip {
    uint8_t family;                 /* 4 or 6 */
    uint8_t addr[16];               /* IPv4 in the first 4 octets */
} st_ip;

/* An address range is common/cidr.h's cidr (its one parser, Go's rules):
 * the network with the host bits clear, its prefix length, AF_INET or
 * AF_INET6. */

enum { ST_TCP = 6, ST_UDP = 17, ST_SCTP = 132 };

typedef struct st_port {
    const char *name;               /* "" when unnamed */
    int32_t port;                   /* -1: the slice had no ports (sentinel) */
    uint8_t proto;                  /* ST_TCP, ST_UDP, ST_SCTP */
} st_port;

typedef struct st_label {
    const char *key, *value;        /* interned */
} st_label;

/* What the endpoints of one EndpointSlice share (one per slice, in the
 * slice's block, decode.h): readers reach it through st_endpoint.sl and the
 * st_ep_*() accessors below, never by hand. Immutable once published; freed
 * with the slice (after every view using it is gone). */
typedef struct st_hints {
    uint32_t zones, nodes;          /* offsets into st_slice.hnames */
    uint8_t nzones, nnodes;         /* the API allows at most 8 each */
} st_hints;

typedef struct st_slice {
    const char *name;               /* slice name (for explain) */
    const st_port *ports;           /* its ports (one sentinel -1 when none) */
    const char *const *names;       /* node and zone names (interned), [0] = NULL */
    const st_hints *hints;          /* hint sets, [0] = none */
    const char *const *hnames;      /* hint names (interned) */
    const char *pool;               /* endpoints' strings (st_endpoint.str) and
                                     * IPv6 addresses (st_endpoint.a.ip6) */
    uint16_t nports;
    uint16_t nnames, nhints;        /* entries of names[] and hints[] */
    uint8_t family;                 /* addressType: 4 or 6 (every endpoint's); 0: FQDN,
                                     * then it has no endpoints */
    uint8_t hpfx;                   /* the first hpfx bytes of pool: the prefix every
                                     * hostname of the slice starts with, which its
                                     * endpoints do not repeat (a StatefulSet's
                                     * "web-0", "web-1", ...: "web-"); 0: none */
} st_slice;

/* One address of an EndpointSlice endpoint: 24 bytes (150,000 of them in a
 * large cluster, docs/benchmarks.md). Node, zone and hints are indexes into
 * the slice's tables, the strings one offset into its pool:
 * "hostname\0" if has_host, then "pod\0" if has_pod and not pod_is_host,
 * then the address text "a.b.c.d\0" if addr_text (when the slice wrote it
 * in a form other than inet_ntop's of the address; else the text is
 * derived). The address itself: an IPv4 one inline (a.ip4, network order),
 * an IPv6 one as 16 octets in the pool at offset a.ip6 (v6 set; a slice
 * has one addressType, so v6 == (sl->family == 6)). Readers take it with
 * st_ep_ip() / st_ep_family(), never from the fields. */
typedef struct st_endpoint {
    const st_slice *sl;             /* its slice */
    uint32_t str;                   /* offset into sl->pool */
    uint16_t node, zone;            /* into sl->names; 0: unset */
    uint16_t hints;                 /* into sl->hints; 0: no hint names */
    uint8_t has_hints : 1;          /* the endpoint carried a hints object */
    uint8_t ready : 1, serving : 1, terminating : 1;    /* conditions (ready unset → 1) */
    uint8_t ready_unset : 1;        /* the slice gave no ready condition: a
                                     * consumer counts it as ready, a hint
                                     * producer does not hint it */
    uint8_t has_host : 1, has_pod : 1, pod_is_host : 1;
    uint8_t addr_text : 1;
    uint8_t v6 : 1;                 /* the address is IPv6 (in the pool) */
    union {
        uint8_t ip4[4];             /* !v6: the IPv4 address */
        uint32_t ip6;               /* v6: offset into sl->pool of its 16 octets */
    } a;
} st_endpoint;
_Static_assert(sizeof(void *) != 8 || sizeof(st_endpoint) == 24, "st_endpoint is 24 bytes");

/* The accessors (any reader, inside its read section). */
/* The endpoint's address family: 4 or 6 (one flag test, no copy). */
static inline uint8_t st_ep_family(const st_endpoint *ep)
{
    assert(ep->sl && ep->v6 == (ep->sl->family == 6));
    return ep->v6 ? 6 : 4;
}
/* The endpoint's address, by value: family 4 or 6, the unused octets zero
 * (so it compares and hashes as bytes like st_parse_ip's). */
static inline st_ip st_ep_ip(const st_endpoint *ep)
{
    st_ip ip = { .family = st_ep_family(ep) };
    if (ep->v6)
        memcpy(ip.addr, ep->sl->pool + ep->a.ip6, 16);
    else
        memcpy(ip.addr, ep->a.ip4, 4);
    return ip;
}
/* The accessors (any reader, inside its read section). */
static inline const char *st_ep_node(const st_endpoint *ep)    /* NULL when unset */
{
    assert(ep->node < ep->sl->nnames && (ep->node == 0) == (ep->sl->names[ep->node] == NULL));
    return ep->sl->names[ep->node];
}
static inline const char *st_ep_zone(const st_endpoint *ep)    /* lower-cased; NULL when unset */
{
    assert(ep->zone < ep->sl->nnames && (ep->zone == 0) == (ep->sl->names[ep->zone] == NULL));
    return ep->sl->names[ep->zone];
}
/* The hostname, NULL when unset: in buf (ST_HOST_STRLEN bytes) when the
 * slice's hostnames share a prefix (st_slice.hpfx), else in the pool. */
enum { ST_HOST_STRLEN = 256 };
const char *st_ep_hostname(const st_endpoint *ep, char *buf);
/* targetRef name when kind Pod and < 64 chars, else NULL (always NULL
 * with store_opts.drop_pod_names); in buf (ST_HOST_STRLEN) or the pool,
 * as st_ep_hostname (it is the hostname when they are equal). */
const char *st_ep_pod(const st_endpoint *ep, char *buf);
/* The address as the slice wrote it: in buf (ST_ADDR_STRLEN) or the pool. */
enum { ST_ADDR_STRLEN = 46 };
const char *st_ep_addr(const st_endpoint *ep, char *buf);
static inline const st_port *st_ep_ports(const st_endpoint *ep)
{
    return ep->sl->ports;
}
static inline uint16_t st_ep_nports(const st_endpoint *ep)
{
    return ep->sl->nports;
}
static inline const char *st_ep_slice(const st_endpoint *ep)
{
    return ep->sl->name;
}
/* hints.forZones / hints.forNodes names (interned) and their counts. */
static inline uint8_t st_ep_n_hint_zones(const st_endpoint *ep)
{
    assert(ep->hints < ep->sl->nhints && (ep->hints == 0 || ep->has_hints));
    return ep->sl->hints[ep->hints].nzones;
}
static inline const char *const *st_ep_hint_zones(const st_endpoint *ep)
{
    return ep->sl->hnames + ep->sl->hints[ep->hints].zones;
}
static inline uint8_t st_ep_n_hint_nodes(const st_endpoint *ep)
{
    assert(ep->hints < ep->sl->nhints && (ep->hints == 0 || ep->has_hints));
    return ep->sl->hints[ep->hints].nnodes;
}
static inline const char *const *st_ep_hint_nodes(const st_endpoint *ep)
{
    return ep->sl->hnames + ep->sl->hints[ep->hints].nodes;
}

/* The endpoints of one Service (store_endpoints: the reader knows whose). */
typedef struct st_endpoints {
    size_t n;
    const st_endpoint *eps;
    uint64_t version;               /* new value at every rebuild */
} st_endpoints;

typedef enum { SVC_CLUSTERIP, SVC_HEADLESS, SVC_EXTERNALNAME } st_svc_kind;

/* The parts of a Service that few Services set, right after its
 * st_service in the same block when it sets any (st_service.has_extra):
 * readers take them through st_svc_x(). */
typedef struct st_svc_extra {
    const char *external_name;      /* ExternalName target, NULL otherwise */
    /* The Service's external addresses (k8s_external): spec.externalIPs,
     * then per status.loadBalancer.ingress its ip, or its hostname when it
     * has no ip; as written, in one block; NULL when there are none. */
    const char *const *external;
    /* topology inputs, as written (NULL when absent) */
    const char *const *topology_keys;   /* spec.topologyKeys or topodns.io/topology-keys */
    const char *traffic_distribution;   /* spec.trafficDistribution */
    const char *topology_mode;      /* service.kubernetes.io/topology-aware-hints
                                       when present at all, else .../topology-mode */
    const char *same_zone;          /* endpointslice.kubernetes.io/same-zone
                                       (or service.kubernetes.io/same-zone) */
    const char *routing_preference; /* draft routingPreference field / annotation */
    uint8_t n_external;
    uint8_t n_topology_keys;
    uint8_t topology_keys_from_annotation;
} st_svc_extra;

typedef struct st_service {
    /* 40 bytes (10,000 of them in a large cluster, docs/benchmarks.md):
     * what every Service has; the rest in its st_svc_extra */
    const char *ns, *name;          /* name: the store's map key holds its text */
    const st_ip *cluster_ips;       /* spec.clusterIPs order (clusterIP if empty) */
    const st_port *ports;           /* spec.ports */
    uint16_t nports;
    uint8_t kind;                   /* st_svc_kind; NodePort/LoadBalancer count as ClusterIP */
    uint8_t n_cluster_ips;
    uint8_t has_selector;
    uint8_t itp_local;              /* spec.internalTrafficPolicy == Local */
    uint8_t has_extra;              /* an st_svc_extra follows (else all absent) */
} st_service;
_Static_assert(sizeof(void *) != 8 || sizeof(st_service) <= 40, "st_service is 40 bytes");
_Static_assert(sizeof(st_service) % _Alignof(st_svc_extra) == 0, "st_svc_extra follows it");

/* The extra parts of svc: its own, or an all-absent one (NULL pointers,
 * zero counts) when it has none. Any reader, inside its read section. */
static inline const st_svc_extra *st_svc_x(const st_service *svc)
{
    static const st_svc_extra none;
    return svc->has_extra ? (const st_svc_extra *)(svc + 1) : &none;
}

typedef struct st_pod {
    const char *ns, *name;
    const char *node_name;          /* interned */
    uint8_t nips;                   /* 0, 1 or 2 */
    uint8_t host_network;
    uint8_t phase;                  /* ST_PHASE_* */
    uint8_t terminating;
    st_ip ips[];                    /* nips of them, in the record's block */
} st_pod;

enum { ST_PHASE_PENDING, ST_PHASE_RUNNING, ST_PHASE_SUCCEEDED, ST_PHASE_FAILED, ST_PHASE_UNKNOWN };

typedef struct st_node {
    const char *name;
    const st_label *labels;         /* sorted by key */
    uint16_t nlabels;
    const char *zone, *region;      /* from the configured labels, NULL when absent */
    uint32_t cpu_milli;             /* allocatable CPU, rounded up; 0 when unknown */
    uint8_t ready;
    uint8_t control_plane;
    const st_ip *addrs;
    uint8_t naddrs;
    uint8_t ncidrs;                 /* spec.podCIDRs (or spec.podCIDR), at most 8 */
    const cidr *cidrs;
} st_node;

typedef struct st_namespace {
    const char *name;
    const st_label *labels;
    uint16_t nlabels;
} st_namespace;

/* A ServiceImport of the Multi-Cluster Services API (multicluster only). */
typedef struct st_svcimport {
    const char *ns, *name;
    uint8_t headless;               /* spec.type Headless (else ClusterSetIP) */
    uint8_t nips;
    const st_ip *ips;               /* spec.ips (at most 8) */
    const st_port *ports;           /* spec.ports */
    uint16_t nports;
} st_svcimport;

typedef struct store store;

/* Options of store_new() (NULL: every default). The caller owns the
 * struct, read during the call only; the store keeps the label pointers,
 * not copies, so their strings must outlive it. */
typedef struct store_opts {
    const char *zone_label;         /* default topology.kubernetes.io/zone */
    const char *region_label;       /* default topology.kubernetes.io/region */
    int multicluster;               /* keep multicluster EndpointSlices */
    /* The number of pods the store is expected to hold, to presize its
     * maps at creation: 0 starts every map at 64 buckets, and the writer
     * grows each as it fills (between one and two entries per bucket, so
     * a store that watches no pods has no pod-sized table); another hint
     * scales every map in proportion to the scale limits of
     * docs/benchmarks.md (150k pods: about 3 MB of buckets), down to 64
     * buckets at least, up to 2^20 at most. Only a starting size: the
     * maps grow past it as objects arrive, the same as without it. */
    size_t expected_pods;
    /* Called on the writer's thread, once per address and range source,
     * when an EndpointSlice endpoint's nodeName is not the node whose range
     * (of source ST_RANGE_*) holds its address (the store logs it too);
     * NULL: only logged. conflict_arg must outlive the store. */
    void (*conflict)(void *arg, int source);
    void *conflict_arg;
    /* Keep no targetRef pod names of EndpointSlice endpoints (st_ep_pod()
     * is then NULL): for a reader that never names an endpoint by its pod
     * (the kubernetes plugin without endpoint_pod_names), about 27 bytes
     * per endpoint less. */
    int drop_pod_names;
} store_opts;

/* The range sources of the client locator (prefix.h). */
enum { ST_RANGE_PODCIDR, ST_RANGE_CILIUM, ST_RANGE_CALICO, ST_RANGE_COUNT };
/* "podcidr", "cilium", "calico" */
const char *st_range_name(int source);

store *store_new(const store_opts *opts);
void store_free(store *s);

/* ---- readers ----------------------------------------------------------- */
void store_reader_register(void);
void store_reader_unregister(void);
void store_read_begin(void);
void store_read_end(void);

/* Lookups; names are compared exactly (Kubernetes names are lower-case;
 * callers lower-case query labels first). NULL when absent. */
const st_service *store_service(store *s, const char *ns, const char *name);
const st_endpoints *store_endpoints(store *s, const char *ns, const char *service);
const st_namespace *store_namespace(store *s, const char *name);
const st_pod *store_pod_by_ip(store *s, const st_ip *ip);
const st_node *store_node(store *s, const char *name);
const st_node *store_node_by_addr(store *s, const st_ip *ip);
/* The node whose range of source ST_RANGE_* holds ip (longest prefix),
 * NULL when none: its name, interned (valid until store_read_end). */
const char *store_node_by_range(store *s, int source, const st_ip *ip);
/* The nodeName of an EndpointSlice endpoint with address ip, among the
 * Services having a ready endpoint there (the PTR index), NULL when none:
 * interned. One hash probe, then a binary search in that Service's
 * endpoints (a pass when it has 32 or fewer). */
const char *store_endpoint_node(store *s, const st_ip *ip);
/* Address ranges published for a source (tests, /metrics). */
size_t store_range_count(store *s, int source);
const st_svcimport *store_svcimport(store *s, const char *ns, const char *name);
/* Every multicluster EndpointSlice of (ns, service), in arrival order:
 * cb(cluster, endpoints, n, arg), non-zero to stop. cluster is "" when the
 * slice has no source-cluster label. */
typedef int (*st_mcslice_cb)(const char *cluster, const st_endpoint *eps, size_t n, void *arg);
void store_foreach_mcslice(store *s, const char *ns, const char *service, st_mcslice_cb cb,
                           void *arg);
/* Label value of a node, NULL when absent. */
const char *st_node_label(const st_node *n, const char *key);

/* Services whose cluster IPs hold ip, and (ns, service) pairs having a
 * ready endpoint with that address: for PTR. Each callback returns 0 to go
 * on, non-zero to stop. */
typedef int (*st_service_cb)(const st_service *svc, void *arg);
typedef int (*st_endpoint_cb)(const st_service *svc, const st_endpoint *ep, void *arg);
void store_services_by_ip(store *s, const st_ip *ip, st_service_cb cb, void *arg);
void store_endpoints_by_ip(store *s, const st_ip *ip, st_endpoint_cb cb, void *arg);

/* Every published service / node (inside store_read_begin/_end); the
 * callback returns non-zero to stop. */
typedef int (*st_node_cb)(const st_node *n, void *arg);
void store_foreach_service(store *s, st_service_cb cb, void *arg);
void store_foreach_node(store *s, st_node_cb cb, void *arg);
/* Bumped at every node add, change or removal (for memoised allocations). */
uint64_t store_nodes_version(const store *s);

/* Bumped after every write of any object (upsert, removal, relist end),
 * with release order: a reader that memoises an answer computed after
 * loading version v may serve it as long as store_version() is still v. */
uint64_t store_version(const store *s);

/* Unix time of the last DNS-relevant change (the SOA serial), and counts. */
uint32_t store_serial(const store *s);
size_t store_count(const store *s, const char *resource);
/* Octets in the string table (strtab_bytes): it only grows, also with
 * strings no object uses any more. The writer's thread only. */
size_t store_strings_bytes(const store *s);

/* ---- the writer (API thread only) -------------------------------------- */
/* Decode and publish one object of a kind; a malformed object is logged once
 * with its name and skipped (return -1), the store unchanged. */
int store_upsert_service(store *s, const struct cJSON *obj);
int store_upsert_slice(store *s, const struct cJSON *obj);
int store_upsert_pod(store *s, const struct cJSON *obj);
int store_upsert_node(store *s, const struct cJSON *obj);
int store_upsert_namespace(store *s, const struct cJSON *obj);
int store_upsert_svcimport(store *s, const struct cJSON *obj);
/* cilium.io/v2 CiliumNode: spec.ipam.podCIDRs on the node of its name. */
int store_upsert_ciliumnode(store *s, const struct cJSON *obj);
/* crd.projectcalico.org/v1 BlockAffinity: spec.cidr on spec.node, while
 * spec.state is "confirmed" and spec.deleted is not "true". */
int store_upsert_blockaffinity(store *s, const struct cJSON *obj);
/* Remove by the object's last state (namespace + name from metadata). */
int store_remove(store *s, const char *resource, const struct cJSON *obj);
/* Relist reconciliation for one resource ("services", "endpointslices",
 * "pods", "nodes", "namespaces", "serviceimports", "ciliumnodes",
 * "blockaffinities"): objects not upserted between begin and end
 * are removed at end. Between begin and end the objects themselves are
 * published one by one, but the address indexes the resource feeds
 * (EndpointSlices: PTR and the endpoints locator; Services: cluster IP →
 * services; pods: IP → pod; Nodes: address → node) show readers the
 * addresses the relist adds only at end, all at once (a changed or
 * removed address at once), as client-go's informer replaces its store
 * at the end of a list (CoreDNS). The writer itself sees every change at
 * once. Address ranges (ranges, prefix.h) are likewise published at end. */
void store_relist_begin(store *s, const char *resource);
void store_relist_end(store *s, const char *resource);

/* Helpers exposed for unit tests. */
int st_parse_ip(const char *text, st_ip *out);
/* Kubernetes CPU quantity → millicores, rounded up; -1 when malformed,
 * negative, or above 4294967295 (what st_node.cpu_milli holds). */
long st_cpu_milli(const char *quantity);

#endif
