/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_health.c — the health plugin's Corefile stanza (its HTTP endpoint
 * and self-poll need a started server: tests/integration/health.sh):
 * addresses and lameduck accepted, bad addresses, durations and
 * properties refused with the token; not in the query chain.
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

static void test_health_setup(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    health 127.0.0.1:0 {\n        lameduck 5s\n    }\n"
                                   "    health :8080\n    whoami\n}\n");
    /* not in the chain: whoami answers */
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);
    test_load_fails(". {\n    health {\n        lameduck\n    }\n}\n", "Wrong argument count");
    test_load_fails(". {\n    health {\n        lameduck 5\n    }\n}\n",
                    "time: missing unit in duration \"5\"");
    test_load_fails(". {\n    health {\n        lameduck 5s 6s\n    }\n}\n", "Wrong argument count");
    test_load_fails(". {\n    health {\n        drain 5s\n    }\n}\n", "unknown property 'drain'");
    test_load_fails(". {\n    health 127.0.0.1:0 extra\n}\n", "Wrong argument count");
    test_load_fails(". {\n    health not-an-address\n}\n", "plugin/health: ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_health_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
