/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_k8s_external.c — the k8s_external plugin on its own, fed by a
 * source of the test's making (server/external.h, published as the
 * kubernetes plugin would publish its own): A/AAAA/SRV answers from the
 * source's items, the apex's SOA and NS and ns1's addresses, NXDOMAIN with
 * the SOA, the ttl option; startup without a source fails; bad stanza
 * lines fail with the token.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "server/external.h"
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

extern const plugin_def plugin_k8s_external;

/* The cluster: web.default has external IP 203.0.113.10 and 2001:db8::10,
 * port 80/tcp named http; empty.default exists with no address. */
static int fake_lookup(void *data, const uint8_t *name, const uint8_t *zone, uint16_t qtype,
                       int headless, ext_emit_fn emit, void *sink)
{
    (void)data;
    (void)qtype;
    (void)headless;
    char n[DNAME_STR_MAX], z[DNAME_STR_MAX], want[DNAME_STR_MAX * 2];
    dname_to_str(n, sizeof n, name);
    dname_to_str(z, sizeof z, zone);
    snprintf(want, sizeof want, "web.default.%s", z);
    if (!strcmp(n, want) || (!strncmp(n, "_http._tcp.", 11) && !strcmp(n + 11, want))) {
        ext_item it = { .kind = EXT_ADDR, .family = 4, .addr = { 203, 0, 113, 10 }, .port = 80,
                        .port_name = "http", .proto = "tcp", .ttl = 5 };
        uint8_t own[DNAME_MAX];
        dname_from_str(own, want);
        it.name = own;
        if (emit(sink, &it) < 0)
            return -1;
        it.family = 6;
        memset(it.addr, 0, sizeof it.addr);
        it.addr[0] = 0x20, it.addr[1] = 0x01, it.addr[2] = 0x0d, it.addr[3] = 0xb8;
        it.addr[15] = 0x10;
        return emit(sink, &it) < 0 ? -1 : RC_NOERROR;
    }
    snprintf(want, sizeof want, "empty.default.%s", z);
    return !strcmp(n, want) ? RC_NOERROR : RC_NXDOMAIN;
}

static int fake_ns_addrs(void *data, const uint8_t *zone, int headless, ext_emit_fn emit,
                         void *sink)
{
    (void)data;
    (void)zone;
    (void)headless;
    ext_item it = { .kind = EXT_ADDR, .family = 4, .addr = { 192, 0, 2, 53 }, .port = -1,
                    .port_name = "", .proto = "" };
    return emit(sink, &it);
}

static uint32_t fake_serial(void *data, const uint8_t *zone)
{
    (void)data;
    (void)zone;
    return 1234;
}

static instance *load_with_source(const char *stanza)
{
    char cf[512];
    snprintf(cf, sizeof cf, "example.com {\n%s\n}\n", stanza);
    instance *ins = test_must_load(cf);
    external_source src = { .lookup = fake_lookup, .ns_addrs = fake_ns_addrs,
                            .serial = fake_serial };
    assert_int_equal(external_source_publish(instance_block(ins, 0), "kubernetes", &src), 0);
    void *inst = test_plugin_inst(ins, &plugin_k8s_external);
    assert_non_null(inst);
    char err[256] = "";
    if (plugin_k8s_external.start(inst, ins, err, sizeof err) < 0)
        fail_msg("start: %s", err);
    return ins;
}

static void test_k8s_external_answers(void **state)
{
    (void)state;
    instance *ins = load_with_source("    k8s_external example.com");
    test_expect(ins, "web.default.example.com.", T_A, RC_NOERROR,
                "web.default.example.com. 5 IN A 203.0.113.10");
    test_expect(ins, "web.default.example.com.", T_AAAA, RC_NOERROR,
                "web.default.example.com. 5 IN AAAA 2001:db8::10");
    dns_req *r = test_ask(ins, "web.default.example.com.", T_A, "192.0.2.1");
    assert_true(r->resp.flags & F_AA);
    req_free(r);
    /* NXDOMAIN and NODATA carry the apex's SOA, MINIMUM the ttl */
    const char *soa = "example.com. 5 IN SOA ns1.dns.example.com. hostmaster.dns.example.com. "
                      "1234 7200 1800 86400 5";
    char got[1024];
    r = test_ask(ins, "nope.default.example.com.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NXDOMAIN);
    assert_string_equal(test_section(&r->resp, SEC_AUTHORITY, got, sizeof got), soa);
    req_free(r);
    r = test_ask(ins, "empty.default.example.com.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_string_equal(test_section(&r->resp, SEC_AUTHORITY, got, sizeof got), soa);
    req_free(r);
    /* the apex */
    test_expect(ins, "example.com.", T_SOA, RC_NOERROR, soa);
    test_expect(ins, "example.com.", T_NS, RC_NOERROR, "example.com. 5 IN NS ns1.dns.example.com.");
    test_expect(ins, "ns1.dns.example.com.", T_A, RC_NOERROR, "ns1.dns.example.com. 5 IN A 192.0.2.53");
    r = test_ask(ins, "dns.example.com.", T_A, "192.0.2.1");        /* empty non-terminal */
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    req_free(r);
    r = test_ask(ins, "ns2.dns.example.com.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NXDOMAIN);
    req_free(r);
    instance_free(ins);

    /* ttl and apex options */
    ins = load_with_source("    k8s_external example.com {\n        ttl 60\n        apex ext\n    }");
    test_expect(ins, "web.default.example.com.", T_A, RC_NOERROR,
                "web.default.example.com. 60 IN A 203.0.113.10");
    test_expect(ins, "example.com.", T_NS, RC_NOERROR, "example.com. 60 IN NS ns1.ext.example.com.");
    instance_free(ins);
}

static void test_k8s_external_srv(void **state)
{
    (void)state;
    instance *ins = load_with_source("    k8s_external example.com");
    dns_req *r = test_ask(ins, "_http._tcp.web.default.example.com.", T_SRV, "192.0.2.1");
    assert_non_null(r);
    char got[1024];
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_true(msg_count(&r->resp, SEC_ANSWER) >= 1);
    assert_non_null(strstr(got, "_http._tcp.web.default.example.com. 5 IN SRV "));
    assert_non_null(strstr(got, " 80 web.default.example.com."));
    req_free(r);
    instance_free(ins);
}

static void test_k8s_external_setup(void **state)
{
    (void)state;
    test_load_fails("example.com {\n    k8s_external {\n        ttl 3601\n    }\n}\n",
                    ":3: plugin/k8s_external: ttl must be in range [0, 3600]: 3601");
    test_load_fails("example.com {\n    k8s_external {\n        ttl five\n    }\n}\n",
                    "strconv.Atoi: parsing \"five\": invalid syntax");
    test_load_fails("example.com {\n    k8s_external {\n        resync 1\n    }\n}\n",
                    "unknown property 'resync'");
    test_load_fails("example.com {\n    k8s_external {\n        apex\n    }\n}\n",
                    "Wrong argument count");
    /* no source in the block: start fails */
    instance *ins = test_must_load("example.com {\n    k8s_external\n}\n");
    char err[256] = "";
    assert_int_equal(plugin_k8s_external.start(test_plugin_inst(ins, &plugin_k8s_external), ins,
                                               err, sizeof err), -1);
    assert_string_equal(err, "plugin/k8s_external: kubernetes plugin not loaded");
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_k8s_external_answers),
        cmocka_unit_test(test_k8s_external_srv),
        cmocka_unit_test(test_k8s_external_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
