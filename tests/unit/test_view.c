/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_view.c — the view plugin's block logic (the expression language
 * has its own test, test_view_expr): blocks of one zone with views route
 * a query to the first block whose expressions all hold, else to the block
 * without a view; every expr line of every view occurrence must hold; a
 * bad expression stops the load at its line, and so do bad stanzas.
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

static const char *const corefile =
    "example.org {\n"
    "    view inside {\n"
    "        expr incidr(client_ip(), '10.0.0.0/8')\n"
    "    }\n"
    "    hosts {\n        10.1.1.1 www.example.org\n    }\n"
    "}\n"
    "example.org {\n"
    "    view v6aaaa {\n"
    "        expr incidr(client_ip(), '2001:db8::/32')\n"
    "    }\n"
    "    view also {\n"
    "        expr type() == 'AAAA'\n"
    "    }\n"
    "    hosts {\n        2001:db8::99 www.example.org\n        192.0.2.99 www.example.org\n    }\n"
    "}\n"
    "example.org {\n"
    "    hosts {\n        192.0.2.1 www.example.org\n        2001:db8::1 www.example.org\n    }\n"
    "}\n";

/* www.example.org type from peer: the answer's text. */
static void from(instance *ins, const char *peer, uint16_t type, const char *want)
{
    dns_req *r = test_ask(ins, "www.example.org.", type, peer);
    assert_non_null(r);
    char got[1024];
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    req_free(r);
    if (strcmp(got, want))
        fail_msg("from %s type %u: '%s', want '%s'", peer, type, got, want);
}

static void test_view_routing(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    from(ins, "10.2.3.4", T_A, "www.example.org. 3600 IN A 10.1.1.1");
    from(ins, "192.0.2.200", T_A, "www.example.org. 3600 IN A 192.0.2.1");
    /* both views' expressions hold: the second block */
    from(ins, "2001:db8::5", T_AAAA, "www.example.org. 3600 IN AAAA 2001:db8::99");
    /* only one of them holds: the default block */
    from(ins, "2001:db8::5", T_A, "www.example.org. 3600 IN A 192.0.2.1");
    from(ins, "2001:db9::5", T_AAAA, "www.example.org. 3600 IN AAAA 2001:db8::1");
    instance_free(ins);
}

static void test_view_setup(void **state)
{
    (void)state;
    test_load_fails("example.org {\n    view x {\n        expr client_ip() + 1\n    }\n}\n",
                    ":3: plugin/view: unsupported character '+'");
    test_load_fails("example.org {\n    view x {\n        expr name()\n    }\n}\n", "not a bool");
    test_load_fails("example.org {\n    view {\n        expr true\n    }\n}\n", "Wrong argument count");
    test_load_fails("example.org {\n    view x {\n        match true\n    }\n}\n",
                    "unknown property 'match'");
    test_load_fails("example.org {\n    view x {\n        expr\n    }\n}\n", "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_routing),
        cmocka_unit_test(test_view_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
