/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_store.c — the cluster store: decoding every JSON shape the API sends,
 * publication to readers, indexes, relist reconciliation, bad objects; the
 * client locator's sources (pods, endpoints, node podCIDRs, CiliumNodes,
 * Calico BlockAffinities: the prefix index) and endpoint/range conflicts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "cluster/locator.h"
#include "cluster/prefix.h"
#include "cluster/store.h"
#include "cluster/pmap.h"

static store *S;

/* Every test's store: this thread registered as a reader, S made with o
 * (NULL: the defaults). */
static int open_store(const store_opts *o)
{
    store_reader_register();
    S = store_new(o);
    return S ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    return open_store(NULL);
}

static int teardown(void **state)
{
    store_free(S);
    store_reader_unregister();
    return 0;
}

static int setup_mc(void **state)
{
    (void)state;
    return open_store(&(store_opts){ .multicluster = 1 });
}

/* A store sized for one pod (every map at its 64-bucket minimum): the
 * tests that run on it too must see the same answers. */
static int setup_small(void **state)
{
    (void)state;
    return open_store(&(store_opts){ .expected_pods = 1 });
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

/* The i-th address of 10.0.0.0/8 (0 <= i < 2^24) into out: the many
 * endpoints and pods of the bulk tests. */
static void nth_addr(char *out, size_t cap, int i)
{
    assert_true(i >= 0 && i < 1 << 24);
    snprintf(out, cap, "10.%d.%d.%d", i >> 16, (i >> 8) & 255, i & 255);
}

static void test_cpu_quantities(void **state)
{
    assert_int_equal(st_cpu_milli("4"), 4000);
    assert_int_equal(st_cpu_milli("3500m"), 3500);
    assert_int_equal(st_cpu_milli("0.5"), 500);
    assert_int_equal(st_cpu_milli("1.5"), 1500);
    assert_int_equal(st_cpu_milli("0.0005"), 1);     /* rounds up */
    assert_int_equal(st_cpu_milli("1e3"), 1000000);
    assert_int_equal(st_cpu_milli("2k"), 2000000);
    assert_int_equal(st_cpu_milli(""), -1);
    assert_int_equal(st_cpu_milli("abc"), -1);
    assert_int_equal(st_cpu_milli("4x"), -1);
}

/* Regression: strtod accepted "nan", "inf" and hex, and a huge quantity was
 * cast to long (undefined behaviour). The result must fit the store's
 * uint32_t millicores; anything else is -1 (unknown). */
static void test_cpu_quantities_out_of_range(void **state)
{
    assert_int_equal(st_cpu_milli("nan"), -1);
    assert_int_equal(st_cpu_milli("inf"), -1);
    assert_int_equal(st_cpu_milli("-inf"), -1);
    assert_int_equal(st_cpu_milli("0x10"), -1);
    assert_int_equal(st_cpu_milli(" 4"), -1);
    assert_int_equal(st_cpu_milli("1e300"), -1);
    assert_int_equal(st_cpu_milli("1e19"), -1);
    assert_int_equal(st_cpu_milli("9223372036854775807"), -1);
    assert_int_equal(st_cpu_milli("-1"), -1);
    assert_int_equal(st_cpu_milli("4294968"), -1);           /* 4294968000m > UINT32_MAX */
    assert_int_equal(st_cpu_milli("4294967"), 4294967000L);
    assert_int_equal(st_cpu_milli("4294967295m"), 4294967295L);
    assert_int_equal(st_cpu_milli("4294967296m"), -1);
    assert_int_equal(st_cpu_milli("1Ti"), -1);
    assert_int_equal(st_cpu_milli("2E"), -1);                 /* exa: far too many */
    assert_int_equal(st_cpu_milli("500u"), 1);                /* micro, rounded up */
    assert_int_equal(st_cpu_milli("1e-2"), 10);
}

/* The string table's size, as the kubernetes plugin watches it: a value
 * written again adds nothing, a new one adds its octets, and a removal
 * gives nothing back (the table only grows). */
static void test_strings_bytes(void **state)
{
    (void)state;
    char json[512];
    const char *fmt = "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\",\"annotations\":"
                      "{\"topodns.io/topology-keys\":\"%s\"}},\"spec\":{\"clusterIP\":\"None\"}}";
    snprintf(json, sizeof json, fmt, "zone-a");
    assert_int_equal(apply(store_upsert_service, json), 0);
    size_t b0 = store_strings_bytes(S);
    assert_true(b0 > strlen("shop") + strlen("zone-a"));
    for (int i = 0; i < 3; i++)
        assert_int_equal(apply(store_upsert_service, json), 0);
    assert_int_equal(store_strings_bytes(S), b0);
    snprintf(json, sizeof json, fmt, "a-key-never-seen-before,another-one");
    assert_int_equal(apply(store_upsert_service, json), 0);
    size_t b1 = store_strings_bytes(S);
    assert_true(b1 >= b0 + strlen("a-key-never-seen-before") + strlen("another-one") + 2);
    del("services", json);
    assert_int_equal(store_count(S, "services"), 0);
    assert_int_equal(store_strings_bytes(S), b1);
}

static void test_service_shapes(void **state)
{
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{\"type\":\"ClusterIP\","
        "\"clusterIP\":\"10.96.0.5\",\"clusterIPs\":[\"10.96.0.5\",\"fd00::5\"],"
        "\"ports\":[{\"name\":\"http\",\"port\":80},{\"port\":53,\"protocol\":\"UDP\"}],"
        "\"selector\":{\"app\":\"web\"},\"externalIPs\":[\"192.0.2.1\",\"\"]},"
        "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"192.0.2.2\",\"hostname\":\"x.example\"},"
        "{\"hostname\":\"lb.example.net\"},{\"ip\":\"\"}]}}}"), 0);
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\",\"annotations\":{"
        "\"service.kubernetes.io/topology-mode\":\"Auto\",\"topodns.io/topology-keys\":"
        "\"kubernetes.io/hostname, topology.kubernetes.io/zone ,*\"}},"
        "\"spec\":{\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"],\"internalTrafficPolicy\":\"Local\","
        "\"trafficDistribution\":\"PreferClose\",\"ports\":null}}"), 0);
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"ext\",\"namespace\":\"shop\"},\"spec\":{\"type\":\"ExternalName\","
        "\"externalName\":\"billing.example.net\"}}"), 0);
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"plain\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":"
        "\"10.96.0.9\",\"ports\":[{\"port\":8080}],\"internalTrafficPolicy\":\"Cluster\"}}"), 0);
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"sz\",\"namespace\":\"shop\",\"annotations\":{"
        "\"service.kubernetes.io/same-zone\":\"Require\"}},\"spec\":{\"clusterIP\":\"10.96.0.10\"}}"), 0);
    assert_int_equal(apply(store_upsert_service,
        "{\"metadata\":{\"name\":\"rp\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":"
        "\"10.96.0.11\",\"routingPreference\":\"PreferZone\",\"topologyKeys\":"
        "[\"kubernetes.io/hostname\",\"*\"]}}"), 0);
    store_read_begin();
    const st_service *web = store_service(S, "shop", "web");
    assert_non_null(web);
    assert_int_equal(web->kind, SVC_CLUSTERIP);
    assert_int_equal(web->n_cluster_ips, 2);
    assert_int_equal(web->cluster_ips[1].family, 6);
    assert_int_equal(web->nports, 2);
    assert_string_equal(web->ports[0].name, "http");
    assert_int_equal(web->ports[1].proto, ST_UDP);
    assert_int_equal(web->ports[0].proto, ST_TCP);
    assert_true(web->has_selector);
    assert_string_equal(web->name, "web");
    assert_string_equal(web->ns, "shop");
    const st_svc_extra *wx = st_svc_x(web);
    assert_true(web->has_extra);
    assert_ptr_equal(wx, (const void *)(web + 1));
    assert_int_equal(wx->n_external, 3);    /* spec first, ip over hostname, empty skipped */
    assert_string_equal(wx->external[0], "192.0.2.1");
    assert_string_equal(wx->external[1], "192.0.2.2");
    assert_string_equal(wx->external[2], "lb.example.net");
    assert_null(wx->external_name);
    assert_null(wx->topology_mode);
    assert_null(wx->topology_keys);
    const st_service *db = store_service(S, "shop", "db");
    assert_int_equal(db->kind, SVC_HEADLESS);
    assert_int_equal(db->nports, 0);
    assert_string_equal(db->name, "db");
    const st_svc_extra *dx = st_svc_x(db);
    assert_int_equal(dx->n_external, 0);
    assert_null(dx->external);
    assert_true(db->itp_local);
    assert_string_equal(dx->topology_mode, "Auto");
    assert_string_equal(dx->traffic_distribution, "PreferClose");
    assert_int_equal(dx->n_topology_keys, 3);
    assert_string_equal(dx->topology_keys[1], "topology.kubernetes.io/zone");
    assert_string_equal(dx->topology_keys[2], "*");
    assert_true(dx->topology_keys_from_annotation);
    assert_null(dx->same_zone);
    assert_null(dx->routing_preference);
    const st_service *ext = store_service(S, "shop", "ext");
    assert_int_equal(ext->kind, SVC_EXTERNALNAME);
    assert_string_equal(st_svc_x(ext)->external_name, "billing.example.net");
    assert_int_equal(ext->n_cluster_ips, 0);
    /* a Service with none of the rare parts has no extra block: st_svc_x
     * then reads every part as absent */
    const st_service *plain = store_service(S, "shop", "plain");
    assert_non_null(plain);
    assert_false(plain->has_extra);
    assert_string_equal(plain->name, "plain");
    assert_int_equal(plain->n_cluster_ips, 1);
    assert_int_equal(plain->nports, 1);
    assert_int_equal(plain->ports[0].port, 8080);
    const st_svc_extra *px = st_svc_x(plain);
    assert_null(px->external_name);
    assert_null(px->external);
    assert_int_equal(px->n_external, 0);
    assert_null(px->topology_keys);
    assert_int_equal(px->n_topology_keys, 0);
    assert_false(px->topology_keys_from_annotation);
    assert_null(px->traffic_distribution);
    assert_null(px->topology_mode);
    assert_null(px->same_zone);
    assert_null(px->routing_preference);
    /* each rare part alone makes the extra block */
    const st_service *sz = store_service(S, "shop", "sz");
    assert_true(sz->has_extra);
    assert_string_equal(st_svc_x(sz)->same_zone, "Require");
    assert_null(st_svc_x(sz)->routing_preference);
    const st_service *rp = store_service(S, "shop", "rp");
    assert_true(rp->has_extra);
    assert_string_equal(st_svc_x(rp)->routing_preference, "PreferZone");
    assert_null(st_svc_x(rp)->same_zone);
    assert_int_equal(st_svc_x(rp)->n_topology_keys, 2);   /* spec.topologyKeys */
    assert_string_equal(st_svc_x(rp)->topology_keys[0], "kubernetes.io/hostname");
    assert_false(st_svc_x(rp)->topology_keys_from_annotation);
    assert_null(store_service(S, "shop", "nope"));
    store_read_end();
    assert_int_equal(store_count(S, "services"), 6);
}

static const char slice_a[] =
    "{\"metadata\":{\"name\":\"db-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db\"}},"
    "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.42.1.17\"],\"conditions\":{\"ready\":true},"
    "\"hostname\":\"db-0\",\"nodeName\":\"worker-a1\",\"zone\":\"EU-West-1a\","
    "\"hints\":{\"forZones\":[{\"name\":\"eu-west-1a\"}],\"forNodes\":[{\"name\":\"worker-a1\"}]},"
    "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"db-0\"}},"
    "{\"addresses\":[\"10.42.7.5\"],\"conditions\":{\"ready\":false,\"serving\":true,\"terminating\":true}},"
    "{\"addresses\":[\"10.42.8.1\"],\"conditions\":{\"ready\":null}}],"
    "\"ports\":[{\"name\":\"pg\",\"protocol\":\"TCP\",\"port\":5432}]}";

/* A Service keeps every port the API allows: 10,000 named ports all kept
 * (1,000 were before, silently); past the 65,535 a count holds the rest is
 * dropped (and logged). */
static void test_service_many_ports(void **state)
{
    (void)state;
    static const int counts[] = { 10000, 70000 };
    for (int k = 0; k < 2; k++) {
        cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"big\",\"namespace\":\"ns\"},"
                               "\"spec\":{\"clusterIP\":\"10.96.0.9\"}}");
        cJSON *ports = cJSON_AddArrayToObject(cJSON_GetObjectItem(o, "spec"), "ports");
        for (int i = 0; i < counts[k]; i++) {
            char name[16];
            snprintf(name, sizeof name, "p%d", i);
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "name", name);
            cJSON_AddNumberToObject(p, "port", 1 + i % 65535);
            cJSON_AddItemToArray(ports, p);
        }
        assert_int_equal(store_upsert_service(S, o), 0);
        cJSON_Delete(o);
        store_read_begin();
        const st_service *svc = store_service(S, "ns", "big");
        assert_non_null(svc);
        int want = counts[k] > 65535 ? 65535 : counts[k];
        assert_int_equal(svc->nports, want);
        char last[16];
        snprintf(last, sizeof last, "p%d", want - 1);
        assert_string_equal(svc->ports[want - 1].name, last);
        assert_string_equal(svc->ports[1000].name, "p1000");
        assert_int_equal(svc->ports[9999].port, 10000);
        store_read_end();
    }
}

/* The packed endpoint (store.h): node, zone and hint sets are indexes into
 * tables of their slice, shared by its endpoints; the strings sit at one
 * offset of the slice's pool; the address text is kept only when the slice
 * did not write it as inet_ntop would; a merged view of two slices keeps
 * each endpoint's own slice (name, ports). */
static void test_endpoint_packing(void **state)
{
    (void)state;
    assert_true(sizeof(void *) != 8 || sizeof(st_endpoint) == 24);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"w-1\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"w\"}},"
        "\"addressType\":\"IPv6\",\"endpoints\":["
        "{\"addresses\":[\"FD00:0::1\",\"fd00::2\"],\"nodeName\":\"n1\",\"zone\":\"Z1\",\"hostname\":\"h\","
        "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"pod-a\"},"
        "\"hints\":{\"forZones\":[{\"name\":\"z1\"}]}},"
        "{\"addresses\":[\"fd00::3\"],\"nodeName\":\"n2\",\"zone\":\"z1\","
        "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"pod-b\"},\"hints\":{\"forZones\":[{\"name\":\"z1\"}]}},"
        "{\"addresses\":[\"fd00::4\"],\"nodeName\":\"n1\",\"hints\":{}}],"
        "\"ports\":[{\"name\":\"a\",\"port\":80}]}"), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"w-2\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"w\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.0.0.9\"],\"nodeName\":\"n2\"}],"
        "\"ports\":[{\"name\":\"b\",\"port\":81},{\"name\":\"c\",\"port\":82}]}"), 0);
    store_read_begin();
    const st_endpoints *e = store_endpoints(S, "shop", "w");
    assert_non_null(e);
    assert_int_equal(e->n, 5);
    char abuf[ST_ADDR_STRLEN];
    const st_endpoint *x = e->eps;
    assert_string_equal(st_ep_addr(&x[0], abuf), "FD00:0::1");     /* as written */
    assert_true(x[0].addr_text);
    assert_string_equal(st_ep_addr(&x[1], abuf), "fd00::2");       /* derived */
    assert_false(x[1].addr_text);
    assert_string_equal(st_ep_hostname(&x[0], (char[ST_HOST_STRLEN]){ 0 }), "h");
    assert_string_equal(st_ep_pod(&x[0], (char[ST_HOST_STRLEN]){ 0 }), "pod-a");
    assert_string_equal(st_ep_pod(&x[1], (char[ST_HOST_STRLEN]){ 0 }), "pod-a");
    assert_null(st_ep_hostname(&x[2], (char[ST_HOST_STRLEN]){ 0 }));
    assert_string_equal(st_ep_pod(&x[2], (char[ST_HOST_STRLEN]){ 0 }), "pod-b");
    assert_null(st_ep_pod(&x[3], (char[ST_HOST_STRLEN]){ 0 }));
    assert_string_equal(st_ep_node(&x[0]), "n1");
    assert_ptr_equal(st_ep_node(&x[0]), st_ep_node(&x[3]));        /* one interned name */
    assert_int_equal(x[0].node, x[3].node);                         /* one table entry */
    assert_ptr_equal(st_ep_zone(&x[0]), st_ep_zone(&x[2]));        /* lower-cased, shared */
    assert_null(st_ep_zone(&x[3]));
    assert_int_equal(x[0].hints, x[2].hints);                       /* one hint set */
    assert_int_equal(st_ep_n_hint_zones(&x[2]), 1);
    assert_string_equal(st_ep_hint_zones(&x[2])[0], "z1");
    assert_true(x[3].has_hints);
    assert_int_equal(st_ep_n_hint_zones(&x[3]), 0);
    assert_int_equal(st_ep_n_hint_nodes(&x[3]), 0);
    assert_string_equal(st_ep_slice(&x[0]), "w-1");
    assert_int_equal(st_ep_nports(&x[0]), 1);
    assert_int_equal(st_ep_ports(&x[0])[0].port, 80);
    assert_string_equal(st_ep_slice(&x[4]), "w-2");                /* the merged copy */
    assert_int_equal(st_ep_nports(&x[4]), 2);
    assert_int_equal(st_ep_ports(&x[4])[1].port, 82);
    assert_string_equal(st_ep_addr(&x[4], abuf), "10.0.0.9");
    assert_string_equal(st_ep_node(&x[4]), "n2");
    assert_null(st_ep_hostname(&x[4], (char[ST_HOST_STRLEN]){ 0 }));
    store_read_end();

    /* store_opts.drop_pod_names: no pod names, the rest unchanged */
    store_opts o = { .drop_pod_names = 1 };
    store *keep = S;
    S = store_new(&o);
    assert_non_null(S);
    assert_int_equal(apply(store_upsert_slice, slice_a), 0);
    store_read_begin();
    e = store_endpoints(S, "shop", "db");
    assert_non_null(e);
    assert_string_equal(st_ep_hostname(&e->eps[0], (char[ST_HOST_STRLEN]){ 0 }), "db-0");     /* the hostname stays */
    assert_null(st_ep_pod(&e->eps[0], (char[ST_HOST_STRLEN]){ 0 }));
    assert_string_equal(st_ep_addr(&e->eps[0], abuf), "10.42.1.17");
    assert_string_equal(st_ep_node(&e->eps[0]), "worker-a1");
    store_read_end();
    store_free(S);
    S = keep;

    /* more endpoints than a 16-bit index of the slice's tables holds
     * (DECODE_SLICE_MAX; the API allows 1,000): refused, nothing published */
    cJSON *big = cJSON_Parse("{\"metadata\":{\"name\":\"huge\",\"namespace\":\"shop\","
                             "\"labels\":{\"kubernetes.io/service-name\":\"huge\"}},"
                             "\"addressType\":\"IPv4\",\"endpoints\":[]}");
    assert_non_null(big);
    cJSON *arr = cJSON_GetObjectItem(big, "endpoints");
    for (int i = 0; i < 30001; i++) {
        char a[32];
        nth_addr(a, sizeof a, i);
        cJSON *ep = cJSON_CreateObject(), *addrs = cJSON_AddArrayToObject(ep, "addresses");
        cJSON_AddItemToArray(addrs, cJSON_CreateString(a));
        cJSON_AddItemToArray(arr, ep);
    }
    assert_int_equal(store_upsert_slice(S, big), -1);
    cJSON_DeleteItemFromArray(arr, 0);             /* 30,000: accepted */
    assert_int_equal(store_upsert_slice(S, big), 0);
    cJSON_Delete(big);
    store_read_begin();
    e = store_endpoints(S, "shop", "huge");
    assert_non_null(e);
    assert_int_equal(e->n, 30000);
    store_read_end();
}

/* The endpoint view of ns/svc, which must hold n endpoints (inside a read
 * section). */
static const st_endpoints *eps_n(const char *ns, const char *svc, size_t n)
{
    const st_endpoints *e = store_endpoints(S, ns, svc);
    assert_non_null(e);
    assert_int_equal(e->n, n);
    return e;
}

static int collect_ep(const st_service *svc, const st_endpoint *ep, void *arg)
{
    (void)svc;
    const st_endpoint **out = arg;
    *out = ep;
    return 1;
}

/* The address of an endpoint (st_ep_ip, st_ep_family): an IPv4 one kept in
 * the endpoint, an IPv6 one in its slice's pool; the same bytes as
 * st_parse_ip's of the text, whatever form the slice wrote it in, for
 * single- and dual-stack Services, small views (a pass) and large ones
 * (the sorted by-address index). */
/* A slice's hostnames that share a prefix (a StatefulSet's "web-0",
 * "web-1", ...) keep it once in the slice; every accessor still gives the
 * whole name, beside pod names, IPv6 addresses and addresses as written. */
static void test_slice_hostname_prefix(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"web-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"web\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.1.0.1\"],\"hostname\":\"web-0\",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-0\"}},"
        "{\"addresses\":[\"10.1.0.2\"],\"hostname\":\"web-1\",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"other\"}},"
        "{\"addresses\":[\"10.1.0.3\"],\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-x\"}},"
        "{\"addresses\":[\"10.1.0.4\"],\"hostname\":\"web-12\"}],\"ports\":[]}"), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"db-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db\"}},"
        "\"addressType\":\"IPv6\",\"endpoints\":["
        "{\"addresses\":[\"FD00::1\",\"fd00::2\"],\"hostname\":\"db-0\",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"db-0\"}},"
        "{\"addresses\":[\"fd00::3\"],\"hostname\":\"db-1\"}],\"ports\":[]}"), 0);
    char host300[301];
    memset(host300, 'h', 300);
    host300[300] = '\0';
    char big[1024];
    snprintf(big, sizeof big,
        "{\"metadata\":{\"name\":\"big-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"big\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.2.0.1\"],\"hostname\":\"%s\"},{\"addresses\":[\"10.2.0.2\"],\"hostname\":\"hh\"}],"
        "\"ports\":[]}", host300);
    assert_int_equal(apply(store_upsert_slice, big), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"one-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"one\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.3.0.1\"],\"hostname\":\"solo-0\"}],"
        "\"ports\":[]}"), 0);
    store_read_begin();
    char h[ST_HOST_STRLEN], p[ST_HOST_STRLEN], abuf[ST_ADDR_STRLEN];
    const st_endpoints *e = store_endpoints(S, "shop", "web");
    assert_non_null(e);
    assert_int_equal(e->n, 4);
    assert_int_equal(e->eps[0].sl->hpfx, 4);                    /* "web-" */
    assert_string_equal(st_ep_hostname(&e->eps[0], h), "web-0");
    assert_string_equal(st_ep_pod(&e->eps[0], p), "web-0");     /* the hostname, once */
    assert_true(e->eps[0].pod_is_host);
    assert_string_equal(st_ep_hostname(&e->eps[1], h), "web-1");
    assert_string_equal(st_ep_pod(&e->eps[1], p), "other");
    assert_null(st_ep_hostname(&e->eps[2], h));
    assert_string_equal(st_ep_pod(&e->eps[2], p), "web-x");
    assert_string_equal(st_ep_hostname(&e->eps[3], h), "web-12");
    assert_null(st_ep_pod(&e->eps[3], p));
    assert_string_equal(st_ep_addr(&e->eps[3], abuf), "10.1.0.4");
    e = store_endpoints(S, "shop", "db");
    assert_int_equal(e->n, 3);
    assert_int_equal(e->eps[0].sl->hpfx, 3);                    /* "db-" */
    assert_string_equal(st_ep_hostname(&e->eps[0], h), "db-0");
    assert_string_equal(st_ep_hostname(&e->eps[1], h), "db-0");
    assert_string_equal(st_ep_pod(&e->eps[1], p), "db-0");
    assert_string_equal(st_ep_addr(&e->eps[0], abuf), "FD00::1");   /* as written */
    assert_string_equal(st_ep_addr(&e->eps[1], abuf), "fd00::2");
    assert_string_equal(st_ep_hostname(&e->eps[2], h), "db-1");
    st_ip ip = st_ep_ip(&e->eps[2]);
    assert_int_equal(ip.family, 6);
    assert_int_equal(ip.addr[15], 3);
    e = store_endpoints(S, "shop", "big");                     /* too long to share */
    assert_int_equal(e->eps[0].sl->hpfx, 0);
    assert_string_equal(st_ep_hostname(&e->eps[0], h), host300);
    assert_string_equal(st_ep_hostname(&e->eps[1], h), "hh");
    e = store_endpoints(S, "shop", "one");                     /* one address: nothing to share */
    assert_int_equal(e->eps[0].sl->hpfx, 0);
    assert_string_equal(st_ep_hostname(&e->eps[0], h), "solo-0");
    store_read_end();
}

static void test_endpoint_addresses(void **state)
{
    (void)state;
    apply(store_upsert_service,
          "{\"metadata\":{\"name\":\"ds\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"None\","
          "\"ipFamilies\":[\"IPv4\",\"IPv6\"]}}");
    /* dual-stack: an IPv4 and an IPv6 slice of one Service; an address of
     * the other family in a slice is dropped */
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"ds-4\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"ds\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.1.2.3\",\"fd00::9\"],\"nodeName\":\"n1\",\"hostname\":\"a\"},"
        "{\"addresses\":[\"10.1.2.4\"],\"nodeName\":\"n2\",\"conditions\":{\"ready\":false}}],"
        "\"ports\":[{\"port\":80}]}"), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"ds-6\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"ds\"}},"
        "\"addressType\":\"IPv6\",\"endpoints\":["
        "{\"addresses\":[\"FD00:0:0:0:0:0:0:0A\",\"10.1.2.5\"],\"nodeName\":\"n1\",\"hostname\":\"a\","
        "\"targetRef\":{\"kind\":\"Pod\",\"name\":\"pod-a\"}},"
        "{\"addresses\":[\"fd00:0000::b\",\"::ffff:10.1.2.3\",\"2001:db8::\"],\"nodeName\":\"n2\"}],"
        "\"ports\":[{\"port\":80}]}"), 0);
    store_read_begin();
    const st_endpoints *e = eps_n("shop", "ds", 6);
    static const struct { const char *canon, *text; int family; const char *node; } want[] = {
        { "10.1.2.3", "10.1.2.3", 4, "n1" },
        { "10.1.2.4", "10.1.2.4", 4, "n2" },
        { "fd00::a", "FD00:0:0:0:0:0:0:0A", 6, "n1" },
        { "fd00::b", "fd00:0000::b", 6, "n2" },
        { "::ffff:10.1.2.3", "::ffff:10.1.2.3", 6, "n2" },
        { "2001:db8::", "2001:db8::", 6, "n2" },
    };
    char abuf[ST_ADDR_STRLEN];
    for (size_t i = 0; i < 6; i++) {
        const st_endpoint *ep = &e->eps[i];
        st_ip got = st_ep_ip(ep), exp = ip(want[i].canon);
        assert_int_equal(st_ep_family(ep), want[i].family);
        assert_memory_equal(&got, &exp, sizeof exp);      /* unused octets zero too */
        assert_string_equal(st_ep_addr(ep, abuf), want[i].text);   /* as written */
        assert_int_equal(ep->addr_text, strcmp(want[i].canon, want[i].text) != 0);
        assert_string_equal(st_ep_node(ep), want[i].node);
    }
    assert_string_equal(st_ep_hostname(&e->eps[2], (char[ST_HOST_STRLEN]){ 0 }), "a");  /* strings beside the address */
    assert_string_equal(st_ep_pod(&e->eps[2], (char[ST_HOST_STRLEN]){ 0 }), "pod-a");
    assert_null(st_ep_hostname(&e->eps[3], (char[ST_HOST_STRLEN]){ 0 }));
    /* the PTR indexes find each family by its canonical bytes */
    const st_endpoint *hit = NULL;
    st_ip q = ip("fd00::a");
    store_endpoints_by_ip(S, &q, collect_ep, &hit);
    assert_ptr_equal(hit, &e->eps[2]);
    assert_string_equal(store_endpoint_node(S, &q), "n1");
    q = ip("::ffff:10.1.2.3");                              /* not the IPv4 10.1.2.3 */
    hit = NULL;
    store_endpoints_by_ip(S, &q, collect_ep, &hit);
    assert_ptr_equal(hit, &e->eps[4]);
    q = ip("10.1.2.3");
    hit = NULL;
    store_endpoints_by_ip(S, &q, collect_ep, &hit);
    assert_ptr_equal(hit, &e->eps[0]);
    q = ip("10.1.2.4");                                     /* not ready: not indexed */
    hit = NULL;
    store_endpoints_by_ip(S, &q, collect_ep, &hit);
    assert_null(hit);
    q = ip("fd00::9");                                      /* dropped from the IPv4 slice */
    assert_null(store_endpoint_node(S, &q));
    store_read_end();

    /* a large IPv6 view (the by-address index, binary search) */
    char j[8192];
    int at = snprintf(j, sizeof j,
        "{\"metadata\":{\"name\":\"big-6\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"big\"}},"
        "\"addressType\":\"IPv6\",\"endpoints\":[");
    for (int i = 0; i < 100; i++)
        at += snprintf(j + at, sizeof j - at, "%s{\"addresses\":[\"fd01:0::%X\"],\"nodeName\":\"n%d\"}",
                       i ? "," : "", 99 - i, i % 7);
    snprintf(j + at, sizeof j - at, "],\"ports\":[{\"port\":80}]}");
    apply(store_upsert_service,
          "{\"metadata\":{\"name\":\"big\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"None\"}}");
    assert_int_equal(apply(store_upsert_slice, j), 0);
    store_read_begin();
    e = eps_n("shop", "big", 100);
    for (int i = 0; i < 100; i++) {
        char a[32];
        snprintf(a, sizeof a, "fd01::%x", 99 - i);
        q = ip(a);
        hit = NULL;
        store_endpoints_by_ip(S, &q, collect_ep, &hit);
        assert_ptr_equal(hit, &e->eps[i]);
        char node[8];
        snprintf(node, sizeof node, "n%d", i % 7);
        assert_string_equal(store_endpoint_node(S, &q), node);
        snprintf(a, sizeof a, "fd01:0::%X", 99 - i);          /* as written */
        assert_string_equal(st_ep_addr(&e->eps[i], abuf), a);
    }
    q = ip("fd01::100");
    assert_null(store_endpoint_node(S, &q));
    store_read_end();
}

/* decode_slice reads an endpoint's members in one pass: the first member
 * of a name wins (as a lookup by name would find it), a member of the wrong
 * type reads as absent, names sharing a first letter or a prefix are told
 * apart, unknown members are skipped. */
static void test_endpoint_members(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"m-1\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"m\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"zoneX\":\"zx\",\"nodeName\":\"n1\",\"nodeName\":\"n2\",\"addresses\":[\"10.9.0.1\"],"
        "\"addresses\":[\"10.9.0.2\"],\"hostname\":5,\"hints\":{\"forZones\":[{\"name\":\"z1\"}],"
        "\"forZones\":[{\"name\":\"z2\"}],\"forNodesX\":[{\"name\":\"x\"}]},"
        "\"conditions\":{\"ready\":false,\"ready\":true,\"readyX\":true,\"serving\":\"no\","
        "\"terminating\":true},\"conditionsX\":{\"terminating\":false},"
        "\"targetRef\":{\"name\":\"p1\",\"kind\":\"Pod\",\"kind\":\"Node\"},"
        "\"deprecatedTopology\":{\"a\":\"b\"},\"zone\":\"Z9\"},"
        "{\"addresses\":[\"10.9.0.3\"],\"hostname\":\"h3\",\"targetRef\":{\"kind\":\"Pod\",\"name\":\"h3\"},"
        "\"conditions\":{}}],"
        "\"ports\":[{\"port\":80}]}"), 0);
    store_read_begin();
    const st_endpoints *e = eps_n("shop", "m", 2);
    const st_endpoint *x = e->eps;
    char abuf[ST_ADDR_STRLEN];
    assert_string_equal(st_ep_addr(&x[0], abuf), "10.9.0.1");
    assert_string_equal(st_ep_node(&x[0]), "n1");
    assert_string_equal(st_ep_zone(&x[0]), "z9");
    assert_null(st_ep_hostname(&x[0], (char[ST_HOST_STRLEN]){ 0 }));                    /* not a string */
    assert_int_equal(st_ep_n_hint_zones(&x[0]), 1);
    assert_string_equal(st_ep_hint_zones(&x[0])[0], "z1");
    assert_int_equal(st_ep_n_hint_nodes(&x[0]), 0);
    assert_false(x[0].ready);
    assert_false(x[0].ready_unset);
    assert_true(x[0].serving);                              /* not a boolean: the default */
    assert_true(x[0].terminating);
    assert_string_equal(st_ep_pod(&x[0], (char[ST_HOST_STRLEN]){ 0 }), "p1");            /* kind Pod, the first */
    assert_string_equal(st_ep_addr(&x[1], abuf), "10.9.0.3");
    assert_string_equal(st_ep_hostname(&x[1], (char[ST_HOST_STRLEN]){ 0 }), "h3");
    assert_true(x[1].pod_is_host);
    assert_true(x[1].ready);
    assert_true(x[1].ready_unset);
    assert_false(x[1].terminating);
    assert_false(x[1].has_hints);
    store_read_end();
}

static void test_slices_merge_and_defaults(void **state)
{
    assert_int_equal(apply(store_upsert_slice, slice_a), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"db-b\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db\"}},"
        "\"addressType\":\"IPv6\",\"endpoints\":[{\"addresses\":[\"fd00::1\"]}],\"ports\":null}"), 0);
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"db-c\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":null,\"ports\":[]}"), 0);
    store_read_begin();
    const st_endpoints *e = store_endpoints(S, "shop", "db");
    assert_non_null(e);
    assert_int_equal(e->n, 4);
    const st_endpoint *ep = &e->eps[0];
    char abuf[ST_ADDR_STRLEN];
    assert_string_equal(st_ep_addr(ep, abuf), "10.42.1.17");
    assert_string_equal(st_ep_hostname(ep, (char[ST_HOST_STRLEN]){ 0 }), "db-0");
    assert_string_equal(st_ep_pod(ep, (char[ST_HOST_STRLEN]){ 0 }), "db-0");
    assert_string_equal(st_ep_node(ep), "worker-a1");
    assert_string_equal(st_ep_zone(ep), "eu-west-1a");          /* lower-cased */
    assert_int_equal(st_ep_n_hint_zones(ep), 1);
    assert_string_equal(st_ep_hint_nodes(ep)[0], "worker-a1");
    assert_true(ep->ready);
    assert_int_equal(st_ep_ports(ep)[0].port, 5432);
    assert_false(e->eps[1].ready);
    assert_true(e->eps[1].terminating);
    assert_true(e->eps[2].ready);                           /* null → ready */
    assert_false(e->eps[2].has_hints);
    assert_int_equal(st_ep_family(&e->eps[3]), 6);
    st_ip v6 = st_ep_ip(&e->eps[3]), want = ip("fd00::1");
    assert_memory_equal(&v6, &want, sizeof want);
    assert_int_equal(st_ep_nports(&e->eps[3]), 1);                  /* sentinel */
    assert_int_equal(st_ep_ports(&e->eps[3])[0].port, -1);
    store_read_end();
}

static int count_svc(const st_service *svc, void *arg)
{
    (*(int *)arg)++;
    return 0;
}

static int count_ep(const st_service *svc, const st_endpoint *ep, void *arg)
{
    (*(int *)arg)++;
    return 0;
}

static void test_ptr_indexes(void **state)
{
    apply(store_upsert_service,
          "{\"metadata\":{\"name\":\"db\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"None\"}}");
    apply(store_upsert_service,
          "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"10.96.0.5\"}}");
    apply(store_upsert_slice, slice_a);
    int n = 0;
    st_ip a = ip("10.96.0.5"), b = ip("10.42.1.17"), c = ip("10.42.7.5");
    store_read_begin();
    store_services_by_ip(S, &a, count_svc, &n);
    assert_int_equal(n, 1);
    n = 0;
    store_endpoints_by_ip(S, &b, count_ep, &n);
    assert_int_equal(n, 1);
    n = 0;
    store_endpoints_by_ip(S, &c, count_ep, &n);             /* not ready */
    assert_int_equal(n, 0);
    store_read_end();
    /* the service changes its IP: the old one is gone from the index */
    apply(store_upsert_service,
          "{\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"10.96.0.6\"}}");
    n = 0;
    store_read_begin();
    store_services_by_ip(S, &a, count_svc, &n);
    store_read_end();
    assert_int_equal(n, 0);
    del("endpointslices", slice_a);
    n = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &b, count_ep, &n);
    assert_null(store_endpoints(S, "shop", "db"));
    store_read_end();
    assert_int_equal(n, 0);
}

/* A service's cluster IPs through every shape of change (one IP, the same
 * one again, two, one of them, none, gone): the PTR index follows each, with
 * no stale entry (the writer keeps a single IP in the service's own block). */
static void test_ptr_cluster_ip_changes(void **state)
{
    static const char *const specs[] = {
        "{\"clusterIP\":\"10.96.1.1\"}",
        "{\"clusterIP\":\"10.96.1.1\",\"ports\":[{\"port\":80}]}",
        "{\"clusterIP\":\"10.96.1.1\",\"clusterIPs\":[\"10.96.1.1\",\"fd00::11\"]}",
        "{\"clusterIP\":\"fd00::11\",\"clusterIPs\":[\"fd00::11\",\"fd00::11\"]}",
        "{\"clusterIP\":\"None\"}",
        "{\"clusterIP\":\"10.96.1.2\"}",
    };
    /* per step: is 10.96.1.1, fd00::11, 10.96.1.2 indexed */
    static const int want[][3] = { { 1, 0, 0 }, { 1, 0, 0 }, { 1, 1, 0 },
                                   { 0, 1, 0 }, { 0, 0, 0 }, { 0, 0, 1 } };
    st_ip ips[3] = { ip("10.96.1.1"), ip("fd00::11"), ip("10.96.1.2") };
    char j[512];
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"api\",\"namespace\":\"shop\"},"
                 "\"spec\":%s}", specs[i]);
        apply(store_upsert_service, j);
        store_read_begin();
        for (int k = 0; k < 3; k++) {
            int n = 0;
            store_services_by_ip(S, &ips[k], count_svc, &n);
            assert_int_equal(n, want[i][k]);
        }
        store_read_end();
    }
    del("services", j);
    store_read_begin();
    int n = 0;
    store_services_by_ip(S, &ips[2], count_svc, &n);
    assert_int_equal(n, 0);
    assert_null(store_service(S, "shop", "api"));
    store_read_end();
}

/* Two services with an endpoint on the same IP: the PTR index holds both,
 * and loses exactly the one whose endpoint went away (or became unready). */
static void test_ptr_index_shared_ip(void **state)
{
    static const char *fmt =
        "{\"metadata\":{\"name\":\"%s-a\",\"namespace\":\"shop\",\"labels\":"
        "{\"kubernetes.io/service-name\":\"%s\"}},\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.50.0.1\"],\"conditions\":{\"ready\":%s}},{\"addresses\":[\"10.50.0.%d\"]}]}";
    char j[512];
    const char *svcs[] = { "alpha", "beta" };
    for (int i = 0; i < 2; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"shop\"},"
                 "\"spec\":{\"clusterIP\":\"None\"}}", svcs[i]);
        apply(store_upsert_service, j);
        snprintf(j, sizeof j, fmt, svcs[i], svcs[i], "true", 2 + i);
        apply(store_upsert_slice, j);
    }
    st_ip shared = ip("10.50.0.1"), only_b = ip("10.50.0.3");
    int n = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &shared, count_ep, &n);
    store_read_end();
    assert_int_equal(n, 2);
    snprintf(j, sizeof j, fmt, "alpha", "alpha", "false", 2);      /* alpha's goes unready */
    apply(store_upsert_slice, j);
    n = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &shared, count_ep, &n);
    store_read_end();
    assert_int_equal(n, 1);
    snprintf(j, sizeof j, fmt, "beta", "beta", "true", 3);
    del("endpointslices", j);
    n = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &shared, count_ep, &n);
    store_endpoints_by_ip(S, &only_b, count_ep, &n);
    store_read_end();
    assert_int_equal(n, 0);
}

static int name_svc(const st_service *svc, void *arg)
{
    snprintf(arg, 64, "%s/%s", svc->ns, svc->name);
    return 0;
}

static int name_ep_svc(const st_service *svc, const st_endpoint *ep, void *arg)
{
    (void)ep;
    return name_svc(svc, arg);
}

/* A Service's cluster IP and its ready endpoint addresses share one
 * one-service PTR list, whichever of the Service and its slices comes
 * first and goes first: each index names the Service while it has it, and
 * loses it exactly when it should. */
static void test_ptr_list_both_orders(void **state)
{
    static const char svc[] =
        "{\"metadata\":{\"name\":\"one\",\"namespace\":\"shop\"},\"spec\":{\"clusterIP\":\"10.96.2.1\"}}";
    static const char sl[] =
        "{\"metadata\":{\"name\":\"one-a\",\"namespace\":\"shop\",\"labels\":"
        "{\"kubernetes.io/service-name\":\"one\"}},\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.60.0.1\"],\"nodeName\":\"n1\"}]}";
    st_ip cip = ip("10.96.2.1"), eip = ip("10.60.0.1");
    for (int order = 0; order < 2; order++) {
        if (order == 0) {
            apply(store_upsert_service, svc);
            apply(store_upsert_slice, sl);
        } else {
            apply(store_upsert_slice, sl);
            apply(store_upsert_service, svc);
        }
        char a[64] = "", b[64] = "";
        store_read_begin();
        store_services_by_ip(S, &cip, name_svc, a);
        store_endpoints_by_ip(S, &eip, name_ep_svc, b);
        assert_string_equal(store_endpoint_node(S, &eip), "n1");
        store_read_end();
        assert_string_equal(a, "shop/one");
        assert_string_equal(b, "shop/one");
        if (order == 0) {           /* the Service goes first: its slice still locates */
            del("services", svc);
            store_read_begin();
            a[0] = '\0';
            store_services_by_ip(S, &cip, name_svc, a);
            assert_string_equal(a, "");
            assert_string_equal(store_endpoint_node(S, &eip), "n1");
            store_read_end();
            del("endpointslices", sl);
        } else {                    /* the slice goes first: the cluster IP stays */
            del("endpointslices", sl);
            store_read_begin();
            assert_null(store_endpoint_node(S, &eip));
            a[0] = '\0';
            store_services_by_ip(S, &cip, name_svc, a);
            assert_string_equal(a, "shop/one");
            store_read_end();
            del("services", svc);
        }
        store_read_begin();
        a[0] = b[0] = '\0';
        store_services_by_ip(S, &cip, name_svc, a);
        store_endpoints_by_ip(S, &eip, name_ep_svc, b);
        assert_null(store_endpoint_node(S, &eip));
        store_read_end();
        assert_string_equal(a, "");
        assert_string_equal(b, "");
    }
}

static void test_slice_moves_service(void **state)
{
    apply(store_upsert_slice, slice_a);
    apply(store_upsert_slice,
          "{\"metadata\":{\"name\":\"db-a\",\"namespace\":\"shop\",\"labels\":{\"kubernetes.io/service-name\":\"db2\"}},"
          "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[\"10.0.0.9\"]}]}");
    store_read_begin();
    assert_null(store_endpoints(S, "shop", "db"));
    assert_int_equal(store_endpoints(S, "shop", "db2")->n, 1);
    store_read_end();
}

static void test_pods_index(void **state)
{
    apply(store_upsert_pod,
          "{\"metadata\":{\"name\":\"old\",\"namespace\":\"a\",\"deletionTimestamp\":\"2026-01-01T00:00:00Z\"},"
          "\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\",\"podIP\":\"10.1.0.5\"}}");
    apply(store_upsert_pod,
          "{\"metadata\":{\"name\":\"new\",\"namespace\":\"b\"},\"spec\":{\"nodeName\":\"n2\"},"
          "\"status\":{\"phase\":\"Running\",\"podIPs\":[{\"ip\":\"10.1.0.5\"},{\"ip\":\"fd00::5\"}]}}");
    apply(store_upsert_pod,
          "{\"metadata\":{\"name\":\"hn\",\"namespace\":\"a\"},\"spec\":{\"nodeName\":\"n1\",\"hostNetwork\":true},"
          "\"status\":{\"phase\":\"Running\",\"podIP\":\"192.168.0.1\"}}");
    apply(store_upsert_pod,
          "{\"metadata\":{\"name\":\"done\",\"namespace\":\"a\"},\"spec\":{\"nodeName\":\"n1\"},"
          "\"status\":{\"phase\":\"Succeeded\",\"podIP\":\"10.1.0.9\"}}");
    st_ip a = ip("10.1.0.5"), a6 = ip("fd00::5"), h = ip("192.168.0.1"), d = ip("10.1.0.9");
    store_read_begin();
    const st_pod *p = store_pod_by_ip(S, &a);
    assert_non_null(p);
    assert_string_equal(p->name, "new");                    /* running beats terminating */
    assert_string_equal(p->node_name, "n2");
    assert_string_equal(store_pod_by_ip(S, &a6)->name, "new");
    assert_null(store_pod_by_ip(S, &h));                   /* hostNetwork */
    assert_null(store_pod_by_ip(S, &d));                   /* terminal */
    store_read_end();
    del("pods", "{\"metadata\":{\"name\":\"new\",\"namespace\":\"b\"}}");
    store_read_begin();
    assert_string_equal(store_pod_by_ip(S, &a)->name, "old");
    assert_null(store_pod_by_ip(S, &a6));
    store_read_end();
}

/* pod(name, phase, ip): a pod in namespace "r" on node n1 */
static void pod_at(const char *name, const char *phase, const char *addr)
{
    char j[512];
    snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"r\"},\"spec\":{\"nodeName\":\"n1\"},"
             "\"status\":{\"phase\":\"%s\",\"podIP\":\"%s\"}}", name, phase, addr);
    apply(store_upsert_pod, j);
}

static const char *pod_name_at(const char *addr)
{
    static char out[64];
    st_ip a = ip(addr);
    store_read_begin();
    const st_pod *p = store_pod_by_ip(S, &a);
    snprintf(out, sizeof out, "%s", p ? p->name : "-");
    store_read_end();
    return out;
}

/* store_version() (what memoised answers are validated by) moves with
 * every write readers may see — each kind's upsert and removal, and the
 * removals a relist makes — and not with a skipped object. */
static void test_version_moves(void **state)
{
    (void)state;
    uint64_t v = store_version(S);
#define MOVES(stmt) do { stmt; uint64_t nv = store_version(S); \
        assert_true(nv > v); v = nv; } while (0)
    MOVES(apply(store_upsert_namespace, "{\"metadata\":{\"name\":\"a\"}}"));
    MOVES(apply(store_upsert_node, "{\"metadata\":{\"name\":\"n1\"}}"));
    MOVES(pod_at("p1", "Running", "10.7.0.1"));
    MOVES(pod_at("p2", "Running", "10.7.0.2"));
    MOVES(apply(store_upsert_service, "{\"metadata\":{\"name\":\"s\",\"namespace\":\"a\"},"
                "\"spec\":{\"clusterIP\":\"10.96.0.9\",\"ports\":[{\"port\":80}]}}"));
    MOVES(apply(store_upsert_slice, "{\"metadata\":{\"name\":\"s-1\",\"namespace\":\"a\","
                "\"labels\":{\"kubernetes.io/service-name\":\"s\"}},\"addressType\":\"IPv4\","
                "\"endpoints\":[{\"addresses\":[\"10.7.0.1\"]}]}"));
    MOVES(del("pods", "{\"metadata\":{\"name\":\"p1\",\"namespace\":\"r\"}}"));
    MOVES(del("endpointslices", "{\"metadata\":{\"name\":\"s-1\",\"namespace\":\"a\"}}"));
    MOVES(del("services", "{\"metadata\":{\"name\":\"s\",\"namespace\":\"a\"}}"));
    /* a relist that no longer lists p2: its removal moves the version */
    store_relist_begin(S, "pods");
    pod_at("p3", "Running", "10.7.0.3");
    v = store_version(S);
    MOVES(store_relist_end(S, "pods"));
    assert_string_equal(pod_name_at("10.7.0.2"), "-");
    /* a bad object changes nothing */
    assert_int_equal(apply(store_upsert_pod, "{}"), -1);
    assert_true(store_version(S) == v);
#undef MOVES
}

/* IP reuse: three pods on one IP, updates that change rank or IP, deletes
 * in every order, and a relist that drops pods; the best answering pod is
 * always the one published. */
static void test_pods_shared_ip(void **state)
{
    pod_at("a", "Pending", "10.2.0.1");
    assert_string_equal(pod_name_at("10.2.0.1"), "a");
    pod_at("b", "Running", "10.2.0.1");
    pod_at("c", "Pending", "10.2.0.1");
    assert_string_equal(pod_name_at("10.2.0.1"), "b");      /* running beats pending */
    pod_at("b", "Succeeded", "10.2.0.1");                   /* finished: not indexed */
    const char *n = pod_name_at("10.2.0.1");               /* either pending pod */
    assert_true(strcmp(n, "a") == 0 || strcmp(n, "c") == 0);
    pod_at("c", "Running", "10.2.0.1");
    assert_string_equal(pod_name_at("10.2.0.1"), "c");
    pod_at("c", "Running", "10.2.0.2");                     /* moved to another IP */
    assert_string_equal(pod_name_at("10.2.0.2"), "c");
    assert_string_equal(pod_name_at("10.2.0.1"), "a");
    del("pods", "{\"metadata\":{\"name\":\"a\",\"namespace\":\"r\"}}");
    assert_string_equal(pod_name_at("10.2.0.1"), "-");      /* b finished, a gone */
    pod_at("b", "Running", "10.2.0.1");                     /* back (a restart) */
    assert_string_equal(pod_name_at("10.2.0.1"), "b");
    pod_at("d", "Running", "10.2.0.2");
    del("pods", "{\"metadata\":{\"name\":\"c\",\"namespace\":\"r\"}}");
    assert_string_equal(pod_name_at("10.2.0.2"), "d");
    /* a relist that only has d: b disappears, d stays */
    store_relist_begin(S, "pods");
    pod_at("d", "Running", "10.2.0.2");
    store_relist_end(S, "pods");
    assert_string_equal(pod_name_at("10.2.0.1"), "-");
    assert_string_equal(pod_name_at("10.2.0.2"), "d");
    assert_int_equal(store_count(S, "pods"), 1);
}

static void test_nodes(void **state)
{
    apply(store_upsert_node,
          "{\"metadata\":{\"name\":\"worker-a1\",\"labels\":{\"kubernetes.io/hostname\":\"worker-a1\","
          "\"topology.kubernetes.io/zone\":\"eu-west-1a\",\"topology.kubernetes.io/region\":\"eu-west-1\","
          "\"node-role.kubernetes.io/control-plane\":\"\"}},"
          "\"status\":{\"allocatable\":{\"cpu\":\"3500m\"},\"addresses\":[{\"type\":\"InternalIP\","
          "\"address\":\"10.0.1.17\"},{\"type\":\"Hostname\",\"address\":\"worker-a1\"}],"
          "\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}");
    st_ip a = ip("10.0.1.17");
    store_read_begin();
    const st_node *n = store_node(S, "worker-a1");
    assert_non_null(n);
    assert_string_equal(n->zone, "eu-west-1a");
    assert_string_equal(n->region, "eu-west-1");
    assert_int_equal(n->cpu_milli, 3500);
    assert_true(n->ready);
    assert_true(n->control_plane);
    assert_int_equal(n->naddrs, 1);
    assert_string_equal(st_node_label(n, "kubernetes.io/hostname"), "worker-a1");
    assert_null(st_node_label(n, "nope"));
    assert_ptr_equal(store_node_by_addr(S, &a), n);
    store_read_end();
    /* relabelled: readers see the new zone */
    apply(store_upsert_node,
          "{\"metadata\":{\"name\":\"worker-a1\",\"labels\":{\"topology.kubernetes.io/zone\":\"eu-west-1b\"}},"
          "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.1.18\"}]}}");
    store_read_begin();
    assert_string_equal(store_node(S, "worker-a1")->zone, "eu-west-1b");
    assert_null(store_node_by_addr(S, &a));
    store_read_end();
}

static void test_relist_reconciles(void **state)
{
    apply(store_upsert_namespace, "{\"metadata\":{\"name\":\"a\"}}");
    apply(store_upsert_namespace, "{\"metadata\":{\"name\":\"b\",\"labels\":{\"team\":\"x\"}}}");
    store_relist_begin(S, "namespaces");
    apply(store_upsert_namespace, "{\"metadata\":{\"name\":\"b\"}}");
    /* during the relist, a is still served */
    store_read_begin();
    assert_non_null(store_namespace(S, "a"));
    store_read_end();
    apply(store_upsert_namespace, "{\"metadata\":{\"name\":\"c\"}}");
    store_relist_end(S, "namespaces");
    store_read_begin();
    assert_null(store_namespace(S, "a"));
    assert_non_null(store_namespace(S, "b"));
    assert_int_equal(store_namespace(S, "b")->nlabels, 0);
    assert_non_null(store_namespace(S, "c"));
    store_read_end();
    assert_int_equal(store_count(S, "namespaces"), 2);
}

/* The PTR index during a relist of EndpointSlices and the cluster-IP
 * index during one of Services: readers see the addresses the relist adds
 * only at its end, then every service of a shared address (the writer
 * merged them while the index was held); an address the relist drops
 * is gone at the end. */
static void test_relist_publishes_addresses_at_end(void **state)
{
    (void)state;
    static const char *fmt =
        "{\"metadata\":{\"name\":\"%s-a\",\"namespace\":\"shop\",\"labels\":"
        "{\"kubernetes.io/service-name\":\"%s\"}},\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"10.60.0.1\"],\"conditions\":{\"ready\":true}},"
        "{\"addresses\":[\"10.60.0.%d\"],\"conditions\":{\"ready\":true}}]}";
    char j[512];
    const char *svcs[] = { "alpha", "beta" };
    snprintf(j, sizeof j, fmt, "old", "old", 9);
    apply(store_upsert_slice, j);
    st_ip shared = ip("10.60.0.1"), only_b = ip("10.60.0.3"), old9 = ip("10.60.0.9");
    store_relist_begin(S, "services");
    store_relist_begin(S, "endpointslices");
    for (int i = 0; i < 2; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"shop\"},"
                 "\"spec\":{\"clusterIP\":\"10.96.0.%d\"}}", svcs[i], 10 + i);
        apply(store_upsert_service, j);
        snprintf(j, sizeof j, fmt, svcs[i], svcs[i], 2 + i);
        apply(store_upsert_slice, j);
    }
    st_ip cip = ip("10.96.0.10");
    int n = 0, c = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &only_b, count_ep, &n);
    store_services_by_ip(S, &cip, count_svc, &c);
    store_read_end();
    assert_int_equal(n, 0);                         /* not yet */
    assert_int_equal(c, 0);
    store_relist_end(S, "services");
    store_read_begin();
    store_services_by_ip(S, &cip, count_svc, &c);
    store_read_end();
    assert_int_equal(c, 1);
    store_relist_end(S, "endpointslices");
    n = 0;
    store_read_begin();
    store_endpoints_by_ip(S, &shared, count_ep, &n);
    assert_int_equal(n, 2);                         /* alpha's and beta's */
    n = 0;
    store_endpoints_by_ip(S, &only_b, count_ep, &n);
    assert_int_equal(n, 1);
    n = 0;
    store_endpoints_by_ip(S, &old9, count_ep, &n);  /* not relisted: gone */
    assert_int_equal(n, 0);
    store_read_end();
}

/* Services through their writer records (the head of each Service's map
 * entry): many of them (the table grows, chains form), each updated in
 * place (the new block takes the old one's place), then a relist that
 * lists only the even ones (with a new cluster IP): the odd ones are gone
 * from every index, the even ones are found with their new address, and a
 * removal by name takes one more. */
static void test_service_records_relist(void **state)
{
    enum { N = 300 };
    char j[512];
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < N; i++) {
            snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"s%d\",\"namespace\":\"ns%d\"},"
                     "\"spec\":{\"clusterIP\":\"10.97.%d.%d\",\"ports\":[{\"port\":%d}]}}",
                     i, i % 7, i >> 8, i & 255, 80 + round);
            assert_int_equal(apply(store_upsert_service, j), 0);
        }
    assert_int_equal(store_count(S, "services"), N);
    store_relist_begin(S, "services");
    for (int i = 0; i < N; i += 2) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"s%d\",\"namespace\":\"ns%d\"},"
                 "\"spec\":{\"clusterIP\":\"10.98.%d.%d\"}}", i, i % 7, i >> 8, i & 255);
        assert_int_equal(apply(store_upsert_service, j), 0);
    }
    store_relist_end(S, "services");
    assert_int_equal(store_count(S, "services"), N / 2);
    store_read_begin();
    for (int i = 0; i < N; i++) {
        char name[16], ns[16], a[32];
        snprintf(name, sizeof name, "s%d", i);
        snprintf(ns, sizeof ns, "ns%d", i % 7);
        const st_service *svc = store_service(S, ns, name);
        snprintf(a, sizeof a, "10.97.%d.%d", i >> 8, i & 255);
        st_ip old = ip(a);
        snprintf(a, sizeof a, "10.98.%d.%d", i >> 8, i & 255);
        st_ip now = ip(a);
        int n_old = 0, n_now = 0;
        store_services_by_ip(S, &old, count_svc, &n_old);
        store_services_by_ip(S, &now, count_svc, &n_now);
        assert_int_equal(n_old, 0);
        if (i % 2) {
            assert_null(svc);
            assert_int_equal(n_now, 0);
            continue;
        }
        assert_non_null(svc);
        assert_string_equal(svc->name, name);
        assert_string_equal(svc->ns, ns);
        assert_int_equal(svc->nports, 0);
        assert_int_equal(n_now, 1);
    }
    store_read_end();
    del("services", "{\"metadata\":{\"name\":\"s0\",\"namespace\":\"ns0\"}}");
    assert_int_equal(store_count(S, "services"), N / 2 - 1);
    store_read_begin();
    assert_null(store_service(S, "ns0", "s0"));
    assert_non_null(store_service(S, "ns2", "s2"));
    store_read_end();
}

static void test_bad_objects_skipped(void **state)
{
    assert_int_equal(apply(store_upsert_service, "{\"metadata\":{\"name\":\"x\"}}"), -1);
    assert_int_equal(apply(store_upsert_service,
                           "{\"metadata\":{\"name\":\"x\",\"namespace\":\"y\"},\"spec\":5}"), -1);
    assert_int_equal(apply(store_upsert_slice,
                           "{\"metadata\":{\"name\":\"s\",\"namespace\":\"y\"},\"endpoints\":7}"), -1);
    assert_int_equal(apply(store_upsert_pod, "{}"), -1);
    assert_int_equal(apply(store_upsert_node, "[]"), -1);
    /* odd but survivable: addresses not strings, ports without numbers */
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"s\",\"namespace\":\"y\",\"labels\":{\"kubernetes.io/service-name\":\"z\"}},"
        "\"addressType\":\"IPv4\",\"endpoints\":[{\"addresses\":[5,\"not-an-ip\",\"fd00::1\",\"10.0.0.1\"]}],"
        "\"ports\":[{\"name\":\"p\"}]}"), 0);
    store_read_begin();
    const st_endpoints *e = store_endpoints(S, "y", "z");
    assert_int_equal(e->n, 1);                              /* only the IPv4 address */
    assert_int_equal(st_ep_ports(&e->eps[0])[0].port, -1);
    store_read_end();
    assert_int_equal(store_count(S, "services"), 0);
}

/* ---- numbers from the API: range-checked, never converted out of range --- */

/* A Service with one port whose "port" member is the JSON text num. */
static int service_port(const char *num)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\"spec\":{\"clusterIP\":"
             "\"10.96.0.9\",\"ports\":[{\"name\":\"a\",\"port\":%s}]}}", num);
    return apply(store_upsert_service, json);
}

/* A slice of service "sv" with ports a (port a_num) and b (port 53). */
static int slice_port(const char *a_num)
{
    char json[512];
    snprintf(json, sizeof json,
             "{\"metadata\":{\"name\":\"sl\",\"namespace\":\"n\",\"labels\":"
             "{\"kubernetes.io/service-name\":\"sv\"}},\"addressType\":\"IPv4\","
             "\"endpoints\":[{\"addresses\":[\"10.1.0.1\"]}],"
             "\"ports\":[{\"name\":\"a\",\"port\":%s},{\"name\":\"b\",\"port\":53}]}", a_num);
    return apply(store_upsert_slice, json);
}

/* The object of json with member key of its first element of array arr
 * (under spec when spec) set to the number v: values JSON text cannot
 * carry (NaN) but a decoder must still refuse. */
static int with_number(int (*fn)(store *, const cJSON *), const char *json, int spec,
                       const char *arr, const char *key, double v)
{
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    cJSON *parent = spec ? cJSON_GetObjectItemCaseSensitive(o, "spec") : o;
    cJSON *item = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(parent, arr), 0);
    assert_non_null(item);
    cJSON_ReplaceItemInObjectCaseSensitive(item, key, cJSON_CreateNumber(v));
    int rc = fn(S, o);
    cJSON_Delete(o);
    return rc;
}

/* Regression (UBSan, found by fuzz_store): a float, huge, negative or NaN
 * port was cast to int32_t. The API server validates Service ports as
 * integers in 1..65535, so a Service with anything else did not come from
 * it and is skipped as a whole. */
static void test_service_port_range(void **state)
{
    static const char *const bad[] = { "80.5", "0", "-1", "65536", "70000", "-1e300", "1e300",
                                       "4294967376", "2147483648" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (service_port(bad[i]) != -1)
            fail_msg("Service port %s accepted", bad[i]);
    assert_int_equal(store_count(S, "services"), 0);
    const char *good = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},\"spec\":"
                       "{\"clusterIP\":\"10.96.0.9\",\"ports\":[{\"port\":1}]}}";
    assert_int_equal(with_number(store_upsert_service, good, 1, "ports", "port", NAN), -1);
    assert_int_equal(with_number(store_upsert_service, good, 1, "ports", "port", INFINITY), -1);
    assert_int_equal(service_port("65535"), 0);
    assert_int_equal(service_port("1"), 0);
    store_read_begin();
    const st_service *s = store_service(S, "n", "p");
    assert_non_null(s);
    assert_int_equal(s->nports, 1);
    assert_int_equal(s->ports[0].port, 1);
    store_read_end();
}

/* EndpointSlice ports are int32 in the API with no range check of their
 * own: a fraction, NaN or a number outside int32 cannot have come from the
 * API server (the object is skipped); an int32 outside 0..65535 can, but is
 * no port: that port is dropped and the endpoints kept. */
static void test_slice_port_range(void **state)
{
    static const char *const bad[] = { "80.5", "-1e300", "1e300", "2147483648", "-2147483649" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (slice_port(bad[i]) != -1)
            fail_msg("EndpointSlice port %s accepted", bad[i]);
    assert_int_equal(store_count(S, "endpointslices"), 0);
    const char *good = "{\"metadata\":{\"name\":\"sl\",\"namespace\":\"n\"},"
                       "\"addressType\":\"IPv4\",\"ports\":[{\"port\":1}]}";
    assert_int_equal(with_number(store_upsert_slice, good, 0, "ports", "port", NAN), -1);
    assert_int_equal(slice_port("99999"), 0);                  /* int32: port a dropped */
    store_read_begin();
    const st_endpoints *e = store_endpoints(S, "n", "sv");
    assert_non_null(e);
    assert_int_equal(e->n, 1);
    assert_int_equal(st_ep_nports(&e->eps[0]), 1);
    assert_string_equal(st_ep_ports(&e->eps[0])[0].name, "b");
    assert_int_equal(st_ep_ports(&e->eps[0])[0].port, 53);
    store_read_end();
    assert_int_equal(slice_port("-5"), 0);
    assert_int_equal(slice_port("0"), 0);                       /* 0 is kept */
    store_read_begin();
    e = store_endpoints(S, "n", "sv");
    assert_int_equal(st_ep_nports(&e->eps[0]), 2);
    assert_int_equal(st_ep_ports(&e->eps[0])[0].port, 0);
    store_read_end();
}

/* A node's allocatable CPU beyond what the store holds is dropped (0,
 * unknown); the node itself is kept. */
static void test_node_cpu_range(void **state)
{
    static const char *const cpus[] = { "1e300", "nan", "inf", "5000000", "0x10" };
    for (size_t i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"metadata\":{\"name\":\"w\"},\"status\":{\"allocatable\":{\"cpu\":\"%s\"}}}",
                 cpus[i]);
        assert_int_equal(apply(store_upsert_node, json), 0);
        store_read_begin();
        uint32_t milli = store_node(S, "w")->cpu_milli;
        store_read_end();
        if (milli != 0)
            fail_msg("cpu %s: %u millicores", cpus[i], milli);
    }
}

/* Counts the store keeps in 16 bits: more labels than that would wrap the
 * count, so such an object is skipped. */
static void test_label_count_range(void **state)
{
    cJSON *o = cJSON_Parse("{\"metadata\":{\"name\":\"big\",\"labels\":{}}}");
    cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "metadata"),
                                                     "labels");
    char key[16];
    for (int i = 0; i < 65536; i++) {
        snprintf(key, sizeof key, "k%d", i);
        cJSON_AddItemToObject(labels, key, cJSON_CreateString("v"));
    }
    assert_int_equal(store_upsert_namespace(S, o), -1);
    cJSON_DeleteItemFromObjectCaseSensitive(labels, "k0");
    assert_int_equal(store_upsert_namespace(S, o), 0);         /* 65535 fit */
    cJSON_Delete(o);
    store_read_begin();
    assert_int_equal(store_namespace(S, "big")->nlabels, 65535);
    store_read_end();
}

/* ---- two stores, two writers ------------------------------------------ */

/* What a reload does: the new instance's API thread fills its store while
 * the old one still writes its own. Each writer here upserts the same
 * names (so a table shared between stores would be hit from both threads
 * at once; the ThreadSanitizer stage of the suite reports any such race)
 * and then checks what its own store answers. */
typedef struct writer {
    store *st;
    const char *zone;
    int ok;
} writer;

static void *write_store(void *arg)
{
    writer *w = arg;
    store_reader_register();
    char j[512];
    w->ok = 1;
    for (int i = 0; i < 400 && w->ok; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"n%d\",\"labels\":{"
                 "\"topology.kubernetes.io/zone\":\"%s\",\"k%d\":\"v%d\"}},"
                 "\"status\":{\"allocatable\":{\"cpu\":\"1\"}}}", i % 50, w->zone, i, i);
        cJSON *o = cJSON_Parse(j);
        w->ok = o && store_upsert_node(w->st, o) == 0;
        cJSON_Delete(o);
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"s%d\",\"namespace\":\"ns%d\"},"
                 "\"spec\":{\"clusterIP\":\"10.0.%d.%d\"}}", i % 50, i % 7, i % 7, i % 50 + 1);
        o = cJSON_Parse(j);
        w->ok = w->ok && o && store_upsert_service(w->st, o) == 0;
        cJSON_Delete(o);
    }
    store_read_begin();
    for (int i = 0; i < 50 && w->ok; i++) {
        char name[16];
        snprintf(name, sizeof name, "n%d", i);
        const st_node *n = store_node(w->st, name);
        w->ok = n && n->zone && !strcmp(n->zone, w->zone);
    }
    store_read_end();
    store_reader_unregister();
    return NULL;
}

static void test_two_stores_two_writers(void **state)
{
    writer w[2] = { { store_new(NULL), "zone-a", 0 }, { store_new(NULL), "zone-b", 0 } };
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        assert_non_null(w[i].st);
        assert_int_equal(pthread_create(&th[i], NULL, write_store, &w[i]), 0);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_true(w[0].ok && w[1].ok);
    /* each store interns into its own table: the same name is two strings */
    store_read_begin();
    const st_node *a = store_node(w[0].st, "n1"), *b = store_node(w[1].st, "n1");
    assert_true(a && b && a->name != b->name);
    store_read_end();
    /* the first store goes (a reload's old instance); the second serves on */
    store_free(w[0].st);
    store_read_begin();
    b = store_node(w[1].st, "n1");
    assert_true(b && !strcmp(b->name, "n1") && !strcmp(b->zone, "zone-b"));
    store_read_end();
    store_free(w[1].st);
}

typedef struct mcseen {
    char clusters[64];
    size_t eps;
} mcseen;

static int mc_cb(const char *cluster, const st_endpoint *eps, size_t n, void *arg)
{
    (void)eps;
    mcseen *m = arg;
    strcat(m->clusters, cluster);
    strcat(m->clusters, ",");
    m->eps += n;
    return 0;
}

#define MCSLICE(name, svc, cluster, addr) \
    "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"ns\",\"labels\":{" \
    "\"multicluster.kubernetes.io/service-name\":\"" svc "\"," \
    "\"multicluster.kubernetes.io/source-cluster\":\"" cluster "\"}}," \
    "\"addressType\":\"IPv4\",\"ports\":[{\"name\":\"http\",\"port\":80}]," \
    "\"endpoints\":[{\"addresses\":[\"" addr "\"]}]}"

/* ServiceImports and multicluster slices: kept apart from Services and
 * their slices, per cluster, removed and relisted like the others. */
static void test_multicluster(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_svcimport,
        "{\"metadata\":{\"name\":\"svc1\",\"namespace\":\"ns\"},\"spec\":{\"type\":\"ClusterSetIP\","
        "\"ips\":[\"10.0.0.1\",\"bad\",\"10::1\"],\"ports\":[{\"name\":\"http\",\"port\":80}]}}"), 0);
    assert_int_equal(apply(store_upsert_svcimport,
        "{\"metadata\":{\"name\":\"h\",\"namespace\":\"ns\"},\"spec\":{\"type\":\"Headless\"}}"), 0);
    assert_int_equal(apply(store_upsert_slice, MCSLICE("s1", "svc1", "c1", "172.0.0.1")), 0);
    assert_int_equal(apply(store_upsert_slice, MCSLICE("s2", "svc1", "c2", "172.0.0.2")), 0);
    /* a local slice of a Service of the same name stays the Service's */
    assert_int_equal(apply(store_upsert_slice,
        "{\"metadata\":{\"name\":\"l\",\"namespace\":\"ns\",\"labels\":{"
        "\"kubernetes.io/service-name\":\"svc1\"}},\"addressType\":\"IPv4\","
        "\"endpoints\":[{\"addresses\":[\"10.244.0.1\"]}]}"), 0);
    store_read_begin();
    const st_svcimport *si = store_svcimport(S, "ns", "svc1");
    assert_non_null(si);
    assert_false(si->headless);
    assert_int_equal(si->nips, 2);
    assert_int_equal(si->ips[1].family, 6);
    assert_int_equal(si->nports, 1);
    assert_int_equal(si->ports[0].port, 80);
    assert_true(store_svcimport(S, "ns", "h")->headless);
    mcseen m = { "", 0 };
    store_foreach_mcslice(S, "ns", "svc1", mc_cb, &m);
    assert_string_equal(m.clusters, "c1,c2,");
    assert_int_equal(m.eps, 2);
    const st_endpoints *local = store_endpoints(S, "ns", "svc1");
    assert_non_null(local);
    assert_int_equal(local->n, 1);
    store_read_end();
    assert_int_equal(store_count(S, "serviceimports"), 2);

    del("endpointslices", MCSLICE("s1", "svc1", "c1", "172.0.0.1"));
    del("serviceimports", "{\"metadata\":{\"name\":\"h\",\"namespace\":\"ns\"}}");
    store_relist_begin(S, "serviceimports");
    assert_int_equal(apply(store_upsert_svcimport,
        "{\"metadata\":{\"name\":\"svc2\",\"namespace\":\"ns\"},\"spec\":{}}"), 0);
    store_relist_end(S, "serviceimports");
    store_read_begin();
    memset(&m, 0, sizeof m);
    store_foreach_mcslice(S, "ns", "svc1", mc_cb, &m);
    assert_string_equal(m.clusters, "c2,");
    assert_null(store_svcimport(S, "ns", "h"));
    assert_null(store_svcimport(S, "ns", "svc1"));    /* not in the relist */
    assert_non_null(store_svcimport(S, "ns", "svc2"));
    store_read_end();
}

/* Without multicluster, such slices are nobody's. */
static void test_multicluster_off(void **state)
{
    (void)state;
    assert_int_equal(apply(store_upsert_slice, MCSLICE("s1", "svc1", "c1", "172.0.0.1")), 0);
    mcseen m = { "", 0 };
    store_read_begin();
    store_foreach_mcslice(S, "ns", "svc1", mc_cb, &m);
    assert_null(store_endpoints(S, "ns", "svc1"));
    store_read_end();
    assert_int_equal(m.eps, 0);
}

/* Regression (found by tests/chaos/chaos.sh: a pod name that existed
 * throughout answered NXDOMAIN once under churn): an update of a pod or a
 * node that keeps its address took the address out of the published index
 * and put it back, so a reader in between found no pod (pods verified:
 * NXDOMAIN; topology: an unknown client) or no node. A reader thread looks
 * both up all the time while the writer flips the pod's readiness and the
 * node's labels; it must find them every time. */
typedef struct watcher {
    store *st;
    st_ip pa, na;                   /* the pod's and the node's address */
    atomic_int stop;
    atomic_long looks, misses;
} watcher;

static void *watch_index(void *arg)
{
    watcher *w = arg;
    store_reader_register();
    while (!atomic_load(&w->stop)) {
        store_read_begin();
        if (!store_pod_by_ip(w->st, &w->pa) || !store_node_by_addr(w->st, &w->na))
            atomic_fetch_add(&w->misses, 1);
        atomic_fetch_add(&w->looks, 1);
        store_read_end();
    }
    store_reader_unregister();
    return NULL;
}

static void test_updates_keep_addresses_published(void **state)
{
    static const char *const pods[2] = {
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"r\"},\"spec\":{\"nodeName\":\"n\"},"
        "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.9.0.1\",\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
        "{\"metadata\":{\"name\":\"p\",\"namespace\":\"r\"},\"spec\":{\"nodeName\":\"n\"},"
        "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.9.0.1\",\"conditions\":"
        "[{\"type\":\"Ready\",\"status\":\"False\"}]}}" };
    static const char *const nodes[2] = {
        "{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":\"a\"}},"
        "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.9.1\"}]}}",
        "{\"metadata\":{\"name\":\"n\",\"labels\":{\"topology.kubernetes.io/zone\":\"b\"}},"
        "\"status\":{\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"10.0.9.1\"}]}}" };
    cJSON *po[2], *no[2];
    for (int i = 0; i < 2; i++) {
        assert_non_null(po[i] = cJSON_Parse(pods[i]));
        assert_non_null(no[i] = cJSON_Parse(nodes[i]));
    }
    assert_int_equal(store_upsert_pod(S, po[0]), 0);
    assert_int_equal(store_upsert_node(S, no[0]), 0);
    watcher w = { .st = S, .pa = ip("10.9.0.1"), .na = ip("10.0.9.1") };
    atomic_init(&w.stop, 0);
    atomic_init(&w.looks, 0);
    atomic_init(&w.misses, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, watch_index, &w), 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < 20000 && atomic_load(&w.misses) == 0; i++) {
        if (i % 256 == 0) {         /* at most 3 s (valgrind, TSan) */
            clock_gettime(CLOCK_MONOTONIC, &t);
            if (t.tv_sec - t0.tv_sec > 3)
                break;
        }
        assert_int_equal(store_upsert_pod(S, po[i % 2]), 0);
        assert_int_equal(store_upsert_node(S, no[i % 2]), 0);
    }
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    for (int i = 0; i < 2; i++) {
        cJSON_Delete(po[i]);
        cJSON_Delete(no[i]);
    }
    if (atomic_load(&w.misses))
        fail_msg("the pod or the node was unpublished %ld times in %ld lookups",
                 atomic_load(&w.misses), atomic_load(&w.looks));
}

/* A store sized for one pod grows past its hint: thousands of pods,
 * services, slices and nodes all land, are found, and leave again. */
static void test_small_store_grows(void **state)
{
    (void)state;
    enum { PODS = 5000, SVCS = 600, NODES = 300 };
    char j[512], a[64];
    for (int i = 0; i < PODS; i++) {
        nth_addr(a, sizeof a, i);
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"g\"},"
                 "\"spec\":{\"nodeName\":\"n%d\"},\"status\":{\"phase\":\"Running\","
                 "\"podIP\":\"%s\"}}", i, i % NODES, a);
        assert_int_equal(apply(store_upsert_pod, j), 0);
    }
    for (int i = 0; i < SVCS; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"s%d\",\"namespace\":\"g\"},"
                 "\"spec\":{\"clusterIP\":\"10.96.%d.%d\",\"ports\":[{\"port\":80}]}}",
                 i, i >> 8, i & 255);
        assert_int_equal(apply(store_upsert_service, j), 0);
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"s%d-x\",\"namespace\":\"g\","
                 "\"labels\":{\"kubernetes.io/service-name\":\"s%d\"}},\"addressType\":\"IPv4\","
                 "\"endpoints\":[{\"addresses\":[\"10.0.%d.%d\"]}],\"ports\":[{\"port\":8080}]}",
                 i, i, i >> 8, i & 255);
        assert_int_equal(apply(store_upsert_slice, j), 0);
    }
    for (int i = 0; i < NODES; i++) {
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"n%d\",\"labels\":"
                 "{\"topology.kubernetes.io/zone\":\"z%d\"}},\"status\":{\"addresses\":"
                 "[{\"type\":\"InternalIP\",\"address\":\"192.168.%d.%d\"}]}}",
                 i, i % 3, i >> 8, i & 255);
        assert_int_equal(apply(store_upsert_node, j), 0);
    }
    assert_int_equal(store_count(S, "pods"), PODS);
    assert_int_equal(store_count(S, "services"), SVCS);
    assert_int_equal(store_count(S, "nodes"), NODES);
    store_read_begin();
    for (int i = 0; i < PODS; i++) {
        nth_addr(a, sizeof a, i);
        st_ip v = ip(a);
        const st_pod *p = store_pod_by_ip(S, &v);
        assert_non_null(p);
        snprintf(j, sizeof j, "p%d", i);
        assert_string_equal(p->name, j);
    }
    for (int i = 0; i < SVCS; i++) {
        snprintf(j, sizeof j, "s%d", i);
        const st_service *svc = store_service(S, "g", j);
        assert_non_null(svc);
        assert_int_equal(svc->cluster_ips[0].addr[2], i >> 8);
        assert_int_equal(svc->cluster_ips[0].addr[3], i & 255);
        const st_endpoints *eps = store_endpoints(S, "g", j);
        assert_non_null(eps);
        assert_int_equal(eps->n, 1);
        snprintf(a, sizeof a, "10.0.%d.%d", i >> 8, i & 255);
        char abuf[ST_ADDR_STRLEN];
        assert_string_equal(st_ep_addr(&eps->eps[0], abuf), a);
        int n = 0;
        st_ip cip = st_ep_ip(&eps->eps[0]);
        store_endpoints_by_ip(S, &cip, count_ep, &n);
        assert_int_equal(n, 1);
    }
    for (int i = 0; i < NODES; i++) {
        snprintf(j, sizeof j, "n%d", i);
        const st_node *n = store_node(S, j);
        assert_non_null(n);
        snprintf(a, sizeof a, "z%d", i % 3);
        assert_string_equal(n->zone, a);
        snprintf(a, sizeof a, "192.168.%d.%d", i >> 8, i & 255);
        st_ip v = ip(a);
        assert_ptr_equal(store_node_by_addr(S, &v), n);
    }
    store_read_end();
    for (int i = 0; i < PODS; i += 2) {         /* every other pod leaves */
        snprintf(j, sizeof j, "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"g\"}}", i);
        del("pods", j);
    }
    assert_int_equal(store_count(S, "pods"), PODS / 2);
    store_read_begin();
    for (int i = 0; i < PODS; i++) {
        nth_addr(a, sizeof a, i);
        st_ip v = ip(a);
        const st_pod *p = store_pod_by_ip(S, &v);
        if (i % 2)
            assert_non_null(p);
        else
            assert_null(p);
    }
    store_read_end();
}

/* The address map (sorted shards): every address set is found with its
 * value across a directory that doubled many times, a value is replaced
 * in place, an address set to NULL is gone (and clearing an absent one is
 * a no-op), IPv4 and IPv6 keys never meet. */
#define IPM_V4(a, i) ((a)[0] = 10, (a)[1] = (uint8_t)((i) >> 16), (a)[2] = (uint8_t)((i) >> 8), \
                      (a)[3] = (uint8_t)(i), (a))
#define IPM_V6(a, i) (memset((a), 0, 16), (a)[0] = 0xfd, (a)[12] = 10, (a)[13] = (uint8_t)((i) >> 16), \
                      (a)[14] = (uint8_t)((i) >> 8), (a)[15] = (uint8_t)(i), (a))

static void test_ipmap_shards(void **state)
{
    (void)state;
    ipmap *m = ipmap_new();
    assert_non_null(m);
    static int vals[3];
    enum { N = 50000, N6 = 5000 };
    uint8_t a[4], v6[16];
    assert_int_equal(ipmap_count(m), 0);
    assert_int_equal(ipmap_set(m, IPM_V4(a, 1), 4, NULL), 0);     /* clear, absent */
    assert_int_equal(ipmap_set(m, IPM_V4(a, 1), 5, &vals[0]), -1); /* not an address */
    assert_int_equal(ipmap_count(m), 0);
    for (uint32_t i = 0; i < N; i++) {      /* a scattered order */
        uint32_t k = i * 7919u % N;
        assert_int_equal(ipmap_set(m, IPM_V4(a, k), 4, &vals[k % 2]), 0);
    }
    for (uint32_t i = 0; i < N6; i++)
        assert_int_equal(ipmap_set(m, IPM_V6(v6, i), 16, &vals[2]), 0);
    assert_int_equal(ipmap_count(m), N + N6);
    assert_int_equal(ipmap_set(m, IPM_V4(a, 0), 4, &vals[2]), 0); /* in place */
    assert_int_equal(ipmap_count(m), N + N6);
    store_read_begin();
    for (uint32_t k = 1; k < N; k++)
        assert_ptr_equal(ipmap_get(m, IPM_V4(a, k), 4), &vals[k % 2]);
    assert_ptr_equal(ipmap_get(m, IPM_V4(a, 0), 4), &vals[2]);
    assert_null(ipmap_get(m, IPM_V4(a, N), 4));
    for (uint32_t i = 0; i < N6; i++)
        assert_ptr_equal(ipmap_get(m, IPM_V6(v6, i), 16), &vals[2]);
    assert_null(ipmap_get(m, IPM_V6(v6, N6), 16));
    assert_null(ipmap_get(m, IPM_V6(v6, 0), 4));   /* its first octets as IPv4 */
    assert_null(ipmap_get(m, IPM_V4(a, 0), 3));
    store_read_end();
    for (uint32_t k = 0; k < N; k += 2)             /* remove the even ones */
        assert_int_equal(ipmap_set(m, IPM_V4(a, k), 4, NULL), 0);
    for (uint32_t i = 1; i < N6; i += 2)            /* and the odd IPv6 ones */
        assert_int_equal(ipmap_set(m, IPM_V6(v6, i), 16, NULL), 0);
    assert_int_equal(ipmap_count(m), N / 2 + N6 / 2);
    store_read_begin();
    for (uint32_t k = 0; k < N; k++) {
        if (k % 2)
            assert_ptr_equal(ipmap_get(m, IPM_V4(a, k), 4), &vals[1]);
        else
            assert_null(ipmap_get(m, IPM_V4(a, k), 4));
    }
    for (uint32_t i = 0; i < N6; i++) {
        if (i % 2)
            assert_null(ipmap_get(m, IPM_V6(v6, i), 16));
        else
            assert_ptr_equal(ipmap_get(m, IPM_V6(v6, i), 16), &vals[2]);
    }
    store_read_end();
    assert_ptr_equal(ipmap_get_writer(m, IPM_V4(a, 1), 4), &vals[1]);
    for (uint32_t k = 1; k < N; k += 2)             /* and the rest */
        assert_int_equal(ipmap_set(m, IPM_V4(a, k), 4, NULL), 0);
    for (uint32_t i = 0; i < N6; i += 2)
        assert_int_equal(ipmap_set(m, IPM_V6(v6, i), 16, NULL), 0);
    assert_int_equal(ipmap_count(m), 0);
    assert_null(ipmap_get_writer(m, IPM_V4(a, 1), 4));
    pmap_barrier();                                 /* the replaced shards and directories */
    ipmap_free(m);
}

/* A reader looking up addresses that stay while the writer adds and
 * removes thousands of others (their shards republished, the directory
 * doubling) and flips the stayers' values: every lookup finds one of the
 * two values (never nothing, never freed memory: ASan/TSan/valgrind). */
typedef struct ipmap_reader {
    ipmap *m;
    int *vals;
    atomic_int stop;
    atomic_long lookups;
    long bad;
} ipmap_reader;

enum { IPM_STAY = 64 };

static void *read_ipmap(void *arg)
{
    ipmap_reader *r = arg;
    store_reader_register();
    uint8_t a[4], v6[16];
    while (!atomic_load(&r->stop)) {
        store_read_begin();
        for (uint32_t k = 0; k < IPM_STAY; k++) {
            const int *v4 = ipmap_get(r->m, IPM_V4(a, k * 1000), 4);
            const int *v = ipmap_get(r->m, IPM_V6(v6, k * 1000), 16);
            if ((v4 != &r->vals[0] && v4 != &r->vals[1]) || (v != &r->vals[0] && v != &r->vals[1]))
                r->bad++;
        }
        atomic_fetch_add(&r->lookups, 1);
        store_read_end();
    }
    store_reader_unregister();
    return NULL;
}

static void test_ipmap_under_readers(void **state)
{
    (void)state;
    static int vals[3];
    uint8_t a[4], v6[16];
    ipmap_reader r = { .m = ipmap_new(), .vals = vals };
    assert_non_null(r.m);
    for (uint32_t k = 0; k < IPM_STAY; k++) {
        assert_int_equal(ipmap_set(r.m, IPM_V4(a, k * 1000), 4, &vals[0]), 0);
        assert_int_equal(ipmap_set(r.m, IPM_V6(v6, k * 1000), 16, &vals[0]), 0);
    }
    atomic_init(&r.stop, 0);
    atomic_init(&r.lookups, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_ipmap, &r), 0);
    while (atomic_load(&r.lookups) == 0)
        sched_yield();              /* the reader is reading (valgrind runs one thread at a time) */
    enum { M = 20000 };
    for (int round = 0; round < 2; round++) {
        for (uint32_t k = 0; k < M; k++) {
            if (k % 1000 == 0) {    /* a stayer: its value flips in place */
                ipmap_set(r.m, IPM_V4(a, k), 4, &vals[1 - round]);
                ipmap_set(r.m, IPM_V6(v6, k), 16, &vals[1 - round]);
                continue;
            }
            ipmap_set(r.m, IPM_V4(a, k), 4, &vals[2]);
            ipmap_set(r.m, IPM_V6(v6, k), 16, &vals[2]);
        }
        for (uint32_t k = 0; k < M; k++)
            if (k % 1000) {
                ipmap_set(r.m, IPM_V4(a, k), 4, NULL);
                ipmap_set(r.m, IPM_V6(v6, k), 16, NULL);
            }
    }
    atomic_store(&r.stop, 1);
    pthread_join(th, NULL);
    assert_true(atomic_load(&r.lookups) > 0);
    assert_int_equal(r.bad, 0);
    assert_int_equal(ipmap_count(r.m), 2 * IPM_STAY);
    pmap_barrier();
    ipmap_free(r.m);
}

/* A held map (ipmap_hold, as during a relist): the writer sees every
 * change at once; readers (the main thread and a reader thread) see none
 * of the added addresses until the release, then all of them, across a
 * directory that doubled several times while held; a value changed or an
 * address removed while held is seen by readers at once; holding twice
 * is one hold; a release without changes publishes nothing; a map freed
 * while held leaks nothing (ASan). */
typedef struct held_reader {
    ipmap *m;
    uint32_t from, to;              /* the addresses added while held */
    atomic_int stop;
    atomic_long passes;
    atomic_long max_seen, last_seen;
} held_reader;

static void *read_held(void *arg)
{
    held_reader *r = arg;
    store_reader_register();
    uint8_t a[4];
    while (!atomic_load(&r->stop)) {
        long seen = 0;
        store_read_begin();
        for (uint32_t k = r->from; k < r->to; k++)
            seen += ipmap_get(r->m, IPM_V4(a, k), 4) != NULL;
        store_read_end();
        if (seen > atomic_load(&r->max_seen))
            atomic_store(&r->max_seen, seen);
        atomic_store(&r->last_seen, seen);
        atomic_fetch_add(&r->passes, 1);
    }
    store_reader_unregister();
    return NULL;
}

static void held_wait_passes(held_reader *r, long more)
{
    long p = atomic_load(&r->passes) + more;
    while (atomic_load(&r->passes) < p)
        sched_yield();
}

static void test_ipmap_held(void **state)
{
    (void)state;
    static int vals[3];
    enum { OLD = 3000, NEW = 20000 };
    uint8_t a[4], v6[16];
    held_reader r = { .m = ipmap_new(), .from = OLD, .to = OLD + NEW };
    assert_non_null(r.m);
    for (uint32_t k = 0; k < OLD; k++)      /* published before the hold */
        assert_int_equal(ipmap_set(r.m, IPM_V4(a, k), 4, &vals[0]), 0);
    atomic_init(&r.stop, 0);
    atomic_init(&r.passes, 0);
    atomic_init(&r.max_seen, 0);
    atomic_init(&r.last_seen, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_held, &r), 0);

    assert_int_equal(ipmap_hold(r.m, 1), 0);
    assert_int_equal(ipmap_hold(r.m, 1), 0);        /* one hold */
    for (uint32_t i = 0; i < NEW; i++) {            /* a scattered order */
        uint32_t k = OLD + i * 7919u % NEW;
        assert_int_equal(ipmap_set(r.m, IPM_V4(a, k), 4, &vals[1]), 0);
        assert_ptr_equal(ipmap_get_writer(r.m, a, 4), &vals[1]);
    }
    assert_int_equal(ipmap_set(r.m, IPM_V6(v6, 1), 16, &vals[2]), 0);
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, 0), 4, &vals[2]), 0);    /* changed */
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, 1), 4, NULL), 0);        /* removed */
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, OLD), 4, NULL), 0);      /* added, removed */
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, 2), 4, NULL), 0);        /* removed, */
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, 2), 4, &vals[1]), 0);    /* and back */
    assert_int_equal(ipmap_count(r.m), OLD + NEW - 1 + 1 - 1);
    for (uint32_t k = 3; k < OLD; k++)
        assert_ptr_equal(ipmap_get_writer(r.m, IPM_V4(a, k), 4), &vals[0]);
    assert_ptr_equal(ipmap_get_writer(r.m, IPM_V4(a, 0), 4), &vals[2]);
    assert_null(ipmap_get_writer(r.m, IPM_V4(a, 1), 4));
    assert_ptr_equal(ipmap_get_writer(r.m, IPM_V4(a, 2), 4), &vals[1]);
    assert_null(ipmap_get_writer(r.m, IPM_V4(a, OLD), 4));
    assert_ptr_equal(ipmap_get_writer(r.m, IPM_V6(v6, 1), 16), &vals[2]);
    held_wait_passes(&r, 2);
    assert_int_equal(atomic_load(&r.max_seen), 0);  /* no added address yet */
    store_read_begin();
    assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, 0), 4), &vals[2]);     /* at once */
    assert_null(ipmap_get(r.m, IPM_V4(a, 1), 4));
    assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, 2), 4), &vals[1]);
    for (uint32_t k = 3; k < OLD; k++)
        assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, k), 4), &vals[0]);
    assert_null(ipmap_get(r.m, IPM_V4(a, OLD + 1), 4));
    assert_null(ipmap_get(r.m, IPM_V6(v6, 1), 16));
    store_read_end();

    assert_int_equal(ipmap_hold(r.m, 0), 1);
    held_wait_passes(&r, 2);
    assert_int_equal(atomic_load(&r.last_seen), NEW - 1);  /* all but OLD */
    store_read_begin();
    assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, 0), 4), &vals[2]);
    assert_null(ipmap_get(r.m, IPM_V4(a, 1), 4));
    assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, 2), 4), &vals[1]);
    for (uint32_t k = 3; k < OLD; k++)
        assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, k), 4), &vals[0]);
    assert_null(ipmap_get(r.m, IPM_V4(a, OLD), 4));
    for (uint32_t k = OLD + 1; k < OLD + NEW; k++)
        assert_ptr_equal(ipmap_get(r.m, IPM_V4(a, k), 4), &vals[1]);
    assert_ptr_equal(ipmap_get(r.m, IPM_V6(v6, 1), 16), &vals[2]);
    store_read_end();
    assert_int_equal(ipmap_hold(r.m, 0), 0);        /* not held: nothing */
    assert_int_equal(ipmap_hold(r.m, 1), 0);
    assert_int_equal(ipmap_hold(r.m, 0), 0);        /* held, no change: nothing */

    /* held again: a few changes in the same directory shape, then removal
     * of everything (the writer's count and view follow; readers see the
     * removals at once) */
    assert_int_equal(ipmap_hold(r.m, 1), 0);
    assert_int_equal(ipmap_set(r.m, IPM_V4(a, OLD + NEW), 4, &vals[0]), 0);
    for (uint32_t k = 0; k <= OLD + NEW; k++)
        assert_int_equal(ipmap_set(r.m, IPM_V4(a, k), 4, NULL), 0);
    assert_int_equal(ipmap_set(r.m, IPM_V6(v6, 1), 16, NULL), 0);
    assert_int_equal(ipmap_count(r.m), 0);
    held_wait_passes(&r, 2);
    assert_int_equal(atomic_load(&r.last_seen), 0);
    store_read_begin();
    assert_null(ipmap_get(r.m, IPM_V4(a, 5), 4));
    assert_null(ipmap_get(r.m, IPM_V6(v6, 1), 16));
    store_read_end();
    assert_int_equal(ipmap_hold(r.m, 0), 1);
    assert_null(ipmap_get_writer(r.m, IPM_V4(a, 5), 4));

    atomic_store(&r.stop, 1);
    pthread_join(th, NULL);
    /* freed while held, with private shards */
    assert_int_equal(ipmap_hold(r.m, 1), 0);
    for (uint32_t k = 0; k < 100; k++)
        assert_int_equal(ipmap_set(r.m, IPM_V4(a, k), 4, &vals[0]), 0);
    pmap_barrier();
    ipmap_free(r.m);
}

#undef IPM_V4
#undef IPM_V6

/* A reader locating by range while the writer moves the range between
 * two nodes and back: every lookup finds one of the two (never nothing,
 * never a freed table), the reader never waits. */
typedef struct range_reader {
    store *st;
    atomic_int stop;
    atomic_long lookups;
    long bad;
} range_reader;

static void *read_ranges(void *arg)
{
    range_reader *r = arg;
    store_reader_register();
    st_ip a;
    st_parse_ip("10.77.0.9", &a);
    while (!atomic_load(&r->stop)) {
        store_read_begin();
        const char *n = store_node_by_range(r->st, ST_RANGE_CILIUM, &a);
        if (!n || (strcmp(n, "x1") && strcmp(n, "x2")))
            r->bad++;
        atomic_fetch_add(&r->lookups, 1);
        store_read_end();
    }
    store_reader_unregister();
    return NULL;
}

static void test_ranges_under_readers(void **state)
{
    (void)state;
    static const char *const moves[2] = {
        "{\"metadata\":{\"name\":\"x1\"},\"spec\":{\"ipam\":{\"podCIDRs\":[\"10.77.0.0/24\"]}}}",
        "{\"metadata\":{\"name\":\"x2\"},\"spec\":{\"ipam\":{\"podCIDRs\":[\"10.77.0.0/25\"]}}}",
    };
    assert_int_equal(apply(store_upsert_ciliumnode, moves[0]), 0);
    range_reader r = { .st = S };
    atomic_init(&r.stop, 0);
    atomic_init(&r.lookups, 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_ranges, &r), 0);
    while (atomic_load(&r.lookups) == 0)
        sched_yield();              /* the reader is reading (valgrind runs one thread at a time) */
    for (int i = 0; i < 2000; i++) {
        /* x2's /25 comes and goes over x1's /24: the longest wins */
        if (i % 2 == 0)
            apply(store_upsert_ciliumnode, moves[1]);
        else
            del("ciliumnodes", "{\"metadata\":{\"name\":\"x2\"}}");
    }
    atomic_store(&r.stop, 1);
    pthread_join(th, NULL);
    assert_true(atomic_load(&r.lookups) > 0);
    assert_int_equal(r.bad, 0);
}

/* ---- locating clients without pods: the prefix index (IPv4 and IPv6,
 * longest match, removal, a node gaining and losing a range, held
 * rebuilds), the range sources (Node podCIDRs, CiliumNode, Calico
 * BlockAffinity), the locator's source order and endpoint/range
 * conflicts ---------------------------------------------------------------- */

typedef struct conflicts {
    int n[ST_RANGE_COUNT];
} conflicts;

static conflicts C;

static void on_conflict(void *arg, int source)
{
    ((conflicts *)arg)->n[source]++;
}

/* A store sized for one pod that counts conflicts in C. */
static int setup_conflicts(void **state)
{
    (void)state;
    memset(&C, 0, sizeof C);
    return open_store(&(store_opts){ .expected_pods = 1, .conflict = on_conflict, .conflict_arg = &C });
}

static cidr net_of(const char *s)
{
    cidr c;
    assert_int_equal(cidr_parse_host(s, &c), 0);
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

static void test_prefix_v4_v6_longest(void **state)
{
    (void)state;
    pfx_index *x = pfx_new();
    assert_non_null(x);
    cidr a[] = { net_of("10.244.0.0/16") }, b[] = { net_of("10.244.3.0/24"), net_of("fd00:3::/64") },
            d[] = { net_of("10.244.3.128/25") };
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

/* An owner's ranges go 1 → 2 → 1 → 0 (the single range is kept inside the
 * owner's record, more in a block of their own): every step is followed,
 * and the groups of the published table are those of what is there. */
static void test_prefix_owner_grows_and_shrinks(void **state)
{
    (void)state;
    pfx_index *x = pfx_new();
    cidr one[] = { net_of("10.1.0.0/24") };
    cidr two[] = { net_of("10.2.0.0/24"), net_of("fd00:2::/64") };
    cidr other[] = { net_of("10.9.0.0/16") };
    assert_int_equal(pfx_set(x, "n", "node-n", one, 1), 1);
    assert_int_equal(pfx_set(x, "o", "node-o", other, 1), 1);
    assert_string_equal(find(x, "10.1.0.7", NULL), "node-n");
    assert_int_equal(pfx_set(x, "n", "node-n", two, 2), 1);
    assert_string_equal(find(x, "10.1.0.7", NULL), "");
    assert_string_equal(find(x, "10.2.0.7", NULL), "node-n");
    assert_string_equal(find(x, "fd00:2::9", NULL), "node-n");
    assert_int_equal(pfx_set(x, "n", "node-n", two, 2), 0);     /* unchanged */
    int bits = 0;
    assert_string_equal(find(x, "10.9.3.3", &bits), "node-o");
    assert_int_equal(bits, 16);
    assert_int_equal(pfx_set(x, "n", "node-m", one, 1), 1);     /* another node too */
    assert_string_equal(find(x, "10.1.0.7", NULL), "node-m");
    assert_string_equal(find(x, "10.2.0.7", NULL), "");
    assert_string_equal(find(x, "fd00:2::9", NULL), "");
    assert_int_equal(pfx_set(x, "n", "node-m", one, 1), 0);
    assert_int_equal(pfx_count(x), 2);
    pfx_del(x, "n");
    assert_string_equal(find(x, "10.1.0.7", NULL), "");
    assert_int_equal(pfx_count(x), 1);
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
        cidr c = net_of(net);
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
    cidr c = net_of("10.9.0.0/24");
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
    for (int via = 0; via < LOC_VIA_COUNT; via++) {
        int src = locator_via_source(via);
        if (src >= 0)       /* a source's via is named as written in `locate` */
            assert_string_equal(locator_via_name(via), locator_source_name(src));
    }
    assert_int_equal(locator_via_source(LOC_NODE_ADDR), -1);
    assert_int_equal(locator_via_source(LOC_CALICO), LOC_SRC_CALICO);
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

/* The endpoints source in a large Service (its endpoints sorted by
 * address: a binary search) and a small one (a pass): the first endpoint
 * with the address and a nodeName, in slice order. */
static void test_endpoint_node_large_service(void **state)
{
    (void)state;
    char json[16384];
    size_t o = (size_t)snprintf(json, sizeof json,
        "{\"metadata\":{\"name\":\"big-x\",\"namespace\":\"default\",\"labels\":{"
        "\"kubernetes.io/service-name\":\"big\"}},\"addressType\":\"IPv4\",\"endpoints\":[");
    for (int i = 99; i >= 0; i--)      /* written in reverse address order */
        o += (size_t)snprintf(json + o, sizeof json - o,
                              "%s{\"addresses\":[\"10.60.0.%d\"]%s,\"conditions\":{\"ready\":true}}",
                              i == 99 ? "" : ",", i,
                              i % 10 == 3 ? "" : i % 2 ? ",\"nodeName\":\"odd\"" : ",\"nodeName\":\"even\"");
    /* 10.60.0.50 a second time, on another node: the first one wins */
    o += (size_t)snprintf(json + o, sizeof json - o,
                          ",{\"addresses\":[\"10.60.0.50\"],\"nodeName\":\"later\"}],"
                          "\"ports\":[{\"port\":80}]}");
    assert_true(o < sizeof json);
    assert_int_equal(apply(store_upsert_slice, json), 0);
    apply(store_upsert_slice, SLICE("small-x", "small", "10.61.0.1", "tiny"));
    struct { const char *ip, *node; } cases[] = {
        { "10.60.0.0", "even" }, { "10.60.0.99", "odd" }, { "10.60.0.50", "even" },
        { "10.60.0.13", NULL },            /* no nodeName */
        { "10.60.0.100", NULL }, { "10.59.255.255", NULL }, { "10.61.0.1", "tiny" },
        { "10.61.0.2", NULL },
    };
    store_read_begin();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        st_ip a = ip(cases[i].ip);
        const char *n = store_endpoint_node(S, &a);
        if (cases[i].node)
            assert_string_equal(n, cases[i].node);
        else
            assert_null(n);
    }
    store_read_end();
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
        cmocka_unit_test(test_cpu_quantities),
        cmocka_unit_test_setup_teardown(test_ipmap_shards, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ipmap_under_readers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ipmap_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_publishes_addresses_at_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_multicluster, setup_mc, teardown),
        cmocka_unit_test_setup_teardown(test_multicluster_off, setup, teardown),
        cmocka_unit_test(test_cpu_quantities_out_of_range),
        cmocka_unit_test_setup_teardown(test_service_shapes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_service_many_ports, setup, teardown),
        cmocka_unit_test_setup_teardown(test_strings_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slices_merge_and_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_packing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_hostname_prefix, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_addresses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_members, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ptr_indexes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ptr_cluster_ip_changes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ptr_index_shared_ip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ptr_list_both_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_moves_service, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pods_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pods_shared_ip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_relist_reconciles, setup, teardown),
        cmocka_unit_test_setup_teardown(test_service_records_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_version_moves, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_objects_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_service_port_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slice_port_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_cpu_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_label_count_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_stores_two_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_updates_keep_addresses_published, setup, teardown),
        /* the same on a store sized for one pod, and one grown far past that */
        cmocka_unit_test_setup_teardown(test_service_shapes, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_slices_merge_and_defaults, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_ptr_indexes, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_pods_index, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_pods_shared_ip, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_nodes, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_relist_reconciles, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_small_store_grows, setup_small, teardown),
        cmocka_unit_test_setup_teardown(test_small_store_grows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_v4_v6_longest, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_owner_grows_and_shrinks, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_many, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_prefix_same_range, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_node_podcidrs, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_node_relist, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_cilium_nodes, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_calico_affinities, setup_conflicts, teardown),
        cmocka_unit_test(test_source_words),
        cmocka_unit_test_setup_teardown(test_source_order, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_conflicts, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_endpoint_node_large_service, setup_conflicts, teardown),
        cmocka_unit_test_setup_teardown(test_ranges_under_readers, setup_conflicts, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
