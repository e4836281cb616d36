/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology.h — the topology engine: which endpoints of a headless Service a
 * given client receives.
 *
 * Data path of one query (A, AAAA or SRV on a headless Service name):
 *
 *   kubernetes plugin ──► topo_locate()    client address (source, or ECS
 *                          │               from a trusted client_subnet)
 *                          │               → pod → node → zone/labels
 *                          ▼               (src/cluster/locator.c)
 *                        topo_select()     the Service's policy, rules 1–6
 *                          │               of docs/topology.md, per address
 *                          │               family → a keep[] mask over the
 *                          │               merged endpoints (decide.c)
 *                          ▼
 *                        topo_mark()       what the answer depended on
 *                                          (none / zone / node, and whether
 *                                          ECS was used): ECS scope on the
 *                                          reply and the cache variant
 *
 * One engine per server block with a `topology` directive. The topology
 * plugin parses the directive into a topo_cfg, creates the engine at setup
 * and publishes it as the block value TOPO_ENGINE_KEY (server.h); the
 * kubernetes plugin of the block finds it there at start, binds it to its
 * cluster context (topo_engine_bind: the store, and a function that posts
 * Events through its API client) and asks it for decisions; the cache finds it to key answers by
 * the client's variant. Without the directive nothing here runs and
 * answers are CoreDNS's.
 *
 * The engine knows nothing of the server: who asks comes in as a
 * topo_client (plain values the caller copies out of its request, see
 * server/reqtopo.h), and what an answer depended on goes back through
 * topo_mark() into two bytes the caller owns.
 *
 * Ownership and threads: the topology plugin owns the engine (frees it in
 * destroy, after every thread using it stopped). Its state:
 *   - the configuration: written at setup, read-only afterwards;
 *   - the bound store and Event poster: written once at start (loading
 *     thread), before any worker runs; both are the kubernetes plugin's;
 *   - the node-derived zone inputs (CPU ratios, nodes per zone) for the
 *     computed producers: an immutable snapshot computed by the first reader
 *     that needs it after the store's node set changed and published with
 *     an atomic compare-and-swap; a replaced snapshot is freed after an RCU
 *     grace period (readers hold store_read_begin()/_end());
 *   - the same-zone Prefer on/off state (hysteresis): written by the
 *     observer thread (observer.c), read lock-free by workers (a pmap);
 *   - the observer: one background thread per engine (metrics gauges,
 *     Events, the Prefer state), started and stopped by the plugin.
 * Producers that a cluster may lack — the proportional-CPU "Auto"
 * allocator, trafficDistribution hints, the same-zone Prefer "Local"
 * algorithm — live in alloc.h and are pure functions.
 */
#ifndef TOPODNS_TOPOLOGY_H
#define TOPODNS_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "common/cidr.h"
#include "cluster/store.h"
#include "cluster/locator.h"

/* What an answer depended on about its client (the request keeps the
 * largest one seen: dns_req.topo_dep). Ordered: NODE depends on more than
 * ZONE. */
enum { TOPO_DEP_NONE = 0, TOPO_DEP_ZONE = 1, TOPO_DEP_NODE = 2 };

enum { TOPO_HINTS_COMPUTE, TOPO_HINTS_CONSUME, TOPO_HINTS_OFF };

#define TOPO_MAX_SUBNETS 32

/* The directive's configuration (one per server block), parsed by the
 * topology plugin; the engine keeps its own copy. */
typedef struct topo_cfg {
    cidr subnets[TOPO_MAX_SUBNETS];          /* client_subnet: trusted ECS sources */
    int nsubnets;
    int hints;                               /* TOPO_HINTS_* (default compute) */
    int itp;                                 /* internal_traffic_policy on (default) */
    char *zone_label, *region_label;         /* NULL: the defaults */
    char *explain;                           /* explain ADDR, NULL when off */
    int events;                              /* post Kubernetes Events */
    char *node;                              /* node NAME: node-local mode (the
                                              * DaemonSet shape), NULL when off */
    loc_sources locate;                      /* locate SOURCE...: n 0 = `pods` */
} topo_cfg;

/* The block value under which the topology plugin publishes its engine. */
#define TOPO_ENGINE_KEY "topology.engine"

typedef struct topo_engine topo_engine;
struct metrics_registry;

/* Post one Kubernetes object (a core/v1 Event as JSON) to the API path:
 * fire and forget, never blocking. The engine knows no API client; the
 * kubernetes plugin binds one that posts through its own. Called on the
 * observer thread; path and json are only valid during the call. */
typedef void (*topo_post_fn)(void *ctx, const char *path, const char *json);

/* A new engine with a copy of cfg, reporting to reg (may be NULL). */
topo_engine *topo_engine_new(const topo_cfg *cfg, struct metrics_registry *reg);
/* Free (the observer stopped, no reader left). */
void topo_engine_free(topo_engine *e);
const topo_cfg *topo_engine_cfg(const topo_engine *e);
/* Bind the cluster context the engine decides over, and how Events are
 * posted (post NULL: they are not; post_ctx is passed to it and must
 * outlive the engine's observer). Once, at start, before serving and
 * before topo_observer_start (asserted). */
void topo_engine_bind(topo_engine *e, store *st, topo_post_fn post, void *post_ctx);
/* The bound store, NULL before topo_engine_bind. */
store *topo_engine_store(const topo_engine *e);

/* Free a topo_cfg's strings (not the struct). */
void topo_cfg_clear(topo_cfg *c);

/* Policies (the `policy` metric label) and outcomes (`outcome`). */
typedef enum {
    TP_NONE,              /* the Service asks for nothing: all ready endpoints */
    TP_TOPOLOGY_KEYS,     /* spec.topologyKeys / topodns.io/topology-keys */
    TP_ITP_LOCAL,         /* internalTrafficPolicy: Local */
    TP_SAME_ZONE_REQUIRE, /* same-zone: Require */
    TP_HINTS,             /* EndpointSlice hints written by a controller */
    TP_PREFER_SAME_NODE,  /* trafficDistribution: PreferSameNode, computed */
    TP_PREFER_SAME_ZONE,  /* PreferClose / PreferSameZone / routingPreference PreferZone, computed */
    TP_AUTO,              /* topology-mode Auto, computed by the CPU allocator */
    TP_SAME_ZONE_PREFER,  /* same-zone: Prefer, the Local algorithm */
    TP_COUNT
} topo_policy;

typedef enum { TO_LOCAL, TO_FALLBACK, TO_ALL, TO_EMPTY, TO_UNKNOWN_CLIENT, TO_COUNT } topo_outcome;

const char *topo_policy_name(topo_policy p);
const char *topo_outcome_name(topo_outcome o);

/* Explain trace: one line per rule tried (NULL: not recorded). */
#define TOPO_TRACE_MAX 24
typedef struct topo_trace {
    int n;
    struct { char rule[40]; char result[24]; char why[200]; } step[TOPO_TRACE_MAX];
    char source[64];                         /* where the policy came from */
} topo_trace;

typedef struct topo_result {
    topo_policy policy;
    topo_outcome outcome;
    int dep;                                 /* TOPO_DEP_* */
    size_t before, after;                    /* ready endpoints in, endpoints kept */
} topo_result;

/* Decide for one client which of eps->eps[] a query of the given families
 * (bit 1 = IPv4, bit 2 = IPv6; SRV asks for both) may return. keep[i] is set
 * to 1 for each kept endpoint (only ready ones are ever kept); families are
 * decided independently, as kube-proxy does per address type. Inside
 * store_read_begin/_end; allocates only for very large Services. */
void topo_select(topo_engine *e, const st_service *svc, const st_endpoints *eps,
                 const topo_loc *loc, int families, uint8_t *keep, topo_result *res,
                 topo_trace *tr);

/* Who is asking, as plain values: the caller fills one from its request
 * (the server's req_topo_client() does) and keeps it for as long as it
 * likes; the engine only reads it, during the call it is passed to.
 * Nothing in it points anywhere. */
typedef struct topo_client {
    struct sockaddr_storage peer;            /* source address; ss_family
                                              * AF_UNSPEC when there is none
                                              * (an internal request) */
    int has_ecs;                             /* the query carried an ECS option */
    uint16_t ecs_family;                     /* 1 = IPv4, 2 = IPv6 (RFC 7871) */
    uint8_t ecs_source_prefix;               /* 0: the client asks us not to use it */
    uint8_t ecs_addr[16];                    /* zero-padded past the prefix */
} topo_client;

/* The address to locate for a client: the ECS address when the query came
 * from a client_subnet source of c (NULL: none trusted) and carries ECS,
 * else the source address (an IPv4-mapped IPv6 source is IPv4). Sets
 * *via_ecs. 0, or -1 when the client has no IP source (internal request). */
int topo_client_addr(const topo_cfg *c, const topo_client *cl, st_ip *out, int *via_ecs);

/* Locate a client (topo_client_addr + topo_locate_ip), inside
 * store_read_begin/_end. loc->ecs says whether ECS was used; a client with
 * no IP source, or an engine not yet bound, leaves loc zeroed (unknown). */
void topo_locate(const topo_engine *e, const topo_client *cl, topo_loc *loc);
/* Locate one address: locator_find_in over cfg.locate's sources, and in
 * node-local mode (cfg.node) an address no source and no node address
 * knows is on the configured node (LOC_NODE_LOCAL). Counts the lookup
 * (topodns_locator_lookups_total{source}: a per-series atomic, no
 * allocation). Inside store_read_begin/_end. Returns loc->via. */
int topo_locate_ip(const topo_engine *e, const st_ip *ip, topo_loc *loc);

/* Record what an answer depended on in the two bytes the caller owns (the
 * request's topo_dep and topo_ecs; server/reqtopo.h's req_topo_mark()
 * passes them): *dep_io = the largest dep seen (TOPO_DEP_*), and, when
 * via_ecs and the answer depended on the client, *ecs_io = 1: the client
 * was located by its ECS address. The reply's ECS scope is then /32 or
 * /128 for a client-dependent answer located by ECS, /0 otherwise (an ECS
 * option the answer did not use gets scope 0). Used by the kubernetes
 * plugin and by the cache when it serves a stored answer. */
void topo_mark(uint8_t *dep_io, uint8_t *ecs_io, int dep, int via_ecs);

/* The client's value in dimension dep, for cache keys: "z:<zone>" or
 * "n:<node>" for a located client, "?" for an unknown one, "" for
 * TOPO_DEP_NONE or when e is NULL. *via_ecs (may be NULL) says whether the
 * client was located by ECS. Returns the length written (always
 * NUL-terminated, cap >= 2). */
size_t topo_client_variant(const topo_engine *e, const topo_client *cl, int dep, char *out,
                           size_t cap, int *via_ecs);

/* Bumped (release) whenever a decision input that is not in the store
 * changes: the same-zone Prefer state the observer writes. With
 * store_version() it tells a memoised decision (the kubernetes plugin's
 * pre-rendered answers) is still what topo_select() would decide. */
uint64_t topo_state_version(const topo_engine *e);

/* Count one answer (topodns_topology_answers_total{policy,outcome}). */
void topo_count(topo_engine *e, const topo_result *res);

/* The observer (observer.c): a background thread that re-checks every
 * headless Service with a topology policy twice a second — the
 * topodns_topology_services gauges, the same-zone Prefer state, and with
 * `events` one Event per state change. Started by the topology plugin after
 * topo_engine_bind; stopped before the store goes. */
int topo_observer_start(topo_engine *e, char *err, size_t errlen);
void topo_observer_stop(topo_engine *e);

#endif
