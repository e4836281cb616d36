/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zone.c — see zone.h.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "common/cidr.h"
#include "server/zone.h"

static int normalize(const char *text, char *out)
{
    uint8_t wire[DNAME_MAX];
    if (dname_from_str(wire, text) < 0)
        return -1;
    dname_lower(wire);
    dname_to_str(out, DNAME_STR_MAX, wire);
    return 0;
}

/* IPv4: octets of the network reversed; `bits` is a multiple of 8. */
static void rev4(const uint8_t *a, int bits, char *out)
{
    char *p = out;
    for (int i = bits / 8 - 1; i >= 0; i--)
        p += sprintf(p, "%u.", a[i]);
    strcpy(p, "in-addr.arpa.");
}

/* IPv6: nibbles reversed; `bits` is a multiple of 4. */
static void rev6(const uint8_t *a, int bits, char *out)
{
    char *p = out;
    for (int i = bits / 4 - 1; i >= 0; i--) {
        unsigned nib = (i % 2 == 0) ? a[i / 2] >> 4 : a[i / 2] & 0xf;
        p += sprintf(p, "%x.", nib);
    }
    strcpy(p, "ip6.arpa.");
}

/* A CIDR key (common/cidr.h's parser, Go's rules: `/+8`, `/ 8` and a
 * zone index are refused) → its reverse zones. */
static int from_cidr(const char *text, char (**res)[DNAME_STR_MAX])
{
    cidr c;
    if (cidr_parse(text, &c) < 0)
        return -1;
    assert(c.family == AF_INET || c.family == AF_INET6);
    int v6 = c.family == AF_INET6;
    long bits = (long)c.bits;
    const uint8_t *a = c.addr;
    int unit = v6 ? 4 : 8;
    int up = (int)((bits + unit - 1) / unit) * unit;     /* next boundary */
    int count = 1 << (up - (int)bits);
    assert(count >= 1 && count <= ZONE_MAX_SPLIT);
    char (*out)[DNAME_STR_MAX] = malloc((size_t)count * sizeof *out);
    if (!out)
        return -1;
    for (int i = 0; i < count; i++) {
        uint8_t b[16];
        memcpy(b, a, 16);
        /* clear host bits beyond `bits`, then add i at the boundary unit */
        for (int bit = (int)bits; bit < (v6 ? 128 : 32); bit++)
            b[bit / 8] &= (uint8_t)~(0x80 >> (bit % 8));
        if (up > 0) {
            int pos = up - 1;       /* last bit of the prefix */
            unsigned v = (unsigned)i;
            for (int k = 0; k < up - (int)bits; k++, pos--)
                if (v & (1u << k))
                    b[pos / 8] |= (uint8_t)(0x80 >> (pos % 8));
        }
        if (v6)
            rev6(b, up, out[i]);
        else
            rev4(b, up, out[i]);
    }
    *res = out;
    return count;
}

int zone_from_key(const char *text, char (**out)[DNAME_STR_MAX])
{
    assert(out);
    *out = NULL;
    if (!text || !*text)
        return -1;
    if (strchr(text, '/'))
        return from_cidr(text, out);
    char (*z)[DNAME_STR_MAX] = malloc(sizeof *z);
    if (!z)
        return -1;
    if (normalize(text, z[0]) < 0) {
        free(z);
        return -1;
    }
    *out = z;
    return 1;
}

const char *zone_key_error(const char *text)
{
    return text && strchr(text, '/') ? "invalid CIDR" : "invalid zone";
}
