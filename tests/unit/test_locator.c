/*
 * test_locator.c — locating clients without pods: the prefix index
 * (prefix.h: IPv4 and IPv6, longest match, removal, a node gaining and
 * losing a range, held rebuilds), the range sources of the store (Node
 * podCIDRs, CiliumNode, Calico BlockAffinity), the locator's source order
 * (locator.h) and endpoint/range conflicts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "cluster/locator.h"
#include "cluster/prefix.h"
#include "cluster/store.h"

static store *S;

typedef struct conflicts {
    int n[ST_RANGE_COUNT];
} conflicts;

static void on_conflict(void *arg, int source)
{
    ((conflicts *)arg)->n[source]++;
}

static conflicts C;

static int setup(void **state)
{
    (void)state;
    store_reader_register();
    memset(&C, 0, sizeof C);
    store_opts o = { .expected_pods = 1, .conflict = on_conflict, .conflict_arg = &C };
    S = store_new(&o);
    return S ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    store_free(S);
    store_reader_unregister();
    return 0;
}

static int apply(int (*fn)(store *, const cJSON *), const char *json)
{
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    int rc = fn(S, o);
    cJSON_Delete(o);
    return rc;
}

static void del(const char *res, const char *json)
{
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    assert_int_equal(store_remove(S, res, o), 0);
    cJSON_Delete(o);
}

static st_ip ip(const char *s)
{
    st_ip v;
    assert_int_equal(st_parse_ip(s, &v), 0);
    return v;
}

static st_cidr cidr(const char *s)
{
    st_cidr c;
    assert_int_equal(st_parse_cidr(s, &c), 0);
    return c;
}

/* The node pfx_find gives for an address, "" for none. */
static const char *find(pfx_index *x, const char *addr, int *bits)
{
    st_ip a = ip(addr);
    store_read_begin();
    const char *n = pfx_find(x, &a, bits);
    store_read_end();
    return n ? n : "";
}

/* ---- the prefix index --------------------------------------------------- */

static void test_parse_cidr(void **state)
{
    (void)state;
    st_cidr c = cidr("10.1.2.3/16");
    assert_int_equal(c.net.family, 4);
    assert_int_equal(c.bits, 16);
    assert_memory_equal(c.net.addr, ((uint8_t[]){ 10, 1, 0, 0 }), 4);    /* host bits cleared */
    c = cidr("fd00:1:2:3::7/64");
    assert_int_equal(c.net.family, 6);
    assert_int_equal(c.bits, 64);
    assert_int_equal(c.net.addr[15], 0);
    assert_int_equal(cidr("10.0.0.1").bits, 32);
    assert_int_equal(cidr("::1").bits, 128);
    st_cidr bad;
    const char *no[] = { "10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/x", "10.0.0/8",
                         "", "10.0.0.0/-1", "10.0.0.0/ 8", "10.0.0.0/0008" };
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_int_equal(st_parse_cidr(no[i], &bad), -1);
    assert_int_equal(st_parse_cidr(NULL, &bad), -1);
}

static void test_prefix_v4_v6_longest(void **state)
{
    (void)state;
    pfx_index *x = pfx_new();
    assert_non_null(x);
    st_cidr a[] = { cidr("10.244.0.0/16") }, b[] = { cidr("10.244.3.0/24"), cidr("fd00:3::/64") },
            d[] = { cidr("10.244.3.128/25") };
    assert_int_equal(pfx_set(x, "wide", "node-wide", a, 1), 1);
    assert_int_equal(pfx_set(x, "n3", "node-3", b, 2), 1);
    assert_int_equal(pfx_set(x, "n3x", "node-3x", d, 1), 1);
    assert_int_equal(pfx_count(x), 4);
    int bits = 0;
    assert_string_equal(find(x, "10.244.3.7", &bits), "node-3");
    assert_int_equal(bits, 24);
    assert_string_equal(find(x, "10.244.3.200", &bits), "node-3x");     /* longest wins */
    assert_int_equal(bits, 25);
    assert_string_equal(find(x, "10.244.9.1", &bits), "node-wide");
    assert_int_equal(bits, 16);
    assert_string_equal(find(x, "10.245.0.1", NULL), "");
    assert_string_equal(find(x, "fd00:3::42", &bits), "node-3");
    assert_int_equal(bits, 64);
    assert_string_equal(find(x, "fd00:4::42", NULL), "");
    /* an IPv4 range never holds an IPv6 address with the same leading octets */
    assert_string_equal(find(x, "a00:0:1::", NULL), "");
    /* the same ranges again: nothing changes */
    assert_int_equal(pfx_set(x, "n3", "node-3", b, 2), 0);
    /* removal */
    pfx_del(x, "n3x");
    assert_string_equal(find(x, "10.244.3.200", NULL), "node-3");
    pfx_del(x, "wide");
    assert_string_equal(find(x, "10.244.9.1", NULL), "");
    pfx_del(x, "nobody");
    assert_int_equal(pfx_count(x), 2);
    pfx_free(x);
}

/* Many ranges of one length: each address finds its own, by binary search. */
static void test_prefix_many(void **state)
{
    (void)state;
    pfx_index *x = pfx_new();
    assert_int_equal(pfx_hold(x, 1), 0);
    char owner[32], net[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(owner, sizeof owner, "node-%d", i);
        snprintf(net, sizeof net, "10.%d.%d.0/24", 100 + i / 256, i % 256);
        st_cidr c = cidr(net);
        assert_int_equal(pfx_set(x, owner, strdup(owner), &c, 1), 1);
    }
    assert_int_equal(pfx_count(x), 0);      /* held: nothing published yet */
    assert_int_equal(pfx_hold(x, 0), 1);
    assert_int_equal(pfx_count(x), 5000);
    for (int i = 0; i < 5000; i += 7) {
        snprintf(owner, sizeof owner, "node-%d", i);
        snprintf(net, sizeof net, "10.%d.%d.%d", 100 + i / 256, i % 256, i % 250 + 1);
        assert_string_equal(find(x, net, NULL), owner);
    }
    assert_string_equal(find(x, "10.99.255.255", NULL), "");
    assert_string_equal(find(x, "10.120.0.1", NULL), "");
    /* the node names were strdup'ed above: the index does not own them */
    store_read_begin();
    char *names[5000];
    for (int i = 0; i < 5000; i++) {
        snprintf(net, sizeof net, "10.%d.%d.1", 100 + i / 256, i % 256);
        st_ip a = ip(net);
        names[i] = (char *)pfx_find(x, &a, NULL);
    }
    store_read_end();
    pfx_free(x);
    for (int i = 0; i < 5000; i++)
        free(names[i]);
}

/* Two owners claiming the same range: the first node name wins, whatever
 * the arrival order. */
static void test_prefix_same_range(void **state)
{
    (void)state;
    pfx_index *x = pfx_new();
    st_cidr c = cidr("10.9.0.0/24");
    pfx_set(x, "b", "node-b", &c, 1);
    pfx_set(x, "a", "node-a", &c, 1);
    assert_string_equal(find(x, "10.9.0.5", NULL), "node-a");
    pfx_del(x, "a");
    assert_string_equal(find(x, "10.9.0.5", NULL), "node-b");
    pfx_free(x);
}

/* ---- the store's range sources ------------------------------------------ */

#define NODE(name, zone, addr, cidrs)                                                        \
    "{\"metadata\":{\"name\":\"" name "\",\"labels\":{\"topology.kubernetes.io/zone\":\"" zone \
    "\"}},\"spec\":{" cidrs "},\"status\":{\"addresses\":[{\"type\":\"InternalIP\","          \
    "\"address\":\"" addr "\"}]}}"

static const char *range_node(int src, const char *addr)
{
    st_ip a = ip(addr);
    store_read_begin();
    const char *n = store_node_by_range(S, src, &a);
    store_read_end();
    return n ? n : "";
}

static void test_node_podcidrs(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_node, NODE("a1", "zone-a", "192.168.0.1",
                           "\"podCIDR\":\"10.244.1.0/24\",\"podCIDRs\":[\"10.244.1.0/24\","
                           "\"fd00:10:244:1::/64\"]")), 0);
    assert_int_equal(apply(store_upsert_node, NODE("b1", "zone-b", "192.168.0.2",
                           "\"podCIDR\":\"10.244.2.0/24\"")), 0);   /* podCIDR alone */
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.244.1.9"), "a1");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "fd00:10:244:1::9"), "a1");   /* dual-stack */
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.244.2.9"), "b1");
    assert_string_equal(range_node(ST_RANGE_CILIUM, "10.244.2.9"), "");
    assert_int_equal(store_range_count(S, ST_RANGE_PODCIDR), 3);
    /* a1 loses its IPv6 range and gains another IPv4 one */
    apply(store_upsert_node, NODE("a1", "zone-a", "192.168.0.1",
                                  "\"podCIDRs\":[\"10.244.1.0/24\",\"10.244.11.0/24\"]"));
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "fd00:10:244:1::9"), "");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.244.11.3"), "a1");
    /* no spec at all: no range */
    apply(store_upsert_node, "{\"metadata\":{\"name\":\"b1\"}}");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.244.2.9"), "");
    /* a removed node's ranges go with it */
    del("nodes", "{\"metadata\":{\"name\":\"a1\"}}");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.244.1.9"), "");
    assert_int_equal(store_range_count(S, ST_RANGE_PODCIDR), 0);
}

/* A relist publishes the ranges once, at its end, and drops those of
 * nodes no longer listed. */
static void test_node_relist(void **state)
{
    (void)state;
    apply(store_upsert_node, NODE("a1", "zone-a", "192.168.0.1", "\"podCIDR\":\"10.1.0.0/24\""));
    store_relist_begin(S, "nodes");
    apply(store_upsert_node, NODE("b1", "zone-b", "192.168.0.2", "\"podCIDR\":\"10.2.0.0/24\""));
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.2.0.1"), "");     /* not yet */
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.1.0.1"), "a1");   /* still */
    store_relist_end(S, "nodes");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.2.0.1"), "b1");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.1.0.1"), "");
}

static void test_cilium_nodes(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_ciliumnode,
                           "{\"apiVersion\":\"cilium.io/v2\",\"kind\":\"CiliumNode\","
                           "\"metadata\":{\"name\":\"a1\"},\"spec\":{\"ipam\":{\"podCIDRs\":"
                           "[\"10.0.1.0/24\",\"fd00:1::/96\",\"junk\"]}}}"), 0);
    assert_string_equal(range_node(ST_RANGE_CILIUM, "10.0.1.4"), "a1");
    assert_string_equal(range_node(ST_RANGE_CILIUM, "fd00:1::4"), "a1");
    assert_string_equal(range_node(ST_RANGE_PODCIDR, "10.0.1.4"), "");
    assert_int_equal(store_count(S, "ciliumnodes"), 1);
    /* cluster-pool hands a node another range */
    apply(store_upsert_ciliumnode, "{\"metadata\":{\"name\":\"a1\"},\"spec\":{\"ipam\":"
                                   "{\"podCIDRs\":[\"10.0.7.0/24\"]}}}");
    assert_string_equal(range_node(ST_RANGE_CILIUM, "10.0.1.4"), "");
    assert_string_equal(range_node(ST_RANGE_CILIUM, "10.0.7.4"), "a1");
    assert_int_equal(apply(store_upsert_ciliumnode, "{\"metadata\":{}}"), -1);   /* no name */
    del("ciliumnodes", "{\"metadata\":{\"name\":\"a1\"}}");
    assert_string_equal(range_node(ST_RANGE_CILIUM, "10.0.7.4"), "");
    assert_int_equal(store_count(S, "ciliumnodes"), 0);
}

#define AFFINITY(name, cidr, node, state, deleted)                                           \
    "{\"apiVersion\":\"crd.projectcalico.org/v1\",\"kind\":\"BlockAffinity\","                \
    "\"metadata\":{\"name\":\"" name "\"},\"spec\":{\"cidr\":\"" cidr "\",\"node\":\"" node    \
    "\",\"state\":\"" state "\"" deleted "}}"

static void test_calico_affinities(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_blockaffinity,
                           AFFINITY("a1-10-5-0-0-26", "10.5.0.0/26", "a1", "confirmed",
                                    ",\"deleted\":\"false\"")), 0);
    apply(store_upsert_blockaffinity, AFFINITY("b1-10-5-0-64-26", "10.5.0.64/26", "b1",
                                               "confirmed", ""));
    apply(store_upsert_blockaffinity, AFFINITY("c1-10-5-0-128-26", "10.5.0.128/26", "c1",
                                               "pending", ""));
    apply(store_upsert_blockaffinity, AFFINITY("d1-10-5-0-192-26", "10.5.0.192/26", "d1",
                                               "confirmed", ",\"deleted\":\"true\""));
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.10"), "a1");
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.70"), "b1");
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.130"), "");    /* pending */
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.200"), "");    /* being deleted */
    /* confirmed later; then marked deleted */
    apply(store_upsert_blockaffinity, AFFINITY("c1-10-5-0-128-26", "10.5.0.128/26", "c1",
                                               "confirmed", ""));
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.130"), "c1");
    apply(store_upsert_blockaffinity, AFFINITY("a1-10-5-0-0-26", "10.5.0.0/26", "a1",
                                               "confirmed", ",\"deleted\":true"));
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.10"), "");
    /* malformed confirmed ones are skipped, the store unchanged */
    assert_int_equal(apply(store_upsert_blockaffinity,
                           AFFINITY("x", "10.5.1.0/33", "x1", "confirmed", "")), -1);
    assert_int_equal(apply(store_upsert_blockaffinity,
                           AFFINITY("y", "10.5.1.0/26", "", "confirmed", "")), -1);
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.1.1"), "");
    /* relist: what is not listed again goes */
    store_relist_begin(S, "blockaffinities");
    apply(store_upsert_blockaffinity, AFFINITY("b1-10-5-0-64-26", "10.5.0.64/26", "b1",
                                               "confirmed", ""));
    store_relist_end(S, "blockaffinities");
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.70"), "b1");
    assert_string_equal(range_node(ST_RANGE_CALICO, "10.5.0.130"), "");
    assert_int_equal(store_count(S, "blockaffinities"), 1);
}

/* ---- the locator -------------------------------------------------------- */

#define POD(name, node, addr)                                                                \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"" \
    node "\"},\"status\":{\"phase\":\"Running\",\"podIP\":\"" addr "\",\"podIPs\":[{\"ip\":\"" \
    addr "\"}]}}"

#define SLICE(name, svc, addr, node)                                                         \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\",\"labels\":{"             \
    "\"kubernetes.io/service-name\":\"" svc "\"}},\"addressType\":\"IPv4\",\"endpoints\":[{"  \
    "\"addresses\":[\"" addr "\"],\"nodeName\":\"" node "\",\"conditions\":{\"ready\":true}}]," \
    "\"ports\":[{\"port\":80}]}"

static void cluster(void)
{
    apply(store_upsert_node, NODE("a1", "zone-a", "192.168.0.1", "\"podCIDR\":\"10.244.1.0/24\""));
    apply(store_upsert_node, NODE("b1", "zone-b", "192.168.0.2", "\"podCIDR\":\"10.244.2.0/24\""));
    apply(store_upsert_node, NODE("c1", "zone-c", "192.168.0.3", "\"podCIDR\":\"10.244.3.0/24\""));
}

typedef struct want {
    int via;
    const char *node, *zone;
} want;

static void locate(const loc_sources *l, const char *self, const char *addr, want w)
{
    st_ip a = ip(addr);
    topo_loc loc;
    store_read_begin();
    assert_int_equal(locator_find_in(S, &a, l, self, &loc), w.via);
    if (w.node)
        assert_string_equal(loc.node_name, w.node);
    else
        assert_null(loc.node_name);
    if (w.zone)
        assert_string_equal(loc.zone, w.zone);
    else
        assert_null(loc.zone);
    store_read_end();
}

static void test_source_words(void **state)
{
    (void)state;
    const char *w[] = { "pods", "endpoints", "podcidr", "cilium", "calico" };
    for (int i = 0; i < LOC_SRC_COUNT; i++) {
        assert_int_equal(locator_source_parse(w[i]), i);
        assert_string_equal(locator_source_name(i), w[i]);
    }
    assert_int_equal(locator_source_parse("Pods"), -1);
    assert_int_equal(locator_source_parse("podCIDR"), -1);
    assert_int_equal(locator_source_parse(""), -1);
    assert_true(locator_uses(NULL, LOC_SRC_PODS));
    assert_false(locator_uses(NULL, LOC_SRC_PODCIDR));
    loc_sources l = { 2, { LOC_SRC_PODCIDR, LOC_SRC_ENDPOINTS } };
    assert_false(locator_uses(&l, LOC_SRC_PODS));
    assert_true(locator_uses(&l, LOC_SRC_ENDPOINTS));
    assert_string_equal(locator_via_name(LOC_POD), "pods");
    assert_string_equal(locator_via_name(LOC_NODE_ADDR), "node");
    assert_string_equal(locator_via_name(LOC_PODCIDR), "podcidr");
    assert_string_equal(locator_via_name(LOC_UNKNOWN), "unknown");
}

static void test_source_order(void **state)
{
    (void)state;
    cluster();
    /* a pod on b1 whose address is inside a1's range (a CNI not
     * allocating from podCIDRs), and a slice saying c1 */
    apply(store_upsert_pod, POD("odd", "b1", "10.244.1.50"));
    apply(store_upsert_slice, SLICE("odd-x", "odd", "10.244.1.50", "c1"));
    /* a client outside every range, known by a slice only */
    apply(store_upsert_slice, SLICE("out-x", "out", "172.16.0.9", "b1"));
    loc_sources pods = { 0, { 0 } }, cidr_ep = { 2, { LOC_SRC_PODCIDR, LOC_SRC_ENDPOINTS } },
                ep_cidr = { 2, { LOC_SRC_ENDPOINTS, LOC_SRC_PODCIDR } },
                ep_pods = { 2, { LOC_SRC_ENDPOINTS, LOC_SRC_PODS } },
                cilium = { 1, { LOC_SRC_CILIUM } };
    locate(&pods, NULL, "10.244.1.50", (want){ LOC_POD, "b1", "zone-b" });
    locate(NULL, NULL, "10.244.1.50", (want){ LOC_POD, "b1", "zone-b" });
    locate(&cidr_ep, NULL, "10.244.1.50", (want){ LOC_PODCIDR, "a1", "zone-a" });
    locate(&ep_cidr, NULL, "10.244.1.50", (want){ LOC_ENDPOINT, "c1", "zone-c" });
    locate(&ep_pods, NULL, "10.244.1.50", (want){ LOC_ENDPOINT, "c1", "zone-c" });
    /* outside every range: the slice locates it */
    locate(&cidr_ep, NULL, "172.16.0.9", (want){ LOC_ENDPOINT, "b1", "zone-b" });
    locate(&pods, NULL, "172.16.0.9", (want){ LOC_UNKNOWN, NULL, NULL });
    /* a range address of no pod, without pods in the sources */
    locate(&cidr_ep, NULL, "10.244.3.77", (want){ LOC_PODCIDR, "c1", "zone-c" });
    locate(&pods, NULL, "10.244.3.77", (want){ LOC_UNKNOWN, NULL, NULL });
    /* node addresses are always consulted, after the sources */
    locate(&cidr_ep, NULL, "192.168.0.2", (want){ LOC_NODE_ADDR, "b1", "zone-b" });
    locate(&cilium, NULL, "192.168.0.3", (want){ LOC_NODE_ADDR, "c1", "zone-c" });
    /* unknown, then node-local's own node */
    locate(&cilium, NULL, "10.244.1.50", (want){ LOC_UNKNOWN, NULL, NULL });
    locate(&cilium, "a1", "10.244.1.50", (want){ LOC_NODE_LOCAL, "a1", "zone-a" });
    locate(&cidr_ep, "a1", "10.244.2.1", (want){ LOC_PODCIDR, "b1", "zone-b" });
    /* a range of a node not (yet) in the store: its name, no zone */
    apply(store_upsert_ciliumnode, "{\"metadata\":{\"name\":\"z9\"},\"spec\":{\"ipam\":"
                                   "{\"podCIDRs\":[\"10.9.0.0/24\"]}}}");
    locate(&cilium, NULL, "10.9.0.1", (want){ LOC_CILIUM, "z9", NULL });
}

/* An endpoint whose nodeName is not the node whose range holds its
 * address is counted once per address and source, whichever arrives
 * first; one that agrees is not. */
static void test_conflicts(void **state)
{
    (void)state;
    /* the slice first, then the ranges (a list of nodes after the slices) */
    apply(store_upsert_slice, SLICE("odd-x", "odd", "10.244.1.50", "c1"));
    apply(store_upsert_slice, SLICE("ok-x", "ok", "10.244.2.7", "b1"));
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 0);
    store_relist_begin(S, "nodes");
    cluster();
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 0);   /* counted when the relist ends */
    store_relist_end(S, "nodes");
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 1);
    /* the slice again, or a node update: not counted twice */
    apply(store_upsert_slice, SLICE("odd-x", "odd", "10.244.1.50", "c1"));
    apply(store_upsert_node, NODE("a1", "zone-a", "192.168.0.1",
                                  "\"podCIDRs\":[\"10.244.1.0/24\",\"10.244.9.0/24\"]"));
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 1);
    /* a new conflicting endpoint, after the ranges */
    apply(store_upsert_slice, SLICE("odd-y", "odd2", "10.244.3.5", "a1"));
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 2);
    /* another source holding the same address disagreeing: its own count */
    apply(store_upsert_ciliumnode, "{\"metadata\":{\"name\":\"b1\"},\"spec\":{\"ipam\":"
                                   "{\"podCIDRs\":[\"10.244.3.0/24\"]}}}");
    assert_int_equal(C.n[ST_RANGE_CILIUM], 1);
    assert_int_equal(C.n[ST_RANGE_PODCIDR], 2);
    assert_int_equal(C.n[ST_RANGE_CALICO], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_cidr),
        cmocka_unit_test_setup_teardown(test_prefix_v4_v6_longest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_same_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_podcidrs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cilium_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_calico_affinities, setup, teardown),
        cmocka_unit_test(test_source_words),
        cmocka_unit_test_setup_teardown(test_source_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
