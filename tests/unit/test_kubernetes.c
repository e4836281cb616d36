/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_kubernetes.c — the kubernetes plugin without an API server.
 *
 * Pure functions first (name grammar, endpoint names, pod labels, reverse
 * names, label selectors, setup errors), then the acceptance table
 * (tests/data/kubernetes/acceptance.tsv, described in docs/compatibility.md;
 * the row numbers in comments below are its rows): instances are loaded from
 * Corefiles (never started), the plugin's store is filled from the JSON
 * fixtures in tests/data/kubernetes/, and real
 * queries run through the server with req_new_internal()/req_run(). Answer
 * sets are compared without regard to order, as CoreDNS's tests do.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <cjson/cJSON.h>
#include <event2/event.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "server/transfer.h"
#include "testenv.h"
#include <time.h>

#ifndef SRCDIR
#define SRCDIR "."
#endif

/* ---- pure functions --------------------------------------------------------- */

static kreq parse(const char *name, int zone_labels, int zonal, int expect)
{
    uint8_t w[DNAME_MAX];
    assert_true(dname_from_str(w, name) > 0);
    dname_lower(w);
    kreq r;
    assert_int_equal(kube_parse(w, zone_labels, zonal, &r), expect);
    return r;
}

/* CoreDNS parseRequest with multicluster: two labels left of the service
 * are <endpoint>.<cluster> unless either starts with '_'; no zonal names. */
static void test_grammar_multicluster(void **state)
{
    (void)state;
    uint8_t w[DNAME_MAX];
    kreq r;
    dname_from_str(w, "ep1a.cluster1.svc1.testns.svc.clusterset.local.");
    assert_int_equal(kube_parse_mc(w, 2, 0, 1, &r), K_OK);
    assert_string_equal(r.endpoint, "ep1a");
    assert_string_equal(r.cluster, "cluster1");
    assert_string_equal(r.port, "");
    assert_int_equal(kube_parse_mc(w, 2, 0, 0, &r), K_OK);     /* not multicluster */
    assert_string_equal(r.port, "ep1a");
    assert_string_equal(r.proto, "cluster1");
    assert_string_equal(r.cluster, "");
    dname_from_str(w, "_http.tcp.svc1.testns.svc.clusterset.local.");
    assert_int_equal(kube_parse_mc(w, 2, 0, 1, &r), K_OK);
    assert_string_equal(r.port, "http");
    assert_string_equal(r.proto, "tcp");
    assert_string_equal(r.endpoint, "");
    dname_from_str(w, "http._tcp.svc1.testns.svc.clusterset.local.");
    assert_int_equal(kube_parse_mc(w, 2, 0, 1, &r), K_OK);
    assert_string_equal(r.port, "http");
    assert_string_equal(r.cluster, "");
    dname_from_str(w, "ep1a.svc1.testns.svc.clusterset.local.");
    assert_int_equal(kube_parse_mc(w, 2, 0, 1, &r), K_OK);
    assert_string_equal(r.endpoint, "ep1a");
    assert_string_equal(r.cluster, "");
    dname_from_str(w, "a.pin._zone.svc1.testns.svc.clusterset.local.");
    assert_int_equal(kube_parse_mc(w, 2, 1, 1, &r), K_INVALID);   /* zonal: not there */
    assert_int_equal(kube_parse_mc(w, 2, 1, 0, &r), K_OK);
}

static void test_grammar(void **state)
{
    (void)state;
    kreq r = parse("cluster.local.", 2, 0, K_OK);
    assert_int_equal(r.podsvc, KR_NONE);
    r = parse("svc.cluster.local.", 2, 0, K_OK);
    assert_int_equal(r.podsvc, KR_NONE);
    r = parse("pod.cluster.local.", 2, 0, K_OK);
    assert_int_equal(r.podsvc, KR_NONE);
    parse("foo.cluster.local.", 2, 0, K_INVALID);
    parse("dns-version.cluster.local.", 2, 0, K_INVALID);
    parse("ns.dns.cluster.local.", 2, 0, K_INVALID);
    r = parse("testns.svc.cluster.local.", 2, 0, K_OK);
    assert_int_equal(r.podsvc, KR_SVC);
    assert_string_equal(r.ns, "testns");
    assert_string_equal(r.service, "");
    r = parse("SvC1.TeStNs.SvC.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.service, "svc1");
    r = parse("ep1a.svc1.testns.svc.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.endpoint, "ep1a");
    r = parse("_http._tcp.svc1.testns.svc.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.port, "http");
    assert_string_equal(r.proto, "tcp");
    assert_string_equal(r.endpoint, "");
    r = parse("http.tcp.svc1.testns.svc.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.port, "http");
    r = parse("__http.tcp.svc1.testns.svc.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.port, "_http");       /* one underscore stripped */
    parse("a.b.c.svc1.testns.svc.cluster.local.", 2, 0, K_INVALID);
    r = parse("x.1-2-3-4.podns.pod.cluster.local.", 2, 0, K_OK);
    assert_int_equal(r.podsvc, KR_POD);
    assert_string_equal(r.service, "1-2-3-4");
    /* zonal */
    parse("us-west-2a.pin._zone.hdls.testns.svc.cluster.local.", 2, 0, K_INVALID);
    r = parse("us-west-2a.pin._zone.hdls.testns.svc.cluster.local.", 2, 1, K_OK);
    assert_int_equal(r.zonal, ZONAL_PIN);
    assert_string_equal(r.topo_zone, "us-west-2a");
    assert_string_equal(r.service, "hdls");
    r = parse("Corp.Example.COM.prefer._zone.db.prod.svc.cluster.local.", 2, 1, K_OK);
    assert_int_equal(r.zonal, ZONAL_PREFER);
    assert_string_equal(r.topo_zone, "corp.example.com");
    parse("us-west-2a.florp._zone.hdls.testns.svc.cluster.local.", 2, 1, K_INVALID);
    parse("us-west-2a.pin._zone.hdls.testns.pod.cluster.local.", 2, 1, K_INVALID);
    parse("a.b.c.hdls.testns.svc.cluster.local.", 2, 1, K_INVALID);
    /* a label holding a dot never matches a Kubernetes name */
    r = parse("a\\.b.testns.svc.cluster.local.", 2, 0, K_OK);
    assert_string_equal(r.service, "a\\.b");
}

static void test_endpoint_names(void **state)
{
    (void)state;
    char out[KLABEL];
    kube_dashed_ip("172.0.0.2", out, sizeof out);
    assert_string_equal(out, "172-0-0-2");
    kube_dashed_ip("fd00::", out, sizeof out);
    assert_string_equal(out, "fd00--0");
    kube_dashed_ip("5678:abcd::1", out, sizeof out);
    assert_string_equal(out, "5678-abcd--1");
    kube_dashed_ip("::1", out, sizeof out);
    assert_string_equal(out, "--1");

    /* a slice's endpoint as decode_slice packs it (store.h): strings at
     * one offset of the slice's pool, the address derived from its own
     * (an IPv4 one in the endpoint, an IPv6 one's 16 octets in the pool) */
    const char *names[] = { NULL };
    const st_hints hints[] = { { 0 } };
    st_slice sl = { .name = "s", .names = names, .nnames = 1, .hints = hints, .nhints = 1,
                    .pool = "host-a\0web-0\0", .family = 4 };
    st_endpoint ep = { .sl = &sl, .str = 7, .has_pod = 1, .a.ip4 = { 10, 1, 2, 3 } };
    assert_string_equal(kube_endpoint_name(&ep, 0, out, sizeof out), "10-1-2-3");
    assert_string_equal(kube_endpoint_name(&ep, 1, out, sizeof out), "web-0");
    ep.str = 0;
    ep.has_host = 1;
    assert_string_equal(kube_endpoint_name(&ep, 1, out, sizeof out), "host-a");
    st_slice sl6 = { .name = "s6", .names = names, .nnames = 1, .hints = hints, .nhints = 1,
                     .pool = "web-1\0\xfd\x00\0\0\0\0\0\0\0\0\0\0\0\0\0\x01",
                     .family = 6 };
    st_endpoint ep6 = { .sl = &sl6, .str = 0, .has_pod = 1, .v6 = 1, .a.ip6 = 6 };
    assert_string_equal(kube_endpoint_name(&ep6, 0, out, sizeof out), "fd00--1");
    assert_string_equal(kube_endpoint_name(&ep6, 1, out, sizeof out), "web-1");
}

static void test_pod_labels(void **state)
{
    (void)state;
    char out[KLABEL];
    kube_pod_label_ip("1-2-3-4", out, sizeof out);
    assert_string_equal(out, "1.2.3.4");
    kube_pod_label_ip("fd00--1", out, sizeof out);
    assert_string_equal(out, "fd00::1");
    kube_pod_label_ip("1--2-3-4", out, sizeof out);     /* "--": IPv6 form */
    assert_string_equal(out, "1::2:3:4");
    kube_pod_label_ip("blah", out, sizeof out);
    assert_string_equal(out, "blah");
}

static void test_reverse_names(void **state)
{
    (void)state;
    uint8_t w[DNAME_MAX];
    st_ip ip;
    dname_from_str(w, "1.0.0.10.in-addr.arpa.");
    assert_int_equal(kube_reverse_addr(w, &ip), 1);
    assert_int_equal(ip.family, 4);
    assert_memory_equal(ip.addr, ((uint8_t[]){ 10, 0, 0, 1 }), 4);
    dname_from_str(w, "0.0.10.in-addr.arpa.");
    assert_int_equal(kube_reverse_addr(w, &ip), 0);
    dname_from_str(w, "256.0.0.10.in-addr.arpa.");
    assert_int_equal(kube_reverse_addr(w, &ip), 0);
    dname_from_str(w, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.8.7.6.5.ip6.arpa.");
    assert_int_equal(kube_reverse_addr(w, &ip), 1);
    assert_int_equal(ip.family, 6);
    st_ip want;
    st_parse_ip("5678:abcd::1", &want);
    assert_memory_equal(ip.addr, want.addr, 16);
    dname_from_str(w, "x.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.8.7.6.5.ip6.arpa.");
    assert_int_equal(kube_reverse_addr(w, &ip), 0);
    dname_from_str(w, "1.0.0.10.example.");
    assert_int_equal(kube_reverse_addr(w, &ip), 0);
}

static void test_selectors(void **state)
{
    (void)state;
    kselector s;
    char err[256];
    assert_int_equal(ksel_parse("environment in (staging, qa),application=nginx", &s, err,
                                sizeof err), 0);
    char *txt = ksel_render(&s);
    assert_string_equal(txt, "environment in (staging,qa),application=nginx");
    free(txt);
    st_label l1[] = { { "environment", "qa" }, { "application", "nginx" } };
    st_label l2[] = { { "environment", "prod" }, { "application", "nginx" } };
    assert_int_equal(ksel_match(&s, l1, 2), 1);
    assert_int_equal(ksel_match(&s, l2, 2), 0);
    ksel_free(&s);

    assert_int_equal(ksel_parse("!canary, tier notin (a,b), app.kubernetes.io/name==web, x!=y, team",
                                &s, err, sizeof err), 0);
    txt = ksel_render(&s);
    assert_string_equal(txt, "!canary,tier notin (a,b),app.kubernetes.io/name=web,x!=y,team");
    free(txt);
    st_label l3[] = { { "app.kubernetes.io/name", "web" }, { "team", "t" }, { "tier", "c" } };
    assert_int_equal(ksel_match(&s, l3, 3), 1);
    st_label l4[] = { { "app.kubernetes.io/name", "web" }, { "team", "t" }, { "canary", "1" } };
    assert_int_equal(ksel_match(&s, l4, 3), 0);
    ksel_free(&s);

    const char *bad[] = { "a in ()", "a in (b", "=b", "a > 3", "-a=b", "a=b c", "a/b/c=d",
                          "a=" "0123456789012345678901234567890123456789012345678901234567890123" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(ksel_parse(bad[i], &s, err, sizeof err), -1);
        assert_non_null(strstr(err, "invalid label selector"));
    }
}

/* ---- instances from Corefiles ------------------------------------------------------ */

static instance *load_conf(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/test_kubernetes.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    instance *ins = instance_load(test_env(), path, err, errlen);
    unlink(path);
    return ins;
}

static void *kube_inst(instance *ins)
{
    void *k = test_plugin_inst(ins, &plugin_kubernetes);
    if (!k)
        fail_msg("no kubernetes instance");
    return k;
}

static void load_fixture(store *st, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/kubernetes/%s", SRCDIR, file);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *list = cJSON_Parse(buf);
    assert_non_null(list);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items")) {
        const char *kind = cJSON_GetObjectItem(it, "kind")->valuestring;
        int rc = !strcmp(kind, "Namespace") ? store_upsert_namespace(st, it) :
                 !strcmp(kind, "Service") ? store_upsert_service(st, it) :
                 !strcmp(kind, "EndpointSlice") ? store_upsert_slice(st, it) :
                 !strcmp(kind, "Pod") ? store_upsert_pod(st, it) : -1;
        assert_int_equal(rc, 0);
    }
    cJSON_Delete(list);
}

static instance *cluster(const char *opts, const char *fixture)
{
    char conf[2048], err[1024] = "";
    snprintf(conf, sizeof conf,
             ".:53 {\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n%s\n    }\n}\n", opts);
    instance *ins = load_conf(conf, err, sizeof err);
    if (!ins)
        fail_msg("load: %s", err);
    void *k = kube_inst(ins);
    load_fixture(kubernetes_store(k), fixture);
    kubernetes_set_synced(k, 1);
    return ins;
}

/* ---- queries --------------------------------------------------------------------------- */

#define MAXR 32

typedef struct res {
    int rcode;
    uint16_t flags;
    char sec[3][MAXR][512];
    int n[3];
} res;

static void normalize(char *s)
{
    char *w = s;
    for (char *p = s; *p; p++) {
        char c = (*p == '\t') ? ' ' : *p;
        if (c == ' ' && w > s && w[-1] == ' ')
            continue;
        *w++ = c;
    }
    *w = '\0';
}

/* A query run on base (NULL: none; handlers that need one fail), with an
 * OPT record of that UDP size and DO bit when edns is nonzero. */
static void query_on(instance *ins, struct event_base *base, const char *name, uint16_t type,
                     uint16_t edns, int do_bit, res *out)
{
    uint8_t wire[512];
    memset(wire, 0, 12);
    wire[0] = 0x12, wire[1] = 0x34, wire[2] = 0x01, wire[5] = 1;
    int nl = dname_from_str(wire + 12, name);
    assert_true(nl > 0);
    size_t len = 12 + (size_t)nl;
    wire[len++] = (uint8_t)(type >> 8), wire[len++] = (uint8_t)type;
    wire[len++] = 0, wire[len++] = 1;
    if (edns) {
        static const uint8_t opt[11] = { 0, 0, 41, 0, 0, 0, 0, 0, 0, 0, 0 };
        memcpy(wire + len, opt, sizeof opt);
        wire[len + 3] = (uint8_t)(edns >> 8), wire[len + 4] = (uint8_t)edns;
        wire[len + 7] = do_bit ? 0x80 : 0;
        len += sizeof opt;
        wire[11] = 1;
    }
    dns_req *r = req_new_internal(ins, base, wire, len, NULL);
    assert_non_null(r);
    out->rcode = req_run(r);
    out->flags = r->resp.flags;
    out->rcode = r->resp.rcode;
    for (int s = 0; s < 3; s++) {
        out->n[s] = (int)msg_count(&r->resp, s);
        for (int i = 0; i < out->n[s] && i < MAXR; i++) {
            dns_rr rr = msg_rr(&r->resp, s, (unsigned)i);
            assert_true(rr_to_str(&rr, out->sec[s][i], sizeof out->sec[s][i]) >= 0);
            normalize(out->sec[s][i]);
        }
    }
    req_free(r);
}

static void query(instance *ins, const char *name, uint16_t type, res *out)
{
    query_on(ins, NULL, name, type, 0, 0, out);
}

static void dump(const res *x)
{
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < x->n[s]; i++)
            print_message("  sec%d: %s\n", s, x->sec[s][i]);
}

/* want: '|'-separated records; every one present, nothing else. */
static void same_set(const res *x, int sec, const char *want, const char *what)
{
    char buf[4096];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", want ? want : "");
    for (char *save, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        n++;
        int found = 0;
        for (int i = 0; i < x->n[sec] && !found; i++)
            found = !strcmp(x->sec[sec][i], t);
        if (!found) {
            dump(x);
            fail_msg("%s: missing '%s' in section %d", what, t, sec);
        }
    }
    if (n != x->n[sec]) {
        dump(x);
        fail_msg("%s: section %d has %d records, want %d", what, sec, x->n[sec], n);
    }
}

static const char *type_name(uint16_t t)
{
    static char b[16];
    return rr_type_name(t, b);
}

/* Positive answer: rcode NOERROR, AA, answer and additional sets, empty authority. */
static void expect(instance *ins, const char *name, uint16_t type, const char *ans, const char *add)
{
    res x;
    char what[512];
    snprintf(what, sizeof what, "%s %s", name, type_name(type));
    query(ins, name, type, &x);
    if (x.rcode != RC_NOERROR) {
        dump(&x);
        fail_msg("%s: rcode %d", what, x.rcode);
    }
    assert_true(x.flags & F_AA);
    same_set(&x, SEC_ANSWER, ans, what);
    same_set(&x, SEC_AUTHORITY, NULL, what);
    same_set(&x, SEC_ADDITIONAL, add, what);
}

#define SOA_TAIL "7200 1800 86400"

/* Negative answer: rcode, empty answer, one SOA of zone with ttl/minimum. */
static void expect_neg_zone(instance *ins, const char *name, uint16_t type, int rcode,
                            const char *zone, unsigned ttl, unsigned minimum)
{
    res x;
    char what[512], head[512], tail[64];
    snprintf(what, sizeof what, "%s %s", name, type_name(type));
    query(ins, name, type, &x);
    if (x.rcode != rcode || x.n[SEC_ANSWER] != 0 || x.n[SEC_AUTHORITY] != 1) {
        dump(&x);
        fail_msg("%s: rcode %d (want %d), %d answers, %d authority", what, x.rcode, rcode,
                 x.n[SEC_ANSWER], x.n[SEC_AUTHORITY]);
    }
    assert_true(x.flags & F_AA);
    snprintf(head, sizeof head, "%s %u IN SOA ns.dns.%s hostmaster.%s ", zone, ttl, zone, zone);
    snprintf(tail, sizeof tail, " " SOA_TAIL " %u", minimum);
    const char *soa = x.sec[SEC_AUTHORITY][0];
    if (strncmp(soa, head, strlen(head)) ||
        strcmp(soa + strlen(soa) - strlen(tail), tail)) {
        dump(&x);
        fail_msg("%s: SOA '%s'", what, soa);
    }
    assert_int_equal(x.n[SEC_ADDITIONAL], 0);
}

static void expect_neg(instance *ins, const char *name, uint16_t type, int rcode)
{
    expect_neg_zone(ins, name, type, rcode, "cluster.local.", 5, 5);
}

#define NODATA RC_NOERROR
#define NX RC_NXDOMAIN
#define S ".testns.svc.cluster.local."

static instance *g_default;

static int setup_default(void **state)
{
    (void)state;
    setenv("TOPODNS_SELF_IPS", "10.244.0.20", 1);
    g_default = cluster("", "cluster.json");
    return 0;
}

static int teardown_default(void **state)
{
    (void)state;
    instance_free(g_default);
    return 0;
}

static void test_clusterip(void **state)
{
    (void)state;
    instance *I = g_default;
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);                      /* 1 */
    expect_neg(I, "svc1" S, T_AAAA, NODATA);                                            /* 2 */
    expect(I, "svc1" S, T_SRV, "svc1" S " 5 IN SRV 0 100 80 svc1" S,
           "svc1" S " 5 IN A 10.0.0.1");                                                /* 3 */
    expect(I, "_http._tcp.svc1" S, T_SRV, "_http._tcp.svc1" S " 5 IN SRV 0 100 80 svc1" S,
           "svc1" S " 5 IN A 10.0.0.1");                                                /* 4 */
    expect_neg(I, "_https._tcp.svc1" S, T_SRV, NX);                                     /* 5 */
    expect_neg(I, "_http._udp.svc1" S, T_SRV, NX);                                      /* 6 */
    expect(I, "_http._tcp.svc1" S, T_A, "_http._tcp.svc1" S " 5 IN A 10.0.0.1", NULL);  /* 7 */
    expect_neg(I, "svc1" S, T_TXT, NODATA);                                             /* 8 */
    expect_neg(I, "svc1" S, T_SOA, NODATA);                                             /* 9 */
    expect_neg(I, "svc1" S, T_MX, NODATA);                                              /* 10 */
    expect_neg(I, "svc1" S, T_CNAME, NODATA);
    expect_neg(I, "svc1" S, T_ANY, NODATA);
    expect_neg(I, "svc1" S, T_HINFO, NODATA);
    expect_neg(I, "svc0" S, T_A, NX);                                                   /* 11 */
    expect_neg(I, "svc0" S, T_TXT, NX);                                                 /* 12 */
    expect_neg(I, "svc0.nsnoexist.svc.cluster.local.", T_A, NX);                        /* 13 */
    expect_neg(I, "nsnoexist.svc.cluster.local.", T_A, NX);                             /* 14 */
    expect_neg(I, "testns.svc.cluster.local.", T_A, NODATA);                            /* 15 */
    expect_neg(I, "svc.cluster.local.", T_A, NODATA);                                   /* 16 */
    expect_neg(I, "pod.cluster.local.", T_A, NODATA);                                   /* 17 */
    expect_neg(I, "svc.cluster.local.", T_NS, NODATA);                                  /* 18 */
    expect_neg(I, "testns.svc.cluster.local.", T_NS, NODATA);
    expect_neg(I, "foo.cluster.local.", T_NS, NX);                                      /* 19 */
    expect_neg(I, "foo.svc.cluster.local.", T_NS, NX);
    expect(I, "svcempty" S, T_A, "svcempty" S " 5 IN A 10.0.0.4", NULL);               /* 49 */
    expect(I, "svc6" S, T_AAAA, "svc6" S " 5 IN AAAA 1234:abcd::1", NULL);             /* 51 */
    expect(I, "svc6" S, T_SRV, "svc6" S " 5 IN SRV 0 100 80 svc6" S,
           "svc6" S " 5 IN AAAA 1234:abcd::1");
    expect(I, "svc-dual-stack" S, T_A, "svc-dual-stack" S " 5 IN A 10.0.0.3", NULL);   /* 52 */
    expect(I, "svc-dual-stack" S, T_AAAA, "svc-dual-stack" S " 5 IN AAAA 10::3", NULL);
    expect(I, "svc-dual-stack" S, T_SRV, "svc-dual-stack" S " 5 IN SRV 0 50 80 svc-dual-stack" S,
           "svc-dual-stack" S " 5 IN A 10.0.0.3|svc-dual-stack" S " 5 IN AAAA 10::3"); /* 53 */
    expect(I, "kube-dns.kube-system.svc.cluster.local.", T_SRV,
           "kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 50 53 kube-dns.kube-system.svc.cluster.local.",
           "kube-dns.kube-system.svc.cluster.local. 5 IN A 10.96.0.10");              /* 2 ports, 1 SRV */
    expect_neg(I, "google.com" S, T_A, NX);                                             /* 56 */
    expect_neg(I, "svc1.testns.svc.cluster.local" S, T_A, NX);
}

static void test_apex(void **state)
{
    (void)state;
    instance *I = g_default;
    res x;
    query(I, "cluster.local.", T_SOA, &x);                                              /* 20 */
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.n[SEC_ANSWER], 1);
    assert_int_equal(x.n[SEC_AUTHORITY], 0);
    assert_true(!strncmp(x.sec[0][0], "cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. ", 72));
    assert_non_null(strstr(x.sec[0][0], " 7200 1800 86400 5"));
    expect(I, "cluster.local.", T_NS,
           "cluster.local. 5 IN NS kube-dns.kube-system.svc.cluster.local.",
           "kube-dns.kube-system.svc.cluster.local. 5 IN A 10.96.0.10");              /* 21 */
    expect_neg(I, "cluster.local.", T_A, NODATA);                                       /* 22 */
    expect_neg(I, "cluster.local.", T_AAAA, NODATA);
    expect_neg(I, "cluster.local.", T_SRV, NODATA);
    expect_neg(I, "cluster.local.", T_HINFO, NODATA);
    expect_neg(I, "cluster.local.", T_TXT, NX);                                         /* 23 */
    expect_neg(I, "svc.cluster.local.", T_TXT, NX);
    expect_neg(I, "testns.svc.cluster.local.", T_TXT, NX);
    expect(I, "ns.dns.cluster.local.", T_A, "ns.dns.cluster.local. 5 IN A 10.96.0.10", NULL); /* 24 */
    expect_neg(I, "ns.dns.cluster.local.", T_AAAA, NODATA);
    expect_neg(I, "ns.dns.cluster.local.", T_SRV, NODATA);
    expect_neg(I, "ns.dns.cluster.local.", T_TXT, NX);
    expect_neg(I, "ns.dns.cluster.local.", T_PTR, NX);
    expect(I, "dns-version.cluster.local.", T_TXT,
           "dns-version.cluster.local. 28800 IN TXT \"1.1.0\"", NULL);               /* 25 */
    expect_neg(I, "dns-version.cluster.local.", T_A, NX);                               /* 26 */
    expect_neg(I, "foo.svc1" S, T_SOA, NODATA);             /* SOA off-apex: never NX */
    query(I, "cluster.local.", T_AXFR, &x);                                             /* 78 */
    assert_int_equal(x.rcode, RC_REFUSED);
    assert_int_equal(x.n[0] + x.n[1] + x.n[2], 0);
    assert_false(x.flags & F_AA);
}

static void test_headless(void **state)
{
    (void)state;
    instance *I = g_default;
    expect(I, "hdls1" S, T_A, "hdls1" S " 5 IN A 172.0.0.2|hdls1" S " 5 IN A 172.0.0.3|"
           "hdls1" S " 5 IN A 172.0.0.4|hdls1" S " 5 IN A 172.0.0.5", NULL);           /* 27 */
    expect(I, "hdls1" S, T_AAAA, "hdls1" S " 5 IN AAAA 5678:abcd::1|hdls1" S " 5 IN AAAA 5678:abcd::2",
           NULL);                                                                      /* 28 */
    const char *srv29 =
        "hdls1" S " 5 IN SRV 0 16 80 172-0-0-2.hdls1" S "|hdls1" S " 5 IN SRV 0 16 80 172-0-0-3.hdls1" S "|"
        "hdls1" S " 5 IN SRV 0 16 80 dup-name.hdls1" S "|hdls1" S " 5 IN SRV 0 16 80 5678-abcd--1.hdls1" S "|"
        "hdls1" S " 5 IN SRV 0 16 80 5678-abcd--2.hdls1" S;
    const char *glue29 =
        "172-0-0-2.hdls1" S " 5 IN A 172.0.0.2|172-0-0-3.hdls1" S " 5 IN A 172.0.0.3|"
        "dup-name.hdls1" S " 5 IN A 172.0.0.4|dup-name.hdls1" S " 5 IN A 172.0.0.5|"
        "5678-abcd--1.hdls1" S " 5 IN AAAA 5678:abcd::1|5678-abcd--2.hdls1" S " 5 IN AAAA 5678:abcd::2";
    expect(I, "hdls1" S, T_SRV, srv29, glue29);                                         /* 29 */
    char srv30[2048];
    snprintf(srv30, sizeof srv30, "%s", srv29);
    /* 30: same with owner _http._tcp.hdls1 */
    char buf[4096] = "";
    for (char *save, *t = strtok_r(srv30, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        strcat(buf, buf[0] ? "|_http._tcp." : "_http._tcp.");
        strcat(buf, t);
    }
    expect(I, "_http._tcp.hdls1" S, T_SRV, buf, glue29);
    expect(I, "172-0-0-2.hdls1" S, T_A, "172-0-0-2.hdls1" S " 5 IN A 172.0.0.2", NULL); /* 31 */
    expect(I, "dup-name.hdls1" S, T_A,
           "dup-name.hdls1" S " 5 IN A 172.0.0.4|dup-name.hdls1" S " 5 IN A 172.0.0.5", NULL); /* 32 */
    expect(I, "dup-name.hdls1" S, T_SRV, "dup-name.hdls1" S " 5 IN SRV 0 50 80 dup-name.hdls1" S,
           "dup-name.hdls1" S " 5 IN A 172.0.0.4|dup-name.hdls1" S " 5 IN A 172.0.0.5"); /* 33 */
    expect(I, "5678-abcd--1.hdls1" S, T_AAAA, "5678-abcd--1.hdls1" S " 5 IN AAAA 5678:abcd::1", NULL); /* 34 */
    expect_neg(I, "5678-abcd--1.hdls1" S, T_A, NODATA);                                 /* 35 */
    expect_neg(I, "bogusendpoint.hdls1" S, T_A, NX);                                    /* 36 */
    expect(I, "hdlsprtls" S, T_A, "hdlsprtls" S " 5 IN A 172.0.0.20", NULL);           /* 37 */
    expect_neg(I, "hdlsprtls" S, T_SRV, NODATA);                                        /* 38 */
    expect(I, "172-0-0-20.hdlsprtls" S, T_A, "172-0-0-20.hdlsprtls" S " 5 IN A 172.0.0.20", NULL); /* 39 */
    expect_neg(I, "hdls-unready" S, T_A, NX);                                           /* 40 */
    expect_neg(I, "hdls-unready" S, T_SRV, NX);
    expect_neg(I, "hdls-unready" S, T_TXT, NX);
    expect(I, "ep1a.svc1" S, T_A, "ep1a.svc1" S " 5 IN A 172.0.0.1", NULL);            /* 41 */
    expect_neg(I, "172-0-0-1.svc1" S, T_A, NX);                                         /* 42 */
    expect_neg(I, "bogusendpoint.svc1" S, T_A, NX);                                     /* 43 */
}

static void test_external(void **state)
{
    (void)state;
    instance *I = g_default;
    expect(I, "external" S, T_CNAME, "external" S " 5 IN CNAME ext.interwebs.test.", NULL); /* 44 */
    /* 45: no upstream in this Corefile — the CNAME alone, NOERROR */
    expect(I, "external" S, T_A, "external" S " 5 IN CNAME ext.interwebs.test.", NULL);
    expect_neg(I, "external" S, T_SRV, NODATA);                                         /* 46 */
    expect_neg(I, "external" S, T_TXT, NODATA);
    expect_neg(I, "endpoint.external" S, T_CNAME, NX);                                  /* 47 */
    expect_neg(I, "subdomain.subdomain.external" S, T_CNAME, NX);
    expect_neg(I, "_http._tcp.external" S, T_SRV, NX);
    res x;                                                                              /* 48 */
    query(I, "external-to-service" S, T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.n[SEC_ANSWER], 2);
    assert_string_equal(x.sec[0][0], "external-to-service" S " 5 IN CNAME svc1.testns.svc.cluster.local.");
    assert_string_equal(x.sec[0][1], "svc1.testns.svc.cluster.local. 5 IN A 10.0.0.1");
    /* in-zone target without records: nothing at all, not even the CNAME */
    expect_neg(I, "external-to-service" S, T_AAAA, NODATA);
}

static void test_case(void **state)
{
    (void)state;
    instance *I = g_default;
    expect(I, "SvC1.TeStNs.SvC.cLuStEr.LoCaL.", T_A, "SvC1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN A 10.0.0.1", NULL); /* 54 */
    expect_neg_zone(I, "not-a-service.testns.svc.ClUsTeR.lOcAl.", T_A, NX, "ClUsTeR.lOcAl.", 5, 5); /* 55 */
    expect(I, "_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL.", T_SRV,
           "_HtTp._TcP.sVc1.TeStNs.SvC.cLuStEr.LoCaL. 5 IN SRV 0 100 80 svc1.testns.svc.cLuStEr.LoCaL.",
           "svc1.testns.svc.cLuStEr.LoCaL. 5 IN A 10.0.0.1");
}

static void test_ptr(void **state)
{
    (void)state;
    instance *I = g_default;
    expect(I, "1.0.0.10.in-addr.arpa.", T_PTR, "1.0.0.10.in-addr.arpa. 5 IN PTR svc1.testns.svc.cluster.local.", NULL); /* 68 */
    expect(I, "1.0.0.172.in-addr.arpa.", T_PTR, "1.0.0.172.in-addr.arpa. 5 IN PTR ep1a.svc1.testns.svc.cluster.local.", NULL); /* 69 */
    expect(I, "4.0.0.172.in-addr.arpa.", T_PTR, "4.0.0.172.in-addr.arpa. 5 IN PTR dup-name.hdls1.testns.svc.cluster.local.", NULL); /* 70 */
    const char *v6 = "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.c.b.a.8.7.6.5.ip6.arpa.";
    char want[512];
    snprintf(want, sizeof want, "%s 5 IN PTR 5678-abcd--1.hdls1.testns.svc.cluster.local.", v6);
    expect(I, v6, T_PTR, want, NULL);                                                   /* 71 */
    const char *v6b = "3.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1.0.0.ip6.arpa.";
    snprintf(want, sizeof want, "%s 5 IN PTR svc-dual-stack.testns.svc.cluster.local.", v6b);
    expect(I, v6b, T_PTR, want, NULL);                                                  /* 72 */
    expect(I, "20.0.244.10.in-addr.arpa.", T_PTR,
           "20.0.244.10.in-addr.arpa. 5 IN PTR 10-244-0-20.kube-dns.kube-system.svc.cluster.local.", NULL); /* 73 */
    expect_neg_zone(I, "99.0.0.10.in-addr.arpa.", T_PTR, NX, "in-addr.arpa.", 5, 5);   /* 74 */
    expect_neg_zone(I, "30.0.0.172.in-addr.arpa.", T_PTR, NX, "in-addr.arpa.", 5, 5);
    expect(I, "2.0.0.10.in-addr.arpa.", T_PTR, "2.0.0.10.in-addr.arpa. 5 IN PTR svc1.unexposedns.svc.cluster.local.", NULL);
    expect_neg(I, "svc1" S, T_PTR, NODATA);                                             /* 77 */
    expect_neg(I, "svc0" S, T_PTR, NX);
    expect_neg_zone(I, "10.in-addr.arpa.", T_PTR, NX, "in-addr.arpa.", 5, 5);
    expect_neg_zone(I, "in-addr.arpa.", T_PTR, NODATA, "in-addr.arpa.", 5, 5);
}

static void test_unsynced(void **state)
{
    (void)state;
    instance *I = g_default;
    kubernetes_set_synced(kube_inst(I), 0);
    expect_neg(I, "svc0" S, T_A, RC_SERVFAIL);                                          /* 57 */
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);   /* positives still served */
    expect_neg(I, "svc1" S, T_AAAA, NODATA);
    kubernetes_set_synced(kube_inst(I), 1);
    expect_neg(I, "svc0" S, T_A, NX);
}

static void test_outside(void **state)
{
    (void)state;
    res x;
    query(g_default, "example.org.", T_A, &x);      /* no next plugin */
    assert_int_equal(x.rcode, RC_SERVFAIL);
    assert_int_equal(x.n[0] + x.n[1] + x.n[2], 0);
}

static void upsert_json(store *st, int (*fn)(store *, const cJSON *), const char *json)
{
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    assert_int_equal(fn(st, o), 0);
    cJSON_Delete(o);
}

/* Weight floor(100/N) has a minimum of 1; every record is added (the
 * server truncates, not the plugin). */
static void test_large_headless(void **state)
{
    (void)state;
    instance *I = cluster("", "cluster.json");
    store *st = kubernetes_store(kube_inst(I));
    static char json[65536];
    size_t o = (size_t)snprintf(json, sizeof json,
        "{\"metadata\":{\"name\":\"big-1\",\"namespace\":\"testns\",\"labels\":{"
        "\"kubernetes.io/service-name\":\"big\"}},\"addressType\":\"IPv4\",\"endpoints\":[");
    for (int i = 0; i < 150; i++)
        o += (size_t)snprintf(json + o, sizeof json - o, "%s{\"addresses\":[\"10.9.%d.%d\"]}",
                              i ? "," : "", i / 100, i % 100 + 1);
    snprintf(json + o, sizeof json - o, "],\"ports\":[{\"name\":\"p\",\"port\":9}]}");
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"big\",\"namespace\":\"testns\"},"
                "\"spec\":{\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]}}");
    upsert_json(st, store_upsert_slice, json);
    res *x = calloc(1, sizeof *x);
    query(I, "big" S, T_A, x);
    assert_int_equal(x->rcode, RC_NOERROR);
    assert_int_equal(x->n[SEC_ANSWER], 150);
    query(I, "big" S, T_SRV, x);
    assert_int_equal(x->n[SEC_ANSWER], 150);
    assert_int_equal(x->n[SEC_ADDITIONAL], 150);
    assert_string_equal(x->sec[0][0], "big" S " 5 IN SRV 0 1 9 10-9-0-1.big" S);
    free(x);
    instance_free(I);
}

/* Bounded answers (answer.c): a client's reply to a large headless Service
 * is built only as far as the client's size can hold, yet it is the same
 * octets — records, order, TC — as the reply built from every record (a
 * write hook makes the server keep them all, as the cache plugin does).
 * Two ports per endpoint: A entries repeat each address (the dedupe, and
 * a rebuild from more entries); over TCP the pre-rendered answer of 64 KB
 * is the same octets too. */
static void noop_hook(dns_req *r, void *data)
{
    (void)r, (void)data;
}

static size_t client_reply(instance *I, const char *name, uint16_t qtype, uint16_t edns,
                           int proto, int hook, uint8_t *out)
{
    uint8_t qn[DNAME_MAX], w[512];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 0x4242, .flags = F_RD, .qname = qn, .qtype = qtype, .qclass = C_IN,
                    .edns_size = edns };
    int n = msg_query(&q, w, sizeof w);
    assert_true(n > 0);
    dns_req *r = req_new_internal(I, NULL, w, (size_t)n, "192.0.2.1");
    assert_non_null(r);
    r->proto = proto;
    if (hook)
        assert_int_equal(req_on_write(r, noop_hook, NULL), 0);
    req_run(r);
    assert_true(r->written);
    size_t len = 0;
    const uint8_t *p = req_reply_wire(r, &len);
    assert_true(len >= 12 && len <= 65535);
    memcpy(out, p, len);
    req_free(r);
    return len;
}

static void test_bounded_answers(void **state)
{
    (void)state;
    instance *I = cluster("", "cluster.json");
    void *k = kube_inst(I);
    store *st = kubernetes_store(k);
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"huge\",\"namespace\":\"testns\"},"
                "\"spec\":{\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]}}");
    static char json[65536];
    for (int s = 0; s < 30; s++) {
        size_t o = (size_t)snprintf(json, sizeof json,
            "{\"metadata\":{\"name\":\"huge-%d\",\"namespace\":\"testns\",\"labels\":{"
            "\"kubernetes.io/service-name\":\"huge\"}},\"addressType\":\"IPv4\",\"endpoints\":[", s);
        for (int i = s * 100; i < (s + 1) * 100; i++)
            o += (size_t)snprintf(json + o, sizeof json - o,
                                  "%s{\"addresses\":[\"10.8.%d.%d\"],\"hostname\":\"h-%d\"}",
                                  i % 100 ? "," : "", i / 250, i % 250 + 1, i);
        snprintf(json + o, sizeof json - o, "],\"ports\":[{\"name\":\"p\",\"port\":9},"
                 "{\"name\":\"q\",\"port\":10}]}");
        upsert_json(st, store_upsert_slice, json);
    }
    static uint8_t got[65536], want[65536];
    static const struct { const char *name; uint16_t qtype; } qs[] = {
        { "huge" S, T_A }, { "_p._tcp.huge" S, T_SRV }, { "huge" S, T_SRV },
        { "H-7.Huge.TESTNS.svc.cluster.local.", T_A },
    };
    static const uint16_t sizes[] = { 0, 1232, 4096, 65535 };
    kubernetes_set_prerender(k, 0);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
        for (int proto = PROTO_UDP; proto <= PROTO_TCP; proto++)
            for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
                size_t a = client_reply(I, qs[i].name, qs[i].qtype, sizes[z], proto, 0, got);
                size_t b = client_reply(I, qs[i].name, qs[i].qtype, sizes[z], proto, 1, want);
                if (a != b || memcmp(got, want, a))
                    fail_msg("%s type %u proto %d size %u: %zu octets, want %zu", qs[i].name,
                             qs[i].qtype, proto, sizes[z], a, b);
                if (qs[i].name[0] != 'H' && sizes[z] <= 4096)
                    assert_true(got[2] & 0x02);     /* TC: the records do not all fit */
            }
    /* over TCP, the pre-rendered reply (a miss, then hits) */
    size_t b = client_reply(I, "huge" S, T_A, 0, PROTO_TCP, 1, want);
    assert_true(b > 60000);
    kubernetes_set_prerender(k, 1);
    for (int n = 0; n < 3; n++) {
        size_t a = client_reply(I, "huge" S, T_A, 0, PROTO_TCP, 0, got);
        assert_int_equal(a, b);
        assert_memory_equal(got, want, b);
    }
    /* another spelling of the name between two hits: written anew */
    static uint8_t want2[65536];
    size_t b2 = client_reply(I, "HUGE.testns.svc.cluster.local.", T_A, 0, PROTO_TCP, 1, want2);
    size_t a2 = client_reply(I, "HUGE.testns.svc.cluster.local.", T_A, 0, PROTO_TCP, 0, got);
    assert_int_equal(a2, b2);
    assert_memory_equal(got, want2, b2);
    assert_int_equal(client_reply(I, "huge" S, T_A, 0, PROTO_TCP, 0, got), b);
    assert_memory_equal(got, want, b);
    instance_free(I);
}

/* ---- option rows --------------------------------------------------------------------- */

static void test_opt_ignore_empty(void **state)
{
    (void)state;
    instance *I = cluster("ignore empty_service", "cluster.json");
    expect_neg(I, "svcempty" S, T_A, NX);                                               /* 50 */
    expect(I, "external" S, T_CNAME, "external" S " 5 IN CNAME ext.interwebs.test.", NULL);
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);
    expect_neg(I, "svc6" S, T_AAAA, NX);            /* no slice at all: empty */
    instance_free(I);
}

static void test_opt_ttl(void **state)
{
    (void)state;
    instance *I = cluster("ttl 30", "cluster.json");
    expect(I, "svc1" S, T_A, "svc1" S " 30 IN A 10.0.0.1", NULL);                      /* 58 */
    expect_neg_zone(I, "svc0" S, T_A, NX, "cluster.local.", 30, 30);
    instance_free(I);
    I = cluster("ttl 3600", "cluster.json");
    expect_neg_zone(I, "svc0" S, T_A, NX, "cluster.local.", 300, 3600);                 /* 59 */
    expect(I, "dns-version.cluster.local.", T_TXT,
           "dns-version.cluster.local. 28800 IN TXT \"1.1.0\"", NULL);
    instance_free(I);
    I = cluster("ttl 0", "cluster.json");
    expect(I, "svc1" S, T_A, "svc1" S " 0 IN A 10.0.0.1", NULL);
    instance_free(I);
}

static void test_opt_namespaces(void **state)
{
    (void)state;
    instance *I = cluster("namespaces testns", "cluster.json");
    expect_neg(I, "svc1.unexposedns.svc.cluster.local.", T_A, NX);                      /* 60 */
    expect_neg(I, "unexposedns.svc.cluster.local.", T_A, NX);
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);
    expect_neg_zone(I, "2.0.0.10.in-addr.arpa.", T_PTR, NX, "in-addr.arpa.", 5, 5);     /* 76 */
    expect(I, "1.0.0.10.in-addr.arpa.", T_PTR, "1.0.0.10.in-addr.arpa. 5 IN PTR svc1.testns.svc.cluster.local.", NULL);
    instance_free(I);
}

static void test_opt_namespace_labels(void **state)
{
    (void)state;
    instance *I = cluster("namespace_labels team in (a, b)", "cluster.json");
    store *st = kubernetes_store(kube_inst(I));
    upsert_json(st, store_upsert_namespace, "{\"metadata\":{\"name\":\"testns\",\"labels\":{\"team\":\"a\"}}}");
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);
    expect_neg(I, "svc1.unexposedns.svc.cluster.local.", T_A, NX);
    expect_neg(I, "unexposedns.svc.cluster.local.", T_A, NX);
    /* quirk 8: namespace_labels does not filter PTR */
    expect(I, "2.0.0.10.in-addr.arpa.", T_PTR, "2.0.0.10.in-addr.arpa. 5 IN PTR svc1.unexposedns.svc.cluster.local.", NULL);
    instance_free(I);
}

static void test_opt_pods(void **state)
{
    (void)state;
    instance *I = g_default;
    expect_neg(I, "10-240-0-1.podns.pod.cluster.local.", T_A, NX);                      /* 61 */
    expect_neg(I, "podns.pod.cluster.local.", T_A, NX);
    I = cluster("pods insecure", "cluster.json");
    expect(I, "10-240-0-1.podns.pod.cluster.local.", T_A,
           "10-240-0-1.podns.pod.cluster.local. 5 IN A 10.240.0.1", NULL);             /* 62 */
    expect(I, "172-0-0-2.podns.pod.cluster.local.", T_A,
           "172-0-0-2.podns.pod.cluster.local. 5 IN A 172.0.0.2", NULL);
    expect(I, "x.172-0-0-2.podns.pod.cluster.local.", T_A,
           "x.172-0-0-2.podns.pod.cluster.local. 5 IN A 172.0.0.2", NULL);             /* quirk 5 */
    expect_neg(I, "172-0-0-2.podns.pod.cluster.local.", T_AAAA, NODATA);
    expect_neg(I, "blah.podns.pod.cluster.local.", T_A, NX);                            /* 63 */
    expect_neg(I, "blah.podns.pod.cluster.local.", T_AAAA, NX);
    expect_neg(I, "blah.podns.pod.cluster.local.", T_HINFO, NX);
    expect_neg(I, "1-2-3-4.nsnoexist.pod.cluster.local.", T_A, NX);
    expect_neg(I, "podns.pod.cluster.local.", T_A, NODATA);                             /* 64 */
    expect(I, "fd00--1.podns.pod.cluster.local.", T_AAAA,
           "fd00--1.podns.pod.cluster.local. 5 IN AAAA fd00::1", NULL);                /* 65 */
    instance_free(I);
    I = cluster("pods verified", "cluster.json");
    expect(I, "10-240-0-1.podns.pod.cluster.local.", T_A,
           "10-240-0-1.podns.pod.cluster.local. 5 IN A 10.240.0.1", NULL);             /* 66 */
    expect_neg(I, "172-0-0-2.podns.pod.cluster.local.", T_A, NX);                       /* 67 */
    expect_neg(I, "10-240-0-1.otherns.pod.cluster.local.", T_A, NX);
    instance_free(I);
}

static void test_opt_noendpoints(void **state)
{
    (void)state;
    instance *I = cluster("noendpoints", "cluster.json");
    expect_neg(I, "hdls1" S, T_A, NX);
    expect_neg(I, "ep1a.svc1" S, T_A, NX);
    expect(I, "svc1" S, T_A, "svc1" S " 5 IN A 10.0.0.1", NULL);
    instance_free(I);
}

static void test_opt_fallthrough(void **state)
{
    (void)state;
    instance *I = cluster("fallthrough in-addr.arpa ip6.arpa", "cluster.json");
    res x;
    query(I, "99.0.0.10.in-addr.arpa.", T_PTR, &x);                                     /* 75 */
    assert_int_equal(x.rcode, RC_SERVFAIL);         /* next plugin: none */
    assert_int_equal(x.n[SEC_AUTHORITY], 0);
    expect_neg(I, "svc0" S, T_A, NX);               /* not covered */
    expect_neg(I, "svc1" S, T_AAAA, NODATA);
    instance_free(I);
    I = cluster("fallthrough", "cluster.json");
    query(I, "svc0" S, T_A, &x);
    assert_int_equal(x.rcode, RC_SERVFAIL);
    expect_neg(I, "svc1" S, T_AAAA, NODATA);        /* NODATA never falls through */
    instance_free(I);
}

static void test_opt_endpoint_pod_names(void **state)
{
    (void)state;
    instance *I = cluster("endpoint_pod_names", "cluster.json");
    store *st = kubernetes_store(kube_inst(I));
    cJSON *o = cJSON_Parse(
        "{\"metadata\":{\"name\":\"web-x\",\"namespace\":\"testns\",\"labels\":{"
        "\"kubernetes.io/service-name\":\"hdls1\"}},\"addressType\":\"IPv4\",\"endpoints\":["
        "{\"addresses\":[\"172.0.0.40\"],\"targetRef\":{\"kind\":\"Pod\",\"name\":\"web-0\"}},"
        "{\"addresses\":[\"172.0.0.41\"],\"targetRef\":{\"kind\":\"Pod\",\"name\":"
        "\"p123456789012345678901234567890123456789012345678901234567890123\"}}],"
        "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80}]}");
    assert_int_equal(store_upsert_slice(st, o), 0);
    cJSON_Delete(o);
    expect(I, "web-0.hdls1" S, T_A, "web-0.hdls1" S " 5 IN A 172.0.0.40", NULL);
    expect_neg(I, "172-0-0-40.hdls1" S, T_A, NX);
    /* a 64-character pod name is not used: the dashed IP is */
    expect(I, "172-0-0-41.hdls1" S, T_A, "172-0-0-41.hdls1" S " 5 IN A 172.0.0.41", NULL);
    expect(I, "40.0.0.172.in-addr.arpa.", T_PTR,
           "40.0.0.172.in-addr.arpa. 5 IN PTR web-0.hdls1.testns.svc.cluster.local.", NULL);
    instance_free(I);
}

static void test_zonal(void **state)
{
    (void)state;
    instance *I = cluster("zonal", "zonal.json");
#define Z "._zone.hdls.testns.svc.cluster.local."
    expect(I, "us-west-2a.pin" Z, T_A, "us-west-2a.pin" Z " 5 IN A 172.0.0.1", NULL);
    expect(I, "us-west-2b.pin" Z, T_A,
           "us-west-2b.pin" Z " 5 IN A 172.0.0.2|us-west-2b.pin" Z " 5 IN A 172.0.0.3", NULL);
    expect_neg(I, "us-west-2c.pin" Z, T_A, NODATA);
    expect(I, "us-west-2a.prefer" Z, T_A, "us-west-2a.prefer" Z " 5 IN A 172.0.0.1", NULL);
    expect(I, "us-west-2c.prefer" Z, T_A, "us-west-2c.prefer" Z " 5 IN A 172.0.0.1|"
           "us-west-2c.prefer" Z " 5 IN A 172.0.0.2|us-west-2c.prefer" Z " 5 IN A 172.0.0.3", NULL);
    expect(I, "US-WEST-2A.PIN" Z, T_A, "US-WEST-2A.PIN" Z " 5 IN A 172.0.0.1", NULL);
    expect_neg(I, "us-west-2a.pin._zone.ghost.testns.svc.cluster.local.", T_A, NX);
    expect_neg(I, "us-west-2a.florp" Z, T_A, NX);
    expect_neg(I, "us-west-2a.pin._zone.clstr.testns.svc.cluster.local.", T_A, NX);
    expect_neg(I, "us-west-2c.pin" Z, T_TXT, NODATA);
    expect_neg(I, "us-west-2c.prefer" Z, T_TXT, NODATA);
    expect_neg(I, "us-west-2a.pin" Z, T_MX, NODATA);
    expect(I, "us-west-2c.prefer" Z, T_SRV,
           "us-west-2c.prefer" Z " 5 IN SRV 0 33 80 172-0-0-1.hdls.testns.svc.cluster.local.|"
           "us-west-2c.prefer" Z " 5 IN SRV 0 33 80 172-0-0-2.hdls.testns.svc.cluster.local.|"
           "us-west-2c.prefer" Z " 5 IN SRV 0 33 80 172-0-0-3.hdls.testns.svc.cluster.local.",
           "172-0-0-1.hdls.testns.svc.cluster.local. 5 IN A 172.0.0.1|"
           "172-0-0-2.hdls.testns.svc.cluster.local. 5 IN A 172.0.0.2|"
           "172-0-0-3.hdls.testns.svc.cluster.local. 5 IN A 172.0.0.3");
    expect(I, "us-west-2b.pin" Z, T_SRV,
           "us-west-2b.pin" Z " 5 IN SRV 0 50 80 172-0-0-2.hdls.testns.svc.cluster.local.|"
           "us-west-2b.pin" Z " 5 IN SRV 0 50 80 172-0-0-3.hdls.testns.svc.cluster.local.",
           "172-0-0-2.hdls.testns.svc.cluster.local. 5 IN A 172.0.0.2|"
           "172-0-0-3.hdls.testns.svc.cluster.local. 5 IN A 172.0.0.3");
    instance_free(I);
    I = cluster("", "zonal.json");
    expect_neg(I, "us-west-2a.pin" Z, T_A, NX);     /* option off */
    instance_free(I);
#undef Z
}

/* An ExternalName outside the zone is resolved through the server: here a
 * second block whose own kubernetes instance serves other.local. */
static void *kube_inst_zone(instance *ins, const char *zone)
{
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (hs[i]->def == &plugin_kubernetes && !strcmp(((kube *)hs[i]->inst)->zones[0], zone))
            return hs[i]->inst;
    fail_msg("no kubernetes instance for %s", zone);
    return NULL;
}

static void test_external_upstream(void **state)
{
    (void)state;
    char err[1024] = "";
    instance *I = load_conf(".:53 {\n kubernetes cluster.local in-addr.arpa ip6.arpa\n}\n"
                            "other.local:53 {\n kubernetes other.local\n}\n", err, sizeof err);
    if (!I)
        fail_msg("%s", err);
    void *k1 = kube_inst_zone(I, "cluster.local."), *k2 = kube_inst_zone(I, "other.local.");
    load_fixture(kubernetes_store(k1), "cluster.json");
    load_fixture(kubernetes_store(k2), "cluster.json");
    kubernetes_set_synced(k1, 1);
    kubernetes_set_synced(k2, 1);
    store *st = kubernetes_store(k1);
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"far\",\"namespace\":\"testns\"},"
                "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"SVC1.testns.svc.other.local\"}}");
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"nowhere\",\"namespace\":\"testns\"},"
                "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"svc0.testns.svc.other.local\"}}");
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"ip\",\"namespace\":\"testns\"},"
                "\"spec\":{\"type\":\"ExternalName\",\"externalName\":\"10.1.1.1\"}}");
    res x;
    query(I, "far" S, T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.n[SEC_ANSWER], 2);
    assert_string_equal(x.sec[0][0], "far" S " 5 IN CNAME SVC1.testns.svc.other.local.");
    assert_string_equal(x.sec[0][1], "SVC1.testns.svc.other.local. 5 IN A 10.0.0.1");
    assert_int_equal(x.n[SEC_AUTHORITY], 0);
    /* upstream NXDOMAIN: NOERROR with the CNAME alone */
    expect(I, "nowhere" S, T_A, "nowhere" S " 5 IN CNAME svc0.testns.svc.other.local.", NULL);
    expect(I, "far" S, T_AAAA, "far" S " 5 IN CNAME SVC1.testns.svc.other.local.", NULL);
    /* an ExternalName holding an IP is not served */
    expect_neg(I, "ip" S, T_A, NX);
    expect_neg(I, "ip" S, T_CNAME, NX);
    instance_free(I);
}

/* Two blocks whose ExternalNames point at each other: each out-of-zone
 * chase is a new query from the top of the server, nested at most 4 deep,
 * so the answer is four CNAMEs and stops there (the innermost lookup,
 * refused the chase, has no records: its CNAME is dropped). */
static void test_external_nesting(void **state)
{
    (void)state;
    char err[1024] = "";
    instance *I = load_conf(".:53 {\n kubernetes cluster.local\n}\n"
                            "other.local:53 {\n kubernetes other.local\n}\n", err, sizeof err);
    if (!I)
        fail_msg("%s", err);
    void *k1 = kube_inst_zone(I, "cluster.local."), *k2 = kube_inst_zone(I, "other.local.");
    load_fixture(kubernetes_store(k1), "cluster.json");
    load_fixture(kubernetes_store(k2), "cluster.json");
    kubernetes_set_synced(k1, 1);
    kubernetes_set_synced(k2, 1);
    upsert_json(kubernetes_store(k1), store_upsert_service,
                "{\"metadata\":{\"name\":\"ping\",\"namespace\":\"testns\"},\"spec\":{\"type\":"
                "\"ExternalName\",\"externalName\":\"pong.testns.svc.other.local\"}}");
    upsert_json(kubernetes_store(k2), store_upsert_service,
                "{\"metadata\":{\"name\":\"pong\",\"namespace\":\"testns\"},\"spec\":{\"type\":"
                "\"ExternalName\",\"externalName\":\"ping.testns.svc.cluster.local\"}}");
    res x;
    query(I, "ping" S, T_A, &x);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.n[SEC_ANSWER], 4);
    assert_string_equal(x.sec[0][0], "ping" S " 5 IN CNAME pong.testns.svc.other.local.");
    assert_string_equal(x.sec[0][1], "pong.testns.svc.other.local. 5 IN CNAME ping" S);
    assert_string_equal(x.sec[0][2], "ping" S " 5 IN CNAME pong.testns.svc.other.local.");
    assert_string_equal(x.sec[0][3], "pong.testns.svc.other.local. 5 IN CNAME ping" S);
    assert_int_equal(x.n[SEC_AUTHORITY], 0);
    /* a qtype answered by an A lookup's outcome alone: NODATA */
    expect_neg(I, "ping" S, T_HINFO, NODATA);
    instance_free(I);
}

/* An out-of-zone target forwarded to an upstream: the chase runs on the
 * event base of the request that needs it (here the one req_run drives;
 * a worker's own loop when serving), never on a loop of its own, so an
 * upstream that answers from that same loop is heard. The sub-query carries
 * RD and the client's EDNS size and DO bit (65535, no DO for a client
 * without EDNS on a transport that is not UDP). */
static void test_external_async(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    assert_non_null(base);
    test_upstream up;         /* answers A 192.0.2.53, TTL 42 */
    int port = test_upstream_start(&up, base, 0xc0000235, 42);
    char conf[512], err[1024] = "";
    snprintf(conf, sizeof conf, ".:53 {\n kubernetes cluster.local\n}\n"
             "up.test:53 {\n forward . 127.0.0.1:%d\n}\n", port);
    instance *I = load_conf(conf, err, sizeof err);
    if (!I)
        fail_msg("%s", err);
    void *k = kube_inst(I);
    load_fixture(kubernetes_store(k), "cluster.json");
    kubernetes_set_synced(k, 1);
    upsert_json(kubernetes_store(k), store_upsert_service,
                "{\"metadata\":{\"name\":\"fwd\",\"namespace\":\"testns\"},\"spec\":{\"type\":"
                "\"ExternalName\",\"externalName\":\"Name.Up.Test\"}}");
    upsert_json(kubernetes_store(k), store_upsert_service,
                "{\"metadata\":{\"name\":\"via\",\"namespace\":\"testns\"},\"spec\":{\"type\":"
                "\"ExternalName\",\"externalName\":\"fwd.testns.svc.cluster.local\"}}");
    res x;
    query_on(I, base, "fwd" S, T_A, 0, 0, &x);
    assert_int_equal(up.nq, 1);
    assert_int_equal(x.rcode, RC_NOERROR);
    assert_int_equal(x.n[SEC_ANSWER], 2);
    assert_string_equal(x.sec[0][0], "fwd" S " 5 IN CNAME Name.Up.Test.");
    assert_string_equal(x.sec[0][1], "Name.Up.Test. 42 IN A 192.0.2.53");
    static const uint8_t plain[] = { 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1, 4, 'N', 'a', 'm', 'e',
                                     2, 'U', 'p', 4, 'T', 'e', 's', 't', 0, 0, 1, 0, 1,
                                     0, 0, 41, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(up.lastqlen, 2 + sizeof plain);
    assert_memory_equal(up.lastq + 2, plain, sizeof plain);
    /* an in-zone CNAME first, then the same chase; EDNS 1232 with DO */
    query_on(I, base, "via" S, T_A, 1232, 1, &x);
    assert_int_equal(up.nq, 2);
    assert_int_equal(x.n[SEC_ANSWER], 3);
    assert_string_equal(x.sec[0][0], "via" S " 5 IN CNAME fwd.testns.svc.cluster.local.");
    assert_string_equal(x.sec[0][1], "fwd" S " 5 IN CNAME Name.Up.Test.");
    assert_string_equal(x.sec[0][2], "Name.Up.Test. 42 IN A 192.0.2.53");
    uint8_t withdo[sizeof plain];
    memcpy(withdo, plain, sizeof plain);
    withdo[sizeof plain - 8] = 0x04, withdo[sizeof plain - 7] = 0xd0;   /* 1232 */
    withdo[sizeof plain - 4] = 0x80;                                    /* DO */
    assert_int_equal(up.lastqlen, 2 + sizeof withdo);
    assert_memory_equal(up.lastq + 2, withdo, sizeof withdo);
    instance_free(I);
    test_upstream_stop(&up);
    event_base_free(base);
}

/* One slice add/update with a trigger time 2 s ago: labels (JSON members,
 * each followed by a comma), namespace, the annotation's value. */
static void programming_slice(kube *k, const char *labels, const char *ns, const char *svc,
                              const char *when)
{
    char ts[64], json[1024];
    time_t now = time(NULL) - 2;
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    snprintf(json, sizeof json,
             "{\"metadata\":{\"name\":\"s\",\"namespace\":\"%s\",\"labels\":{%s"
             "\"kubernetes.io/service-name\":\"%s\"},\"annotations\":{"
             "\"endpoints.kubernetes.io/last-change-trigger-time\":\"%s\"}}}",
             ns, labels, svc, when ? when : ts);
    cJSON *o = cJSON_Parse(json);
    assert_non_null(o);
    kube_record_programming(k, o);
    cJSON_Delete(o);
}

/* The slice's Service, looked up by kubernetes.io/service-name, decides
 * the service_kind (the slice's own service.kubernetes.io/headless label
 * does not matter): a headless Service with a selector records
 * headless_with_selector, a ClusterIP one cluster_ip; anything else
 * nothing. */
static void test_programming_metric(void **state)
{
    (void)state;
    static const char *const hl[] = { "headless_with_selector" };
    static const char *const cip[] = { "cluster_ip" };
    static const char *const hwo[] = { "headless_without_selector" };
    const char *name = "coredns_kubernetes_dns_programming_duration_seconds";
    instance *I = cluster("", "cluster.json");
    kube *k = kube_inst(I);
    double before = metrics_value(test_registry(), name, hl);
    double cbefore = metrics_value(test_registry(), name, cip);
    /* hdls1 is headless with a selector: recorded, with or without the
     * slice's label */
    programming_slice(k, "\"service.kubernetes.io/headless\":\"\",", "testns", "hdls1", NULL);
    assert_true(metrics_value(test_registry(), name, hl) == before + 1);
    programming_slice(k, "", "testns", "hdls1", NULL);
    assert_true(metrics_value(test_registry(), name, hl) == before + 2);
    /* svc1 is a ClusterIP Service: cluster_ip, even when the slice claims
     * to be headless */
    programming_slice(k, "", "testns", "svc1", NULL);
    programming_slice(k, "\"service.kubernetes.io/headless\":\"\",", "testns", "svc1", NULL);
    assert_true(metrics_value(test_registry(), name, cip) == cbefore + 2);
    /* an ExternalName Service, a Service not in the store (another
     * namespace, or not watched yet) and a bad timestamp: nothing */
    programming_slice(k, "", "testns", "external", NULL);
    programming_slice(k, "\"service.kubernetes.io/headless\":\"\",", "otherns", "hdls1", NULL);
    programming_slice(k, "\"service.kubernetes.io/headless\":\"\",", "testns", "nosuch", NULL);
    programming_slice(k, "", "testns", "hdls1", "yesterday");
    assert_true(metrics_value(test_registry(), name, hl) == before + 2);
    assert_true(metrics_value(test_registry(), name, cip) == cbefore + 2);
    assert_true(metrics_value(test_registry(), name, hwo) == 0);
    size_t len;
    char *text = metrics_render(test_registry(), &len);
    assert_non_null(strstr(text, "coredns_kubernetes_dns_programming_duration_seconds_bucket{"
                                 "service_kind=\"headless_with_selector\",le=\"4.096\"} 2"));
    assert_non_null(strstr(text, "coredns_kubernetes_dns_programming_duration_seconds_bucket{"
                                 "service_kind=\"cluster_ip\",le=\"4.096\"} 2"));
    free(text);
    instance_free(I);
}

/* ---- zone transfers (xfr.c) ------------------------------------------------------------- */

typedef struct xcol {
    char recs[96][256];
    unsigned n;
    unsigned stop_at;               /* nonzero: refuse the record after this many */
} xcol;

static int xcollect(void *sink, const dns_rr *rr)
{
    xcol *c = sink;
    if ((c->stop_at && c->n == c->stop_at) || c->n == 96)
        return -1;
    assert_true(rr_to_str(rr, c->recs[c->n], sizeof c->recs[0]) >= 0);
    normalize(c->recs[c->n]);
    c->n++;
    return 0;
}

static int xwalk(instance *I, const char *zone, uint32_t serial, xcol *c)
{
    const xfr_source *src = xfr_source_find(instance_block(I, 0), "kubernetes");
    assert_non_null(src);
    uint8_t z[DNAME_MAX];
    assert_true(dname_from_str(z, zone) > 0);
    memset(c, 0, sizeof *c);
    return src->walk(src->data, z, serial, xcollect, c);
}

#define XS "testns.svc.cluster.local."
#define KD "kube-dns.kube-system.svc.cluster.local."

/* CoreDNS's plugin/kubernetes Transfer(), on the acceptance fixture. */
static const char *const xfr_want[] = {
    NULL,                                                   /* SOA */
    "cluster.local. 5 IN NS " KD,
    KD " 0 IN A 10.96.0.10",
    "external." XS " 5 IN CNAME ext.interwebs.test.",
    "external-to-service." XS " 5 IN CNAME svc1.testns.svc.cluster.local.",
    "hdls1." XS " 5 IN A 172.0.0.2",
    "172-0-0-2.hdls1." XS " 5 IN A 172.0.0.2",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 25 80 172-0-0-2.hdls1." XS,
    "hdls1." XS " 5 IN A 172.0.0.3",
    "172-0-0-3.hdls1." XS " 5 IN A 172.0.0.3",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 25 80 172-0-0-3.hdls1." XS,
    "hdls1." XS " 5 IN A 172.0.0.4",
    "dup-name.hdls1." XS " 5 IN A 172.0.0.4",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 25 80 dup-name.hdls1." XS,
    "hdls1." XS " 5 IN A 172.0.0.5",
    "dup-name.hdls1." XS " 5 IN A 172.0.0.5",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 25 80 dup-name.hdls1." XS,
    "hdls1." XS " 5 IN AAAA 5678:abcd::1",
    "5678-abcd--1.hdls1." XS " 5 IN AAAA 5678:abcd::1",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 50 80 5678-abcd--1.hdls1." XS,
    "hdls1." XS " 5 IN AAAA 5678:abcd::2",
    "5678-abcd--2.hdls1." XS " 5 IN AAAA 5678:abcd::2",
    "_http._tcp.hdls1." XS " 5 IN SRV 0 50 80 5678-abcd--2.hdls1." XS,
    "hdlsprtls." XS " 5 IN A 172.0.0.20",
    "172-0-0-20.hdlsprtls." XS " 5 IN A 172.0.0.20",
    KD " 5 IN A 10.96.0.10",
    KD " 5 IN SRV 0 100 53 " KD,
    "_dns._udp." KD " 5 IN SRV 0 100 53 " KD,
    KD " 5 IN SRV 0 100 53 " KD,
    "_dns-tcp._tcp." KD " 5 IN SRV 0 100 53 " KD,
    "svc-dual-stack." XS " 5 IN A 10.0.0.3",
    "svc-dual-stack." XS " 5 IN AAAA 10::3",
    "svc-dual-stack." XS " 5 IN SRV 0 100 80 svc-dual-stack." XS,
    "_http._tcp.svc-dual-stack." XS " 5 IN SRV 0 100 80 svc-dual-stack." XS,
    "svc1." XS " 5 IN A 10.0.0.1",
    "svc1." XS " 5 IN SRV 0 100 80 svc1." XS,
    "_http._tcp.svc1." XS " 5 IN SRV 0 100 80 svc1." XS,
    "svc1.unexposedns.svc.cluster.local. 5 IN A 10.0.0.2",
    "svc1.unexposedns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.unexposedns.svc.cluster.local.",
    "_http._tcp.svc1.unexposedns.svc.cluster.local. 5 IN SRV 0 100 80 "
        "svc1.unexposedns.svc.cluster.local.",
    "svc6." XS " 5 IN AAAA 1234:abcd::1",
    "svc6." XS " 5 IN SRV 0 100 80 svc6." XS,
    "_http._tcp.svc6." XS " 5 IN SRV 0 100 80 svc6." XS,
    "svcempty." XS " 5 IN A 10.0.0.4",
    "svcempty." XS " 5 IN SRV 0 100 80 svcempty." XS,
    "_http._tcp.svcempty." XS " 5 IN SRV 0 100 80 svcempty." XS,
    NULL,                                                   /* SOA */
};

static void test_transfer(void **state)
{
    (void)state;
    setenv("TOPODNS_SELF_IPS", "10.244.0.20", 1);
    instance *I = cluster("", "cluster.json");
    kube *k = kube_inst(I);
    xcol *c = malloc(sizeof *c);
    size_t nwant = sizeof xfr_want / sizeof xfr_want[0];
    assert_int_equal(xwalk(I, "cluster.local.", 0, c), XFR_OK);
    if (c->n != nwant) {
        for (unsigned i = 0; i < c->n; i++)
            print_message("  %s\n", c->recs[i]);
        fail_msg("%u records, want %zu", c->n, nwant);
    }
    char soa[256];
    snprintf(soa, sizeof soa, "cluster.local. 5 IN SOA ns.dns.cluster.local. "
             "hostmaster.cluster.local. %u 7200 1800 86400 5", store_serial(k->st));
    for (size_t i = 0; i < nwant; i++)
        assert_string_equal(c->recs[i], xfr_want[i] ? xfr_want[i] : soa);
    /* IXFR: at the store's serial the SOA alone, else everything */
    assert_int_equal(xwalk(I, "cluster.local.", store_serial(k->st), c), XFR_OK);
    assert_int_equal(c->n, 1);
    assert_string_equal(c->recs[0], soa);
    assert_int_equal(xwalk(I, "cluster.local.", store_serial(k->st) - 1, c), XFR_OK);
    assert_int_equal(c->n, nwant);
    /* only the forward zones, by their apex; case does not matter */
    assert_int_equal(xwalk(I, "CLUSTER.local.", 0, c), XFR_OK);
    assert_int_equal(xwalk(I, "svc.cluster.local.", 0, c), XFR_NOTAUTH);
    assert_int_equal(xwalk(I, "in-addr.arpa.", 0, c), XFR_NOTAUTH);
    assert_int_equal(xwalk(I, "example.org.", 0, c), XFR_NOTAUTH);
    /* a sink that stops ends the walk */
    memset(c, 0, sizeof *c);
    c->stop_at = 4;
    const xfr_source *src = xfr_source_find(instance_block(I, 0), "kubernetes");
    assert_int_equal(src->walk(src->data, k->zwire[0], 0, xcollect, c), XFR_FAIL);
    assert_int_equal(c->n, 4);
    instance_free(I);

    /* `namespaces testns`: kube-system's and unexposedns's Services are
     * left out (the NS records still name kube-dns) */
    I = cluster("namespaces testns", "cluster.json");
    assert_int_equal(xwalk(I, "cluster.local.", 0, c), XFR_OK);
    assert_int_equal(c->n, nwant - 8);
    assert_string_equal(c->recs[1], xfr_want[1]);
    for (unsigned i = 3; i < c->n; i++)
        assert_null(strstr(c->recs[i], "kube-system") ? c->recs[i] :
                    strstr(c->recs[i], "unexposedns"));
    instance_free(I);
    free(c);
}

/* ---- setup ------------------------------------------------------------------------------ */

static void conf_fails(const char *block, const char *msg)
{
    char conf[1024], err[1024] = "";
    snprintf(conf, sizeof conf, ".:53 {\n%s\n}\n", block);
    instance *ins = load_conf(conf, err, sizeof err);
    if (ins) {
        instance_free(ins);
        fail_msg("loaded: %s", block);
    }
    if (!strstr(err, msg))
        fail_msg("error '%s' lacks '%s'", err, msg);
}

static void conf_ok(const char *block)
{
    char conf[1024], err[1024] = "";
    snprintf(conf, sizeof conf, ".:53 {\n%s\n}\n", block);
    instance *ins = load_conf(conf, err, sizeof err);
    if (!ins)
        fail_msg("%s: %s", block, err);
    instance_free(ins);
}

static void test_setup(void **state)
{
    (void)state;
    conf_ok("kubernetes cluster.local { ttl 3600 }");
    conf_ok("kubernetes cluster.local { ttl 0 }");
    conf_ok("kubernetes cluster.local 10.0.0.0/24 { endpoint http://127.0.0.1:1 https://x\n"
            "pods insecure\nendpoint_pod_names\nnoendpoints\nfallthrough in-addr.arpa\n"
            "ignore empty_service\nignore\nstartup_timeout 1s\napiserver_qps 10\n"
            "apiserver_burst 20\napiserver_max_inflight 5\n"
            "labels environment in (staging, qa),application=nginx\n"
            "namespaces a b\ntls a b c\nkubeconfig /x ctx }");
    conf_ok("kubernetes cluster.local { namespace_labels team=x,!legacy }");
    conf_fails("kubernetes cluster.local { ttl 3601 }", "ttl must be in range [0, 3600]");
    conf_fails("kubernetes cluster.local { ttl -1 }", "ttl must be in range [0, 3600]");
    conf_fails("kubernetes cluster.local { ttl x }", "invalid ttl");
    conf_fails("kubernetes cluster.local { pods bogus }", "invalid value for pods");
    conf_fails("kubernetes cluster.local { bogus }", "unknown property 'bogus'");
    conf_fails("kubernetes cluster.local { upstream }", "unknown property 'upstream'");
    conf_fails("kubernetes cluster.local { resyncperiod 1m }", "unknown property");
    conf_fails("kubernetes cluster.local { ignore nothing }", "unable to parse ignore value");
    conf_fails("kubernetes cluster.local { zonal\nnoendpoints }", "zonal requires the endpoint cache");
    conf_fails("kubernetes cluster.local { namespaces a\nnamespace_labels x=y }", "cannot both be set");
    conf_fails("kubernetes cluster.local { labels a in () }", "invalid label selector");
    conf_fails("kubernetes cluster.local { multicluster 10.0.0.0/99 }", "invalid CIDR");
    conf_fails("kubernetes cluster.local { tls a b }", "Wrong argument count");
    conf_fails("kubernetes cluster.local { endpoint_pod_names x }", "Wrong argument count");
    conf_fails("kubernetes in-addr.arpa 10.0.0.0/8", "non-reverse zone name must be used");
    conf_fails("kubernetes cluster.local 10.233.0.0/33", ":2: invalid CIDR '10.233.0.0/33'");
    /* regression: these were accepted and failed at every request; now
     * startup stops at the URL's line and token */
    conf_fails("kubernetes cluster.local {\nendpoint ftp://10.0.0.1\n}",
               ":3: invalid endpoint 'ftp://10.0.0.1': want http:// or https:// near 'ftp://10.0.0.1'");
    conf_fails("kubernetes cluster.local {\nendpoint https://[fd00::1:443 https://x\n}",
               ":3: invalid endpoint 'https://[fd00::1:443': Bad IPv6 address near "
               "'https://[fd00::1:443'");
    conf_fails("kubernetes cluster.local {\nendpoint http://127.0.0.1:99999\n}",
               ":3: invalid endpoint 'http://127.0.0.1:99999': Port number was not a decimal number "
               "between 0 and 65535 near 'http://127.0.0.1:99999'");
    conf_fails("kubernetes cluster.local {\nendpoint \"http://127.0.0.1:8001\r\nX: y\"\n}",
               ":3: invalid endpoint");
    conf_fails("kubernetes cluster.local {\nendpoint \"http://127.0.0.1:8001/\r\nX: y\"\n}",
               "Bad path");
    conf_fails("kubernetes cluster.local {\nendpoint http://t@127.0.0.1:8001\n}", "user info");
    conf_fails("kubernetes cluster.local\nkubernetes other.local", "only be used once per Server Block");
}

static void test_zones(void **state)
{
    (void)state;
    char err[1024] = "";
    instance *ins = load_conf("cluster.local:53 10.0.0.0/23:53 {\n kubernetes\n}\n", err, sizeof err);
    if (!ins)
        fail_msg("%s", err);
    kube *k = kube_inst(ins);
    assert_int_equal(k->nzones, 3);
    assert_string_equal(k->zones[0], "cluster.local.");
    assert_string_equal(k->zones[1], "0.0.10.in-addr.arpa.");
    assert_string_equal(k->zones[2], "1.0.10.in-addr.arpa.");
    assert_int_equal(k->primary, 0);
    instance_free(ins);
    ins = load_conf(".:53 {\n kubernetes 10.0.0.0/24 Cluster.Local. example.org\n}\n", err, sizeof err);
    assert_non_null(ins);
    k = kube_inst(ins);
    assert_string_equal(k->zones[0], "0.0.10.in-addr.arpa.");
    assert_string_equal(k->zones[1], "cluster.local.");
    assert_int_equal(k->primary, 1);
    instance_free(ins);
    /* kubespray's default: a /18 is the 64 zones 0..63.233.10.in-addr.arpa. */
    ins = load_conf(".:53 {\n kubernetes cluster.local in-addr.arpa ip6.arpa 10.233.0.0/18\n}\n",
                    err, sizeof err);
    if (!ins)
        fail_msg("%s", err);
    k = kube_inst(ins);
    assert_int_equal(k->nzones, 3 + 64);
    assert_string_equal(k->zones[3], "0.233.10.in-addr.arpa.");
    assert_string_equal(k->zones[66], "63.233.10.in-addr.arpa.");
    assert_int_equal(k->zrun[3], 64);               /* one run: the parent compared once */
    assert_int_equal(k->zrun[0], 1);
    static const struct { const char *name; int zone; } m[] = {
        { "5.0.233.10.in-addr.arpa.", 3 },          /* first /24 of the /18 */
        { "0.233.10.in-addr.arpa.", 3 },            /* its apex */
        { "1.63.233.10.in-addr.arpa.", 66 },        /* last /24 */
        { "1.64.233.10.in-addr.arpa.", 1 },         /* past the /18: in-addr.arpa. */
        { "233.10.in-addr.arpa.", 1 },              /* the /16 parent is not one of them */
        { "web.apps.svc.cluster.local.", 0 },
        { "cluster.local.", 0 },
        { "x.ip6.arpa.", 2 },
        { "example.org.", -1 },
        { ".", -1 },
    };
    for (size_t i = 0; i < sizeof m / sizeof *m; i++) {
        uint8_t w[DNAME_MAX];
        assert_true(dname_from_str(w, m[i].name) > 0);
        if (kube_match_zone(k, w) != m[i].zone)
            fail_msg("%s: zone %d, want %d", m[i].name, kube_match_zone(k, w), m[i].zone);
    }
    instance_free(ins);
}

/* ---- pre-rendered answers (rendered.c) ------------------------------------------------ */

typedef struct wres {
    uint8_t wire[8192];
    size_t len;
    int raw;                        /* answered by req_write_raw: no records
                                     * in r->resp, yet ANCOUNT > 0 */
} wres;

/* One query as a client's UDP query (the fast path serves only those):
 * the reply's octets. */
static void wquery(instance *I, const char *name, uint16_t qtype, uint16_t edns, wres *out)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 0x4242, .flags = F_RD, .qname = qn, .qtype = qtype, .qclass = C_IN,
                    .edns_size = edns };
    uint8_t w[512];
    int n = msg_query(&q, w, sizeof w);
    assert_true(n > 0);
    dns_req *r = req_new_internal(I, NULL, w, (size_t)n, "192.0.2.1");
    assert_non_null(r);
    r->proto = PROTO_UDP;
    req_run(r);
    assert_true(r->written);
    size_t len = 0;
    const uint8_t *p = req_reply_wire(r, &len);
    assert_true(len >= 12 && len <= sizeof out->wire);
    memcpy(out->wire, p, len);
    out->len = len;
    out->raw = r->resp.nrecs == 0 && (p[6] | p[7]) != 0;
    req_free(r);
}

/* the slow path's reply, then the fast path's twice: a miss that fills
 * the memo and a hit from it, both the same octets as the slow path's */
static void same_both_ways(instance *I, void *k, const char *name, uint16_t qtype, uint16_t edns,
                           int hit)
{
    wres *slow = calloc(1, sizeof *slow), *fast = calloc(1, sizeof *fast);
    kubernetes_set_prerender(k, 0);
    wquery(I, name, qtype, edns, slow);
    assert_false(slow->raw);
    kubernetes_set_prerender(k, 1);
    for (int i = 0; i < 3; i++) {
        wquery(I, name, qtype, edns, fast);
        assert_int_equal(fast->len, slow->len);
        assert_memory_equal(fast->wire, slow->wire, slow->len);
        if (i > 0)
            assert_int_equal(fast->raw, hit);
    }
    free(slow);
    free(fast);
}

static void test_rendered_answers(void **state)
{
    (void)state;
    instance *I = cluster("", "cluster.json");
    void *k = kube_inst(I);
    same_both_ways(I, k, "svc1" S, T_A, 1232, 1);           /* ClusterIP */
    same_both_ways(I, k, "svc1" S, T_A, 0, 1);              /* no EDNS */
    same_both_ways(I, k, "hdls1" S, T_A, 1232, 1);          /* headless */
    same_both_ways(I, k, "hdls1" S, T_AAAA, 0, 1);
    /* the qname's case comes from the query, on a hit too */
    same_both_ways(I, k, "HdLs1.TESTNS.svc.Cluster.Local.", T_A, 1232, 1);
    same_both_ways(I, k, "svc1.TestNS.SVC.cluster.local.", T_A, 0, 1);
    /* not pre-rendered: other qtypes, names without addresses, errors */
    same_both_ways(I, k, "_http._tcp.svc1" S, T_SRV, 1232, 0);
    same_both_ways(I, k, "svc1" S, T_TXT, 1232, 0);
    same_both_ways(I, k, "svc1" S, T_AAAA, 1232, 0);        /* NODATA */
    same_both_ways(I, k, "nosuch" S, T_A, 1232, 0);         /* NXDOMAIN */
    same_both_ways(I, k, "external" S, T_A, 1232, 0);       /* CNAME */
    instance_free(I);
}

/* A store write makes the next query take the slow path: the change is
 * answered at once, then memoised again. */
static void test_rendered_invalidation(void **state)
{
    (void)state;
    instance *I = cluster("", "cluster.json");
    void *k = kube_inst(I);
    store *st = kubernetes_store(k);
    wres *x = calloc(1, sizeof *x);
    kubernetes_set_prerender(k, 1);
    wquery(I, "svc1" S, T_A, 1232, x);
    wquery(I, "svc1" S, T_A, 1232, x);
    assert_true(x->raw);
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"svc1\",\"namespace\":\"testns\"},"
                "\"spec\":{\"clusterIP\":\"10.0.0.99\",\"clusterIPs\":[\"10.0.0.99\"],"
                "\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80}]}}");
    wquery(I, "svc1" S, T_A, 1232, x);
    assert_false(x->raw);
    static const uint8_t ip[4] = { 10, 0, 0, 99 };
    assert_memory_equal(x->wire + x->len - 11 - 4, ip, 4);  /* the last A record, before OPT */
    wquery(I, "svc1" S, T_A, 1232, x);
    assert_true(x->raw);
    assert_memory_equal(x->wire + x->len - 11 - 4, ip, 4);
    /* an unrelated write invalidates too (the memo is validated by the
     * store's version, not per object) */
    upsert_json(st, store_upsert_namespace, "{\"metadata\":{\"name\":\"brandnew\"}}");
    wquery(I, "svc1" S, T_A, 1232, x);
    assert_false(x->raw);
    free(x);
    instance_free(I);
}

/* Off (TOPODNS_NO_PRERENDER), internal requests, and replies that do not
 * fit the client uncompressed: always the slow path. */
static void test_rendered_not_used(void **state)
{
    (void)state;
    instance *I = cluster("", "cluster.json");
    void *k = kube_inst(I);
    store *st = kubernetes_store(k);
    wres *x = calloc(1, sizeof *x);
    kubernetes_set_prerender(k, 0);
    for (int i = 0; i < 3; i++) {
        wquery(I, "svc1" S, T_A, 1232, x);
        assert_false(x->raw);
    }
    kubernetes_set_prerender(k, 1);
    uint8_t qn[DNAME_MAX];
    dname_from_str(qn, "svc1" S);
    dns_query q = { .id = 1, .qname = qn, .qtype = T_A, .qclass = C_IN, .edns_size = 1232 };
    for (int i = 0; i < 3; i++) {
        dns_req *r = test_query(I, &q, "192.0.2.1");    /* PROTO_INTERNAL */
        assert_non_null(r);
        assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
        req_free(r);
    }
    /* 150 addresses: over 512 octets without EDNS, compressed over 1480
     * with it; the slow path truncates or compresses, every time */
    static char json[65536];
    size_t o = (size_t)snprintf(json, sizeof json,
        "{\"metadata\":{\"name\":\"big-1\",\"namespace\":\"testns\",\"labels\":{"
        "\"kubernetes.io/service-name\":\"big\"}},\"addressType\":\"IPv4\",\"endpoints\":[");
    for (int i = 0; i < 150; i++)
        o += (size_t)snprintf(json + o, sizeof json - o, "%s{\"addresses\":[\"10.9.%d.%d\"]}",
                              i ? "," : "", i / 100, i % 100 + 1);
    snprintf(json + o, sizeof json - o, "],\"ports\":[{\"name\":\"p\",\"port\":9}]}");
    upsert_json(st, store_upsert_service, "{\"metadata\":{\"name\":\"big\",\"namespace\":\"testns\"},"
                "\"spec\":{\"clusterIP\":\"None\",\"clusterIPs\":[\"None\"]}}");
    upsert_json(st, store_upsert_slice, json);
    same_both_ways(I, k, "big" S, T_A, 0, 0);
    same_both_ways(I, k, "big" S, T_A, 4096, 0);
    free(x);
    instance_free(I);
}

int main(void)
{
    store_reader_register();
    const struct CMUnitTest pure[] = {
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_grammar_multicluster),
        cmocka_unit_test(test_endpoint_names),
        cmocka_unit_test(test_pod_labels),
        cmocka_unit_test(test_reverse_names),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_setup),
        cmocka_unit_test(test_zones),
    };
    const struct CMUnitTest rows[] = {
        cmocka_unit_test(test_clusterip),
        cmocka_unit_test(test_apex),
        cmocka_unit_test(test_headless),
        cmocka_unit_test(test_external),
        cmocka_unit_test(test_case),
        cmocka_unit_test(test_ptr),
        cmocka_unit_test(test_unsynced),
        cmocka_unit_test(test_outside),
        cmocka_unit_test(test_large_headless),
        cmocka_unit_test(test_bounded_answers),
        cmocka_unit_test(test_opt_ignore_empty),
        cmocka_unit_test(test_opt_ttl),
        cmocka_unit_test(test_opt_namespaces),
        cmocka_unit_test(test_opt_namespace_labels),
        cmocka_unit_test(test_opt_pods),
        cmocka_unit_test(test_opt_noendpoints),
        cmocka_unit_test(test_opt_fallthrough),
        cmocka_unit_test(test_opt_endpoint_pod_names),
        cmocka_unit_test(test_zonal),
        cmocka_unit_test(test_external_upstream),
        cmocka_unit_test(test_external_nesting),
        cmocka_unit_test(test_external_async),
        cmocka_unit_test(test_programming_metric),
        cmocka_unit_test(test_transfer),
        cmocka_unit_test(test_rendered_answers),
        cmocka_unit_test(test_rendered_invalidation),
        cmocka_unit_test(test_rendered_not_used),
    };
    int rc = cmocka_run_group_tests_name("pure", pure, NULL, NULL);
    rc += cmocka_run_group_tests_name("acceptance", rows, setup_default, teardown_default);
    store_reader_unregister();
    return rc;
}
