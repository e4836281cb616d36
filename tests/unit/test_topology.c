/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_topology.c — the topology decision (src/topology/decide.c) over a
 * real store filled from API-shaped JSON, with clients located by the real
 * locator. The tables are the reference cases of docs/topology.md: the
 * topologyKeys cases (rows 0–10 and E1–E5) and the hint consumer cases
 * (rows 1–24, internalTrafficPolicy and readiness included); then same-zone
 * Require, precedence between the rules, unknown clients, the per-family
 * decision, the computed policies (rule 5) and ECS trust. Test names and
 * row comments give the table's row numbers.
 *
 * Rows 2, 3, 11 and 18-20 of the hint consumer cases are about
 * externalTrafficPolicy / NodePort traffic and kube-proxy's
 * serving+terminating fallback, which a DNS answer has no notion of: they
 * are checked as what topodns answers for the same endpoints (the "cluster"
 * column, or the "local" one under internalTrafficPolicy Local; terminating
 * endpoints are not ready and never answered, as in CoreDNS). Row 21 is the
 * PreferSameTrafficDistribution gate switched off; topodns always behaves
 * as with the gate on (row 22; docs/topology.md, deviations).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "cluster/store.h"
#include "cluster/locator.h"
#include "topology/topology.h"
#include "server/reqtopo.h"

static store *S;
static topo_cfg CFG;

static int setup(void **state)
{
    (void)state;
    store_reader_register();
    S = store_new(NULL);
    memset(&CFG, 0, sizeof CFG);
    CFG.hints = TOPO_HINTS_COMPUTE;
    CFG.itp = 1;
    return S ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    store_free(S);
    store_reader_unregister();
    return 0;
}

/* ---- fixture builders ------------------------------------------------------- */

static void apply(int (*fn)(store *, const cJSON *), const char *json)
{
    cJSON *o = cJSON_Parse(json);
    if (!o)
        fail_msg("bad fixture JSON: %s", json);
    assert_int_equal(fn(S, o), 0);
    cJSON_Delete(o);
}

/* A ready worker node with 1000m CPU; zone/region NULL to leave them out. */
static void node(const char *name, const char *zone, const char *region)
{
    char j[1024], z[128] = "", r[128] = "";
    if (zone)
        snprintf(z, sizeof z, ",\"topology.kubernetes.io/zone\":\"%s\"", zone);
    if (region)
        snprintf(r, sizeof r, ",\"topology.kubernetes.io/region\":\"%s\"", region);
    snprintf(j, sizeof j,
             "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kubernetes.io/hostname\":\"%s\"%s%s}},"
             "\"status\":{\"allocatable\":{\"cpu\":\"1000m\"},"
             "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
             name, name, z, r);
    apply(store_upsert_node, j);
}

static void bare_node(const char *name)      /* a node without any label */
{
    char j[512];
    snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"%s\"},\"status\":{\"conditions\":"
             "[{\"type\":\"Ready\",\"status\":\"True\"}]}}", name);
    apply(store_upsert_node, j);
}

static void pod(const char *name, const char *ip, const char *nodename)
{
    char j[512];
    snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"client\"},"
             "\"spec\":{\"nodeName\":\"%s\"},\"status\":{\"phase\":\"Running\",\"podIP\":\"%s\"}}",
             name, nodename, ip);
    apply(store_upsert_pod, j);
}

/* A headless service "svc" in "ns"; extra spec fields and annotations as
 * JSON members ("" for none). */
static void service(const char *spec, const char *annotations)
{
    char j[2048];
    snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"svc\",\"namespace\":\"ns\",\"annotations\":{%s}},"
             "\"spec\":{\"clusterIP\":\"None\",\"selector\":{\"app\":\"x\"},"
             "\"ports\":[{\"name\":\"p\",\"port\":80,\"protocol\":\"TCP\"}]%s%s}}",
             annotations, *spec ? "," : "", spec);
    apply(store_upsert_service, j);
}

/* Endpoint JSON: ready 1/0 (-1: no ready condition at all), zones/nodes
 * hint lists "a|b" or NULL. */
static char *ep(const char *addr, const char *nodename, const char *zone, int ready,
                const char *hz, const char *hn)
{
    static char pool[64][1024];
    static int next;
    char *o = pool[next++ % 64];
    char hints[512] = "";
    if (hz || hn) {
        char zs[128] = "", ns[128] = "";
        char tmp[64];
        for (const char *p = hz; p && *p;) {
            size_t l = strcspn(p, "|");
            snprintf(tmp, sizeof tmp, "%s{\"name\":\"%.*s\"}", *zs ? "," : "", (int)l, p);
            strcat(zs, tmp);
            p += l + (p[l] == '|');
        }
        for (const char *p = hn; p && *p;) {
            size_t l = strcspn(p, "|");
            snprintf(tmp, sizeof tmp, "%s{\"name\":\"%.*s\"}", *ns ? "," : "", (int)l, p);
            strcat(ns, tmp);
            p += l + (p[l] == '|');
        }
        snprintf(hints, sizeof hints, ",\"hints\":{%s%s%s%s%s%s%s}", hz ? "\"forZones\":[" : "",
                 zs, hz ? "]" : "", hz && hn ? "," : "", hn ? "\"forNodes\":[" : "", ns,
                 hn ? "]" : "");
    }
    char nn[96] = "", zz[96] = "";
    if (nodename)
        snprintf(nn, sizeof nn, ",\"nodeName\":\"%s\"", nodename);
    if (zone)
        snprintf(zz, sizeof zz, ",\"zone\":\"%s\"", zone);
    snprintf(o, 1024, "{\"addresses\":[\"%s\"],\"conditions\":{%s}%s%s%s}", addr,
             ready < 0 ? "" : ready ? "\"ready\":true" : "\"ready\":false", nn, zz, hints);
    return o;
}

static void slice(const char *name, const char *family, int n, ...)
{
    char j[8192];
    size_t off = (size_t)snprintf(j, sizeof j,
        "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"labels\":"
        "{\"kubernetes.io/service-name\":\"svc\"}},\"addressType\":\"%s\",\"endpoints\":[",
        name, family);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(j + off, sizeof j - off, "%s%s", i ? "," : "", va_arg(ap, char *));
    va_end(ap);
    snprintf(j + off, sizeof j - off, "],\"ports\":[{\"name\":\"p\",\"port\":80,\"protocol\":\"TCP\"}]}");
    apply(store_upsert_slice, j);
}

/* ---- running the decision ---------------------------------------------------- */

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Addresses kept for a client (by IP, located through the store), sorted
 * and comma-separated; the result's outcome in *out when given. */
static const char *pick_f(const char *client, int fams, topo_result *out)
{
    static char buf[2048];
    store_read_begin();
    const st_service *svc = store_service(S, "ns", "svc");
    const st_endpoints *eps = store_endpoints(S, "ns", "svc");
    assert_non_null(svc);
    size_t n = eps ? eps->n : 0;
    uint8_t keep[256];
    topo_loc loc;
    st_ip ip;
    assert_int_equal(st_parse_ip(client, &ip), 0);
    locator_find(S, &ip, &loc);
    topo_result res;
    topo_engine *e = topo_engine_new(&CFG, NULL);  /* CFG as the test left it */
    assert_non_null(e);
    topo_engine_bind(e, S, NULL, NULL);
    topo_select(e, svc, eps, &loc, fams, keep, &res, NULL);
    const char *v[256];
    static char vb[256][ST_ADDR_STRLEN];
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i]) {
            v[k] = st_ep_addr(&eps->eps[i], vb[k]);
            k++;
        }
    qsort(v, k, sizeof v[0], cmp);
    buf[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, v[i]);
    }
    store_read_end();
    topo_engine_free(e);                            /* outside the read section */
    if (out)
        *out = res;
    return buf;
}

static const char *pick(const char *client)
{
    return pick_f(client, 3, NULL);
}

/* ---- topologyKeys cases (docs/topology.md, reference cases) -------------------------- */

#define HOST "\"kubernetes.io/hostname\""
#define ZONE "\"topology.kubernetes.io/zone\""
#define REGION "\"topology.kubernetes.io/region\""

/* Nodes testNode1..k with zones; endpoints 1.1.n.1 and 1.1.n.2 on nodes
 * 1..eps_nodes; a client pod 10.0.0.n on every node. */
static void keys_fixture(const char *zones[], int k, int eps_nodes, const char *keys)
{
    char name[32], ip[32], spec[256];
    for (int i = 1; i <= k; i++) {
        snprintf(name, sizeof name, "testNode%d", i);
        node(name, zones[i - 1], "cd");
        snprintf(ip, sizeof ip, "10.0.0.%d", i);
        pod(name, ip, name);
    }
    snprintf(spec, sizeof spec, "\"topologyKeys\":[%s]", keys);
    service(*keys ? spec : "", "");
    for (int i = 1; i <= eps_nodes; i++) {
        char a1[32], a2[32], sn[32];
        snprintf(name, sizeof name, "testNode%d", i);
        snprintf(a1, sizeof a1, "1.1.%d.1", i);
        snprintf(a2, sizeof a2, "1.1.%d.2", i);
        snprintf(sn, sizeof sn, "s%d", i);
        slice(sn, "IPv4", 2, ep(a1, name, zones[i - 1], 1, NULL, NULL),
              ep(a2, name, zones[i - 1], 1, NULL, NULL));
    }
}

static const char *Z1[] = { "90001", "90001", "90002", "90002", "90002" };
static const char *Z3[] = { "90001", "90001", "90002", "90002", "90003" };
static const char *ONE[] = { "90001", "90001", "90001" };

static void test_keys_0_no_key_no_endpoints(void **s)
{
    (void)s;
    keys_fixture(ONE, 1, 0, "");
    assert_string_equal(pick("10.0.0.1"), "");
}

static void test_keys_1_no_key(void **s)
{
    (void)s;
    keys_fixture(ONE, 2, 2, "");
    assert_string_equal(pick("10.0.0.1"), "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2");
}

static void test_keys_2_hostname(void **s)
{
    (void)s;
    keys_fixture(ONE, 2, 2, HOST);
    assert_string_equal(pick("10.0.0.1"), "1.1.1.1,1.1.1.2");
}

static void test_keys_3_hostname_no_match(void **s)
{
    (void)s;
    keys_fixture(ONE, 3, 2, HOST);
    topo_result r;
    assert_string_equal(pick_f("10.0.0.3", 3, &r), "");
    assert_int_equal(r.outcome, TO_EMPTY);
    assert_int_equal(r.dep, TOPO_DEP_NODE);
}

static void test_keys_4_zone(void **s)
{
    (void)s;
    keys_fixture(Z1, 4, 4, ZONE);
    topo_result r;
    assert_string_equal(pick_f("10.0.0.2", 3, &r), "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2");
    assert_int_equal(r.dep, TOPO_DEP_ZONE);
    assert_int_equal(r.outcome, TO_LOCAL);
}

static void test_keys_5_early_match(void **s)
{
    (void)s;
    keys_fixture(Z1, 4, 4, HOST "," ZONE);
    assert_string_equal(pick("10.0.0.2"), "1.1.2.1,1.1.2.2");
}

static void test_keys_6_later_match(void **s)
{
    (void)s;
    keys_fixture(Z1, 5, 4, HOST "," ZONE);
    assert_string_equal(pick("10.0.0.5"), "1.1.3.1,1.1.3.2,1.1.4.1,1.1.4.2");
}

static void test_keys_7_no_match(void **s)
{
    (void)s;
    keys_fixture(Z3, 5, 4, HOST "," ZONE);
    assert_string_equal(pick("10.0.0.5"), "");
}

static void test_keys_8_any_ignored(void **s)
{
    (void)s;
    keys_fixture(ONE, 2, 2, HOST ",\"*\"");
    assert_string_equal(pick("10.0.0.1"), "1.1.1.1,1.1.1.2");
}

static void test_keys_9_any(void **s)
{
    (void)s;
    keys_fixture(ONE, 3, 2, HOST ",\"*\"");
    topo_result r;
    assert_string_equal(pick_f("10.0.0.3", 3, &r), "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2");
    assert_int_equal(r.outcome, TO_FALLBACK);
}

static void test_keys_10_any_last(void **s)
{
    (void)s;
    keys_fixture(Z3, 5, 4, HOST "," ZONE ",\"*\"");
    assert_string_equal(pick("10.0.0.5"),
                        "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2,1.1.3.1,1.1.3.2,1.1.4.1,1.1.4.2");
}

static void test_keys_e1_e2_client_without_labels(void **s)
{
    (void)s;
    keys_fixture(ONE, 2, 2, HOST ",\"*\"");
    bare_node("naked");
    pod("c", "10.9.0.1", "naked");
    assert_string_equal(pick("10.9.0.1"), "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2");    /* E1 */
    service("\"topologyKeys\":[" ZONE "]", "");
    assert_string_equal(pick("10.9.0.1"), "");                                    /* E2 */
}

static void test_keys_e3_e4_client_without_zone(void **s)
{
    (void)s;
    keys_fixture(ONE, 2, 2, ZONE "," REGION);
    node("nozone", NULL, "cd");
    pod("c", "10.9.0.2", "nozone");
    assert_string_equal(pick("10.9.0.2"), "1.1.1.1,1.1.1.2,1.1.2.1,1.1.2.2");    /* E3 */
    service("\"topologyKeys\":[" ZONE "]", "");
    assert_string_equal(pick("10.9.0.2"), "");                                    /* E4 */
}

static void test_keys_e5_endpoint_without_zone(void **s)
{
    (void)s;
    node("za", "90001", "cd");
    node("bare", NULL, "cd");
    pod("c", "10.9.0.3", "za");
    pod("d", "10.9.0.4", "bare");
    service("\"topologyKeys\":[" ZONE ",\"*\"]", "");
    slice("s", "IPv4", 2, ep("1.1.1.1", "za", "90001", 1, NULL, NULL), ep("1.1.9.1", "bare", NULL, 1, NULL, NULL));
    assert_string_equal(pick("10.9.0.3"), "1.1.1.1");
    assert_string_equal(pick("10.9.0.4"), "1.1.1.1,1.1.9.1");   /* reached '*' */
}

static void test_keys_annotation(void **s)
{
    (void)s;
    keys_fixture(Z1, 4, 4, "");
    service("", "\"topodns.io/topology-keys\":\"kubernetes.io/hostname, *\"");
    assert_string_equal(pick("10.0.0.3"), "1.1.3.1,1.1.3.2");
}

/* ---- hint consumer cases (docs/topology.md, reference cases) ------------------------- */

/* node-1 in zone-a (client 10.0.1.1), node-0 zone-a (10.0.1.0), node-b
 * zone-b (10.0.2.1), node-c zone-c (10.0.3.1), node-x without labels
 * (10.0.9.1), node-e with an empty zone (10.0.9.2). */
static void hint_nodes(void)
{
    node("node-1", "zone-a", NULL);
    node("node-0", "zone-a", NULL);
    node("node-b", "zone-b", NULL);
    node("node-c", "zone-c", NULL);
    bare_node("node-x");
    node("node-e", "", NULL);
    pod("c1", "10.0.1.1", "node-1");
    pod("c0", "10.0.1.0", "node-0");
    pod("cb", "10.0.2.1", "node-b");
    pod("cc", "10.0.3.1", "node-c");
    pod("cx", "10.0.9.1", "node-x");
    pod("ce", "10.0.9.2", "node-e");
    service("", "");
}

static void test_hints_row1_own_zone(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 4, ep("10.1.2.3", "n", "zone-a", 1, "zone-a", NULL),
          ep("10.1.2.4", "n", "zone-b", 1, "zone-b", NULL), ep("10.1.2.5", "n", "zone-c", 1, "zone-c", NULL),
          ep("10.1.2.6", "n", "zone-a", 1, "zone-a", NULL));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.2.3,10.1.2.6");
    assert_int_equal(r.policy, TP_HINTS);
    assert_int_equal(r.outcome, TO_LOCAL);
    assert_int_equal(r.dep, TOPO_DEP_ZONE);
}

static void test_hints_rows4to6_no_match_gets_all(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 1, ep("10.1.2.3", "n", "zone-a", 1, "zone-a", NULL));
    assert_string_equal(pick("10.0.9.1"), "10.1.2.3");   /* 4: no labels */
    assert_string_equal(pick("10.0.9.2"), "10.1.2.3");   /* 5: zone "" */
    topo_result r;
    assert_string_equal(pick_f("10.0.2.1", 3, &r), "10.1.2.3");   /* 6: nothing for b */
    assert_int_equal(r.outcome, TO_FALLBACK);
}

static void test_hints_row7_unready_ignored(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 4, ep("10.1.2.3", "n", "zone-a", 1, "zone-a", NULL),
          ep("10.1.2.4", "n", "zone-b", 1, "zone-b", NULL), ep("10.1.2.5", "n", "zone-c", 1, "zone-c", NULL),
          ep("10.1.2.6", "n", "zone-a", 0, "zone-a", NULL));
    assert_string_equal(pick("10.0.1.1"), "10.1.2.3");
}

static void test_hints_row8_no_ready_in_zone(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 4, ep("10.1.2.3", "n", "zone-a", 0, "zone-a", NULL),
          ep("10.1.2.4", "n", "zone-b", 1, "zone-b", NULL), ep("10.1.2.5", "n", "zone-c", 1, "zone-c", NULL),
          ep("10.1.2.6", "n", "zone-a", 0, "zone-a", NULL));
    assert_string_equal(pick("10.0.1.1"), "10.1.2.4,10.1.2.5");
}

static void test_hints_row9_one_unhinted(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 4, ep("10.1.2.3", "n", "zone-a", 1, "zone-a", NULL),
          ep("10.1.2.4", "n", "zone-b", 1, "zone-b", NULL), ep("10.1.2.5", "n", "zone-c", 1, NULL, NULL),
          ep("10.1.2.6", "n", "zone-a", 1, "zone-a", NULL));
    assert_string_equal(pick("10.0.1.1"), "10.1.2.3,10.1.2.4,10.1.2.5,10.1.2.6");
}

static void test_hints_row10_multi_zone_hints(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 4, ep("10.1.2.3", "n", "zone-a", 1, "zone-a|zone-b|zone-c", NULL),
          ep("10.1.2.4", "n", "zone-b", 1, "zone-b|zone-c", NULL),
          ep("10.1.2.5", "n", "zone-c", 1, "zone-b|zone-d", NULL),
          ep("10.1.2.6", "n", "zone-a", 1, "zone-c", NULL));
    assert_string_equal(pick("10.0.3.1"), "10.1.2.3,10.1.2.4,10.1.2.6");
}

static void node_hint_slice(int e4_hinted)
{
    slice("s", "IPv4", 4, ep("10.1.2.3", "node-1", "zone-a", 1, "zone-a", "node-1"),
          e4_hinted ? ep("10.1.2.4", "node-2", "zone-b", 1, "zone-b", "node-2")
                    : ep("10.1.2.4", "node-2", "zone-b", 1, NULL, NULL),
          ep("10.1.2.5", "node-3", "zone-c", 1, "zone-c", "node-3"),
          ep("10.1.2.6", "node-4", "zone-a", 1, "zone-a", "node-4"));
}

static void test_hints_rows22to24_nodes(void **s)
{
    (void)s;
    hint_nodes();
    node_hint_slice(1);
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.2.3");          /* 22 */
    assert_int_equal(r.dep, TOPO_DEP_NODE);
    assert_string_equal(pick("10.0.1.0"), "10.1.2.3,10.1.2.6");          /* 24 */
    node_hint_slice(0);
    assert_string_equal(pick("10.0.1.1"), "10.1.2.3,10.1.2.4,10.1.2.5,10.1.2.6");   /* 23 */
}

/* ---- internalTrafficPolicy Local (hint consumer rows 12–15), readiness (16–17) ------- */

static void test_itp_local(void **s)
{
    (void)s;
    hint_nodes();
    service("\"internalTrafficPolicy\":\"Local\"", "");
    slice("s", "IPv4", 2, ep("10.0.0.0", "node-b", "zone-b", 1, NULL, NULL),
          ep("10.0.0.1", "node-c", "zone-c", 1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "");                  /* 13 */
    assert_int_equal(r.outcome, TO_EMPTY);
    assert_int_equal(r.policy, TP_ITP_LOCAL);
    assert_string_equal(pick("10.0.2.1"), "10.0.0.0");                   /* 15 */
    slice("s", "IPv4", 2, ep("10.0.0.0", "node-b", "zone-b", 1, NULL, NULL),
          ep("10.0.0.1", "node-b", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick("10.0.2.1"), "10.0.0.0,10.0.0.1");          /* 14 */
    CFG.itp = 0;                                    /* internal_traffic_policy off */
    assert_string_equal(pick("10.0.1.1"), "10.0.0.0,10.0.0.1");
}

static void test_readiness(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 2, ep("10.0.0.0", "node-b", "zone-b", 0, NULL, NULL),
          ep("10.0.0.1", "node-c", "zone-c", 0, NULL, NULL));
    assert_string_equal(pick("10.0.1.1"), "");                           /* 16 */
    slice("s", "IPv4", 2, ep("10.0.0.0", "node-b", "zone-b", 0, NULL, NULL),
          ep("10.0.0.1", "node-c", "zone-c", 1, NULL, NULL));
    assert_string_equal(pick("10.0.1.1"), "10.0.0.1");                   /* 17 */
}

/* Endpoint JSON with explicit serving/terminating conditions (not ready). */
static char *ep_cond(const char *addr, const char *nodename, int serving, int terminating)
{
    static char pool[8][512];
    static int next;
    char *o = pool[next++ % 8];
    snprintf(o, 512, "{\"addresses\":[\"%s\"],\"conditions\":{\"ready\":false,\"serving\":%s,"
             "\"terminating\":%s},\"nodeName\":\"%s\"}", addr, serving ? "true" : "false",
             terminating ? "true" : "false", nodename);
    return o;
}

/* Hint consumer rows 2, 3, 11, 18-20: externalTrafficPolicy and
 * terminating endpoints, as DNS sees them. The client is 10.0.1.1 on
 * node-1 in zone-a. */
static void test_hints_rows_etp_and_terminating(void **s)
{
    (void)s;
    hint_nodes();
    /* 2: eTP Local is for NodePort traffic; DNS answers the cluster set */
    service("\"externalTrafficPolicy\":\"Local\"", "");
    slice("s", "IPv4", 4, ep("10.1.2.3", "node-1", "zone-a", 1, "zone-a", NULL),
          ep("10.1.2.4", "node-1", "zone-b", 1, "zone-b", NULL), ep("10.1.2.5", "n", "zone-c", 1, "zone-c", NULL),
          ep("10.1.2.6", "n", "zone-a", 1, "zone-a", NULL));
    assert_string_equal(pick("10.0.1.1"), "10.1.2.3,10.1.2.6");
    /* 3: iTP Local → the local set, the endpoints on the client's node */
    service("\"internalTrafficPolicy\":\"Local\",\"externalTrafficPolicy\":\"Local\"", "");
    assert_string_equal(pick("10.0.1.1"), "10.1.2.3,10.1.2.4");
    /* 11: eTP Local, e0,e1 local; the cluster set follows the hints */
    service("\"externalTrafficPolicy\":\"Local\"", "");
    slice("s", "IPv4", 4, ep("10.0.0.0", "node-1", "zone-a", 1, "zone-a", NULL),
          ep("10.0.0.1", "node-1", "zone-b", 1, "zone-b", NULL), ep("10.0.0.2", "n", "zone-a", 1, "zone-a", NULL),
          ep("10.0.0.3", "n", "zone-b", 1, "zone-b", NULL));
    assert_string_equal(pick("10.0.1.1"), "10.0.0.0,10.0.0.2");
    /* 18: only serving+terminating endpoints: kube-proxy falls back to
     * them, DNS answers ready endpoints only → nothing */
    service("", "");
    slice("s", "IPv4", 2, ep_cond("10.0.0.0", "node-1", 1, 1), ep_cond("10.0.0.1", "n", 1, 1));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "");
    /* 19: iTP Local, terminating endpoints elsewhere → local {} */
    service("\"internalTrafficPolicy\":\"Local\",\"externalTrafficPolicy\":\"Local\"", "");
    slice("s", "IPv4", 2, ep_cond("10.0.0.0", "n", 1, 1), ep_cond("10.0.0.1", "n", 1, 1));
    assert_string_equal(pick("10.0.1.1"), "");
    /* 20: iTP Cluster, eTP Local: e0 ready; e1 local not serving; e2
     * serving+terminating local; e3 serving+terminating → cluster e0 */
    service("\"internalTrafficPolicy\":\"Cluster\",\"externalTrafficPolicy\":\"Local\"", "");
    slice("s", "IPv4", 4, ep("10.0.0.0", "n", NULL, 1, NULL, NULL), ep_cond("10.0.0.1", "node-1", 0, 0),
          ep_cond("10.0.0.2", "node-1", 1, 1), ep_cond("10.0.0.3", "n", 1, 1));
    assert_string_equal(pick("10.0.1.1"), "10.0.0.0");
}

/* ---- same-zone Require, precedence, unknown clients, families ------------------------ */

static void test_same_zone_require(void **s)
{
    (void)s;
    hint_nodes();
    service("", "\"endpointslice.kubernetes.io/same-zone\":\"Require\"");
    slice("s", "IPv4", 3, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.2", "node-0", "zone-a", 1, NULL, NULL), ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.0.1,10.1.0.2");
    assert_int_equal(r.policy, TP_SAME_ZONE_REQUIRE);
    assert_string_equal(pick("10.0.2.1"), "10.1.0.3");
    assert_string_equal(pick_f("10.0.3.1", 3, &r), "");                  /* zone-c: none */
    assert_int_equal(r.outcome, TO_EMPTY);
    assert_string_equal(pick("10.0.9.1"), "");                           /* no zone: none */
}

static void test_precedence(void **s)
{
    (void)s;
    hint_nodes();
    slice("s", "IPv4", 3, ep("10.1.0.1", "node-1", "zone-a", 1, "zone-b", NULL),
          ep("10.1.0.2", "node-0", "zone-a", 1, "zone-a", NULL), ep("10.1.0.3", "node-b", "zone-b", 1, "zone-a", NULL));
    /* topologyKeys beats iTP beats Require beats hints */
    service("\"topologyKeys\":[" HOST "],\"internalTrafficPolicy\":\"Local\"",
            "\"endpointslice.kubernetes.io/same-zone\":\"Require\"");
    assert_string_equal(pick("10.0.2.1"), "10.1.0.3");
    service("\"internalTrafficPolicy\":\"Local\"", "\"endpointslice.kubernetes.io/same-zone\":\"Require\"");
    assert_string_equal(pick("10.0.1.0"), "10.1.0.2");
    service("", "\"endpointslice.kubernetes.io/same-zone\":\"Require\"");
    assert_string_equal(pick("10.0.1.1"), "10.1.0.1,10.1.0.2");
    /* hints written by a controller beat a trafficDistribution to compute */
    service("\"trafficDistribution\":\"PreferSameNode\"", "");
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.0.2,10.1.0.3");
    assert_int_equal(r.policy, TP_HINTS);
    CFG.hints = TOPO_HINTS_OFF;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.0.1,10.1.0.2,10.1.0.3");
    assert_int_equal(r.policy, TP_NONE);
    assert_int_equal(r.dep, TOPO_DEP_NONE);
}

static void test_unknown_client_gets_all(void **s)
{
    (void)s;
    hint_nodes();
    service("\"topologyKeys\":[" HOST "]", "");
    slice("s", "IPv4", 2, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("192.0.2.77", 3, &r), "10.1.0.1,10.1.0.3");
    assert_int_equal(r.outcome, TO_UNKNOWN_CLIENT);
}

static void test_node_address_client(void **s)
{
    (void)s;
    /* a hostNetwork client is found through the node's status.addresses */
    apply(store_upsert_node,
          "{\"metadata\":{\"name\":\"node-h\",\"labels\":{\"topology.kubernetes.io/zone\":\"zone-b\"}},"
          "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.7.0.1\"}],"
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    service("", "\"endpointslice.kubernetes.io/same-zone\":\"Require\"");
    slice("s", "IPv4", 2, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick("10.7.0.1"), "10.1.0.3");
}

static void test_families_decided_apart(void **s)
{
    (void)s;
    hint_nodes();
    slice("s4", "IPv4", 2, ep("10.1.0.1", "node-1", "zone-a", 1, "zone-a", NULL),
          ep("10.1.0.3", "node-b", "zone-b", 1, "zone-b", NULL));
    /* IPv6 slice: one endpoint unhinted → no filtering for IPv6 */
    slice("s6", "IPv6", 2, ep("fd00::1", "node-1", "zone-a", 1, "zone-a", NULL),
          ep("fd00::3", "node-b", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick_f("10.0.1.1", 1, NULL), "10.1.0.1");
    assert_string_equal(pick_f("10.0.1.1", 2, NULL), "fd00::1,fd00::3");
    assert_string_equal(pick_f("10.0.1.1", 3, NULL), "10.1.0.1,fd00::1,fd00::3");
}

/* ---- rule 5: hints computed when a Service asks and no slice has any ------------------ */

static void test_computed_prefer_same_node(void **s)
{
    (void)s;
    hint_nodes();
    service("\"trafficDistribution\":\"PreferSameNode\"", "");
    slice("s", "IPv4", 3, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.2", "node-0", "zone-a", 1, NULL, NULL), ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.0.1");          /* own node */
    assert_int_equal(r.policy, TP_PREFER_SAME_NODE);
    assert_int_equal(r.outcome, TO_LOCAL);
    assert_int_equal(r.dep, TOPO_DEP_NODE);
    pod("c2", "10.0.2.2", "node-b");
    node("node-b2", "zone-b", NULL);
    pod("cb2", "10.0.2.3", "node-b2");
    assert_string_equal(pick_f("10.0.2.3", 3, &r), "10.1.0.3");          /* same zone */
    assert_int_equal(r.outcome, TO_FALLBACK);
    assert_string_equal(pick("10.0.3.1"), "10.1.0.1,10.1.0.2,10.1.0.3");  /* elsewhere: all */
    CFG.hints = TOPO_HINTS_CONSUME;                 /* consume only: nothing computed */
    assert_string_equal(pick("10.0.1.1"), "10.1.0.1,10.1.0.2,10.1.0.3");
}

static void test_computed_prefer_close(void **s)
{
    (void)s;
    hint_nodes();
    service("\"trafficDistribution\":\"PreferClose\"", "");
    slice("s", "IPv4", 3, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.2", "node-0", "zone-a", 1, NULL, NULL), ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("10.0.1.1", 3, &r), "10.1.0.1,10.1.0.2");
    assert_int_equal(r.policy, TP_PREFER_SAME_ZONE);
    assert_int_equal(r.dep, TOPO_DEP_ZONE);
    /* an endpoint without a zone gets no hint: no filtering (kube-proxy rule) */
    slice("s", "IPv4", 3, ep("10.1.0.1", "node-1", "zone-a", 1, NULL, NULL),
          ep("10.1.0.2", "node-0", NULL, 1, NULL, NULL), ep("10.1.0.3", "node-b", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick("10.0.1.1"), "10.1.0.1,10.1.0.2,10.1.0.3");
}

/* 3 zones, 2 nodes each at 1000m: equal ratios */
static void auto_nodes(void)
{
    const char *z[] = { "zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c" };
    char n[32], ip[32];
    for (int i = 0; i < 6; i++) {
        snprintf(n, sizeof n, "n%d", i);
        snprintf(ip, sizeof ip, "10.0.5.%d", i);
        node(n, z[i], NULL);
        pod(n, ip, n);
    }
}

static void test_computed_auto(void **s)
{
    (void)s;
    auto_nodes();
    service("", "\"service.kubernetes.io/topology-mode\":\"Auto\"");
    /* W5-like: 3 endpoints all in zone-a → a1 b1 c1 after redistribution */
    slice("s", "IPv4", 3, ep("10.1.0.1", "n0", "zone-a", 1, NULL, NULL),
          ep("10.1.0.2", "n0", "zone-a", 1, NULL, NULL), ep("10.1.0.3", "n1", "zone-a", 1, NULL, NULL));
    topo_result r;
    const char *a = pick_f("10.0.5.0", 3, &r);
    assert_int_equal(r.policy, TP_AUTO);
    assert_int_equal(r.outcome, TO_LOCAL);
    assert_int_equal(r.after, 1);
    char first[64];
    snprintf(first, sizeof first, "%s", a);
    const char *b = pick("10.0.5.2");
    assert_int_equal(strlen(b) > 0 && !strchr(b, ','), 1);     /* one endpoint each */
    assert_string_not_equal(first, b);
    /* 2 endpoints, 3 zones: declined, everyone gets all */
    slice("s", "IPv4", 2, ep("10.1.0.1", "n0", "zone-a", 1, NULL, NULL),
          ep("10.1.0.4", "n2", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick_f("10.0.5.0", 3, &r), "10.1.0.1,10.1.0.4");
    assert_int_equal(r.outcome, TO_FALLBACK);
    /* the annotation wins over trafficDistribution */
    service("\"trafficDistribution\":\"PreferSameNode\"", "\"service.kubernetes.io/topology-mode\":\"Auto\"");
    pick_f("10.0.5.0", 3, &r);
    assert_int_equal(r.policy, TP_AUTO);
    /* only Auto or auto enable it */
    service("", "\"service.kubernetes.io/topology-mode\":\"AUTO\"");
    pick_f("10.0.5.0", 3, &r);
    assert_int_equal(r.policy, TP_NONE);
}

/* A hint producer hints only endpoints whose ready condition is true; one
 * without the condition is ready to the consumer but unhinted, so every
 * client falls back to every endpoint (what kube-proxy does with the
 * EndpointSlice controller's hints for the same slice). */
static void test_computed_auto_ready_unset(void **s)
{
    (void)s;
    node("na", "zone-a", NULL);
    node("nb", "zone-b", NULL);
    pod("ca", "10.9.0.1", "na");
    pod("cb", "10.9.0.2", "nb");
    service("", "\"service.kubernetes.io/topology-mode\":\"Auto\"");
    /* both ready: each zone gets its own endpoint */
    slice("s", "IPv4", 2, ep("10.5.0.1", "na", "zone-a", 1, NULL, NULL),
          ep("10.5.0.2", "nb", "zone-b", 1, NULL, NULL));
    assert_string_equal(pick("10.9.0.1"), "10.5.0.1");
    assert_string_equal(pick("10.9.0.2"), "10.5.0.2");
    /* zone-b's endpoint without a ready condition: both clients get both */
    slice("s", "IPv4", 2, ep("10.5.0.1", "na", "zone-a", 1, NULL, NULL),
          ep("10.5.0.2", "nb", "zone-b", -1, NULL, NULL));
    topo_result r;
    assert_string_equal(pick_f("10.9.0.1", 3, &r), "10.5.0.1,10.5.0.2");
    assert_int_equal(r.outcome, TO_FALLBACK);
    assert_string_equal(pick("10.9.0.2"), "10.5.0.1,10.5.0.2");
    /* the same under trafficDistribution: PreferClose */
    service("\"trafficDistribution\":\"PreferClose\"", "");
    assert_string_equal(pick("10.9.0.1"), "10.5.0.1,10.5.0.2");
    assert_string_equal(pick("10.9.0.2"), "10.5.0.1,10.5.0.2");
}

/* Zone inputs belong to the engine and its store: a new store (a reload;
 * the allocator may well hand it the old one's address) with a different
 * node set of the same size is decided on its own nodes. */
static void two_zone_cluster(const char *z1, const char *z2)
{
    node("n1", z1, NULL);
    node("n2", z2, NULL);
    pod("c1", "10.9.0.1", "n1");
    pod("c2", "10.9.0.2", "n2");
    service("", "\"service.kubernetes.io/topology-mode\":\"Auto\"");
    slice("s", "IPv4", 2, ep("10.5.0.1", "n1", z1, 1, NULL, NULL),
          ep("10.5.0.2", "n2", z2, 1, NULL, NULL));
}

static void test_computed_inputs_per_store(void **s)
{
    (void)s;
    two_zone_cluster("zone-a", "zone-b");
    assert_string_equal(pick("10.9.0.1"), "10.5.0.1");
    store_free(S);
    S = store_new(NULL);
    assert_non_null(S);
    two_zone_cluster("zone-c", "zone-d");
    assert_string_equal(pick("10.9.0.1"), "10.5.0.1");
    assert_string_equal(pick("10.9.0.2"), "10.5.0.2");
}

static void test_computed_same_zone_prefer(void **s)
{
    (void)s;
    auto_nodes();
    service("", "\"endpointslice.kubernetes.io/same-zone\":\"Prefer\"");
    /* 15 endpoints, 5 per zone: above threshold 9 + padding 3 → Prefer */
    char addr[15][32], *e[15];
    const char *nodes[] = { "n0", "n1", "n2", "n3", "n4", "n5" };
    const char *zones[] = { "zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c" };
    for (int i = 0; i < 15; i++) {
        int k = (i / 5) * 2 + (i % 2);
        snprintf(addr[i], sizeof addr[i], "10.2.0.%d", i + 10);
        e[i] = ep(addr[i], nodes[k], zones[k], 1, NULL, NULL);
    }
    slice("s", "IPv4", 15, e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9], e[10],
          e[11], e[12], e[13], e[14]);
    topo_result r;
    assert_string_equal(pick_f("10.0.5.2", 3, &r), "10.2.0.15,10.2.0.16,10.2.0.17,10.2.0.18,10.2.0.19");
    assert_int_equal(r.policy, TP_SAME_ZONE_PREFER);
    assert_int_equal(r.outcome, TO_LOCAL);
    /* 6 endpoints (below threshold): Balanced, everyone gets all */
    slice("s", "IPv4", 6, e[0], e[1], e[5], e[6], e[10], e[11]);
    assert_int_equal(strlen(pick_f("10.0.5.2", 3, &r)), strlen("10.2.0.10,10.2.0.11,10.2.0.15,10.2.0.16,10.2.0.20,10.2.0.21"));
    assert_int_equal(r.outcome, TO_FALLBACK);
}

/* ---- client address: ECS trusted only from client_subnet ----------------------------- */

static void test_ecs_trust(void **s)
{
    (void)s;
    topo_client cl;
    memset(&cl, 0, sizeof cl);
    struct sockaddr_in *sin = (struct sockaddr_in *)&cl.peer;
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.9", &sin->sin_addr);
    cl.has_ecs = 1;
    cl.ecs_family = 1;
    cl.ecs_source_prefix = 32;
    uint8_t a[4] = { 10, 0, 1, 1 };
    memcpy(cl.ecs_addr, a, 4);
    st_ip ip;
    int ecs;
    char txt[64];
    /* untrusted: the source address */
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ecs, 0);
    inet_ntop(AF_INET, ip.addr, txt, sizeof txt);
    assert_string_equal(txt, "127.0.0.9");
    /* trusted source: the ECS address */
    assert_int_equal(cidr_parse("127.0.0.0/24", &CFG.subnets[0]), 0);
    CFG.nsubnets = 1;
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ecs, 1);
    inet_ntop(AF_INET, ip.addr, txt, sizeof txt);
    assert_string_equal(txt, "10.0.1.1");
    /* no configuration: nothing is trusted */
    assert_int_equal(topo_client_addr(NULL, &cl, &ip, &ecs), 0);
    assert_int_equal(ecs, 0);
    /* a source prefix of 0 is not used */
    cl.ecs_source_prefix = 0;
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ecs, 0);
    /* outside the trusted subnet */
    cl.ecs_source_prefix = 32;
    inet_pton(AF_INET, "127.0.1.9", &sin->sin_addr);
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ecs, 0);
    /* an IPv4-mapped IPv6 source is the IPv4 client */
    memset(&cl.peer, 0, sizeof cl.peer);
    struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&cl.peer;
    sin6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::ffff:127.0.0.7", &sin6->sin6_addr);
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ip.family, 4);
    assert_int_equal(ecs, 1);                       /* 127.0.0.7 is trusted */
    inet_pton(AF_INET6, "::1", &sin6->sin6_addr);
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), 0);
    assert_int_equal(ip.family, 6);
    assert_int_equal(ecs, 0);
    /* no IP source (an internal request) */
    memset(&cl.peer, 0, sizeof cl.peer);
    assert_int_equal(topo_client_addr(&CFG, &cl, &ip, &ecs), -1);
}

/* The server's copy of a request into a topo_client (server/reqtopo.h). */
static void test_req_topo_client(void **s)
{
    (void)s;
    dns_req r;
    memset(&r, 0, sizeof r);
    struct sockaddr_in *sin = (struct sockaddr_in *)&r.peer;
    sin->sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.9", &sin->sin_addr);
    topo_client cl;
    req_topo_client(&r, &cl);
    assert_int_equal(cl.peer.ss_family, AF_INET);
    assert_memory_equal(&cl.peer, &r.peer, sizeof r.peer);
    assert_int_equal(cl.has_ecs, 0);
    r.q.edns.present = 1;
    r.q.edns.has_ecs = 1;
    r.q.edns.ecs.family = 2;
    r.q.edns.ecs.source_prefix = 56;
    inet_pton(AF_INET6, "2001:db8::", r.q.edns.ecs.addr);
    req_topo_client(&r, &cl);
    assert_int_equal(cl.has_ecs, 1);
    assert_int_equal(cl.ecs_family, 2);
    assert_int_equal(cl.ecs_source_prefix, 56);
    assert_memory_equal(cl.ecs_addr, r.q.edns.ecs.addr, 16);
    r.q.edns.present = 0;                           /* ECS only inside EDNS */
    req_topo_client(&r, &cl);
    assert_int_equal(cl.has_ecs, 0);
    /* the request keeps the largest dependency, ECS only with one */
    req_topo_mark(&r, TOPO_DEP_NODE, 1);
    assert_int_equal(r.topo_dep, TOPO_DEP_NODE);
    assert_int_equal(r.topo_ecs, 1);
}

static void test_mark(void **s)
{
    (void)s;
    uint8_t dep = 0, ecs = 0;
    topo_mark(&dep, &ecs, TOPO_DEP_ZONE, 0);
    topo_mark(&dep, &ecs, TOPO_DEP_NONE, 1);
    assert_int_equal(dep, TOPO_DEP_ZONE);
    assert_int_equal(ecs, 0);                       /* ECS unused by this answer */
    topo_mark(&dep, &ecs, TOPO_DEP_NODE, 1);
    assert_int_equal(dep, TOPO_DEP_NODE);
    assert_int_equal(ecs, 1);
    topo_mark(&dep, &ecs, TOPO_DEP_ZONE, 0);        /* never goes back */
    assert_int_equal(dep, TOPO_DEP_NODE);
    assert_int_equal(ecs, 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_keys_0_no_key_no_endpoints), T(test_keys_1_no_key), T(test_keys_2_hostname),
        T(test_keys_3_hostname_no_match), T(test_keys_4_zone), T(test_keys_5_early_match),
        T(test_keys_6_later_match), T(test_keys_7_no_match), T(test_keys_8_any_ignored),
        T(test_keys_9_any), T(test_keys_10_any_last), T(test_keys_e1_e2_client_without_labels),
        T(test_keys_e3_e4_client_without_zone), T(test_keys_e5_endpoint_without_zone),
        T(test_keys_annotation),
        T(test_hints_row1_own_zone), T(test_hints_rows4to6_no_match_gets_all),
        T(test_hints_row7_unready_ignored),
        T(test_hints_row8_no_ready_in_zone), T(test_hints_row9_one_unhinted),
        T(test_hints_row10_multi_zone_hints), T(test_hints_rows22to24_nodes),
        T(test_hints_rows_etp_and_terminating),
        T(test_itp_local), T(test_readiness), T(test_same_zone_require), T(test_precedence),
        T(test_unknown_client_gets_all), T(test_node_address_client), T(test_families_decided_apart),
        T(test_computed_prefer_same_node), T(test_computed_prefer_close), T(test_computed_auto),
        T(test_computed_same_zone_prefer), T(test_computed_auto_ready_unset),
        T(test_computed_inputs_per_store),
        T(test_ecs_trust), T(test_req_topo_client), T(test_mark),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
