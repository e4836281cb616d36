/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_local.c — the local plugin on its own (testenv.h: the real server):
 * localhost names (under localhost., or a first label localhost unless
 * localhost_prefix off), the apexes and names of the local reverse zones,
 * NXDOMAIN with the zone's SOA, everything else passed on; bad values of
 * localhost_prefix and unknown properties fail with the token.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

static void test_local_answers(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    local\n    whoami\n}\n");
    test_expect(ins, "localhost.", T_A, RC_NOERROR, "localhost. 604800 IN A 127.0.0.1");
    test_expect(ins, "localhost.", T_AAAA, RC_NOERROR, "localhost. 604800 IN AAAA ::1");
    test_expect(ins, "foo.localhost.", T_A, RC_NOERROR, "foo.localhost. 604800 IN A 127.0.0.1");
    test_expect(ins, "localhost.example.org.", T_AAAA, RC_NOERROR,
                "localhost.example.org. 604800 IN AAAA ::1");
    test_expect(ins, "1.0.0.127.in-addr.arpa.", T_PTR, RC_NOERROR,
                "1.0.0.127.in-addr.arpa. 604800 IN PTR localhost.");
    test_expect(ins, "127.in-addr.arpa.", T_NS, RC_NOERROR,
                "127.in-addr.arpa. 604800 IN NS localhost.");
    /* a missing name of a local zone: NXDOMAIN, the zone's SOA, not AA */
    dns_req *r = test_ask(ins, "2.0.0.127.in-addr.arpa.", T_PTR, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(r->resp.rcode, RC_NXDOMAIN);
    assert_false(r->resp.flags & F_AA);
    char got[1024];
    assert_string_equal(test_section(&r->resp, SEC_AUTHORITY, got, sizeof got),
                        "127.in-addr.arpa. 604800 IN SOA localhost. root.localhost. 1 0 0 0 604800");
    req_free(r);
    /* localhost, other type: NODATA with the SOA owned by the name */
    r = test_ask(ins, "localhost.", T_MX, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_int_equal(msg_count(&r->resp, SEC_AUTHORITY), 1);
    req_free(r);
    /* anything else: whoami */
    r = test_ask(ins, "www.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);

    /* localhost_prefix off: localhost.example.org goes on */
    ins = test_must_load(". {\n    local {\n        localhost_prefix off\n    }\n    whoami\n}\n");
    r = test_ask(ins, "localhost.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    test_expect(ins, "localhost.", T_A, RC_NOERROR, "localhost. 604800 IN A 127.0.0.1");
    instance_free(ins);
}

static void test_local_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    local {\n        localhost_prefix maybe\n    }\n}\n",
                    "localhost_prefix expects 'on' or 'off', got \"maybe\"");
    test_load_fails(". {\n    local {\n        localhost_prefix\n    }\n}\n", "Wrong argument count");
    test_load_fails(". {\n    local {\n        other on\n    }\n}\n", "unknown property 'other'");
    test_load_fails(". {\n    local x\n}\n", "near 'x'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_answers),
        cmocka_unit_test(test_local_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
