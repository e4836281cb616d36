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
 *                                          (none / zone / node): ECS scope
 *                                          on the reply and the cache variant
 *
 * The `topology` directive (src/plugin/topology/) only configures; without it
 * the kubernetes plugin never calls in here and answers are CoreDNS's.
 * Producers that a cluster may lack — the proportional-CPU "Auto" allocator,
 * trafficDistribution hints, the same-zone Prefer "Local" algorithm — live in
 * alloc.h and are pure functions; decide.c memoises their results per worker
 * until the Service, its endpoints or the node set change.
 */
#ifndef TOPODNS_TOPOLOGY_H
#define TOPODNS_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>
#include "cluster/store.h"
#include "cluster/locator.h"
#include "server/request.h"

/* What an answer depended on about its client (dns_req.topo_dep). */
enum { TOPO_DEP_NONE = 0, TOPO_DEP_ZONE = 1, TOPO_DEP_NODE = 2 };

enum { TOPO_HINTS_COMPUTE, TOPO_HINTS_CONSUME, TOPO_HINTS_OFF };

#define TOPO_MAX_SUBNETS 32

typedef struct topo_cidr {
    st_ip net;
    uint8_t bits;
} topo_cidr;

/* The directive's configuration (one per server block). */
typedef struct topo_cfg {
    topo_cidr subnets[TOPO_MAX_SUBNETS];     /* client_subnet: trusted ECS sources */
    int nsubnets;
    int hints;                               /* TOPO_HINTS_* (default compute) */
    int itp;                                 /* internal_traffic_policy on (default) */
    char *zone_label, *region_label;         /* NULL: the defaults */
    char *explain;                           /* explain ADDR, NULL when off */
    int events;                              /* post Kubernetes Events */
} topo_cfg;

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
 * decided independently, as kube-proxy does per address type. Never
 * allocates on the serving path except in the per-worker memo. */
void topo_select(const topo_cfg *c, store *st, const st_service *svc, const st_endpoints *eps,
                 const topo_loc *loc, int families, uint8_t *keep, topo_result *res,
                 topo_trace *tr);

/* The address to locate for a request: the ECS address when the packet came
 * from a client_subnet source and carries ECS, else the source address.
 * Sets *via_ecs. -1 when the request has no IP source (internal). */
int topo_client_addr(const topo_cfg *c, const dns_req *r, st_ip *out, int *via_ecs);

/* Locate the client of a request (topo_client_addr + locator_find). */
void topo_locate(const topo_cfg *c, store *st, const dns_req *r, topo_loc *loc);

/* Record on the request what the answer depended on: sets r->topo_dep and,
 * when the query carried ECS, the reply's ECS scope (/32 or /128 for a
 * client-dependent answer, /0 otherwise). Used by the kubernetes plugin and
 * by the cache when it serves a stored answer. */
void topo_mark(dns_req *r, int dep);

/* The client's value in dimension dep, for cache keys: "z:<zone>" or
 * "n:<node>" for a located client, "?" for an unknown one, "" for
 * TOPO_DEP_NONE or when the request's server block has no topology.
 * Returns the length written (always NUL-terminated, cap >= 2). */
size_t topo_client_variant(const dns_req *r, int dep, char *out, size_t cap);

/* The topology configuration and store of a request's server block, or NULL
 * when the block has no `topology` directive (src/plugin/topology/). */
const topo_cfg *topo_of_block(const struct server_block *b, store **st);

/* Count one answer (topodns_topology_answers_total{policy,outcome}). */
void topo_count(const topo_result *res);

#endif
