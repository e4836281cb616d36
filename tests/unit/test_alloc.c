/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_alloc.c — the hint producers (src/topology/alloc.h) against the
 * producer cases of docs/topology.md ("Reference cases"), modelled on the
 * EndpointSlice controller's tests: zone ratios S1–S9, adding hints A1–A6,
 * giving/receiving zones G1–G9, redistribution, validity of unchanged
 * hints, the node re-check K1–K9, whole allocations R1–R5, worked examples
 * W1–W5 and the KEP 2433 plan rows (compared per zone count);
 * trafficDistribution T1–T9 and TD1–TD5; the KEP 2004 Local algorithm
 * (threshold/padding transitions, overload, moves, top-up, downgrade).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "topology/alloc.h"
#include "cluster/store.h"

/* ---- helpers -------------------------------------------------------------------- */

static ta_ratios ratios(size_t n, ...)
{
    ta_ratios r;
    memset(&r, 0, sizeof r);
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        r.z[i].zone = va_arg(ap, const char *);
        r.z[i].ratio = va_arg(ap, double);
    }
    va_end(ap);
    r.n = n;
    r.status = n ? TA_RATIOS_OK : TA_RATIOS_INSUFFICIENT;
    return r;
}

static ta_node node(const char *zone, const char *cpu)
{
    return (ta_node){ .zone = zone, .cpu_milli = cpu ? (uint64_t)st_cpu_milli(cpu) : 0,
                      .ready = 1 };
}

/* Endpoints from a string of zone letters ("aab" → zone-a, zone-a, zone-b);
 * '-' = no zone. */
static const char *zname(char c)
{
    static const char *names[] = { "zone-a", "zone-b", "zone-c", "zone-d", "zone-e" };
    return c == '-' ? NULL : names[c - 'a'];
}

static size_t eps_of(const char *zones, ta_ep *e)
{
    static const char *nodes[] = { "node-0", "node-1", "node-2", "node-3", "node-4",
                                   "node-5", "node-6", "node-7", "node-8", "node-9" };
    size_t n = strlen(zones);
    for (size_t i = 0; i < n; i++)
        e[i] = (ta_ep){ .zone = zname(zones[i]), .node = nodes[i % 10], .ready = 1 };
    return n;
}

/* Per-zone counts of a hint array, as "a1 b2 c3" (zones named zone-x). */
static void counts(const char **h, size_t n, char *out, size_t len)
{
    int c[5] = { 0 };
    for (size_t i = 0; i < n; i++)
        if (h[i])
            c[h[i][5] - 'a']++;
    out[0] = 0;
    for (int z = 0; z < 5; z++)
        if (c[z]) {
            size_t l = strlen(out);
            snprintf(out + l, len - l, "%s%c%d", l ? " " : "", 'a' + z, c[z]);
        }
}

static void tally_is(const ta_tally *t, const char *want)
{
    char got[64] = "";
    for (char z = 'a'; z <= 'e'; z++) {
        int v = ta_tally_get(t, zname(z));
        if (v) {
            size_t l = strlen(got);
            snprintf(got + l, sizeof got - l, "%s%c%d", l ? " " : "", z, v);
        }
    }
    assert_string_equal(got, want);
}

static int auto_counts(const ta_ratios *r, const char *zones, char *out, size_t len,
                       size_t *moved)
{
    ta_ep e[64];
    const char *h[64];
    char msg[256];
    size_t n = eps_of(zones, e);
    int rc = ta_auto_hints(r, e, n, 4, h, msg, sizeof msg);
    counts(h, n, out, len);
    if (moved) {
        *moved = 0;
        for (size_t i = 0; i < n; i++)
            *moved += h[i] && strcmp(h[i], e[i].zone);
    }
    return rc;
}

/* ---- zone ratios: TestSetNodes S1–S9 ------------------------------------------------ */

static void test_cpu_quantity(void **st)
{
    (void)st;
    assert_int_equal(st_cpu_milli("1000m"), 1000);
    assert_int_equal(st_cpu_milli("1.5"), 1500);
    assert_int_equal(st_cpu_milli("0.0005"), 1);
    assert_int_equal(st_cpu_milli("100m"), 100);
}

static void test_zone_ratios(void **st)
{
    (void)st;
    ta_ratios r;
    assert_int_equal(ta_zone_ratios(NULL, 0, &r), TA_RATIOS_INSUFFICIENT);          /* S1 */
    ta_node s2[] = { node("zone-a", "1000m") };
    assert_int_equal(ta_zone_ratios(s2, 1, &r), TA_RATIOS_ONE_ZONE);                /* S2 */
    ta_node s3[] = { node("zone-a", "1000m"), node("zone-a", "1000m") };
    assert_int_equal(ta_zone_ratios(s3, 2, &r), TA_RATIOS_ONE_ZONE);                /* S3 */
    ta_node s4[] = { node("zone-b", "1000m"), node("zone-a", "1000m") };
    assert_int_equal(ta_zone_ratios(s4, 2, &r), TA_RATIOS_OK);                      /* S4 */
    assert_int_equal(r.n, 2);
    assert_string_equal(r.z[0].zone, "zone-a");                /* sorted by name */
    assert_true(r.z[0].milli == 1000 && r.z[1].milli == 1000);
    assert_true(r.z[0].ratio == 0.5 && r.z[1].ratio == 0.5);
    ta_node s5[] = { node("zone-a", "1000m"), node("zone-b", "1000m") };
    s5[0].ready = 0;
    assert_int_equal(ta_zone_ratios(s5, 2, &r), TA_RATIOS_ONE_ZONE);                /* S5 */
    ta_node s6[] = { node("zone-a", "1000m"), node("zone-b", "1000m") };
    s6[1].control_plane = 1;
    assert_int_equal(ta_zone_ratios(s6, 2, &r), TA_RATIOS_ONE_ZONE);                /* S6 */
    ta_node s7[] = { node("zone-a", "1000m"), node("zone-b", "1000m"), node("zone-b", "1000m") };
    s7[2].ready = 0;
    assert_int_equal(ta_zone_ratios(s7, 3, &r), TA_RATIOS_OK);                      /* S7 */
    assert_true(r.z[0].ratio == 0.5 && r.z[1].ratio == 0.5);
    s7[2].ready = 1;
    s7[2].control_plane = 1;
    assert_int_equal(ta_zone_ratios(s7, 3, &r), TA_RATIOS_OK);                      /* S8 */
    assert_true(r.z[0].ratio == 0.5 && r.z[1].ratio == 0.5);
    ta_node s9[] = { node("zone-a", "1000m"), node("zone-a", "1000m"), node("zone-a", "1000m"),
                     node("zone-a", "2000m"), node("zone-b", "3000m"), node("zone-b", "1500m"),
                     node("zone-c", "500m") };
    assert_int_equal(ta_zone_ratios(s9, 7, &r), TA_RATIOS_OK);                      /* S9 */
    assert_int_equal(r.n, 3);
    assert_true(r.z[0].milli == 5000 && r.z[1].milli == 4500 && r.z[2].milli == 500);
    assert_true(r.z[0].ratio == 0.5 && r.z[1].ratio == 0.45 && r.z[2].ratio == 0.05);
    /* a counted node without zone or CPU disables everything; skipped ones never do */
    ta_node bad[] = { node("zone-a", "1000m"), node("zone-b", "1000m"), node("", "1000m") };
    assert_int_equal(ta_zone_ratios(bad, 3, &r), TA_RATIOS_INSUFFICIENT);
    bad[2] = node("zone-c", NULL);
    assert_int_equal(ta_zone_ratios(bad, 3, &r), TA_RATIOS_INSUFFICIENT);
    bad[2].ready = 0;
    assert_int_equal(ta_zone_ratios(bad, 3, &r), TA_RATIOS_OK);
    /* zones compare without case */
    ta_node mixed[] = { node("Zone-A", "1000m"), node("zone-a", "1000m"), node("zone-b", "2000m") };
    assert_int_equal(ta_zone_ratios(mixed, 3, &r), TA_RATIOS_OK);
    assert_int_equal(r.n, 2);
    assert_true(r.z[0].ratio == 0.5);
}

/* ---- allocations and messages ---------------------------------------------------- */

static void test_allocations(void **st)
{
    (void)st;
    ta_alloc a[TA_MAX_ZONES];
    /* float fidelity: 0.4 × 3 = 1.2000000000000002 → minimum 2 */
    ta_ratios w4 = ratios(3, "zone-a", 0.4, "zone-b", 0.3, "zone-c", 0.3);
    assert_int_equal(ta_allocations(&w4, 3, a), TA_R_MIN_EXCEEDS_OVERLOAD);
    /* 0.3 × 4 = 1.2 exactly → minimum 1 */
    ta_ratios r2 = ratios(2, "zone-a", 0.3, "zone-b", 0.7);
    assert_int_equal(ta_allocations(&r2, 4, a), TA_OK);
    assert_int_equal(a[0].minimum, 1);
    assert_int_equal(a[1].minimum, 3);               /* 2.8 × 1/1.2 = 2.33 → 3 */
    assert_true(a[0].desired == 0.3 * 4);            /* desired' = max(desired, min) */
    assert_true(a[1].desired == 3.0);
    assert_int_equal(a[0].maximum, 1);               /* min + N − Σmin = 1 + 0 */
    assert_int_equal(a[1].maximum, 3);
    ta_ratios eq = ratios(2, "zone-a", 0.5, "zone-b", 0.5);
    assert_int_equal(ta_allocations(&eq, 10, a), TA_OK);
    assert_int_equal(a[0].minimum, 5);               /* ceil(5/1.2 = 4.17) */
    assert_int_equal(a[0].maximum, 5);
    assert_int_equal(ta_allocations(&eq, 1, a), TA_R_INSUFFICIENT_ENDPOINTS);
    ta_ratios none = ratios(0);
    assert_int_equal(ta_allocations(&none, 5, a), TA_R_INSUFFICIENT_NODE_INFO);
    assert_int_equal(ta_allocations(NULL, 5, a), TA_R_INSUFFICIENT_NODE_INFO);
    ta_ratios one = ratios(0);
    one.status = TA_RATIOS_ONE_ZONE;
    assert_int_equal(ta_allocations(&one, 5, a), TA_R_ONE_ZONE);
    ta_ratios single = ratios(1, "zone-a", 1.0);
    assert_int_equal(ta_allocations(&single, 5, a), TA_R_ONE_ZONE);

    char m[300];
    ta_reason_message(TA_R_INSUFFICIENT_NODE_INFO, 0, 0, 4, m, sizeof m);
    assert_string_equal(m, "Insufficient Node information: allocatable CPU or zone not specified"
                        " on one or more nodes, addressType: IPv4");
    ta_reason_message(TA_R_ONE_ZONE, 0, 0, 6, m, sizeof m);
    assert_string_equal(m, "Nodes only ready in one zone, addressType: IPv6");
    ta_reason_message(TA_R_INSUFFICIENT_ENDPOINTS, 2, 3, 4, m, sizeof m);
    assert_string_equal(m, "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4");
    ta_reason_message(TA_R_MIN_EXCEEDS_OVERLOAD, 4, 3, 2, m, sizeof m);
    assert_string_equal(m, "Unable to allocate minimum required endpoints to each zone without "
                        "exceeding overload threshold (4 endpoints, 3 zones), addressType: IPv6");
    ta_reason_message(TA_R_NO_ZONE, 0, 0, 4, m, sizeof m);
    assert_string_equal(m, "One or more endpoints do not have a zone specified, addressType: IPv4");
    ta_reason_message(TA_R_NO_HINTS_ALLOCATED, 0, 0, 4, m, sizeof m);
    assert_string_equal(m, "No hints allocated for zones, addressType: IPv4");
    ta_reason_message(TA_OK, 0, 0, 4, m, sizeof m);
    assert_string_equal(m, "Topology Aware Hints has been enabled, addressType: IPv4");
    ta_reason_message(TA_R_DISABLED, 0, 0, 6, m, sizeof m);
    assert_string_equal(m, "Topology Aware Hints has been disabled, addressType: IPv6");
    assert_string_equal(ta_reason_name(TA_R_INSUFFICIENT_NODE_INFO), "InsufficientNodeInfo");
    assert_string_equal(ta_reason_name(TA_R_ONE_ZONE), "NodesReadyInOneZoneOnly");
    assert_string_equal(ta_reason_name(TA_R_INSUFFICIENT_ENDPOINTS),
                        "InsufficientNumberOfEndpoints");
    assert_string_equal(ta_reason_name(TA_R_MIN_EXCEEDS_OVERLOAD),
                        "MinAllocationExceedsOverloadThreshold");
    assert_string_equal(ta_reason_name(-1), "Unknown");
}

/* ---- AddHints: TestAddHints A1–A6 and slice categories ------------------------------ */

static void test_add_hints_a1_a3(void **st)
{
    (void)st;
    ta_tally t;
    char msg[256];
    ta_ratios none = ratios(0);
    assert_int_equal(ta_add_hints(&none, NULL, 0, 4, &t, msg, sizeof msg),
                     TA_R_INSUFFICIENT_NODE_INFO);                                       /* A1 */
    assert_int_equal(t.n, 0);
    assert_string_equal(msg, "Insufficient Node information: allocatable CPU or zone not "
                        "specified on one or more nodes, addressType: IPv4");
    ta_ep e[4];
    const char *out[4] = { "junk", "junk", "junk", "junk" };
    eps_of("a", e);
    ta_slice s = { .kind = TA_SLICE_CREATE, .eps = e, .out = out, .n = 1 };
    assert_int_equal(ta_add_hints(&none, &s, 1, 4, &t, msg, sizeof msg),
                     TA_R_INSUFFICIENT_NODE_INFO);                                       /* A2 */
    assert_null(out[0]);
    assert_int_equal(s.kind, TA_SLICE_CREATE);
    ta_ratios r3 = ratios(3, "zone-a", 0.3, "zone-b", 0.4, "zone-c", 0.3);
    eps_of("ab", e);
    s.n = 2;
    assert_int_equal(ta_add_hints(&r3, &s, 1, 4, &t, msg, sizeof msg),
                     TA_R_INSUFFICIENT_ENDPOINTS);                                       /* A3 */
    assert_null(out[0]);
    assert_null(out[1]);
    assert_string_equal(msg, "Insufficient number of endpoints (2 endpoints, 3 zones), "
                        "addressType: IPv4");
}

static void test_add_hints_a4_a5(void **st)
{
    (void)st;
    ta_tally t;
    char msg[256];
    ta_ratios r = ratios(2, "zone-a", 0.45, "zone-b", 0.55);
    ta_ep e[4];
    const char *out[4];
    eps_of("abbb", e);
    ta_slice s = { .kind = TA_SLICE_CREATE, .eps = e, .out = out, .n = 2 };
    assert_int_equal(ta_add_hints(&r, &s, 1, 4, &t, msg, sizeof msg), TA_OK);         /* A4 */
    assert_string_equal(out[0], "zone-a");
    assert_string_equal(out[1], "zone-b");
    tally_is(&t, "a1 b1");
    assert_string_equal(msg, "Topology Aware Hints has been enabled, addressType: IPv4");
    e[2].ready = 0;                        /* ready: false */
    e[3].ready = 0;                        /* ready unset: not ready for the controller */
    s.n = 4;
    assert_int_equal(ta_add_hints(&r, &s, 1, 4, &t, msg, sizeof msg), TA_OK);         /* A5 */
    assert_string_equal(out[0], "zone-a");
    assert_string_equal(out[1], "zone-b");
    assert_null(out[2]);
    assert_null(out[3]);
    tally_is(&t, "a1 b1");
}

static void test_add_hints_a6(void **st)
{
    (void)st;
    ta_tally t;
    char msg[256];
    ta_ratios r = ratios(3, "zone-a", 0.35, "zone-b", 0.35, "zone-c", 0.30);
    ta_ep c1[2], c2[3], u1[2], u2[3];
    const char *o1[2], *o2[3], *o3[2], *o4[3];
    eps_of("ab", c1);                      /* 10.1.2.3 (a), 10.1.2.4 (b) */
    eps_of("cca", c2);
    eps_of("aa", u1);
    eps_of("bca", u2);
    ta_slice s[] = {
        { .kind = TA_SLICE_UPDATE, .eps = u1, .out = o3, .n = 2 },
        { .kind = TA_SLICE_CREATE, .eps = c1, .out = o1, .n = 2 },
        { .kind = TA_SLICE_CREATE, .eps = c2, .out = o2, .n = 3 },
        { .kind = TA_SLICE_UPDATE, .eps = u2, .out = o4, .n = 3 },
    };
    assert_int_equal(ta_add_hints(&r, s, 4, 4, &t, msg, sizeof msg), TA_OK);
    tally_is(&t, "a4 b3 c3");
    assert_string_equal(o1[0], "zone-b");  /* the first zone-a endpoint of the created slices */
    assert_string_equal(o1[1], "zone-b");
    assert_string_equal(o2[0], "zone-c");
    assert_string_equal(o2[1], "zone-c");
    assert_string_equal(o2[2], "zone-a");
    assert_string_equal(o3[0], "zone-a");
    assert_string_equal(o3[1], "zone-a");
    assert_string_equal(o4[0], "zone-b");
    assert_string_equal(o4[1], "zone-c");
    assert_string_equal(o4[2], "zone-a");
}

static void test_add_hints_unchanged(void **st)
{
    (void)st;
    ta_tally t;
    char msg[256];
    ta_ratios r = ratios(2, "zone-a", 0.5, "zone-b", 0.5);
    static const char *const za[] = { "zone-a" }, *const zb[] = { "zone-b" },
                             *const zx[] = { "zone-x" };
    ta_ep ue[2], ve[2], ce[2];
    eps_of("ab", ue);
    eps_of("aa", ve);
    eps_of("bb", ce);
    ta_hint uh[2] = { { 1, za, 1, NULL, 0 }, { 1, zb, 1, NULL, 0 } };   /* valid */
    ta_hint vh[2] = { { 1, za, 1, NULL, 0 }, { 1, zx, 1, NULL, 0 } };   /* zone not allocated */
    const char *uo[2] = { "keep", "keep" }, *vo[2], *co[2];
    ta_slice s[] = {
        { .kind = TA_SLICE_UNCHANGED, .eps = ue, .have = uh, .out = uo, .n = 2 },
        { .kind = TA_SLICE_UNCHANGED, .eps = ve, .have = vh, .out = vo, .n = 2 },
        { .kind = TA_SLICE_CREATE, .eps = ce, .out = co, .n = 2 },
    };
    /* N = 6 → minimum 3, maximum 3 per zone; unchanged a1 b1 count first */
    assert_int_equal(ta_add_hints(&r, s, 3, 6, &t, msg, sizeof msg), TA_OK);
    tally_is(&t, "a3 b3");
    assert_int_equal(s[0].kind, TA_SLICE_UNCHANGED);
    assert_string_equal(uo[0], "keep");     /* unchanged slices keep their hints */
    assert_int_equal(s[1].kind, TA_SLICE_UPDATE);
    assert_int_equal(s[1].moved, 1);
    /* created b,b (tally a1 b3 so far), then moved a,a (a3 b3): balanced, no move */
    assert_string_equal(co[0], "zone-b");
    assert_string_equal(co[1], "zone-b");
    assert_string_equal(vo[0], "zone-a");
    assert_string_equal(vo[1], "zone-a");
    assert_string_equal(msg, "Topology Aware Hints has been enabled, addressType: IPv6");

    /* failure: hinted unchanged slices are cleared and move to update,
     * unhinted ones stay unchanged */
    ta_ep we[1];
    eps_of("a", we);
    const char *wo[1] = { "keep" };
    uo[0] = uo[1] = "keep";
    ta_slice f[] = {
        { .kind = TA_SLICE_UNCHANGED, .eps = ue, .have = uh, .out = uo, .n = 2 },
        { .kind = TA_SLICE_UNCHANGED, .eps = we, .have = NULL, .out = wo, .n = 1 },
    };
    ta_ratios three = ratios(3, "zone-a", 0.4, "zone-b", 0.3, "zone-c", 0.3);
    /* 3 ready: 0.4 × 3 = 1.2000000000000002 → minimum 2, Σ = 4 > 3 */
    assert_int_equal(ta_add_hints(&three, f, 2, 4, &t, msg, sizeof msg),
                     TA_R_MIN_EXCEEDS_OVERLOAD);
    assert_string_equal(msg, "Unable to allocate minimum required endpoints to each zone without "
                        "exceeding overload threshold (3 endpoints, 3 zones), addressType: IPv4");
    assert_int_equal(f[0].kind, TA_SLICE_UPDATE);
    assert_null(uo[0]);
    assert_int_equal(f[1].kind, TA_SLICE_UNCHANGED);
    assert_string_equal(wo[0], "keep");
}

static void test_add_hints_failures(void **st)
{
    (void)st;
    ta_tally t;
    char msg[256];
    static const char *const za[] = { "zone-a" }, *const zb[] = { "zone-b" };
    ta_ep ue[2], we[1], ce[3];
    eps_of("ab", ue);
    eps_of("a", we);
    eps_of("aa-", ce);                      /* third endpoint has no zone */
    ta_hint uh[2] = { { 1, za, 1, NULL, 0 }, { 1, zb, 1, NULL, 0 } };
    const char *uo[2] = { "keep", "keep" }, *wo[1] = { "keep" }, *co[3];
    ta_slice f[] = {
        { .kind = TA_SLICE_UNCHANGED, .eps = ue, .have = uh, .out = uo, .n = 2 },
        { .kind = TA_SLICE_UNCHANGED, .eps = we, .have = NULL, .out = wo, .n = 1 },
        { .kind = TA_SLICE_CREATE, .eps = ce, .out = co, .n = 3 },
    };
    ta_ratios r = ratios(2, "zone-a", 0.5, "zone-b", 0.5);
    assert_int_equal(ta_add_hints(&r, f, 3, 6, &t, msg, sizeof msg), TA_R_NO_ZONE);
    assert_string_equal(msg, "One or more endpoints do not have a zone specified, addressType: IPv6");
    assert_int_equal(t.n, 0);
    assert_int_equal(f[0].kind, TA_SLICE_UPDATE);    /* had hints: cleared, moved */
    assert_null(uo[0]);
    assert_null(uo[1]);
    /* the hintless unchanged slice was invalid (moved to update before the
     * failure), so it is cleared too */
    assert_int_equal(f[1].kind, TA_SLICE_UPDATE);
    assert_null(wo[0]);
    assert_null(co[0]);
    assert_null(co[1]);
    assert_null(co[2]);
}

/* ---- Test_getGivingAndReceivingZones G1–G9 ------------------------------------------ */

static void gr(const double *desired, const int *tally, const char *want_give,
               const char *want_recv)
{
    ta_ratios r = ratios(3, "zone-a", 0.0, "zone-b", 0.0, "zone-c", 0.0);
    ta_alloc a[3];
    ta_tally t = { 0 };
    for (int i = 0; i < 3; i++) {
        a[i] = (ta_alloc){ .desired = desired[i] };
        if (tally[i])
            ta_tally_add(&t, r.z[i].zone, tally[i]);
    }
    int give[3], recv[3];
    ta_giving_receiving(&r, a, &t, give, recv);
    char g[64] = "", v[64] = "";
    for (int i = 0; i < 3; i++) {
        if (give[i])
            snprintf(g + strlen(g), sizeof g - strlen(g), "%s%c%d", *g ? " " : "", 'a' + i, give[i]);
        if (recv[i])
            snprintf(v + strlen(v), sizeof v - strlen(v), "%s%c%d", *v ? " " : "", 'a' + i, recv[i]);
    }
    assert_string_equal(g, want_give);
    assert_string_equal(v, want_recv);
}

static void test_giving_receiving(void **st)
{
    (void)st;
    ta_ratios empty = ratios(0);                                                          /* G1 */
    ta_tally t0 = { 0 };
    int g0[1] = { 7 }, r0[1] = { 7 };
    ta_giving_receiving(&empty, NULL, &t0, g0, r0);
    assert_int_equal(g0[0], 7);
    gr((double[]){ 1.2, 1.1, 1.0 }, (int[]){ 1, 1, 1 }, "", "");                          /* G2 */
    gr((double[]){ 5.1, 5.1, 5.8 }, (int[]){ 16, 0, 0 }, "a10", "b5 c5");                 /* G3 */
    gr((double[]){ 5.0, 5.6, 5.4 }, (int[]){ 16, 0, 0 }, "a11", "b6 c5");                 /* G4 */
    gr((double[]){ 5.0, 5.6, 5.4 }, (int[]){ 0, 8, 8 }, "b2 c3", "a5");                   /* G5 */
    gr((double[]){ 5, 5, 5 }, (int[]){ 6, 6, 6 }, "", "");                                /* G6 */
    gr((double[]){ -5, -5, -5 }, (int[]){ 6, 6, 6 }, "", "");                             /* G7 */
    gr((double[]){ 5, 5, 5 }, (int[]){ -4, -3, -2 }, "", "");                             /* G8 */
    gr((double[]){ 5, 5, 5 }, (int[]){ -40, 20, 20 }, "b15 c15", "a30");                  /* G9 */
}

/* ---- Test_redistributeHints ----------------------------------------------------- */

static void test_redistribute(void **st)
{
    (void)st;
    ta_ratios r = ratios(3, "zone-a", 0.3, "zone-b", 0.3, "zone-c", 0.4);
    ta_ep e[3];
    const char *o[3] = { "zone-a", "zone-a", "zone-a" };
    eps_of("aaa", e);
    ta_slice s = { .kind = TA_SLICE_UPDATE, .eps = e, .out = o, .n = 1 };
    ta_tally d;
    int give[3] = { 1, 0, 0 }, recv[3] = { 0, 1, 0 };
    ta_redistribute(&r, &s, 1, give, recv, &d);
    tally_is(&d, "a-1 b1");
    assert_string_equal(o[0], "zone-b");
    int give2[3] = { 2, 0, 0 }, recv2[3] = { 0, 1, 1 };
    s.n = 3;
    o[0] = "zone-a";
    ta_redistribute(&r, &s, 1, give2, recv2, &d);
    tally_is(&d, "a-2 b1 c1");
    assert_string_equal(o[0], "zone-b");
    assert_string_equal(o[1], "zone-c");
    assert_string_equal(o[2], "zone-a");
    int give3[3] = { 0 }, recv3[3] = { 0 };
    ta_redistribute(&r, NULL, 0, give3, recv3, &d);
    assert_int_equal(d.n, 0);
    /* unchanged slices never move */
    s.kind = TA_SLICE_UNCHANGED;
    int give4[3] = { 1, 0, 0 }, recv4[3] = { 0, 1, 0 };
    o[0] = "zone-a";
    ta_redistribute(&r, &s, 1, give4, recv4, &d);
    assert_int_equal(d.n, 0);
    assert_string_equal(o[0], "zone-a");
}

/* ---- Test_getHintsByZone -------------------------------------------------------- */

static void test_hints_by_zone(void **st)
{
    (void)st;
    ta_ratios r = ratios(2, "zone-a", 0.5, "zone-b", 0.5);
    ta_alloc a[2] = { { .maximum = 3 }, { .maximum = 3 } };
    static const char *const za[] = { "zone-a" }, *const zab[] = { "zone-a", "zone-b" },
                             *const zc[] = { "zone-c" }, *const zaa[] = { "zone-a", "zone-a" };
    ta_tally already = { 0 }, out;
    ta_tally_add(&already, "zone-a", 1);
    ta_ep e[3];
    eps_of("aaa", e);
    ta_hint h[3] = { { 1, za, 1, NULL, 0 } };
    ta_slice s = { .kind = TA_SLICE_UNCHANGED, .eps = e, .have = h, .n = 1 };
    assert_true(ta_hints_by_zone(&r, a, &s, &already, &out));        /* valid single hint */
    tally_is(&out, "a1");
    e[1].ready = 0;                                                  /* unready: ignored */
    e[2].ready = 0;
    s.n = 3;
    assert_true(ta_hints_by_zone(&r, a, &s, &already, &out));
    tally_is(&out, "a1");
    e[1].ready = e[2].ready = 1;
    h[1] = (ta_hint){ 1, zab, 2, NULL, 0 };                          /* multiple hints */
    h[2] = (ta_hint){ 1, za, 1, NULL, 0 };
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));      /* a 3 + 1 > max 3 */
    a[0].maximum = 4;
    assert_true(ta_hints_by_zone(&r, a, &s, &already, &out));
    tally_is(&out, "a3 b1");
    s.n = 1;
    a[0].maximum = 3;
    h[0] = (ta_hint){ 1, zc, 1, NULL, 0 };                           /* zone not allocated */
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));
    h[0] = (ta_hint){ 0 };                                           /* hints nil */
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));
    h[0] = (ta_hint){ 1, NULL, 0, NULL, 0 };                         /* forZones empty */
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));
    h[0] = (ta_hint){ 1, zaa, 2, NULL, 0 };                          /* 2 + 1 > max 2 */
    a[0].maximum = 2;
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));
    s.have = NULL;                                                   /* no hints at all */
    assert_false(ta_hints_by_zone(&r, a, &s, &already, &out));
}

/* ---- Test_checkNodeTopologyDistribution K1–K9 ------------------------------------- */

static int requeue(const ta_node *nodes, size_t n, const int *tally)
{
    ta_ratios r;
    ta_zone_ratios(nodes, n, &r);
    ta_tally t = { 0 };
    for (int i = 0; i < 3; i++)
        if (tally[i] >= 0)
            ta_tally_add(&t, zname((char)('a' + i)), tally[i]);
    return ta_overloaded(&r, &t);
}

static void test_overloaded(void **st)
{
    (void)st;
    assert_int_equal(requeue(NULL, 0, (int[]){ -1, -1, -1 }), 0);                         /* K1 */
    ta_node k2[] = { node("zone-a", "100m"), node("zone-b", "1000m"), node("zone-c", "2000m") };
    assert_int_equal(requeue(k2, 3, (int[]){ 1, 2, 3 }), 1);                              /* K2 */
    k2[0].ready = 0;
    assert_int_equal(requeue(k2, 3, (int[]){ 1, 2, 3 }), 1);                              /* K3 */
    ta_node k4[] = { node("zone-b", "2000m"), node("zone-b", "2000m"), node("zone-c", "2000m"),
                     node("zone-c", "2000m") };
    assert_int_equal(requeue(k4, 4, (int[]){ -1, 5, 4 }), 0);                             /* K4 */
    k4[3].zone = NULL;
    assert_int_equal(requeue(k4, 4, (int[]){ -1, 5, 4 }), 1);                             /* K5 */
    k4[3] = node("zone-c", NULL);
    assert_int_equal(requeue(k4, 4, (int[]){ -1, 5, 4 }), 1);                             /* K6 */
    k4[3] = node("zone-c", "2000m");
    assert_int_equal(requeue(k4, 4, (int[]){ -1, 6, 4 }), 1);                             /* K7 */
    ta_node k8[] = { node("zone-a", "2000m"), node("zone-b", "1000m"), node("zone-c", "100m") };
    assert_int_equal(requeue(k8, 3, (int[]){ 20, 10, 1 }), 0);                            /* K8 */
    assert_int_equal(requeue(k8, 3, (int[]){ 20, 10, 0 }), 1);                            /* K9 */
    assert_int_equal(requeue(k8, 3, (int[]){ 20, 10, -1 }), 1);      /* zone absent */
}

/* ---- TestReconcileTopology R1–R5, worked examples W1–W5, KEP plan rows -------------- */

static ta_ratios from_nodes(size_t n, ...)
{
    ta_node nodes[8];
    va_list ap;
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) {
        const char *zone = va_arg(ap, const char *);
        nodes[i] = node(zone, va_arg(ap, const char *));
    }
    va_end(ap);
    ta_ratios r;
    ta_zone_ratios(nodes, n, &r);
    return r;
}

static void test_reconcile_and_worked(void **st)
{
    (void)st;
    char c[64];
    size_t moved;
    /* 3 zones × 10 nodes at 100m each = 1000m per zone */
    ta_ratios eq3 = from_nodes(3, "zone-a", "1000m", "zone-b", "1000m", "zone-c", "1000m");
    ta_ratios none = ratios(0);
    assert_int_equal(auto_counts(&none, "ccc", c, sizeof c, NULL),
                     TA_R_INSUFFICIENT_NODE_INFO);                                       /* R1 */
    assert_string_equal(c, "");
    assert_int_equal(auto_counts(&eq3, "ccc", c, sizeof c, &moved), TA_OK);             /* R2 */
    assert_string_equal(c, "a1 b1 c1");
    assert_int_equal(moved, 2);
    assert_int_equal(auto_counts(&eq3, "aacc", c, sizeof c, NULL),
                     TA_R_MIN_EXCEEDS_OVERLOAD);                                         /* R3 */
    assert_int_equal(auto_counts(&eq3, "aaaabbbcc", c, sizeof c, &moved), TA_OK);       /* R4 */
    assert_string_equal(c, "a3 b3 c3");
    assert_int_equal(moved, 1);
    assert_int_equal(ta_hint_source(NULL, "disabled", NULL, 1), TA_SRC_NONE);           /* R5 */

    ta_ratios w1 = from_nodes(3, "zone-a", "20", "zone-b", "16", "zone-c", "14");
    assert_int_equal(auto_counts(&w1, "aaaaaaaaaa", c, sizeof c, NULL), TA_OK);         /* W1 */
    assert_string_equal(c, "a4 b3 c3");
    ta_ratios w2 = from_nodes(2, "zone-a", "4", "zone-b", "3500m");
    assert_int_equal(auto_counts(&w2, "aaaabb", c, sizeof c, NULL), TA_OK);             /* W2 */
    assert_string_equal(c, "a3 b3");
    ta_ratios eq2 = from_nodes(2, "zone-a", "1", "zone-b", "1");
    assert_int_equal(auto_counts(&eq2, "aaabb", c, sizeof c, NULL),
                     TA_R_MIN_EXCEEDS_OVERLOAD);                                         /* W3 */
    ta_ratios w4 = from_nodes(3, "zone-a", "4000m", "zone-b", "3000m", "zone-c", "3000m");
    assert_int_equal(auto_counts(&w4, "abc", c, sizeof c, NULL),
                     TA_R_MIN_EXCEEDS_OVERLOAD);                                         /* W4 */
    assert_int_equal(auto_counts(&eq3, "aaa", c, sizeof c, NULL), TA_OK);               /* W5 */
    assert_string_equal(c, "a1 b1 c1");

    /* KEP 2433 controller plan rows */
    assert_int_equal(auto_counts(&eq3, "ab", c, sizeof c, NULL), TA_R_INSUFFICIENT_ENDPOINTS);
    assert_int_equal(auto_counts(&eq3, "abc", c, sizeof c, NULL), TA_OK);
    assert_string_equal(c, "a1 b1 c1");
    assert_int_equal(auto_counts(&eq3, "aabc", c, sizeof c, NULL), TA_R_MIN_EXCEEDS_OVERLOAD);
    assert_int_equal(auto_counts(&eq2, "aabb", c, sizeof c, NULL), TA_OK);
    assert_string_equal(c, "a2 b2");
    assert_int_equal(auto_counts(&eq2, "aaaa", c, sizeof c, &moved), TA_OK);
    assert_string_equal(c, "a2 b2");
    assert_int_equal(moved, 2);
    ta_ratios dbl = from_nodes(3, "zone-a", "2", "zone-b", "1", "zone-c", "1");
    assert_int_equal(auto_counts(&dbl, "abcc", c, sizeof c, NULL), TA_OK);
    assert_string_equal(c, "a2 b1 c1");
    ta_ratios one = from_nodes(2, "zone-a", "1", "zone-a", "1");
    assert_int_equal(auto_counts(&one, "aaaa", c, sizeof c, NULL), TA_R_ONE_ZONE);
}

/* ---- the DNS entry point --------------------------------------------------------- */

static void test_auto_hints_entry(void **st)
{
    (void)st;
    ta_ratios eq3 = from_nodes(3, "zone-a", "1", "zone-b", "1", "zone-c", "1");
    ta_ep e[7];
    const char *h[7];
    char msg[256];
    size_t n = eps_of("aaabbbc", e);
    e[6].ready = 0;                                    /* not counted, no hint */
    /* 6 ready: desired 2, minimum 2 per zone; a and b each give one to c */
    assert_int_equal(ta_auto_hints(&eq3, e, n, 6, h, msg, sizeof msg), TA_OK);
    assert_string_equal(msg, "Topology Aware Hints has been enabled, addressType: IPv6");
    const char *want[] = { "zone-c", "zone-a", "zone-a", "zone-c", "zone-b", "zone-b", NULL };
    for (size_t i = 0; i < n; i++) {
        if (want[i])
            assert_string_equal(h[i], want[i]);
        else
            assert_null(h[i]);
    }
    e[6].zone = NULL;                                  /* unready without zone: fine */
    assert_int_equal(ta_auto_hints(&eq3, e, n, 6, h, msg, sizeof msg), TA_OK);
    e[6].ready = 1;                                    /* ready without zone: no hints */
    assert_int_equal(ta_auto_hints(&eq3, e, n, 6, h, msg, sizeof msg), TA_R_NO_ZONE);
    assert_string_equal(msg, "One or more endpoints do not have a zone specified, addressType: IPv6");
    for (size_t i = 0; i < n; i++)
        assert_null(h[i]);
    /* an endpoint in a zone without nodes keeps its own-zone hint */
    ta_ep x[7];
    size_t m = eps_of("aabbcce", x);
    assert_int_equal(ta_auto_hints(&eq3, x, m, 4, h, msg, sizeof msg), TA_OK);
    assert_string_equal(h[6], "zone-e");
    assert_int_equal(ta_auto_hints(&eq3, x, 0, 4, h, msg, sizeof msg),
                     TA_R_INSUFFICIENT_ENDPOINTS);
}

/* ---- trafficDistribution T1–T9, TD1–TD5 ------------------------------------------ */

static void test_trafficdist(void **st)
{
    (void)st;
    ta_ep e[8];
    const char *zh[8], *nh[8];
    char c[64];
    size_t n = eps_of("abcabcab", e);
    ta_trafficdist_hints(TA_TD_PREFER_CLOSE, e, n, zh, nh);                             /* T1 */
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(zh[i], e[i].zone);
        assert_null(nh[i]);
    }
    ta_trafficdist_hints(TA_TD_PREFER_SAME_ZONE, e, n, zh, nh);                         /* T2 */
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(zh[i], e[i].zone);
        assert_null(nh[i]);
    }
    ta_trafficdist_hints(TA_TD_PREFER_SAME_NODE, e, n, zh, nh);                         /* T3 */
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(zh[i], e[i].zone);
        assert_ptr_equal(nh[i], e[i].node);
    }
    /* T4: wrong hints in update and unchanged slices are corrected */
    static const char *const zb[] = { "zone-b" }, *const zc[] = { "zone-c" },
                             *const za[] = { "zone-a" }, *const n0[] = { "node-0" };
    ta_ep ea[1], eb[1], ec[1];
    eps_of("a", ea);
    eps_of("b", eb);
    eps_of("c", ec);
    ta_hint ha = { 1, zb, 1, NULL, 0 }, hb = { 1, zc, 1, NULL, 0 };
    assert_true(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, ea, &ha, 1));   /* a hinted b */
    assert_true(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, eb, &hb, 1));   /* b hinted c */
    assert_true(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, ec, NULL, 1));  /* c unhinted */
    ta_trafficdist_hints(TA_TD_PREFER_CLOSE, ea, 1, zh, NULL);
    assert_string_equal(zh[0], "zone-a");
    ta_hint ok = { 1, za, 1, NULL, 0 };
    assert_false(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, ea, &ok, 1));
    ta_hint stale_node = { 1, za, 1, n0, 1 };                              /* stale forNodes */
    assert_true(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, ea, &stale_node, 1));
    assert_false(ta_trafficdist_stale(TA_TD_PREFER_SAME_NODE, ea, &stale_node, 1));
    assert_true(ta_trafficdist_stale(TA_TD_PREFER_SAME_NODE, ea, &ok, 1)); /* forNodes missing */
    /* T5/T6: endpoints with a node but no zone */
    ta_ep nz[2];
    eps_of("--", nz);
    ta_trafficdist_hints(TA_TD_PREFER_CLOSE, nz, 2, zh, nh);                            /* T5 */
    assert_null(zh[0]);
    assert_null(nh[0]);
    assert_false(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, nz, NULL, 2));
    ta_trafficdist_hints(TA_TD_PREFER_SAME_NODE, nz, 2, zh, nh);                        /* T6 */
    assert_null(zh[1]);
    assert_string_equal(nh[1], "node-1");
    /* T7: an unready endpoint without hint does not make its slice stale */
    eb[0].ready = 0;
    assert_false(ta_trafficdist_stale(TA_TD_PREFER_CLOSE, eb, NULL, 1));
    ta_trafficdist_hints(TA_TD_PREFER_CLOSE, eb, 1, zh, nh);
    assert_null(zh[0]);
    /* T8/T9: an unknown or unset value removes every hint */
    assert_int_equal(ta_hint_source(NULL, NULL, "Unknown", 1), TA_SRC_NONE);           /* T8 */
    assert_int_equal(ta_hint_source(NULL, NULL, NULL, 1), TA_SRC_NONE);                /* T9 */
    ta_hint hz[1] = { { 1, za, 1, NULL, 0 } };
    assert_true(ta_trafficdist_stale(TA_TD_NONE, ea, hz, 1));
    assert_true(ta_trafficdist_stale(TA_TD_NONE, eb, &hb, 1));   /* unready ones too */
    assert_false(ta_trafficdist_stale(TA_TD_NONE, ea, NULL, 1));
    ta_trafficdist_hints(TA_TD_NONE, e, n, zh, nh);
    counts(zh, n, c, sizeof c);
    assert_string_equal(c, "");

    /* reconciler TD1–TD5: node-0/a 1 pod, node-1/b 3, node-2/c 2, 100m each */
    ta_ratios r = from_nodes(3, "zone-a", "100m", "zone-b", "100m", "zone-c", "100m");
    ta_ep t[6] = {
        { "zone-a", "node-0", 1 }, { "zone-b", "node-1", 1 }, { "zone-b", "node-1", 1 },
        { "zone-b", "node-1", 1 }, { "zone-c", "node-2", 1 }, { "zone-c", "node-2", 1 },
    };
    char msg[256];
    assert_int_equal(ta_hint_source("Disabled", NULL, "PreferClose", 0), TA_SRC_TD_ZONE); /* TD1 */
    ta_trafficdist_hints(TA_TD_PREFER_CLOSE, t, 6, zh, nh);
    counts(zh, 6, c, sizeof c);
    assert_string_equal(c, "a1 b3 c2");
    assert_int_equal(ta_hint_source("Auto", NULL, "PreferClose", 0), TA_SRC_AUTO);      /* TD2 */
    assert_int_equal(ta_auto_hints(&r, t, 6, 4, zh, msg, sizeof msg), TA_OK);
    counts(zh, 6, c, sizeof c);
    assert_string_equal(c, "a2 b2 c2");
    int cross = 0;
    for (int i = 0; i < 6; i++)
        cross += strcmp(zh[i], t[i].zone) != 0;
    assert_int_equal(cross, 1);
    assert_string_equal(t[1].zone, "zone-b");
    assert_string_equal(zh[1], "zone-a");       /* the first zone-b endpoint */
    assert_int_equal(ta_hint_source("", NULL, NULL, 0), TA_SRC_NONE);                   /* TD3 */
    assert_int_equal(ta_hint_source("Disabled", NULL, "PreferSameNode", 1), TA_SRC_TD_NODE);
    ta_trafficdist_hints(TA_TD_PREFER_SAME_NODE, t, 6, zh, nh);                         /* TD4 */
    counts(zh, 6, c, sizeof c);
    assert_string_equal(c, "a1 b3 c2");
    int per_node[3] = { 0 };
    for (int i = 0; i < 6; i++)
        per_node[nh[i][5] - '0']++;
    assert_true(per_node[0] == 1 && per_node[1] == 3 && per_node[2] == 2);
    assert_int_equal(ta_hint_source("Disabled", NULL, "PreferSameZone", 0), TA_SRC_NONE); /* TD5 */

    /* annotation precedence: the old key wins when present, even empty */
    assert_int_equal(ta_hint_source(NULL, "Auto", "PreferClose", 1), TA_SRC_AUTO);
    assert_int_equal(ta_hint_source(NULL, "auto", NULL, 1), TA_SRC_AUTO);
    assert_int_equal(ta_hint_source("", "Auto", "PreferClose", 1), TA_SRC_TD_ZONE);
    assert_int_equal(ta_hint_source("AUTO", NULL, NULL, 1), TA_SRC_NONE);
    assert_int_equal(ta_hint_source(NULL, "ProportionalZoneCPU", NULL, 1), TA_SRC_NONE);
    assert_int_equal(ta_hint_source(NULL, NULL, "PreferSameZone", 1), TA_SRC_TD_ZONE);
    assert_int_equal(ta_hint_source(NULL, NULL, "PreferSameNode", 0), TA_SRC_NONE);
}

/* ---- the Local algorithm ---------------------------------------------------------- */

static const ta_zone_nodes Z3[] = { { "zone-a", 1 }, { "zone-b", 1 }, { "zone-c", 1 } };

static int local(const ta_zone_nodes *z, size_t nz, const char *zones, int prev,
                 ta_local_plan *p, const char **g)
{
    ta_ep e[64];
    size_t n = eps_of(zones, e);
    return ta_local_plan_compute(z, nz, e, n, prev, TA_LOCAL_DEFAULT_PADDING, g, p);
}

/* n endpoints spread round-robin over a, b, c */
static const char *spread(size_t n)
{
    static char buf[64];
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)('a' + i % 3);
    buf[n] = 0;
    return buf;
}

static void test_local_overload(void **st)
{
    (void)st;
    assert_true(ta_local_overload(3.0, 2) == 0.5);      /* 150 vs 100 expected */
    assert_true(ta_local_overload(1.5, 1) == 0.5);
    assert_true(ta_local_overload(3.0, 6) == -0.5);
    assert_true(isinf(ta_local_overload(2.0, 0)));
    assert_true(ta_local_overload(0.0, 3) == -1.0);
}

static void test_local_threshold(void **st)
{
    (void)st;
    ta_local_plan p;
    const char *g[64];
    /* threshold 9, padding 3: Balanced until 12 endpoints ... */
    for (size_t n = 6; n < 12; n++) {
        assert_int_equal(local(Z3, 3, spread(n), 0, &p, g), 0);
        assert_int_equal(p.reason, TA_L_BELOW_THRESHOLD);
        assert_null(g[0]);
    }
    assert_int_equal(p.threshold, 9);
    assert_int_equal(p.padding, 3);
    assert_int_equal(local(Z3, 3, spread(12), 0, &p, g), 1);
    assert_int_equal(p.reason, TA_OK);
    /* ... and Prefer until the count drops below 6 */
    for (size_t n = 11; n >= 6; n--)
        assert_int_equal(local(Z3, 3, spread(n), 1, &p, g), 1);
    assert_int_equal(local(Z3, 3, spread(5), 1, &p, g), 0);
    assert_int_equal(p.reason, TA_L_BELOW_THRESHOLD);
    /* explicit padding 0: Prefer at exactly the threshold */
    ta_ep e[9];
    size_t n = eps_of(spread(9), e);
    assert_int_equal(ta_local_plan_compute(Z3, 3, e, n, 0, 0, g, &p), 1);
    assert_int_equal(ta_local_plan_compute(Z3, 3, e, 8, 1, 0, g, &p), 0);
    char msg[200];
    assert_int_equal(ta_local_groups(Z3, 3, e, 8, 0, g, msg, sizeof msg), 0);
    assert_string_equal(msg, "Insufficient number of endpoints for same-zone Prefer "
                        "(8 endpoints, threshold 9, padding 3)");
    /* one zone, no zone with nodes */
    assert_int_equal(local(Z3, 1, "aaaaaaaaaaaa", 0, &p, g), 0);
    assert_int_equal(p.reason, TA_R_ONE_ZONE);
    const ta_zone_nodes empty[] = { { "zone-a", 0 }, { NULL, 3 } };
    assert_int_equal(local(empty, 2, "aaaaaaaaaaaa", 0, &p, g), 0);
    assert_int_equal(p.reason, TA_R_INSUFFICIENT_NODE_INFO);
}

static void test_local_moves(void **st)
{
    (void)st;
    ta_local_plan p;
    const char *g[64];
    char c[64];
    /* balanced already: everything stays in its own zone */
    assert_int_equal(local(Z3, 3, "aaaabbbbcccc", 0, &p, g), 1);
    assert_int_equal(p.moves, 0);
    counts(g, 12, c, sizeof c);
    assert_string_equal(c, "a4 b4 c4");
    /* a6 b4 c2, expected 4 each: c (overload 100 %) takes one from a (most
     * surplus), then the top-up brings c to floor(4) */
    assert_int_equal(local(Z3, 3, "aaaaaabbbbcc", 0, &p, g), 1);
    counts(g, 12, c, sizeof c);
    assert_string_equal(c, "a4 b4 c4");
    assert_int_equal(p.moves, 2);
    assert_string_equal(g[5], "zone-c");                 /* the last zone-a endpoints move */
    assert_string_equal(g[4], "zone-c");
    assert_string_equal(g[3], "zone-a");
    assert_true(p.z[0].expected == 4.0);
    /* expected by node share: a has 2 nodes of 4 → 6 of 12 endpoints */
    const ta_zone_nodes w[] = { { "zone-a", 2 }, { "zone-b", 1 }, { "zone-c", 1 } };
    assert_int_equal(local(w, 3, "aaaabbbbcccc", 0, &p, g), 1);
    counts(g, 12, c, sizeof c);
    assert_string_equal(c, "a6 b3 c3");
    assert_true(p.z[0].expected == 6.0 && p.z[1].expected == 3.0);
    /* a zone with no endpoints at all gets some */
    assert_int_equal(local(Z3, 3, "aaaaaabbbbbb", 0, &p, g), 1);
    counts(g, 12, c, sizeof c);
    assert_string_equal(c, "a4 b4 c4");
    /* endpoints without a zone, or in a zone without nodes, are given away */
    const ta_zone_nodes z2[] = { { "zone-a", 1 }, { "zone-b", 1 } };
    assert_int_equal(local(z2, 2, "aaab-ebb", 0, &p, g), 1);
    counts(g, 8, c, sizeof c);
    assert_string_equal(c, "a4 b4");
    assert_string_equal(g[4], "zone-a");                 /* no zone → first by name */
    assert_string_equal(g[5], "zone-b");                 /* zone-e has no nodes */
    /* unready endpoints are not counted and get no group */
    ta_ep e[13];
    size_t n = eps_of("aaaabbbbccccc", e);
    e[12].ready = 0;
    assert_int_equal(ta_local_plan_compute(Z3, 3, e, n, 0, TA_LOCAL_DEFAULT_PADDING, g, &p), 1);
    assert_int_equal(p.ready, 12);
    assert_null(g[12]);
    /* zones compare without case */
    const ta_zone_nodes up[] = { { "ZONE-A", 1 }, { "zone-b", 1 }, { "zone-c", 1 } };
    assert_int_equal(local(up, 3, "aaaabbbbcccc", 0, &p, g), 1);
    assert_int_equal(p.moves, 0);
    assert_string_equal(g[0], "ZONE-A");
}

static void test_local_downgrade(void **st)
{
    (void)st;
    ta_local_plan p;
    const char *g[64];
    char msg[200];
    /* 5 zones, e has 2 nodes of 6: expected 1.67 ×4 and 3.33 for 10 endpoints.
     * e (2 assigned, overload 67 %) needs one, but no zone can give without
     * going over 50 % itself → Balanced */
    const ta_zone_nodes z5[] = { { "zone-a", 1 }, { "zone-b", 1 }, { "zone-c", 1 },
                                 { "zone-d", 1 }, { "zone-e", 2 } };
    assert_int_equal(local(z5, 5, "aabbccddee", 1, &p, g), 0);
    assert_int_equal(p.reason, TA_L_DOWNGRADED);
    for (int i = 0; i < 10; i++)
        assert_null(g[i]);
    ta_ep e[10];
    size_t n = eps_of("aabbccddee", e);
    assert_int_equal(ta_local_groups(z5, 5, e, n, 1, g, msg, sizeof msg), 0);
    assert_string_equal(msg, "Unable to keep every zone under the 50% overload threshold, "
                        "downgraded to Balanced (10 endpoints, 5 zones)");
    /* with one more endpoint in e it fits: Prefer */
    assert_int_equal(local(z5, 5, "aabbccddeee", 1, &p, g), 1);
    assert_int_equal(ta_local_groups(z5, 5, e, n, 1, g, msg, sizeof msg), 0);
    /* all endpoints in one zone of three: spread to every zone */
    assert_int_equal(local(Z3, 3, "aaaaaaaaaaaa", 0, &p, g), 1);
    char c[64];
    counts(g, 12, c, sizeof c);
    assert_string_equal(c, "a4 b4 c4");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_quantity),
        cmocka_unit_test(test_zone_ratios),
        cmocka_unit_test(test_allocations),
        cmocka_unit_test(test_add_hints_a1_a3),
        cmocka_unit_test(test_add_hints_a4_a5),
        cmocka_unit_test(test_add_hints_a6),
        cmocka_unit_test(test_add_hints_unchanged),
        cmocka_unit_test(test_add_hints_failures),
        cmocka_unit_test(test_giving_receiving),
        cmocka_unit_test(test_redistribute),
        cmocka_unit_test(test_hints_by_zone),
        cmocka_unit_test(test_overloaded),
        cmocka_unit_test(test_reconcile_and_worked),
        cmocka_unit_test(test_auto_hints_entry),
        cmocka_unit_test(test_trafficdist),
        cmocka_unit_test(test_local_overload),
        cmocka_unit_test(test_local_threshold),
        cmocka_unit_test(test_local_moves),
        cmocka_unit_test(test_local_downgrade),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
