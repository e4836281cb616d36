/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tlsca.c — the system CA store of tlsca.h.
 */
#include <assert.h>
#include <unistd.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include "common/tlsca.h"

void tls_load_system_cas(SSL_CTX *ctx)
{
    assert(ctx);
    SSL_CTX_set_default_verify_paths(ctx);
    if (access(TLS_SYSTEM_CA_BUNDLE, R_OK) == 0)
        SSL_CTX_load_verify_locations(ctx, TLS_SYSTEM_CA_BUNDLE, NULL);
    ERR_clear_error();
}
