/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_any.c — the any plugin on its own (testenv.h: the real server): an
 * ANY query gets the RFC 8482 answer (one HINFO "RFC8482" "", TTL 8482,
 * not authoritative); every other type goes on to the next plugin
 * (whoami); a stanza with an argument is refused.
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

static void test_any_reply(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org {\n    any\n    whoami\n}\n");
    test_expect(ins, "x.example.org.", T_ANY, RC_NOERROR,
                "x.example.org. 8482 IN HINFO \"RFC8482\" \"\"");
    dns_req *r = test_ask(ins, "x.example.org.", T_ANY, "192.0.2.1");
    assert_false(r->resp.flags & F_AA);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 0);
    req_free(r);
    /* not ANY: whoami answers (two additional records) */
    r = test_ask(ins, "x.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);
}

static void test_any_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    any foo\n}\n", "Wrong argument count or unexpected line ending near 'foo'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_any_reply),
        cmocka_unit_test(test_any_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
