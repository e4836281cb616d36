/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strtab.c — see strtab.h. A chained hash table of flexible-array entries:
 * 12 bytes and the string each (a uthash handle was 56), at most two
 * entries per bucket on average.
 */
#include <assert.h>
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cluster/strtab.h"

typedef struct istr {
    struct istr *next;              /* chain of its bucket */
    uint32_t hash;
    char s[];
} istr;

struct strtab {
    istr **b;
    size_t nb, n;
    size_t bytes;                   /* entries' allocations, see strtab_bytes */
};

strtab *strtab_new(void)
{
    return calloc(1, sizeof(strtab));
}

void strtab_free(strtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nb; i++)
        for (istr *e = t->b[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(t->b);
    free(t);
}

static uint32_t str_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;       /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* Twice the buckets once there are two entries per bucket: 0, or -1 when
 * memory runs out (the table stays as it was, only fuller). */
static int grow(strtab *t)
{
    size_t nb = t->nb ? t->nb * 2 : 64;
    istr **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < t->nb; i++)
        for (istr *e = t->b[i], *next; e; e = next) {
            next = e->next;
            e->next = b[e->hash & (nb - 1)];
            b[e->hash & (nb - 1)] = e;
        }
    free(t->b);
    t->b = b;
    t->nb = nb;
    return 0;
}

const char *strtab_intern(strtab *t, const char *s)
{
    assert(t);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    uint32_t h = str_hash(s, n);
    if (t->nb)
        for (istr *e = t->b[h & (t->nb - 1)]; e; e = e->next)
            if (e->hash == h && memcmp(e->s, s, n + 1) == 0)
                return e->s;
    if (t->n >= 2 * t->nb && grow(t) < 0 && !t->nb)
        return NULL;
    istr *e = malloc(offsetof(istr, s) + n + 1);
    if (!e)
        return NULL;
    memcpy(e->s, s, n + 1);
    e->hash = h;
    e->next = t->b[h & (t->nb - 1)];
    t->b[h & (t->nb - 1)] = e;
    t->n++;
    t->bytes += offsetof(istr, s) + n + 1;
    return e->s;
}

size_t strtab_bytes(const strtab *t)
{
    return t ? t->bytes : 0;
}

const char *strtab_intern_lower(strtab *t, const char *s)
{
    assert(t);
    if (!s)
        return NULL;
    char buf[256];
    size_t n = strlen(s);
    if (n >= sizeof buf)
        return strtab_intern(t, s);
    for (size_t i = 0; i <= n; i++)
        buf[i] = (char)tolower((unsigned char)s[i]);
    return strtab_intern(t, buf);
}
