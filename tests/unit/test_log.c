/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_log.c — unit tests of the log, errors and reload plugins:
 *   - Go formatting helpers (src/plugin/log/gofmt.c);
 *   - the log format replacer and reply classes (src/plugin/log/replacer.c),
 *     on hand-built requests, and the log plugin end to end through an
 *     instance with req_new_internal()/req_run();
 *   - the errors plugin's Go regexps and consolidation
 *     (src/plugin/errors/errors.c), and its log lines through an instance;
 *   - the reload plugin's Corefile fingerprint (src/plugin/reload/reload.c);
 *   - process log lines (src/common/log.c): control characters escaped.
 * Log lines go to standard output with write(2); tests capture them by
 * pointing fd 1 at a temporary file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "corefile/corefile.h"
#include "plugin/errors/errors.h"
#include "common/gofmt.h"
#include "common/log.h"
#include "plugin/log/replacer.h"
#include "plugin/reload/reload.h"
#include "wire/dname.h"
#include "wire/msg.h"
#include "server/request.h"
#include "server/server.h"
#include "testenv.h"

/* ---- capturing standard output ---------------------------------------------- */

static int cap_saved = -1;
static char cap_path[64];

static void capture_start(void)
{
    snprintf(cap_path, sizeof cap_path, "/tmp/test_log.XXXXXX");
    int fd = mkstemp(cap_path);
    assert_true(fd >= 0);
    fflush(stdout);
    cap_saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    close(fd);
}

/* Stop capturing; returns what was written (malloc'd). */
static char *capture_end(void)
{
    fflush(stdout);
    dup2(cap_saved, STDOUT_FILENO);
    close(cap_saved);
    FILE *fp = fopen(cap_path, "r");
    assert_non_null(fp);
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, fp);
    buf[n] = '\0';
    fclose(fp);
    unlink(cap_path);
    return buf;
}

/* ---- process log lines ------------------------------------------------------- */

/* Regression: an endpoint URL with CR/LF went raw into the log, so input
 * could forge whole log lines. Every control character of a line is
 * escaped (\r \n \t, the rest \xNN); a line is one line whatever the
 * message holds. */
static void test_log_line_escapes(void **state)
{
    (void)state;
    capture_start();
    log_msg("ERROR", "plugin/kubernetes: GET %s: refused",
            "http://x\r\n[INFO] forged\x1b[31m\x7f\tz\\n");
    log_warning("%s", "bell\a nul-free \x01\x1f");
    char *out = capture_end();
    assert_string_equal(out,
                        "[ERROR] plugin/kubernetes: GET http://x\\r\\n[INFO] forged\\x1b[31m\\x7f"
                        "\\tz\\n: refused\n"
                        "[WARNING] bell\\x07 nul-free \\x01\\x1f\n");
    free(out);
    /* a line that fills the buffer with escapes stays one line */
    char big[5000];
    memset(big, '\n', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    capture_start();
    log_info("%s", big);
    out = capture_end();
    size_t len = strlen(out);
    assert_true(len > 4000 && len <= 4096);
    assert_ptr_equal(strchr(out, '\n'), out + len - 1);
    assert_int_equal(strncmp(out, "[INFO] \\n\\n", 11), 0);
    assert_int_equal(strncmp(out + len - 3, "\\n\n", 3), 0);   /* never half an escape */
    free(out);
}

/* ---- Go formatting ------------------------------------------------------------ */

static void test_go_seconds(void **state)
{
    (void)state;
    char b[64];
    go_seconds(123456, b, sizeof b);
    assert_string_equal(b, "0.000123456");
    go_seconds(2000000000, b, sizeof b);
    assert_string_equal(b, "2");
    go_seconds(1500000000, b, sizeof b);
    assert_string_equal(b, "1.5");
    go_seconds(100000000, b, sizeof b);
    assert_string_equal(b, "0.1");
    go_seconds(0, b, sizeof b);
    assert_string_equal(b, "0");
    go_seconds(37990251, b, sizeof b);
    assert_string_equal(b, "0.037990251");
}

static void test_go_duration_str(void **state)
{
    (void)state;
    static const struct { int64_t ns; const char *s; } cases[] = {
        { 0, "0s" }, { 30000000000ll, "30s" }, { 300000000000ll, "5m0s" },
        { 3600000000000ll, "1h0m0s" }, { 1500000000ll, "1.5s" }, { 250000000ll, "250ms" },
        { 1500, "1.5\xc2\xb5s" }, { 90000000000ll, "1m30s" }, { 999, "999ns" },
        { 3723000000000ll, "1h2m3s" }, { -2000000000ll, "-2s" },
    };
    char b[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        go_duration_str(cases[i].ns, b, sizeof b);
        assert_string_equal(b, cases[i].s);
    }
}

/* ---- requests by hand ------------------------------------------------------------ */

/* A wire query: id, name, type, with or without an OPT (DO, bufsize). */
static size_t build_query(uint8_t *w, uint16_t id, const char *name, uint16_t type, int edns,
                          int do_bit, uint16_t bufsize)
{
    memset(w, 0, 12);
    w[0] = (uint8_t)(id >> 8);
    w[1] = (uint8_t)id;
    w[2] = 0x01;                                /* RD */
    w[5] = 1;                                   /* QDCOUNT */
    w[11] = edns ? 1 : 0;                       /* ARCOUNT */
    int n = dname_from_str(w + 12, name);
    assert_true(n > 0);
    size_t len = 12 + (size_t)n;
    w[len++] = (uint8_t)(type >> 8);
    w[len++] = (uint8_t)type;
    w[len++] = 0;
    w[len++] = 1;
    if (edns) {
        uint8_t opt[11] = { 0, 0, 41, (uint8_t)(bufsize >> 8), (uint8_t)bufsize, 0, 0,
                            (uint8_t)(do_bit ? 0x80 : 0), 0, 0, 0 };
        memcpy(w + len, opt, sizeof opt);
        len += sizeof opt;
    }
    return len;
}

typedef struct hreq {
    dns_req r;
    uint8_t wire[512];
} hreq;

static void hreq_init(hreq *h, const char *name, uint16_t type, int edns, int do_bit,
                      uint16_t bufsize)
{
    memset(h, 0, sizeof *h);
    msg_init(&h->r.q);
    msg_init(&h->r.resp);
    h->r.rawlen = build_query(h->wire, 4660, name, type, edns, do_bit, bufsize);
    h->r.raw = h->wire;
    int ok;
    assert_int_equal(msg_parse(&h->r.q, h->wire, h->r.rawlen, &ok), 0);
    h->r.proto = PROTO_UDP;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&h->r.peer;
    s6->sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::1", &s6->sin6_addr);
    s6->sin6_port = htons(50759);
    h->r.start_ns = 1000000000ull;
    msg_reply_to(&h->r.resp, &h->r.q);
    h->r.written = 1;
}

static void hreq_free(hreq *h)
{
    msg_free(&h->r.q);
    msg_free(&h->r.resp);
}

static void add_a(dns_msg *m, int sec, const char *owner, const char *ip)
{
    uint8_t o[DNAME_MAX];
    struct in_addr a;
    dname_from_str(o, owner);
    inet_pton(AF_INET, ip, &a);
    assert_int_equal(msg_add_a(m, sec, o, 300, &a), 0);
}

static void add_soa(dns_msg *m, const char *zone)
{
    uint8_t z[DNAME_MAX], mn[DNAME_MAX], rn[DNAME_MAX];
    dname_from_str(z, zone);
    dname_from_str(mn, "ns1.example.org.");
    dname_from_str(rn, "hostmaster.example.org.");
    assert_int_equal(msg_add_soa(m, SEC_AUTHORITY, z, 300, mn, rn, 1, 2, 3, 4, 5), 0);
}

static char *render(const char *fmt, const dns_req *r, uint64_t now)
{
    log_format *f = logfmt_compile(fmt);
    assert_non_null(f);
    static char line[1024];
    logfmt_render(f, r, now, line, sizeof line);
    logfmt_free(f);
    return line;
}

/* ---- replacer ---------------------------------------------------------------------- */

static void test_default_format(void **state)
{
    (void)state;
    hreq h;
    hreq_init(&h, "Example.ORG.", T_A, 1, 0, 4096);
    h.r.resp.flags |= F_AA;
    add_a(&h.r.resp, SEC_ANSWER, "example.org.", "192.0.2.1");
    const char *line = render(LOG_COMMON_FORMAT, &h.r, 1000000000ull + 37990251ull);
    /* query 12 + 13 + 4 + 11 = 40; reply 12 + 17 + 13 + 10 + 4 = 56, no OPT */
    assert_string_equal(line, "[::1]:50759 - 4660 \"A IN example.org. udp 40 false 4096\" "
                              "NOERROR qr,aa,rd 56 0.037990251s");
    hreq_free(&h);
}

static void test_placeholders(void **state)
{
    (void)state;
    hreq h;
    hreq_init(&h, "www.example.org.", T_AAAA, 1, 1, 100);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&h.r.peer;
    memset(&h.r.peer, 0, sizeof h.r.peer);
    s4->sin_family = AF_INET;
    inet_pton(AF_INET, "10.244.0.5", &s4->sin_addr);
    s4->sin_port = htons(51034);
    struct sockaddr_in *l4 = (struct sockaddr_in *)&h.r.local;
    l4->sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &l4->sin_addr);
    h.r.resp.rcode = RC_NXDOMAIN;
    h.r.resp.flags |= F_TC | F_CD | 0x0040;
    assert_string_equal(render("{remote} {local} {port} {>do} {>bufsize} {type} {>opcode}",
                               &h.r, 0),
                        "10.244.0.5 127.0.0.1 51034 true 512 AAAA 0");
    assert_string_equal(render("{>rflags} {rcode}", &h.r, 0), "qr,tc,rd,z,cd NXDOMAIN");
    /* unknown placeholders stay as text; metadata is "-" without the metadata plugin */
    assert_string_equal(render("x {foo} {type} {/log/class} }", &h.r, 0), "x {foo} AAAA - }");
    assert_string_equal(render("A } {name} { {class} }", &h.r, 0),
                        "A } www.example.org. { IN }");
    char common[1024];
    snprintf(common, sizeof common, "%s", render("{common}", &h.r, 0));
    const char *combined = render("{combined}", &h.r, 0);
    assert_int_equal(strncmp(combined, common, strlen(common)), 0);
    assert_string_equal(combined + strlen(common), " \"0\"");
    h.r.proto = PROTO_TCP;
    assert_string_equal(render("{proto} {>bufsize} {size}", &h.r, 0), "tcp 65535 44");
    h.r.resp.rcode = 23;
    assert_string_equal(render("{rcode}", &h.r, 0), "BADCOOKIE");
    h.r.resp.rcode = 30;
    assert_string_equal(render("{rcode}", &h.r, 0), "30");
    h.r.written = 0;
    assert_string_equal(render("{rcode} {>rflags} {rsize}", &h.r, 0), "- - 0");
    hreq_free(&h);
}

static void test_compile_nodes(void **state)
{
    (void)state;
    log_format *f = logfmt_compile("A {type}");
    assert_int_equal(logfmt_nodes(f), 2);
    logfmt_free(f);
    f = logfmt_compile("{foo}{type}");
    assert_int_equal(logfmt_nodes(f), 2);            /* "{foo}" literal, {type} */
    logfmt_free(f);
    f = logfmt_compile("plain");
    assert_int_equal(logfmt_nodes(f), 1);
    logfmt_free(f);
    f = logfmt_compile("");
    assert_int_equal(logfmt_nodes(f), 0);
    logfmt_free(f);
}

static void test_classes(void **state)
{
    (void)state;
    assert_int_equal(log_class_from_str("all"), LOG_CLASS_ALL);
    assert_int_equal(log_class_from_str("success"), LOG_CLASS_SUCCESS);
    assert_int_equal(log_class_from_str("denial"), LOG_CLASS_DENIAL);
    assert_int_equal(log_class_from_str("error"), LOG_CLASS_ERROR);
    assert_int_equal(log_class_from_str("Denial"), -1);
    hreq h;
    time_t now = time(NULL);
    hreq_init(&h, "a.example.org.", T_A, 0, 0, 0);
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_SUCCESS);   /* empty NOERROR */
    add_soa(&h.r.resp, "example.org.");
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_DENIAL);    /* NODATA */
    h.r.resp.rcode = RC_NXDOMAIN;
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_DENIAL);
    add_a(&h.r.resp, SEC_ANSWER, "a.example.org.", "192.0.2.1");
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_ERROR);     /* NXDOMAIN + answer */
    h.r.resp.rcode = RC_NOERROR;
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_SUCCESS);
    static const int errs[] = { RC_SERVFAIL, RC_REFUSED, RC_NOTIMP, RC_FORMERR };
    for (size_t i = 0; i < 4; i++) {
        h.r.resp.rcode = (uint16_t)errs[i];
        assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_ERROR);
    }
    hreq_free(&h);
    hreq_init(&h, "example.org.", T_AXFR, 0, 0, 0);
    assert_int_equal(log_classify(&h.r.resp, now), LOG_CLASS_ERROR);
    hreq_free(&h);
}

static void test_reply_len(void **state)
{
    (void)state;
    hreq h;
    hreq_init(&h, "example.org.", T_A, 1, 0, 1232);
    assert_int_equal(log_reply_len(&h.r.resp), 12 + 13 + 4);
    add_a(&h.r.resp, SEC_ANSWER, "example.org.", "192.0.2.1");
    add_soa(&h.r.resp, "example.org.");
    h.r.resp.edns.present = 1;                  /* the echoed OPT is not counted */
    assert_int_equal(log_reply_len(&h.r.resp),
                     12 + 17 + (13 + 10 + 4) + (13 + 10 + 17 + 24 + 20));
    hreq_free(&h);
}

/* ---- through an instance ------------------------------------------------------------ */

static instance *load(const char *text)
{
    char path[] = "/tmp/test_log_cf.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[512] = "";
    instance *ins = instance_load(test_env(), path, err, sizeof err);
    unlink(path);
    if (!ins)
        print_error("load: %s\n", err);
    assert_non_null(ins);
    return ins;
}

static int run(instance *ins, const char *name, uint16_t type)
{
    uint8_t w[512];
    size_t n = build_query(w, 7, name, type, 0, 0, 0);
    dns_req *r = req_new_internal(ins, NULL, w, n, "192.0.2.7");
    assert_non_null(r);
    int rc = req_run(r);
    req_free(r);
    return rc;
}

static void test_log_through_chain(void **state)
{
    (void)state;
    instance *ins = load(". {\n log . \"{remote} {name} {rcode} {>rflags} {rsize}\"\n"
                         " log example.org {\n  class denial\n }\n}\n");
    capture_start();
    assert_int_equal(run(ins, "A.Example.COM.", T_A), RC_SERVFAIL);
    char *out = capture_end();
    /* the first rule ('.') matches everything: no chain after log → SERVFAIL */
    assert_string_equal(out, "[INFO] 192.0.2.7 a.example.com. SERVFAIL qr,rd 31\n");
    free(out);
    instance_free(ins);

    ins = load(". {\n log example.org {\n  class denial success\n }\n"
               " log . {\n  class error\n }\n}\n");
    capture_start();
    run(ins, "www.example.org.", T_A);      /* example.org rule: SERVFAIL not logged */
    run(ins, "www.example.net.", T_A);      /* '.' rule: error class logged */
    out = capture_end();
    assert_null(strstr(out, "example.org"));
    assert_non_null(strstr(out, "\"A IN www.example.net. udp 33 false 65535\" SERVFAIL qr,rd 33 "));
    assert_true(strncmp(out, "[INFO] 192.0.2.7:53535 - 7 ", 27) == 0);
    free(out);
    instance_free(ins);
}

static void test_log_setup_errors(void **state)
{
    (void)state;
    static const struct { const char *cf; const char *msg; } cases[] = {
        { ". {\n log {\n  class foo\n }\n}\n", "plugin/log: invalid Class: foo" },
        { ". {\n log {\n  class\n }\n}\n", "Wrong argument count" },
        { ". {\n log {\n  format x\n }\n}\n", "plugin/log: unknown property 'format'" },
        { ". {\n errors a b\n}\n", "Wrong argument count" },
        { ". {\n errors stderr\n}\n", "plugin/errors: invalid log file: stderr" },
        { ". {\n errors {\n  consolidate 30 foo\n }\n}\n", "time: missing unit in duration \"30\"" },
        { ". {\n errors {\n  consolidate 30s foo bar\n }\n}\n",
          "plugin/errors: unknown option in consolidate: bar" },
        { ". {\n errors {\n  consolidate 30s foo show_first info\n }\n}\n",
          "log level must come before show_first" },
        { ". {\n errors {\n  consolidate 30s foo info error\n }\n}\n", "multiple log levels" },
        { ". {\n errors {\n  consolidate 30s \"(\"\n }\n}\n", "error parsing regexp" },
        { ". {\n errors {\n  trace\n }\n}\n", "Unexpected token 'trace'" },
        { ". {\n errors\n errors\n}\n", "only be used once" },
        { ". {\n reload 1s\n}\n", "plugin/reload: interval value must be greater or equal to 2s" },
        { ". {\n reload 10s 500ms\n}\n", "jitter value must be 0 or greater or equal to 1s" },
        { ". {\n reload 10s 2s 3s\n}\n", "Wrong argument count" },
        { ". {\n reload 10\n}\n", "plugin/reload: time: missing unit in duration \"10\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[] = "/tmp/test_log_cf.XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        assert_int_equal(write(fd, cases[i].cf, strlen(cases[i].cf)), (ssize_t)strlen(cases[i].cf));
        close(fd);
        char err[512] = "";
        instance *ins = instance_load(test_env(), path, err, sizeof err);
        unlink(path);
        if (ins || !strstr(err, cases[i].msg))
            print_error("case %zu: got '%s'\n", i, err);
        assert_null(ins);
        assert_non_null(strstr(err, cases[i].msg));
    }
    /* accepted forms */
    instance_free(load(". {\n errors stdout {\n  stacktrace\n  consolidate 5m \".* timeout$\" "
                       "warning show_first\n }\n reload 2s 0\n log a.org b.org {combined}\n}\n"));
}

/* ---- errors ------------------------------------------------------------------------ */

/* consolidate patterns are Go regexps (RE2), the same as rewrite's and
 * template's: Go-only syntax works, Go's errors are Go's messages. */
static void test_errors_go_regex(void **state)
{
    (void)state;
    static const struct { const char *re, *hit, *miss; } cases[] = {
        { "(?i)^read \\d+ .*? [\\d.]+$", "READ 12 from 10.0.0.1", "read x from 10.0.0.1" },
        { "(?:i/o|read) timeout$", "dial: i/o timeout", "i/o timeout later" },
        { "\\bi/o\\b", "udp i/o timeout", "udpi/o timeout" },
        { "(?P<op>read|write) .+? timeout", "write udp: timeout", "wrote udp: timeout" },
        { "^\\pL+ refused", "Connection refused", "1 refused" },
        { "(a|ab)(c|bcd)(d*)", "abcd", "abd" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        errors_inst *e = errors_new();
        char err[256] = "";
        if (errors_add_pattern(e, cases[i].re, 60000000000, "warning", 0, err, sizeof err) < 0)
            fail_msg("%s: %s", cases[i].re, err);
        capture_start();
        errors_report(e, 2, "a.", "A", cases[i].hit);
        errors_report(e, 2, "a.", "A", cases[i].miss);
        char *out = capture_end();
        if (errors_pattern_count(e, 0) != 1)
            fail_msg("%s: count %u", cases[i].re, errors_pattern_count(e, 0));
        char want[256];
        snprintf(want, sizeof want, "[ERROR] plugin/errors: 2 a. A: %s\n", cases[i].miss);
        assert_string_equal(out, want);
        free(out);
        capture_start();
        errors_free(e);
        free(capture_end());
    }
    errors_inst *e = errors_new();
    char err[256] = "";
    assert_int_equal(errors_add_pattern(e, "a{1001}", 1, NULL, 0, err, sizeof err), -1);
    assert_string_equal(err, "error parsing regexp: invalid repeat count: `{1001}`");
    assert_int_equal(errors_add_pattern(e, "a(", 1, NULL, 0, err, sizeof err), -1);
    assert_string_equal(err, "error parsing regexp: missing closing ): `a(`");
    errors_free(e);
}

static void test_errors_consolidate(void **state)
{
    (void)state;
    errors_inst *e = errors_new();
    char err[256];
    assert_int_equal(errors_add_pattern(e, "(?i)I/O TIMEOUT$", 150000000, "warning", 0, err,
                                        sizeof err), 0);
    assert_int_equal(errors_add_pattern(e, "^refused", 150000000, NULL, 1, err, sizeof err), 0);
    assert_int_equal(errors_start_timer(e), 0);
    capture_start();
    for (int i = 0; i < 3; i++)
        errors_report(e, 2, "example.org.", "A", "read udp 1.2.3.4:53: i/o timeout");
    errors_report(e, 2, "example.org.", "A", "refused by upstream");
    errors_report(e, 2, "example.org.", "AAAA", "something else");
    assert_int_equal(errors_pattern_count(e, 0), 3);
    usleep(400000);
    assert_int_equal(errors_pattern_count(e, 0), 0);
    char *out = capture_end();
    assert_string_equal(out,
        "[ERROR] plugin/errors: 2 example.org. A: refused by upstream\n"
        "[ERROR] plugin/errors: 2 example.org. AAAA: something else\n"
        "[WARNING] plugin/errors: 3 errors like '(?i)I/O TIMEOUT$' occurred in last 150ms\n");
    free(out);
    /* show_first: one error only → no summary; two → summary; stop flushes */
    capture_start();
    errors_report(e, 2, "a.", "A", "refused 1");
    errors_report(e, 2, "a.", "A", "refused 2");
    errors_report(e, 2, "a.", "A", "read: i/o timeout");
    errors_free(e);
    out = capture_end();
    assert_string_equal(out,
        "[ERROR] plugin/errors: 2 a. A: refused 1\n"
        "[WARNING] plugin/errors: 1 errors like '(?i)I/O TIMEOUT$' occurred in last 150ms\n"
        "[ERROR] plugin/errors: 2 errors like '^refused' occurred in last 150ms\n");
    free(out);
}

static void test_errors_through_chain(void **state)
{
    (void)state;
    instance *ins = load(". {\n errors\n log . \"{name}\"\n}\n");
    capture_start();
    assert_int_equal(run(ins, "Www.Example.org.", T_MX), RC_SERVFAIL);
    char *out = capture_end();
    assert_string_equal(out, "[INFO] www.example.org.\n"
                             "[ERROR] plugin/errors: 2 www.example.org. MX: "
                             "plugin/log: no next plugin found\n");
    free(out);
    instance_free(ins);
}

/* ---- reload ------------------------------------------------------------------------ */

static void test_reload_json(void **state)
{
    (void)state;
    char err[256];
    cf_file *f = cf_parse_string("Corefile", ".:53 {\n    whoami\n    log . \"<&>\" {\n"
                                 "        class error\n    }\n}\n", err, sizeof err);
    assert_non_null(f);
    char *j = reload_corefile_json(f);
    assert_string_equal(j,
        "[{\"Keys\":[\".:53\"],\"Tokens\":{"
        "\"log\":[{\"File\":\"Corefile\",\"Line\":3,\"Text\":\"log\"},"
        "{\"File\":\"Corefile\",\"Line\":3,\"Text\":\".\"},"
        "{\"File\":\"Corefile\",\"Line\":3,\"Text\":\"\\u003c\\u0026\\u003e\"},"
        "{\"File\":\"Corefile\",\"Line\":3,\"Text\":\"{\"},"
        "{\"File\":\"Corefile\",\"Line\":4,\"Text\":\"class\"},"
        "{\"File\":\"Corefile\",\"Line\":4,\"Text\":\"error\"},"
        "{\"File\":\"Corefile\",\"Line\":5,\"Text\":\"}\"}],"
        "\"whoami\":[{\"File\":\"Corefile\",\"Line\":2,\"Text\":\"whoami\"}]}}]");
    free(j);
    cf_free(f);
}

static void write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static void test_reload_hash(void **state)
{
    (void)state;
    char path[] = "/tmp/test_log_rl.XXXXXX";
    close(mkstemp(path));
    char h1[129], h2[129], raw1[129], raw2[129], err[256];
    write_file(path, ". {\n    whoami\n}\n");
    assert_int_equal(reload_corefile_hash(path, h1, raw1, err, sizeof err), 0);
    assert_int_equal(strlen(h1), 128);
    write_file(path, ". {\n    whoami   # a comment\n}\n");
    assert_int_equal(reload_corefile_hash(path, h2, raw2, err, sizeof err), 0);
    assert_string_equal(h1, h2);                       /* same tokens, same lines */
    assert_string_not_equal(raw1, raw2);
    write_file(path, ". {\n    log\n}\n");
    assert_int_equal(reload_corefile_hash(path, h2, NULL, err, sizeof err), 0);
    assert_string_not_equal(h1, h2);
    write_file(path, ". {\n    log\n");
    assert_int_equal(reload_corefile_hash(path, h2, NULL, err, sizeof err), -2);
    unlink(path);
    assert_int_equal(reload_corefile_hash(path, h2, NULL, err, sizeof err), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_line_escapes),
        cmocka_unit_test(test_go_seconds),
        cmocka_unit_test(test_go_duration_str),
        cmocka_unit_test(test_default_format),
        cmocka_unit_test(test_placeholders),
        cmocka_unit_test(test_compile_nodes),
        cmocka_unit_test(test_classes),
        cmocka_unit_test(test_reply_len),
        cmocka_unit_test(test_log_through_chain),
        cmocka_unit_test(test_log_setup_errors),
        cmocka_unit_test(test_errors_go_regex),
        cmocka_unit_test(test_errors_consolidate),
        cmocka_unit_test(test_errors_through_chain),
        cmocka_unit_test(test_reload_json),
        cmocka_unit_test(test_reload_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
