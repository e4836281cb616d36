/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tls.c — DNS over TLS configuration as the server loads it: tls://
 * keys (port 853 by default), the tls plugin's arguments and client_auth
 * into the block's server_tls, the listener's TLS context built from the
 * files, and every setup error with its file:line — a missing file, a key
 * that is not the certificate's, a CA file without certificates, a wrong
 * argument count, an unknown client_auth or option, an unknown scheme, and
 * dns:// and tls:// on one port. The certificates are made here with
 * OpenSSL in a temporary directory.
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
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include "server/core.h"
#include "tests/unit/testenv.h"

static char dir[64], cert[128], key[128], other_key[128], ca[128];

static EVP_PKEY *write_key(const char *path)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    FILE *f = fopen(path, "w");
    assert_non_null(k);
    assert_non_null(f);
    assert_true(PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL));
    fclose(f);
    return k;
}

/* A self-signed certificate for dns.test in cert (its key in key), a
 * second unrelated key, and the certificate again as a CA file. */
static int make_files(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/test_tls.XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(cert, sizeof cert, "%s/cert.pem", dir);
    snprintf(key, sizeof key, "%s/key.pem", dir);
    snprintf(other_key, sizeof other_key, "%s/other.pem", dir);
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    EVP_PKEY *k = write_key(key), *o = write_key(other_key);
    X509 *x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, k);
    X509_NAME *n = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(n, "CN", MBSTRING_ASC, (const unsigned char *)"dns.test", -1, -1, 0);
    X509_set_issuer_name(x, n);
    assert_true(X509_sign(x, k, EVP_sha256()) > 0);
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(i ? ca : cert, "w");
        assert_non_null(f);
        assert_true(PEM_write_X509(f, x));
        fclose(f);
    }
    X509_free(x);
    EVP_PKEY_free(k);
    EVP_PKEY_free(o);
    return 0;
}

static int remove_files(void **state)
{
    (void)state;
    unlink(cert);
    unlink(key);
    unlink(other_key);
    unlink(ca);
    rmdir(dir);
    return 0;
}

static instance *load(char *err, size_t errlen, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return test_load(text, err, errlen);
}

static void test_serving(void **state)
{
    (void)state;
    char err[512] = "";
    instance *ins = load(err, sizeof err, "tls://.:8853 {\n tls %s %s\n whoami\n}\n"
                         "tls://example.org {\n tls %s %s %s {\n  client_auth require_and_verify\n }\n"
                         " whoami\n}\n.:8053 {\n tls %s %s\n whoami\n}\n",
                         cert, key, cert, key, ca, cert, key);
    if (!ins)
        fail_msg("%s", err);
    server_block *b = instance_block(ins, 0);
    assert_string_equal(b->keys[0].scheme, "tls");
    assert_int_equal(b->keys[0].port, 8853);
    assert_true(b->tls.set);
    assert_string_equal(b->tls.cert, cert);
    assert_string_equal(b->tls.key, key);
    assert_null(b->tls.ca);
    assert_int_equal(b->tls.client_auth, TLS_AUTH_NOCERT);
    b = instance_block(ins, 1);
    assert_int_equal(b->keys[0].port, 853);             /* tls:// default */
    assert_string_equal(b->tls.ca, ca);
    assert_int_equal(b->tls.client_auth, TLS_AUTH_REQUIRE_AND_VERIFY);
    /* the listeners: TLS on the tls:// ones only */
    int ntls = 0;
    for (size_t i = 0; i < ins->ngroups; i++) {
        const listen_group *g = &ins->groups[i];
        if (g->port == 8053) {
            assert_false(g->tls);
            assert_null(g->tls_ctx);
        } else {
            assert_true(g->tls);
            assert_non_null(g->tls_ctx);
            ntls++;
        }
    }
    assert_int_equal(ntls, 2);
    instance_free(ins);
    /* a tls:// block without the plugin: plain TCP */
    ins = load(err, sizeof err, "tls://.:8853 {\n whoami\n}\n");
    assert_non_null(ins);
    assert_true(ins->groups[0].tls);
    assert_null(ins->groups[0].tls_ctx);
    instance_free(ins);
}

static void test_client_auth(void **state)
{
    (void)state;
    static const char *const names[] = { "nocert", "request", "require", "verify_if_given",
                                         "require_and_verify" };
    static const int want[] = { TLS_AUTH_NOCERT, TLS_AUTH_REQUEST, TLS_AUTH_REQUIRE,
                                TLS_AUTH_VERIFY_IF_GIVEN, TLS_AUTH_REQUIRE_AND_VERIFY };
    for (int i = 0; i < 5; i++) {
        char err[512] = "";
        instance *ins = load(err, sizeof err,
                             "tls://.:8853 {\n tls %s %s %s {\n  client_auth %s\n }\n}\n",
                             cert, key, ca, names[i]);
        if (!ins)
            fail_msg("%s: %s", names[i], err);
        assert_int_equal(instance_block(ins, 0)->tls.client_auth, want[i]);
        instance_free(ins);
    }
}

static void expect_err(const char *want, const char *fmt, ...)
{
    char text[2048], err[1024] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    instance *ins = test_load(text, err, sizeof err);
    if (ins) {
        instance_free(ins);
        fail_msg("loaded: %s", text);
    }
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_errors(void **state)
{
    (void)state;
    expect_err(":2: Wrong argument count", "tls://. {\n tls %s\n}\n", cert);
    expect_err(":2: Wrong argument count", "tls://. {\n tls %s %s %s %s\n}\n", cert, key,
               ca, ca);
    expect_err(":2: plugin/tls: automatic certificates (ACME) are not supported",
               "tls://. {\n tls\n}\n");
    expect_err(":3: plugin/tls: unknown authentication type 'maybe'",
               "tls://. {\n tls %s %s {\n  client_auth maybe\n }\n}\n", cert, key);
    expect_err(":3: Wrong argument count",
               "tls://. {\n tls %s %s {\n  client_auth\n }\n}\n", cert, key);
    expect_err(":3: plugin/tls: unknown option 'ciphers'",
               "tls://. {\n tls %s %s {\n  ciphers all\n }\n}\n", cert, key);
    expect_err(":3: plugin/tls: 'keylog' is not supported",
               "tls://. {\n tls %s %s {\n  keylog /tmp/k\n }\n}\n", cert, key);
    expect_err(":2: plugin/tls: could not load TLS cert: open /nonexistent/c.pem",
               "tls://. {\n tls /nonexistent/c.pem %s\n}\n", key);
    expect_err(":2: plugin/tls: error reading: open /nonexistent/ca.pem",
               "tls://. {\n tls %s %s /nonexistent/ca.pem\n}\n", cert, key);
    /* files that open but do not load: found when the listener is built */
    expect_err(":5: plugin/tls: could not load TLS key",
               ".:8053 {\n whoami\n}\ntls://. {\n tls %s %s\n}\n", cert, other_key);
    expect_err(":2: plugin/tls: could not load TLS cert",
               "tls://. {\n tls %s %s\n}\n", key, key);
    expect_err(":2: plugin/tls: could not read root certs",
               "tls://. {\n tls %s %s %s\n}\n", cert, key, key);
    /* server keys */
    expect_err(":1: only dns:// and tls:// servers are supported near 'https://.'",
               "https://. {\n whoami\n}\n");
    expect_err(":4: cannot serve tls://example.org.:8853 - port 8853 is served by dns:// already",
               ".:8853 {\n whoami\n}\ntls://example.org:8853 {\n whoami\n}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serving),
        cmocka_unit_test(test_client_auth),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, make_files, remove_files);
}
