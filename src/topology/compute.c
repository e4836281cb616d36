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
 * memoised per thread and recomputed when the store's node version moves,
 * so a query walks the nodes at most once per node change per worker.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "alloc.h"
#include "internal.h"
#include "cluster/pmap.h"

/* ---- which producer ----------------------------------------------------------- */

topo_policy topo_computed_policy(const st_service *svc)
{
    /* the controller's choice: Auto/auto annotation, else a valid field
     * (PreferSameTrafficDistribution on, as in 1.34+) */
    switch (ta_hint_source(NULL, svc->topology_mode, svc->traffic_distribution, 1)) {
    case TA_SRC_AUTO:
        return TP_AUTO;
    case TA_SRC_TD_NODE:
        return TP_PREFER_SAME_NODE;
    case TA_SRC_TD_ZONE:
        return TP_PREFER_SAME_ZONE;
    default:
        break;
    }
    if (svc->routing_preference && !strcmp(svc->routing_preference, "PreferZone"))
        return TP_PREFER_SAME_ZONE;     /* the KEP 4444 draft's name */
    if (svc->same_zone && !strcasecmp(svc->same_zone, "Prefer"))
        return TP_SAME_ZONE_PREFER;
    return TP_NONE;
}

/* ---- node-derived inputs, per thread ---------------------------------------------- */

#define MAX_NODES_SCAN 100000

typedef struct zone_memo {
    store *st;
    uint64_t version;
    int valid;
    ta_ratios ratios;
    ta_zone_nodes zones[TA_MAX_ZONES];
    size_t nzones;
} zone_memo;

static _Thread_local zone_memo memo;

typedef struct nodes_acc {
    ta_node *v;
    size_t n, cap;
} nodes_acc;

static int collect(const st_node *n, void *arg)
{
    nodes_acc *a = arg;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 64;
        ta_node *nv = cap <= MAX_NODES_SCAN ? realloc(a->v, cap * sizeof *nv) : NULL;
        if (!nv)
            return 1;
        a->v = nv;
        a->cap = cap;
    }
    a->v[a->n++] = (ta_node){ .zone = n->zone, .cpu_milli = n->cpu_milli, .ready = n->ready,
                              .control_plane = n->control_plane };
    return 0;
}

/* Nodes per zone for the Local algorithm: ready, non-control-plane nodes
 * with a zone label. */
static void count_zones(zone_memo *m, const nodes_acc *a)
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

static const zone_memo *zones_of(store *st)
{
    uint64_t v = store_nodes_version(st);
    if (memo.valid && memo.st == st && memo.version == v)
        return &memo;
    nodes_acc a = { 0 };
    store_foreach_node(st, collect, &a);
    ta_zone_ratios(a.v, a.n, &memo.ratios);
    count_zones(&memo, &a);
    free(a.v);
    memo.st = st;
    memo.version = v;
    memo.valid = 1;
    return &memo;
}

/* ---- same-zone Prefer hysteresis state (observer → workers) ------------------------ */

static pmap *_Atomic prefer_map;

static pmap *prefer_state(void)
{
    pmap *m = prefer_map;
    if (!m) {
        pmap *n = pmap_new();
        pmap *expected = NULL;
        if (n && !atomic_compare_exchange_strong(&prefer_map, &expected, n))
            pmap_free(n, NULL);
        m = prefer_map;
    }
    return m;
}

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

void topo_prefer_state_set(const char *ns, const char *name, int family, int on)
{
    pmap *m = prefer_state();
    char k[600];
    size_t kl = prefer_key(k, sizeof k, ns, name, family);
    if (!m || !kl)
        return;
    const int *cur = pmap_get(m, k, kl);
    if (cur && *cur == on)
        return;
    int *v = malloc(sizeof *v);
    if (!v)
        return;
    *v = on;
    pmap_put(m, k, kl, v, free);
}

int topo_prefer_state_get(const char *ns, const char *name, int family)
{
    pmap *m = prefer_state();
    char k[600];
    size_t kl = prefer_key(k, sizeof k, ns, name, family);
    const int *v = m && kl ? pmap_get(m, k, kl) : NULL;
    return v ? *v : 0;
}

/* ---- producers ------------------------------------------------------------------- */

int topo_compute_hints(store *st, topo_policy p, const st_service *svc, const st_endpoints *eps,
                       const size_t *idx, size_t n, int family, vhint *v, char *why, size_t wlen)
{
    ta_ep ebuf[256];
    ta_ep *e = n <= 256 ? ebuf : calloc(n, sizeof *e);
    const char **za = calloc(n ? n : 1, sizeof *za), **na = calloc(n ? n : 1, sizeof *na);
    int ok = 0;
    if (!e || !za || !na)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const st_endpoint *ep = &eps->eps[idx[i]];
        e[i] = (ta_ep){ .zone = ep->zone, .node = ep->node_name, .ready = 1 };
    }
    switch (p) {
    case TP_PREFER_SAME_NODE:
    case TP_PREFER_SAME_ZONE:
        ta_trafficdist_hints(p == TP_PREFER_SAME_NODE ? TA_TD_PREFER_SAME_NODE
                                                      : TA_TD_PREFER_SAME_ZONE, e, n, za, na);
        ok = 1;
        for (size_t i = 0; i < n; i++)
            if (!za[i] && !na[i])
                ok = 0;
        if (!ok)
            snprintf(why, wlen, "One or more endpoints do not have a zone specified");
        break;
    case TP_AUTO: {
        const zone_memo *m = zones_of(st);
        ok = ta_auto_hints(&m->ratios, e, n, family, za, why, wlen) == 0;
        break;
    }
    case TP_SAME_ZONE_PREFER: {
        const zone_memo *m = zones_of(st);
        int prev = topo_prefer_state_get(svc->ns, svc->name, family);
        ok = ta_local_groups(m->zones, m->nzones, e, n, prev, za, why, wlen) == 1;
        break;
    }
    default:
        break;
    }
    for (size_t i = 0; ok && i < n; i++)
        v[i] = (vhint){ za[i], na[i] };
out:
    if (e != ebuf)
        free(e);
    free(za);
    free(na);
    return ok;
}
