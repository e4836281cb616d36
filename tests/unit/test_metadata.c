/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_metadata.c — the metadata plugin, the request's metadata store
 * (req_meta_set/req_meta_get) and its providers, through an instance
 * (testenv's test_load/test_query): the kubernetes plugin's labels from the
 * query name (service, namespace, kind, endpoint, port and protocol, zonal
 * zone, parse errors) and, with `pods verified`, from the client's pod; the
 * log plugin's log/type and log/class; nothing without the metadata plugin
 * or outside its zones; replacing a value and the store's limit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "testenv.h"

static const char client_pod[] =
    "{\"metadata\":{\"name\":\"client-a\",\"namespace\":\"team\"},\"spec\":{\"nodeName\":\"n1\"},"
    "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.240.0.9\","
    "\"podIPs\":[{\"ip\":\"10.240.0.9\"}]}}";

/* An instance of text whose kubernetes plugin (if any) knows client_pod. */
static instance *load(const char *text)
{
    char err[512] = "";
    instance *ins = test_load(text, err, sizeof err);
    if (!ins)
        print_error("load: %s\n", err);
    assert_non_null(ins);
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++) {
        if (hs[i]->def != &plugin_kubernetes)
            continue;
        cJSON *pod = cJSON_Parse(client_pod);
        assert_int_equal(store_upsert_pod(kubernetes_store(hs[i]->inst), pod), 0);
        cJSON_Delete(pod);
        kubernetes_set_synced(hs[i]->inst, 1);
    }
    return ins;
}

static dns_req *ask(instance *ins, const char *name, uint16_t type, const char *peer)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 1, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    dns_req *r = test_query(ins, &q, peer);
    assert_non_null(r);
    return r;
}

/* The value of label, "<none>" when there is none. */
static const char *val(const dns_req *r, const char *label)
{
    static char buf[256];
    const char *v = req_meta_get(r, label, buf, sizeof buf);
    return v ? v : "<none>";
}

#define K "kubernetes/"

static void kubernetes_names(void **state)
{
    (void)state;
    instance *ins = load(". {\n metadata\n log\n kubernetes cluster.local {\n  pods verified\n }\n}\n");
    dns_req *r = ask(ins, "SvC1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "service"), "svc1");
    assert_string_equal(val(r, K "namespace"), "testns");
    assert_string_equal(val(r, K "kind"), "svc");
    assert_string_equal(val(r, K "endpoint"), "");
    assert_string_equal(val(r, K "port-name"), "");
    assert_string_equal(val(r, K "protocol"), "");
    assert_string_equal(val(r, K "parse-error"), "<none>");
    assert_string_equal(val(r, K "zone"), "<none>");          /* not zonal */
    assert_string_equal(val(r, K "client-namespace"), "team");
    assert_string_equal(val(r, K "client-pod-name"), "client-a");
    assert_string_equal(val(r, "log/type"), "NXDOMAIN");      /* no such service */
    assert_string_equal(val(r, "log/class"), "denial");
    assert_string_equal(val(r, "kubernetes/unknown"), "<none>");
    req_free(r);

    r = ask(ins, "_http._tcp.svc1.testns.svc.cluster.local.", T_SRV, "10.240.0.10");
    assert_string_equal(val(r, K "port-name"), "http");
    assert_string_equal(val(r, K "protocol"), "tcp");
    assert_string_equal(val(r, K "service"), "svc1");
    assert_string_equal(val(r, K "client-namespace"), "<none>");  /* no pod there */
    req_free(r);

    r = ask(ins, "ep1.svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "endpoint"), "ep1");
    req_free(r);

    r = ask(ins, "10-240-0-1.podns.pod.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "kind"), "pod");
    assert_string_equal(val(r, K "service"), "10-240-0-1");
    assert_string_equal(val(r, K "namespace"), "podns");
    req_free(r);

    r = ask(ins, "cluster.local.", T_SOA, "10.240.0.9");
    assert_string_equal(val(r, K "kind"), "");
    assert_string_equal(val(r, K "namespace"), "");
    assert_string_equal(val(r, "log/type"), "NOERROR");
    assert_string_equal(val(r, "log/class"), "success");
    req_free(r);

    r = ask(ins, "a.b.c.svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "parse-error"), "invalid query name");
    assert_string_equal(val(r, K "namespace"), "<none>");
    req_free(r);

    /* outside the plugin's zones: only the client's pod */
    r = ask(ins, "example.org.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "namespace"), "<none>");
    assert_string_equal(val(r, K "client-pod-name"), "client-a");
    assert_string_equal(val(r, "log/type"), "SERVERERROR");  /* SERVFAIL, no next plugin */
    req_free(r);
    instance_free(ins);
}

static void zonal_and_pod_modes(void **state)
{
    (void)state;
    instance *ins = load(". {\n metadata\n kubernetes cluster.local {\n  zonal\n }\n}\n");
    dns_req *r = ask(ins, "us-East-1a.pin._zone.svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "zone"), "us-east-1a");
    assert_string_equal(val(r, K "service"), "svc1");
    /* pods disabled: nothing about the client */
    assert_string_equal(val(r, K "client-namespace"), "<none>");
    req_free(r);
    r = ask(ins, "svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "zone"), "");
    req_free(r);
    instance_free(ins);
}

static void off_without_the_plugin(void **state)
{
    (void)state;
    instance *ins = load(". {\n log\n kubernetes cluster.local {\n  pods verified\n }\n}\n");
    dns_req *r = ask(ins, "svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "namespace"), "<none>");
    assert_string_equal(val(r, K "client-namespace"), "<none>");
    assert_string_equal(val(r, "log/type"), "<none>");
    req_free(r);
    instance_free(ins);

    /* metadata for other zones: the store is on (log/type), no providers */
    ins = load(". {\n metadata example.org\n log\n kubernetes cluster.local\n}\n");
    r = ask(ins, "svc1.testns.svc.cluster.local.", T_A, "10.240.0.9");
    assert_string_equal(val(r, K "namespace"), "<none>");
    assert_string_equal(val(r, "log/type"), "NXDOMAIN");
    req_free(r);
    instance_free(ins);
}

static const char *fixed(const dns_req *r, const char *key, const void *data, char *buf,
                         size_t cap)
{
    (void)r, (void)key;
    snprintf(buf, cap, "%s", (const char *)data);
    return buf;
}

static void store_rules(void **state)
{
    (void)state;
    instance *ins = load(". {\n metadata\n whoami\n}\n");
    dns_req *r = ask(ins, "a.example.", T_A, "10.0.0.1");
    assert_int_equal(req_meta_set(r, "test/a", fixed, "one"), 0);
    assert_string_equal(val(r, "test/a"), "one");
    assert_int_equal(req_meta_set(r, "test/a", fixed, "two"), 0);       /* replaced */
    assert_string_equal(val(r, "test/a"), "two");
    static char keys[REQ_MAX_META][24];
    for (int i = 0; r->nmeta < REQ_MAX_META; i++) {
        snprintf(keys[i], sizeof keys[i], "test/k%d", i);
        assert_int_equal(req_meta_set(r, keys[i], fixed, "x"), 0);
    }
    assert_int_equal(req_meta_set(r, "test/over", fixed, "x"), -1);
    req_free(r);
    instance_free(ins);

    ins = load(". {\n whoami\n}\n");
    r = ask(ins, "a.example.", T_A, "10.0.0.1");
    assert_int_equal(req_meta_set(r, "test/a", fixed, "one"), -1);     /* no metadata plugin */
    assert_string_equal(val(r, "test/a"), "<none>");
    req_free(r);
    instance_free(ins);
}

static void setup_errors(void **state)
{
    (void)state;
    char err[512];
    instance *ins = test_load(". {\n metadata\n metadata\n whoami\n}\n", err, sizeof err);
    assert_null(ins);
    assert_non_null(strstr(err, "Wrong argument count"));
    ins = test_load(". {\n metadata {\n  foo\n }\n whoami\n}\n", err, sizeof err);
    assert_null(ins);
    assert_non_null(strstr(err, "Wrong argument count"));
    ins = test_load(". {\n metadata example.org 10.0.0.0/24\n whoami\n}\n", err, sizeof err);
    assert_non_null(ins);
    instance_free(ins);
}

int main(void)
{
    store_reader_register();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kubernetes_names),
        cmocka_unit_test(zonal_and_pod_modes),
        cmocka_unit_test(off_without_the_plugin),
        cmocka_unit_test(store_rules),
        cmocka_unit_test(setup_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
