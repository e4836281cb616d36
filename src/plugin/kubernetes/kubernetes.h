/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubernetes.h — the kubernetes plugin: cluster names answered from the
 * cluster store, exactly as CoreDNS's plugin/kubernetes answers them.
 *
 * The plugin is split so that the part answering queries can be tested with
 * a store filled directly from JSON, without any API server:
 *
 *   kubernetes.c  plugin glue: start/stop, the API client and its reflector
 *                 handlers (store writers), sync wait, metrics, test hooks
 *   setup.c       the Corefile stanza (every option of CoreDNS's)
 *   selector.c    Kubernetes label selectors: parse, render, match
 *   names.c       the name grammar (CoreDNS parseRequest), endpoint names,
 *                 pod labels and reverse names → addresses
 *   lookup.c      "services" for a name (CoreDNS Records/findServices/
 *                 findPods/Services), the zonal filter
 *   answer.c      records per qtype (CoreDNS backend_lookup A/AAAA/TXT/
 *                 CNAME/SRV/NS/SOA) and serve() with the rcode rules
 *   ptr.c         PTR (CoreDNS Reverse/serviceRecordForIP)
 *   apex.c        SOA, the NS records and ns.dns addresses
 *   topo.c        headless answers by topology: the block's engine
 *                 (src/topology/) decides which endpoints a client gets
 *   rendered.c    pre-rendered answers: a per-worker memo of A/AAAA
 *                 answers in wire form (the fast path; its top comment
 *                 has the rules)
 *   chase.c       out-of-zone ExternalName targets: a query through the
 *                 server's own chain, asynchronous (kube_serve returns
 *                 REQ_ASYNC and the reply is written when it answered)
 *   xfr.c         the zones as a transfer source for the transfer plugin
 *                 (AXFR/IXFR, src/server/transfer.h)
 *   autopath.c    client search paths for the autopath plugin
 *                 (`autopath @kubernetes`, src/server/autopath.h)
 *   external.c    Services' external addresses for the k8s_external
 *                 plugin (src/server/external.h)
 *   metadata.c    kubernetes/... metadata for the metadata plugin
 *   scratch.c     per-query containers (arena, entries, records, dedup
 *                 sets; scratch.h), used by every file, calling none
 *   zone.c        which plugin zone a name is under (kube_match_zone)
 *   programming.c the DNS programming latency metric of a slice
 *
 * One header per layer: scratch.h (the containers) and selector.h at the
 * bottom, names.h (the name grammar), this one (configuration and state,
 * the sources published to other plugins, test hooks), lookup.h (a query:
 * lookups, answers, topology, pre-rendered answers), context.h (the
 * cluster context and the sync rule), chase.h (the chase and its
 * callback).
 *
 * Calls run one way (README.md, "File layering"): kubernetes.c above the
 * rest, answer.c above lookup/ptr/apex/chase/rendered, scratch.c at the
 * bottom; chase.c answers through the callback answer.c hands it.
 *
 * Everything below is private to src/plugin/kubernetes/ and its unit tests.
 */
#ifndef TOPODNS_KUBERNETES_H
#define TOPODNS_KUBERNETES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "cluster/store.h"
#include "cluster/locator.h"
#include "common/resolvconf.h"
#include "server/plugin.h"
#include "plugin/kubernetes/scratch.h"
#include "plugin/kubernetes/selector.h"
#include "wire/dname.h"

extern const plugin_def plugin_kubernetes;

#define KUBE_MAX_ZONES 256   /* a CIDR zone alone may give 128 (server/zone.h) */
#define KREND_MAX_WORKERS 256       /* workers with a memo; more: slow path */
#define KREND_SLOTS 4096            /* entries per worker (a power of 2) */
#define KREND_MAX_WIRE 2048         /* largest reply memoised (no OPT) ... */
#define KREND_BIG_MAX 16            /* ... but for this many TCP answers per
                                     * worker, of up to 64 KB (rendered.c) */
#define KREND_MAX_VARIANT 264       /* "n:" + a node name */
#define KUBE_MAX_SELF 32

enum { POD_DISABLED, POD_INSECURE, POD_VERIFIED };

/* ---- configuration and state ------------------------------------------- */
typedef struct kube {
    /* zones, lower-case, fully qualified */
    char zones[KUBE_MAX_ZONES][DNAME_STR_MAX];
    uint8_t zwire[KUBE_MAX_ZONES][DNAME_MAX];
    int zlabels[KUBE_MAX_ZONES];
    /* zones i .. i + zrun[i] - 1 share zone i's parent and label count (the
     * reverse zones one CIDR splits into): kube_match_zone() compares their
     * parent once (setup.c; >= 1) */
    int zrun[KUBE_MAX_ZONES];
    int nzones;
    int primary;                    /* index of the first forward zone */
    /* API */
    char *endpoint;
    char *tls_cert, *tls_key, *tls_ca;
    char *kubeconfig, *kcontext;
    unsigned long qps, burst, max_inflight;
    double startup_timeout;
    /* what is exposed */
    char **namespaces;
    int nnamespaces;
    kselector ns_sel, label_sel;
    char *ns_selector, *label_selector;     /* rendered, NULL when unset */
    int pod_mode;
    int endpoint_pod_names;
    uint32_t ttl;
    int noendpoints;
    int fall;                       /* fallthrough given */
    uint8_t (*fall_zones)[DNAME_MAX];
    int nfall;                      /* 0 with fall: every name */
    int ignore_empty;
    int zonal;
    uint8_t (*mc_zones)[DNAME_MAX]; /* multicluster ZONES (MCS API) */
    int nmc;
    uint8_t zone_mc[KUBE_MAX_ZONES];/* zones[i] lies in a multicluster zone */
    char *stanza;                   /* every token of the directive, a line per
                                     * line (part of the context's fingerprint) */
    resolv_search search;           /* /etc/resolv.conf's search list (autopath) */
    /* runtime */
    struct instance *ins;
    struct server_block *blk;
    struct kube_ctx *ctx;           /* the cluster context (context.c) */
    store *st;                      /* ctx->st, for the serving path */
    st_ip self[KUBE_MAX_SELF];      /* "our own addresses" for NS */
    int nself;
    int self_done;
    struct topo_engine *topo;       /* the block's topology engine, or NULL */
    struct metric_family *m_programming;  /* the instance registry's */
    /* pre-rendered answers (rendered.c): on unless TOPODNS_NO_PRERENDER;
     * rend[i] is worker i's memo, touched by that worker's thread only,
     * freed by destroy */
    int prerender;
    int rend_unthreaded;            /* tests: requests without a worker use
                                     * rend[0] (kubernetes_set_prerender) */
    struct krend *rend[KREND_MAX_WORKERS];
    /* topology decisions for large Services (topo.c): topo_cache[i] is
     * worker i's, as rend[i]; freed by destroy (kube_topo_free) */
    struct ktopo *topo_cache[KREND_MAX_WORKERS];
} kube;


/* setup.c */
int kube_setup(cf_disp *d, setup_ctx *ctx, void **inst);
void kube_free_config(kube *k);

/* kubernetes.c */
/* Our own non-loopback addresses (bind list, getifaddrs, or the
 * TOPODNS_SELF_IPS override), computed once. */
void kube_self_ips(kube *k);

/* xfr.c: publish the instance's zones as a transfer source in its block
 * (src/server/transfer.h; at setup). 0, or -1. */
struct server_block;
int kube_publish_transfer(kube *k, struct server_block *blk);

/* external.c: publish the external data source in the block
 * (src/server/external.h; at setup). 0, or -1. */
int kube_publish_external(kube *k, struct server_block *blk);

/* autopath.c: publish the client search path source in the block
 * (src/server/autopath.h; at setup). 0, or -1. */
int kube_publish_autopath(kube *k, struct server_block *blk);
/* The search list of a client pod in namespace ns for a query in zone zi
 * (CoreDNS's AutoPath). Returns out->n. */
struct autopath_list;
int kube_autopath_list(const kube *k, int zi, const char *ns, struct autopath_list *out);
/* zone.c: the index of the longest plugin zone holding the lower-cased
 * name, or -1. */
int kube_match_zone(const kube *k, const uint8_t *lname);

/* programming.c (the first), kubernetes.c (the second): record
 * coredns_kubernetes_dns_programming_duration_seconds
 * in m for one EndpointSlice add/update (API thread), when st holds the
 * slice's Service and it is headless; the second form with k's family and
 * store, for tests. */
struct cJSON;
void kube_programming_observe(struct metric_family *m, store *st, const struct cJSON *slice);
void kube_record_programming(kube *k, const struct cJSON *slice);

/* ---- test hooks ----------------------------------------------------------- */
/* The store of an instance, created on first use (tests fill it directly;
 * the block's topology engine, if any, is bound to it). */
store *kubernetes_store(void *inst);
/* Pretend the API watches are (not) synced. */
void kubernetes_set_synced(void *inst, int synced);
/* Pre-rendered answers on or off for an instance (whatever the
 * environment said); with on, requests served by no worker (the internal
 * requests of unit tests and fuzz harnesses, one thread only) use worker
 * 0's memo, so that such tests reach the fast path. */
void kubernetes_set_prerender(void *inst, int on);

#endif
