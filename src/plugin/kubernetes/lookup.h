/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup.h — the query layer of the plugin: a query's state (kq), the
 * lookups (lookup.c: CoreDNS Records/Services), the answers (answer.c,
 * apex.c, ptr.c), topology (topo.c) and the pre-rendered answers
 * (rendered.c). Above names.h, selector.h and scratch.h; kubernetes.c and
 * the sources published to other plugins (xfr.c, autopath.c,
 * external.c, metadata.c) sit above it.
 *
 * Threads and memory: a kq lives on the stack of the worker serving one
 * query; what its lookups allocate comes from its arena (scratch.h) and is
 * freed with it when the answer is written. The store is read inside its
 * read-side section (store_read_begin/end) around a lookup; records built
 * from it copy what they keep, so an answer outlives the section.
 */
#ifndef TOPODNS_KUBE_LOOKUP_H
#define TOPODNS_KUBE_LOOKUP_H

#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/names.h"

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

#endif
