/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_template.c — the template plugin: its Go text/template evaluator
 * (tmpl.h) construct by construct — fields, .Group and .Match, index, len,
 * print, parseInt, pipelines, parentheses, literals, trimming, comments —
 * the tree printed as Go prints it (the metric label), constructs refused
 * at compile time, errors Go finds only when running; then the plugin
 * through an instance (testenv's test_load and test_query): synthesized
 * answers, sections, the AA bit, rcode, matching order, class and type
 * ANY, fallthrough, CNAME targets looked up through the chain, counters,
 * and setup errors with file:line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plugin/template/tmpl.h"
#include "runtime/metrics.h"
#include "server/request.h"
#include "server/server.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "testenv.h"

/* ---- the evaluator ----------------------------------------------------- */

static const char *const g_match[] = { "ip-10-7b-3.example.", "10", "7b", "3" };
static const char *const g_names[] = { "", "a", "", "c" };

static const char *meta(const void *ctx, const char *label, char *buf, size_t cap)
{
    (void)ctx;
    if (strcmp(label, "kubernetes/client-namespace"))
        return NULL;
    snprintf(buf, cap, "testns");
    return buf;
}

static tmpl_data data(void)
{
    return (tmpl_data){
        .zone = "example.", .name = "ip-10-7b-3.example.", .regex = "^ip-(?P<a>.*)$",
        .cls = "IN", .type = "A", .remote = "192.0.2.7", .match = g_match, .gname = g_names,
        .nmatch = 4, .message = ";; opcode: QUERY", .question = ";ip-10-7b-3.example.\tIN\t A",
        .qname = "IP-10-7b-3.example.", .id = 4660, .qtype = 1, .qclass = 1, .meta = meta,
    };
}

/* Compile and run text; the output, or "ERR: message". */
static char *run(const char *text)
{
    tmpl *t = NULL;
    char err[256], *out = NULL;
    if (tmpl_compile(text, &t, err, sizeof err) < 0) {
        print_error("compile %s: %s\n", text, err);
        fail();
    }
    tmpl_data d = data();
    if (tmpl_exec(t, &d, &out, err, sizeof err) < 0) {
        size_t n = strlen(err) + 6;
        out = malloc(n);
        snprintf(out, n, "ERR: %s", err);
    }
    tmpl_free(t);
    return out;
}

static void expect(const char *text, const char *want)
{
    char *got = run(text);
    if (strcmp(got, want))
        print_error("%s: got \"%s\", want \"%s\"\n", text, got, want);
    assert_string_equal(got, want);
    free(got);
}

/* Runs but fails like Go's execution error, message containing want. */
static void exec_fails(const char *text, const char *want)
{
    char *got = run(text);
    if (strncmp(got, "ERR: ", 5) || !strstr(got, want))
        print_error("%s: got \"%s\", want an error with \"%s\"\n", text, got, want);
    assert_true(!strncmp(got, "ERR: ", 5) && strstr(got, want));
    free(got);
}

static void refused(const char *text, const char *want)
{
    tmpl *t = NULL;
    char err[256] = "";
    int rc = tmpl_compile(text, &t, err, sizeof err);
    if (rc == 0 || !strstr(err, want))
        print_error("%s: rc %d, error \"%s\", want \"%s\"\n", text, rc, err, want);
    assert_int_equal(rc, -1);
    assert_null(t);
    assert_non_null(strstr(err, want));
}

static void fields(void **state)
{
    (void)state;
    expect("{{ .Name }} 60 IN A 1.2.3.4", "ip-10-7b-3.example. 60 IN A 1.2.3.4");
    expect("{{.Zone}} {{.Class}} {{.Type}} {{.Regex}} {{.Remote}}",
           "example. IN A ^ip-(?P<a>.*)$ 192.0.2.7");
    expect("{{ .Match }}", "[ip-10-7b-3.example. 10 7b 3]");
    expect("{{ .Group }}", "map[0:ip-10-7b-3.example. 1:10 2:7b 3:3 a:10 c:3]");
    expect("{{ .Group.a }}-{{ .Group.c }}", "10-3");
    expect("{{ .Group.nope }}", "<no value>");
    expect("{{ .Message }}", ";; opcode: QUERY");
    expect("{{ .Question }}", ";ip-10-7b-3.example.\tIN\t A");
    expect("{{ .Question.Name }} {{ .Question.Qtype }} {{ .Question.Qclass }} {{ .Message.Id }}",
           "IP-10-7b-3.example. 1 1 4660");
    expect("{{ .Meta \"kubernetes/client-namespace\" }}/{{ .Meta \"other\" }}", "testns/");
    expect("{{ \"kubernetes/client-namespace\" | .Meta }}", "testns");   /* the piped value */
}

static void functions(void **state)
{
    (void)state;
    expect("{{ index .Match 2 }}", "7b");
    expect("{{ index .Group \"a\" }}|{{ index .Group \"2\" }}|{{ index .Group \"zz\" }}", "10|7b|");
    expect("{{ index .Name 0 }}", "105");            /* a byte prints as its number */
    expect("{{ index .Match }}", "[ip-10-7b-3.example. 10 7b 3]");
    expect("{{ len .Match }} {{ len .Name }} {{ len .Group }}", "4 19 6");
    expect("{{ parseInt .Group.a 10 8 }}.{{ parseInt (index .Match 2) 16 8 }}", "10.123");
    expect("{{ parseInt \"0x1f\" 0 64 }} {{ parseInt \"1_000\" 0 0 }}", "31 1000");
    expect("{{ index .Match 2 | len }}", "2");
    expect("{{ print \"a\" 1 2 \"b\" }}", "a1 2b");
    expect("{{ print .Group.nope }}", "<nil>");
    expect("{{ .Group.a | print }}", "10");
    expect("{{ print (index .Match 1) \".\" (index .Match 3) }}", "10.3");
}

static void literals_and_layout(void **state)
{
    (void)state;
    expect("{{ \"a\\tb\\x41\\u00e9\" }}", "a\tbA\xc3\xa9");
    expect("{{ `raw\\n` }}", "raw\\n");
    expect("{{ 0x10 }} {{ -3 }} {{ 0o17 }} {{ 0b11 }} {{ 1_000 }} {{ true }}", "16 -3 15 3 1000 true");
    expect("a  \n {{- .Zone -}} \n  b", "aexample.b");
    expect("a {{-3}} b", "a -3 b");                /* "{{-3" is a number, no trim */
    expect("x{{/* a comment */}}y", "xy");
    expect("x {{- /* trimmed */ -}} y", "xy");
    expect("plain text", "plain text");
    expect("{{ \"}}\" }}", "}}");
}

static void go_tree_string(void **state)
{
    (void)state;
    static const struct { const char *in, *out; } cases[] = {
        { "{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}", "{{.Name}} 60 IN A {{.Group.a}}.{{.Group.b}}" },
        { "{{ index .Match 1 | len }}", "{{index .Match 1 | len}}" },
        { "{{ parseInt (index .Match 2) 16 8 }}", "{{parseInt (index .Match 2) 16 8}}" },
        { "a \n{{- \"x\" -}}\n b", "a{{\"x\"}}b" },
        { "{{ 0x10 }}{{/* c */}}", "{{0x10}}" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tmpl *t = NULL;
        char err[256];
        assert_int_equal(tmpl_compile(cases[i].in, &t, err, sizeof err), 0);
        assert_string_equal(tmpl_string(t), cases[i].out);
        tmpl_free(t);
    }
    tmpl *t = NULL;
    char err[256];
    assert_int_equal(tmpl_compile("{{ .Message }}", &t, err, sizeof err), 0);
    assert_int_equal(tmpl_uses(t), TMPL_USES_MESSAGE);
    tmpl_free(t);
    assert_int_equal(tmpl_compile("{{ .Question.Name }}", &t, err, sizeof err), 0);
    assert_int_equal(tmpl_uses(t), 0);
    tmpl_free(t);
}

static void refusals(void **state)
{
    (void)state;
    refused("{{ $x }}", "variables are not supported");
    refused("{{ $x := .Name }}", "variables are not supported");
    refused("{{ if .Name }}a{{ end }}", "{{if}} is not supported");
    refused("{{ range .Match }}a{{ end }}", "{{range}} is not supported");
    refused("{{ printf \"%s\" .Name }}", "function \"printf\" is not supported");
    refused("{{ eq .Name \"a\" }}", "function \"eq\" is not supported");
    refused("{{ nosuch .Name }}", "function \"nosuch\" not defined");
    refused("{{ .Var.ip }}", ".Var is not supported");
    refused("{{ .Nope }}", "can't evaluate field Nope");
    refused("{{ .Name.Foo }}", "field .Name.Foo is not supported");
    refused("{{ .Question.Foo }}", "is not supported");
    refused("{{ . }}", "bare dot");
    refused("{{ 1.5 }}", "integers only");
    refused("{{ 'a' }}", "character constants are not supported");
    refused("{{ nil }}", "nil is not supported");
    refused("{{ .Name ", "unclosed action");
    refused("{{ }}", "missing value for command");
    refused("{{ .Name | }}", "missing value for command");
    refused("{{ .Name | \"x\" }}", "non executable command in pipeline stage 2");
    refused("{{ (index .Match 1 }}", "unclosed left paren");
    refused("{{ .Name) }}", "unexpected right paren");
    refused("{{ \"abc }}", "unterminated quoted string");
    refused("{{ \"\\q\" }}", "unknown escape");
    refused("{{/* open }}", "unclosed comment");
    refused("{{/* x */ .Name }}", "comment ends before closing delimiter");
    refused("{{ (index .Match 1).X }}", "not supported");
    refused("{{ print(.Name) }}", "unexpected \"(\" in operand");
}

static void execution_errors(void **state)
{
    (void)state;
    exec_fails("{{ index .Match 9 }}", "index out of range: 9");
    exec_fails("{{ index .Match \"1\" }}", "cannot index slice/array with type string");
    exec_fails("{{ index .Group 1 }}", "value has type int; should be string");
    exec_fails("{{ index .Group.nope 0 }}", "index of untyped nil");
    exec_fails("{{ .Group.a | parseInt 16 8 }}", "expected string; got int");
    exec_fails("{{ parseInt .Group.a 10 }}", "wrong number of args for parseInt: want 3 got 2");
    exec_fails("{{ parseInt \"300\" 10 8 }}", "parsing \"300\": value out of range");
    exec_fails("{{ parseInt \"zz\" 10 8 }}", "parsing \"zz\": invalid syntax");
    exec_fails("{{ parseInt \"1\" 1 8 }}", "invalid base 1");
    exec_fails("{{ parseInt \"1\" 10 65 }}", "invalid bit size 65");
    exec_fails("{{ len 3 }}", "len of type int");
    exec_fails("{{ \"a\" \"b\" }}", "can't give argument to non-function");
    exec_fails("{{ .Name \"b\" }}", "cannot be invoked as function");
    exec_fails("{{ .Meta }}", "wrong number of args for Meta: want 1 got 0");
    exec_fails("{{ \"a\" | .Meta \"b\" }}", "wrong number of args for Meta: want 1 got 2");
    exec_fails("{{ .Name | .Zone }}", "cannot be invoked as function");
}

/* ---- the plugin --------------------------------------------------------- */

static dns_req *ask(instance *ins, const char *name, uint16_t type, uint16_t cls)
{
    uint8_t qn[DNAME_MAX];
    assert_true(dname_from_str(qn, name) > 0);
    dns_query q = { .id = 7, .flags = F_RD, .qname = qn, .qtype = type, .qclass = cls };
    dns_req *r = test_query(ins, &q, "192.0.2.9");
    assert_non_null(r);
    return r;
}

/* Records of a section as text, one per line. */
static void section(const dns_req *r, int sec, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (unsigned i = 0; i < msg_count(&r->resp, sec) && n < cap; i++) {
        dns_rr rr = msg_rr(&r->resp, sec, i);
        char line[512];
        assert_true(rr_to_str(&rr, line, sizeof line) > 0);
        n += (size_t)snprintf(out + n, cap - n, "%s\n", line);
    }
}

static const char *const corefile =
    ". {\n"
    "  template IN A example {\n"
    "    match (^|[.])ip-(?P<a>[0-9]*)-(?P<b>[0-9]*)-(?P<c>[0-9]*)-(?P<d>[0-9]*)[.]example[.]$\n"
    "    answer \"{{ .Name }} 60 IN A {{ .Group.a }}.{{ .Group.b }}.{{ .Group.c }}.{{ .Group.d }}\"\n"
    "    authority \"example. 60 IN NS ns0.example.\"\n"
    "    additional \"ns0.example. 60 IN A 203.0.113.8\"\n"
    "    fallthrough\n"
    "  }\n"
    "  template ANY ANY invalid {\n"
    "    rcode NXDOMAIN\n"
    "    authority \"invalid. 60 {{ .Class }} SOA ns.invalid. hostmaster.invalid. (1 60 60 60 60)\"\n"
    "  }\n"
    "  template IN A strict.test {\n"
    "    match ^www[.]\n"
    "    answer \"{{ .Name }} 5 A 192.0.2.1\"\n"
    "  }\n"
    "  template IN A fail.test {\n"
    "    rcode SERVFAIL\n"
    "  }\n"
    "  template IN A bad.test {\n"
    "    match ^tpl[.]\n"
    "    match ^rr[.]\n"
    "    answer \"{{ index .Match 5 }}\"\n"
    "    fallthrough\n"
    "  }\n"
    "  template IN A bad.test {\n"
    "    match ^rr[.]\n"
    "    answer \"{{ .Name }} 60 IN A 300.1.1.1\"\n"
    "  }\n"
    "  template IN A foogle.com {\n"
    "    match \"^foogle\\.com\\.$\"\n"
    "    answer \"foogle.com 60 IN CNAME google.com\"\n"
    "  }\n"
    "  template IN A ede.test {\n"
    "    rcode NXDOMAIN\n"
    "    ederror 21 \"Blocked according to RFC2606\"\n"
    "  }\n"
    "  hosts {\n"
    "    198.51.100.1 google.com\n"
    "    198.51.100.2 other.example\n"
    "  }\n"
    "}\n";

static void answers(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    char buf[2048];
    dns_req *r = ask(ins, "ip-10-1-2-3.example", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    assert_true(r->resp.flags & F_AA);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "ip-10-1-2-3.example.\t60\tIN\tA\t10.1.2.3\n");
    section(r, SEC_AUTHORITY, buf, sizeof buf);
    assert_string_equal(buf, "example.\t60\tIN\tNS\tns0.example.\n");
    section(r, SEC_ADDITIONAL, buf, sizeof buf);
    assert_string_equal(buf, "ns0.example.\t60\tIN\tA\t203.0.113.8\n");
    req_free(r);

    /* The regex misses, fallthrough: the hosts plugin answers. */
    r = ask(ins, "other.example", T_A, C_IN);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_non_null(strstr(buf, "198.51.100.2"));
    assert_string_equal(r->writer, "hosts");
    req_free(r);

    /* ANY ANY: any type; the SOA spelled over several fields in parentheses. */
    r = ask(ins, "a.b.invalid", T_MX, C_IN);
    assert_int_equal(r->resp.rcode, RC_NXDOMAIN);
    assert_true(r->resp.flags & F_AA);
    assert_int_equal(msg_count(&r->resp, SEC_ANSWER), 0);
    section(r, SEC_AUTHORITY, buf, sizeof buf);
    assert_string_equal(buf, "invalid.\t60\tIN\tSOA\tns.invalid. hostmaster.invalid. 1 60 60 60 60\n");
    req_free(r);

    /* Default TTL 3600 and class IN when the template leaves them out. */
    r = ask(ins, "www.strict.test", T_A, C_IN);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "www.strict.test.\t5\tIN\tA\t192.0.2.1\n");
    req_free(r);
    /* No regex matches and no fallthrough: SERVFAIL, nothing written by it. */
    r = ask(ins, "mail.strict.test", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    assert_string_equal(r->writer, "");
    req_free(r);
    /* Another type in the zone of an A-only template: the next plugin. */
    r = ask(ins, "www.strict.test", T_AAAA, C_IN);
    assert_string_not_equal(r->writer, "template");
    req_free(r);
    /* rcode SERVFAIL: the server's bare reply. */
    r = ask(ins, "x.fail.test", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    assert_string_equal(r->writer, "");
    req_free(r);

    /* A CNAME answer to an A query: the target looked up through the chain. */
    r = ask(ins, "foogle.com", T_A, C_IN);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "foogle.com.\t60\tIN\tCNAME\tgoogle.com.\n"
                             "google.com.\t3600\tIN\tA\t198.51.100.1\n");
    req_free(r);

    /* ederror: an OPT record with the extended error. */
    r = ask(ins, "x.ede.test", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_NXDOMAIN);
    uint16_t len = 0;
    const uint8_t *ede = edns_opt_find(&r->resp.edns, EDNS_OPT_EDE, &len);
    assert_non_null(ede);
    assert_int_equal(len, 2 + strlen("Blocked according to RFC2606"));
    assert_int_equal(ede[0] << 8 | ede[1], 21);
    assert_memory_equal(ede + 2, "Blocked according to RFC2606", len - 2);
    req_free(r);
    instance_free(ins);
}

static void failures_and_counters(void **state)
{
    (void)state;
    instance *ins = test_must_load(corefile);
    metrics_registry *reg = test_registry();
    const char *m_ex[] = { "dns://:53", "example.", "", "IN", "A" };
    double before = metrics_value(reg, "coredns_template_matches_total", m_ex);
    dns_req *r = ask(ins, "ip-1-1-1-1.example", T_A, C_IN);
    req_free(r);
    r = ask(ins, "nomatch.example", T_A, C_IN);      /* no regex match: not counted */
    req_free(r);
    if (metrics_value(reg, "coredns_template_matches_total", m_ex) != before + 1)
        print_error("server label is not dns://:53?\n");
    assert_true(metrics_value(reg, "coredns_template_matches_total", m_ex) == before + 1);

    /* Class ANY in the template: the query's class labels the series. */
    const char *m_inv[] = { "dns://:53", "invalid.", "", "IN", "TXT" };
    r = ask(ins, "x.invalid", T_TXT, C_IN);
    req_free(r);
    assert_true(metrics_value(reg, "coredns_template_matches_total", m_inv) >= 1);

    /* A template that fails to run: SERVFAIL, counted with its text. */
    const char *tf[] = { "dns://:53", "bad.test.", "", "IN", "A", "answer", "{{index .Match 5}}" };
    r = ask(ins, "tpl.bad.test", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    assert_non_null(strstr(r->err, "index out of range"));
    req_free(r);
    assert_true(metrics_value(reg, "coredns_template_template_failures_total", tf) >= 1);
    /* The first matching regex of the first matching template wins: rr.
     * matches the first template too, whose answer fails. */
    r = ask(ins, "rr.bad.test", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    req_free(r);
    assert_true(metrics_value(reg, "coredns_template_template_failures_total", tf) >= 2);
    instance_free(ins);

    /* A record that does not parse. */
    ins = test_must_load(". {\n template IN A t {\n  answer \"{{ .Name }} 60 IN A 300.1.1.1\"\n }\n}\n");
    r = ask(ins, "x.t", T_A, C_IN);
    assert_int_equal(r->resp.rcode, RC_SERVFAIL);
    req_free(r);
    const char *rf[] = { "dns://:53", "t.", "", "IN", "A", "answer", "{{.Name}} 60 IN A 300.1.1.1" };
    assert_true(metrics_value(reg, "coredns_template_rr_failures_total", rf) >= 1);
    instance_free(ins);
}

/* Go's regexps (RE2): leftmost-first groups, a lazy repeat, \b and both
 * spellings of named groups reach .Match and .Group as Go fills them. */
static void go_regexes(void **state)
{
    (void)state;
    instance *ins = test_must_load(". {\n template IN TXT go.example {\n"
                         "  match \"^(a|ab)(c|bcd)(d*)\\.go\\.example\\.$\"\n"
                         "  answer \"{{ .Name }} 60 IN TXT \\\"{{ index .Match 1 }}|{{ index .Match 2 }}|"
                         "{{ index .Match 3 }}\\\"\"\n"
                         " }\n template IN TXT lazy.example {\n"
                         "  match \"^(?P<lazy>x+?)(?<rest>x*)\\b\"\n"
                         "  answer \"{{ .Name }} 60 IN TXT \\\"{{ .Group.lazy }}|{{ .Group.rest }}\\\"\"\n"
                         " }\n template IN TXT xy.example {\n"
                         "  match ^alt[.](x|xy)\n"
                         "  answer \"{{ .Name }} 60 IN TXT \\\"{{ index .Match 0 }}|{{ index .Match 1 }}\\\"\"\n"
                         " }\n}\n");
    char buf[2048];
    dns_req *r = ask(ins, "abcd.go.example", T_TXT, C_IN);
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "abcd.go.example.\t60\tIN\tTXT\t\"a|bcd|\"\n");
    req_free(r);
    r = ask(ins, "xxx.lazy.example", T_TXT, C_IN);
    assert_int_equal(r->resp.rcode, RC_NOERROR);
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "xxx.lazy.example.\t60\tIN\tTXT\t\"x|xx\"\n");
    req_free(r);
    r = ask(ins, "alt.xy.example", T_TXT, C_IN);       /* leftmost-longest: alt.xy, xy */
    section(r, SEC_ANSWER, buf, sizeof buf);
    assert_string_equal(buf, "alt.xy.example.\t60\tIN\tTXT\t\"alt.x|x\"\n");
    req_free(r);
    instance_free(ins);
}

static void setup_errors(void **state)
{
    (void)state;
    static const struct { const char *text, *msg; } cases[] = {
        { ". {\n template\n}\n", ":2: Wrong argument count" },
        { ". {\n template IN\n}\n", ":2: Wrong argument count" },
        { ". {\n template XX A\n}\n", ":2: plugin/template: invalid query class XX" },
        { ". {\n template IN AX\n}\n", ":2: plugin/template: invalid RR class AX" },
        { ". {\n template IN A {\n  match\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  match (a\n }\n}\n", ":3: plugin/template: could not parse regex: (a" },
        { ". {\n template IN A {\n  match a{1001}\n }\n}\n",
          ":3: plugin/template: could not parse regex: a{1001}, error parsing regexp: invalid repeat "
          "count: `{1001}`" },
        { ". {\n template IN A {\n  match \\pL{1000}\n }\n}\n",
          ":3: plugin/template: could not parse regex: \\pL{1000}, error parsing regexp: expression "
          "too large" },
        { ". {\n template IN A {\n  answer \"{{ $x }}\"\n }\n}\n",
          ":3: plugin/template: could not compile template: {{ $x }}, variables are not supported" },
        { ". {\n template IN A {\n  answer \"{{ printf \\\"%s\\\" .Name }}\"\n }\n}\n",
          ":3: plugin/template: could not compile template" },
        { ". {\n template IN A {\n  additional\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  rcode\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  rcode NOPE\n }\n}\n", ":3: plugin/template: unknown rcode NOPE" },
        { ". {\n template IN A {\n  rcode NXDOMAIN NOERROR\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  ederror x\n }\n}\n",
          ":3: plugin/template: error parsing extended DNS error code" },
        { ". {\n template IN A {\n  ederror 1 a b\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  var ip 1\n }\n}\n", ":3: plugin/template: var is not supported" },
        { ". {\n template IN A {\n  expr true\n }\n}\n", ":3: plugin/template: expr is not supported" },
        { ". {\n template IN A {\n  bogus\n }\n}\n", ":3: Wrong argument count" },
        { ". {\n template IN A {\n  answer a\n  authority \"{{ .Nope }}\"\n }\n}\n",
          ":4: plugin/template: could not compile template" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[512] = "";
        instance *ins = test_load(cases[i].text, err, sizeof err);
        if (ins || !strstr(err, cases[i].msg))
            print_error("case %zu: %s\n", i, err);
        assert_null(ins);
        assert_non_null(strstr(err, cases[i].msg));
    }
    /* upstream is accepted and ignored; fallthrough with zones; ANY class. */
    instance *ins = test_must_load(". {\n template ANY ANY a.test b.test {\n  upstream\n"
                         "  fallthrough b.test\n  rcode NXDOMAIN\n }\n}\n");
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fields),
        cmocka_unit_test(functions),
        cmocka_unit_test(literals_and_layout),
        cmocka_unit_test(go_tree_string),
        cmocka_unit_test(refusals),
        cmocka_unit_test(execution_errors),
        cmocka_unit_test(answers),
        cmocka_unit_test(failures_and_counters),
        cmocka_unit_test(go_regexes),
        cmocka_unit_test(setup_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
