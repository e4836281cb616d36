/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loop.c — the loop plugin's stanza and its pass-through (the probe
 * to our own listener and the fatal exit on a loop need a started server:
 * tests/integration/loop.sh): used once per block, no arguments, a zone
 * too long for the probe name refused; queries that are not its probe go
 * on to the next plugin, HINFO ones included.
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

static void test_loop_passes(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org {\n    loop\n    whoami\n}\n");
    /* HINFO under the zone, many times: not the probe, never fatal */
    for (int i = 0; i < 5; i++) {
        dns_req *r = test_ask(ins, "x.y.example.org.", T_HINFO, "192.0.2.1");
        assert_non_null(r);
        assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);   /* whoami */
        req_free(r);
    }
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);
}

static void test_loop_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    loop now\n}\n", "Wrong argument count or unexpected line ending near 'now'");
    test_load_fails(". {\n    loop\n    loop\n}\n",
                    "plugin/loop: this plugin can only be used once per Server Block");
    /* a zone of 232 octets leaves no room for two random labels of up
     * to 19 digits in front of it */
    char zone[256] = "", cf[512];
    for (int i = 0; i < 4; i++)
        strcat(zone, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.");
    snprintf(cf, sizeof cf, "%s {\n    loop\n}\n", zone);
    test_load_fails(cf, "plugin/loop: zone too long for the probe name");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loop_passes),
        cmocka_unit_test(test_loop_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
