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
 * chain.
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_refused_input),
        cmocka_unit_test(test_hooks_and_second_write),
        cmocka_unit_test(test_sub_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
