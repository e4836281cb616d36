/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_ready.c — the ready plugin's Corefile stanza (its /ready endpoint
 * needs a started server and a plugin that reports readiness:
 * tests/integration/k8s_ready.sh): addresses and monitor types accepted,
 * bad ones refused with the token; used once per block; not in the query
 * chain.
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

static void test_ready_setup(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    ready 127.0.0.1:0 {\n        monitor continuously\n"
                                   "    }\n    whoami\n}\n");
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);
    instance_free(test_must_load(". {\n    ready {\n        monitor until-ready\n    }\n}\n"));
    test_load_fails(". {\n    ready {\n        monitor sometimes\n    }\n}\n",
                    "plugin/ready: monitor type 'sometimes' not supported");
    test_load_fails(". {\n    ready {\n        monitor\n    }\n}\n", "Wrong argument count");
    test_load_fails(". {\n    ready {\n        watch x\n    }\n}\n", "unknown property 'watch'");
    test_load_fails(". {\n    ready\n    ready\n}\n", "only be used once");
    test_load_fails(". {\n    ready not-an-address\n}\n", "plugin/ready: ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
