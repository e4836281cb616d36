/* SPDX-License-Identifier: Apache-2.0 */
/*
 * table.c — the cache's shared table: 256 shards, random eviction.
 *
 * As CoreDNS's plugin/pkg/cache: the key's low 8 bits pick a shard, a shard
 * holds at most max(capacity/256, 4) entries, and adding to a full shard
 * evicts one entry of that shard at random (unless the key is already
 * there, in which case it is replaced).
 *
 * Concurrency: one table is shared by every worker. Readers (cache hits)
 * walk bucket chains with acquire loads inside an RCU read-side section and
 * never take a lock, so a hit never waits on a writer. Writers (the store
 * path) take the shard's mutex, publish a new entry at the head of its
 * chain with a release store, and unlink replaced or evicted entries
 * without touching their `next`, so a reader standing on one still reaches
 * the rest of the chain. Unlinked entries are freed by call_rcu after every
 * reader that might hold them has left its section. Entries are immutable
 * once published except for their atomic prefetch/refresh counters.
 *
 * Why the chains are C11 atomics and not liburcu's RCU hlists (rcuhlist.h),
 * which would do the same job: liburcu publishes with volatile stores and
 * inline assembly that ThreadSanitizer cannot see, so every hit would be
 * reported as racing the store that published its entry, in the suite's
 * ThreadSanitizer stage, and real races here would drown. The acquire and
 * release atomics below are what liburcu does, written so that the checker
 * verifies them; call_rcu still does the freeing.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "plugin/cache/cache.h"

static void free_cb(struct rcu_head *h)
{
    centry_free(caa_container_of(h, centry, rcu));
}

static void retire(centry *e)
{
    urcu_memb_call_rcu(&e->rcu, free_cb);
}

int ctable_init(ctable *t, unsigned long cap)
{
    assert(t);
    memset(t, 0, sizeof *t);
    unsigned long per = cache_usable_cap(cap) / CACHE_SHARDS;
    unsigned nb = 4;
    while (nb < per && nb < (1u << 20))
        nb <<= 1;
    for (int i = 0; i < CACHE_SHARDS; i++) {
        cshard *s = &t->s[i];
        pthread_mutex_init(&s->mu, NULL);
        s->cap = (unsigned)per;
        s->nb = nb;
        s->b = calloc(nb, sizeof *s->b);
        if (!s->b) {
            ctable_destroy(t);
            return -1;
        }
    }
    return 0;
}

void ctable_destroy(ctable *t)
{
    assert(t && !urcu_memb_read_ongoing());     /* no reader active, this thread included */
    for (int i = 0; i < CACHE_SHARDS; i++) {
        cshard *s = &t->s[i];
        for (unsigned j = 0; s->b && j < s->nb; j++) {
            centry *e = atomic_load(&s->b[j]);
            while (e) {
                centry *nx = atomic_load(&e->next);
                centry_free(e);
                e = nx;
            }
        }
        free(s->b);
        s->b = NULL;
        pthread_mutex_destroy(&s->mu);
    }
}

static int same(const centry *e, const ckey *k)
{
    return e->hash == k->hash && e->qtype == k->qtype && e->qclass == k->qclass &&
           e->docd == k->docd && e->qlen == k->qlen && e->vlen == k->vlen &&
           memcmp(e->data, k->lname, k->qlen) == 0 &&
           memcmp(e->data + e->qlen, k->variant, k->vlen) == 0;
}

static cshard *shard_of(ctable *t, uint64_t hash)
{
    return &t->s[hash & (CACHE_SHARDS - 1)];
}

static centry *_Atomic *bucket_of(cshard *s, uint64_t hash)
{
    return &s->b[(hash >> 8) & (s->nb - 1)];
}

centry *ctable_get(ctable *t, const ckey *k)
{
    assert(t && k);
    assert(urcu_memb_read_ongoing());       /* a reader, inside urcu_memb_read_lock() */
    cshard *s = shard_of(t, k->hash);
    centry *e = atomic_load_explicit(bucket_of(s, k->hash), memory_order_acquire);
    for (; e; e = atomic_load_explicit(&e->next, memory_order_acquire))
        if (same(e, k))
            return e;
    return NULL;
}

/* Writer: unlink the entry at *link (its next stays for readers). */
static void unlink_at(cshard *s, centry *_Atomic *link, centry *e)
{
    atomic_store_explicit(link, atomic_load_explicit(&e->next, memory_order_relaxed),
                          memory_order_release);
    s->n--;
    retire(e);
}

static uint32_t rnd(void)
{
    static _Thread_local uint64_t x;
    if (!x) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        x = ((uint64_t)ts.tv_nsec << 17) ^ (uint64_t)(uintptr_t)&x ^ (uint64_t)ts.tv_sec;
        x |= 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint32_t)(x >> 11);
}

/* Writer: evict one entry of the shard, chosen at random. */
static void evict_one(cshard *s)
{
    unsigned start = rnd() & (s->nb - 1);
    for (unsigned i = 0; i < s->nb; i++) {
        centry *_Atomic *head = &s->b[(start + i) & (s->nb - 1)];
        centry *e = atomic_load_explicit(head, memory_order_relaxed);
        if (e) {
            unlink_at(s, head, e);
            return;
        }
    }
}

/* Writer: the link pointing at the entry with identity k, or NULL. */
static centry *_Atomic *find_link(cshard *s, const ckey *k, centry **out)
{
    centry *_Atomic *link = bucket_of(s, k->hash);
    for (centry *e = atomic_load_explicit(link, memory_order_relaxed); e;
         e = atomic_load_explicit(link, memory_order_relaxed)) {
        if (same(e, k)) {
            *out = e;
            return link;
        }
        link = &e->next;
    }
    return NULL;
}

static void key_of(const centry *e, ckey *k)
{
    k->hash = e->hash;
    k->lname = e->data;
    k->qlen = e->qlen;
    k->qtype = e->qtype;
    k->qclass = e->qclass;
    k->docd = e->docd;
    k->variant = (const char *)e->data + e->qlen;
    k->vlen = e->vlen;
}

int ctable_put(ctable *t, centry *e)
{
    assert(t && e);
    cshard *s = shard_of(t, e->hash);
    ckey k;
    key_of(e, &k);
    int evicted = 0;
    long delta = 1;
    pthread_mutex_lock(&s->mu);
    centry *old = NULL;
    centry *_Atomic *link = find_link(s, &k, &old);
    if (link) {
        unlink_at(s, link, old);
        delta = 0;
    } else if (s->n >= s->cap) {
        evict_one(s);
        evicted = 1;
        delta = 0;
    }
    centry *_Atomic *head = bucket_of(s, e->hash);
    atomic_store_explicit(&e->next, atomic_load_explicit(head, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(head, e, memory_order_release);
    s->n++;
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&t->n, delta);
    return evicted;
}

int ctable_del(ctable *t, const ckey *k)
{
    assert(t && k);
    cshard *s = shard_of(t, k->hash);
    pthread_mutex_lock(&s->mu);
    centry *old = NULL;
    centry *_Atomic *link = find_link(s, k, &old);
    if (link)
        unlink_at(s, link, old);
    pthread_mutex_unlock(&s->mu);
    if (link)
        atomic_fetch_sub(&t->n, 1);
    return link != NULL;
}

long ctable_len(ctable *t)
{
    return atomic_load(&t->n);
}

void ctable_refresh_done(ctable *t, const ckey *k, const centry *e)
{
    assert(t && k && e);
    urcu_memb_read_lock();
    centry *cur = ctable_get(t, k);
    if (cur && cur == e)
        atomic_store(&cur->refresh_ns, 0);
    urcu_memb_read_unlock();
}
