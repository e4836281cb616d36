/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lookup.c — lookup sets (src/server/lookup.h): questions a handler
 * asks the whole server while answering a client. Through real instances
 * loaded from Corefiles: whoami (answers at once and shows the question's
 * source, RD bit and EDNS), and forward to an upstream played by this test
 * on 127.0.0.1 (the set runs on, and its done callback comes from the
 * event loop when the upstream replied).
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
#include <arpa/inet.h>
#include <event2/event.h>
#include "server/lookup.h"
#include "server/server.h"
#include "wire/dname.h"
#include "testenv.h"

/* The client's request: an internal one from peer, RD and EDNS as asked. */
static dns_req *client(instance *ins, struct event_base *base, const char *peer, int rd,
                       uint16_t edns)
{
    uint8_t name[DNAME_MAX], wire[512];
    assert_true(dname_from_str(name, "client.example.") > 0);
    dns_query q = { .id = 100, .flags = rd ? F_RD : 0, .qname = name, .qtype = T_A,
                    .qclass = C_IN, .edns_size = edns };
    int len = msg_query(&q, wire, sizeof wire);
    assert_true(len > 0);
    dns_req *r = req_new_internal(ins, base, wire, (size_t)len, peer);
    assert_non_null(r);
    return r;
}

static void name(uint8_t *dn, const char *s)
{
    assert_true(dname_from_str(dn, s) > 0);
}

/* The address in the A record whoami put in the additional section. */
static const char *whoami_addr(const dns_msg *m, char *buf, size_t cap)
{
    for (unsigned i = 0; i < msg_count(m, SEC_ADDITIONAL); i++) {
        dns_rr rr = msg_rr(m, SEC_ADDITIONAL, i);
        if (rr.type == T_A && rr.rdlen == 4)
            return inet_ntop(AF_INET, rr.rdata, buf, (socklen_t)cap);
    }
    return "";
}

static void never(lookup_set *s, void *data)
{
    (void)s;
    (void)data;
    fail_msg("done called for a set that finished at once");
}

/* Answered at once: lookup_run says so, every reply is there, a question
 * asked twice is found under its first index (any case). */
static void test_sync_and_find(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    whoami\n}\n");
    dns_req *r = client(ins, NULL, "192.0.2.7", 1, 0);
    lookup_set *s = lookup_new(ins, r, 4, 0);
    uint8_t a[DNAME_MAX], b[DNAME_MAX], upper[DNAME_MAX];
    name(a, "a.example.");
    name(b, "b.example.");
    name(upper, "A.Example.");
    assert_int_equal(lookup_add(s, a, T_A), 0);
    assert_int_equal(lookup_add(s, b, T_AAAA), 1);
    assert_int_equal(lookup_find(s, upper, T_A), 0);
    assert_int_equal(lookup_find(s, b, T_AAAA), 1);
    assert_int_equal(lookup_find(s, b, T_A), -1);
    assert_int_equal(lookup_count(s), 2);
    assert_null(lookup_reply(s, 0));               /* not run yet */
    assert_int_equal(lookup_run(s, never, NULL), 0);
    const dns_msg *m0 = lookup_reply(s, 0), *m1 = lookup_reply(s, 1);
    assert_non_null(m0);
    assert_non_null(m1);
    assert_true(dname_equal(m0->qname, a));
    assert_int_equal(m1->qtype, T_AAAA);
    assert_null(lookup_reply(s, 2));
    assert_null(lookup_reply(s, -1));
    lookup_free(s);
    req_free(r);
    instance_free(ins);
}

/* What each question copies from the client, flag by flag. */
static void test_flags(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    whoami\n}\n");
    uint8_t q[DNAME_MAX];
    name(q, "q.example.");
    char ip[64];
    /* no flags: from 127.0.0.1, RD set although the client cleared it, no OPT */
    dns_req *r = client(ins, NULL, "192.0.2.7", 0, 0);
    lookup_set *s = lookup_new(ins, r, 4, 0);
    assert_int_equal(lookup_add(s, q, T_A), 0);
    assert_int_equal(lookup_run(s, never, NULL), 0);
    const dns_msg *m = lookup_reply(s, 0);
    assert_string_equal(whoami_addr(m, ip, sizeof ip), "127.0.0.1");
    assert_true(m->flags & F_RD);
    assert_false(m->edns.present);
    lookup_free(s);
    /* every flag: the client's address and RD; 65535 for a client without EDNS */
    s = lookup_new(ins, r, 4, LOOKUP_CLIENT_PEER | LOOKUP_CLIENT_RD | LOOKUP_TCP_65535);
    assert_int_equal(lookup_add(s, q, T_A), 0);
    assert_int_equal(lookup_run(s, never, NULL), 0);
    m = lookup_reply(s, 0);
    assert_string_equal(whoami_addr(m, ip, sizeof ip), "192.0.2.7");
    assert_false(m->flags & F_RD);
    assert_true(m->edns.present);
    lookup_free(s);
    req_free(r);
    /* a client with EDNS: its size (at least 512) whatever the flags */
    r = client(ins, NULL, "192.0.2.7", 1, 1232);
    s = lookup_new(ins, r, 4, 0);
    assert_int_equal(lookup_add(s, q, T_A), 0);
    assert_int_equal(lookup_run(s, never, NULL), 0);
    assert_true(lookup_reply(s, 0)->edns.present);
    lookup_free(s);
    req_free(r);
    instance_free(ins);
}

/* At the depth limit, without an instance: nothing is asked; a set freed
 * before it ran frees its unstarted questions (valgrind, ASan). */
static void test_not_asked(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    whoami\n}\n");
    uint8_t q[DNAME_MAX];
    name(q, "q.example.");
    dns_req *r = client(ins, NULL, "192.0.2.7", 1, 0);
    r->depth = 2;
    lookup_set *s = lookup_new(ins, r, 2, 0);
    assert_int_equal(lookup_add(s, q, T_A), -1);
    assert_int_equal(lookup_count(s), 0);
    assert_int_equal(lookup_run(s, never, NULL), 0);
    lookup_free(s);
    r->depth = 1;
    s = lookup_new(NULL, r, 2, 0);
    assert_int_equal(lookup_add(s, q, T_A), -1);
    lookup_free(s);
    s = lookup_new(ins, r, 2, 0);
    assert_int_equal(lookup_add(s, q, T_A), 0);    /* depth 1 < 2: asked */
    lookup_free(s);                                /* never run */
    req_free(r);
    instance_free(ins);
}

typedef struct waiter {
    int calls;
    struct event_base *base;
    unsigned answers;
} waiter;

static void done_async(lookup_set *s, void *data)
{
    waiter *w = data;
    w->calls++;
    for (int i = 0; i < (int)lookup_count(s); i++)
        if (lookup_reply(s, i))
            w->answers += msg_count(lookup_reply(s, i), SEC_ANSWER);
    lookup_free(s);                 /* the callback may free the set */
    event_base_loopbreak(w->base);
}

/* Questions forwarded upstream run on: done comes once, from the loop,
 * after both replies were kept. */
static void test_async(void **state)
{
    (void)state;
    struct event_base *base = event_base_new();
    test_upstream up;
    int port = test_upstream_start(&up, base, 0xc0000201, 30);
    char conf[256];
    snprintf(conf, sizeof conf, ".:53 {\n    forward . 127.0.0.1:%d\n}\n", port);
    instance *ins = test_must_load(conf);
    dns_req *r = client(ins, base, "192.0.2.7", 1, 0);
    lookup_set *s = lookup_new(ins, r, 4, 0);
    uint8_t a[DNAME_MAX], b[DNAME_MAX];
    name(a, "one.example.");
    name(b, "two.example.");
    assert_int_equal(lookup_add(s, a, T_A), 0);
    assert_int_equal(lookup_add(s, b, T_A), 1);
    waiter w = { .base = base };
    assert_int_equal(lookup_run(s, done_async, &w), 1);
    assert_int_equal(w.calls, 0);
    struct timeval limit = { 5, 0 };
    event_base_loopexit(base, &limit);
    event_base_dispatch(base);
    assert_int_equal(w.calls, 1);
    assert_int_equal(up.nq, 2);
    assert_int_equal(w.answers, 2);
    req_free(r);
    instance_free(ins);
    test_upstream_stop(&up);
    event_base_free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync_and_find),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_not_asked),
        cmocka_unit_test(test_async),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
