/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_acl.c — the acl plugin through an instance (testenv's test_load and
 * test_query), clients given by address: IPv4 and IPv6 networks, host bits
 * in a CIDR, `*` in type and net sections, the first matching policy, allow
 * ending the check, a rule without a match passing on to the next, zones
 * (the longest of a rule labels the metrics), the reply's EDE option and
 * OPT record, drop without a reply, and the counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "runtime/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "testenv.h"

/* The outcome of one query: "REFUSED/15", "NOERROR/17", "NOERROR" (passed
 * on to whoami), "drop". */
static const char *ask(instance *ins, const char *name, uint16_t type, const char *peer,
                       char *buf, size_t cap)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 1, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    dns_req *r = test_query(ins, &q, peer);
    assert_non_null(r);
    char rc[16];
    if (!r->written) {
        snprintf(buf, cap, "drop");
    } else {
        uint16_t len;
        const uint8_t *ede = edns_opt_find(&r->resp.edns, EDNS_OPT_EDE, &len);
        if (ede && len >= 2)
            snprintf(buf, cap, "%s/%d", rcode_name(r->resp.rcode, rc), ede[0] << 8 | ede[1]);
        else
            snprintf(buf, cap, "%s", rcode_name(r->resp.rcode, rc));
    }
    req_free(r);
    return buf;
}

#define ASK(ins, name, type, peer) ask(ins, name, type, peer, buf, sizeof buf)

static void networks(void **state)
{
    (void)state;
    char buf[32];
    instance *ins = test_must_load(". {\n acl {\n"
                         "  block net 10.1.2.3/16 2001:db8::/32\n"
                         "  filter net 192.0.2.1 ::1\n"
                         "  drop net 198.51.100.0/25\n"
                         " }\n whoami\n}\n");
    assert_string_equal(ASK(ins, "a.", T_A, "10.1.200.1"), "REFUSED/15");   /* host bits ignored */
    assert_string_equal(ASK(ins, "a.", T_A, "10.2.0.1"), "NOERROR");
    assert_string_equal(ASK(ins, "a.", T_A, "2001:db8:1::5"), "REFUSED/15");
    assert_string_equal(ASK(ins, "a.", T_A, "2001:db9::5"), "NOERROR");
    assert_string_equal(ASK(ins, "a.", T_A, "192.0.2.1"), "NOERROR/17");    /* a /32 */
    assert_string_equal(ASK(ins, "a.", T_A, "192.0.2.2"), "NOERROR");
    assert_string_equal(ASK(ins, "a.", T_A, "::1"), "NOERROR/17");          /* a /128 */
    assert_string_equal(ASK(ins, "a.", T_A, "::2"), "NOERROR");
    assert_string_equal(ASK(ins, "a.", T_A, "198.51.100.127"), "drop");
    assert_string_equal(ASK(ins, "a.", T_A, "198.51.100.128"), "NOERROR");
    /* an IPv4-mapped client is its IPv4 address (Go's To4) */
    assert_string_equal(ASK(ins, "a.", T_A, "::ffff:10.1.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "a.", T_A, "::ffff:192.0.2.2"), "NOERROR");
    instance_free(ins);
}

static void types_and_order(void **state)
{
    (void)state;
    char buf[32];
    instance *ins = test_must_load(". {\n acl example.org {\n"
                         "  allow type TXT\n"
                         "  block type A AAAA net 10.0.0.0/8\n"
                         "  filter type * NOTATYPE\n"      /* `*` ends the section */
                         " }\n"
                         " acl {\n"
                         "  block type TXT MX\n"
                         " }\n whoami\n}\n");
    assert_string_equal(ASK(ins, "www.example.org.", T_A, "10.0.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "www.example.org.", T_AAAA, "10.0.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "www.example.org.", T_A, "11.0.0.1"), "NOERROR/17");
    assert_string_equal(ASK(ins, "www.example.org.", T_SRV, "10.0.0.1"), "NOERROR/17");
    /* allow decides: the second rule's TXT block is not reached */
    assert_string_equal(ASK(ins, "www.example.org.", T_TXT, "10.0.0.1"), "NOERROR");
    /* outside the first rule's zone, the second decides */
    assert_string_equal(ASK(ins, "www.example.net.", T_TXT, "10.0.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "www.example.net.", T_MX, "10.0.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "www.example.net.", T_A, "10.0.0.1"), "NOERROR");
    instance_free(ins);
}

/* A rule with no matching policy leaves the query to the next rule. */
static void no_match_goes_on(void **state)
{
    (void)state;
    char buf[32];
    instance *ins = test_must_load(". {\n acl {\n  block net 10.0.0.0/8\n }\n"
                         " acl {\n  filter type A\n }\n whoami\n}\n");
    assert_string_equal(ASK(ins, "a.", T_A, "192.0.2.1"), "NOERROR/17");
    assert_string_equal(ASK(ins, "a.", T_A, "10.0.0.1"), "REFUSED/15");
    assert_string_equal(ASK(ins, "a.", T_TXT, "192.0.2.1"), "NOERROR");
    instance_free(ins);
}

static void reply_and_counters(void **state)
{
    (void)state;
    char buf[32];
    instance *ins = test_must_load("example.org:1053 {\n acl org. sub.example.org {\n"
                         "  block net 10.0.0.1\n  drop net 10.0.0.2\n"
                         " }\n whoami\n}\n");
    uint8_t qn[DNAME_MAX];
    dname_from_str(qn, "x.sub.example.org.");
    dns_query q = { .id = 7, .flags = F_RD, .qname = qn, .qtype = T_A, .qclass = C_IN };
    dns_req *r = test_query(ins, &q, "10.0.0.1");
    assert_non_null(r);
    assert_int_equal(r->resp.rcode, RC_REFUSED);
    assert_false(r->resp.flags & F_AA);
    assert_true(r->resp.flags & F_RD);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_true(r->resp.edns.present);          /* its own OPT, without EDNS in the query */
    assert_int_equal(r->resp.edns.udp_size, 4096);
    assert_true(r->resp.edns.do_bit);
    assert_string_equal(r->writer, "acl");
    req_free(r);
    assert_string_equal(ASK(ins, "x.sub.example.org.", T_A, "10.0.0.2"), "drop");
    assert_string_equal(ASK(ins, "x.example.org.", T_A, "10.0.0.2"), "drop");
    assert_string_equal(ASK(ins, "x.example.org.", T_A, "10.0.0.3"), "NOERROR");
    const char *sub[] = { "dns://:1053", "sub.example.org.", "" };
    const char *org[] = { "dns://:1053", "org.", "" };
    const char *all[] = { "dns://:1053", "" };
    metrics_registry *reg = test_registry();
    assert_int_equal(metrics_value(reg, "coredns_acl_blocked_requests_total", sub), 1);
    assert_int_equal(metrics_value(reg, "coredns_acl_dropped_requests_total", sub), 1);
    assert_int_equal(metrics_value(reg, "coredns_acl_dropped_requests_total", org), 1);
    assert_int_equal(metrics_value(reg, "coredns_acl_allowed_requests_total", all), 1);
    instance_free(ins);
}

static void setup_errors(void **state)
{
    (void)state;
    static const struct { const char *line, *msg; } cases[] = {
        { "deny", "unexpected token \"deny\"; expect 'allow', 'block', 'filter' or 'drop'" },
        { "block type", "no token specified in \"type\" section" },
        { "block type A net", "no token specified in \"net\" section" },
        { "block type AXFR2", "unexpected token \"AXFR2\"; expect legal QTYPE" },
        { "block type TYPE65", "unexpected token \"TYPE65\"; expect legal QTYPE" },
        { "block net 10.0.0.0/8/8", "illegal CIDR notation \"10.0.0.0/8/8\"" },
        { "block net fe80::1/129", "illegal CIDR notation \"fe80::1/129\"" },
        { "block net example.org", "illegal CIDR notation \"example.org/32\"" },
        { "block net 10.0.0.0/+8", "illegal CIDR notation \"10.0.0.0/+8\"" },
        { "block net 10.0.0.0/-0", "illegal CIDR notation \"10.0.0.0/-0\"" },
        { "block net 10.0.0.0/", "illegal CIDR notation \"10.0.0.0/\"" },
        { "block net 127.000.000.001/32", "illegal CIDR notation \"127.000.000.001/32\"" },
        { "block net fe80::1%eth0", "illegal CIDR notation \"fe80::1%eth0/128\"" },
        { "block 10.0.0.1", "unexpected token \"10.0.0.1\"; expect 'type | net'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], err[512] = "";
        snprintf(text, sizeof text, ". {\n acl {\n  %s\n }\n whoami\n}\n", cases[i].line);
        instance *ins = test_load(text, err, sizeof err);
        assert_null(ins);
        if (!strstr(err, cases[i].msg))
            print_error("%s: %s\n", cases[i].line, err);
        assert_non_null(strstr(err, cases[i].msg));
        assert_non_null(strstr(err, ":3: "));
    }
    char err[512];
    instance *ins = test_load(". {\n acl {\n  BLOCK TYPE A NET 10.0.0.0/8\n }\n whoami\n}\n",
                              err, sizeof err);
    assert_non_null(ins);                       /* keywords in any case */
    instance_free(ins);
    /* Go's decimal reader takes leading zeros in the length */
    ins = test_load(". {\n acl {\n  block net 10.0.0.0/08 ::ffff:10.0.0.0/0104\n }\n whoami\n}\n",
                    err, sizeof err);
    assert_non_null(ins);
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(networks),
        cmocka_unit_test(types_and_order),
        cmocka_unit_test(no_match_goes_on),
        cmocka_unit_test(reply_and_counters),
        cmocka_unit_test(setup_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
