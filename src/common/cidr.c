/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cidr.c — see cidr.h.
 */
#include <assert.h>
#include <arpa/inet.h>
#include <string.h>
#include "common/addr.h"
#include "common/cidr.h"

/* Go's decimal reader stops here as too big (net's dtoi). */
#define DTOI_BIG 0xFFFFFF

/* The address part (len octets of text): 0 with family and addr set. Go's
 * net.ParseIP: no zone, ::ffff:a.b.c.d stays IPv6. */
static int parse_addr(const char *text, size_t len, cidr *out)
{
    return addr_parse_bytes(text, len, 0, &out->family, out->addr);
}

/* The length: digits only, one at least, within the family. */
static int parse_bits(const char *s, unsigned max, unsigned *out)
{
    unsigned long n = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        n = n * 10 + (unsigned long)(*s - '0');
        if (n >= DTOI_BIG)
            return -1;
    }
    if (n > max)
        return -1;
    *out = (unsigned)n;
    return 0;
}

static void clear_host_bits(cidr *c)
{
    unsigned max = c->family == AF_INET ? 32 : 128;
    for (unsigned b = c->bits; b < max; b++)
        c->addr[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
}

static int parse(const char *text, cidr *out, int host_ok)
{
    assert(out);
    memset(out, 0, sizeof *out);
    if (!text)
        return -1;
    const char *slash = strchr(text, '/');
    if (!slash && !host_ok)
        return -1;
    size_t alen = slash ? (size_t)(slash - text) : strlen(text);
    if (parse_addr(text, alen, out) < 0)
        goto bad;
    unsigned max = out->family == AF_INET ? 32 : 128;
    if (!slash)
        out->bits = max;
    else if (parse_bits(slash + 1, max, &out->bits) < 0)
        goto bad;
    clear_host_bits(out);
    assert(out->bits <= max);
    return 0;
bad:
    memset(out, 0, sizeof *out);
    return -1;
}

int cidr_parse(const char *text, cidr *out)
{
    return parse(text, out, 0);
}

int cidr_parse_host(const char *text, cidr *out)
{
    return parse(text, out, 1);
}

int cidr_contains(const cidr *c, int family, const uint8_t *addr)
{
    assert(c && addr);
    assert(c->bits <= (c->family == AF_INET ? 32u : 128u));
    if (c->family != family)
        return 0;
    unsigned full = c->bits / 8, rest = c->bits % 8;
    if (memcmp(c->addr, addr, full))
        return 0;
    return !rest || ((c->addr[full] ^ addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}
