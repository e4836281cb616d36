/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefix.c — the longest-prefix-match index of node ranges (prefix.h).
 *
 * Writer side: owner name → its node and ranges (uthash). Published side:
 * one block, header, groups, then the ranges sorted by (family, bits
 * descending, network, node name).
 */
#include <assert.h>
#include <sys/socket.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include "cluster/pmap.h"
#include "cluster/prefix.h"
#include "common/cidr.h"

/* One per owner (5,000 Nodes in a large cluster): the common single range
 * lives inside the record (c == &one), more are malloc'd. */
typedef struct pfx_owner {
    UT_hash_handle hh;
    const char *node;
    cidr *c;                        /* the owner's ranges, host bits clear */
    size_t n;
    cidr one;                       /* c's storage when n is 1 */
    char name[];
} pfx_owner;

static void owner_ranges_free(pfx_owner *o)
{
    if (o->c != &o->one)
        free(o->c);
    o->c = NULL;
}

typedef struct pfx_ent {
    uint8_t net[16];
    uint8_t family, bits;
    const char *node;
} pfx_ent;

typedef struct pfx_group {
    uint8_t family, bits;
    size_t start, n;
} pfx_group;

typedef struct pfx_table {
    size_t n, ngroups;
    pfx_group *groups;
    pfx_ent ents[];
} pfx_table;

struct pfx_index {
    pfx_table *_Atomic pub;         /* NULL when empty */
    pfx_owner *owners;              /* writer only */
    size_t nranges;                 /* writer: ranges over every owner */
    int held, dirty;
};

static void mask(uint8_t *a, int family, int bits)
{
    int len = family == 4 ? 4 : 16;
    for (int i = 0; i < len; i++) {
        int keep = bits - 8 * i;
        if (keep >= 8)
            continue;
        a[i] &= keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
    }
    for (int i = len; i < 16; i++)
        a[i] = 0;
}

pfx_index *pfx_new(void)
{
    pfx_index *x = calloc(1, sizeof *x);
    if (x)
        atomic_init(&x->pub, NULL);
    return x;
}

void pfx_free(pfx_index *x)
{
    if (!x)
        return;
    pfx_owner *o, *tmp;
    HASH_ITER(hh, x->owners, o, tmp) {
        HASH_DEL(x->owners, o);
        owner_ranges_free(o);
        free(o);
    }
    free(atomic_load(&x->pub));
    free(x);
}

static int ent_cmp(const void *pa, const void *pb)
{
    const pfx_ent *a = pa, *b = pb;
    if (a->family != b->family)
        return a->family < b->family ? -1 : 1;
    if (a->bits != b->bits)
        return a->bits > b->bits ? -1 : 1;
    int c = memcmp(a->net, b->net, 16);
    return c ? c : strcmp(a->node, b->node);
}

/* Build and publish the table from every owner; the old one goes after a
 * grace period. -1 out of memory (the old table stays). The ranges are
 * sorted in a scratch array first, so the block holds exactly its groups. */
static int publish(pfx_index *x)
{
    pfx_table *t = NULL;
    if (x->nranges) {
        size_t n = x->nranges, k = 0, ng = 0;
        pfx_ent *tmp = malloc(n * sizeof *tmp);
        if (!tmp)
            return -1;
        pfx_owner *o, *otmp;
        HASH_ITER(hh, x->owners, o, otmp)
            for (size_t i = 0; i < o->n; i++) {
                pfx_ent *e = &tmp[k++];
                assert(o->c[i].family == AF_INET || o->c[i].family == AF_INET6);
                memcpy(e->net, o->c[i].addr, 16);
                e->family = o->c[i].family == AF_INET ? 4 : 6;  /* st_ip's */
                e->bits = o->c[i].bits;
                e->node = o->node;
            }
        assert(k == n);
        qsort(tmp, n, sizeof *tmp, ent_cmp);
        for (size_t i = 0; i < n; i++)
            if (i == 0 || tmp[i].family != tmp[i - 1].family || tmp[i].bits != tmp[i - 1].bits)
                ng++;
        t = malloc(sizeof *t + n * sizeof(pfx_ent) + ng * sizeof(pfx_group));
        if (!t) {
            free(tmp);
            return -1;
        }
        memcpy(t->ents, tmp, n * sizeof *tmp);
        free(tmp);
        t->n = n;
        t->groups = (pfx_group *)(t->ents + n);
        t->ngroups = 0;
        for (size_t i = 0; i < n; i++) {
            pfx_group *g = t->ngroups ? &t->groups[t->ngroups - 1] : NULL;
            if (g && g->family == t->ents[i].family && g->bits == t->ents[i].bits) {
                g->n++;
                continue;
            }
            assert(t->ngroups < ng);
            t->groups[t->ngroups++] = (pfx_group){ t->ents[i].family, t->ents[i].bits, i, 1 };
        }
        assert(t->ngroups == ng);
    }
    pfx_table *old = atomic_exchange_explicit(&x->pub, t, memory_order_acq_rel);
    if (old)
        pmap_defer(free, old);
    x->dirty = 0;
    return 0;
}

static int same(const pfx_owner *o, const char *node, const cidr *c, size_t n)
{
    if (!o)
        return n == 0;
    if (o->n != n || (n && strcmp(o->node, node)))
        return 0;
    return n == 0 || memcmp(o->c, c, n * sizeof *c) == 0;
}

int pfx_set(pfx_index *x, const char *owner, const char *node, const cidr *c, size_t n)
{
    assert(x && owner && (c || n == 0) && (node || n == 0));
    cidr *keep = NULL;
    size_t nk = 0;
    if (n && !(keep = calloc(n, sizeof *keep)))
        return -1;
    for (size_t i = 0; i < n; i++) {
        int fam = c[i].family == AF_INET ? 4 : c[i].family == AF_INET6 ? 6 : 0;
        if (!fam || c[i].bits > (fam == 4 ? 32u : 128u))
            continue;
        keep[nk] = c[i];
        mask(keep[nk].addr, fam, (int)c[i].bits);
        nk++;
    }
    pfx_owner *o;
    HASH_FIND_STR(x->owners, owner, o);
    if (same(o, node, keep, nk)) {
        free(keep);
        return 0;
    }
    if (!o && nk) {
        size_t l = strlen(owner);
        if (!(o = calloc(1, sizeof *o + l + 1))) {
            free(keep);
            return -1;
        }
        memcpy(o->name, owner, l + 1);
        HASH_ADD_STR(x->owners, name, o);
    }
    x->nranges -= o->n;
    owner_ranges_free(o);
    if (!nk) {
        HASH_DEL(x->owners, o);
        free(o);
        free(keep);
    } else {
        if (nk == 1) {              /* inside the record: one malloc chunk fewer */
            o->one = keep[0];
            free(keep);
            keep = &o->one;
        }
        o->c = keep;
        o->n = nk;
        o->node = node;
        x->nranges += nk;
    }
    x->dirty = 1;
    if (!x->held && publish(x) < 0)
        return -1;
    return 1;
}

void pfx_del(pfx_index *x, const char *owner)
{
    pfx_set(x, owner, NULL, NULL, 0);
}

int pfx_hold(pfx_index *x, int on)
{
    assert(x && (on == 0 || on == 1));
    x->held = on;
    return !on && x->dirty && publish(x) == 0;
}

/* The first range of g equal to (family, net): ranges with the same net
 * sort by node name, the first wins. */
static const pfx_ent *search(const pfx_table *t, const pfx_group *g, const uint8_t *net)
{
    size_t lo = g->start, hi = g->start + g->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (memcmp(t->ents[mid].net, net, 16) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->start + g->n && !memcmp(t->ents[lo].net, net, 16) ? &t->ents[lo] : NULL;
}

const char *pfx_find(pfx_index *x, const st_ip *ip, int *bits)
{
    assert(x && ip);
    const pfx_table *t = atomic_load_explicit(&x->pub, memory_order_acquire);
    if (!t || (ip->family != 4 && ip->family != 6))
        return NULL;
    for (size_t i = 0; i < t->ngroups; i++) {
        const pfx_group *g = &t->groups[i];
        if (g->family != ip->family)
            continue;
        uint8_t net[16];
        memcpy(net, ip->addr, 16);
        mask(net, ip->family, g->bits);
        const pfx_ent *e = search(t, g, net);
        if (e) {
            if (bits)
                *bits = e->bits;
            return e->node;
        }
    }
    return NULL;
}

size_t pfx_count(pfx_index *x)
{
    const pfx_table *t = atomic_load_explicit(&x->pub, memory_order_acquire);
    return t ? t->n : 0;
}
