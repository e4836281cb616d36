/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lb_weights.c — the loadbalance weight file (weights.c): the format of
 * CoreDNS's README, its error messages, lookups, and the weighted pick.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "wire/dname.h"
#include "plugin/loadbalance/weights.h"

static unsigned weight_of(const lbw_table *t, const char *name, const char *addr)
{
    uint8_t wire[DNAME_MAX], a[16] = {0};
    assert_true(dname_from_str(wire, name) > 0);
    dname_lower(wire);
    int fam = strchr(addr, ':') ? 6 : 4;
    assert_int_equal(inet_pton(fam == 4 ? AF_INET : AF_INET6, addr, a), 1);
    return lbw_weight(t, wire, fam, a);
}

static void test_parse(void **state)
{
    (void)state;
    char err[256] = "";
    lbw_table *t = lbw_parse("# comment\n\nwww.example.com\n100.64.1.1 3\n  100.64.1.2\t1  \n"
                             "fd00::1 255\nOther.Example.com.\n::ffff:10.0.0.1 7\n", "w", err, sizeof err);
    assert_non_null(t);
    assert_int_equal(lbw_entries(t), 4);
    assert_int_equal(weight_of(t, "www.example.com", "100.64.1.1"), 3);
    assert_int_equal(weight_of(t, "WWW.example.com.", "100.64.1.2"), 1);
    assert_int_equal(weight_of(t, "www.example.com", "fd00::1"), 255);
    assert_int_equal(weight_of(t, "www.example.com", "100.64.1.9"), 1);     /* unnamed: 1 */
    assert_int_equal(weight_of(t, "nosuch.example.com", "100.64.1.1"), 1);
    assert_int_equal(weight_of(t, "other.example.com", "10.0.0.1"), 7);     /* mapped = IPv4 */
    lbw_free(t);
    assert_int_equal(weight_of(NULL, "a", "10.0.0.1"), 1);
}

static void expect_error(const char *text, const char *msg)
{
    char err[256] = "";
    assert_null(lbw_parse(text, "F", err, sizeof err));
    if (!strstr(err, msg))
        fail_msg("'%s' lacks '%s'", err, msg);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("a.example\n10.0.0.1 0\n", "wrong weight value:\"0\" in weight file F");
    expect_error("a.example\n10.0.0.1 256\n", "wrong weight value:\"256\" in weight file F");
    expect_error("a.example\n10.0.0.1 +1\n", "wrong weight value:\"+1\" in weight file F");
    expect_error("a.example\nten 1\n", "wrong IP address:\"ten\" in weight file F");
    expect_error("10.0.0.1 1\n", "missing domain name in weight file F");
    expect_error("10.0.0.1\n", "wrong domain name:\"10.0.0.1\" in weight file F. (Maybe a missing weight value?)");
    expect_error("a.example\n10.0.0.1 1 # no trailing comments\n",
                 "could not parse weight line:\"10.0.0.1 1 # no trailing comments\" in weight file F");
}

static void test_pick(void **state)
{
    (void)state;
    unsigned w[] = {3, 1, 2};
    unsigned count[3] = {0};
    for (uint32_t r = 0; r < 6; r++)            /* each r in [0, 6) once: exact shares */
        count[lbw_pick(w, 3, r)]++;
    assert_int_equal(count[0], 3);
    assert_int_equal(count[1], 1);
    assert_int_equal(count[2], 2);
    unsigned one[] = {1};
    assert_int_equal(lbw_pick(one, 1, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
