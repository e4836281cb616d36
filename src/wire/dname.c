/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dname.c — domain names in uncompressed wire form (see dname.h).
 *
 * A name is a run of length-prefixed labels ending in the root label. These
 * helpers assume a well-formed name (as produced by dname_from_str() or the
 * message parser, which both validate); they never allocate.
 *
 * Presentation form follows miekg/dns (what CoreDNS logs and prints): the
 * characters . space ' @ ; ( ) " and backslash are escaped with a backslash,
 * octets below 0x20 or above 0x7e print as \DDD. Parsing accepts \X and \DDD.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "wire/dname.h"

static inline uint8_t lc(uint8_t c)
{
    return (c >= 'A' && c <= 'Z') ? (uint8_t)(c + 32) : c;
}

size_t dname_len(const uint8_t *dn)
{
    size_t n = 0;
    while (dn[n])
        n += (size_t)dn[n] + 1;
    return n + 1;
}

int dname_labels(const uint8_t *dn)
{
    int n = 0;
    for (size_t i = 0; dn[i]; i += (size_t)dn[i] + 1)
        n++;
    return n;
}

int dname_from_str(uint8_t *out, const char *s)
{
    assert(out && s);
    size_t pos = 0;                 /* where the current label's length goes */
    size_t len = 1;                 /* octets written, length byte reserved */
    int lab = 0;
    if (strcmp(s, ".") == 0 || *s == '\0') {
        out[0] = 0;
        return 1;
    }
    while (*s) {
        uint8_t c;
        if (*s == '.') {
            if (lab == 0)
                return -1;          /* empty label */
            out[pos] = (uint8_t)lab;
            pos = len++;
            lab = 0;
            s++;
            if (*s == '\0') {
                len--;              /* trailing dot: root label below */
                break;
            }
            continue;
        }
        if (*s == '\\') {
            s++;
            if (isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[1]) &&
                isdigit((unsigned char)s[2])) {
                int v = (s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0');
                if (v > 255)
                    return -1;
                c = (uint8_t)v;
                s += 3;
            } else if (*s) {
                c = (uint8_t)*s++;
            } else {
                return -1;
            }
        } else {
            c = (uint8_t)*s++;
        }
        if (++lab > 63 || len + 1 >= DNAME_MAX)
            return -1;
        out[len++] = c;
    }
    if (lab > 0) {
        out[pos] = (uint8_t)lab;
        pos = len++;
    }
    if (pos >= DNAME_MAX)
        return -1;
    out[pos] = 0;
    return (int)(pos + 1);
}

size_t dname_to_str(char *out, size_t cap, const uint8_t *dn)
{
    assert(dn && (out || cap == 0));
    size_t o = 0;
    if (cap == 0)
        return 0;
    if (!dn[0]) {
        if (cap > 1)
            out[o++] = '.';
        out[o] = '\0';
        return o;
    }
    for (size_t i = 0; dn[i]; i += (size_t)dn[i] + 1) {
        for (size_t j = 1; j <= dn[i]; j++) {
            uint8_t c = dn[i + j];
            char tmp[5];
            int n;
            if (c == '.' || c == ' ' || c == '\'' || c == '@' || c == ';' || c == '(' ||
                c == ')' || c == '"' || c == '\\')
                n = snprintf(tmp, sizeof tmp, "\\%c", c);
            else if (c < 0x20 || c > 0x7e)
                n = snprintf(tmp, sizeof tmp, "\\%03u", c);
            else
                n = snprintf(tmp, sizeof tmp, "%c", c);
            if (o + (size_t)n + 2 > cap)
                goto done;
            memcpy(out + o, tmp, (size_t)n);
            o += (size_t)n;
        }
        if (o + 2 > cap)
            break;
        out[o++] = '.';
    }
done:
    out[o] = '\0';
    return o;
}

void dname_lower(uint8_t *dn)
{
    for (size_t i = 0; dn[i]; i += (size_t)dn[i] + 1)
        for (size_t j = 1; j <= dn[i]; j++)
            dn[i + j] = lc(dn[i + j]);
}

int dname_equal(const uint8_t *a, const uint8_t *b)
{
    /* label by label: a length octet (< 64) is never a letter, so this is
     * the case-insensitive comparison of the whole encoding */
    for (;;) {
        uint8_t l = *a;
        if (l != *b)
            return 0;
        if (!l)
            return 1;
        a++, b++;
        if (memcmp(a, b, l) != 0)
            for (uint8_t i = 0; i < l; i++)
                if (lc(a[i]) != lc(b[i]))
                    return 0;
        a += l, b += l;
    }
}

const uint8_t *dname_suffix(const uint8_t *dn, int labels)
{
    int skip = dname_labels(dn) - labels;
    while (skip-- > 0 && dn[0])
        dn += dn[0] + 1;
    return dn;
}

int dname_suffixes(const uint8_t *dn, const uint8_t **at)
{
    assert(dn && at);
    int n = 0;
    for (;;) {
        assert(n < DNAME_SUFFIXES);
        at[n] = dn;
        if (!*dn)
            return n;
        dn += 1 + *dn;
        n++;
    }
}

int dname_is_sub(const uint8_t *name, const uint8_t *zone)
{
    int ln = dname_labels(name), lz = dname_labels(zone);
    if (ln < lz)
        return 0;
    return dname_equal(dname_suffix(name, lz), zone);
}

/* Labels of a name from the root down, for canonical comparison. */
static int label_ptrs(const uint8_t *dn, const uint8_t **out)
{
    int n = 0;
    for (size_t i = 0; dn[i] && n < 128; i += (size_t)dn[i] + 1)
        out[n++] = dn + i;
    return n;
}

int dname_compare(const uint8_t *a, const uint8_t *b)
{
    const uint8_t *la[128], *lb[128];
    int na = label_ptrs(a, la), nb = label_ptrs(b, lb);
    while (na > 0 && nb > 0) {
        const uint8_t *x = la[--na], *y = lb[--nb];
        size_t n = x[0] < y[0] ? x[0] : y[0];
        for (size_t i = 1; i <= n; i++) {
            int d = (int)lc(x[i]) - (int)lc(y[i]);
            if (d)
                return d;
        }
        if (x[0] != y[0])
            return (int)x[0] - (int)y[0];
    }
    return na - nb;
}

uint32_t dname_hash(const uint8_t *dn)
{
    uint32_t h = 2166136261u;
    size_t n = dname_len(dn);
    for (size_t i = 0; i < n; i++) {
        h ^= lc(dn[i]);
        h *= 16777619u;
    }
    return h;
}
