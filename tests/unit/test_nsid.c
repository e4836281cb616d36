/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_nsid.c — the nsid plugin on its own (testenv.h: the real server): a
 * query carrying the NSID option gets the identifier (the configured words
 * joined by spaces, or the host name) in the reply's OPT record; a query
 * without it, or without EDNS, gets none; too much data is refused.
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

/* A.example.org through ins, with EDNS (and the NSID option when nsid):
 * the NSID option's data of the reply into out, its length, or -1. */
static int reply_nsid(instance *ins, int edns, int nsid, char *out, size_t cap)
{
    dns_msg m;
    msg_init(&m);
    m.id = 9;
    m.flags = F_RD;
    m.has_question = 1;
    assert_true(dname_from_str(m.qname, "a.example.org.") > 0);
    m.qtype = T_A;
    m.qclass = C_IN;
    if (edns) {
        m.edns.present = 1;
        m.edns.udp_size = 1232;
        if (nsid)
            assert_int_equal(edns_opt_add(&m.edns, EDNS_OPT_NSID, NULL, 0), 0);
    }
    uint8_t wire[512];
    int n = msg_encode(&m, wire, sizeof wire, sizeof wire, 0);
    msg_free(&m);
    assert_true(n > 0);
    dns_req *r = test_query_wire(ins, wire, (size_t)n, "192.0.2.1");
    assert_non_null(r);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
    uint16_t len = 0;
    const uint8_t *data = r->resp.edns.present
                        ? edns_opt_find(&r->resp.edns, EDNS_OPT_NSID, &len) : NULL;
    int rc = -1;
    if (data && len < cap) {
        memcpy(out, data, len);
        out[len] = '\0';
        rc = len;
    }
    req_free(r);
    return rc;
}

static void test_nsid_reply(void **state)
{
    (void)state;
    const char *zone = "    hosts {\n        10.0.0.1 a.example.org\n    }\n";
    char cf[512], got[600];
    snprintf(cf, sizeof cf, "example.org {\n    nsid  node-1   rack 7\n%s}\n", zone);
    instance *ins = test_must_load(cf);
    assert_int_equal(reply_nsid(ins, 1, 1, got, sizeof got), 13);
    assert_string_equal(got, "node-1 rack 7");
    assert_int_equal(reply_nsid(ins, 1, 0, got, sizeof got), -1);
    assert_int_equal(reply_nsid(ins, 0, 0, got, sizeof got), -1);
    instance_free(ins);

    /* the default: the host name */
    snprintf(cf, sizeof cf, "example.org {\n    nsid\n%s}\n", zone);
    ins = test_must_load(cf);
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        strcpy(host, "localhost");
    assert_true(reply_nsid(ins, 1, 1, got, sizeof got) > 0);
    assert_string_equal(got, host);
    instance_free(ins);
}

static void test_nsid_setup(void **state)
{
    (void)state;
    char cf[1200];
    int o = snprintf(cf, sizeof cf, ". {\n    nsid ");
    for (int i = 0; i < 26; i++)       /* 26 words of 20 octets: more than 508 */
        o += snprintf(cf + o, sizeof cf - (size_t)o, "abcdefghijklmnopqrs%c ", 'a' + i);
    snprintf(cf + o, sizeof cf - (size_t)o, "\n}\n");
    test_load_fails(cf, "plugin/nsid: more than 508 octets of data");
    test_load_fails(". {\n    nsid a {\n        b\n    }\n}\n", "unknown property 'b'");
    test_load_fails(". {\n    nsid\n    nsid\n}\n", "only be used once");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nsid_reply),
        cmocka_unit_test(test_nsid_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
