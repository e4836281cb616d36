/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dns64.c — the dns64 plugin's stanza and the replies it leaves
 * alone (the synthesis itself, with every RFC 6052 layout, is in
 * test_corefile_answers): prefixes that are not IPv6 CIDRs of 32..96 bits
 * in steps of 8 fail with CoreDNS's words; NXDOMAIN, replies that hold
 * AAAA records and questions of other types go out unchanged.
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

static void test_dns64_setup(void **state)
{
    (void)state;
    static const struct { const char *stanza, *msg; } cases[] = {
        { "dns64 64:ff9b::", "plugin/dns64: invalid CIDR address: 64:ff9b::" },
        { "dns64 64:ff9b::/abc", "plugin/dns64: invalid CIDR address: 64:ff9b::/abc" },
        { "dns64 10.0.0.0/8", "plugin/dns64: invalid netmask 32 IPv6 address: \"10.0.0.0/8\"" },
        { "dns64 10.0.0.0/33", "plugin/dns64: invalid CIDR address: 10.0.0.0/33" },
        { "dns64 64:ff9b::/129", "plugin/dns64: invalid CIDR address: 64:ff9b::/129" },
        { "dns64 64:ff9b::/100", "plugin/dns64: invalid prefix length \"64:ff9b::/100\"" },
        { "dns64 2001:db8::/24", "plugin/dns64: invalid prefix length \"2001:d00::/24\"" },
        { "dns64 2001:db8::/36", "plugin/dns64: invalid prefix length \"2001:db8::/36\"" },
        { "dns64 64:ff9b::/96 64:ff9b::/96", "Wrong argument count" },
        { "dns64 {\n        prefix\n    }", "Wrong argument count" },
        { "dns64 {\n        prefix 1.2.3.4/32\n    }", "invalid netmask 32 IPv6 address" },
        { "dns64 {\n        translate_some\n    }", "plugin/dns64: unknown property 'translate_some'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cf[256];
        snprintf(cf, sizeof cf, ". {\n    %s\n}\n", cases[i].stanza);
        test_load_fails(cf, cases[i].msg);
    }
    instance_free(test_must_load(". {\n    dns64 2001:db8:1:2::/64 {\n        allow_ipv4\n    }\n}\n"));
}

static void test_dns64_untouched(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org {\n    dns64 {\n        allow_ipv4\n    }\n"
                                   "    template IN AAAA nx.example.org {\n"
                                   "        rcode NXDOMAIN\n    }\n"
                                   "    hosts {\n        192.0.2.1 v4.example.org\n"
                                   "        192.0.2.2 both.example.org\n"
                                   "        2001:db8::2 both.example.org\n"
                                   "        192.0.2.3 a.nx.example.org\n    }\n}\n");
    test_expect(ins, "v4.example.org.", T_AAAA, RC_NOERROR,
                "v4.example.org. 600 IN AAAA 64:ff9b::c000:201");
    test_expect(ins, "both.example.org.", T_AAAA, RC_NOERROR,
                "both.example.org. 3600 IN AAAA 2001:db8::2");
    test_expect(ins, "a.nx.example.org.", T_AAAA, RC_NXDOMAIN, "");
    test_expect(ins, "v4.example.org.", T_A, RC_NOERROR, "v4.example.org. 3600 IN A 192.0.2.1");
    test_expect(ins, "v4.example.org.", T_TXT, RC_NOERROR, "");
    /* the synthesized reply is not authoritative */
    dns_req *r = test_ask(ins, "v4.example.org.", T_AAAA, "192.0.2.1");
    assert_false(r->resp.flags & F_AA);
    req_free(r);
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dns64_setup),
        cmocka_unit_test(test_dns64_untouched),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
