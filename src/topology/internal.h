/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.h — the engine's insides, shared by its files: engine.c (life,
 * client location, marks, counters), decide.c (the rules), compute.c
 * (hints topodns computes itself), observer.c (the background pass). See
 * topology.h for who writes and reads each part and when it is freed.
 */
#ifndef TOPODNS_TOPO_INTERNAL_H
#define TOPODNS_TOPO_INTERNAL_H

#include <stdatomic.h>
#include "cluster/pmap.h"
#include "topology/alloc.h"
#include "topology/topology.h"

struct metric_family;
struct observer;

/* Node-derived inputs of the computed producers, for one node version of
 * the store: immutable once published. */
typedef struct zone_inputs {
    uint64_t version;               /* store_nodes_version() it was built from */
    ta_ratios ratios;               /* Auto: CPU per zone */
    ta_zone_nodes zones[TA_MAX_ZONES];   /* Local: nodes per zone */
    size_t nzones;
} zone_inputs;

struct topo_engine {
    topo_cfg cfg;                   /* setup; read-only afterwards */
    store *st;                      /* bound at start */
    topo_post_fn post;              /* bound at start, may be NULL: Events */
    void *post_ctx;
    zone_inputs *_Atomic zones;     /* the latest snapshot, or NULL */
    pmap *prefer;                   /* "ns/name/family" → int on (observer writes) */
    _Atomic uint64_t state_version; /* bumped after every prefer change */
    struct metric_family *answers;  /* topodns_topology_answers_total */
    /* its series by policy and outcome, looked up on first use by any
     * worker (a pointer store; every writer stores the same pointer) */
    struct metric_series *_Atomic answer_series[TP_COUNT][TO_COUNT];
    struct metric_family *services; /* topodns_topology_services */
    /* topodns_locator_lookups_total: its series by topo_loc.via, made at
     * engine_new for the configured sources, node and unknown (NULL for a
     * via this engine never yields) */
    struct metric_series *lookups[LOC_VIA_COUNT];
    struct observer *obs;           /* observer.c, NULL when not running */
};

/* A hint as the consumer sees it: at most one zone and one node for
 * computed hints (real hints are read from the endpoint itself). */
typedef struct vhint {
    const char *zone;
    const char *node;
} vhint;

/* What a Service asks for when rule 5 applies, TP_NONE when nothing. */
topo_policy topo_computed_policy(const st_service *svc);

/* Computed hints for the endpoints in idx[0..n) (one family): fills v[i]
 * for idx[i]. eps may be NULL when n is 0 (a Service without endpoints:
 * the topology observer asks about every Service). Returns 1 when hints exist, 0 when the producer declined
 * (why gets the reason, e.g. the allocator's event message). Inside a
 * read-side section. */
int topo_compute_hints(topo_engine *e, topo_policy p, const st_service *svc,
                       const st_endpoints *eps, const size_t *idx, size_t n, int family,
                       vhint *v, char *why, size_t wlen);

/* The policy rules 1–5 would apply to one family of a Service
 * (TP_NONE: every endpoint). */
topo_policy topo_policy_for(const topo_cfg *cfg, const st_service *svc, const st_endpoints *eps,
                            int family);

/* same-zone Prefer hysteresis: whether Prefer was active for a Service and
 * family at the observer's last pass (the observer writes, workers read). */
void topo_prefer_state_set(topo_engine *e, const char *ns, const char *name, int family, int on);
int topo_prefer_state_get(topo_engine *e, const char *ns, const char *name, int family);

/* Zones are compared without case (the store lower-cases slice zones). */
int topo_zone_eq(const char *a, const char *b);

#endif
