/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dnstap.c — the dnstap plugin's message building (dnstap_internal.h)
 * on real requests and replies: the client side of CLIENT_* messages
 * (family, address, port, transport, time), the upstream side, the wire
 * form of a reply (parsed back equal), a whole Dnstap frame packed and
 * unpacked with protobuf-c; and its Corefile stanza (endpoints, `full`,
 * the block's options; bad endpoints and options fail with the token).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "plugin/dnstap/dnstap_internal.h"
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

static const char *const corefile =
    "example.org {\n    hosts {\n        10.0.0.1 a.example.org\n    }\n}\n";

static void test_client_side(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.7");
    assert_non_null(r);
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    dnstap_client_msg(&m, DNSTAP__MESSAGE__TYPE__CLIENT_QUERY, r, abuf);
    assert_int_equal(m.type, DNSTAP__MESSAGE__TYPE__CLIENT_QUERY);
    assert_true(m.has_socket_family);
    assert_int_equal(m.socket_family, DNSTAP__SOCKET_FAMILY__INET);
    assert_true(m.has_query_address && m.has_query_port);
    assert_int_equal(m.query_address.len, 4);
    assert_memory_equal(m.query_address.data, "\xc0\x00\x02\x07", 4);
    assert_int_equal(m.query_port, 53535);      /* the tests' internal requests */
    assert_false(m.has_response_address);
    assert_true(m.has_socket_protocol);
    assert_int_equal(m.socket_protocol, DNSTAP__SOCKET_PROTOCOL__UDP);
    assert_true(m.has_query_time_sec && m.has_query_time_nsec);
    time_t now = time(NULL);
    assert_true((time_t)m.query_time_sec <= now && (time_t)m.query_time_sec >= now - 5);
    assert_true(m.query_time_nsec < 1000000000u);
    req_free(r);

    r = test_ask(ins, "a.example.org.", T_A, "2001:db8::9");
    dnstap_client_msg(&m, DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, r, abuf);
    assert_int_equal(m.socket_family, DNSTAP__SOCKET_FAMILY__INET6);
    assert_int_equal(m.query_address.len, 16);
    uint8_t want[16];
    inet_pton(AF_INET6, "2001:db8::9", want);
    assert_memory_equal(m.query_address.data, want, 16);
    req_free(r);
    instance_free(ins);
}

static void test_upstream_side(void **state)
{
    (void)state;
    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons(853) };
    inet_pton(AF_INET6, "2001:db8::53", &s6.sin6_addr);
    dnstap_set_addr(&m, (const struct sockaddr *)&s6, 1, abuf);
    assert_true(m.has_response_address && m.has_response_port);
    assert_false(m.has_query_address);
    assert_int_equal(m.response_port, 853);
    assert_int_equal(m.response_address.len, 16);
    assert_memory_equal(m.response_address.data, &s6.sin6_addr, 16);
    assert_int_equal(m.socket_family, DNSTAP__SOCKET_FAMILY__INET6);
    /* another family: nothing set */
    Dnstap__Message m2 = DNSTAP__MESSAGE__INIT;
    struct sockaddr sa = { .sa_family = AF_UNIX };
    dnstap_set_addr(&m2, &sa, 0, abuf);
    assert_false(m2.has_socket_family || m2.has_query_address || m2.has_query_port);
}

/* The reply's wire form parses back to the same reply, and a whole frame
 * carrying it survives protobuf-c's pack and unpack. */
static void test_wire_and_frame(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    dns_req *r = test_ask(ins, "a.example.org.", T_A, "192.0.2.7");
    size_t len = 0;
    uint8_t *wire = dnstap_encode_msg(&r->resp, &len);
    assert_non_null(wire);
    assert_true(len > 12);
    dns_msg back;
    msg_init(&back);
    int hdr_ok = 0;
    assert_int_equal(msg_parse(&back, wire, len, &hdr_ok), 0);
    assert_int_equal(back.id, r->resp.id);
    assert_int_equal(back.rcode, RC_NOERROR);
    assert_true(back.flags & F_QR);
    char a[256], b[256];
    assert_string_equal(test_section(&back, SEC_ANSWER, a, sizeof a),
                        test_section(&r->resp, SEC_ANSWER, b, sizeof b));
    assert_string_equal(a, "a.example.org. 3600 IN A 10.0.0.1");
    msg_free(&back);

    Dnstap__Message m = DNSTAP__MESSAGE__INIT;
    uint8_t abuf[16];
    dnstap_client_msg(&m, DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE, r, abuf);
    m.has_response_message = 1;
    m.response_message = (ProtobufCBinaryData){ len, wire };
    Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
    d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
    d.message = &m;
    size_t plen = dnstap__dnstap__get_packed_size(&d);
    uint8_t *packed = malloc(plen);
    assert_non_null(packed);
    assert_int_equal(dnstap__dnstap__pack(&d, packed), plen);
    Dnstap__Dnstap *u = dnstap__dnstap__unpack(NULL, plen, packed);
    assert_non_null(u);
    assert_non_null(u->message);
    assert_int_equal(u->message->type, DNSTAP__MESSAGE__TYPE__CLIENT_RESPONSE);
    assert_int_equal(u->message->query_port, 53535);
    assert_int_equal(u->message->response_message.len, len);
    assert_memory_equal(u->message->response_message.data, wire, len);
    dnstap__dnstap__free_unpacked(u, NULL);
    free(packed);
    free(wire);
    req_free(r);
    instance_free(ins);
}

static void test_dnstap_setup(void **state)
{
    (void)state;
    instance_free(test_must_load(". {\n    dnstap /tmp/topodns-test-dnstap.sock full {\n"
                                 "        identity test-id\n        version v1\n"
                                 "        extra x\n        message_types CLIENT_QUERY\n    }\n"
                                 "    dnstap unix:///tmp/topodns-test-dnstap2.sock\n"
                                 "    dnstap tcp://127.0.0.1:6000\n    whoami\n}\n"));
    static const struct { const char *line, *msg; } cases[] = {
        { "dnstap", "Wrong argument count" },
        { "dnstap /tmp/x.sock half", "plugin/dnstap: unknown argument 'half' (only 'full')" },
        { "dnstap tcp://127.0.0.1", "plugin/dnstap: invalid tcp endpoint 'tcp://127.0.0.1' (tcp://HOST:PORT)" },
        { "dnstap tls://127.0.0.1:0", "plugin/dnstap: invalid port in 'tls://127.0.0.1:0'" },
        { "dnstap udp://127.0.0.1:53", "plugin/dnstap: endpoint 'udp://127.0.0.1:53' is not supported" },
        { "dnstap /tmp/x.sock {\n        identity\n    }", "Wrong argument count" },
        { "dnstap /tmp/x.sock {\n        extra {/server/name}\n    }",
          "plugin/dnstap: placeholders in extra are not supported" },
        { "dnstap /tmp/x.sock {\n        skipverify yes\n    }", "Wrong argument count" },
        { "dnstap /tmp/x.sock {\n        colour blue\n    }", "unknown property 'colour'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char cf[256];
        snprintf(cf, sizeof cf, ". {\n    %s\n}\n", cases[i].line);
        test_load_fails(cf, cases[i].msg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_side),
        cmocka_unit_test(test_upstream_side),
        cmocka_unit_test(test_wire_and_frame),
        cmocka_unit_test(test_dnstap_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
