/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cidr.c — the one CIDR parser (common/cidr): what Go's
 * net.ParseCIDR accepts (its own test table: the network with host bits
 * cleared and the length, IPv4 and IPv6, ::ffff:a.b.c.d kept as IPv6) and
 * what it rejects (no '/', a length with a sign, out of range or not
 * decimal, octets with leading zeros, zones, a mask instead of a length),
 * bare addresses through cidr_parse_host only, and the containment test on
 * both sides of every prefix boundary.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "common/cidr.h"

/* text parses, with network `net` (printed) and length bits. */
static void accepted(const char *text, const char *net, unsigned bits)
{
    cidr c;
    char buf[INET6_ADDRSTRLEN];
    if (cidr_parse(text, &c) != 0)
        fail_msg("%s: refused", text);
    assert_non_null(inet_ntop(c.family, c.addr, buf, sizeof buf));
    if (strcmp(buf, net) || c.bits != bits)
        fail_msg("%s: %s/%u, want %s/%u", text, buf, c.bits, net, bits);
}

static void refused(const char *text)
{
    cidr c;
    memset(&c, 0xaa, sizeof c);
    if (cidr_parse(text, &c) == 0)
        fail_msg("%s: accepted", text);
    assert_int_equal(c.family, 0);          /* zeroed */
    assert_int_equal(c.bits, 0);
}

static void test_go_accepts(void **s)
{
    (void)s;
    /* Go's net.ParseCIDR test table */
    accepted("135.104.0.0/32", "135.104.0.0", 32);
    accepted("0.0.0.0/24", "0.0.0.0", 24);
    accepted("135.104.0.0/24", "135.104.0.0", 24);
    accepted("135.104.0.1/32", "135.104.0.1", 32);
    accepted("135.104.0.1/24", "135.104.0.0", 24);
    accepted("::1/128", "::1", 128);
    accepted("abcd:2345::/127", "abcd:2345::", 127);
    accepted("abcd:2345::/65", "abcd:2345::", 65);
    accepted("abcd:2345::/64", "abcd:2345::", 64);
    accepted("abcd:2345::/63", "abcd:2345::", 63);
    accepted("abcd:2345::/33", "abcd:2345::", 33);
    accepted("abcd:2345::/32", "abcd:2345::", 32);
    accepted("abcd:2344::/31", "abcd:2344::", 31);
    accepted("abcd:2300::/24", "abcd:2300::", 24);
    accepted("abcd:2345::/24", "abcd:2300::", 24);
    accepted("2001:DB8::/48", "2001:db8::", 48);
    accepted("2001:DB8::1/48", "2001:db8::", 48);
    /* its documentation's examples */
    accepted("192.0.2.1/24", "192.0.2.0", 24);
    accepted("2001:db8:a0b:12f0::1/32", "2001:db8::", 32);
    /* the edges: /0, full length, an IPv4 tail stays IPv6 (128 bits) */
    accepted("10.1.2.3/0", "0.0.0.0", 0);
    accepted("255.255.255.255/32", "255.255.255.255", 32);
    accepted("ffff::1/128", "ffff::1", 128);
    accepted("::ffff:10.1.2.3/128", "::ffff:10.1.2.3", 128);
    accepted("::ffff:c0a8:0101/64", "::", 64);
    accepted("::ffff:192.168.1.1/120", "::ffff:192.168.1.0", 120);
    accepted("2001:4860:0000:2001:0000:0000:0000:0068/64", "2001:4860:0:2001::", 64);
    /* Go reads the length with its decimal reader, which takes leading zeros */
    accepted("10.0.0.0/08", "10.0.0.0", 8);
    accepted("10.0.0.0/0032", "10.0.0.0", 32);
    accepted("::/000", "::", 0);
}

static void test_go_rejects(void **s)
{
    (void)s;
    /* Go's net.ParseCIDR test table */
    refused("192.168.1.1/255.255.255.0");
    refused("192.168.1.1/35");
    refused("2001:db8::1/-1");
    refused("2001:db8::1/-0");
    refused("-0.0.0.0/32");
    refused("0.-1.0.0/32");
    refused("0.0.-2.0/32");
    refused("0.0.0.-3/32");
    refused("0.0.0.0/-0");
    refused("127.000.000.001/32");
    refused("");
    refused("not.legit/22");
    refused("192.168.1.1");                 /* no '/' */
    /* a sign, spaces, nothing or more after the length */
    refused("10.0.0.0/+8");
    refused("::/+64");
    refused("10.0.0.0/ 8");
    refused("10.0.0.0/8 ");
    refused(" 10.0.0.0/8");
    refused("10.0.0.0/");
    refused("10.0.0.0/8/8");
    refused("10.0.0.0/0x8");
    refused("10.0.0.0/8a");
    refused("/8");
    /* out of the family's range, and huge */
    refused("10.0.0.0/33");
    refused("::/129");
    refused("::/99999999999999999999");
    refused("10.0.0.0/4294967304");         /* 2^32 + 8 must not wrap to 8 */
    /* addresses Go's parser refuses */
    refused("127.0.0.256/32");
    refused("1.2..4/8");
    refused("0123.0.0.1/8");
    refused("10.0.0/8");
    refused("::ffff:127.001.002.003/128");
    refused("fe80::1%lo0/64");
    refused("fe80::1%911/64");
    refused("a1:a2:a3:a4::b1:b2:b3:b4/64");
    refused("2001:db8::12345/64");          /* more than four hex digits in a group */
    refused("example.org/32");
    refused("[::1]/128");
    refused(NULL);
    /* an address part longer than any address */
    char big[200];
    memset(big, '1', sizeof big - 4);
    strcpy(big + sizeof big - 4, "/8");
    refused(big);
}

static void test_host(void **s)
{
    (void)s;
    cidr c;
    char buf[INET6_ADDRSTRLEN];
    assert_int_equal(cidr_parse_host("10.1.2.3", &c), 0);
    assert_int_equal(c.family, AF_INET);
    assert_int_equal(c.bits, 32);
    assert_string_equal(inet_ntop(AF_INET, c.addr, buf, sizeof buf), "10.1.2.3");
    assert_int_equal(cidr_parse_host("fd00::7", &c), 0);
    assert_int_equal(c.family, AF_INET6);
    assert_int_equal(c.bits, 128);
    assert_int_equal(cidr_parse_host("::ffff:1.2.3.4", &c), 0);
    assert_int_equal(c.family, AF_INET6);
    assert_int_equal(c.bits, 128);
    /* with '/', the same rules as cidr_parse */
    assert_int_equal(cidr_parse_host("10.1.2.3/16", &c), 0);
    assert_string_equal(inet_ntop(AF_INET, c.addr, buf, sizeof buf), "10.1.0.0");
    assert_int_equal(c.bits, 16);
    assert_int_equal(cidr_parse_host("10.1.2.3/+16", &c), -1);
    assert_int_equal(cidr_parse_host("10.1.2.3/", &c), -1);
    assert_int_equal(cidr_parse_host("example.org", &c), -1);
    assert_int_equal(cidr_parse_host("", &c), -1);
    assert_int_equal(cidr_parse_host("127.0.0.01", &c), -1);
}

static int in(const char *net, const char *addr)
{
    cidr c;
    uint8_t a[16] = { 0 };
    if (cidr_parse(net, &c) != 0)
        fail_msg("%s: refused", net);
    int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
    if (inet_pton(family, addr, a) != 1)
        fail_msg("%s: not an address", addr);
    return cidr_contains(&c, family, a);
}

static void test_contains(void **s)
{
    (void)s;
    /* Go's IPNet.Contains table, with prefix lengths */
    assert_true(in("172.16.0.0/12", "172.16.1.1"));
    assert_false(in("172.16.0.0/13", "172.24.0.1"));
    assert_true(in("2001:db8:1::/47", "2001:db8:1:2::1"));
    assert_false(in("2001:db8:2::/47", "2001:db8:1:2::1"));
    /* both sides of each boundary, within a byte and at a byte */
    assert_true(in("10.0.0.0/8", "10.255.255.255"));
    assert_false(in("10.0.0.0/8", "11.0.0.0"));
    assert_false(in("10.0.0.0/8", "9.255.255.255"));
    assert_true(in("192.168.1.64/26", "192.168.1.127"));
    assert_false(in("192.168.1.64/26", "192.168.1.128"));
    assert_false(in("192.168.1.64/26", "192.168.1.63"));
    assert_true(in("10.1.2.3/32", "10.1.2.3"));
    assert_false(in("10.1.2.3/32", "10.1.2.2"));
    assert_true(in("0.0.0.0/0", "203.0.113.9"));
    assert_true(in("::/0", "2001:db8::1"));
    assert_true(in("fd00::/7", "fdff::1"));
    assert_false(in("fd00::/7", "fe00::1"));
    assert_true(in("2001:db8::1/127", "2001:db8::"));
    assert_false(in("2001:db8::1/127", "2001:db8::2"));
    /* the network is kept cleared: a host address with a length */
    assert_true(in("10.1.2.3/24", "10.1.2.200"));
    /* families never mix, not even at /0 */
    assert_false(in("0.0.0.0/0", "::1"));
    assert_false(in("::/0", "10.0.0.1"));
    assert_false(in("::ffff:10.0.0.0/104", "10.0.0.1"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_go_accepts),
        cmocka_unit_test(test_go_rejects),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_contains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
