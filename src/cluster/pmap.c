/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pmap.c — see pmap.h. Thin layer over liburcu's rculfhash.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>
#include "cluster/pmap.h"

/* The writer's own count of a table's entries and the bucket count it last
 * asked for (grow()). */
typedef struct sizing {
    size_t n, nb, min;
} sizing;

struct pmap {
    struct cds_lfht *ht;
    sizing sz;
    pmap_dtor dtor;                 /* of every value (pmap.h): the first put's */
    int has_dtor;                   /* dtor was set by a put */
};

/* One entry per key: the liburcu node, the key length and the key, then
 * (after a NUL, 8-byte aligned, at val_offset()) the value space: a value kept inline
 * (pmap_entry_new) or, for pmap_put, the value's pointer (boxed). 18 bytes
 * before the key: no rcu_head (a retired entry is handed to pmap_defer,
 * which allocates its own), no value pointer for an inline value (its
 * place follows from klen), no dtor (the map's, passed along when the
 * entry is retired). The store's 10,000 Services and their endpoint views
 * are inline entries. */
typedef struct pent {
    struct cds_lfht_node node;
    uint16_t klen : 15;             /* at most PMAP_KEY_MAX */
    uint16_t boxed : 1;             /* the value space holds the value's pointer */
    uint8_t key[];
} pent;

typedef struct pkey {
    const void *key;
    size_t klen;
} pkey;

static unsigned long hash_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 1469598103934665603ull;        /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return (unsigned long)(h ^ (h >> 29));
}

static int match(struct cds_lfht_node *node, const void *key)
{
    const pent *e = caa_container_of(node, pent, node);
    const pkey *k = key;
    return e->klen == k->klen && memcmp(e->key, k->key, k->klen) == 0;
}

/* The value space of an entry block: after the key, 8-byte aligned. */
enum { VAL_ALIGN = 8 };
_Static_assert(_Alignof(void *) <= VAL_ALIGN && _Alignof(uint64_t) <= VAL_ALIGN, "value alignment");
_Static_assert(offsetof(pent, key) == sizeof(struct cds_lfht_node) + 2, "18 bytes before the key");

/* After the key, a NUL (pmap_entry_key), then the value space. */
static size_t val_offset(size_t klen)
{
    return (offsetof(pent, key) + klen + 1 + VAL_ALIGN - 1) & ~(size_t)(VAL_ALIGN - 1);
}

static void *entry_val(const pent *e)
{
    char *v = (char *)e + val_offset(e->klen);
    return e->boxed ? *(void **)v : v;
}

static void defer_entry(pent *e, pmap_dtor dtor);

/* After a grace period: no reader can still hold the entry or its value. */
static void retire(pmap *m, struct cds_lfht_node *n, pmap_dtor dtor)
{
    defer_entry(caa_container_of(n, pent, node), dtor ? dtor : m->dtor);
}

pmap *pmap_new(void)
{
    return pmap_new_sized(64);
}

/* A table grows by itself, but only in the background (liburcu resizes
 * from its worker thread after grace periods, and only once a table holds
 * eight entries per bucket): a map that receives a large cluster's list in
 * one go would meanwhile grow very long chains. So the writer grows each
 * table itself, at once, when it holds more than two entries per bucket
 * (grow()): a table is sized for what the store actually holds (no pods
 * watched: no pod-sized table), and a map may still be made with room
 * for an expected count from the start. */
static unsigned long pow2_buckets(unsigned long buckets)
{
    unsigned long b = 64;
    while (b < buckets && b < (1ul << 20))
        b <<= 1;
    return b;
}

static struct cds_lfht *table_new(unsigned long buckets, sizing *sz)
{
    unsigned long b = pow2_buckets(buckets);
    sz->n = 0;
    sz->nb = sz->min = b;
    return cds_lfht_new_flavor(b, b, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
                               &urcu_memb_flavor, NULL);
}

/* After the writer added (+1) or removed (-1) an entry, outside any
 * read-side section: past two entries per bucket, double the buckets now (cds_lfht_resize waits for the resize; readers go on
 * meanwhile): between one and two entries per bucket. Removals leave the shrinking to liburcu (lazily, below an
 * eighth of an entry per bucket, never under the initial size); the
 * writer then only follows it in its own figure. */
static void grow(struct cds_lfht *ht, sizing *sz, int delta)
{
    sz->n = delta > 0 ? sz->n + 1 : sz->n ? sz->n - 1 : 0;
    if (delta < 0 && sz->n * 8 < sz->nb && sz->nb > sz->min) {
        unsigned long b = pow2_buckets(sz->n);
        sz->nb = b > sz->min ? b : sz->min;
    }
    /* inside a read-side section (a writer that also reads, like the
     * topology observer's state map) a resize would wait for itself:
     * left to liburcu's background resize there */
    if (sz->n <= 2 * sz->nb || sz->nb >= (1ul << 20) || urcu_memb_read_ongoing())
        return;
    while (sz->n > 2 * sz->nb && sz->nb < (1ul << 20))
        sz->nb *= 2;
    cds_lfht_resize(ht, sz->nb);
}

pmap *pmap_new_sized(unsigned long buckets)
{
    pmap *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    if (!(m->ht = table_new(buckets, &m->sz))) {
        free(m);
        return NULL;
    }
    return m;
}

void pmap_free(pmap *m, pmap_dtor dtor)
{
    assert(!pmap_read_ongoing());     /* it waits for a grace period */
    if (!m)
        return;
    struct cds_lfht_iter it;
    struct cds_lfht_node *n;
    urcu_memb_read_lock();
    cds_lfht_first(m->ht, &it);
    while ((n = cds_lfht_iter_get_node(&it)) != NULL) {
        cds_lfht_next(m->ht, &it);
        if (cds_lfht_del(m->ht, n) == 0)
            retire(m, n, dtor);
    }
    urcu_memb_read_unlock();
    urcu_memb_barrier();
    cds_lfht_destroy(m->ht, NULL);
    free(m);
}

/* The map's dtor: every value has the same (pmap.h). */
static void set_dtor(pmap *m, pmap_dtor dtor)
{
    assert(!m->has_dtor || m->dtor == dtor);
    m->dtor = dtor;
    m->has_dtor = 1;
}

/* Publish e (filled in): replaces the entry of its key, if any. */
static void put_entry(pmap *m, pent *e)
{
    pkey k = { e->key, e->klen };
    unsigned long h = hash_bytes(e->key, e->klen);
    urcu_memb_read_lock();
    struct cds_lfht_node *old = cds_lfht_add_replace(m->ht, h, match, &k, &e->node);
    urcu_memb_read_unlock();
    if (old)
        retire(m, old, NULL);
    else
        grow(m->ht, &m->sz, 1);
}

static pent *entry_new(const void *key, size_t klen, size_t vsize)
{
    if (klen > PMAP_KEY_MAX)
        return NULL;
    pent *e = calloc(1, val_offset(klen) + vsize);
    if (!e)
        return NULL;
    cds_lfht_node_init(&e->node);
    e->klen = klen & PMAP_KEY_MAX;
    memcpy(e->key, key, klen);
    return e;
}

int pmap_put(pmap *m, const void *key, size_t klen, void *val, pmap_dtor dtor)
{
    assert(m && (key || klen == 0));
    pent *e = entry_new(key, klen, sizeof val);
    if (!e)
        return -1;
    e->boxed = 1;
    memcpy((char *)e + val_offset(klen), &val, sizeof val);
    set_dtor(m, dtor);
    put_entry(m, e);
    return 0;
}

pmap_entry *pmap_entry_new(const void *key, size_t klen, size_t vsize, void **val)
{
    pent *e = entry_new(key, klen, vsize);
    *val = e ? (char *)e + val_offset(klen) : NULL;
    return e;
}

const char *pmap_entry_key(const pmap_entry *e)
{
    assert(e);
    return (const char *)e->key;
}

int pmap_put_entry(pmap *m, pmap_entry *e, pmap_dtor dtor)
{
    assert(e && !e->boxed);
    set_dtor(m, dtor);
    put_entry(m, e);
    return 0;
}

void pmap_entry_free(pmap_entry *e)
{
    free(e);
}

int pmap_del(pmap *m, const void *key, size_t klen)
{
    assert(m && (key || klen == 0));
    pkey k = { key, klen };
    struct cds_lfht_iter it;
    int rc = -1;
    urcu_memb_read_lock();
    cds_lfht_lookup(m->ht, hash_bytes(key, klen), match, &k, &it);
    struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
    if (n && cds_lfht_del(m->ht, n) == 0)
        rc = 0;
    urcu_memb_read_unlock();
    if (rc == 0) {
        retire(m, n, NULL);
        grow(m->ht, &m->sz, -1);
    }
    return rc;
}

void *pmap_get(pmap *m, const void *key, size_t klen)
{
    assert(m && (key || klen == 0));
    assert(pmap_read_ongoing());       /* inside store_read_begin/_end */
    pkey k = { key, klen };
    struct cds_lfht_iter it;
    cds_lfht_lookup(m->ht, hash_bytes(key, klen), match, &k, &it);
    struct cds_lfht_node *n = cds_lfht_iter_get_node(&it);
    return n ? entry_val(caa_container_of(n, pent, node)) : NULL;
}

void *pmap_get_writer(pmap *m, const void *key, size_t klen)
{
    urcu_memb_read_lock();                  /* nests in the caller's, if any */
    void *v = pmap_get(m, key, klen);
    urcu_memb_read_unlock();
    return v;
}

/* Nodes in a table (either kind of map), from the writer. */
static size_t ht_count(struct cds_lfht *ht)
{
    long before, after;
    unsigned long count;
    urcu_memb_read_lock();
    cds_lfht_count_nodes(ht, &before, &count, &after);
    urcu_memb_read_unlock();
    return (size_t)count;
}

size_t pmap_count(pmap *m)
{
    return ht_count(m->ht);
}

void pmap_foreach(pmap *m, int (*fn)(void *val, void *arg), void *arg)
{
    assert(m && fn);
    assert(pmap_read_ongoing());
    struct cds_lfht_iter it;
    struct cds_lfht_node *n;
    cds_lfht_for_each(m->ht, &it, n)
        if (fn(entry_val(caa_container_of(n, pent, node)), arg))
            return;
}

/* ---- ipmap ------------------------------------------------------------- */

/* Not a hash table of one allocation per address (64 bytes with its
 * bucket, 150,000 of them in a large cluster) but, per address family, a
 * directory of shards, each one block sorted by address and laid out as
 * two arrays: the n values, then the n addresses (12 bytes per IPv4
 * address, 24 per IPv6 one). A reader hashes the address to its shard and
 * bisects the address array. The writer changes the value of an existing
 * address in place (one pointer store, which readers see whole); an
 * address added or removed publishes a copy of its shard and frees the old
 * one after a grace period. A family's directory is made with its first
 * address (an IPv4-only cluster has no IPv6 one) at DIR_MIN shards and
 * doubles, republished whole, when the map holds more than SHARD_LOAD
 * addresses per shard: between SHARD_LOAD/2 and SHARD_LOAD per shard (at
 * 150,000 addresses 8,192 shards of about 18, a copy of 220 bytes per
 * change). It never shrinks. The three published pointers (directory,
 * shard, value) are C11 atomics, stored with release by the writer and
 * loaded with acquire by readers (plain moves on x86; ThreadSanitizer
 * sees the ordering, which it does not for liburcu's rcu_assign_pointer).
 *
 * Held (ipmap_hold, a relist): the writer keeps a directory of its own
 * per family (wdir) whose slots are either the published shard (not yet
 * changed) or a private shard (cap > 0: room for cap addresses, the
 * addresses at val + cap) that later changes edit in place; the private
 * directory doubles by itself (all its shards are private after that).
 * Private shards are carved from a pool of 256 KB blocks mapped apart
 * from the heap (mmap; never freed one by one: a shard that grows is
 * carved anew), unmapped whole when the private directory doubles (a new
 * pool for the new shards) and at the release: neither a hole per shard
 * between the relist's long-lived objects nor a heap top that glibc
 * keeps (it trims the top of a thread's arena only past its trim
 * threshold, and malloc_trim not at all).
 * Readers keep the published directory, in which the writer mirrors each
 * change of an address they already have in place (its new value, or
 * NULL when removed: a NULL value reads as absent) so that no value it
 * retires stays reachable; addresses added appear at the release, which
 * publishes each private shard once, sized exactly (cap 0), and retires
 * the shards (or the directory) they replace. Outside a hold no published
 * value is NULL and wdir is NULL. */
enum { DIR_MIN = 64, DIR_MAX = 1 << 20, SHARD_LOAD = 32, SHARD_SPARE_MIN = 8,
       POOL_BLOCK = 256 * 1024 };

typedef struct ipshard {
    uint32_t n;
    uint32_t cap;                   /* 0: published (exactly n); else private, room for cap */
    _Atomic(void *) val[];          /* n (cap) values, then n addresses of alen bytes */
} ipshard;

typedef struct ipdir {
    size_t mask;                    /* shards - 1 */
    _Atomic(ipshard *) sh[];        /* NULL: no address there */
} ipdir;

static_assert((DIR_MIN & (DIR_MIN - 1)) == 0 && (DIR_MAX & (DIR_MAX - 1)) == 0,
              "dir_shard() masks the hash");
static_assert(offsetof(ipshard, val) % _Alignof(void *) == 0, "values aligned");
static_assert(sizeof(_Atomic(void *)) == sizeof(void *), "values are plain pointers in size");
static_assert(sizeof(void *) != 8 || sizeof(void *) + 4 == 12, "12 bytes per IPv4 address (pmap.h)");

/* A block of a private pool (a mapping of sizeof header + cap bytes):
 * used of cap bytes carved, 8-aligned. */
typedef struct ipblock {
    struct ipblock *next;
    size_t used, cap;
    _Alignas(void *) unsigned char mem[];
} ipblock;

struct ipmap {
    _Atomic(ipdir *) dir[2];        /* [0] IPv4, [1] IPv6; NULL: none yet */
    size_t n[2];                    /* the writer's view */
    ipdir *wdir[2];                 /* held: the writer's directories (NULL: unchanged) */
    ipblock *pool[2];               /* held: where wdir's private shards are */
    int held;
};

static void *pool_alloc(ipblock **pool, size_t size)
{
    size = (size + 7) & ~(size_t)7;
    ipblock *b = *pool;
    if (!b || b->cap - b->used < size) {
        size_t cap = size > POOL_BLOCK - sizeof *b ? size : POOL_BLOCK - sizeof *b;
        void *p = mmap(NULL, sizeof *b + cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
        if (p == MAP_FAILED)
            return NULL;
        b = p;
        b->next = *pool;
        b->used = 0;
        b->cap = cap;
        *pool = b;
    }
    void *p = b->mem + b->used;
    b->used += size;
    return p;
}

static void pool_free(ipblock *b)
{
    while (b) {
        ipblock *next = b->next;
        munmap(b, sizeof *b + b->cap);
        b = next;
    }
}

static uint8_t *skeys(const ipshard *sh)
{
    return (uint8_t *)(sh->val + (sh->cap ? sh->cap : sh->n));
}

static _Atomic(ipshard *) *dir_shard(ipdir *d, const void *addr, size_t alen)
{
    return &d->sh[hash_bytes(addr, alen) & d->mask];
}

/* The index of addr in sh, or (not found) ~insertion point. */
static long shard_find(const ipshard *sh, const void *addr, size_t alen)
{
    size_t lo = 0, hi = sh ? sh->n : 0;
    const uint8_t *k = sh ? skeys(sh) : NULL;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = memcmp(k + mid * alen, addr, alen);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return ~(long)lo;
}

/* A shard of n addresses: published (pool NULL, cap 0: malloc) or private
 * (carved from *pool) with room for cap. */
static ipshard *shard_new(ipblock **pool, uint32_t n, uint32_t cap, size_t alen)
{
    assert(pool ? cap >= n && cap > 0 : cap == 0);
    size_t size = sizeof(ipshard) + (size_t)(cap ? cap : n) * (sizeof(void *) + alen);
    ipshard *sh = pool ? pool_alloc(pool, size) : malloc(size);
    if (sh) {
        sh->n = n;
        sh->cap = cap;
    }
    return sh;
}

static ipshard *shard_alloc(uint32_t n, size_t alen)
{
    return shard_new(NULL, n, 0, alen);
}

/* Room for a private shard of n addresses: twice as many (it fills until
 * its directory doubles), at least SHARD_SPARE_MIN. */
static uint32_t private_cap(uint32_t n)
{
    return n < SHARD_SPARE_MIN / 2 ? SHARD_SPARE_MIN : 2 * n;
}

/* A copy of sh (NULL: empty): private with cap in *pool, or (pool NULL,
 * cap 0) published, exact. */
static ipshard *shard_copy(ipblock **pool, const ipshard *sh, uint32_t cap, size_t alen)
{
    uint32_t n = sh ? sh->n : 0;
    ipshard *c = shard_new(pool, n, cap, alen);
    if (c && n) {
        for (uint32_t j = 0; j < n; j++)
            atomic_init(&c->val[j], atomic_load_explicit(&sh->val[j], memory_order_relaxed));
        memcpy(skeys(c), skeys(sh), (size_t)n * alen);
    }
    return c;
}

static ipdir *dir_alloc(size_t shards)
{
    ipdir *d = calloc(1, sizeof *d + shards * sizeof(ipshard *));
    if (d)
        d->mask = shards - 1;
    return d;
}

/* A published directory and its shards (a writer's directory is freed
 * alone: its private shards go with their pool, the others are the
 * published directory's). */
static void dir_free(ipdir *d)
{
    if (!d)
        return;
    for (size_t i = 0; i <= d->mask; i++) {
        ipshard *sh = atomic_load_explicit(&d->sh[i], memory_order_relaxed);
        assert(!sh || !sh->cap);
        free(sh);
    }
    free(d);
}

static void dir_free_cb(void *d)
{
    dir_free(d);
}

ipmap *ipmap_new(void)
{
    return calloc(1, sizeof(ipmap));
}

void ipmap_free(ipmap *m)
{
    if (!m)
        return;
    for (int f = 0; f < 2; f++) {
        free(m->wdir[f]);
        pool_free(m->pool[f]);
        dir_free(atomic_load_explicit(&m->dir[f], memory_order_relaxed));
    }
    free(m);
}

/* A directory of twice as many shards holding what d holds: each shard
 * splits in two by the next bit of the hash (order kept); the new shards
 * are private, carved from *pool with room to grow, or (pool NULL)
 * published. NULL when memory runs out (d then stays; the pool may have
 * grown). */
static ipdir *dir_double(const ipdir *d, size_t alen, ipblock **pool)
{
    size_t shards = (d->mask + 1) * 2;
    ipdir *nd = dir_alloc(shards);
    if (!nd)
        return NULL;
    for (size_t i = 0; i <= d->mask; i++) {
        const ipshard *sh = atomic_load_explicit(&d->sh[i], memory_order_relaxed);
        if (!sh)
            continue;
        uint32_t cnt[2] = { 0, 0 };
        const uint8_t *k = skeys(sh);
        for (size_t j = 0; j < sh->n; j++)
            cnt[(hash_bytes(k + j * alen, alen) & nd->mask) != i]++;
        ipshard *half[2] = { NULL, NULL };
        for (int h = 0; h < 2; h++)
            if ((cnt[h] || pool) &&
                !(half[h] = shard_new(pool, cnt[h], pool ? private_cap(cnt[h]) : 0, alen))) {
                if (!pool) {
                    free(half[0]);
                    dir_free(nd);
                } else {
                    free(nd);
                }
                return NULL;
            }
        size_t at[2] = { 0, 0 };
        for (size_t j = 0; j < sh->n; j++) {
            int h = (hash_bytes(k + j * alen, alen) & nd->mask) != i;
            atomic_init(&half[h]->val[at[h]], atomic_load_explicit(&sh->val[j], memory_order_relaxed));
            memcpy(skeys(half[h]) + at[h] * alen, k + j * alen, alen);
            at[h]++;
        }
        atomic_init(&nd->sh[i], half[0]);
        atomic_init(&nd->sh[i + d->mask + 1], half[1]);
    }
    return nd;
}

/* After an address was added: past SHARD_LOAD per shard, double the
 * directory (the old one and its shards are freed after a grace period).
 * Out of memory: the shards just stay longer. */
static void dir_grow(ipmap *m, int f, size_t alen)
{
    ipdir *d = atomic_load_explicit(&m->dir[f], memory_order_relaxed);
    if (m->n[f] <= SHARD_LOAD * (d->mask + 1) || d->mask + 1 >= DIR_MAX)
        return;
    ipdir *nd = dir_double(d, alen, NULL);
    if (!nd)
        return;
    atomic_store_explicit(&m->dir[f], nd, memory_order_release);
    pmap_defer(dir_free_cb, d);
}

/* Held: the same for the writer's directory, which no reader sees: its
 * shards are carved from a new pool, the old directory and pool (with
 * every private shard of before) are freed at once. */
static void wdir_grow(ipmap *m, int f, size_t alen)
{
    ipdir *d = m->wdir[f];
    if (m->n[f] <= SHARD_LOAD * (d->mask + 1) || d->mask + 1 >= DIR_MAX)
        return;
    ipblock *pool = NULL;
    ipdir *nd = dir_double(d, alen, &pool);
    if (!nd) {
        pool_free(pool);
        return;
    }
    m->wdir[f] = nd;
    free(d);
    pool_free(m->pool[f]);
    m->pool[f] = pool;
}

/* Held: set addr in the writer's directory (made on the first change of
 * the family, a copy of the published one) and mirror it in the
 * published one when readers have the address. */
static int held_set(ipmap *m, int f, const void *addr, size_t alen, void *val)
{
    ipdir *pd = atomic_load_explicit(&m->dir[f], memory_order_relaxed);
    ipdir *wd = m->wdir[f];
    if (!wd) {
        if (!val && !pd)
            return 0;
        if (!(wd = dir_alloc(pd ? pd->mask + 1 : DIR_MIN)))
            return -1;
        for (size_t i = 0; pd && i <= pd->mask; i++)
            atomic_init(&wd->sh[i], atomic_load_explicit(&pd->sh[i], memory_order_relaxed));
        m->wdir[f] = wd;
    }
    _Atomic(ipshard *) *at = dir_shard(wd, addr, alen);
    ipshard *sh = atomic_load_explicit(at, memory_order_relaxed);
    long i = shard_find(sh, addr, alen);
    if (i < 0 && !val)
        return 0;
    if (!sh || !sh->cap) {          /* the first change of this shard: a private copy */
        ipshard *c = shard_copy(&m->pool[f], sh, private_cap(sh ? sh->n + 1 : 1), alen);
        if (!c)
            return -1;
        atomic_store_explicit(at, c, memory_order_relaxed);
        sh = c;
    }
    if (i < 0 && sh->n == sh->cap) {    /* full: a larger one (the old stays in the pool) */
        ipshard *c = shard_copy(&m->pool[f], sh, sh->cap + sh->cap / 2, alen);
        if (!c)
            return -1;
        atomic_store_explicit(at, c, memory_order_relaxed);
        sh = c;
    }
    uint8_t *k = skeys(sh);
    if (i >= 0 && val) {
        atomic_store_explicit(&sh->val[i], val, memory_order_relaxed);
    } else if (i >= 0) {            /* remove i */
        size_t pos = (size_t)i, tail = sh->n - pos - 1;
        memmove(sh->val + pos, sh->val + pos + 1, tail * sizeof(void *));
        memmove(k + pos * alen, k + (pos + 1) * alen, tail * alen);
        sh->n--;
        m->n[f]--;
    } else {                        /* insert at ~i */
        size_t pos = (size_t)~i, tail = sh->n - pos;
        memmove(sh->val + pos + 1, sh->val + pos, tail * sizeof(void *));
        memmove(k + (pos + 1) * alen, k + pos * alen, tail * alen);
        atomic_init(&sh->val[pos], val);
        memcpy(k + pos * alen, addr, alen);
        sh->n++;
        m->n[f]++;
    }
    assert(sh->n <= sh->cap);
    if (pd) {                       /* readers' copy: the new value where they have the address */
        ipshard *ps = atomic_load_explicit(dir_shard(pd, addr, alen), memory_order_relaxed);
        long pi = shard_find(ps, addr, alen);
        if (pi >= 0)
            atomic_store_explicit(&ps->val[pi], val, memory_order_release);
    }
    if (i < 0)
        wdir_grow(m, f, alen);
    return 0;
}

int ipmap_set(ipmap *m, const void *addr, size_t alen, void *val)
{
    assert(m && addr);
    if (alen != 4 && alen != 16)
        return -1;
    int f = alen == 16;
    if (m->held)
        return held_set(m, f, addr, alen, val);
    assert(!m->wdir[f] && !m->pool[f]);
    /* only this thread stores the map's pointers: its own loads are relaxed */
    ipdir *d = atomic_load_explicit(&m->dir[f], memory_order_relaxed);
    if (!d) {
        if (!val)
            return 0;
        if (!(d = dir_alloc(DIR_MIN)))
            return -1;
        atomic_store_explicit(&m->dir[f], d, memory_order_release);
    }
    _Atomic(ipshard *) *at = dir_shard(d, addr, alen);
    ipshard *cur = atomic_load_explicit(at, memory_order_relaxed);
    assert(!cur || !cur->cap);      /* published shards only */
    long i = shard_find(cur, addr, alen);
    if (i >= 0 && val) {            /* in place: readers see the old or the new pointer */
        atomic_store_explicit(&cur->val[i], val, memory_order_release);
        return 0;
    }
    if (i < 0 && !val)
        return 0;
    /* an address added (i < 0) or removed: a new copy of the shard */
    uint32_t n = cur ? cur->n : 0;
    assert(i < 0 || n > 0);
    uint32_t nn = i >= 0 ? n - 1 : n + 1;
    size_t pos = i >= 0 ? (size_t)i : (size_t)~i;
    ipshard *sh = NULL;
    if (nn) {
        if (!(sh = shard_alloc(nn, alen)))
            return -1;
        const uint8_t *ok = n ? skeys(cur) : NULL;
        uint8_t *nk = (uint8_t *)(sh->val + nn);
        if (pos) {
            memcpy(sh->val, cur->val, pos * sizeof(void *));
            memcpy(nk, ok, pos * alen);
        }
        if (i >= 0) {               /* drop pos */
            memcpy(sh->val + pos, cur->val + pos + 1, (n - pos - 1) * sizeof(void *));
            memcpy(nk + pos * alen, ok + (pos + 1) * alen, (n - pos - 1) * alen);
        } else {                    /* insert at pos */
            atomic_init(&sh->val[pos], val);
            memcpy(nk + pos * alen, addr, alen);
            if (n > pos) {
                memcpy(sh->val + pos + 1, cur->val + pos, (n - pos) * sizeof(void *));
                memcpy(nk + (pos + 1) * alen, ok + pos * alen, (n - pos) * alen);
            }
        }
    }
    atomic_store_explicit(at, sh, memory_order_release);
    if (cur)
        pmap_defer(free, cur);
    if (i >= 0) {
        m->n[f]--;
    } else {
        m->n[f]++;
        dir_grow(m, f, alen);
    }
    return 0;
}

/* Release: publish family f's writer directory (see the comment above):
 * 1 when it did, 0 when the family had no change, -1 when memory ran out
 * (nothing published, the writer's directory kept). */
static int held_publish(ipmap *m, int f)
{
    ipdir *wd = m->wdir[f];
    if (!wd)
        return 0;
    size_t alen = f ? 16 : 4;
    ipdir *pd = atomic_load_explicit(&m->dir[f], memory_order_relaxed);
    int same = pd && pd->mask == wd->mask;  /* else a new or doubled directory: all private */
    /* exact copies of the private shards first (the others are published) */
    ipdir *nd = dir_alloc(wd->mask + 1);
    if (!nd)
        return -1;
    for (size_t i = 0; i <= wd->mask; i++) {
        ipshard *sh = atomic_load_explicit(&wd->sh[i], memory_order_relaxed);
        assert(same || !sh || sh->cap);
        if (!sh || !sh->cap || !sh->n)
            continue;
        ipshard *c = shard_copy(NULL, sh, 0, alen);
        if (!c) {
            dir_free(nd);
            return -1;
        }
        atomic_init(&nd->sh[i], c);
    }
    if (same) {                     /* the changed shards take their slots */
        for (size_t i = 0; i <= wd->mask; i++) {
            ipshard *sh = atomic_load_explicit(&wd->sh[i], memory_order_relaxed);
            if (!sh || !sh->cap)
                continue;           /* unchanged: it is the published one */
            ipshard *old = atomic_load_explicit(&pd->sh[i], memory_order_relaxed);
            atomic_store_explicit(&pd->sh[i], atomic_load_explicit(&nd->sh[i], memory_order_relaxed),
                                  memory_order_release);
            if (old)
                pmap_defer(free, old);
        }
        free(nd);
    } else {
        atomic_store_explicit(&m->dir[f], nd, memory_order_release);
        if (pd)
            pmap_defer(dir_free_cb, pd);
    }
    free(wd);
    m->wdir[f] = NULL;
    pool_free(m->pool[f]);
    m->pool[f] = NULL;
    return 1;
}

int ipmap_hold(ipmap *m, int on)
{
    assert(m && (on == 0 || on == 1));
    if (on || !m->held) {
        m->held |= on;
        return 0;
    }
    int published = 0;
    for (int f = 0; f < 2; f++) {
        int r = held_publish(m, f);
        if (r < 0)
            return -1;              /* still held: the next release tries again */
        published |= r;
    }
    m->held = 0;
    assert(!m->wdir[0] && !m->wdir[1] && !m->pool[0] && !m->pool[1]);
    return published;
}

static void *dir_lookup(ipdir *d, const void *addr, size_t alen, memory_order mo)
{
    if (!d)
        return NULL;
    ipshard *sh = atomic_load_explicit(dir_shard(d, addr, alen), mo);
    long i = shard_find(sh, addr, alen);
    return i >= 0 ? atomic_load_explicit(&sh->val[i], mo) : NULL;
}

void *ipmap_get(ipmap *m, const void *addr, size_t alen)
{
    assert(m && addr);
    assert(pmap_read_ongoing());            /* a reader, inside store_read_begin/_end */
    if (alen != 4 && alen != 16)
        return NULL;
    return dir_lookup(atomic_load_explicit(&m->dir[alen == 16], memory_order_acquire), addr, alen,
                      memory_order_acquire);
}

void *ipmap_get_writer(ipmap *m, const void *addr, size_t alen)
{
    assert(m && addr);
    if (alen != 4 && alen != 16)
        return NULL;
    int f = alen == 16;
    /* the writer's own shards: no lock; held, its private view */
    ipdir *d = m->wdir[f] ? m->wdir[f] : atomic_load_explicit(&m->dir[f], memory_order_relaxed);
    return dir_lookup(d, addr, alen, memory_order_relaxed);
}

size_t ipmap_count(ipmap *m)
{
    return m->n[0] + m->n[1];
}

void pmap_read_lock(void) { urcu_memb_read_lock(); }
void pmap_read_unlock(void) { urcu_memb_read_unlock(); }
void pmap_register_thread(void) { urcu_memb_register_thread(); }
void pmap_unregister_thread(void) { urcu_memb_unregister_thread(); }

/* A deferred call: fn(arg), or (fn NULL) the retired entry arg, its
 * value destroyed by dtor (when not NULL) first. 40 bytes: the same
 * 48-byte malloc chunk as without dtor. */
typedef struct deferred {
    struct rcu_head rcu;
    void (*fn)(void *);
    void *arg;
    pmap_dtor dtor;
} deferred;

static void run_call(void (*fn)(void *), void *arg, pmap_dtor dtor)
{
    if (fn) {
        fn(arg);
        return;
    }
    pent *e = arg;
    if (dtor)
        dtor(entry_val(e));
    free(e);
}

static void run_deferred(struct rcu_head *head)
{
    deferred *d = caa_container_of(head, deferred, rcu);
    run_call(d->fn, d->arg, d->dtor);
    free(d);
}

static void defer_call(void (*fn)(void *), void *arg, pmap_dtor dtor)
{
    deferred *d = malloc(sizeof *d);
    if (!d) {                   /* out of memory: wait here instead (never
                                 * inside a read-side section: then leak) */
        if (urcu_memb_read_ongoing())
            return;
        urcu_memb_synchronize_rcu();
        run_call(fn, arg, dtor);
        return;
    }
    d->fn = fn;
    d->arg = arg;
    d->dtor = dtor;
    urcu_memb_call_rcu(&d->rcu, run_deferred);
}

static void defer_entry(pent *e, pmap_dtor dtor)
{
    defer_call(NULL, e, dtor);
}

void pmap_defer(void (*fn)(void *), void *arg)
{
    assert(fn);
    defer_call(fn, arg, NULL);
}

void pmap_barrier(void)
{
    assert(!pmap_read_ongoing());     /* waiting inside a section deadlocks */
    urcu_memb_barrier();
}
