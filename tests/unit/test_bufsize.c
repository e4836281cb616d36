/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_bufsize.c — the bufsize plugin on its own (testenv.h: the real
 * server): a query advertising more than SIZE is changed to advertise SIZE
 * (default 1232) before the rest of the chain sees it, one advertising
 * less or none is untouched; sizes outside 512..4096, words and extra
 * arguments are refused with the token.
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

/* The UDP size the chain saw for a query of name advertising adv (0: no
 * EDNS); -1 when the query had no OPT after the chain. */
static int seen_size(instance *ins, uint16_t adv)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, "a.example.org.") > 0);
    dns_query q = { .id = 1, .flags = F_RD, .qname = qn, .qtype = T_A, .qclass = C_IN,
                    .edns_size = adv };
    dns_req *r = test_query(ins, &q, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);       /* hosts answered */
    int size = r->q.edns.present ? r->q.edns.udp_size : -1;
    req_free(r);
    return size;
}

static void test_bufsize_caps(void **state)
{
    (void)state;
    const char *zone = "    hosts {\n        10.0.0.1 a.example.org\n    }\n";
    char cf[512];
    snprintf(cf, sizeof cf, "example.org {\n    bufsize\n%s}\n", zone);
    instance *ins = test_must_load(cf);
    assert_int_equal(seen_size(ins, 4096), 1232);
    assert_int_equal(seen_size(ins, 1233), 1232);
    assert_int_equal(seen_size(ins, 1232), 1232);
    assert_int_equal(seen_size(ins, 600), 600);
    assert_int_equal(seen_size(ins, 0), -1);
    instance_free(ins);

    snprintf(cf, sizeof cf, "example.org {\n    bufsize 512\n%s}\n", zone);
    ins = test_must_load(cf);
    assert_int_equal(seen_size(ins, 4096), 512);
    assert_int_equal(seen_size(ins, 512), 512);
    instance_free(ins);

    /* without the plugin the size stays as advertised */
    snprintf(cf, sizeof cf, "example.org {\n%s}\n", zone);
    ins = test_must_load(cf);
    assert_int_equal(seen_size(ins, 4096), 4096);
    instance_free(ins);
}

static void test_bufsize_setup(void **state)
{
    (void)state;
    const char *bad[] = { "511", "4097", "abc", "1232x", "-1" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char cf[128], msg[128];
        snprintf(cf, sizeof cf, ". {\n    bufsize %s\n}\n", bad[i]);
        snprintf(msg, sizeof msg, "Wrong argument count or unexpected line ending near '%s'", bad[i]);
        test_load_fails(cf, msg);
    }
    test_load_fails(". {\n    bufsize 1232 4096\n}\n", "near '4096'");
    test_load_fails(". {\n    bufsize 1232 {\n        x\n    }\n}\n", "unknown property 'x'");
    instance_free(test_must_load(". {\n    bufsize 4096\n}\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bufsize_caps),
        cmocka_unit_test(test_bufsize_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
