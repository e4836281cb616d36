/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim b64url — unpadded base64url (RFC 4648 section 5 without '='),
 * the encoding of list continue tokens, as the apiserver's
 * base64.RawURLEncoding writes and reads them. OpenSSL does the work.
 *
 * b64url_decode() accepts what RawURLEncoding does: the URL-safe alphabet
 * only (no '+', '/' or '='), CR and LF ignored anywhere, and no lone final
 * character. Standalone (libcrypto only).
 */
#ifndef KUBESIM_B64URL_H
#define KUBESIM_B64URL_H

#include <stddef.h>

/* The NUL-terminated encoding of in[0..n), or NULL on allocation failure. */
char *b64url_encode(const void *in, size_t n);

/* The bytes of in (NUL-terminated, their count in *outlen), or NULL when
 * in is not valid unpadded base64url or on allocation failure. */
char *b64url_decode(const char *in, size_t *outlen);

#endif
