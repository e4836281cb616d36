/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_chaos.c — the chaos plugin on its own (testenv.h: the real server):
 * CH TXT version.bind / version.server (the configured version or the
 * default), authors.bind (deduplicated), hostname.bind / id.server (the
 * host name); other names, classes and types go on; bad stanzas fail.
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

/* name CH TXT through ins: the request (req_free it). */
static dns_req *ask_ch(instance *ins, const char *name, uint16_t qclass, uint16_t type)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 3, .qname = qn, .qtype = type, .qclass = qclass };
    dns_req *r = test_query(ins, &q, "192.0.2.1");
    assert_non_null(r);
    return r;
}

static void expect_ch(instance *ins, const char *name, const char *want)
{
    dns_req *r = ask_ch(ins, name, C_CH, T_TXT);
    char got[1024];
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    if (r->resp.rcode != RC_NOERROR || strcmp(got, want))
        fail_msg("%s: rcode %u '%s', want '%s'", name, r->resp.rcode, got, want);
    req_free(r);
}

static void test_chaos_version_authors(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n    chaos MyDNS-1.0 Bob Alice Bob\n    whoami\n}\n");
    expect_ch(ins, "version.bind.", "version.bind. 0 CH TXT \"MyDNS-1.0\"");
    expect_ch(ins, "VERSION.server.", "VERSION.server. 0 CH TXT \"MyDNS-1.0\"");
    /* authors deduplicated, in a random order: both, once each */
    dns_req *r = ask_ch(ins, "authors.bind.", C_CH, T_TXT);
    char got[1024];
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 2);
    assert_non_null(strstr(got, "authors.bind. 0 CH TXT \"Alice\""));
    assert_non_null(strstr(got, "authors.bind. 0 CH TXT \"Bob\""));
    req_free(r);
    char host[256] = "", want[512];
    if (gethostname(host, sizeof host - 1) < 0 || !host[0])
        strcpy(host, "localhost");
    snprintf(want, sizeof want, "hostname.bind. 0 CH TXT \"%s\"", host);
    expect_ch(ins, "hostname.bind.", want);
    snprintf(want, sizeof want, "id.server. 0 CH TXT \"%s\"", host);
    expect_ch(ins, "id.server.", want);
    /* IN class, another type or name: passed on to whoami */
    const struct { const char *name; uint16_t cls, type; } passed[] = {
        { "version.bind.", C_IN, T_TXT }, { "version.bind.", C_CH, T_A },
        { "other.bind.", C_CH, T_TXT },
    };
    for (size_t i = 0; i < 3; i++) {
        r = ask_ch(ins, passed[i].name, passed[i].cls, passed[i].type);
        if (msg_count(&r->resp, SEC_ANSWER) != 0 || msg_count(&r->resp, SEC_ADDITIONAL) != 2)
            fail_msg("case %zu answered by chaos", i);
        req_free(r);
    }
    instance_free(ins);

    /* the default: topodns-VERSION and the default author list */
    ins = test_must_load(". {\n    chaos\n}\n");
    r = ask_ch(ins, "version.bind.", C_CH, T_TXT);
    test_section(&r->resp, SEC_ANSWER, got, sizeof got);
    assert_non_null(strstr(got, "version.bind. 0 CH TXT \"topodns-"));
    req_free(r);
    r = ask_ch(ins, "authors.bind.", C_CH, T_TXT);
    assert_true(msg_count(&r->resp, SEC_ANSWER) >= 1);
    req_free(r);
    instance_free(ins);
}

static void test_chaos_setup(void **state)
{
    (void)state;
    test_load_fails(". {\n    chaos v1 {\n        bogus\n    }\n}\n", "unknown property 'bogus'");
    test_load_fails(". {\n    chaos\n    chaos\n}\n", "only be used once");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chaos_version_authors),
        cmocka_unit_test(test_chaos_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
