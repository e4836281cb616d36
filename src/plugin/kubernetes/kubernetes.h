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
 * Layers with a header of their own: scratch.h (the containers, at the
 * bottom), context.h (the cluster context and the sync rule), chase.h (the
 * chase and its callback); each includes this one or is included by it.
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

/* ---- label selectors (selector.c) -------------------------------------- */
enum { SEL_EQ, SEL_NE, SEL_IN, SEL_NOTIN, SEL_EXISTS, SEL_NOTEXISTS };

typedef struct sel_req {
    char *key;
    int op;
    char **values;
    int nvalues;
} sel_req;

typedef struct kselector {
    sel_req *reqs;
    int n;
} kselector;

/* Parse "a=b,c in (d, e),!f"; 0, or -1 with a message in err. */
int ksel_parse(const char *text, kselector *out, char *err, size_t errlen);
/* Canonical text for the API's labelSelector parameter (malloc'd). */
char *ksel_render(const kselector *s);
/* 1 when labels (n pairs) satisfy every requirement. */
int ksel_match(const kselector *s, const st_label *labels, size_t n);
void ksel_free(kselector *s);

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

/* ---- names (names.c) ---------------------------------------------------- */
enum { K_OK = 0, K_NOITEMS, K_INVALID, K_NSNOTEXPOSED, K_FAIL };
enum { KR_NONE = 0, KR_SVC, KR_POD };
enum { ZONAL_NONE = 0, ZONAL_PIN, ZONAL_PREFER };

#define KLABEL 256                  /* one label in text form, escaped */

typedef struct kreq {
    int podsvc;                     /* KR_NONE for the apex, svc.Z, pod.Z */
    char ns[KLABEL], service[KLABEL], endpoint[KLABEL], port[KLABEL], proto[KLABEL];
    char cluster[KLABEL];           /* multicluster <ep>.<cluster>.<svc>... */
    int zonal;                      /* ZONAL_* */
    char topo_zone[DNAME_STR_MAX];
} kreq;

/* Parse a lower-cased name under a zone of zone_labels labels (CoreDNS
 * parseRequest, plus the zonal form when zonal is on). K_OK or K_INVALID. */
int kube_parse(const uint8_t *name, int zone_labels, int zonal, kreq *out);
/* The same in a multicluster zone when multicluster is set: two labels
 * left of the service are <endpoint>.<cluster> unless either starts with
 * '_', and there are no zonal names. */
int kube_parse_mc(const uint8_t *name, int zone_labels, int zonal, int multicluster, kreq *out);
/* One wire label as text, with Go's escapes (\. \\ \DDD ...). */
size_t kube_label_text(const uint8_t *label, char *out, size_t cap);
/* The endpoint name of an address (hostname, pod name with
 * endpoint_pod_names, dashed IP). Returns out. */
const char *kube_endpoint_name(const st_endpoint *ep, int pod_names, char *out, size_t cap);
/* The dashed form of an address as written ("fd00::" → "fd00--0"). */
void kube_dashed_ip(const char *addr, char *out, size_t cap);
/* Pod label → address text as CoreDNS builds it ("1-2-3-4" → "1.2.3.4",
 * "fd00--1" → "fd00::1"). */
void kube_pod_label_ip(const char *label, char *out, size_t cap);
/* Full reverse name → address: 1 when name is a complete IPv4 (4 labels)
 * or IPv6 (32 nibbles) reverse name. */
int kube_reverse_addr(const uint8_t *name, st_ip *out);
/* 1 when the name lies under in-addr.arpa. or ip6.arpa. */
int kube_is_reverse(const uint8_t *name);

/* ---- lookups (lookup.c) ------------------------------------------------- */

struct lookup_set;

typedef struct kq {
    kube *k;
    store *st;
    dns_req *r;
    const handler *h;
    int zi;                         /* matched zone */
    const uint8_t *zone_q;          /* the zone as the client spelled it */
    karena arena;
    int truncated;
    int zonal_hit;                  /* a zonal name matched a headless service */
    int want_soa;                   /* SOA query at the apex */
    int need_keys;                  /* build entry domains (SRV targets) */
    /* bounded answers (answer.c): a reply sent as is (no write hook) can
     * carry at most `budget` octets of records; the record builders stop
     * once the records built cannot all fit (their smallest encodings add
     * up to more), since the encoder would drop the rest anyway. */
    size_t budget;                  /* SIZE_MAX: build every record */
    size_t entry_cap;               /* kube_services: at most this many
                                     * address entries (0: no cap) ... */
    int entries_cut;                /* ... and it stopped there */
    int cut;                        /* the records are such a prefix */
    int plain;                      /* sent uncompressed when it fits 64 KB (TCP) */
    int topo_quiet;                 /* a rebuild: do not count topology again */
    uint64_t sver, tver;            /* store and topology versions loaded
                                     * before the lookup (topo.c's cache) */
    /* topology (topo.c) */
    int located;                    /* loc filled for this query */
    topo_loc loc;
    int topo_dep;                   /* TOPO_DEP_* the answer depended on */
    int topo_counts;                /* topo_count() calls for this answer */
    int topo_policy, topo_outcome;  /* the last one's labels */
    /* out-of-zone CNAME targets (chase.c) */
    int no_chase;                   /* only the rcode matters: do not chase */
    struct lookup_set *chases;      /* made on the first one */
    size_t nchases;
} kq;


/* CoreDNS Records(): entries for a lower-cased name (never the ns.dns /
 * TXT / NS special cases). */
int kube_records(kq *q, const uint8_t *name, kvec *out);
/* CoreDNS Services(): Records plus the TXT, NS, ns.dns and SRV rules. */
int kube_services(kq *q, const uint8_t *name, uint16_t qtype, kvec *out);
/* 1 when the namespace is exposed (namespaces list and watched set). */
int kube_ns_exposed(kq *q, const char *ns);

/* ---- answers (answer.c, apex.c) ------------------------------------------ */


int kube_serve(const handler *h, dns_req *r);
/* metadata.c: the plugin_def.metadata provider. */
void kube_metadata(const handler *h, dns_req *r);
/* ptr.c: PTR for a lower-cased name (reverse or not). */
int kube_ptr(kq *q, const uint8_t *name, krrvec *out);
/* SOA of the matched zone (owner = the zone as queried) into a section. */
int kube_add_soa(kq *q, dns_msg *m, int sec);
/* CoreDNS nsAddrs(): entries (key = NS name, ip = glue) for the zone. */
int kube_ns_addrs(kq *q, kvec *out);
/* The Services with an endpoint at ip (this server's own address: the
 * Services fronting it), each once, at most max of them, into out; their
 * number. Inside the store's read-side section. */
#define KUBE_MAX_NS_SVCS 16
/* A port's protocol as SRV names spell it ("TCP"), "" for a portless
 * entry (port -1). */
const char *kube_proto_name(const st_port *p);
int kube_services_at(store *st, const st_ip *ip, const st_service **out, int max);

/* topo.c: which endpoints of a headless service this query's client gets
 * (keep[i] per eps->eps[i], arena memory), or NULL when no topology applies
 * (no directive, not headless). Records q->topo_dep and counts the outcome. */
const uint8_t *kube_topo_keep(kq *q, const st_service *svc, const st_endpoints *eps);
/* topo.c: find the block's topology directive (at start). */
void kube_topo_attach(kube *k);
/* topo.c: free every worker's cache of decisions (destroy). */
void kube_topo_free(kube *k);
/* topo.c: the client's value in dimension dep (TOPO_DEP_*), as
 * topo_client_variant() writes it (the cache plugin's key): "", "?",
 * "z:<zone>" or "n:<node>", from a location; its length, or SIZE_MAX when
 * it does not fit cap (then nothing is memoised or looked up for it). */
size_t kube_loc_variant(const topo_loc *loc, int dep, char *out, size_t cap);

/* rendered.c: pre-rendered answers (see its top comment). */
struct krend;
/* 1 unless TOPODNS_NO_PRERENDER is set (and not "0"). */
int kube_rend_env(void);
/* Answer r from the memo of its worker: the rcode written, or -1 when the
 * slow path must answer (no entry, stale, not eligible, too large). low is
 * the lower-cased qname; sver/tver the store and topology versions loaded
 * before any lookup. */
int kube_rend_serve(kube *k, const handler *h, dns_req *r, const uint8_t *low, uint64_t sver,
                    uint64_t tver);
/* Memoise the answer the slow path just built for q (when it qualifies). */
void kube_rend_store(kq *q, const uint8_t *low, const krrvec *ans, uint64_t sver, uint64_t tver);
/* Free every worker's memo (destroy: the workers stopped). */
void kube_rend_free(kube *k);


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
