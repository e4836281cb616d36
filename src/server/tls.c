/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tls.c — DNS over TLS on tls:// listeners (RFC 7858).
 *
 * A tls:// listen group serves TCP only; each accepted connection of it is
 * an OpenSSL bufferevent in server mode instead of a plain socket one, and
 * everything else (RFC 7766 framing, pipelining, deadlines, connection
 * limits, the request path) is tcp.c's, unchanged: the bufferevent hands
 * tcp.c the decrypted octets. The handshake runs inside the connection's
 * first read deadline (`timeouts read`), so a client that never completes
 * it holds its slot no longer than one that never sends a query.
 *
 * The group's SSL_CTX is built on the loading thread from the block's
 * server_tls (the tls plugin): the certificate chain and key must load and
 * match, the CA (or the system's trust store) verifies client certificates
 * as client_auth asks; TLS 1.2 is the minimum, as in CoreDNS. Worker
 * threads only create SSL objects from it (thread-safe in OpenSSL); it is
 * freed with the instance.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include "server/core.h"
#include "common/tlsca.h"

/* The last OpenSSL error of this thread as text ("" when none). */
static void ssl_errtext(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();
    buf[0] = '\0';
    if (e)
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
}

/* request / require: a certificate is asked for but never checked. */
static int accept_any(int ok, X509_STORE_CTX *x)
{
    (void)ok;
    (void)x;
    return 1;
}

static int tls_err(char *err, size_t errlen, const server_tls *t, const char *what,
                   const char *path)
{
    char why[256];
    ssl_errtext(why, sizeof why);
    snprintf(err, errlen, "%s:%d: plugin/tls: %s %s: %s near '%s'", t->tok->file, t->tok->line,
             what, path, why[0] ? why : "unreadable", t->tok->text);
    return -1;
}

int tls_group_init(listen_group *g, const server_tls *t, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    if (!ctx) {
        snprintf(err, errlen, "plugin/tls: cannot create a TLS context");
        return -1;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(ctx, t->cert) != 1) {
        SSL_CTX_free(ctx);
        return tls_err(err, errlen, t, "could not load TLS cert", t->cert);
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, t->key, SSL_FILETYPE_PEM) != 1) {
        SSL_CTX_free(ctx);
        return tls_err(err, errlen, t, "could not load TLS key", t->key);
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        SSL_CTX_free(ctx);
        return tls_err(err, errlen, t, "private key does not match the certificate", t->key);
    }
    if (t->ca) {
        if (SSL_CTX_load_verify_locations(ctx, t->ca, NULL) != 1) {
            SSL_CTX_free(ctx);
            return tls_err(err, errlen, t, "could not read root certs", t->ca);
        }
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(t->ca);
        if (names)
            SSL_CTX_set_client_CA_list(ctx, names);
    } else {
        tls_load_system_cas(ctx);
    }
    switch (t->client_auth) {
    case TLS_AUTH_REQUEST:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, accept_any);
        break;
    case TLS_AUTH_REQUIRE:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_any);
        break;
    case TLS_AUTH_VERIFY_IF_GIVEN:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
        break;
    case TLS_AUTH_REQUIRE_AND_VERIFY:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        break;
    default:
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
        break;
    }
    /* one context per listener: a session id context for resumption */
    SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"topodns", 7);
    g->tls_ctx = ctx;
    return 0;
}

void tls_group_free(listen_group *g)
{
    SSL_CTX_free(g->tls_ctx);
    g->tls_ctx = NULL;
}

struct bufferevent *tls_bev_new(struct event_base *base, const listen_group *g, evutil_socket_t fd)
{
    SSL *ssl = SSL_new(g->tls_ctx);
    if (!ssl)
        return NULL;
    struct bufferevent *bev = bufferevent_openssl_socket_new(base, fd, ssl,
                                                             BUFFEREVENT_SSL_ACCEPTING,
                                                             BEV_OPT_CLOSE_ON_FREE);
    if (!bev)
        return NULL;                /* libevent freed ssl, or (no memory) leaks it */
    /* a client that closes without close_notify is an ordinary EOF */
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}
