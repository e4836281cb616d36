/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_debug.c — the debug plugin on its own: its stanza turns debug
 * logging on for the requests of its instance (req_debug(), what plugins
 * and the core read; off without it), takes no arguments, and puts nothing
 * in the query chain (the next plugin answers).
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

static void test_debug_switch(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    debug\n    whoami\n}\n");
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(req_debug(r), 1);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);       /* whoami */
    req_free(r);
    instance_free(ins);
    ins = test_must_load(". {\n    whoami\n}\n");
    r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(req_debug(r), 0);
    req_free(r);
    instance_free(ins);
}

static void test_debug_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    debug on\n}\n", "Wrong argument count or unexpected line ending near 'on'");
    test_load_fails(". {\n    debug {\n        x\n    }\n}\n", "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_debug_switch),
        cmocka_unit_test(test_debug_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
