/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_minimal.c — the minimal plugin on its own (testenv.h: the real
 * server, template writing replies with all three sections): a positive
 * answer loses its authority and additional sections; NXDOMAIN, NODATA
 * (SOA in authority) and delegations (NS in authority) are written as
 * they are; the stanza takes no arguments.
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
    "    minimal\n"
    "    template IN A yes.example.org {\n"
    "        answer \"{{ .Name }} 60 IN A 10.0.0.1\"\n"
    "        authority \"example.org. 60 IN NS ns.example.org.\"\n"
    "        additional \"ns.example.org. 60 IN A 10.0.0.53\"\n"
    "    }\n"
    "    template IN A nx.example.org {\n"
    "        rcode NXDOMAIN\n"
    "        authority \"example.org. 60 IN SOA ns.example.org. h.example.org. 1 60 60 60 60\"\n"
    "        additional \"ns.example.org. 60 IN A 10.0.0.53\"\n"
    "    }\n"
    "    template IN A nodata.example.org {\n"
    "        authority \"example.org. 60 IN SOA ns.example.org. h.example.org. 1 60 60 60 60\"\n"
    "    }\n"
    "    template IN A deleg.example.org {\n"
    "        authority \"deleg.example.org. 60 IN NS ns.deleg.example.org.\"\n"
    "        additional \"ns.deleg.example.org. 60 IN A 10.0.0.54\"\n"
    "    }\n"
    "    template IN A other.example.org {\n"
    "        additional \"x.example.org. 60 IN A 10.0.0.55\"\n"
    "    }\n"
    "}\n";

/* Counts of the answer, authority and additional sections of name's reply. */
static void counts(instance *ins, const char *name, int rcode, unsigned an, unsigned ns, unsigned ar)
{
    dns_req *r = test_ask(ins, name, T_A, "192.0.2.1");
    assert_non_null(r);
    unsigned got[3] = { msg_count(&r->resp, SEC_ANSWER), msg_count(&r->resp, SEC_AUTHORITY),
                        msg_count(&r->resp, SEC_ADDITIONAL) };
    int rc = (int)r->resp.rcode;
    req_free(r);
    if (rc != rcode || got[0] != an || got[1] != ns || got[2] != ar)
        fail_msg("%s: rcode %d %u/%u/%u, want %d %u/%u/%u", name, rc, got[0], got[1], got[2],
                 rcode, an, ns, ar);
}

static void test_minimal_sections(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    counts(ins, "a.yes.example.org.", RC_NOERROR, 1, 0, 0);
    counts(ins, "a.nx.example.org.", RC_NXDOMAIN, 0, 1, 1);
    counts(ins, "a.nodata.example.org.", RC_NOERROR, 0, 1, 0);
    counts(ins, "a.deleg.example.org.", RC_NOERROR, 0, 1, 1);
    /* no answer and no SOA/NS in authority: a plain success, trimmed */
    counts(ins, "a.other.example.org.", RC_NOERROR, 0, 0, 0);
    instance_free(ins);

    /* the same Corefile without minimal keeps every section */
    char cf[2048];
    snprintf(cf, sizeof cf, "%s", corefile);
    char *m = strstr(cf, "    minimal\n");
    memmove(m, m + 12, strlen(m + 12) + 1);
    ins = test_must_load(cf);
    counts(ins, "a.yes.example.org.", RC_NOERROR, 1, 1, 1);
    counts(ins, "a.other.example.org.", RC_NOERROR, 0, 0, 1);
    instance_free(ins);
}

static void test_minimal_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    minimal yes\n}\n", "Wrong argument count or unexpected line ending near 'yes'");
    test_load_fails(". {\n    minimal {\n        x\n    }\n}\n", "Wrong argument count");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minimal_sections),
        cmocka_unit_test(test_minimal_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
