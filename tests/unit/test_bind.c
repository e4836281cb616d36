/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_bind.c — the bind plugin on its own: the addresses its stanza
 * gives the block's listeners (addresses, the loopback interface's, less
 * the except list; no duplicates), and its errors (a word that is neither
 * an address nor an interface, a bad except, nothing left).
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

/* The block's bind list joined by spaces, sorted as written. */
static void binds(const char *stanza, char *out, size_t cap)
{
    char cf[512];
    snprintf(cf, sizeof cf, ". {\n%s\n    whoami\n}\n", stanza);
    instance *ins = test_must_load(cf);
    const server_block *b = instance_block(ins, 0);
    size_t o = 0;
    out[0] = '\0';
    for (size_t i = 0; i < b->nbind; i++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "", b->bind[i]);
    instance_free(ins);
}

static void test_bind_addresses(void **state)
{
    (void)state;
    char got[512];
    binds("    bind 127.0.0.1 ::1 127.0.0.2", got, sizeof got);
    assert_string_equal(got, "127.0.0.1 ::1 127.0.0.2");
    binds("    bind 127.0.0.1 127.0.0.1", got, sizeof got);
    assert_string_equal(got, "127.0.0.1");
    binds("    bind 127.0.0.1 127.0.0.2 {\n        except 127.0.0.1\n    }", got, sizeof got);
    assert_string_equal(got, "127.0.0.2");
    /* two bind lines add up */
    binds("    bind 127.0.0.1\n    bind 127.0.0.3", got, sizeof got);
    assert_string_equal(got, "127.0.0.1 127.0.0.3");
    /* the loopback interface: at least 127.0.0.1 */
    binds("    bind lo", got, sizeof got);
    assert_non_null(strstr(got, "127.0.0.1"));
    binds("", got, sizeof got);
    assert_string_equal(got, "");
}

static void test_bind_errors(void **state)
{
    (void)state;
    test_load_fails(". {\n    bind no-such-if0\n}\n", "not a valid IP address or interface name");
    test_load_fails(". {\n    bind 127.0.0.1 {\n        except lo\n    }\n}\n", "not a valid IP address");
    test_load_fails(". {\n    bind 127.0.0.1 {\n        except\n    }\n}\n", "Wrong argument count");
    test_load_fails(". {\n    bind 127.0.0.1 {\n        only 127.0.0.1\n    }\n}\n", "unknown property 'only'");
    test_load_fails(". {\n    bind 127.0.0.1 {\n        except 127.0.0.1\n    }\n}\n",
                    "no address left to bind to");
    test_load_fails(". {\n    bind\n}\n", "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bind_addresses),
        cmocka_unit_test(test_bind_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
