/* SPDX-License-Identifier: Apache-2.0 */
/*
 * compute.c — rule 5: hints topodns computes itself when a Service asks for
 * topology but no controller wrote hints into its slices (`hints compute`).
 *
 *   trafficDistribution PreferSameNode      forZones = own zone, forNodes = own node
 *   PreferClose / PreferSameZone /          forZones = own zone
 *     routingPreference PreferZone
 *   topology-mode / topology-aware-hints    the proportional-CPU allocator
 *     Auto                                  (alloc_cpu.c), zone ratios from the nodes
 *   same-zone Prefer                        the KEP 2004 Local algorithm
 *                                           (alloc_local.c), nodes per zone
 *
 * The producers are pure functions (alloc.h); decide.c applies kube-proxy's
 * consumer rules to what they return, exactly as it does to real hints.
 * Zone inputs derived from the node set (CPU ratios, nodes per zone) are
 * one snapshot per engine, rebuilt by the first query after the store's
 * node version moves and shared by every thread (zones_of()).
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "topology/alloc.h"
#include "topology/internal.h"
#include "common/vec.h"

/* ---- which producer ----------------------------------------------------------- */

topo_policy topo_computed_policy(const st_service *svc)
{
    assert(svc);
    /* the controller's choice: Auto/auto annotation, else a valid field
     * (PreferSameTrafficDistribution on, as in 1.34+) */
    const st_svc_extra *x = st_svc_x(svc);
    switch (ta_hint_source(NULL, x->topology_mode, x->traffic_distribution, 1)) {
    case TA_SRC_AUTO:
        return TP_AUTO;
    case TA_SRC_TD_NODE:
        return TP_PREFER_SAME_NODE;
    case TA_SRC_TD_ZONE:
        return TP_PREFER_SAME_ZONE;
    default:
        break;
    }
    if (x->routing_preference && !strcmp(x->routing_preference, "PreferZone"))
        return TP_PREFER_SAME_ZONE;     /* the KEP 4444 draft's name */
    if (x->same_zone && !strcasecmp(x->same_zone, "Prefer"))
        return TP_SAME_ZONE_PREFER;
    return TP_NONE;
}

/* ---- node-derived inputs, shared by every thread ---------------------------------- */

#define MAX_NODES_SCAN 100000

typedef struct nodes_acc {
    ta_node *v;
    size_t n, cap;
} nodes_acc;

static int collect(const st_node *n, void *arg)
{
    nodes_acc *a = arg;
    /* capacities double from 64; one beyond MAX_NODES_SCAN ends the scan */
    if (a->n == a->cap && ((a->cap ? a->cap * 2 : 64) > MAX_NODES_SCAN ||
                           VEC_RESERVE_FROM(a->v, a->cap, a->n + 1, 64) < 0))
        return 1;
    a->v[a->n++] = (ta_node){ .zone = n->zone, .cpu_milli = n->cpu_milli, .ready = n->ready,
                              .control_plane = n->control_plane };
    return 0;
}

/* Nodes per zone for the Local algorithm: ready, non-control-plane nodes
 * with a zone label. */
static void count_zones(zone_inputs *m, const nodes_acc *a)
{
    m->nzones = 0;
    for (size_t i = 0; i < a->n; i++) {
        const ta_node *n = &a->v[i];
        if (!n->ready || n->control_plane || !n->zone || !*n->zone)
            continue;
        size_t z = 0;
        while (z < m->nzones && strcasecmp(m->zones[z].zone, n->zone))
            z++;
        if (z == m->nzones) {
            if (m->nzones == TA_MAX_ZONES)
                continue;
            m->zones[m->nzones++] = (ta_zone_nodes){ .zone = n->zone, .nodes = 0 };
        }
        m->zones[z].nodes++;
    }
}

/* The snapshot for the store's current node set (inside a read-side
 * section). The first reader after a node change builds it and publishes
 * it with a compare-and-swap; a reader that loses the race frees its own
 * copy and uses the winner's; the replaced snapshot is freed after a grace
 * period, when no reader can hold it. NULL only when memory runs out. */
static const zone_inputs *zones_of(topo_engine *e)
{
    uint64_t v = store_nodes_version(e->st);
    zone_inputs *cur = atomic_load_explicit(&e->zones, memory_order_acquire);
    if (cur && cur->version == v)
        return cur;
    zone_inputs *m = calloc(1, sizeof *m);
    if (!m)
        return cur;
    nodes_acc a = { 0 };
    store_foreach_node(e->st, collect, &a);
    ta_zone_ratios(a.v, a.n, &m->ratios);
    count_zones(m, &a);
    free(a.v);
    m->version = v;
    if (!atomic_compare_exchange_strong_explicit(&e->zones, &cur, m, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        free(m);                    /* another thread published first */
        return cur;
    }
    if (cur)
        pmap_defer(free, cur);
    return m;
}

/* ---- same-zone Prefer hysteresis state (observer → workers) ------------------------ */

static size_t prefer_key(char *k, size_t cap, const char *ns, const char *name, int family)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 4 > cap)
        return 0;
    memcpy(k, ns, a);
    k[a] = '/';
    memcpy(k + a + 1, name, b);
    k[a + 1 + b] = '/';
    k[a + 2 + b] = (char)('0' + family);
    return a + b + 3;
}

void topo_prefer_state_set(topo_engine *e, const char *ns, const char *name, int family, int on)
{
    assert(e && ns && name);
    char k[600];
    size_t kl = prefer_key(k, sizeof k, ns, name, family);
    if (!kl)
        return;
    const int *cur = pmap_get_writer(e->prefer, k, kl);
    if (cur && *cur == on)
        return;
    int *v = malloc(sizeof *v);
    if (!v)
        return;
    *v = on;
    pmap_put(e->prefer, k, kl, v, free);
    atomic_fetch_add_explicit(&e->state_version, 1, memory_order_release);
}

uint64_t topo_state_version(const topo_engine *e)
{
    return atomic_load_explicit(&((topo_engine *)e)->state_version, memory_order_acquire);
}

int topo_prefer_state_get(topo_engine *e, const char *ns, const char *name, int family)
{
    char k[600];
    size_t kl = prefer_key(k, sizeof k, ns, name, family);
    const int *v = kl ? pmap_get(e->prefer, k, kl) : NULL;
    return v ? *v : 0;
}

/* ---- producers ------------------------------------------------------------------- */

int topo_compute_hints(topo_engine *e, topo_policy p, const st_service *svc,
                       const st_endpoints *eps, const size_t *idx, size_t n, int family,
                       vhint *v, char *why, size_t wlen)
{
    assert(e && svc && (eps || n == 0) && (idx || n == 0) && (v || n == 0));
    assert(family == 4 || family == 6);
    assert(pmap_read_ongoing());             /* inside a read-side section (internal.h) */
    ta_ep ebuf[256];
    ta_ep *ep = n <= 256 ? ebuf : calloc(n, sizeof *ep);
    const char **za = calloc(n ? n : 1, sizeof *za), **na = calloc(n ? n : 1, sizeof *na);
    int ok = 0;
    if (!ep || !za || !na)
        goto out;
    /* a producer hints only endpoints whose ready condition is true: one
     * without the condition is a candidate for the consumer but stays
     * unhinted, so the consumer falls back to every endpoint, as
     * kube-proxy does with the EndpointSlice controller's hints */
    for (size_t i = 0; i < n; i++) {
        const st_endpoint *s = &eps->eps[idx[i]];
        ep[i] = (ta_ep){ .zone = st_ep_zone(s), .node = st_ep_node(s), .ready = !s->ready_unset };
    }
    switch (p) {
    case TP_PREFER_SAME_NODE:
    case TP_PREFER_SAME_ZONE:
        ta_trafficdist_hints(p == TP_PREFER_SAME_NODE ? TA_TD_PREFER_SAME_NODE
                                                      : TA_TD_PREFER_SAME_ZONE, ep, n, za, na);
        ok = 1;
        for (size_t i = 0; i < n; i++)
            if (ep[i].ready && !za[i] && !na[i])
                ok = 0;
        if (!ok)
            snprintf(why, wlen, "One or more endpoints do not have a zone specified");
        break;
    case TP_AUTO: {
        const zone_inputs *m = zones_of(e);
        ok = m && ta_auto_hints(&m->ratios, ep, n, family, za, why, wlen) == 0;
        break;
    }
    case TP_SAME_ZONE_PREFER: {
        const zone_inputs *m = zones_of(e);
        int prev = topo_prefer_state_get(e, svc->ns, svc->name, family);
        ok = m && ta_local_groups(m->zones, m->nzones, ep, n, prev, za, why, wlen) == 1;
        break;
    }
    default:
        break;
    }
    for (size_t i = 0; ok && i < n; i++)
        v[i] = (vhint){ za[i], na[i] };
out:
    if (ep != ebuf)
        free(ep);
    free(za);
    free(na);
    return ok;
}
