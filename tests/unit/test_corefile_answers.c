/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_corefile_answers.c — answers of whole Corefiles through the real
 * server and plugins (testenv.h: loaded, not bound; one query at a time
 * from a given client address): hosts wildcard owners, and dns64's
 * synthesis with the RFC 6052 layouts of every prefix length.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "testenv.h"

/* Ask name/type from peer; the answer section's addresses (A or AAAA, or
 * PTR targets) as text, space separated, into out; returns the rcode. */
static int ask(instance *ins, const char *name, uint16_t type, const char *peer, char *out,
               size_t cap, uint32_t *ttl)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 7, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    dns_req *r = test_query(ins, &q, peer);
    assert_non_null(r);
    out[0] = '\0';
    size_t o = 0;
    for (unsigned i = 0; i < msg_count(&r->resp, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, i);
        char buf[DNAME_STR_MAX] = "";
        if (rr.type == T_A && rr.rdlen == 4)
            inet_ntop(AF_INET, rr.rdata, buf, sizeof buf);
        else if (rr.type == T_AAAA && rr.rdlen == 16)
            inet_ntop(AF_INET6, rr.rdata, buf, sizeof buf);
        else if (rr.type == T_PTR || rr.type == T_CNAME)
            dname_to_str(buf, sizeof buf, rr.rdata);
        o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? " " : "", buf);
        if (ttl)
            *ttl = rr.ttl;
    }
    int rc = r->resp.rcode;
    req_free(r);
    return rc;
}

static void expect(instance *ins, const char *name, uint16_t type, const char *peer, int rcode,
                   const char *answer)
{
    char got[2048];
    int rc = ask(ins, name, type, peer, got, sizeof got, NULL);
    if (rc != rcode || strcmp(got, answer) != 0)
        fail_msg("%s type %u from %s: rcode %d '%s', want %d '%s'", name, type, peer, rc, got,
                 rcode, answer);
}

static void test_hosts_wildcards(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org in-addr.arpa {\n"
                         "    hosts {\n"
                         "        10.0.1.10 *.apps.example.org\n"
                         "        10.0.1.11 a.apps.example.org\n"
                         "        fd00::a v6only.apps.example.org\n"
                         "        10.0.1.12 *.example.org\n"
                         "    }\n"
                         "}\n");
    const char *c = "192.0.2.1";
    expect(ins, "foo.apps.example.org.", T_A, c, RC_NOERROR, "10.0.1.10");
    expect(ins, "FOO.Apps.Example.ORG.", T_A, c, RC_NOERROR, "10.0.1.10");
    expect(ins, "a.apps.example.org.", T_A, c, RC_NOERROR, "10.0.1.11");
    /* the exact name has only AAAA: A comes from the wildcard */
    expect(ins, "v6only.apps.example.org.", T_A, c, RC_NOERROR, "10.0.1.10");
    expect(ins, "v6only.apps.example.org.", T_AAAA, c, RC_NOERROR, "fd00::a");
    /* apps.example.org is one label below *.example.org, not *.apps's */
    expect(ins, "apps.example.org.", T_A, c, RC_NOERROR, "10.0.1.12");
    /* two labels below: no match (no fallthrough: SERVFAIL, as CoreDNS) */
    expect(ins, "deep.foo.apps.example.org.", T_A, c, RC_SERVFAIL, "");
    /* a wildcard name with no address of the family: NODATA */
    expect(ins, "foo.apps.example.org.", T_AAAA, c, RC_NOERROR, "");
    /* PTR: the explicit owner, never the wildcard */
    expect(ins, "11.1.0.10.in-addr.arpa.", T_PTR, c, RC_NOERROR, "a.apps.example.org.");
    char got[256];
    assert_int_not_equal(ask(ins, "10.1.0.10.in-addr.arpa.", T_PTR, c, got, sizeof got, NULL), RC_NOERROR);
    assert_null(strchr(got, '*'));
    instance_free(ins);
}

static void test_dns64(void **state)
{
    (void)state;
    const char *zone = "    hosts {\n"
                       "        192.0.2.1 v4.example.org\n"
                       "        192.0.2.4 both.example.org\n"
                       "        2001:db8::4 both.example.org\n"
                       "    }\n";
    char text[1024];
    snprintf(text, sizeof text, "example.org {\n    dns64\n%s}\n", zone);
    instance *ins = test_must_load(text);
    const char *v6 = "2001:db8::99", *v4 = "198.51.100.9";
    char got[256];
    uint32_t ttl = 0;
    assert_int_equal(ask(ins, "v4.example.org.", T_AAAA, v6, got, sizeof got, &ttl), RC_NOERROR);
    assert_string_equal(got, "64:ff9b::c000:201");
    assert_int_equal(ttl, 600);         /* min(A 3600, no SOA: 600) */
    expect(ins, "both.example.org.", T_AAAA, v6, RC_NOERROR, "2001:db8::4");
    expect(ins, "v4.example.org.", T_AAAA, v4, RC_NOERROR, "");     /* IPv4 client */
    expect(ins, "v4.example.org.", T_A, v6, RC_NOERROR, "192.0.2.1");
    instance_free(ins);

    /* every prefix length RFC 6052 allows, octet 8 left 0 */
    static const struct { const char *prefix, *want; } layouts[] = {
        { "2001:db8::/32", "2001:db8:c000:201::" },
        { "2001:db8:100::/40", "2001:db8:1c0:2:1::" },
        { "2001:db8:1::/48", "2001:db8:1:c000:2:100::" },
        { "2001:db8:1:200::/56", "2001:db8:1:2c0:0:201::" },
        { "2001:db8:1:2::/64", "2001:db8:1:2:c0:2:100:0" },
        { "2001:db8:1:2:3:4::/96", "2001:db8:1:2:3:4:c000:201" },
    };
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
        snprintf(text, sizeof text, "example.org {\n    dns64 {\n        prefix %s\n"
                 "        allow_ipv4\n        translate_all\n    }\n%s}\n", layouts[i].prefix, zone);
        ins = test_must_load(text);
        expect(ins, "v4.example.org.", T_AAAA, v4, RC_NOERROR, layouts[i].want);
        if (i == 0)     /* translate_all: the AAAA record gives way to the synthesis */
            expect(ins, "both.example.org.", T_AAAA, v4, RC_NOERROR, "2001:db8:c000:204::");
        instance_free(ins);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts_wildcards),
        cmocka_unit_test(test_dns64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
