/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_zone.c — zone_from_key(): names and CIDRs of every prefix length
 * become the reverse zones CoreDNS's cidr.Split + cidr.Reverse give.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "server/zone.h"

static void test_names(void **state)
{
    (void)state;
    char (*z)[DNAME_STR_MAX];
    assert_int_equal(zone_from_key("Cluster.Local", &z), 1);
    assert_string_equal(z[0], "cluster.local.");
    free(z);
    assert_int_equal(zone_from_key(".", &z), 1);
    assert_string_equal(z[0], ".");
    free(z);
    assert_int_equal(zone_from_key("", &z), -1);
    assert_null(z);
    assert_string_equal(zone_key_error("a..b"), "invalid zone");
}

static void test_aligned(void **state)
{
    (void)state;
    char (*z)[DNAME_STR_MAX];
    assert_int_equal(zone_from_key("10.96.0.0/12", &z), 16);
    assert_string_equal(z[0], "96.10.in-addr.arpa.");
    assert_string_equal(z[15], "111.10.in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("10.96.0.0/24", &z), 1);
    assert_string_equal(z[0], "0.96.10.in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("0.0.0.0/0", &z), 1);
    assert_string_equal(z[0], "in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("fd00::/8", &z), 1);
    assert_string_equal(z[0], "d.f.ip6.arpa.");
    free(z);
}

/* The prefixes a cap of 16 refused: /9–/11, /17–/19, /25–/27. */
static void test_any_length(void **state)
{
    (void)state;
    char (*z)[DNAME_STR_MAX];
    /* kubespray's service range: the 64 /24s 0..63 */
    assert_int_equal(zone_from_key("10.233.0.0/18", &z), 64);
    assert_string_equal(z[0], "0.233.10.in-addr.arpa.");
    assert_string_equal(z[63], "63.233.10.in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("10.0.0.0/17", &z), 128);
    assert_string_equal(z[0], "0.0.10.in-addr.arpa.");
    assert_string_equal(z[127], "127.0.10.in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("10.128.0.0/9", &z), 128);
    assert_string_equal(z[0], "128.10.in-addr.arpa.");
    assert_string_equal(z[127], "255.10.in-addr.arpa.");
    free(z);
    /* host bits are dropped, as net.ParseCIDR does */
    assert_int_equal(zone_from_key("192.168.1.200/25", &z), 128);
    assert_string_equal(z[0], "128.1.168.192.in-addr.arpa.");
    assert_string_equal(z[127], "255.1.168.192.in-addr.arpa.");
    free(z);
    assert_int_equal(zone_from_key("0.0.0.0/1", &z), 128);
    assert_string_equal(z[0], "0.in-addr.arpa.");
    assert_string_equal(z[127], "127.in-addr.arpa.");
    free(z);
    /* IPv6 splits on nibbles: at most 8 */
    assert_int_equal(zone_from_key("fd00::/9", &z), 8);
    assert_string_equal(z[0], "0.d.f.ip6.arpa.");
    assert_string_equal(z[7], "7.d.f.ip6.arpa.");
    free(z);
    assert_int_equal(zone_from_key("2001:db8::/126", &z), 4);
    free(z);
    for (int bits = 0; bits <= 32; bits++) {
        char cidr[32];
        snprintf(cidr, sizeof cidr, "10.0.0.0/%d", bits);
        int n = zone_from_key(cidr, &z);
        assert_true(n >= 1 && n <= ZONE_MAX_SPLIT);
        assert_int_equal(n, 1 << ((8 - bits % 8) % 8));
        free(z);
    }
}

static void test_invalid(void **state)
{
    (void)state;
    const char *bad[] = {"10.0.0.0/33", "10.0.0.0/", "/8", "10.0.0/8", "10.0.0.0/-1",
                         "10.0.0.0/ 8", "10.0.0.0/8/8", "fd00::/129", "hello/8", "10.0.0.0/8x",
                         /* Go's ParseCIDR refuses these too: a sign, a leading zero in an
                          * octet, an IPv6 zone */
                         "10.0.0.0/+8", "fd00::/+64", "010.0.0.0/8", "fe80::%eth0/64"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char (*z)[DNAME_STR_MAX] = (void *)1;
        assert_int_equal(zone_from_key(bad[i], &z), -1);
        assert_null(z);
        assert_string_equal(zone_key_error(bad[i]), "invalid CIDR");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_aligned),
        cmocka_unit_test(test_any_length),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
