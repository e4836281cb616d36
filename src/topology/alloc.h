/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc.h — hint producers for Services whose slices carry no hints: pure
 * functions over plain C arrays (no store, no globals, no allocation).
 *
 *   alloc_cpu.c     "Auto" (topology-mode / topology-aware-hints): a port of
 *                   the EndpointSlice controller's proportional-by-CPU
 *                   allocator — zone CPU ratios from the nodes, per-zone
 *                   minimum/maximum/desired, AddHints over slices to create,
 *                   update or leave unchanged, giving/receiving zones,
 *                   redistribution, the node-change overload re-check.
 *   trafficdist.c   trafficDistribution PreferClose/PreferSameZone/
 *                   PreferSameNode (own zone, own node), the "needs update"
 *                   check per slice, and which producer a Service selects
 *                   (annotation Auto beats the field).
 *   alloc_local.c   same-zone "Prefer": the KEP 2004 drafts' Local algorithm
 *                   (expected endpoints by node share, starting threshold
 *                   3 × zones with padding, 50 % overload, downgrade).
 *
 * Zones compare without case (the store lower-cases slice zones; node labels
 * keep theirs). Where the Go code iterates a map (random order), we iterate
 * zones sorted by name, so results are deterministic. The decision tables
 * are in docs/topology.md ("Producers").
 */
#ifndef TOPODNS_TOPO_ALLOC_H
#define TOPODNS_TOPO_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define TA_MAX_ZONES 64
#define TA_MAX_TALLY (2 * TA_MAX_ZONES)  /* zones of ratios + zones only endpoints name */
#define TA_OVERLOAD_THRESHOLD 0.2        /* the controller's single constant */
#define TA_LOCAL_OVERLOAD 0.5            /* KEP 2004 draft default */

/* Reasons. 0 = hints allocated / Prefer active. */
enum {
    TA_OK = 0,
    TA_R_INSUFFICIENT_NODE_INFO,   /* InsufficientNodeInfo */
    TA_R_ONE_ZONE,                 /* NodesReadyInOneZoneOnly */
    TA_R_INSUFFICIENT_ENDPOINTS,   /* InsufficientNumberOfEndpoints */
    TA_R_MIN_EXCEEDS_OVERLOAD,     /* MinAllocationExceedsOverloadThreshold */
    TA_R_NO_ZONE,                  /* NoZoneSpecified */
    TA_R_NO_HINTS_ALLOCATED,       /* NoAllocatedHintsForZones */
    TA_R_TOO_MANY_ZONES,           /* ours: more zones than TA_MAX_ZONES */
    TA_R_DISABLED,                 /* TopologyAwareHintsDisabled (annotation off) */
    TA_L_BELOW_THRESHOLD,          /* Local: fewer endpoints than threshold±padding */
    TA_L_DOWNGRADED,               /* Local: a zone stays overloaded → Balanced */
    TA_R_COUNT
};

/* Reason name ("InsufficientNodeInfo", ...; 0: "TopologyAwareHintsEnabled"). */
const char *ta_reason_name(int reason);

/* One endpoint (one address of one family). ready: conditions.ready == true. */
typedef struct ta_ep {
    const char *zone;              /* NULL or "": none */
    const char *node;              /* nodeName, NULL or "": none */
    int ready;
} ta_ep;

/* Hints an endpoint already carries (for the "unchanged slice" checks).
 * present == 0: hints nil; present with nzones == 0: forZones empty. */
typedef struct ta_hint {
    int present;
    const char *const *zones;
    size_t nzones;
    const char *const *nodes;
    size_t nnodes;
} ta_hint;

/* ---- zone CPU ratios (2.3 A) ---------------------------------------------------- */

typedef struct ta_node {
    const char *zone;              /* NULL or "": label missing */
    uint64_t cpu_milli;            /* allocatable CPU rounded up; 0: missing */
    int ready;                     /* Ready condition True */
    int control_plane;             /* node-role.kubernetes.io/control-plane or master */
} ta_node;

enum { TA_RATIOS_OK = 0, TA_RATIOS_INSUFFICIENT, TA_RATIOS_ONE_ZONE, TA_RATIOS_TOO_MANY_ZONES };

typedef struct ta_zone_ratio {
    const char *zone;
    uint64_t milli;                /* CPU of the zone's counted nodes */
    double ratio;                  /* milli / total milli */
} ta_zone_ratio;

typedef struct ta_ratios {
    int status;                    /* TA_RATIOS_*; n and z[] valid only when OK */
    size_t n;
    ta_zone_ratio z[TA_MAX_ZONES]; /* sorted by zone name (tests may fill any order) */
} ta_ratios;

/* Zone ratios from the node set; returns out->status. */
int ta_zone_ratios(const ta_node *nodes, size_t n, ta_ratios *out);

/* ---- allocation for one Service and family (2.3 B) ------------------------------- */

typedef struct ta_alloc {
    int minimum, maximum;
    double desired;                /* max(ratio × N, minimum) */
} ta_alloc;

/* a[i] for r->z[i]; returns a reason (TA_OK, INSUFFICIENT_NODE_INFO, ONE_ZONE,
 * INSUFFICIENT_ENDPOINTS, MIN_EXCEEDS_OVERLOAD, TOO_MANY_ZONES). */
int ta_allocations(const ta_ratios *r, size_t n_ready, ta_alloc *a);

/* The event message for a reason: "<message>, addressType: IPv4|IPv6".
 * family 4 or 1: IPv4, 6 or 2: IPv6. n = endpoints, zones = ratio zones. */
void ta_reason_message(int reason, size_t n, size_t zones, int family, char *buf, size_t len);

/* ---- per-zone counts ------------------------------------------------------------- */

typedef struct ta_tally {
    size_t n;
    const char *zone[TA_MAX_TALLY];
    int count[TA_MAX_TALLY];
} ta_tally;

int ta_tally_get(const ta_tally *t, const char *zone);           /* 0 when absent */
int ta_tally_add(ta_tally *t, const char *zone, int delta);     /* -1: full */

/* ---- AddHints (2.3 C) ------------------------------------------------------------ */

enum { TA_SLICE_CREATE, TA_SLICE_UPDATE, TA_SLICE_UNCHANGED };

/* One slice: eps[i], its existing hints have[i] (NULL: none; read for
 * unchanged slices only), and out[i], written for slices that end up in
 * CREATE or UPDATE: the zone endpoint i is hinted to, NULL for no hint.
 * A slice that stays UNCHANGED keeps its hints (out untouched). */
typedef struct ta_slice {
    int kind;                      /* TA_SLICE_*; unchanged → UPDATE when invalid */
    int moved;                     /* out: was UNCHANGED, moved to UPDATE */
    const ta_ep *eps;
    const ta_hint *have;
    const char **out;
    size_t n;
} ta_slice;

/* The controller's AddHints for one Service and family. Returns TA_OK with
 * tally = per-zone hinted counts, or a reason with every hint removed
 * (unchanged slices that carried hints move to UPDATE). msg gets the event
 * message (enabled or disabled), addressType suffixed. */
int ta_add_hints(const ta_ratios *r, ta_slice *s, size_t ns, int family, ta_tally *tally,
                 char *msg, size_t msglen);

/* The entry point for the DNS server: every endpoint in one slice to update.
 * hint_zone[i] = the zone endpoint i is hinted to (NULL: none). Returns 0
 * when hints were allocated, else the reason; msg gets the event message. */
int ta_auto_hints(const ta_ratios *r, const ta_ep *eps, size_t n, int family,
                  const char **hint_zone, char *msg, size_t msglen);

/* Pieces of AddHints, exported for the upstream test tables. */
/* getGivingAndReceivingZones: give[i]/receive[i] for r->z[i]. */
void ta_giving_receiving(const ta_ratios *r, const ta_alloc *a, const ta_tally *t, int *give,
                         int *receive);
/* redistributeHints over the CREATE/UPDATE slices, in that order (moved last);
 * give/receive are consumed; diff gets the per-zone change. */
void ta_redistribute(const ta_ratios *r, ta_slice *s, size_t ns, int *give, int *receive,
                     ta_tally *diff);
/* getHintsByZone for one unchanged slice: 1 and out = its counts when its
 * hints are valid against a (and already allocated), 0 when invalid. */
int ta_hints_by_zone(const ta_ratios *r, const ta_alloc *a, const ta_slice *s,
                     const ta_tally *already, ta_tally *out);

/* ---- node-change overload re-check (2.3 D) ---------------------------------------- */

/* 1 when a Service with these per-zone hint counts must be re-synced after
 * the ratios changed (r->status != OK counts as "no ratios"). */
int ta_overloaded(const ta_ratios *r, const ta_tally *t);

/* ---- trafficDistribution (4.2) ---------------------------------------------------- */

enum { TA_TD_NONE = 0, TA_TD_PREFER_CLOSE, TA_TD_PREFER_SAME_ZONE, TA_TD_PREFER_SAME_NODE };

/* Hints for every endpoint: ready ones get zone_hint = own zone (NULL when
 * none) and, for PREFER_SAME_NODE, node_hint = own node; everything else
 * NULL. TA_TD_NONE clears all. node_hint may be NULL. */
void ta_trafficdist_hints(int kind, const ta_ep *eps, size_t n, const char **zone_hint,
                          const char **node_hint);

/* 1 when an unchanged slice's existing hints (have, may be NULL) differ from
 * what kind would write, so the controller would rewrite it. */
int ta_trafficdist_stale(int kind, const ta_ep *eps, const ta_hint *have, size_t n);

/* Which producer runs (4.2): TA_SRC_AUTO when the effective annotation
 * (old key when present at all, even empty, else topology-mode) is "Auto" or
 * "auto"; else the trafficDistribution value when valid (PreferClose always;
 * PreferSameZone / PreferSameNode only with the PreferSameTrafficDistribution
 * gate); else TA_SRC_NONE (hints removed). NULL = absent. */
enum { TA_SRC_NONE = 0, TA_SRC_AUTO, TA_SRC_TD_ZONE, TA_SRC_TD_NODE };
int ta_hint_source(const char *old_annotation, const char *topology_mode,
                   const char *traffic_distribution, int pstd_gate);

/* ---- same-zone Prefer: the Local algorithm (KEP 2004 drafts) ----------------------- */

typedef struct ta_zone_nodes {
    const char *zone;
    size_t nodes;                  /* ready, non-control-plane nodes in the zone */
} ta_zone_nodes;

#define TA_LOCAL_DEFAULT_PADDING ((size_t)-1)   /* padding = number of zones */

typedef struct ta_local_zone {
    const char *zone;              /* NULL: endpoints without a zone */
    size_t nodes;
    double expected;               /* ready × nodes / total nodes */
    int own;                       /* ready endpoints in the zone */
    int assigned;                  /* endpoints in the zone's group */
    size_t scan;                   /* internal: where the next donor search starts */
} ta_local_zone;

typedef struct ta_local_plan {
    int prefer;                    /* 1: Prefer active */
    int reason;                    /* TA_OK, TA_R_INSUFFICIENT_NODE_INFO (no zone with
                                    * nodes), TA_R_ONE_ZONE, TA_L_BELOW_THRESHOLD,
                                    * TA_L_DOWNGRADED, TA_R_TOO_MANY_ZONES */
    size_t ready, zones;           /* N, zones with nodes */
    size_t threshold, padding;
    size_t moves;                  /* endpoints moved to another zone's group */
    size_t nz;
    ta_local_zone z[TA_MAX_TALLY + 1];
} ta_local_plan;

/* The overload of a zone: extra traffic per endpoint relative to an even
 * spread = expected / assigned − 1 (infinite when assigned is 0 and
 * expected > 0; −1 when expected is 0). */
double ta_local_overload(double expected, int assigned);

/* Full computation; group_zone[i] = the zone whose clients get endpoint i
 * (NULL for non-ready endpoints, and for all when Balanced). prev_on: Prefer
 * was active at the previous computation (hysteresis). Returns plan->prefer. */
int ta_local_plan_compute(const ta_zone_nodes *zones, size_t nzones, const ta_ep *eps, size_t n,
                          int prev_on, size_t padding, const char **group_zone,
                          ta_local_plan *plan);

/* The entry point for the DNS server (default padding); msg gets a one-line
 * reason (no addressType suffix). 1: Prefer active, 0: Balanced. */
int ta_local_groups(const ta_zone_nodes *zones, size_t nzones, const ta_ep *eps, size_t n,
                    int prev_on, const char **group_zone, char *msg, size_t msglen);

#endif
