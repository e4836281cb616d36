/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim b64url — unpadded base64url over OpenSSL's EVP_EncodeBlock and
 * EVP_DecodeBlock, which speak the standard alphabet with padding: encoding
 * maps '+' '/' to '-' '_' and drops the '='; decoding checks the input,
 * maps it back, pads it to whole groups of 4 and takes the padding off the
 * decoded length (EVP_DecodeBlock counts it as bytes).
 */
#include "b64url.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

static const char url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Replace every a in s by b. */
static void tr(char *s, char a, char b)
{
    for (; (s = strchr(s, a)) != NULL; s++)
        *s = b;
}

char *b64url_encode(const void *in, size_t n)
{
    char *o;
    if (n > (size_t)INT_MAX / 4 * 3)
        return NULL;
    o = malloc((n + 2) / 3 * 4 + 1);
    if (!o)
        return NULL;
    EVP_EncodeBlock((unsigned char *)o, in, (int)n);
    o[strcspn(o, "=")] = '\0';
    tr(o, '+', '-');
    tr(o, '/', '_');
    return o;
}

/* in without CR and LF, padded with '=' to whole groups of 4, in standard
 * alphabet; *pad is the number of '=' added. NULL if in is invalid. */
static char *to_std(const char *in, size_t *pad)
{
    size_t n = strlen(in), k = 0;
    char *s = malloc(n + 3);
    if (!s)
        return NULL;
    for (; *in; in++)
        if (*in != '\r' && *in != '\n')
            s[k++] = *in;
    s[k] = '\0';
    if (strspn(s, url_alphabet) != k || k % 4 == 1 || k > (size_t)INT_MAX - 3) {
        free(s);
        return NULL;
    }
    *pad = (4 - k % 4) % 4;
    memset(s + k, '=', *pad);
    s[k + *pad] = '\0';
    tr(s, '-', '+');
    tr(s, '_', '/');
    return s;
}

char *b64url_decode(const char *in, size_t *outlen)
{
    size_t pad = 0;
    char *s = to_std(in, &pad);
    size_t n = s ? strlen(s) : 0;
    unsigned char *o = s ? malloc(n / 4 * 3 + 1) : NULL;
    int len = o ? EVP_DecodeBlock(o, (unsigned char *)s, (int)n) : -1;
    free(s);
    if (len < (int)pad) {
        free(o);
        return NULL;
    }
    *outlen = (size_t)len - pad;
    o[*outlen] = '\0';
    return (char *)o;
}
