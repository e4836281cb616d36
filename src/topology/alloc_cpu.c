/* SPDX-License-Identifier: Apache-2.0 */
/*
 * alloc_cpu.c — the "Auto" producer: our port of the EndpointSlice
 * controller's proportional-by-CPU allocator (docs/topology.md, "Auto").
 *
 *   nodes ──ta_zone_ratios──► ratio per zone (CPU share of ready,
 *                              non-control-plane nodes; ≥ 2 zones)
 *   ratios, N ready ──ta_allocations──► minimum = ceil(ratio×N × 1/1.2),
 *                              desired' = max(ratio×N, minimum),
 *                              maximum = minimum + N − Σminimum
 *   slices ──ta_add_hints──► unchanged slices keep valid hints (tally);
 *                              created/updated endpoints get their own zone;
 *                              surplus zones give endpoints to deficit
 *                              zones (ta_giving_receiving, ta_redistribute)
 *
 * Arithmetic is IEEE double in the controller's order, so minimums match it
 * exactly (0.4 × 3 = 1.2000000000000002 → 2). Go iterates maps; we iterate
 * zones sorted by name (ties go to the first name). Nothing allocates.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "topology/alloc.h"

static const double OVERLOAD_INV = 1.0 / (1.0 + TA_OVERLOAD_THRESHOLD);

static int has(const char *s)
{
    return s && *s;
}

static int zeq(const char *a, const char *b)
{
    return has(a) && has(b) && !strcasecmp(a, b);
}

/* Name order: without case, then bytes (deterministic for any input). */
static int zcmp(const char *a, const char *b)
{
    int c = strcasecmp(a ? a : "", b ? b : "");
    return c ? c : strcmp(a ? a : "", b ? b : "");
}

static const char *const reason_names[TA_R_COUNT] = {
    [TA_OK] = "TopologyAwareHintsEnabled",
    [TA_R_INSUFFICIENT_NODE_INFO] = "InsufficientNodeInfo",
    [TA_R_ONE_ZONE] = "NodesReadyInOneZoneOnly",
    [TA_R_INSUFFICIENT_ENDPOINTS] = "InsufficientNumberOfEndpoints",
    [TA_R_MIN_EXCEEDS_OVERLOAD] = "MinAllocationExceedsOverloadThreshold",
    [TA_R_NO_ZONE] = "NoZoneSpecified",
    [TA_R_NO_HINTS_ALLOCATED] = "NoAllocatedHintsForZones",
    [TA_R_TOO_MANY_ZONES] = "TooManyZones",
    [TA_R_DISABLED] = "TopologyAwareHintsDisabled",
    [TA_L_BELOW_THRESHOLD] = "PreferBelowThreshold",
    [TA_L_DOWNGRADED] = "PreferDowngradedToBalanced",
};

const char *ta_reason_name(int reason)
{
    return reason >= 0 && reason < TA_R_COUNT ? reason_names[reason] : "Unknown";
}

void ta_reason_message(int reason, size_t n, size_t zones, int family, char *buf, size_t len)
{
    if (!buf || !len)
        return;
    const char *fam = family == 6 || family == 2 ? "IPv6" : "IPv4";
    switch (reason) {
    case TA_OK:
        snprintf(buf, len, "Topology Aware Hints has been enabled, addressType: %s", fam);
        break;
    case TA_R_INSUFFICIENT_NODE_INFO:
        snprintf(buf, len, "Insufficient Node information: allocatable CPU or zone not "
                 "specified on one or more nodes, addressType: %s", fam);
        break;
    case TA_R_ONE_ZONE:
        snprintf(buf, len, "Nodes only ready in one zone, addressType: %s", fam);
        break;
    case TA_R_INSUFFICIENT_ENDPOINTS:
        snprintf(buf, len, "Insufficient number of endpoints (%zu endpoints, %zu zones), "
                 "addressType: %s", n, zones, fam);
        break;
    case TA_R_MIN_EXCEEDS_OVERLOAD:
        snprintf(buf, len, "Unable to allocate minimum required endpoints to each zone without "
                 "exceeding overload threshold (%zu endpoints, %zu zones), addressType: %s",
                 n, zones, fam);
        break;
    case TA_R_NO_ZONE:
        snprintf(buf, len, "One or more endpoints do not have a zone specified, addressType: %s",
                 fam);
        break;
    case TA_R_NO_HINTS_ALLOCATED:
        snprintf(buf, len, "No hints allocated for zones, addressType: %s", fam);
        break;
    case TA_R_TOO_MANY_ZONES:
        snprintf(buf, len, "Too many zones (more than %d), addressType: %s", TA_MAX_ZONES, fam);
        break;
    default:
        snprintf(buf, len, "Topology Aware Hints has been disabled, addressType: %s", fam);
        break;
    }
}

/* ---- zone ratios --------------------------------------------------------------- */

static void sort_ratios(ta_ratios *r)
{
    for (size_t i = 1; i < r->n; i++) {
        ta_zone_ratio v = r->z[i];
        size_t j = i;
        for (; j > 0 && zcmp(r->z[j - 1].zone, v.zone) > 0; j--)
            r->z[j] = r->z[j - 1];
        r->z[j] = v;
    }
}

/* Add one counted node to its zone; -1 when the zone table is full. */
static int add_node_cpu(ta_ratios *r, const ta_node *nd)
{
    for (size_t z = 0; z < r->n; z++)
        if (zeq(r->z[z].zone, nd->zone)) {
            r->z[z].milli += nd->cpu_milli;
            return 0;
        }
    if (r->n == TA_MAX_ZONES)
        return -1;
    r->z[r->n++] = (ta_zone_ratio){ .zone = nd->zone, .milli = nd->cpu_milli };
    return 0;
}

int ta_zone_ratios(const ta_node *nodes, size_t n, ta_ratios *out)
{
    assert((nodes || n == 0) && out);
    uint64_t total = 0;
    int full = 0;
    out->n = 0;
    for (size_t i = 0; i < n; i++) {
        const ta_node *nd = &nodes[i];
        if (nd->control_plane || !nd->ready)
            continue;
        if (!has(nd->zone) || !nd->cpu_milli) {
            out->n = 0;
            return out->status = TA_RATIOS_INSUFFICIENT;
        }
        total += nd->cpu_milli;
        if (add_node_cpu(out, nd) < 0)
            full = 1;
    }
    if (!total) {
        out->n = 0;
        return out->status = TA_RATIOS_INSUFFICIENT;
    }
    if (full) {
        out->n = 0;
        return out->status = TA_RATIOS_TOO_MANY_ZONES;
    }
    if (out->n < 2) {
        out->n = 0;
        return out->status = TA_RATIOS_ONE_ZONE;
    }
    for (size_t z = 0; z < out->n; z++)
        out->z[z].ratio = (double)out->z[z].milli / (double)total;
    sort_ratios(out);
    return out->status = TA_RATIOS_OK;
}

/* Indices of r->z in name order (callers may fill ratios in any order). */
static void name_order(const ta_ratios *r, size_t *idx)
{
    for (size_t i = 0; i < r->n; i++) {
        size_t j = i;
        for (; j > 0 && zcmp(r->z[idx[j - 1]].zone, r->z[i].zone) > 0; j--)
            idx[j] = idx[j - 1];
        idx[j] = i;
    }
}

static int ratio_index(const ta_ratios *r, const char *zone)
{
    for (size_t i = 0; i < r->n; i++)
        if (zeq(r->z[i].zone, zone))
            return (int)i;
    return -1;
}

/* ---- allocations --------------------------------------------------------------- */

static int ratios_reason(const ta_ratios *r)
{
    if (!r)
        return TA_R_INSUFFICIENT_NODE_INFO;
    switch (r->status) {
    case TA_RATIOS_OK:
        return r->n == 0 ? TA_R_INSUFFICIENT_NODE_INFO : r->n < 2 ? TA_R_ONE_ZONE : TA_OK;
    case TA_RATIOS_ONE_ZONE:
        return TA_R_ONE_ZONE;
    case TA_RATIOS_TOO_MANY_ZONES:
        return TA_R_TOO_MANY_ZONES;
    default:
        return TA_R_INSUFFICIENT_NODE_INFO;
    }
}

int ta_allocations(const ta_ratios *r, size_t n_ready, ta_alloc *a)
{
    assert(a);                              /* r NULL: no node information */
    assert(!r || r->status != TA_RATIOS_OK || r->n <= TA_MAX_ZONES);
    int why = ratios_reason(r);
    if (why)
        return why;
    if (r->n > n_ready)
        return TA_R_INSUFFICIENT_ENDPOINTS;
    long long remaining = (long long)n_ready, total_min = 0;
    for (size_t i = 0; i < r->n; i++) {
        double desired = r->z[i].ratio * (double)n_ready;
        int minimum = (int)ceil(desired * OVERLOAD_INV);
        a[i].minimum = minimum;
        a[i].desired = fmax(desired, (double)minimum);
        total_min += minimum;
        remaining -= minimum;
        if (remaining < 0)
            return TA_R_MIN_EXCEEDS_OVERLOAD;
    }
    for (size_t i = 0; i < r->n; i++)
        a[i].maximum = a[i].minimum + (int)((long long)n_ready - total_min);
    return TA_OK;
}

/* ---- tally --------------------------------------------------------------------- */

int ta_tally_get(const ta_tally *t, const char *zone)
{
    assert(t && t->n <= TA_MAX_TALLY);
    for (size_t i = 0; i < t->n; i++)
        if (zeq(t->zone[i], zone))
            return t->count[i];
    return 0;
}

int ta_tally_add(ta_tally *t, const char *zone, int delta)
{
    assert(t && t->n <= TA_MAX_TALLY);
    for (size_t i = 0; i < t->n; i++)
        if (zeq(t->zone[i], zone)) {
            t->count[i] += delta;
            return 0;
        }
    if (t->n == TA_MAX_TALLY)
        return -1;
    t->zone[t->n] = zone;
    t->count[t->n++] = delta;
    return 0;
}

/* ---- giving and receiving zones ------------------------------------------------- */

/* The zone (index into r->z) with the greatest positive value; ties go to
 * the first name. -1 when none is above 0. */
static int most(const ta_ratios *r, const size_t *order, const double *v, double *best)
{
    int zone = -1;
    *best = 0.0;
    for (size_t k = 0; k < r->n; k++) {
        size_t i = order[k];
        if (v[i] > *best) {
            zone = (int)i;
            *best = v[i];
        }
    }
    return zone;
}

void ta_giving_receiving(const ta_ratios *r, const ta_alloc *a, const ta_tally *t, int *give,
                         int *receive)
{
    assert(r && t && ((a && give && receive) || r->n == 0));   /* a, give, receive: r->n each */
    assert(r->n <= TA_MAX_ZONES && t->n <= TA_MAX_TALLY);
    double giving[TA_MAX_ZONES] = { 0 }, receiving[TA_MAX_ZONES] = { 0 };
    size_t order[TA_MAX_ZONES];
    name_order(r, order);
    for (size_t i = 0; i < r->n; i++) {
        double have = (double)ta_tally_get(t, r->z[i].zone), target = a[i].desired;
        give[i] = receive[i] = 0;
        if (have > target)
            giving[i] = have - target;
        else if (have < target)
            receiving[i] = target - have;
    }
    for (;;) {
        double g, rc;
        int gz = most(r, order, giving, &g), rz = most(r, order, receiving, &rc);
        if (gz < 0 || rz < 0 || (g < 1.0 && rc < 1.0) || g < 0.5 || rc < 0.5)
            break;
        give[gz]++;
        giving[gz]--;
        receive[rz]++;
        receiving[rz]--;
    }
}

/* ---- redistribution -------------------------------------------------------------- */

static int allocatable(const ta_slice *s, int pass)
{
    if (pass == 0)
        return s->kind == TA_SLICE_CREATE;
    if (pass == 1)
        return s->kind == TA_SLICE_UPDATE && !s->moved;
    return s->kind == TA_SLICE_UPDATE && s->moved;
}

static int any_positive(const int *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0)
            return 1;
    return 0;
}

/* Re-hint one endpoint of a giving zone to the first receiving zone by name. */
static void move_one(const ta_ratios *r, const size_t *order, int gz, int *give, int *receive,
                     const char **out, ta_tally *diff)
{
    for (size_t k = 0; k < r->n; k++) {
        size_t rz = order[k];
        if (receive[rz] <= 0)
            continue;
        *out = r->z[rz].zone;
        give[gz]--;
        receive[rz]--;
        ta_tally_add(diff, r->z[rz].zone, 1);
        ta_tally_add(diff, r->z[gz].zone, -1);
        return;
    }
}

void ta_redistribute(const ta_ratios *r, ta_slice *s, size_t ns, int *give, int *receive,
                     ta_tally *diff)
{
    assert(r && (s || ns == 0) && give && receive && diff);
    size_t order[TA_MAX_ZONES];
    name_order(r, order);
    diff->n = 0;
    for (int pass = 0; pass < 3; pass++)
        for (size_t j = 0; j < ns; j++) {
            if (!allocatable(&s[j], pass))
                continue;
            for (size_t i = 0; i < s[j].n; i++) {
                const ta_ep *e = &s[j].eps[i];
                if (!e->ready)
                    continue;
                if (!any_positive(give, r->n) || !any_positive(receive, r->n))
                    return;
                int gz = ratio_index(r, e->zone);
                if (gz >= 0 && give[gz] > 0)
                    move_one(r, order, gz, give, receive, &s[j].out[i], diff);
            }
        }
}

/* ---- hints of unchanged slices ---------------------------------------------------- */

int ta_hints_by_zone(const ta_ratios *r, const ta_alloc *a, const ta_slice *s,
                     const ta_tally *already, ta_tally *out)
{
    assert(r && a && s && already && out);
    out->n = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->eps[i].ready)
            continue;
        const ta_hint *h = s->have ? &s->have[i] : NULL;
        if (!h || !h->present || !h->nzones)
            return 0;
        for (size_t k = 0; k < h->nzones; k++)
            if (ratio_index(r, h->zones[k]) < 0 || ta_tally_add(out, h->zones[k], 1) < 0)
                return 0;
    }
    for (size_t k = 0; k < out->n; k++) {
        int z = ratio_index(r, out->zone[k]);
        if (z < 0 || out->count[k] + ta_tally_get(already, out->zone[k]) > a[z].maximum)
            return 0;
    }
    return 1;
}

/* ---- AddHints ------------------------------------------------------------------ */

static size_t ready_total(const ta_slice *s, size_t ns)
{
    size_t n = 0;
    for (size_t j = 0; j < ns; j++)
        for (size_t i = 0; i < s[j].n; i++)
            n += s[j].eps[i].ready != 0;
    return n;
}

static int had_hints(const ta_slice *s)
{
    for (size_t i = 0; s->have && i < s->n; i++)
        if (s->have[i].present)
            return 1;
    return 0;
}

/* RemoveHintsFromSlices: clear created/updated slices; unchanged slices
 * that carried any hint are cleared and move to update. */
static void remove_hints(ta_slice *s, size_t ns, ta_tally *tally)
{
    tally->n = 0;
    for (size_t j = 0; j < ns; j++) {
        if (s[j].kind == TA_SLICE_UNCHANGED) {
            if (!had_hints(&s[j]))
                continue;
            s[j].kind = TA_SLICE_UPDATE;
            s[j].moved = 1;
        }
        for (size_t i = 0; i < s[j].n; i++)
            s[j].out[i] = NULL;
    }
}

static int fail(int why, ta_slice *s, size_t ns, ta_tally *tally, size_t n, size_t zones,
                int family, char *msg, size_t msglen)
{
    remove_hints(s, ns, tally);
    ta_reason_message(why, n, zones, family, msg, msglen);
    return why;
}

/* Unchanged slices: keep the valid ones (their hints count), move the rest. */
static int tally_unchanged(const ta_ratios *r, const ta_alloc *a, ta_slice *s, size_t ns,
                           ta_tally *tally)
{
    for (size_t j = 0; j < ns; j++) {
        if (s[j].kind != TA_SLICE_UNCHANGED)
            continue;
        ta_tally mine;
        if (!ta_hints_by_zone(r, a, &s[j], tally, &mine)) {
            s[j].kind = TA_SLICE_UPDATE;
            s[j].moved = 1;
            continue;
        }
        for (size_t k = 0; k < mine.n; k++)
            if (ta_tally_add(tally, mine.zone[k], mine.count[k]) < 0)
                return TA_R_TOO_MANY_ZONES;
    }
    return TA_OK;
}

/* Step 1: every ready endpoint of created/updated slices → its own zone. */
static int own_zone_hints(ta_slice *s, size_t ns, ta_tally *tally)
{
    for (int pass = 0; pass < 3; pass++)
        for (size_t j = 0; j < ns; j++) {
            if (!allocatable(&s[j], pass))
                continue;
            for (size_t i = 0; i < s[j].n; i++) {
                const ta_ep *e = &s[j].eps[i];
                s[j].out[i] = NULL;
                if (!e->ready)
                    continue;
                if (!has(e->zone))
                    return TA_R_NO_ZONE;
                if (ta_tally_add(tally, e->zone, 1) < 0)
                    return TA_R_TOO_MANY_ZONES;
                s[j].out[i] = e->zone;
            }
        }
    return TA_OK;
}

int ta_add_hints(const ta_ratios *r, ta_slice *s, size_t ns, int family, ta_tally *tally,
                 char *msg, size_t msglen)
{
    assert((s || ns == 0) && tally);
    assert(!r || r->status != TA_RATIOS_OK || r->n <= TA_MAX_ZONES);
    size_t n = ready_total(s, ns), zones = r ? r->n : 0;
    ta_alloc a[TA_MAX_ZONES];
    for (size_t j = 0; j < ns; j++)
        s[j].moved = 0;
    tally->n = 0;
    int why = ta_allocations(r, n, a);
    if (!why)
        why = tally_unchanged(r, a, s, ns, tally);
    if (!why)
        why = own_zone_hints(s, ns, tally);
    if (why)
        return fail(why, s, ns, tally, n, zones, family, msg, msglen);
    int give[TA_MAX_ZONES], receive[TA_MAX_ZONES];
    ta_tally diff;
    ta_giving_receiving(r, a, tally, give, receive);
    ta_redistribute(r, s, ns, give, receive, &diff);
    for (size_t k = 0; k < diff.n; k++)
        if (ta_tally_add(tally, diff.zone[k], diff.count[k]) < 0)
            return fail(TA_R_TOO_MANY_ZONES, s, ns, tally, n, zones, family, msg, msglen);
    if (!tally->n)
        return fail(TA_R_NO_HINTS_ALLOCATED, s, ns, tally, n, zones, family, msg, msglen);
    ta_reason_message(TA_OK, n, zones, family, msg, msglen);
    return TA_OK;
}

int ta_auto_hints(const ta_ratios *r, const ta_ep *eps, size_t n, int family,
                  const char **hint_zone, char *msg, size_t msglen)
{
    assert((eps || n == 0) && (hint_zone || n == 0));
    ta_slice s = { .kind = TA_SLICE_UPDATE, .eps = eps, .out = hint_zone, .n = n };
    ta_tally tally;
    return ta_add_hints(r, &s, 1, family, &tally, msg, msglen);
}

/* ---- node-change overload re-check ------------------------------------------------ */

int ta_overloaded(const ta_ratios *r, const ta_tally *t)
{
    assert(!t || t->n <= TA_MAX_TALLY);
    if (!t || !t->n)
        return 0;
    if (!r || r->status != TA_RATIOS_OK || !r->n)
        return 1;
    double total = 0.0;
    for (size_t k = 0; k < t->n; k++)
        total += (double)t->count[k];
    for (size_t i = 0; i < r->n; i++) {
        int found = 0, have = 0;
        for (size_t k = 0; k < t->n; k++)
            if (zeq(t->zone[k], r->z[i].zone)) {
                found = 1;
                have = t->count[k];
            }
        if (!found)
            return 1;
        double min = ceil(total * r->z[i].ratio * OVERLOAD_INV);
        if (have < (int)min)
            return 1;
    }
    return 0;
}
