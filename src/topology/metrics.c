/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metrics.c — names of policies and outcomes, and the answer counter
 * topodns_topology_answers_total{policy,outcome}.
 */
#include <assert.h>
#include <stdatomic.h>
#include "topology/internal.h"
#include "runtime/metrics.h"

static const char *const policy_names[TP_COUNT] = {
    [TP_NONE] = "none",
    [TP_TOPOLOGY_KEYS] = "topology_keys",
    [TP_ITP_LOCAL] = "internal_traffic_policy",
    [TP_SAME_ZONE_REQUIRE] = "same_zone_require",
    [TP_HINTS] = "hints",
    [TP_PREFER_SAME_NODE] = "prefer_same_node",
    [TP_PREFER_SAME_ZONE] = "prefer_same_zone",
    [TP_AUTO] = "auto",
    [TP_SAME_ZONE_PREFER] = "same_zone_prefer",
};

static const char *const outcome_names[TO_COUNT] = {
    [TO_LOCAL] = "local",
    [TO_FALLBACK] = "fallback",
    [TO_ALL] = "all",
    [TO_EMPTY] = "empty",
    [TO_UNKNOWN_CLIENT] = "unknown_client",
};

const char *topo_policy_name(topo_policy p)
{
    return p < TP_COUNT ? policy_names[p] : "none";
}

const char *topo_outcome_name(topo_outcome o)
{
    return o < TO_COUNT ? outcome_names[o] : "all";
}

void topo_count(topo_engine *e, const topo_result *res)
{
    assert(e && res);
    const char *v[] = { topo_policy_name(res->policy), topo_outcome_name(res->outcome) };
    if (res->policy >= TP_COUNT || res->outcome >= TO_COUNT) {
        metrics_add(e->answers, v, 1);
        return;
    }
    struct metric_series *_Atomic *slot = &e->answer_series[res->policy][res->outcome];
    struct metric_series *s = atomic_load_explicit(slot, memory_order_acquire);
    if (!s) {
        s = metrics_series(e->answers, v);
        atomic_store_explicit(slot, s, memory_order_release);
    }
    metrics_series_add(s, 1);
}
