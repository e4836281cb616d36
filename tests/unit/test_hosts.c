/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_hosts.c — the hosts plugin on its own: its Corefile stanza (inline
 * entries, a hosts file, ttl, no_reverse, reload, fallthrough; bad lines
 * fail with the token), and its answers to real queries through the real
 * server (testenv.h): A/AAAA/PTR from inline lines and from a file, names
 * outside the zones passed on, NODATA for a name without the asked family,
 * SERVFAIL or the next plugin (whoami) for a missing name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

static void test_hosts_inline(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org in-addr.arpa ip6.arpa {\n"
                         "    hosts {\n"
                         "        10.0.0.1 a.example.org alias.example.org # comment\n"
                         "        10.0.0.2 a.example.org\n"
                         "        fd00::1 a.example.org v6.example.org\n"
                         "        ttl 60\n"
                         "    }\n"
                         "}\n");
    test_expect(ins, "a.example.org.", T_A, RC_NOERROR,
           "a.example.org. 60 IN A 10.0.0.1\na.example.org. 60 IN A 10.0.0.2");
    test_expect(ins, "A.EXAMPLE.org.", T_A, RC_NOERROR,
           "A.EXAMPLE.org. 60 IN A 10.0.0.1\nA.EXAMPLE.org. 60 IN A 10.0.0.2");
    test_expect(ins, "alias.example.org.", T_A, RC_NOERROR, "alias.example.org. 60 IN A 10.0.0.1");
    test_expect(ins, "a.example.org.", T_AAAA, RC_NOERROR, "a.example.org. 60 IN AAAA fd00::1");
    /* exists without that family / type: NODATA, authoritative */
    test_expect(ins, "v6.example.org.", T_A, RC_NOERROR, "");
    test_expect(ins, "a.example.org.", T_MX, RC_NOERROR, "");
    dns_req *r = test_ask(ins, "v6.example.org.", T_A, "192.0.2.1");
    assert_true(r->resp.flags & F_AA);
    req_free(r);
    /* a missing name without fallthrough: SERVFAIL (no SOA to deny with) */
    test_expect(ins, "missing.example.org.", T_A, RC_SERVFAIL, "");
    /* PTR for every name of the address */
    test_expect(ins, "1.0.0.10.in-addr.arpa.", T_PTR, RC_NOERROR,
           "1.0.0.10.in-addr.arpa. 60 IN PTR a.example.org.\n"
           "1.0.0.10.in-addr.arpa. 60 IN PTR alias.example.org.");
    test_expect(ins, "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa.", T_PTR,
           RC_NOERROR,
           "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 60 IN PTR "
           "a.example.org.\n"
           "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa. 60 IN PTR "
           "v6.example.org.");
    instance_free(ins);
}

/* Names outside the plugin's own zones, PTR misses and (with fallthrough)
 * missing names go on to the next plugin: whoami answers them. */
static void test_hosts_fallthrough(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n"
                         "    hosts /nonexistent/hosts example.org {\n"
                         "        10.0.0.1 a.example.org\n"
                         "        10.0.0.9 b.example.net\n"
                         "        fallthrough\n"
                         "    }\n"
                         "    whoami\n"
                         "}\n");
    test_expect(ins, "a.example.org.", T_A, RC_NOERROR, "a.example.org. 3600 IN A 10.0.0.1");
    /* whoami's reply: empty answer, the client in the additional section */
    const char *passed[] = { "missing.example.org.", "b.example.net.", "2.0.0.10.in-addr.arpa." };
    for (size_t i = 0; i < 3; i++) {
        dns_req *r = test_ask(ins, passed[i], i == 2 ? T_PTR : T_A, "192.0.2.1");
        assert_non_null(r);
        char add[1024];
        test_section(&r->resp, SEC_ADDITIONAL, add, sizeof add);
        if (!strstr(add, "IN A 192.0.2.1"))
            fail_msg("%s not passed on: '%s'", passed[i], add);
        req_free(r);
    }
    /* a PTR of an address in the table is answered outside the zones */
    test_expect(ins, "1.0.0.10.in-addr.arpa.", T_PTR, RC_NOERROR,
           "1.0.0.10.in-addr.arpa. 3600 IN PTR a.example.org.");
    instance_free(ins);

    /* fallthrough limited to a zone: only missing names there go on */
    ins = test_must_load(". {\n"
               "    hosts /nonexistent/hosts example.org {\n"
               "        10.0.0.1 a.example.org\n"
               "        fallthrough sub.example.org\n"
               "    }\n"
               "    whoami\n"
               "}\n");
    test_expect(ins, "missing.example.org.", T_A, RC_SERVFAIL, "");
    dns_req *r = test_ask(ins, "x.sub.example.org.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_int_equal(msg_count(&r->resp, SEC_ADDITIONAL), 2);
    req_free(r);
    instance_free(ins);
}

static void test_hosts_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_hosts.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "# a hosts file\n"
                       "127.0.0.1 localhost\n"
                       "10.1.0.5\tfile.example.org  other.example.org\n"
                       "not-an-address ignored.example.org\n"
                       "10.1.0.6\n"
                       "fd00::5 file.example.org\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char cf[1024];
    snprintf(cf, sizeof cf, "example.org in-addr.arpa {\n"
             "    hosts %s {\n"
             "        10.1.0.7 inline.example.org\n"
             "        no_reverse\n"
             "        reload 0\n"
             "    }\n"
             "}\n", path);
    instance *ins = test_must_load(cf);
    test_expect(ins, "file.example.org.", T_A, RC_NOERROR, "file.example.org. 3600 IN A 10.1.0.5");
    test_expect(ins, "other.example.org.", T_A, RC_NOERROR, "other.example.org. 3600 IN A 10.1.0.5");
    test_expect(ins, "file.example.org.", T_AAAA, RC_NOERROR, "file.example.org. 3600 IN AAAA fd00::5");
    test_expect(ins, "inline.example.org.", T_A, RC_NOERROR, "inline.example.org. 3600 IN A 10.1.0.7");
    test_expect(ins, "ignored.example.org.", T_A, RC_SERVFAIL, "");
    /* no_reverse: PTR queries go on (nothing after: not answered here) */
    dns_req *r = test_ask(ins, "5.0.1.10.in-addr.arpa.", T_PTR, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    req_free(r);
    instance_free(ins);
    unlink(path);

    /* a missing file is only a warning: the inline entries still answer */
    ins = test_must_load("example.org {\n    hosts /nonexistent/hosts {\n        10.0.0.3 c.example.org\n    }\n}\n");
    test_expect(ins, "c.example.org.", T_A, RC_NOERROR, "c.example.org. 3600 IN A 10.0.0.3");
    instance_free(ins);
}

static void test_hosts_setup_errors(void **state)
{
    (void)state;
    static const struct { const char *stanza, *msg; } cases[] = {
        { "hosts {\n ttl\n}", "Wrong argument count or unexpected line ending near 'ttl'" },
        { "hosts {\n ttl 1 2\n}", "Wrong argument count or unexpected line ending near '2'" },
        { "hosts {\n ttl 0\n}", "number '0' out of range [1, 4294967295] near '0'" },
        { "hosts {\n ttl abc\n}", "invalid number 'abc' near 'abc'" },
        { "hosts {\n reload 10\n}", "time: missing unit in duration \"10\" near '10'" },
        { "hosts {\n no_reverse yes\n}", "Wrong argument count or unexpected line ending near 'yes'" },
        { "hosts {\n bogus 1\n}", "unknown property 'bogus' near 'bogus'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cf[256];
        snprintf(cf, sizeof cf, "example.org {\n%s\n}\n", cases[i].stanza);
        test_load_fails(cf, cases[i].msg);
    }
    /* an address alone: accepted, nothing added */
    instance_free(test_must_load("example.org {\nhosts {\n 10.0.0.1\n}\n}\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts_inline),
        cmocka_unit_test(test_hosts_fallthrough),
        cmocka_unit_test(test_hosts_file),
        cmocka_unit_test(test_hosts_setup_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
