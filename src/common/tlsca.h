/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tlsca.h — the system's trusted CAs for an OpenSSL context.
 *
 * tls_load_system_cas(ctx) adds to ctx's verify store what a Go TLS client
 * trusts by default on Linux: OpenSSL's default paths (which honour the
 * SSL_CERT_FILE and SSL_CERT_DIR environment variables) and Debian's bundle
 * /etc/ssl/certs/ca-certificates.crt, where the image keeps it. A missing or
 * unreadable place is not an error (the handshake then fails to verify, and
 * says so); the function clears the thread's OpenSSL error queue so that a
 * later error message is not the missing bundle's.
 *
 * Used by the TLS listener (server/tls.c) when no CA file is configured, by
 * forward's DNS-over-TLS client and by dnstap's tls:// sink. The caller owns
 * ctx; nothing is kept here, so any thread may call it on a context it has
 * not yet shared.
 */
#ifndef TOPODNS_TLSCA_H
#define TOPODNS_TLSCA_H

struct ssl_ctx_st;

/* Debian's CA bundle. */
#define TLS_SYSTEM_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

void tls_load_system_cas(struct ssl_ctx_st *ctx);

#endif
