/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decide.c — the decision: which ready endpoints of a headless Service a
 * located client receives. Rules in precedence order (docs/topology.md):
 *
 *   1. topologyKeys (spec.topologyKeys or topodns.io/topology-keys): the
 *      first key whose values match wins, "*" matches all, none → empty.
 *   2. internalTrafficPolicy: Local (when enabled): endpoints on the
 *      client's node, none → empty.
 *   3. same-zone: Require: endpoints in the client's zone, none → empty.
 *   4. EndpointSlice hints, kube-proxy's consumer rules: every ready
 *      endpoint has forNodes and one names the node → those; else every
 *      ready endpoint has forZones and one names the zone → those.
 *   5. no hints anywhere and `hints compute`: hints computed for what the
 *      Service asks (trafficDistribution, topology-mode Auto, same-zone
 *      Prefer; compute.c), then rule 4 on them.
 *   6. otherwise every ready endpoint.
 * An unknown client gets every ready endpoint whatever the policy.
 * Address families are decided independently (A → IPv4, AAAA → IPv6,
 * SRV → both), as kube-proxy decides per address type.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "topology/internal.h"

#define FAM_BIT(ep) (st_ep_family(ep) == 4 ? 1 : 2)

int topo_zone_eq(const char *a, const char *b)
{
    return a && b && *a && !strcasecmp(a, b);
}

/* ---- trace ------------------------------------------------------------------ */

static void trace(topo_trace *tr, const char *rule, const char *result, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void trace(topo_trace *tr, const char *rule, const char *result, const char *fmt, ...)
{
    if (!tr || tr->n >= TOPO_TRACE_MAX)
        return;
    snprintf(tr->step[tr->n].rule, sizeof tr->step[0].rule, "%s", rule);
    snprintf(tr->step[tr->n].result, sizeof tr->step[0].result, "%s", result);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tr->step[tr->n].why, sizeof tr->step[0].why, fmt, ap);
    va_end(ap);
    tr->n++;
}

/* ---- one family's candidate set ------------------------------------------------ */

typedef struct cand {
    const st_endpoints *eps;
    size_t *idx;                    /* ready endpoints of the family */
    size_t n;
} cand;

static void keep_all(const cand *c, uint8_t *keep)
{
    for (size_t i = 0; i < c->n; i++)
        keep[c->idx[i]] = 1;
}

static const st_endpoint *EP(const cand *c, size_t i)
{
    return &c->eps->eps[c->idx[i]];
}

/* ---- rule 1: topologyKeys ---------------------------------------------------------- */

static const char *ep_label(store *st, const topo_cfg *cfg, const st_endpoint *ep, const char *key)
{
    if (!strcmp(key, "kubernetes.io/hostname"))
        return st_ep_node(ep);
    const st_node *n = st_ep_node(ep) ? store_node(st, st_ep_node(ep)) : NULL;
    if (n)
        return st_node_label(n, key);
    const char *zl = cfg->zone_label ? cfg->zone_label : "topology.kubernetes.io/zone";
    return !strcmp(key, zl) ? st_ep_zone(ep) : NULL;
}

static const char *client_label(const topo_loc *loc, const char *key)
{
    if (!strcmp(key, "kubernetes.io/hostname"))
        return loc->node ? loc->node_name : NULL;
    return loc->node ? st_node_label(loc->node, key) : NULL;
}

static topo_outcome rule_keys(const topo_cfg *cfg, store *st, const st_service *svc, const cand *c,
                              const topo_loc *loc, uint8_t *keep, topo_trace *tr)
{
    int nk = st_svc_x(svc)->n_topology_keys;
    const char *const *k = st_svc_x(svc)->topology_keys;
    if (!loc->node || loc->node->nlabels == 0) {     /* the node's labels are unknown */
        int any = !strcmp(k[nk - 1], "*");
        trace(tr, "topologyKeys", any ? "all" : "empty",
              "the client's node labels are unknown; the last key is %s'*'", any ? "" : "not ");
        if (any)
            keep_all(c, keep);
        return any ? TO_FALLBACK : TO_EMPTY;
    }
    for (int i = 0; i < nk; i++) {
        if (!strcmp(k[i], "*")) {
            trace(tr, "topologyKeys", "all", "key '*' matches every endpoint");
            keep_all(c, keep);
            return i == 0 ? TO_ALL : TO_FALLBACK;
        }
        const char *want = client_label(loc, k[i]);
        if (!want) {
            trace(tr, "topologyKeys", "skipped", "the client's node has no label %s", k[i]);
            continue;
        }
        size_t hit = 0;
        for (size_t j = 0; j < c->n; j++) {
            const char *v = ep_label(st, cfg, EP(c, j), k[i]);
            if (v && !strcmp(v, want)) {
                keep[c->idx[j]] = 1;
                hit++;
            }
        }
        trace(tr, "topologyKeys", hit ? "match" : "no match", "%s=%s: %zu endpoint(s)", k[i], want, hit);
        if (hit)
            return TO_LOCAL;
    }
    return TO_EMPTY;
}

/* ---- rules 2 and 3: node- and zone-local filters ------------------------------------ */

static topo_outcome rule_filter(const cand *c, const topo_loc *loc, int by_node, uint8_t *keep,
                                topo_trace *tr)
{
    size_t hit = 0;
    for (size_t j = 0; j < c->n; j++) {
        const st_endpoint *ep = EP(c, j);
        int ok = by_node ? (loc->node_name && st_ep_node(ep) && !strcmp(st_ep_node(ep), loc->node_name))
                         : topo_zone_eq(st_ep_zone(ep), loc->zone);
        if (ok) {
            keep[c->idx[j]] = 1;
            hit++;
        }
    }
    const char *what = by_node ? loc->node_name : loc->zone;
    trace(tr, by_node ? "internalTrafficPolicy" : "same-zone Require", hit ? "match" : "empty",
          "%zu endpoint(s) %s %s", hit, by_node ? "on node" : "in zone", what ? what : "(none)");
    return hit ? TO_LOCAL : TO_EMPTY;
}

/* ---- rule 4: hint consumption (kube-proxy; docs/topology.md, rule 4 in detail) ------- */

static int has_zone(const st_endpoint *ep, const vhint *v, const char *z)
{
    if (v)
        return topo_zone_eq(v->zone, z);
    for (uint16_t i = 0; i < st_ep_n_hint_zones(ep); i++)
        if (topo_zone_eq(st_ep_hint_zones(ep)[i], z))
            return 1;
    return 0;
}

static int has_node(const st_endpoint *ep, const vhint *v, const char *n)
{
    if (!n)
        return 0;
    if (v)
        return v->node && !strcmp(v->node, n);
    for (uint16_t i = 0; i < st_ep_n_hint_nodes(ep); i++)
        if (!strcmp(st_ep_hint_nodes(ep)[i], n))
            return 1;
    return 0;
}

static int zones_hinted(const st_endpoint *ep, const vhint *v)
{
    return v ? v->zone != NULL : st_ep_n_hint_zones(ep) > 0;
}

static int nodes_hinted(const st_endpoint *ep, const vhint *v)
{
    return v ? v->node != NULL : st_ep_n_hint_nodes(ep) > 0;
}

/* Returns 2 (node mode), 1 (zone mode) or 0 (no mode: caller keeps all). */
static int consume(const cand *c, const vhint *v, const topo_loc *loc, uint8_t *keep,
                   const char *rule, topo_trace *tr)
{
    int all_nodes = c->n > 0, all_zones = c->n > 0, node_hit = 0, zone_hit = 0;
    for (size_t j = 0; j < c->n; j++) {
        const st_endpoint *ep = EP(c, j);
        const vhint *h = v ? &v[j] : NULL;
        all_nodes &= nodes_hinted(ep, h);
        all_zones &= zones_hinted(ep, h);
        node_hit |= has_node(ep, h, loc->node_name);
        zone_hit |= has_zone(ep, h, loc->zone);
    }
    int mode = all_nodes && node_hit ? 2 : all_zones && zone_hit ? 1 : 0;
    for (size_t j = 0; mode && j < c->n; j++) {
        const vhint *h = v ? &v[j] : NULL;
        if (mode == 2 ? has_node(EP(c, j), h, loc->node_name) : has_zone(EP(c, j), h, loc->zone))
            keep[c->idx[j]] = 1;
    }
    if (mode == 2)
        trace(tr, rule, "node", "every ready endpoint has forNodes and some name %s", loc->node_name);
    else if (mode == 1)
        trace(tr, rule, "zone", "every ready endpoint has forZones and some name %s", loc->zone);
    else
        trace(tr, rule, "no match", "%s", !all_zones ? "not every ready endpoint has a zone hint"
                                          : "no endpoint is hinted to the client's zone");
    return mode;
}

static int any_hints(const cand *c)
{
    for (size_t j = 0; j < c->n; j++)
        if (st_ep_n_hint_zones(EP(c, j)) || st_ep_n_hint_nodes(EP(c, j)))
            return 1;
    return 0;
}

/* ---- rule 5: computed hints ---------------------------------------------------------- */

static topo_outcome rule_computed(topo_engine *e, topo_policy p, const st_service *svc,
                                  const cand *c, const topo_loc *loc, int family, uint8_t *keep,
                                  topo_trace *tr)
{
    vhint vbuf[256];
    vhint *v = c->n <= 256 ? vbuf : calloc(c->n, sizeof *v);
    if (!v) {
        keep_all(c, keep);
        return TO_FALLBACK;
    }
    memset(v, 0, c->n * sizeof *v);
    char why[200] = "";
    int mode = 0;
    if (topo_compute_hints(e, p, svc, c->eps, c->idx, c->n, family, v, why, sizeof why))
        mode = consume(c, v, loc, keep, topo_policy_name(p), tr);
    else
        trace(tr, topo_policy_name(p), "declined", "%s", why);
    if (v != vbuf)
        free(v);
    if (!mode)
        keep_all(c, keep);
    /* PreferSameNode falling back to the zone is a fallback too */
    return mode == 2 || (mode == 1 && p != TP_PREFER_SAME_NODE) ? TO_LOCAL : TO_FALLBACK;
}

/* ---- the policy ---------------------------------------------------------------------- */

static topo_policy policy_of(const topo_cfg *cfg, const st_service *svc, const cand *c, int *computed)
{
    *computed = 0;
    const st_svc_extra *x = st_svc_x(svc);
    if (x->n_topology_keys)
        return TP_TOPOLOGY_KEYS;
    if (cfg->itp && svc->itp_local)
        return TP_ITP_LOCAL;
    if (x->same_zone && !strcasecmp(x->same_zone, "Require"))
        return TP_SAME_ZONE_REQUIRE;
    if (cfg->hints == TOPO_HINTS_OFF)
        return TP_NONE;
    if (any_hints(c))
        return TP_HINTS;
    if (cfg->hints != TOPO_HINTS_COMPUTE)
        return TP_NONE;
    topo_policy p = topo_computed_policy(svc);
    *computed = p != TP_NONE;
    return p;
}

topo_policy topo_policy_for(const topo_cfg *cfg, const st_service *svc, const st_endpoints *eps,
                            int family)
{
    assert(cfg);
    size_t n = eps ? eps->n : 0, ibuf[512], *idx = n <= 512 ? ibuf : malloc(n * sizeof *idx);
    if (!idx)
        return TP_NONE;
    cand c = { eps, idx, 0 };
    for (size_t i = 0; i < n; i++)
        if (eps->eps[i].ready && st_ep_family(&eps->eps[i]) == family)
            idx[c.n++] = i;
    int computed;
    topo_policy p = policy_of(cfg, svc, &c, &computed);
    if (idx != ibuf)
        free(idx);
    return p;
}

static int dep_of(const topo_cfg *cfg, topo_policy p, const st_service *svc, const cand *c)
{
    const char *zl = cfg->zone_label ? cfg->zone_label : "topology.kubernetes.io/zone";
    switch (p) {
    case TP_NONE:
        return TOPO_DEP_NONE;
    case TP_TOPOLOGY_KEYS:
        for (int i = 0; i < st_svc_x(svc)->n_topology_keys; i++)
            if (strcmp(st_svc_x(svc)->topology_keys[i], "*") &&
                strcmp(st_svc_x(svc)->topology_keys[i], zl))
                return TOPO_DEP_NODE;
        return TOPO_DEP_ZONE;
    case TP_ITP_LOCAL:
    case TP_PREFER_SAME_NODE:
        return TOPO_DEP_NODE;
    case TP_HINTS:
        for (size_t j = 0; j < c->n; j++)
            if (st_ep_n_hint_nodes(EP(c, j)))
                return TOPO_DEP_NODE;
        return TOPO_DEP_ZONE;
    default:
        return TOPO_DEP_ZONE;
    }
}

static const char *policy_source(const st_service *svc, topo_policy p)
{
    switch (p) {
    case TP_TOPOLOGY_KEYS:
        return st_svc_x(svc)->topology_keys_from_annotation ? "annotation topodns.io/topology-keys"
                                                  : "spec.topologyKeys";
    case TP_ITP_LOCAL: return "spec.internalTrafficPolicy";
    case TP_SAME_ZONE_REQUIRE:
    case TP_SAME_ZONE_PREFER: return "annotation endpointslice.kubernetes.io/same-zone";
    case TP_HINTS: return "EndpointSlice hints";
    case TP_AUTO: return "annotation service.kubernetes.io/topology-mode";
    case TP_PREFER_SAME_NODE:
    case TP_PREFER_SAME_ZONE:
        return st_svc_x(svc)->traffic_distribution ? "spec.trafficDistribution" : "routingPreference";
    default: return "none";
    }
}

/* One family: the outcome, keep[] filled. */
static topo_outcome decide_family(topo_engine *e, const st_service *svc, topo_policy p,
                                  const cand *c, const topo_loc *loc, int family, uint8_t *keep,
                                  topo_trace *tr)
{
    if (c->n == 0)
        return TO_EMPTY;
    if (p == TP_NONE) {
        keep_all(c, keep);
        return TO_ALL;
    }
    if (loc->via == LOC_UNKNOWN) {
        trace(tr, "client", "unknown", "the client is not a known pod or node: every endpoint");
        keep_all(c, keep);
        return TO_UNKNOWN_CLIENT;
    }
    switch (p) {
    case TP_TOPOLOGY_KEYS:
        return rule_keys(&e->cfg, e->st, svc, c, loc, keep, tr);
    case TP_ITP_LOCAL:
        return rule_filter(c, loc, 1, keep, tr);
    case TP_SAME_ZONE_REQUIRE:
        return rule_filter(c, loc, 0, keep, tr);
    case TP_HINTS:
        if (consume(c, NULL, loc, keep, "hints", tr))
            return TO_LOCAL;
        keep_all(c, keep);
        return TO_FALLBACK;
    default:
        return rule_computed(e, p, svc, c, loc, family, keep, tr);
    }
}

static topo_outcome combine(topo_outcome a, topo_outcome b)
{
    static const int rank[TO_COUNT] = {
        [TO_EMPTY] = 0, [TO_ALL] = 1, [TO_UNKNOWN_CLIENT] = 2, [TO_FALLBACK] = 3, [TO_LOCAL] = 4,
    };
    return rank[a] >= rank[b] ? a : b;
}

void topo_select(topo_engine *e, const st_service *svc, const st_endpoints *eps,
                 const topo_loc *loc, int families, uint8_t *keep, topo_result *res,
                 topo_trace *tr)
{
    assert(e && res && loc && (keep || !eps || eps->n == 0));
    assert((families & ~3) == 0);            /* bit 1 IPv4, bit 2 IPv6 */
    assert(pmap_read_ongoing());             /* inside store_read_begin/_end */
    const topo_cfg *cfg = &e->cfg;
    size_t n = eps ? eps->n : 0;
    memset(res, 0, sizeof *res);
    memset(keep, 0, n);
    size_t ibuf[512];
    size_t *idx = n <= 512 ? ibuf : malloc(n * sizeof *idx);
    if (!idx) {                     /* out of memory: no topology */
        for (size_t i = 0; i < n; i++)
            keep[i] = eps->eps[i].ready && (FAM_BIT(&eps->eps[i]) & families);
        res->outcome = TO_ALL;
        return;
    }
    topo_outcome out = TO_EMPTY;
    int computed = 0, recorded = 0;     /* 1: from an empty family, 2: from one with endpoints */
    for (int fam = 1; fam <= 2; fam++) {
        if (!(families & fam))
            continue;
        cand c = { eps, idx, 0 };
        for (size_t i = 0; i < n; i++)
            if (eps->eps[i].ready && FAM_BIT(&eps->eps[i]) == fam)
                idx[c.n++] = i;
        res->before += c.n;
        topo_policy p = policy_of(cfg, svc, &c, &computed);
        int rank = c.n ? 2 : 1;
        if (rank > recorded || (rank == 2 && p != TP_NONE)) {
            int d = dep_of(cfg, p, svc, &c);
            res->policy = p;
            res->dep = recorded == 2 && res->dep > d ? res->dep : d;
            if (tr)
                snprintf(tr->source, sizeof tr->source, "%s", policy_source(svc, p));
            recorded = rank;
        }
        out = combine(out, decide_family(e, svc, p, &c, loc, fam == 1 ? 4 : 6, keep, tr));
    }
    if (idx != ibuf)
        free(idx);
    for (size_t i = 0; i < n; i++)
        res->after += keep[i];
    res->outcome = out;
}
