/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_rewrite.c — the rewrite plugin through an instance (testenv's
 * test_load and test_query, answers from the hosts plugin): name rules and
 * the reply mapped back, continue/stop, ttl clamping, the edns0 rules as
 * the next plugin sees the query (subnet from the client's address,
 * variables, revert), an invalid name after a rewrite; and the rule parser
 * on its own (rw_rule_parse: CoreDNS's messages, TTL ranges, rcodes) and
 * the {N} expansion.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "plugin/rewrite/rewrite.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "testenv.h"

static dns_req *ask(instance *ins, const char *name, uint16_t type, const char *peer)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 7, .flags = F_RD, .qname = qn, .qtype = type, .qclass = C_IN };
    dns_req *r = test_query(ins, &q, peer);
    assert_non_null(r);
    assert_true(r->written);
    return r;
}

static const char *owner(const dns_req *r, unsigned i, char *buf)
{
    dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, i);
    dname_to_str(buf, RW_NAME_MAX, rr.owner);
    return buf;
}

static const char *qname(const dns_msg *m, char *buf)
{
    dname_to_str(buf, RW_NAME_MAX, m->qname);
    return buf;
}

#define HOSTS " hosts {\n  10.0.0.10 web.cluster.test\n  ttl 3600\n }\n"

static void names_and_reply(void **state)
{
    (void)state;
    char b[RW_NAME_MAX];
    instance *ins = test_must_load(". {\n"
                         " rewrite name exact a.example.org web.cluster.test\n"
                         " rewrite name suffix .example.net .cluster.test\n"
                         " rewrite name substring .cluster.test.example.com .cluster.test answer auto\n"
                         " rewrite continue name exact c1.test c2.test\n"
                         " rewrite name exact c2.test web.cluster.test\n"
                         " rewrite name regex ^([a-z]+)\\.rx\\.test\\.$ {1}.cluster.test\n"
                         HOSTS "}\n");
    dns_req *r = ask(ins, "A.Example.Org.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
    assert_string_equal(owner(r, 0, b), "a.example.org.");      /* exact maps back */
    assert_string_equal(qname(&r->resp, b), "A.Example.Org.");  /* the client's question */
    assert_string_equal(qname(&r->q, b), "web.cluster.test.");  /* what hosts was asked */
    req_free(r);

    r = ask(ins, "web.example.net.", T_A, "192.0.2.1");
    assert_string_equal(owner(r, 0, b), "web.cluster.test.");   /* suffix without auto */
    assert_string_equal(qname(&r->resp, b), "web.example.net.");
    req_free(r);

    r = ask(ins, "web.cluster.test.example.com.", T_A, "192.0.2.1");
    assert_string_equal(owner(r, 0, b), "web.cluster.test.example.com.");
    req_free(r);

    r = ask(ins, "c1.test.", T_A, "192.0.2.1");                 /* two rules, undone last first */
    assert_string_equal(owner(r, 0, b), "c1.test.");
    req_free(r);

    r = ask(ins, "web.rx.test.", T_A, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
    assert_string_equal(qname(&r->q, b), "web.cluster.test.");
    req_free(r);
    instance_free(ins);
}

static void ttl_and_type(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n"
                         " rewrite continue ttl web.cluster.test 30-60\n"
                         " rewrite type TXT A\n"
                         HOSTS "}\n");
    dns_req *r = ask(ins, "web.cluster.test.", T_TXT, "192.0.2.1");
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 1);
    dns_rr rr = msg_rr(&r->resp, SEC_ANSWER, 0);
    assert_int_equal(rr.type, T_A);
    assert_int_equal(rr.ttl, 60);
    assert_int_equal(r->resp.qtype, T_TXT);
    req_free(r);
    instance_free(ins);
}

static void edns0(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n"
                         " rewrite continue edns0 subnet set 24 56\n"
                         " rewrite continue edns0 local set 0xffee {client_ip}\n"
                         " rewrite continue edns0 local append 0xffee {qtype}\n"
                         " rewrite continue edns0 local set 65001 0x0a0b revert\n"
                         HOSTS "}\n");
    dns_req *r = ask(ins, "web.cluster.test.", T_A, "192.0.2.77");
    /* the query the hosts plugin saw */
    assert_true(r->q.edns.present);
    assert_int_equal(r->q.edns.udp_size, 4096);
    assert_true(r->q.edns.has_ecs);
    assert_int_equal(r->q.edns.ecs.family, 1);
    assert_int_equal(r->q.edns.ecs.source_prefix, 24);
    static const uint8_t net[4] = { 192, 0, 2, 0 };
    assert_memory_equal(r->q.edns.ecs.addr, net, 4);
    uint16_t len;
    const uint8_t *d = edns_opt_find(&r->q.edns, 0xffee, &len);
    assert_non_null(d);
    static const uint8_t ip[4] = { 192, 0, 2, 77 };
    assert_int_equal(len, 4);
    assert_memory_equal(d, ip, 4);
    /* the variable rule's append found one and did nothing: one 0xffee */
    unsigned n = 0;
    for (size_t off = 0; off + 4 <= r->q.edns.opts_len;
         off += 4 + (size_t)(r->q.edns.opts[off + 2] << 8 | r->q.edns.opts[off + 3]))
        n += (r->q.edns.opts[off] << 8 | r->q.edns.opts[off + 1]) == 0xffee;
    assert_int_equal(n, 1);
    /* the reply: 0xffee echoed, the reverted 65001 taken out */
    assert_true(r->resp.edns.present);
    assert_non_null(edns_opt_find(&r->resp.edns, 0xffee, &len));
    assert_null(edns_opt_find(&r->resp.edns, 65001, &len));
    req_free(r);
    instance_free(ins);
}

static void invalid_name(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n"
                         " rewrite name regex ^(.*)\\.long\\.$ {1}{1}{1}{1}.cluster.test.\n"
                         HOSTS "}\n");
    dns_req *r = ask(ins, "abcdefghijklmnopqrst.long.", T_A, "192.0.2.1");
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    assert_non_null(strstr(r->err, "invalid name after rewrite: abcdefghijklmnopqrst"));
    char b[RW_NAME_MAX];
    assert_string_equal(qname(&r->resp, b), "abcdefghijklmnopqrst.long.");
    req_free(r);
    instance_free(ins);
}

/* rw_rule_parse on a line of words: "" when it parses, else the message. */
static const char *parse(const char *line, char *err, size_t cap)
{
    char buf[512], *words[32], *save = NULL;
    size_t n = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *w = strtok_r(buf, " ", &save); w && n < 32; w = strtok_r(NULL, " ", &save))
        words[n++] = w;
    rw_conf c = { 0 };
    rw_rule rule;
    err[0] = '\0';
    rw_rule_parse(&rule, (const char *const *)words, n, &c, err, cap);
    rw_rule_free(&rule);
    return err;
}

static void parser(void **state)
{
    (void)state;
    char e[512];
    assert_string_equal(parse("name a b", e, sizeof e), "");
    assert_string_equal(parse("continue name regex (.*)\\.a {1}.b answer auto", e, sizeof e), "");
    assert_string_equal(parse("name suffix a b answer name x y answer value x y", e, sizeof e), "");
    assert_string_equal(parse("name a", e, sizeof e), "too few arguments for a name rule");
    assert_string_equal(parse("name exact a b c", e, sizeof e),
                        "invalid arguments for exact rule");
    assert_string_equal(parse("name exact a b c d", e, sizeof e),
                        "exceeded the number of arguments for a non-answer rule argument for exact rule");
    assert_string_equal(parse("name prefix a b answer", e, sizeof e),
                        "invalid arguments for prefix rule");
    assert_string_equal(parse("name prefix a b answer bogus", e, sizeof e),
                        "invalid type \"bogus\" for answer rule for prefix rule");
    assert_string_equal(parse("name prefix a b answer name x", e, sizeof e),
                        "name answer rule for prefix rule: 2 arguments required");
    assert_string_equal(parse("continue", e, sizeof e), "continue rule must begin with a rule type");
    assert_string_equal(parse("class IN", e, sizeof e), "class rules must have exactly two arguments");
    assert_string_equal(parse("class IN XX", e, sizeof e), "invalid class \"XX\"");
    assert_string_equal(parse("ttl a", e, sizeof e), "too few (1) arguments for a ttl rule");
    assert_string_equal(parse("ttl a - ", e, sizeof e), "invalid TTL '-' for a ttl rule");
    assert_string_equal(parse("ttl a b c d", e, sizeof e), "invalid TTL '' for a ttl rule");
    assert_string_equal(parse("ttl fuzzy a 5", e, sizeof e),
                        "ttl rule supports only exact, prefix, suffix, substring, and regex name matching");
    assert_string_equal(parse("rcode a NXDOMAIN", e, sizeof e), "too few (2) arguments for a rcode rule");
    assert_string_equal(parse("rcode a 24 0", e, sizeof e), "invalid matching RCODE '24' for a rcode rule");
    assert_string_equal(parse("rcode a 23 nxdomain", e, sizeof e), "");
    assert_string_equal(parse("cname a", e, sizeof e), "too few (1) arguments for a cname rule");
    assert_string_equal(parse("cname fuzzy a b", e, sizeof e), "unknown cname rewrite type: fuzzy");
    assert_string_equal(parse("edns0 local", e, sizeof e), "too few arguments for an EDNS0 rule");
    assert_string_equal(parse("edns0 local toggle 1", e, sizeof e), "invalid action: \"toggle\"");
    assert_string_equal(parse("edns0 local set 1", e, sizeof e), "EDNS0 local rules require three or four args");
    assert_string_equal(parse("edns0 local unset", e, sizeof e), "local unset action requires exactly two arguments");
    assert_string_equal(parse("edns0 nsid set x", e, sizeof e), "EDNS0 NSID rules can accept no more than one arg");
    assert_string_equal(parse("edns0 subnet set 24 129", e, sizeof e), "invalid IPv6 bit mask length 129");
    assert_string_equal(parse("edns0 local set 65536 x", e, sizeof e),
                        "strconv.ParseUint: parsing \"65536\": value out of range");
    assert_string_equal(parse("edns0 local set 1 0xag", e, sizeof e), "encoding/hex: invalid byte: U+0067 'g'");
    assert_string_equal(parse("edns0 local set 1 {a/b}", e, sizeof e), "");
    assert_string_equal(parse("edns0 local set 1 {a/b/c}", e, sizeof e), "unsupported variable name \"{a/b/c}\"");
}

static void ttl_ranges(void **state)
{
    (void)state;
    static const struct { const char *s; uint32_t min, max; } ok[] = {
        { "5", 5, 5 }, { "30-60", 30, 60 }, { "30-", 30, 2147483647 }, { "-30", 0, 30 },
        { "0-0", 0, 0 }, { "4294967295", 4294967295u, 4294967295u },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        const char *words[] = { "ttl", "a.b", ok[i].s };
        rw_conf c = { 0 };
        rw_rule rule;
        char err[256] = "";
        assert_int_equal(rw_rule_parse(&rule, words, 3, &c, err, sizeof err), 0);
        assert_int_equal(rule.ttl_min, ok[i].min);
        assert_int_equal(rule.ttl_max, ok[i].max);
        assert_string_equal(rule.from, "a.b.");
        rw_rule_free(&rule);
    }
    static const char *const bad[] = { "", "-", "1-2-3", "60-30", "4294967296", "+5", "a" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *words[] = { "ttl", "a.b", bad[i] };
        rw_conf c = { 0 };
        rw_rule rule;
        char err[256] = "";
        assert_int_equal(rw_rule_parse(&rule, words, 3, &c, err, sizeof err), -1);
        rw_rule_free(&rule);
    }
}

static void expand(void **state)
{
    (void)state;
    char out[64];
    const char *src = "foo.bar";
    long m[6] = { 0, 7, 0, 3, -1, -1 };           /* {0} foo.bar, {1} foo, {2} unset */
    rw_expand("{1}-{2}.{0}.{1}", src, m, 2, out, sizeof out);
    assert_string_equal(out, "foo-.foo.bar.foo");
    rw_expand("{3}x", src, m, 2, out, sizeof out);  /* a group the pattern lacks stays */
    assert_string_equal(out, "{3}x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_reply),
        cmocka_unit_test(ttl_and_type),
        cmocka_unit_test(edns0),
        cmocka_unit_test(invalid_name),
        cmocka_unit_test(parser),
        cmocka_unit_test(ttl_ranges),
        cmocka_unit_test(expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
