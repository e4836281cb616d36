/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trafficdist.c — the trafficDistribution producer (docs/topology.md) and
 * the choice between it and the "Auto" allocator.
 *
 *   PreferClose / PreferSameZone   ready endpoint → forZones = [own zone]
 *   PreferSameNode                 … and forNodes = [own node]
 *   anything else                  no hints (existing ones removed)
 *
 * No balancing at all: an endpoint without a zone gets no zone hint (only
 * forNodes under PreferSameNode). Non-ready endpoints are left alone and
 * never make a slice stale. The annotation (old key when present at all,
 * else topology-mode) resolving to Auto/auto beats the field.
 */
#include <assert.h>
#include <string.h>
#include <strings.h>
#include "topology/alloc.h"

static int has(const char *s)
{
    return s && *s;
}

static int zoned(int kind)
{
    return kind == TA_TD_PREFER_CLOSE || kind == TA_TD_PREFER_SAME_ZONE ||
           kind == TA_TD_PREFER_SAME_NODE;
}

void ta_trafficdist_hints(int kind, const ta_ep *eps, size_t n, const char **zone_hint,
                          const char **node_hint)
{
    assert((eps && zone_hint) || n == 0);
    assert(kind >= TA_TD_NONE && kind <= TA_TD_PREFER_SAME_NODE);
    for (size_t i = 0; i < n; i++) {
        const ta_ep *e = &eps[i];
        int on = zoned(kind) && e->ready;
        zone_hint[i] = on && has(e->zone) ? e->zone : NULL;
        if (node_hint)
            node_hint[i] = on && kind == TA_TD_PREFER_SAME_NODE && has(e->node) ? e->node : NULL;
    }
}

/* The list must be exactly [want] when want is set, and empty otherwise. */
static int list_stale(const char *want, const char *const *list, size_t n)
{
    if (!has(want))
        return n > 0;
    return n != 1 || !list || !list[0] || strcasecmp(list[0], want);
}

static int ep_stale(int kind, const ta_ep *e, const ta_hint *h)
{
    size_t nz = h && h->present ? h->nzones : 0, nn = h && h->present ? h->nnodes : 0;
    if (!zoned(kind))
        return h && h->present;
    if (!e->ready)
        return 0;
    const char *node = kind == TA_TD_PREFER_SAME_NODE ? e->node : NULL;
    return list_stale(e->zone, h ? h->zones : NULL, nz) ||
           list_stale(node, h ? h->nodes : NULL, nn);
}

int ta_trafficdist_stale(int kind, const ta_ep *eps, const ta_hint *have, size_t n)
{
    assert(eps || n == 0);
    assert(kind >= TA_TD_NONE && kind <= TA_TD_PREFER_SAME_NODE);
    for (size_t i = 0; i < n; i++)
        if (ep_stale(kind, &eps[i], have ? &have[i] : NULL))
            return 1;
    return 0;
}

int ta_hint_source(const char *old_annotation, const char *topology_mode,
                   const char *traffic_distribution, int pstd_gate)
{
    const char *mode = old_annotation ? old_annotation : topology_mode;
    if (mode && (!strcmp(mode, "Auto") || !strcmp(mode, "auto")))
        return TA_SRC_AUTO;
    const char *td = traffic_distribution;
    if (!td)
        return TA_SRC_NONE;
    if (!strcmp(td, "PreferClose"))
        return TA_SRC_TD_ZONE;
    if (pstd_gate && !strcmp(td, "PreferSameZone"))
        return TA_SRC_TD_ZONE;
    if (pstd_gate && !strcmp(td, "PreferSameNode"))
        return TA_SRC_TD_NODE;
    return TA_SRC_NONE;
}
