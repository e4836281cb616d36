/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_timeouts.c — the timeouts plugin on its own: what its stanza writes
 * into the block's TCP deadlines (a bare number is seconds, a later value
 * wins, fields not set stay 0), and the errors of CoreDNS's checks (bounds
 * of 1 second .. 24 hours, maxtcpqueries -1 or positive, unknown options,
 * an empty block).
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

static tcp_timeouts block_timeouts(const char *stanza)
{
    char cf[512];
    snprintf(cf, sizeof cf, ". {\n%s\n    whoami\n}\n", stanza);
    instance *ins = test_must_load(cf);
    assert_int_equal(instance_nblocks(ins), 1);
    tcp_timeouts t = instance_block(ins, 0)->timeouts;
    instance_free(ins);
    return t;
}

#define S 1000000000LL

static void test_timeouts_values(void **state)
{
    (void)state;
    tcp_timeouts t = block_timeouts("    timeouts {\n        read 30\n        write 1m30s\n"
                                    "        idle 24h\n        maxtcpqueries 100\n    }");
    assert_int_equal(t.read_ns, 30 * S);
    assert_int_equal(t.write_ns, 90 * S);
    assert_int_equal(t.idle_ns, 24 * 3600 * S);
    assert_int_equal(t.max_queries, 100);
    /* later wins; unset fields stay 0; a huge count is unlimited */
    t = block_timeouts("    timeouts {\n        read 5s\n        read 1s\n"
                       "        maxtcpqueries 99999999999\n    }");
    assert_int_equal(t.read_ns, 1 * S);
    assert_int_equal(t.write_ns, 0);
    assert_int_equal(t.idle_ns, 0);
    assert_int_equal(t.max_queries, -1);
    t = block_timeouts("    timeouts {\n        maxtcpqueries -1\n    }");
    assert_int_equal(t.max_queries, -1);
    /* without the plugin: nothing set */
    t = block_timeouts("");
    assert_int_equal(t.read_ns, 0);
    assert_int_equal(t.max_queries, 0);
}

static void test_timeouts_errors(void **state)
{
    (void)state;
    static const struct { const char *body, *msg; } cases[] = {
        { "read 0", "timeout provided '0s' needs to be between 1 second and 24 hours" },
        { "read 500ms", "timeout provided '500ms' needs to be between 1 second and 24 hours" },
        { "idle 25h", "timeout provided '25h0m0s' needs to be between 1 second and 24 hours" },
        { "write ten", "plugin/timeouts: failed to parse duration 'ten'" },
        { "read", "plugin/timeouts: Wrong argument count or unexpected line ending" },
        { "read 1 2", "plugin/timeouts: Wrong argument count or unexpected line ending" },
        { "maxtcpqueries 0", "maxtcpqueries provided '0' needs to be -1 (unlimited) or a positive integer" },
        { "maxtcpqueries -2", "maxtcpqueries provided '-2' needs to be -1" },
        { "maxtcpqueries x1",
          "invalid value for maxtcpqueries 'x1': strconv.Atoi: parsing \"x1\": invalid syntax" },
        { "linger 5s", "plugin/timeouts: unknown option: 'linger'" },
        { "", "plugin/timeouts: timeouts block with no timeouts specified" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cf[256];
        snprintf(cf, sizeof cf, ". {\n    timeouts {\n        %s\n    }\n}\n", cases[i].body);
        test_load_fails(cf, cases[i].msg);
    }
    test_load_fails(". {\n    timeouts 5s\n}\n", "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeouts_values),
        cmocka_unit_test(test_timeouts_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
