/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_transfer.c — the transfer plugin's Corefile stanza and the paths of
 * serve() an internal request reaches (it is never TCP, so a transfer is
 * refused before any source is asked). The transfers themselves, over
 * TCP, are tested against the real binary in tests/integration/transfer.sh;
 * the sources' walks in test_file.c and test_kubernetes.c.
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
#include "server/server.h"
#include "testenv.h"

#ifndef SRCDIR
#define SRCDIR "."
#endif

static instance *load(const char *stanza, char *err, size_t errlen)
{
    char path[] = "/tmp/test_transfer.XXXXXX", text[2048];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    int n = snprintf(text, sizeof text, "example.org:1053 {\n    file %s/zones/example.org.zone\n"
                     "%s\n}\n", SRCDIR, stanza);
    assert_int_equal(write(fd, text, (size_t)n), n);
    close(fd);
    instance *ins = instance_load(test_env(), path, err, errlen);
    unlink(path);
    return ins;
}

static void ok(const char *stanza)
{
    char err[1024] = "";
    instance *ins = load(stanza, err, sizeof err);
    if (!ins)
        fail_msg("%s: %s", stanza, err);
    instance_free(ins);
}

static void fails(const char *stanza, const char *want)
{
    char err[1024] = "";
    instance *ins = load(stanza, err, sizeof err);
    if (ins) {
        instance_free(ins);
        fail_msg("loaded: %s", stanza);
    }
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_setup(void **state)
{
    (void)state;
    ok("transfer {\nto *\n}");
    ok("transfer example.org {\nto 10.0.0.1 10.0.0.2:5300\nto fd00::1 [fd00::2]:53\n}");
    ok("transfer {\nto fe80::1%eth0\nsource 10.0.0.9\n}");
    ok("transfer {\nto [fe80::1%eth0]:53 10.0.0.1%eth0\n}");  /* zones dropped, as CoreDNS strips them */
    ok("transfer example.org {\nto *\n}\ntransfer sub.example.org {\nto 10.0.0.1\n}");
    ok("transfer 10.0.0.0/24 {\nto *\n}");
    fails("transfer", "plugin/transfer: 'to' is required");
    fails("transfer {\nsource 10.0.0.1\n}", "'to' is required");
    fails("transfer {\nto\n}", "Wrong argument count");
    fails("transfer {\nto ns1.example.org\n}", "must specify an IP address: `ns1.example.org'");
    fails("transfer {\nto [fd00::1]\n}", "must specify an IP address: `[fd00::1]'");
    ok("transfer {\nto 10.0.0.1:\n}");            /* Go: port "" → 53 */
    fails("transfer {\nto *\nsource x\n}", "invalid source address \"x\"");
    fails("transfer {\nto *\nsource 10.0.0.1\nsource 10.0.0.2\n}", "source already specified");
    fails("transfer {\nto *\nsource\n}", "Wrong argument count");
    fails("transfer {\nto *\nnotify\n}", "unknown property \"notify\"");
    /* errors carry the file and line */
    fails("transfer {\nto bad\n}", ":4: plugin/transfer: must specify an IP address");
}

typedef struct reply {
    int rcode;
    unsigned nanswer;
    int by_server;                   /* a bare reply the server wrote */
} reply;

static reply query(instance *ins, const char *name, uint16_t type)
{
    uint8_t wire[512];
    memset(wire, 0, 12);
    wire[0] = 0x12, wire[1] = 0x34, wire[5] = 1;
    int nl = dname_from_str(wire + 12, name);
    assert_true(nl > 0);
    size_t len = 12 + (size_t)nl;
    wire[len++] = (uint8_t)(type >> 8), wire[len++] = (uint8_t)type;
    wire[len++] = 0, wire[len++] = 1;
    dns_req *r = req_new_internal(ins, NULL, wire, len, NULL);
    assert_non_null(r);
    req_run(r);
    reply out = { r->resp.rcode, msg_count(&r->resp, SEC_ANSWER), r->writer && !*r->writer };
    req_free(r);
    return out;
}

static void test_serve(void **state)
{
    (void)state;
    char err[1024] = "";
    instance *ins = load("transfer {\nto 10.9.9.9\n}", err, sizeof err);
    assert_non_null(ins);
    /* other questions pass through to file */
    reply r = query(ins, "www.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NOERROR);
    assert_int_equal(r.nanswer, 1);
    assert_false(r.by_server);
    /* AXFR/IXFR not over TCP: REFUSED, before the `to` check */
    r = query(ins, "example.org.", T_AXFR);
    assert_int_equal(r.rcode, RC_REFUSED);
    assert_true(r.by_server);
    r = query(ins, "example.org.", T_IXFR);
    assert_int_equal(r.rcode, RC_REFUSED);
    assert_true(r.by_server);
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setup),
        cmocka_unit_test(test_serve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
