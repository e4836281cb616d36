/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc_local.c — same-zone "Prefer": the "Local" algorithm of the KEP 2004
 * drafts (docs/topology.md, same-zone: Prefer), unshipped; our reading of it.
 *
 *   zones with nodes Z ≥ 2, ready endpoints N, nodes T
 *   threshold = 3 × Z, padding = Z (default):  Balanced → Prefer at
 *     N ≥ threshold + padding; Prefer → Balanced at N < threshold − padding
 *   expected[z] = N × nodes[z] / T
 *   overload[z] = expected[z] / assigned[z] − 1  (extra traffic per endpoint
 *     relative to an even spread: 150 vs 100 = 50 %)
 *
 *   1. every endpoint starts in its own zone's group
 *   2. require = zones with nodes whose overload ≥ 50 %; available = zones
 *      that can give one endpoint and stay under 50 % (zones without nodes,
 *      and endpoints without a zone, can always give)
 *   3. move one endpoint at a time from the available zone with the most
 *      surplus (assigned − expected) to the require zone with the largest
 *      deficit (expected − assigned); ties by zone name
 *   4. a require zone left when no zone can give → downgrade to Balanced
 *   5. top up: zones above expected (that stay under 50 %) give to zones
 *      below floor(expected); endpoints still grouped in zones without
 *      nodes go to the zone with the largest deficit
 *
 * The priority queues are linear scans over at most a few dozen zones. The
 * endpoint moved is the last one (by index) in the giving group.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "topology/alloc.h"

static const char NOZONE[] = "";   /* group of endpoints without a zone */

static int has(const char *s)
{
    return s && *s;
}

static int zcmp(const char *a, const char *b)
{
    int c = strcasecmp(a ? a : "", b ? b : "");
    return c ? c : strcmp(a ? a : "", b ? b : "");
}

double ta_local_overload(double expected, int assigned)
{
    if (expected <= 0.0)
        return -1.0;
    if (assigned <= 0)
        return INFINITY;
    return expected / (double)assigned - 1.0;
}

/* ---- zone table ------------------------------------------------------------------ */

/* Index of zone name in the plan, adding it (with nodes) when absent; -1 full. */
static int zone_slot(ta_local_plan *p, const char *zone, size_t nodes)
{
    for (size_t k = 0; k < p->nz; k++) {
        const char *z = p->z[k].zone;
        if (z == zone || (has(zone) && z && !strcasecmp(z, zone))) {
            p->z[k].nodes += nodes;
            return (int)k;
        }
    }
    if (p->nz == sizeof p->z / sizeof p->z[0])
        return -1;
    p->z[p->nz] = (ta_local_zone){ .zone = zone, .nodes = nodes };
    return (int)p->nz++;
}

static const char *group_name(const ta_local_zone *z)
{
    return z->zone ? z->zone : NOZONE;
}

static int build_zones(ta_local_plan *p, const ta_zone_nodes *zones, size_t nzones,
                       const ta_ep *eps, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < nzones; i++)
        if (has(zones[i].zone) && zones[i].nodes) {
            if (zone_slot(p, zones[i].zone, zones[i].nodes) < 0)
                return -1;
            total += zones[i].nodes;
        }
    p->zones = p->nz;
    for (size_t i = 0; i < n; i++) {
        if (!eps[i].ready)
            continue;
        int k = zone_slot(p, has(eps[i].zone) ? eps[i].zone : NULL, 0);
        if (k < 0)
            return -1;
        p->z[k].own++;
        p->ready++;
    }
    for (size_t k = 0; k < p->nz; k++) {
        p->z[k].assigned = p->z[k].own;
        p->z[k].scan = n;
        p->z[k].expected = total ? (double)p->ready * (double)p->z[k].nodes / (double)total : 0;
    }
    return 0;
}

/* ---- moves ---------------------------------------------------------------------- */

static int can_give(const ta_local_zone *z)
{
    if (z->assigned < 1)
        return 0;
    if (!z->nodes)
        return 1;
    return ta_local_overload(z->expected, z->assigned - 1) < TA_LOCAL_OVERLOAD;
}

static int needs(const ta_local_zone *z)
{
    return z->nodes && ta_local_overload(z->expected, z->assigned) >= TA_LOCAL_OVERLOAD;
}

static int below_floor(const ta_local_zone *z)
{
    return z->nodes && (double)z->assigned < floor(z->expected);
}

static int above_expected(const ta_local_zone *z)
{
    return can_give(z) && (!z->nodes || (double)z->assigned > z->expected);
}

static int has_nodes(const ta_local_zone *z)
{
    return z->nodes > 0;
}

/* The zone passing ok() with the greatest key; ties → first name. */
static int pick(const ta_local_plan *p, int (*ok)(const ta_local_zone *), int surplus)
{
    int best = -1;
    double bv = 0;
    for (size_t k = 0; k < p->nz; k++) {
        const ta_local_zone *z = &p->z[k];
        if (!ok(z))
            continue;
        double v = surplus ? z->assigned - z->expected : z->expected - z->assigned;
        if (best < 0 || v > bv || (v == bv && zcmp(z->zone, p->z[best].zone) < 0)) {
            best = (int)k;
            bv = v;
        }
    }
    return best;
}

/* Move the last endpoint grouped in zone `from` to zone `to`. The search
 * resumes where the previous one for that zone stopped (amortised O(n) per
 * zone) and starts over once when endpoints moved in behind it. */
static void move(ta_local_plan *p, int from, int to, const ta_ep *eps, size_t n,
                 const char **group)
{
    ta_local_zone *f = &p->z[from];
    const char *name = group_name(f);
    for (int pass = 0; pass < 2; pass++, f->scan = n)
        for (size_t i = f->scan > n ? n : f->scan; i-- > 0;)
            if (eps[i].ready && group[i] == name) {
                group[i] = group_name(&p->z[to]);
                f->scan = i;
                f->assigned--;
                p->z[to].assigned++;
                p->moves++;
                return;
            }
}

/* Repeat moving from pick(giver) to pick(taker) while both exist. */
static void drain(ta_local_plan *p, int (*giver)(const ta_local_zone *),
                  int (*taker)(const ta_local_zone *), const ta_ep *eps, size_t n,
                  const char **group)
{
    for (size_t guard = 0; guard <= p->ready; guard++) {
        int g = pick(p, giver, 1), t = pick(p, taker, 0);
        if (g < 0 || t < 0 || g == t)
            return;
        move(p, g, t, eps, n, group);
    }
}

static int any(const ta_local_plan *p, int (*ok)(const ta_local_zone *))
{
    for (size_t k = 0; k < p->nz; k++)
        if (ok(&p->z[k]))
            return 1;
    return 0;
}

static int orphan(const ta_local_zone *z)
{
    return !z->nodes && z->assigned > 0;
}

/* ---- the algorithm --------------------------------------------------------------- */

static int hysteresis(ta_local_plan *p, int prev_on, size_t padding)
{
    p->threshold = 3 * p->zones;
    p->padding = padding == TA_LOCAL_DEFAULT_PADDING ? p->zones : padding;
    if (prev_on)
        return p->ready + p->padding >= p->threshold;
    return p->ready >= p->threshold + p->padding;
}

static int run(ta_local_plan *p, const ta_ep *eps, size_t n, const char **group)
{
    for (size_t i = 0; i < n; i++) {
        group[i] = NULL;
        if (!eps[i].ready)
            continue;
        for (size_t k = 0; k < p->nz; k++)
            if (p->z[k].zone == (has(eps[i].zone) ? eps[i].zone : NULL) ||
                (has(eps[i].zone) && p->z[k].zone && !strcasecmp(p->z[k].zone, eps[i].zone))) {
                group[i] = group_name(&p->z[k]);
                break;
            }
    }
    drain(p, can_give, needs, eps, n, group);
    if (any(p, needs))
        return TA_L_DOWNGRADED;
    drain(p, above_expected, below_floor, eps, n, group);
    drain(p, orphan, has_nodes, eps, n, group);
    return TA_OK;
}

static int balanced(ta_local_plan *p, int why, const char **group, size_t n)
{
    p->prefer = 0;
    p->reason = why;
    for (size_t i = 0; i < n; i++)
        group[i] = NULL;
    for (size_t k = 0; k < p->nz; k++)
        p->z[k].assigned = p->z[k].own;
    return 0;
}

int ta_local_plan_compute(const ta_zone_nodes *zones, size_t nzones, const ta_ep *eps, size_t n,
                          int prev_on, size_t padding, const char **group_zone,
                          ta_local_plan *p)
{
    assert((zones || nzones == 0) && (eps || n == 0) && p);
    assert(group_zone || n == 0);
    memset(p, 0, sizeof *p);
    if (build_zones(p, zones, nzones, eps, n) < 0)
        return balanced(p, TA_R_TOO_MANY_ZONES, group_zone, n);
    if (p->zones == 0)
        return balanced(p, TA_R_INSUFFICIENT_NODE_INFO, group_zone, n);
    if (p->zones == 1)
        return balanced(p, TA_R_ONE_ZONE, group_zone, n);
    if (!hysteresis(p, prev_on, padding))
        return balanced(p, TA_L_BELOW_THRESHOLD, group_zone, n);
    int why = run(p, eps, n, group_zone);
    if (why)
        return balanced(p, why, group_zone, n);
    for (size_t i = 0; i < n; i++)
        if (group_zone[i] == NOZONE)
            group_zone[i] = NULL;
    p->prefer = 1;
    p->reason = TA_OK;
    return 1;
}

static void local_message(const ta_local_plan *p, char *msg, size_t len)
{
    switch (p->reason) {
    case TA_OK:
        snprintf(msg, len, "same-zone Prefer active (%zu endpoints, %zu zones, %zu moved)",
                 p->ready, p->zones, p->moves);
        break;
    case TA_R_INSUFFICIENT_NODE_INFO:
        snprintf(msg, len, "No ready node with a zone: same-zone Prefer falls back to Balanced");
        break;
    case TA_R_ONE_ZONE:
        snprintf(msg, len, "Nodes only ready in one zone");
        break;
    case TA_L_BELOW_THRESHOLD:
        snprintf(msg, len, "Insufficient number of endpoints for same-zone Prefer (%zu endpoints,"
                 " threshold %zu, padding %zu)", p->ready, p->threshold, p->padding);
        break;
    case TA_L_DOWNGRADED:
        snprintf(msg, len, "Unable to keep every zone under the %d%% overload threshold, "
                 "downgraded to Balanced (%zu endpoints, %zu zones)",
                 (int)(TA_LOCAL_OVERLOAD * 100), p->ready, p->zones);
        break;
    default:
        snprintf(msg, len, "Too many zones (more than %d)", TA_MAX_ZONES);
        break;
    }
}

int ta_local_groups(const ta_zone_nodes *zones, size_t nzones, const ta_ep *eps, size_t n,
                    int prev_on, const char **group_zone, char *msg, size_t msglen)
{
    assert((zones || nzones == 0) && (eps || n == 0));
    ta_local_plan p;
    int on = ta_local_plan_compute(zones, nzones, eps, n, prev_on, TA_LOCAL_DEFAULT_PADDING,
                                   group_zone, &p);
    if (msg && msglen)
        local_message(&p, msg, msglen);
    return on;
}
