/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_whoami.c — the whoami plugin on its own (testenv.h: the real server,
 * one query at a time from a chosen client address): the client's address
 * (A or AAAA by its family) and its port as SRV (53535 for the
 * internal requests of the tests) under _udp in the
 * additional section, TTL 0, authoritative, empty answer; a stanza with
 * an argument is refused.
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

static void test_whoami_reply(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    whoami\n}\n");
    char got[1024];
    dns_req *r = test_ask(ins, "Who.Example.org.", T_A, "192.0.2.7");
    assert_non_null(r);
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_true(r->resp.flags & F_AA);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_string_equal(test_section(&r->resp, SEC_ADDITIONAL, got, sizeof got),
                        "Who.Example.org. 0 IN A 192.0.2.7\n"
                        "_udp.Who.Example.org. 0 IN SRV 0 0 53535 .");
    req_free(r);
    /* an IPv6 client gets AAAA, whatever the question's type */
    r = test_ask(ins, "example.org.", T_MX, "2001:db8::5");
    assert_non_null(r);
    assert_string_equal(test_section(&r->resp, SEC_ADDITIONAL, got, sizeof got),
                        "example.org. 0 IN AAAA 2001:db8::5\n"
                        "_udp.example.org. 0 IN SRV 0 0 53535 .");
    req_free(r);
    /* the root: _udp. directly */
    r = test_ask(ins, ".", T_A, "127.0.0.9");
    assert_string_equal(test_section(&r->resp, SEC_ADDITIONAL, got, sizeof got),
                        ". 0 IN A 127.0.0.9\n_udp. 0 IN SRV 0 0 53535 .");
    req_free(r);
    instance_free(ins);
}

static void test_whoami_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    whoami extra\n}\n", "Wrong argument count or unexpected line ending near 'extra'");
    test_load_fails(". {\n    whoami\n    whoami\n}\n", "only be used once");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whoami_reply),
        cmocka_unit_test(test_whoami_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
