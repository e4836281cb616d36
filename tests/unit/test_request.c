/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_request.c — the request lifecycle (src/server/request.c) with its
 * dispatch (dispatch.c) and internal transport (internal.c), through real
 * instances loaded from Corefiles: the server-level rules in CoreDNS's
 * order (NOTIMP for another opcode, REFUSED for another class or a name
 * outside every zone, BADVERS for EDNS version 1), the EDNS echo (the
 * client's UDP size), a reply encoded once and kept for req_reply_wire,
 * unparsable packets and bad peers refused by req_new_internal, the done
 * hooks, a second reply dropped, and sub-requests that run the rest of a
 * chain; the worker's request pool (request.c: req_alloc/req_release): a
 * sub-request taken from it and given back leaves its parent's query and
 * reply as they were, and every reply sent has QR set.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "server/core.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "testenv.h"

/* The query packet: name, type, class, EDNS size (0 none), opcode. */
static int query(uint8_t *wire, size_t cap, const char *name, uint16_t qtype, uint16_t qclass,
                 uint16_t edns, unsigned opcode)
{
    uint8_t dn[DNAME_MAX];
    assert_true(dname_from_str(dn, name) > 0);
    dns_query q = { .id = 4242, .flags = F_RD, .qname = dn, .qtype = qtype, .qclass = qclass,
                    .edns_size = edns };
    int len = msg_query(&q, wire, cap);
    assert_true(len > 12);
    wire[2] = (uint8_t)((wire[2] & 0x87) | (opcode << 3));
    return len;
}

/* Run one query through ins; the reply as the client would get it, parsed
 * from req_reply_wire into *m; returns req_run's rcode. */
static int run(instance *ins, const uint8_t *wire, size_t len, dns_msg *m)
{
    dns_req *r = req_new_internal(ins, NULL, wire, len, "192.0.2.9");
    assert_non_null(r);
    int rc = req_run(r);
    size_t rlen = 0;
    const uint8_t *out = req_reply_wire(r, &rlen);
    assert_non_null(out);
    assert_true(rlen >= 12);
    int hdr_ok = 0;
    msg_init(m);
    assert_int_equal(msg_parse(m, out, rlen, &hdr_ok), 0);
    assert_int_equal(m->id, 4242);
    assert_true(m->flags & F_QR);
    req_free(r);
    return rc;
}

static void test_rules(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org:53 {\n    whoami\n}\n");
    uint8_t wire[512];
    dns_msg m;
    int len;

    len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 0, 0);
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_NOERROR);
    assert_int_equal(m.rcode, RC_NOERROR);
    assert_false(m.edns.present);           /* no OPT asked, none echoed */
    msg_free(&m);

    len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 0, 2);     /* STATUS */
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_NOTIMP);
    assert_int_equal(m.rcode, RC_NOTIMP);
    msg_free(&m);

    len = query(wire, sizeof wire, "a.example.org.", T_TXT, C_CH, 0, 0);
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_REFUSED);
    msg_free(&m);

    len = query(wire, sizeof wire, "a.example.net.", T_A, C_IN, 0, 0);     /* no zone */
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_REFUSED);
    assert_int_equal(m.rcode, RC_REFUSED);
    msg_free(&m);

    len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 1232, 0);
    wire[len - 5] = 1;                      /* the OPT's version octet */
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_BADVERS);
    assert_true(m.edns.present);
    assert_int_equal(m.rcode, RC_BADVERS);
    msg_free(&m);

    len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 1232, 0);
    assert_int_equal(run(ins, wire, (size_t)len, &m), RC_NOERROR);
    assert_true(m.edns.present);            /* echoed with the client's size */
    assert_int_equal(m.edns.udp_size, 1232);
    assert_int_equal(m.edns.version, 0);
    msg_free(&m);
    instance_free(ins);
}

static void test_refused_input(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    whoami\n}\n");
    uint8_t wire[512];
    int len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 0, 0);
    assert_null(req_new_internal(ins, NULL, wire, (size_t)len - 3, NULL));  /* cut */
    assert_null(req_new_internal(ins, NULL, wire, 5, NULL));
    assert_null(req_new_internal(ins, NULL, wire, (size_t)len, "not-an-address"));
    dns_req *r = req_new_internal(ins, NULL, wire, (size_t)len, "2001:db8::3");
    assert_non_null(r);
    char addr[64];
    int port = 0;
    req_peer_str(r, addr, sizeof addr, &port);
    assert_string_equal(addr, "2001:db8::3");
    assert_int_equal(req_family(r), 2);
    assert_int_equal(req_run(r), RC_NOERROR);
    req_free(r);
    instance_free(ins);
}

static void count_done(dns_req *r, int rcode, void *data)
{
    (void)r;
    int *n = data;
    (*n)++;
    assert_int_equal(rcode, RC_REFUSED);
}

/* The done hooks run once, with the final rcode; a second reply is
 * dropped (the first one stays). */
static void test_hooks_and_second_write(void **state)
{
    (void)state;
    instance *ins = test_must_load("example.org:53 {\n    whoami\n}\n");
    uint8_t wire[512];
    int len = query(wire, sizeof wire, "x.example.com.", T_A, C_IN, 0, 0);
    dns_req *r = req_new_internal(ins, NULL, wire, (size_t)len, NULL);
    assert_non_null(r);
    int n = 0;
    assert_int_equal(req_on_done(r, count_done, &n), 0);
    assert_int_equal(req_run(r), RC_REFUSED);
    assert_int_equal(n, 1);
    assert_true(r->written);
    assert_int_equal(r->nsent, 1);
    size_t before = 0;
    req_reply_wire(r, &before);
    r->resp.rcode = RC_NOERROR;
    assert_int_equal(req_write(r, NULL), RC_NOERROR);   /* dropped: logged only */
    assert_int_equal(r->nsent, 1);
    size_t after = 0;
    const uint8_t *out = req_reply_wire(r, &after);
    assert_int_equal(after, before);
    assert_int_equal(out[3] & 0xf, RC_REFUSED);
    req_free(r);
    instance_free(ins);
}

/* A sub-request copies its parent's client and runs the chain after the
 * handler given: here whoami, reached from the chain's top. */
static void test_sub_request(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    whoami\n}\n");
    uint8_t wire[512];
    int len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 0, 0);
    dns_req *parent = req_new_internal(ins, NULL, wire, (size_t)len, "198.51.100.4");
    assert_non_null(parent);
    assert_int_equal(req_run(parent), RC_NOERROR);
    assert_null(req_new_sub(parent, wire, 7));          /* not a message */
    len = query(wire, sizeof wire, "b.example.org.", T_AAAA, C_IN, 0, 0);
    dns_req *sub = req_new_sub(parent, wire, (size_t)len);
    assert_non_null(sub);
    assert_int_equal(sub->depth, parent->depth + 1);
    assert_int_equal(sub->proto, PROTO_INTERNAL);
    char addr[64];
    req_peer_str(sub, addr, sizeof addr, NULL);
    assert_string_equal(addr, "198.51.100.4");
    assert_int_equal(sub->q.qtype, T_AAAA);
    req_free(sub);
    req_free(parent);
    instance_free(ins);
}

typedef struct sub_seen {
    int done;
    int qr;                         /* the sub's reply as sent had QR */
    uint16_t id;
} sub_seen;

static void sub_done(dns_req *r, int rcode, void *data)
{
    (void)rcode;
    sub_seen *s = data;
    size_t len = 0;
    const uint8_t *out = req_reply_wire(r, &len);
    s->done++;
    s->qr = len >= 12 && (out[2] & 0x80);
    s->id = len >= 2 ? (uint16_t)(out[0] << 8 | out[1]) : 0;
}

/* Sub-requests come from the parent's worker's pool and go back to it
 * when they finish: the parent's query octets, parsed query and reply are
 * untouched by them (no reply of a chase can land in its parent's packet),
 * the pool hands each request out once, and a request released is taken
 * again by the next req_alloc. */
static void test_pool_and_sub(void **state)
{
    (void)state;
    instance *ins = test_must_load(".:53 {\n    errors\n    whoami\n}\n");
    worker w;
    memset(&w, 0, sizeof w);
    uint8_t wire[512], sw[512];
    int len = query(wire, sizeof wire, "a.example.org.", T_A, C_IN, 1232, 0);
    dns_req *parent = req_new_internal(ins, NULL, wire, (size_t)len, "198.51.100.4");
    assert_non_null(parent);
    assert_int_equal(req_run(parent), RC_NOERROR);
    assert_non_null(parent->block);
    const handler *top = parent->block->chain;
    assert_non_null(top);
    size_t plen = 0;
    const uint8_t *pout = req_reply_wire(parent, &plen);
    uint8_t before[512];
    assert_true(plen >= 12 && plen <= sizeof before);
    assert_true(pout[2] & 0x80);
    memcpy(before, pout, plen);
    parent->worker = &w;            /* as if a worker served it */

    /* twice: the second sub-request is the first one, back from the pool */
    req_full *first = NULL;
    for (int round = 0; round < 2; round++) {
        int slen = query(sw, sizeof sw, round ? "c.example.org." : "b.example.org.", T_AAAA,
                         C_IN, 0, 0);
        sw[0] = 0x77;               /* an ID of its own */
        sw[1] = (uint8_t)round;
        dns_req *sub = req_new_sub(parent, sw, (size_t)slen);
        assert_non_null(sub);
        req_full *f = (req_full *)sub;
        assert_false(f->pooled);
        if (round == 0)
            first = f;
        else
            assert_ptr_equal(f, first);
        assert_int_equal(w.npool, 0);
        sub_seen seen = { 0 };
        assert_int_equal(req_on_done(sub, sub_done, &seen), 0);
        req_start_next(sub, top);   /* whoami answers at once */
        assert_int_equal(seen.done, 1);
        assert_true(seen.qr);
        assert_int_equal(seen.id, 0x7700 | round);
        assert_int_equal(w.npool, 1);                   /* back in the pool */
        assert_ptr_equal(w.pool, first);
        assert_true(first->pooled);
        /* the parent as it was */
        size_t l2 = 0;
        const uint8_t *p2 = req_reply_wire(parent, &l2);
        assert_int_equal(l2, plen);
        assert_memory_equal(p2, before, plen);
        assert_memory_equal(parent->raw, wire, (size_t)len);
        assert_int_equal(parent->q.qtype, T_A);
        assert_int_equal(parent->resp.qtype, T_A);
        assert_true(parent->resp.flags & F_QR);
    }
    /* req_alloc takes it out again, unpooled */
    req_full *again = req_alloc(&w);
    assert_ptr_equal(again, first);
    assert_false(again->pooled);
    assert_int_equal(w.npool, 0);
    assert_null(w.pool);
    req_destroy(again);
    parent->worker = NULL;
    req_free(parent);
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_refused_input),
        cmocka_unit_test(test_hooks_and_second_write),
        cmocka_unit_test(test_sub_request),
        cmocka_unit_test(test_pool_and_sub),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
