/*
 * internal.h — shared between decide.c (the rules) and compute.c (policies
 * whose hints topodns computes itself when no controller wrote any).
 */
#ifndef TOPODNS_TOPO_INTERNAL_H
#define TOPODNS_TOPO_INTERNAL_H

#include "topology.h"

/* A hint as the consumer sees it: at most one zone and one node for
 * computed hints (real hints are read from the endpoint itself). */
typedef struct vhint {
    const char *zone;
    const char *node;
} vhint;

/* What a Service asks for when rule 5 applies, TP_NONE when nothing. */
topo_policy topo_computed_policy(const st_service *svc);

/* Computed hints for the endpoints in idx[0..n) (one family): fills v[i]
 * for idx[i]. Returns 1 when hints exist, 0 when the producer declined
 * (why gets the reason, e.g. the allocator's event message). */
int topo_compute_hints(store *st, topo_policy p, const st_service *svc, const st_endpoints *eps,
                       const size_t *idx, size_t n, int family, vhint *v, char *why, size_t wlen);

/* The policy rules 1–5 would apply to one family of a Service
 * (TP_NONE: every endpoint). */
topo_policy topo_policy_for(const topo_cfg *cfg, const st_service *svc, const st_endpoints *eps,
                            int family);

/* same-zone Prefer hysteresis: whether Prefer was active for a Service and
 * family at the observer's last pass (observer.c writes, workers read;
 * lock-free). */
void topo_prefer_state_set(const char *ns, const char *name, int family, int on);
int topo_prefer_state_get(const char *ns, const char *name, int family);

/* Zones are compared without case (the store lower-cases slice zones). */
int topo_zone_eq(const char *a, const char *b);

#endif
