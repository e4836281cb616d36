/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_view_expr.c — the view plugin's expressions (src/plugin/view/expr.c)
 * compiled and evaluated against parsed queries with given client and
 * server addresses: every query function, incidr with IPv4, IPv6 and
 * IPv4-mapped clients, the operators and their precedence, regex matches,
 * and what expr_compile() refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "plugin/view/expr.h"
#include "wire/dname.h"
#include "wire/msg.h"

typedef struct qctx {
    dns_req r;
    uint8_t wire[512];
} qctx;

static void set_addr(struct sockaddr_storage *ss, const char *ip, int port)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
    } else {
        assert_int_equal(inet_pton(AF_INET6, ip, &s6->sin6_addr), 1);
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
    }
}

static void make(qctx *c, const char *name, uint16_t type, const char *client, int tcp)
{
    memset(c, 0, sizeof *c);
    msg_init(&c->r.q);
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 4242, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    int n = msg_query(&q, c->wire, sizeof c->wire);
    assert_true(n > 0);
    int hdr_ok;
    assert_int_equal(msg_parse(&c->r.q, c->wire, (size_t)n, &hdr_ok), 0);
    c->r.raw = c->wire;
    c->r.rawlen = c->r.rawlen_in = (size_t)n;
    c->r.proto = tcp ? PROTO_TCP : PROTO_UDP;
    set_addr(&c->r.peer, client, 40000);
    set_addr(&c->r.local, strchr(client, ':') ? "::1" : "127.0.0.1", 5353);
}

static int eval_on(const char *text, const qctx *c)
{
    char err[256] = "";
    expr *e = expr_compile(text, err, sizeof err);
    if (!e)
        print_error("compile '%s': %s\n", text, err);
    assert_non_null(e);
    int v = expr_eval(e, &c->r);
    expr_free(e);
    return v;
}

static void refused(const char *text, const char *why)
{
    char err[256] = "";
    expr *e = expr_compile(text, err, sizeof err);
    if (e)
        print_error("'%s' compiled\n", text);
    assert_null(e);
    if (!strstr(err, why))
        print_error("'%s': '%s' lacks '%s'\n", text, err, why);
    assert_non_null(strstr(err, why));
}

static void test_functions(void **state)
{
    (void)state;
    qctx c;
    make(&c, "www.Example.com.", T_AAAA, "127.0.0.9", 0);
    assert_true(eval_on("name() == 'www.example.com.'", &c));
    assert_true(eval_on("type() == 'AAAA'", &c));
    assert_true(eval_on("class() == 'IN'", &c));
    assert_true(eval_on("client_ip() == '127.0.0.9'", &c));
    assert_true(eval_on("port() == '40000'", &c));
    assert_true(eval_on("server_ip() == '127.0.0.1' && server_port() == '5353'", &c));
    assert_true(eval_on("proto() == 'udp'", &c));
    assert_true(eval_on("id() == 4242 && opcode() == 0", &c));
    assert_true(eval_on("size() > 20 && size() < 100", &c));
    assert_true(eval_on("bufsize() == 512", &c));
    assert_false(eval_on("do()", &c));
    msg_free(&c.r.q);
    make(&c, "a.test.", T_A, "::ffff:10.1.2.3", 1);
    assert_true(eval_on("proto() == \"tcp\"", &c));
    assert_true(eval_on("incidr(client_ip(), '10.0.0.0/8')", &c));
    assert_false(eval_on("incidr(client_ip(), '10.2.0.0/16')", &c));
    /* host bits in the network are allowed and dropped, as Go does */
    assert_true(eval_on("incidr(client_ip(), '10.1.9.9/16')", &c));
    msg_free(&c.r.q);
    make(&c, "a.test.", T_A, "2001:db8::5", 0);
    assert_true(eval_on("client_ip() == '2001:db8::5'", &c));
    assert_true(eval_on("incidr(client_ip(), '2001:db8::/32')", &c));
    assert_true(eval_on("incidr('[2001:db8::5]', '2001:db8::/125')", &c));
    assert_false(eval_on("incidr('[2001:db8::5]', '2001:db8::/126')", &c));
    assert_false(eval_on("incidr(client_ip(), '2001:db9::/32')", &c));
    assert_false(eval_on("incidr(client_ip(), '127.0.0.0/8')", &c));
    /* a CIDR that is not a literal is parsed per query; a bad one is false */
    assert_false(eval_on("incidr(client_ip(), name())", &c));
    msg_free(&c.r.q);
}

static void test_operators(void **state)
{
    (void)state;
    qctx c;
    make(&c, "abc.x.y.example.com.", T_A, "127.0.0.1", 0);
    assert_true(eval_on("type() in ['A', 'AAAA']", &c));
    assert_false(eval_on("type() not in ['A', 'AAAA']", &c));
    assert_true(eval_on("name() matches '^abc\\\\..*\\\\.example\\\\.com\\\\.$'", &c));
    assert_false(eval_on("name() matches '^abd\\\\.'", &c));
    assert_true(eval_on("name() startsWith 'abc.'", &c));
    assert_true(eval_on("name() endsWith 'com.'", &c));
    assert_true(eval_on("name() startsWith 'abc.' and name() endsWith 'com.'", &c));
    assert_true(eval_on("name() contains '.y.'", &c));
    assert_true(eval_on("!(type() == 'MX') && not false", &c));
    /* && binds tighter than || */
    assert_true(eval_on("true || false && false", &c));
    assert_false(eval_on("(true || false) && false", &c));
    assert_true(eval_on("(type() == 'A' && name() == 'x.') || client_ip() == '127.0.0.1'", &c));
    assert_true(eval_on("id() >= 1 && 'b' > 'a' && 3 != 4", &c));
    msg_free(&c.r.q);
}

static void test_refused(void **state)
{
    (void)state;
    refused("client_ip() + 1", "unsupported character '+'");
    refused("type() == 1", "compares a string with a int");
    refused("name()", "not a bool");
    refused("env('HOME') == 'x'", "unknown or unsupported name 'env'");
    refused("metadata('x') == 'a'", "unknown or unsupported name 'metadata'");
    refused("name() matches 'a{1001}'", "'matches'");
    refused("name() matches name()", "string literal");
    refused("incidr(client_ip(), '10.0.0.0/33')", "invalid CIDR");
    /* Go's net.ParseCIDR: the length is plain decimal digits */
    refused("incidr(client_ip(), '10.0.0.0/+8')", "invalid CIDR");
    refused("incidr(client_ip(), '10.0.0.0/ 8')", "invalid CIDR");
    refused("incidr(client_ip())", "takes 2 arguments");
    refused("(true", "missing ')'");
    refused("type() in 'A'", "needs a list");
    refused("type() in ['A', 1]", "in a list holding a int");
    refused("'unterminated", "unterminated string");
    refused("true true", "after the expression");
    refused("", "unexpected end");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_functions),
        cmocka_unit_test(test_operators),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
