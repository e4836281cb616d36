/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_addr.c — the one socket-address parser (common/addr): IPv4 and
 * IPv6 with and without a port, IPv6 zones by number and by interface name
 * (lo), what is refused (names, inet_aton's short IPv4 forms, ports out of
 * range or not decimal, stray text), brackets around IPv4 taken as Go's
 * SplitHostPort takes them, the IPv4-mapped unmapping and the default bind
 * address from the environment; and addr_parse_bytes, text to family and
 * bytes, on a table of accepted and refused texts under each of its flags.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <cmocka.h>
#include "common/addr.h"

/* text parses (default port defport) to family, printed address, port and,
 * for IPv6, scope id. */
static void accepted(const char *text, int defport, int family, const char *ip, int port,
                     unsigned scope)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    char buf[INET6_ADDRSTRLEN];
    if (addr_parse(text, defport, &ss, &len) != 0)
        fail_msg("%s: refused", text);
    assert_int_equal(ss.ss_family, family);
    if (family == AF_INET) {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
        assert_int_equal(len, sizeof *s4);
        assert_non_null(inet_ntop(AF_INET, &s4->sin_addr, buf, sizeof buf));
        assert_int_equal(ntohs(s4->sin_port), port);
    } else {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;
        assert_int_equal(len, sizeof *s6);
        assert_non_null(inet_ntop(AF_INET6, &s6->sin6_addr, buf, sizeof buf));
        assert_int_equal(ntohs(s6->sin6_port), port);
        assert_int_equal(s6->sin6_scope_id, scope);
    }
    if (strcmp(buf, ip))
        fail_msg("%s: address %s, want %s", text, buf, ip);
}

static void refused(const char *text)
{
    struct sockaddr_storage ss;
    socklen_t len = 0;
    if (addr_parse(text, 53, &ss, &len) == 0)
        fail_msg("%s: accepted", text);
}

static void test_ipv4(void **state)
{
    (void)state;
    accepted("127.0.0.1", 53, AF_INET, "127.0.0.1", 53, 0);
    accepted("10.1.2.3:5353", 53, AF_INET, "10.1.2.3", 5353, 0);
    accepted("0.0.0.0", 0, AF_INET, "0.0.0.0", 0, 0);
    accepted("1.2.3.4:65535", 53, AF_INET, "1.2.3.4", 65535, 0);
    accepted("[1.2.3.4]:54", 53, AF_INET, "1.2.3.4", 54, 0);
    accepted("[1.2.3.4]", 53, AF_INET, "1.2.3.4", 53, 0);
}

static void test_ipv6(void **state)
{
    (void)state;
    accepted("::1", 53, AF_INET6, "::1", 53, 0);
    accepted("[::1]", 853, AF_INET6, "::1", 853, 0);
    accepted("[2001:db8::5]:1053", 53, AF_INET6, "2001:db8::5", 1053, 0);
    accepted("::ffff:1.2.3.4", 53, AF_INET6, "::ffff:1.2.3.4", 53, 0);
    accepted("fe80::1%7", 53, AF_INET6, "fe80::1", 53, 7);
    unsigned lo = if_nametoindex("lo");
    if (lo)
        accepted("[fe80::1%lo]:54", 53, AF_INET6, "fe80::1", 54, lo);
}

static void test_refused(void **state)
{
    (void)state;
    const char *bad[] = {
        "", "localhost", "example.org:53", "1", "127.1", "0x7f.0.0.1", "1.2.3.4.5",
        "1.2.3.4:", "1.2.3.4:0", "1.2.3.4:65536", "1.2.3.4:+53", "1.2.3.4:53x",
        "1.2.3.4: 53", "[1.2.3.4]x", "[::1", "[::1]x", "[::1]:", "::1]:53",
        "fe80::1%no-such-interface-x", " 1.2.3.4", "1.2.3.4 ",
        "0000000000000000000000000000000000000000000000000000000000000000000000000000001.2.3.4",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        refused(bad[i]);
    struct sockaddr_storage ss;
    socklen_t len;
    assert_int_equal(addr_parse_ip("1.2.3.4:53", 53, &ss, &len), -1);  /* no port here */
    assert_int_equal(addr_parse_ip("1.2.3.4", 65536, &ss, &len), -1);
    assert_int_equal(addr_parse_ip("1.2.3.4", -1, &ss, &len), -1);
    assert_int_equal(addr_parse_ip("1.2.3.4", 0, &ss, &len), 0);
}

static void test_unmap(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    socklen_t len;
    assert_int_equal(addr_parse("[::ffff:10.0.0.9]:4000", 0, &ss, &len), 0);
    sockaddr_unmap(&ss);
    assert_int_equal(ss.ss_family, AF_INET);
    const struct sockaddr_in *s4 = (const struct sockaddr_in *)&ss;
    assert_int_equal(ntohs(s4->sin_port), 4000);
    assert_int_equal(ntohl(s4->sin_addr.s_addr), 0x0a000009);
    assert_int_equal(addr_parse("[2001:db8::1]:4000", 0, &ss, &len), 0);
    sockaddr_unmap(&ss);                    /* not mapped: unchanged */
    assert_int_equal(ss.ss_family, AF_INET6);
    assert_int_equal(ntohs(((const struct sockaddr_in6 *)&ss)->sin6_port), 4000);
}

/* ---- addr_parse_bytes ------------------------------------------------ */

#define Z ADDR_ZONE
#define U ADDR_UNMAP

/* One row: text (its strlen is the length), the flags, and the family and
 * address printed by inet_ntop it must give; family 0 when refused. */
static const struct bytes_case {
    const char *text;
    unsigned flags;
    int family;
    const char *want;
} BYTES[] = {
    /* IPv4: four decimal octets, nothing else */
    { "1.2.3.4", 0, AF_INET, "1.2.3.4" },
    { "0.0.0.0", 0, AF_INET, "0.0.0.0" },
    { "255.255.255.255", 0, AF_INET, "255.255.255.255" },
    { "255.255.255.256", 0, 0, NULL },
    { "01.2.3.4", 0, 0, NULL },                 /* leading zero */
    { "1.2.3.04", U | Z, 0, NULL },
    { "1.2.3.00", 0, 0, NULL },
    { "1.2.3", 0, 0, NULL },                    /* inet_aton's short forms */
    { "127.1", 0, 0, NULL },
    { "0x7f.0.0.1", 0, 0, NULL },
    { "2130706433", 0, 0, NULL },
    { "1.2.3.4.5", 0, 0, NULL },
    { "1.2.3.4.", 0, 0, NULL },
    { "+1.2.3.4", 0, 0, NULL },
    { " 1.2.3.4", 0, 0, NULL },
    { "1.2.3.4 ", 0, 0, NULL },
    { "1.2.3.4:53", 0, 0, NULL },               /* no port */
    { "[1.2.3.4]", 0, 0, NULL },
    /* IPv6 */
    { "::1", 0, AF_INET6, "::1" },
    { "::", 0, AF_INET6, "::" },
    { "2001:DB8::1", 0, AF_INET6, "2001:db8::1" },
    { "0001:0db8::0001", 0, AF_INET6, "1:db8::1" },   /* up to four hex digits */
    { "00001::1", 0, 0, NULL },
    { "1:2:3:4:5:6:7:8", 0, AF_INET6, "1:2:3:4:5:6:7:8" },
    { "1:2:3:4:5:6:7:8:9", 0, 0, NULL },
    { "1::2::3", 0, 0, NULL },
    { "::1.2.3.4", 0, AF_INET6, "::1.2.3.4" },
    { "[::1]", 0, 0, NULL },                    /* no brackets */
    { "[::1]:53", 0, 0, NULL },
    { "::g", 0, 0, NULL },
    /* IPv4-mapped: IPv6 unless ADDR_UNMAP */
    { "::ffff:1.2.3.4", 0, AF_INET6, "::ffff:1.2.3.4" },
    { "::FFFF:1.2.3.4", U, AF_INET, "1.2.3.4" },
    { "::ffff:102:304", U, AF_INET, "1.2.3.4" },
    { "::fffe:1.2.3.4", U, AF_INET6, "::fffe:102:304" },
    { "::ffff:01.2.3.4", U, 0, NULL },          /* the tail's rules too */
    { "2001:db8::1", U, AF_INET6, "2001:db8::1" },
    /* zones: refused without ADDR_ZONE, dropped unread with it */
    { "fe80::1%eth0", 0, 0, NULL },
    { "fe80::1%eth0", Z, AF_INET6, "fe80::1" },
    { "fe80::1%no-such-interface-x", Z, AF_INET6, "fe80::1" },
    { "fe80::1%2", Z, AF_INET6, "fe80::1" },
    { "::1%", Z, AF_INET6, "::1" },
    { "1.2.3.4%eth0", 0, 0, NULL },
    { "1.2.3.4%eth0", Z, AF_INET, "1.2.3.4" },
    { "::ffff:1.2.3.4%eth0", Z | U, AF_INET, "1.2.3.4" },
    { "%eth0", Z, 0, NULL },
    { "%", Z, 0, NULL },
    { "fe80::1 %eth0", Z, 0, NULL },
    /* empty and too long */
    { "", 0, 0, NULL },
    { "", Z | U, 0, NULL },
    { "0000:0000:0000:0000:0000:ffff:255.255.255.255", 0, AF_INET6, "::ffff:255.255.255.255" },
    { "00000:0000:0000:0000:0000:ffff:255.255.255.255", 0, 0, NULL },
    { "0000000000000000000000000000000000000000000000000000000000001.2.3.4", 0, 0, NULL },
    { "localhost", 0, 0, NULL },
};

#undef Z
#undef U

static void test_bytes_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof BYTES / sizeof *BYTES; i++) {
        const struct bytes_case *c = &BYTES[i];
        uint8_t a[16];
        int fam = -1;
        memset(a, 0xaa, sizeof a);
        int rc = addr_parse_bytes(c->text, strlen(c->text), c->flags, &fam, a);
        if (!c->family) {
            if (rc != -1 || fam != AF_UNSPEC)
                fail_msg("\"%s\" flags %u: accepted (family %d)", c->text, c->flags, fam);
            for (size_t k = 0; k < sizeof a; k++)
                assert_int_equal(a[k], 0);          /* refused: zeroed */
            continue;
        }
        if (rc != 0)
            fail_msg("\"%s\" flags %u: refused", c->text, c->flags);
        if (fam != c->family)
            fail_msg("\"%s\" flags %u: family %d, want %d", c->text, c->flags, fam, c->family);
        char buf[INET6_ADDRSTRLEN];
        assert_non_null(inet_ntop(fam, a, buf, sizeof buf));
        if (strcmp(buf, c->want))
            fail_msg("\"%s\" flags %u: %s, want %s", c->text, c->flags, buf, c->want);
        if (fam == AF_INET)
            for (size_t k = 4; k < sizeof a; k++)
                assert_int_equal(a[k], 0);          /* IPv4: the rest zero */
    }
}

/* The length bounds the text: a prefix of a longer string, no NUL needed
 * after it; a NUL inside the length is refused, as is a zero length. */
static void test_bytes_length(void **state)
{
    (void)state;
    uint8_t a[16];
    int fam;
    const char *net = "10.1.2.3/8";
    assert_int_equal(addr_parse_bytes(net, 8, 0, &fam, a), 0);
    assert_int_equal(fam, AF_INET);
    assert_int_equal(a[0], 10);
    assert_int_equal(a[3], 3);
    assert_int_equal(addr_parse_bytes(net, strlen(net), 0, &fam, a), -1);
    assert_int_equal(addr_parse_bytes(net, 0, 0, &fam, a), -1);
    assert_int_equal(addr_parse_bytes(NULL, 0, 0, &fam, a), -1);
    const char nul[] = "1.2.3.4\0junk";
    assert_int_equal(addr_parse_bytes(nul, sizeof nul - 1, 0, &fam, a), -1);
    const char *noterm = "::1]:53";            /* a bracketed host read in place */
    assert_int_equal(addr_parse_bytes(noterm, 3, 0, &fam, a), 0);
    assert_int_equal(fam, AF_INET6);
    assert_int_equal(a[15], 1);
    /* the zone is never read: text past the '%' may be anything, even a NUL */
    const char zone[] = "::1%\0x";
    assert_int_equal(addr_parse_bytes(zone, sizeof zone - 1, ADDR_ZONE, &fam, a), 0);
    assert_int_equal(fam, AF_INET6);
}

static void test_default_bind(void **state)
{
    (void)state;
    unsetenv("TOPODNS_DEFAULT_BIND");
    assert_null(addr_default_bind());
    setenv("TOPODNS_DEFAULT_BIND", "", 1);
    assert_null(addr_default_bind());
    setenv("TOPODNS_DEFAULT_BIND", "127.0.0.1", 1);
    assert_string_equal(addr_default_bind(), "127.0.0.1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ipv4),
        cmocka_unit_test(test_ipv6),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_unmap),
        cmocka_unit_test(test_bytes_table),
        cmocka_unit_test(test_bytes_length),
        cmocka_unit_test(test_default_bind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
