/*
 * table.c — the cache's shared table: 256 shards, random eviction.
 *
 * As CoreDNS's plugin/pkg/cache: the key's low 8 bits pick a shard, a shard
 * holds at most max(capacity/256, 4) entries, and adding to a full shard
 * evicts one entry of that shard at random (unless the key is already
 * there, in which case it is replaced).
 *
 * Concurrency: one table is shared by every worker. Each bucket is a
 * liburcu RCU hlist (urcu/rcuhlist.h) of entries linked through `node`.
 *   Readers (ctable_get: cache hits, and ctable_refresh_done, which only
 *   clears an entry's atomic refresh mark) walk a chain with
 *   cds_hlist_for_each_entry_rcu_2 inside a urcu_memb read-side section
 *   and never take a lock, so a hit never waits on a writer.
 *   Writers (ctable_put, ctable_del: the store path) take the shard's
 *   mutex; cds_hlist_add_head_rcu publishes a new entry at the head of its
 *   chain, cds_hlist_del_rcu unlinks a replaced or evicted one without
 *   touching its forward link, so a reader standing on it still reaches
 *   the rest of the chain.
 *   Memory: an unlinked entry is freed by urcu_memb_call_rcu after every
 *   reader that might hold it has left its section; ctable_destroy frees
 *   the rest directly (no reader may be active then).
 * Entries are immutable once published except for their atomic
 * prefetch/refresh counters.
 */
/* liburcu's switch to inline its small pointer helpers (rcu_dereference on
 * the read path) rather than call them in the library; it must come before
 * any liburcu header. */
#define URCU_INLINE_SMALL_FUNCTIONS
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <urcu/rcuhlist.h>
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
    for (int i = 0; i < CACHE_SHARDS; i++) {
        cshard *s = &t->s[i];
        for (unsigned j = 0; s->b && j < s->nb; j++) {
            centry *e, *nx;
            cds_hlist_for_each_entry_safe_2(e, nx, &s->b[j], node)
                centry_free(e);
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

static struct cds_hlist_head *bucket_of(cshard *s, uint64_t hash)
{
    return &s->b[(hash >> 8) & (s->nb - 1)];
}

centry *ctable_get(ctable *t, const ckey *k)
{
    centry *e;
    cds_hlist_for_each_entry_rcu_2(e, bucket_of(shard_of(t, k->hash), k->hash), node)
        if (same(e, k))
            return e;
    return NULL;
}

/* Writer: unlink e (its forward link stays for readers), free it later. */
static void unlink_entry(cshard *s, centry *e)
{
    cds_hlist_del_rcu(&e->node);
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
        struct cds_hlist_head *head = &s->b[(start + i) & (s->nb - 1)];
        if (head->next) {
            unlink_entry(s, cds_hlist_entry(head->next, centry, node));
            return;
        }
    }
}

/* Writer (shard locked): the entry with identity k, or NULL. */
static centry *find_locked(cshard *s, const ckey *k)
{
    centry *e;
    cds_hlist_for_each_entry_2(e, bucket_of(s, k->hash), node)
        if (same(e, k))
            return e;
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
    cshard *s = shard_of(t, e->hash);
    ckey k;
    key_of(e, &k);
    int evicted = 0;
    long delta = 1;
    pthread_mutex_lock(&s->mu);
    centry *old = find_locked(s, &k);
    if (old) {
        unlink_entry(s, old);
        delta = 0;
    } else if (s->n >= s->cap) {
        evict_one(s);
        evicted = 1;
        delta = 0;
    }
    cds_hlist_add_head_rcu(&e->node, bucket_of(s, e->hash));
    s->n++;
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&t->n, delta);
    return evicted;
}

int ctable_del(ctable *t, const ckey *k)
{
    cshard *s = shard_of(t, k->hash);
    pthread_mutex_lock(&s->mu);
    centry *old = find_locked(s, k);
    if (old)
        unlink_entry(s, old);
    pthread_mutex_unlock(&s->mu);
    if (old)
        atomic_fetch_sub(&t->n, 1);
    return old != NULL;
}

long ctable_len(ctable *t)
{
    return atomic_load(&t->n);
}

void ctable_refresh_done(ctable *t, const ckey *k, const centry *e)
{
    urcu_memb_read_lock();
    centry *cur = ctable_get(t, k);
    if (cur && cur == e)
        atomic_store(&cur->refresh_ns, 0);
    urcu_memb_read_unlock();
}
