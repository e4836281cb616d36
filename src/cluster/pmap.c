/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pmap.c — see pmap.h. Thin layer over liburcu's rculfhash.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
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
 * sees the ordering, which it does not for liburcu's rcu_assign_pointer). */
enum { DIR_MIN = 64, DIR_MAX = 1 << 20, SHARD_LOAD = 32 };

typedef struct ipshard {
    uint32_t n;
    uint32_t pad;
    _Atomic(void *) val[];          /* n values, then n addresses of alen bytes */
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

struct ipmap {
    _Atomic(ipdir *) dir[2];        /* [0] IPv4, [1] IPv6; NULL: none yet */
    size_t n[2];
};

static const uint8_t *skeys(const ipshard *sh)
{
    return (const uint8_t *)(sh->val + sh->n);
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

static ipshard *shard_alloc(uint32_t n, size_t alen)
{
    ipshard *sh = malloc(sizeof *sh + (size_t)n * (sizeof(void *) + alen));
    if (sh) {
        sh->n = n;
        sh->pad = 0;
    }
    return sh;
}

static ipdir *dir_alloc(size_t shards)
{
    ipdir *d = calloc(1, sizeof *d + shards * sizeof(ipshard *));
    if (d)
        d->mask = shards - 1;
    return d;
}

static void dir_free(ipdir *d)
{
    if (!d)
        return;
    for (size_t i = 0; i <= d->mask; i++)
        free(atomic_load_explicit(&d->sh[i], memory_order_relaxed));
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
    dir_free(atomic_load_explicit(&m->dir[0], memory_order_relaxed));
    dir_free(atomic_load_explicit(&m->dir[1], memory_order_relaxed));
    free(m);
}

/* A directory of twice as many shards holding what d holds: each shard
 * splits in two by the next bit of the hash (order kept). NULL when
 * memory runs out (d then stays). */
static ipdir *dir_double(const ipdir *d, size_t alen)
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
            if (cnt[h] && !(half[h] = shard_alloc(cnt[h], alen))) {
                free(half[0]);
                dir_free(nd);
                return NULL;
            }
        size_t at[2] = { 0, 0 };
        for (size_t j = 0; j < sh->n; j++) {
            int h = (hash_bytes(k + j * alen, alen) & nd->mask) != i;
            atomic_init(&half[h]->val[at[h]], atomic_load_explicit(&sh->val[j], memory_order_relaxed));
            memcpy((uint8_t *)(half[h]->val + half[h]->n) + at[h] * alen, k + j * alen, alen);
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
    ipdir *nd = dir_double(d, alen);
    if (!nd)
        return;
    atomic_store_explicit(&m->dir[f], nd, memory_order_release);
    pmap_defer(dir_free_cb, d);
}

int ipmap_set(ipmap *m, const void *addr, size_t alen, void *val)
{
    assert(m && addr);
    if (alen != 4 && alen != 16)
        return -1;
    int f = alen == 16;
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

static void *ipmap_lookup(ipmap *m, const void *addr, size_t alen)
{
    if (alen != 4 && alen != 16)
        return NULL;
    ipdir *d = atomic_load_explicit(&m->dir[alen == 16], memory_order_acquire);
    if (!d)
        return NULL;
    ipshard *sh = atomic_load_explicit(dir_shard(d, addr, alen), memory_order_acquire);
    long i = shard_find(sh, addr, alen);
    return i >= 0 ? atomic_load_explicit(&sh->val[i], memory_order_acquire) : NULL;
}

void *ipmap_get(ipmap *m, const void *addr, size_t alen)
{
    assert(m && addr);
    assert(pmap_read_ongoing());            /* a reader, inside store_read_begin/_end */
    return ipmap_lookup(m, addr, alen);
}

void *ipmap_get_writer(ipmap *m, const void *addr, size_t alen)
{
    assert(m && addr);
    return ipmap_lookup(m, addr, alen);     /* the writer's own shards: no lock */
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
