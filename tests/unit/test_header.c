/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_header.c — the header plugin on its own (testenv.h: the real
 * server): query rules change the flags the rest of the chain sees,
 * response rules the flags of whatever reply is written after it, in the
 * order written (the last rule for a flag wins); bad rules fail with the
 * selector, action or flag named.
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

static void test_header_rules(void **state)
{
    (void)state;
    const char *zone = "    hosts {\n        10.0.0.1 a.example.org\n    }\n";
    char cf[512];
    snprintf(cf, sizeof cf, "example.org {\n    header {\n"
             "        response set ra\n        response clear aa\n"
             "        query clear rd\n    }\n%s}\n", zone);
    instance *ins = test_must_load(cf);
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
    assert_true(r->resp.flags & F_RA);
    assert_false(r->resp.flags & F_AA);     /* hosts sets AA; the rule clears it */
    assert_false(r->q.flags & F_RD);        /* the query as the chain saw it */
    req_free(r);
    instance_free(ins);

    /* without the plugin: AA from hosts, RD as asked */
    snprintf(cf, sizeof cf, "example.org {\n%s}\n", zone);
    ins = test_must_load(cf);
    r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_true(r->resp.flags & F_AA);
    assert_true(r->q.flags & F_RD);
    req_free(r);
    instance_free(ins);

    /* the last rule for a flag wins; several flags on one line */
    snprintf(cf, sizeof cf, "example.org {\n    header {\n"
             "        response clear aa ra\n        response set AA\n    }\n%s}\n", zone);
    ins = test_must_load(cf);
    r = test_ask(ins, "a.example.org.", T_A, "192.0.2.1");
    assert_true(r->resp.flags & F_AA);
    assert_false(r->resp.flags & F_RA);
    req_free(r);
    instance_free(ins);
}

static void test_header_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    header {\n        answer set aa\n    }\n}\n",
                    "invalid selector=answer should be query or response");
    test_load_fails(". {\n    header {\n        query\n    }\n}\n", "no flag action provided");
    test_load_fails(". {\n    header {\n        query set\n    }\n}\n",
                    "invalid length for flags, at least one should be provided");
    test_load_fails(". {\n    header {\n        query toggle aa\n    }\n}\n",
                    "unknown flag action=toggle, should be set or clear");
    test_load_fails(". {\n    header {\n        query set aa cd\n    }\n}\n",
                    "unknown/unsupported flag=cd");
    test_load_fails(". {\n    header\n}\n", "Wrong argument count");
    test_load_fails(". {\n    header x {\n        query set aa\n    }\n}\n", "near 'x'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header_rules),
        cmocka_unit_test(test_header_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
