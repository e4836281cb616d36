/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_prometheus.c — the prometheus plugin's per-request series on real
 * queries through the real server (testenv.h's registry): requests,
 * responses by rcode and writing plugin, DO requests, sizes, counted with
 * CoreDNS's labels; a chain without the plugin counts nothing; bad
 * stanzas fail with the token.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "runtime/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

#define SRV "dns://:53"

static double value(const char *name, const char *const *labels)
{
    return metrics_value(test_registry(), name, labels);
}

static void test_prometheus_counts(void **state)
{
    (void)state;
    const char *const a4[] = { SRV, "example.org.", "", "udp", "1", "A" };
    const char *const aaaa6[] = { SRV, "example.org.", "", "udp", "2", "AAAA" };
    const char *const ok[] = { SRV, "example.org.", "", "NOERROR", "hosts" };
    const char *const fail[] = { SRV, "example.org.", "", "SERVFAIL", "" };
    const char *const zone[] = { SRV, "example.org.", "" };
    const char *const size[] = { SRV, "example.org.", "", "udp" };
    double b_a4 = value("coredns_dns_requests_total", a4),
           b_6 = value("coredns_dns_requests_total", aaaa6),
           b_ok = value("coredns_dns_responses_total", ok),
           b_fail = value("coredns_dns_responses_total", fail),
           b_do = value("coredns_dns_do_requests_total", zone),
           b_dur = value("coredns_dns_request_duration_seconds", zone),
           b_rs = value("coredns_dns_response_size_bytes", size);
    instance *ins = test_must_load("example.org {\n    prometheus 127.0.0.1:0\n"
                                   "    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n");
    req_free(test_ask(ins, "a.example.org.", T_A, "192.0.2.1"));
    req_free(test_ask(ins, "a.example.org.", T_A, "192.0.2.2"));
    req_free(test_ask(ins, "b.example.org.", T_AAAA, "2001:db8::1"));   /* SERVFAIL */
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, "a.example.org.") > 0);
    dns_query q = { .id = 2, .qname = qn, .qtype = T_A, .qclass = C_IN, .edns_size = 1232,
                    .do_bit = 1 };
    req_free(test_query(ins, &q, "192.0.2.3"));
    q.do_bit = 0;                       /* EDNS without DO: not a DO request */
    req_free(test_query(ins, &q, "192.0.2.4"));
    assert_int_equal(value("coredns_dns_requests_total", a4) - b_a4, 4);
    assert_int_equal(value("coredns_dns_requests_total", aaaa6) - b_6, 1);
    assert_int_equal(value("coredns_dns_responses_total", ok) - b_ok, 4);
    assert_int_equal(value("coredns_dns_responses_total", fail) - b_fail, 1);
    assert_int_equal(value("coredns_dns_do_requests_total", zone) - b_do, 1);
    assert_int_equal(value("coredns_dns_request_duration_seconds", zone) - b_dur, 5);
    assert_int_equal(value("coredns_dns_response_size_bytes", size) - b_rs, 5);
    instance_free(ins);

    /* the same queries without the plugin: nothing counted */
    ins = test_must_load("example.org {\n    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n");
    double before = value("coredns_dns_requests_total", a4);
    req_free(test_ask(ins, "a.example.org.", T_A, "192.0.2.1"));
    assert_true(value("coredns_dns_requests_total", a4) == before);
    instance_free(ins);
}

static void test_prometheus_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    prometheus 127.0.0.1:0 {\n        colour\n    }\n}\n",
                    "plugin/prometheus: unknown option: colour");
    test_load_fails(". {\n    prometheus {\n        runtime_metrics yes\n    }\n}\n",
                    "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prometheus_counts),
        cmocka_unit_test(test_prometheus_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
