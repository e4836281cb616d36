/*
 * test_k8s_config.c — API client configuration: kubeconfig (contexts,
 * current-context, token, tokenFile relative to the file, *-data base64,
 * insecure), endpoint, in-cluster from the environment.
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
        cmocka_unit_test(test_endpoint_and_incluster),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
