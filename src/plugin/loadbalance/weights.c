/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weights.c — see weights.h.
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <uthash.h>
#include "wire/dname.h"
#include "plugin/loadbalance/weights.h"
#include "common/addr.h"
#include "common/vec.h"

typedef struct witem { uint8_t family; uint8_t a[16]; uint8_t weight; } witem;

typedef struct wname {                  /* lower-cased wire name → its weights */
    UT_hash_handle hh;
    witem *items;
    size_t n;
    size_t wlen;
    uint8_t wire[DNAME_MAX];
} wname;

struct lbw_table {
    wname *names;
    size_t entries;
};

void lbw_free(lbw_table *t)
{
    if (!t)
        return;
    wname *n, *tmp;
    HASH_ITER(hh, t->names, n, tmp) {
        HASH_DEL(t->names, n);
        free(n->items);
        free(n);
    }
    free(t);
}

size_t lbw_entries(const lbw_table *t)
{
    return t ? t->entries : 0;
}

/* An address as Go's net.ParseIP takes it; an IPv4-mapped IPv6 address is
 * the IPv4 address (net.IP.Equal treats them as one). */
static int parse_ip(const char *s, uint8_t *family, uint8_t *a)
{
    int fam;
    if (addr_parse_bytes(s, strlen(s), ADDR_UNMAP, &fam, a) < 0)
        return -1;
    *family = fam == AF_INET ? 4 : 6;
    return 0;
}

/* strconv.ParseUint(s, 10, 8) and not 0: digits only, 1..255. */
static int parse_weight(const char *s, uint8_t *out)
{
    if (!*s)
        return -1;
    unsigned v = 0;
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        v = v * 10 + (unsigned)(*p - '0');
        if (v > 255)
            return -1;
    }
    if (v == 0)
        return -1;
    *out = (uint8_t)v;
    return 0;
}

static wname *name_get(lbw_table *t, const char *text)
{
    uint8_t wire[DNAME_MAX];
    int wl = dname_from_str(wire, text);
    if (wl < 0)
        return NULL;
    dname_lower(wire);
    wname *n;
    HASH_FIND(hh, t->names, wire, (size_t)wl, n);
    if (n)
        return n;
    if (!(n = calloc(1, sizeof *n)))
        return NULL;
    memcpy(n->wire, wire, (size_t)wl);
    n->wlen = (size_t)wl;
    HASH_ADD(hh, t->names, wire, n->wlen, n);
    return n;
}

static lbw_table *fail(lbw_table *t, char *err, size_t errlen, const char *fmt, const char *a,
                       const char *path)
{
    snprintf(err, errlen, fmt, a, path);
    lbw_free(t);
    return NULL;
}

lbw_table *lbw_parse(const char *text, const char *path, char *err, size_t errlen)
{
    assert(text && path);
    lbw_table *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    wname *cur = NULL;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char line[1024];
        if (len >= sizeof line)
            return fail(t, err, errlen, "could not parse weight line:\"%.100s\" in weight file %s", p, path);
        memcpy(line, p, len);
        line[len] = '\0';
        p = eol ? eol + 1 : p + len;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t sl = strlen(s);
        while (sl && isspace((unsigned char)s[sl - 1]))
            s[--sl] = '\0';
        if (!*s || *s == '#')
            continue;
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", s);
        char *f[3], *save = NULL;
        int nf = 0;
        for (char *tok = strtok_r(s, " \t\r\v\f", &save); tok; tok = strtok_r(NULL, " \t\r\v\f", &save))
            if (nf < 3)
                f[nf++] = tok;
            else
                nf = 4;
        uint8_t family, a[16];
        if (nf == 1) {
            if (parse_ip(f[0], &family, a) == 0)
                return fail(t, err, errlen,
                            "wrong domain name:\"%s\" in weight file %s. (Maybe a missing weight value?)",
                            f[0], path);
            if (!(cur = name_get(t, f[0])))
                return fail(t, err, errlen, "wrong domain name:\"%s\" in weight file %s", f[0], path);
        } else if (nf == 2) {
            uint8_t w;
            if (parse_ip(f[0], &family, a) < 0)
                return fail(t, err, errlen, "wrong IP address:\"%s\" in weight file %s", f[0], path);
            if (parse_weight(f[1], &w) < 0)
                return fail(t, err, errlen, "wrong weight value:\"%s\" in weight file %s", f[1], path);
            if (!cur)
                return fail(t, err, errlen, "missing domain name in weight file %s%s", path, "");
            if (VEC_RESIZE(cur->items, cur->n + 1) < 0)
                return fail(t, err, errlen, "out of memory%s%s", "", "");
            cur->items[cur->n].family = family;
            memcpy(cur->items[cur->n].a, a, 16);
            cur->items[cur->n].weight = w;
            cur->n++;
            t->entries++;
        } else {
            return fail(t, err, errlen, "could not parse weight line:\"%s\" in weight file %s", copy, path);
        }
    }
    return t;
}

unsigned lbw_weight(const lbw_table *t, const uint8_t *owner, int family, const uint8_t *addr)
{
    if (!t || !t->names)
        return 1;
    wname *n;
    HASH_FIND(hh, t->names, owner, dname_len(owner), n);
    for (size_t i = 0; n && i < n->n; i++)      /* the first line for the address */
        if (n->items[i].family == family && memcmp(n->items[i].a, addr, family == 4 ? 4 : 16) == 0)
            return n->items[i].weight;
    return 1;
}

unsigned lbw_pick(const unsigned *weights, unsigned n, uint32_t r)
{
    assert(n > 0);
    uint32_t sum = 0;
    for (unsigned i = 0; i < n; i++) {
        sum += weights[i];
        if (r < sum)
            return i;
    }
    return n - 1;
}
