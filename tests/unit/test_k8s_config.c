/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_k8s_config.c — API client configuration: kubeconfig (contexts,
 * current-context, token, tokenFile relative to the file, *-data base64,
 * insecure), endpoint, in-cluster from the environment. The *-data fields
 * decode as Go's standard base64 does (padding required, CR and LF ignored
 * anywhere, anything else outside the alphabet rejected); an invalid,
 * empty or NUL-carrying field is an error naming it, never dropped. A
 * client made for a token over plain http:// warns once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <curl/curl.h>
#include "k8s/k8s.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *fp = fopen(p, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
}

static const char kubeconfig[] =
    "apiVersion: v1\nkind: Config\ncurrent-context: dev\n"
    "clusters:\n"
    "- name: c1\n  cluster:\n    server: https://10.0.0.1:6443/\n"
    "    certificate-authority-data: aGVsbG8gY2E=\n"
    "- name: c2\n  cluster:\n    server: http://127.0.0.1:8001\n    insecure-skip-tls-verify: true\n"
    "    certificate-authority: ca.pem\n"
    "users:\n"
    "- name: u1\n  user:\n    token: abc123\n    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n"
    "- name: u2\n  user:\n    tokenFile: tok\n    client-certificate: /abs/cert.pem\n    client-key: key.pem\n"
    "contexts:\n"
    "- name: dev\n  context: {cluster: c1, user: u1}\n"
    "- name: prod\n  context: {cluster: c2, user: u2}\n";

static void test_kubeconfig_current_context(void **state)
{
    char p[256], err[256];
    snprintf(p, sizeof p, "%s/kc", dir);
    k8s_config c;
    assert_int_equal(k8s_config_kubeconfig(&c, p, NULL, err, sizeof err), 0);
    assert_string_equal(c.server, "https://10.0.0.1:6443");       /* trailing / dropped */
    assert_string_equal(c.ca_data, "hello ca");
    assert_string_equal(c.token, "abc123");
    assert_string_equal(c.cert_data, "cert");
    assert_string_equal(c.key_data, "key");
    assert_false(c.insecure);
    assert_null(c.token_file);
    k8s_config_free(&c);
}

static void test_kubeconfig_named_context(void **state)
{
    char p[256], err[256], want[256];
    snprintf(p, sizeof p, "%s/kc", dir);
    k8s_config c;
    assert_int_equal(k8s_config_kubeconfig(&c, p, "prod", err, sizeof err), 0);
    assert_string_equal(c.server, "http://127.0.0.1:8001");
    assert_true(c.insecure);
    snprintf(want, sizeof want, "%s/ca.pem", dir);
    assert_string_equal(c.ca_file, want);                           /* relative to the file */
    snprintf(want, sizeof want, "%s/tok", dir);
    assert_string_equal(c.token_file, want);
    assert_string_equal(c.cert_file, "/abs/cert.pem");
    k8s_config_free(&c);
    assert_int_equal(k8s_config_kubeconfig(&c, p, "nope", err, sizeof err), -1);
    assert_non_null(strstr(err, "context 'nope' not found"));
}

static void test_kubeconfig_bad(void **state)
{
    char p[256], err[256];
    k8s_config c;
    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(k8s_config_kubeconfig(&c, p, NULL, err, sizeof err), -1);
    write_file("broken", "clusters: [unclosed\n");
    snprintf(p, sizeof p, "%s/broken", dir);
    assert_int_equal(k8s_config_kubeconfig(&c, p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "not valid YAML"));
}

/* Only a regular file is a kubeconfig: a FIFO (whose open or read would
 * block startup for ever) and a directory are errors at once; the alarm
 * turns a hang into a failure. */
static void test_kubeconfig_not_regular(void **state)
{
    char p[256], err[256];
    k8s_config c;
    alarm(10);
    snprintf(p, sizeof p, "%s/fifo", dir);
    assert_int_equal(mkfifo(p, 0600), 0);
    err[0] = '\0';
    assert_int_equal(k8s_config_kubeconfig(&c, p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "fifo"));
    unlink(p);
    assert_int_equal(k8s_config_kubeconfig(&c, dir, NULL, err, sizeof err), -1);
    alarm(0);
}

/* A kubeconfig with one cluster and one user, plus the lines cl and us
 * (indented for the cluster and user mappings); loaded into c. */
static int load_with(const char *cl, const char *us, k8s_config *c, char *err, size_t errlen)
{
    char text[2048], p[256];
    snprintf(text, sizeof text,
             "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
             "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n%s"
             "users:\n- name: u\n  user:\n%s"
             "contexts:\n- name: x\n  context: {cluster: c, user: u}\n", cl, us);
    write_file("kc-data", text);
    snprintf(p, sizeof p, "%s/kc-data", dir);
    err[0] = '\0';
    return k8s_config_kubeconfig(c, p, NULL, err, errlen);
}

static void expect_bad(const char *cl, const char *us, const char *field)
{
    char err[256];
    k8s_config c;
    int rc = load_with(cl, us, &c, err, sizeof err);
    if (rc != -1 || !strstr(err, field) || !strstr(err, "kc-data"))
        fail_msg("cluster '%s' user '%s': rc %d err '%s', want -1 naming %s", cl, us, rc, err,
                 field);
    if (rc == 0)
        k8s_config_free(&c);
}

/* Regression: only padding made the decoded length negative and wrote
 * before the buffer; it is an error naming the field now. */
static void test_data_only_padding(void **state)
{
    expect_bad("", "    client-key-data: \"========\"\n", "client-key-data");
    expect_bad("", "    client-certificate-data: \"====\"\n", "client-certificate-data");
    expect_bad("    certificate-authority-data: \"=\"\n", "", "certificate-authority-data");
}

/* Regression: an undecodable CA was dropped, and TLS then trusted the
 * system CAs instead. */
static void test_data_invalid_ca(void **state)
{
    expect_bad("    certificate-authority-data: not*base64\n", "", "certificate-authority-data");
    char err[256];
    k8s_config c;
    assert_int_equal(load_with("    certificate-authority-data: \"aGVsbG8 gY2E=\"\n", "", &c, err,
                               sizeof err), -1);
    assert_non_null(strstr(err, "certificate-authority-data"));
    assert_non_null(strstr(err, "base64"));
    assert_non_null(strstr(err, "cluster 'c'"));
}

/* Everything Go's base64.StdEncoding rejects, and empty (null included) or
 * NUL-carrying data, in each of the three fields. */
static void test_data_invalid_each_field(void **state)
{
    static const char *bad[] = {
        "\"\"",                /* empty */
        "",                    /* YAML null: present but empty */
        "~",
        "null",
        "\"\\n\\r\\n\"",       /* empty once CR/LF are dropped */
        "YQ",                  /* padding missing */
        "YQ=",                 /* length not a multiple of 4 */
        "Y===",                /* three padding characters */
        "YQ==YQ==",            /* data after padding */
        "Y=Jj",                /* padding inside */
        "YW-j",                /* base64url alphabet */
        "YW_j",
        "\"YWJj \"",           /* spaces and tabs are not ignored */
        "\"\\tYWJj\"",
        "AGE=",                /* decodes to a NUL byte: not PEM text */
    };
    static const char *fields[] = { "certificate-authority-data", "client-certificate-data",
                                    "client-key-data" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (size_t f = 0; f < 3; f++) {
            char line[128];
            snprintf(line, sizeof line, "    %s: %s\n", fields[f], bad[i]);
            expect_bad(f == 0 ? line : "", f == 0 ? "" : line, fields[f]);
        }
    }
}

/* Valid data decodes to exactly its bytes: no padding counted, '+' and '/'
 * decoded, the length right for 0, 1 and 2 padding characters. */
static void test_data_valid_bytes(void **state)
{
    char err[256];
    k8s_config c;
    assert_int_equal(load_with("    certificate-authority-data: "
                               "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n",
                               "    client-certificate-data: \"/+/+\"\n"
                               "    client-key-data: a2V5cw==\n", &c, err, sizeof err), 0);
    assert_string_equal(c.ca_data, "-----BEGIN CERTIFICATE-----\n");
    assert_int_equal(strlen(c.cert_data), 3);
    assert_memory_equal(c.cert_data, "\xff\xef\xfe", 3);
    assert_string_equal(c.key_data, "keys");
    k8s_config_free(&c);
    assert_int_equal(load_with("    certificate-authority-data: YWJj\n", "    client-key-data: YWI=\n",
                               &c, err, sizeof err), 0);
    assert_string_equal(c.ca_data, "abc");
    assert_string_equal(c.key_data, "ab");
    assert_null(c.cert_data);
    k8s_config_free(&c);
}

/* As in Go, CR and LF anywhere are ignored: a literal block with lines
 * wrapped mid-quantum and a final newline, a quoted value with CRLFs. */
static void test_data_newlines(void **state)
{
    char err[256];
    k8s_config c;
    assert_int_equal(load_with("    certificate-authority-data: |\n      LS0tLS1CRUdJTiBD\n"
                               "      RVJUSUZJQ0FURS0t\n      LS0tCg=\n      =\n",
                               "    client-certificate-data: \"Y2\\r\\nVy\\ndA=\\r\\n=\"\n"
                               "    client-key-data: \"\\na2V5\\n\"\n", &c, err, sizeof err), 0);
    assert_string_equal(c.ca_data, "-----BEGIN CERTIFICATE-----\n");
    assert_string_equal(c.cert_data, "cert");
    assert_string_equal(c.key_data, "key");
    k8s_config_free(&c);
    /* a plain scalar folds its line break into a space, which Go rejects */
    expect_bad("    certificate-authority-data: YWJj\n      YWJj\n", "", "certificate-authority-data");
}

/* A kubeconfig with an extension nested depth levels deep ("[[[...]]]"),
 * the rest of it valid; k8s_config_kubeconfig's result, err filled. */
static int load_nested(size_t depth, int closed, char *err, size_t errlen)
{
    size_t cap = 2 * depth + 1024;
    char *text = malloc(cap), p[256];
    assert_non_null(text);
    size_t n = (size_t)snprintf(text, cap,
                                "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                                "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n"
                                "users:\n- name: u\n  user: {token: t}\n"
                                "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                                "extensions: ");
    memset(text + n, '[', depth);
    n += depth;
    if (closed) {
        memset(text + n, ']', depth);
        n += depth;
    }
    text[n++] = '\n';
    text[n] = '\0';
    write_file("kc-nested", text);
    free(text);
    snprintf(p, sizeof p, "%s/kc-nested", dir);
    k8s_config c;
    err[0] = '\0';
    int rc = k8s_config_kubeconfig(&c, p, NULL, err, errlen);
    if (rc == 0)
        k8s_config_free(&c);
    return rc;
}

/* Regression: 100k nested '[' made libyaml spin with ever more memory
 * before our code saw anything. Documents nested deeper than 64 are
 * refused while they are read, before any structure is built; the alarm
 * turns a hang into a failure. */
static void test_kubeconfig_nesting(void **state)
{
    char err[256];
    alarm(30);
    assert_int_equal(load_nested(100000, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "kc-nested"));
    assert_non_null(strstr(err, "nested deeper than 64"));
    assert_int_equal(load_nested(100000, 1, err, sizeof err), -1);
    assert_non_null(strstr(err, "nested deeper than 64"));
    /* the limit counts every collection: the root mapping is level 1 */
    assert_int_equal(load_nested(63, 1, err, sizeof err), 0);
    assert_int_equal(load_nested(64, 1, err, sizeof err), -1);
    alarm(0);
}

static void endpoint_bad(const char *url, const char *why)
{
    char err[512] = "";
    k8s_config c;
    if (k8s_config_endpoint(&c, url, NULL, NULL, NULL, err, sizeof err) != -1) {
        k8s_config_free(&c);
        fail_msg("endpoint '%s' accepted", url);
    }
    if (!strstr(err, why))
        fail_msg("endpoint '%s': error '%s' lacks '%s'", url, err, why);
}

static void endpoint_good(const char *url, const char *server)
{
    char err[512] = "";
    k8s_config c;
    if (k8s_config_endpoint(&c, url, NULL, NULL, NULL, err, sizeof err) != 0)
        fail_msg("endpoint '%s' refused: %s", url, err);
    assert_string_equal(c.server, server);
    k8s_config_free(&c);
}

/* Regression: a bad scheme, an unclosed '[', port 99999 or a line break
 * were accepted and failed at every request, forever. Every URL is parsed
 * by libcurl's URL API (the parser of the library that fetches it) when
 * the configuration is built (and by the kubernetes plugin at load, at the
 * URL's token); its reason, or the rule the parts break, is the error. What
 * is kept is libcurl's rendering, so the client appends API paths to what
 * was checked. */
static void test_endpoint_urls(void **state)
{
    /* the scheme */
    endpoint_bad("ftp://10.0.0.1", "want http:// or https://");
    endpoint_bad("https//10.0.0.1", "want http:// or https://");
    endpoint_bad("10.0.0.1:6443", "want http:// or https://");
    endpoint_bad("gopher://[fd00::1]:70", "want http:// or https://");
    /* IPv6 hosts only in brackets, and a real address in them */
    endpoint_bad("https://[fd00::1:6443", "Bad IPv6 address");
    endpoint_bad("https://[not-v6]:443", "Bad IPv6 address");
    endpoint_bad("https://[fd00::1]x", "Port number");
    endpoint_bad("https://fd00::1:6443", "Port number");
    /* the port */
    endpoint_bad("https://10.0.0.1:99999", "Port number");
    endpoint_bad("https://10.0.0.1:64x", "Port number");
    endpoint_bad("https://10.0.0.1:+443", "Port number");
    endpoint_bad("https://10.0.0.1:123456789012345678901", "Port number");
    endpoint_bad("https://10.0.0.1:0", "port 0");
    /* the host */
    endpoint_bad("https://", "No host part");
    endpoint_bad("https://:6443", "No host part");
    endpoint_bad("https://bad_host!:443", "Bad hostname");
    endpoint_bad("https://api.example.com;x", "Bad hostname");
    /* what an API server's URL never holds */
    endpoint_bad("https://user:pw@10.0.0.1", "user info");
    endpoint_bad("https://token@10.0.0.1", "user info");
    endpoint_bad("https://10.0.0.1/api?x=1", "a query");
    endpoint_bad("https://10.0.0.1?", "a query");
    endpoint_bad("https://10.0.0.1/#frag", "a fragment");
    endpoint_bad("https://10.0.0.1\r\nX-Injected: 1", "Port number");
    endpoint_bad("https://10.0.0.1/\r\nX-Injected: 1", "Bad path");
    endpoint_bad("https://10.0.0.1/a b", "Bad path");
    endpoint_bad("https://10.0.0.1/a\tb", "Bad path");
    endpoint_bad(NULL, "no URL");
    endpoint_good("https://10.0.0.1:6443", "https://10.0.0.1:6443");
    endpoint_good("http://127.0.0.1:8001/", "http://127.0.0.1:8001");
    endpoint_good("https://[fd00::1]:443", "https://[fd00::1]:443");
    endpoint_good("https://[fd00::1]", "https://[fd00::1]");
    endpoint_good("https://[2001:db8::a:1]:6443/", "https://[2001:db8::a:1]:6443");
    endpoint_good("https://[fe80::1%25eth0]:6443", "https://[fe80::1%25eth0]:6443");
    endpoint_good("https://api.example.com", "https://api.example.com");
    endpoint_good("HTTPS://api.example.com", "https://api.example.com");
    endpoint_good("https://rancher.example.com/k8s/clusters/c-1",
                  "https://rancher.example.com/k8s/clusters/c-1");
    endpoint_good("https://rancher.example.com/k8s/clusters/c-1/",
                  "https://rancher.example.com/k8s/clusters/c-1");
    endpoint_good("https://[fd00::1]:6443/k8s/clusters/c-1", "https://[fd00::1]:6443/k8s/clusters/c-1");
    endpoint_good("https://kubernetes.default.svc:65535", "https://kubernetes.default.svc:65535");
    /* what libcurl reads its own way is kept as it reads it: an empty port
     * is the scheme's, an empty fragment nothing */
    endpoint_good("https://10.0.0.1:", "https://10.0.0.1");
    endpoint_good("https://10.0.0.1#", "https://10.0.0.1");
    /* the server of a kubeconfig is checked the same way */
    char err[256];
    k8s_config c;
    write_file("kc-url", "apiVersion: v1\nkind: Config\ncurrent-context: x\n"
               "clusters:\n- name: c\n  cluster:\n    server: https://[fd00::1:6443\n"
               "users:\n- name: u\n  user: {token: t}\n"
               "contexts:\n- name: x\n  context: {cluster: c, user: u}\n");
    char p[256];
    snprintf(p, sizeof p, "%s/kc-url", dir);
    assert_int_equal(k8s_config_kubeconfig(&c, p, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "kc-url"));
    assert_non_null(strstr(err, "Bad IPv6 address"));
}

static void test_endpoint_and_incluster(void **state)
{
    char err[256];
    k8s_config c;
    assert_int_equal(k8s_config_endpoint(&c, "ftp://x", NULL, NULL, NULL, err, sizeof err), -1);
    assert_int_equal(k8s_config_endpoint(&c, "http://127.0.0.1:9/", "c", "k", "a", err, sizeof err), 0);
    assert_string_equal(c.server, "http://127.0.0.1:9");
    assert_string_equal(c.ca_file, "a");
    k8s_config_free(&c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(k8s_config_incluster(&c, err, sizeof err), -1);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    setenv("TOPODNS_SA_DIR", dir, 1);
    assert_int_equal(k8s_config_incluster(&c, err, sizeof err), 0);
    assert_string_equal(c.server, "https://[fd00::1]:443");
    char want[256];
    snprintf(want, sizeof want, "%s/token", dir);
    assert_string_equal(c.token_file, want);
    k8s_config_free(&c);
    /* libcurl puts the URL together from the variables and checks it */
    static const struct { const char *host, *port, *server; } ok[] = {
        { "10.96.0.1", "443", "https://10.96.0.1:443" },
        { "[fd00::1]", "6443", "https://[fd00::1]:6443" },
        { "2001:db8::a:1", "443", "https://[2001:db8::a:1]:443" },
        { "fe80::1%eth0", "443", "https://[fe80::1%25eth0]:443" },   /* a zone, as libcurl writes it */
        { "kubernetes.default.svc", "65535", "https://kubernetes.default.svc:65535" },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        setenv("KUBERNETES_SERVICE_HOST", ok[i].host, 1);
        setenv("KUBERNETES_SERVICE_PORT", ok[i].port, 1);
        if (k8s_config_incluster(&c, err, sizeof err) != 0)
            fail_msg("%s %s: %s", ok[i].host, ok[i].port, err);
        assert_string_equal(c.server, ok[i].server);
        k8s_config_free(&c);
    }
    static const struct { const char *host, *port, *why; } bad[] = {
        { "10.96.0.1", "0", "Port number" },
        { "10.96.0.1", "443x", "Port number" },
        { "10.96.0.1", "99999", "Port number" },
        { "10.96.0.1", " 443", "Port number" },
        { "10.96.0.1/x", "443", "Bad hostname" },
        { "user@10.96.0.1", "443", "Bad hostname" },
        { "h?q", "443", "Bad hostname" },
        { "not-v6::x", "443", "Bad hostname" },
        { "[fd00::1", "443", "Bad hostname" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("KUBERNETES_SERVICE_HOST", bad[i].host, 1);
        setenv("KUBERNETES_SERVICE_PORT", bad[i].port, 1);
        if (k8s_config_incluster(&c, err, sizeof err) != -1) {
            k8s_config_free(&c);
            fail_msg("%s %s accepted", bad[i].host, bad[i].port);
        }
        if (!strstr(err, bad[i].why) || !strstr(err, bad[i].host))
            fail_msg("%s %s: error '%s' lacks '%s'", bad[i].host, bad[i].port, err, bad[i].why);
    }
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}

/* The log lines k8s_client_new(cfg) writes (malloc'd); the client freed
 * unstarted. */
static char *client_log(const char *server, const char *token, const char *token_file)
{
    char path[] = "/tmp/k8scfg-log.XXXXXX", err[256];
    int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, STDOUT_FILENO);
    k8s_config cfg = { 0 };
    cfg.server = (char *)server;
    cfg.token = (char *)token;
    cfg.token_file = (char *)token_file;
    k8s_client *c = k8s_client_new(&cfg, NULL, err, sizeof err);
    k8s_client_free(c);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char *out = calloc(1, 4096);
    assert_non_null(out);
    assert_true(pread(fd, out, 4095, 0) >= 0);
    close(fd);
    unlink(path);
    assert_non_null(c);
    return out;
}

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* Regression: a bearer token went over plain http:// without a word. Each
 * client made with a token or token file for an http:// server warns once;
 * https://, or no token, says nothing. */
static void test_token_over_http_warns(void **state)
{
    static const char warning[] = "the bearer token is sent unencrypted";
    char *out = client_log("http://127.0.0.1:8001", "s3cret", NULL);
    assert_int_equal(count(out, warning), 1);
    assert_non_null(strstr(out, "[WARNING] plugin/kubernetes: "));
    assert_non_null(strstr(out, "http://127.0.0.1:8001"));
    assert_null(strstr(out, "s3cret"));                 /* the token itself is never logged */
    free(out);
    out = client_log("http://127.0.0.1:8001", NULL, "/var/run/token");
    assert_int_equal(count(out, warning), 1);
    free(out);
    out = client_log("https://127.0.0.1:6443", "s3cret", "/var/run/token");
    assert_int_equal(count(out, warning), 0);
    free(out);
    out = client_log("http://127.0.0.1:8001", NULL, NULL);
    assert_int_equal(count(out, warning), 0);
    free(out);
    out = client_log("http://127.0.0.1:8001", "", NULL);
    assert_int_equal(count(out, warning), 0);
    free(out);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/k8scfg.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    write_file("kc", kubeconfig);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kubeconfig_current_context),
        cmocka_unit_test(test_kubeconfig_named_context),
        cmocka_unit_test(test_kubeconfig_bad),
        cmocka_unit_test(test_kubeconfig_not_regular),
        cmocka_unit_test(test_data_only_padding),
        cmocka_unit_test(test_data_invalid_ca),
        cmocka_unit_test(test_data_invalid_each_field),
        cmocka_unit_test(test_data_valid_bytes),
        cmocka_unit_test(test_data_newlines),
        cmocka_unit_test(test_kubeconfig_nesting),
        cmocka_unit_test(test_endpoint_urls),
        cmocka_unit_test(test_endpoint_and_incluster),
        cmocka_unit_test(test_token_over_http_warns),
    };
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
