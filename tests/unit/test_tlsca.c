/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_tlsca.c — the system CA store (common/tlsca): a certificate in the
 * file SSL_CERT_FILE names is trusted by a context after
 * tls_load_system_cas(), not before; a missing file is no error and
 * leaves no error behind in the thread's OpenSSL queue.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include "common/tlsca.h"

/* A self-signed certificate with common name cn. */
static X509 *self_signed(const char *cn)
{
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *x = X509_new();
    assert_non_null(key);
    assert_non_null(x);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), 0);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, name);
    assert_true(X509_sign(x, key, EVP_sha256()) > 0);
    EVP_PKEY_free(key);
    return x;
}

/* 1 when ctx's store holds a certificate with x's subject. */
static int trusts(SSL_CTX *ctx, X509 *x)
{
    STACK_OF(X509_OBJECT) *objs = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
    for (int i = 0; i < sk_X509_OBJECT_num(objs); i++) {
        X509 *c = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));
        if (c && X509_NAME_cmp(X509_get_subject_name(c), X509_get_subject_name(x)) == 0)
            return 1;
    }
    return 0;
}

static void test_cert_file(void **state)
{
    (void)state;
    char path[] = "/tmp/test_tlsca.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    X509 *x = self_signed("topodns tlsca test root");
    assert_true(PEM_write_X509(fp, x) == 1);
    fclose(fp);
    setenv("SSL_CERT_FILE", path, 1);

    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    assert_false(trusts(ctx, x));
    tls_load_system_cas(ctx);
    assert_true(trusts(ctx, x));
    assert_int_equal(ERR_peek_error(), 0);
    SSL_CTX_free(ctx);

    unlink(path);
    X509_free(x);
}

static void test_missing_file(void **state)
{
    (void)state;
    setenv("SSL_CERT_FILE", "/nonexistent/topodns-test-ca.pem", 1);
    setenv("SSL_CERT_DIR", "/nonexistent/topodns-test-ca.d", 1);
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    assert_non_null(ctx);
    tls_load_system_cas(ctx);
    assert_int_equal(ERR_peek_error(), 0);
    SSL_CTX_free(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cert_file),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
