/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_loadbalance.c — the loadbalance plugin on its own (testenv.h: the
 * real server, template writing the replies): round_robin puts CNAMEs
 * first and shuffles the addresses (same set, changing order); weighted
 * puts the heavy address first almost always and leaves the rest in their
 * order; bad stanzas fail with the token. (The weight file's parser and
 * the weighted choice have their own test, test_lb_weights.)
 */
#include <unistd.h>
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

#define ANSWERS \
    "        answer \"{{ .Name }} 60 IN A 10.0.0.1\"\n" \
    "        answer \"{{ .Name }} 60 IN A 10.0.0.2\"\n" \
    "        answer \"{{ .Name }} 60 IN A 10.0.0.3\"\n" \
    "        answer \"{{ .Name }} 60 IN A 10.0.0.4\"\n"

/* The answer section of www.example.org A as "type:last-octet" words. */
static void order(instance *ins, char *out, size_t cap)
{
    dns_req *r = test_ask(ins, "www.example.org.", T_A, "192.0.2.1");
    assert_non_null(r);
    size_t o = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < msg_count(&r->resp, SEC_ANSWER); i++) {
        dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, i);
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "",
                              rr.type == T_CNAME ? "C"
                              : rr.type == T_A ? (const char[]){ (char)('0' + rr.rdata[3]), 0 }
                              : "?");
    }
    req_free(r);
}

static void test_round_robin(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org {\n    loadbalance round_robin\n"
                                   "    template IN A example.org {\n" ANSWERS
                                   "        answer \"{{ .Name }} 60 IN CNAME target.invalid.\"\n"
                                   "    }\n}\n");
    char first[64], got[64];
    order(ins, first, sizeof first);
    int changed = 0;
    for (int i = 0; i < 40; i++) {
        order(ins, got, sizeof got);
        if (strlen(got) != 9)
            fail_msg("order '%s'", got);
        assert_int_equal(got[0], 'C');              /* the CNAME first */
        for (char c = '1'; c <= '4'; c++)           /* the same four addresses */
            assert_non_null(strchr(got + 1, c));
        changed |= strcmp(got, first) != 0;
    }
    assert_true(changed);
    instance_free(ins);

    /* without loadbalance: the order written */
    ins = test_must_load("example.org {\n    template IN A example.org {\n" ANSWERS
                         "        answer \"{{ .Name }} 60 IN CNAME target.invalid.\"\n    }\n}\n");
    for (int i = 0; i < 5; i++) {
        order(ins, got, sizeof got);
        assert_string_equal(got, "1 2 3 4 C");
    }
    instance_free(ins);
}

static void test_weighted(void **state)
{
    (void)state;
    char path[] = "/tmp/test_lb_w.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *w = "# weights\nwww.example.org\n10.0.0.3 255\n";
    assert_int_equal(write(fd, w, strlen(w)), (ssize_t)strlen(w));
    close(fd);
    char cf[1024];
    snprintf(cf, sizeof cf, "example.org {\n    loadbalance weighted %s {\n        reload 0\n    }\n"
             "    template IN A example.org {\n" ANSWERS "    }\n}\n", path);
    instance *ins = test_must_load(cf);
    int heavy_first = 0;
    char got[64];
    for (int i = 0; i < 100; i++) {
        order(ins, got, sizeof got);
        if (!strcmp(got, "3 2 1 4"))
            heavy_first++;
        else    /* one of the others swapped to the front */
            assert_true(!strcmp(got, "1 2 3 4") || !strcmp(got, "2 1 3 4") ||
                        !strcmp(got, "4 2 3 1"));
    }
    assert_true(heavy_first > 80);      /* 255/258 of the time */
    instance_free(ins);
    unlink(path);
}

static void test_loadbalance_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    loadbalance random\n}\n", "plugin/loadbalance: unknown policy: random");
    test_load_fails(". {\n    loadbalance weighted\n}\n", "missing weight file argument");
    test_load_fails(". {\n    loadbalance weighted /nonexistent/w x\n}\n", "unexpected argument(s)");
    test_load_fails(". {\n    loadbalance round_robin x\n}\n", "near 'x'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_weighted),
        cmocka_unit_test(test_loadbalance_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
