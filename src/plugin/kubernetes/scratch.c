/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch.c — the per-query scratch containers every file of the plugin
 * uses (declared in scratch.h, which says who owns what): the arena
 * (karena), entry vectors (kvec), record lists (krrvec) and dedup sets
 * (kset). Calls nothing of the plugin.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "common/vec.h"
#include "plugin/kubernetes/kubernetes.h"

/* ---- small containers --------------------------------------------------- */

struct kblk {
    struct kblk *next;
    size_t used, cap;
    unsigned char data[];
};

void *karena_alloc(karena *a, size_t n)
{
    assert(a && (!a->head || a->head->used <= a->head->cap));
    n = (n + 7) & ~(size_t)7;
    struct kblk *b = a->head;
    if (!b || b->used + n > b->cap) {
        size_t cap = n > 8192 ? n : 8192;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void karena_free(karena *a)
{
    while (a->head) {
        struct kblk *n = a->head->next;
        free(a->head);
        a->head = n;
    }
}

const uint8_t *karena_dname(karena *a, const uint8_t *dn)
{
    size_t len = dname_len(dn);
    uint8_t *p = karena_alloc(a, len);
    if (p)
        memcpy(p, dn, len);
    return p;
}

int kvec_push(kvec *v, const kentry *e)
{
    assert(v && e && v->n <= v->cap && (v->cap == 0 || v->v));
    if (VEC_RESERVE_FROM(v->v, v->cap, v->n + 1, 16) < 0)
        return -1;
    v->v[v->n++] = *e;
    return 0;
}

void kvec_free(kvec *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}

/* ---- dedup sets (kubernetes.h) --------------------------------------------- */

void kset_free(kset *s)
{
    free(s->slot);
    free(s->hash);
    memset(s, 0, sizeof *s);
}

uint32_t kset_mix(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

uint32_t kset_ip_hash(const st_ip *ip)
{
    /* two words and the family, multiplied and folded: cheap for the
     * thousands of addresses of a large Service */
    uint64_t a, b;
    memcpy(&a, ip->addr, 8);
    memcpy(&b, ip->addr + 8, 8);
    uint64_t h = (a ^ ip->family) * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29) ^ b) * 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h ^ (h >> 32));
}

int kset_has(const kset *s, const krrvec *v, uint32_t h, kset_eq eq, const krr *want)
{
    if (!s->cap)
        return 0;
    assert((s->cap & (s->cap - 1)) == 0 && s->n * 2 <= s->cap); /* never full */
    for (size_t i = h & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (!s->slot[i])
            return 0;
        if (s->hash[i] == h && eq(&v->v[s->slot[i] - 1], want))
            return 1;
    }
}

static void kset_put(kset *s, uint32_t h, size_t idx)
{
    size_t i = h & (s->cap - 1);
    while (s->slot[i])
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = (uint32_t)(idx + 1);
    s->hash[i] = h;
    s->n++;
}

int kset_add(kset *s, uint32_t h, size_t idx)
{
    assert(s && (s->cap & (s->cap - 1)) == 0 && s->n * 2 <= s->cap);
    if (idx >= UINT32_MAX)
        return -1;
    if ((s->n + 1) * 2 > s->cap) {
        kset old = *s;
        size_t cap = old.cap ? old.cap * 2 : 64;
        s->slot = calloc(cap, sizeof *s->slot);
        s->hash = malloc(cap * sizeof *s->hash);
        if (!s->slot || !s->hash) {
            free(s->slot);
            free(s->hash);
            *s = old;
            return -1;
        }
        s->cap = cap;
        s->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.slot[i])
                kset_put(s, old.hash[i], old.slot[i] - 1);
        kset_free(&old);
    }
    kset_put(s, h, idx);
    return 0;
}


/* ---- record lists ------------------------------------------------------- */

int krr_push(krrvec *v, const krr *rr)
{
    assert(v && rr && v->n <= v->cap && (v->cap == 0 || v->v));
    if (VEC_RESERVE_FROM(v->v, v->cap, v->n + 1, 16) < 0)
        return -1;
    v->v[v->n++] = *rr;
    return 0;
}

void krr_free(krrvec *v)
{
    free(v->v);
    memset(v, 0, sizeof *v);
}
