/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/tsan_urcu.c — ThreadSanitizer annotations for liburcu, linked into
 * every program of the ThreadSanitizer build only (scripts/test compiles it
 * and passes the object in configure's LIBS; it is not part of topodns).
 *
 * The cluster store (src/cluster/pmap.c) publishes objects through liburcu's
 * lock-free hash table and frees retired ones with call_rcu after a grace
 * period; the cache (src/plugin/cache/table.c) frees with call_rcu too.
 * liburcu is not built with -fsanitize=thread, and it synchronizes with
 * membarrier(2), futexes, inline-assembly atomics and volatile accesses, none
 * of which TSan sees. Without help, every field of every object published
 * through the table, and every object freed after a grace period, is
 * reported as a data race between the writer and the readers — thousands of
 * reports that bury the real ones.
 *
 * The definitions below take precedence over liburcu's (the program's own
 * symbols come first), tell TSan the ordering liburcu guarantees, and call
 * liburcu's function (dlsym RTLD_NEXT):
 *
 *   publication  cds_lfht_add, _add_unique, _add_replace, _replace release
 *                the new node; a node handed to a match function, or returned
 *                by cds_lfht_lookup, _first, _next, _next_duplicate, is
 *                acquired. That is the rcu_assign_pointer/rcu_dereference
 *                pair inside the table: what the writer wrote before adding
 *                the node is visible to a reader that finds it.
 *   grace period urcu_memb_read_unlock releases one object GP; a call_rcu
 *                callback (and urcu_memb_synchronize_rcu on return) acquires
 *                it, after acquiring what the caller of call_rcu did before
 *                the call. Every read-side section that ended before the
 *                callback runs happens before it: liburcu waits for every
 *                section that began before call_rcu.
 *   rcu_barrier  each callback releases CB_DONE when it returns;
 *                urcu_memb_barrier acquires it on return.
 *
 * What stays visible: a writer that changes an object after publishing it,
 * two threads writing shared state (globals, interned strings, counters)
 * without atomics or locks, a reader racing a writer on anything not
 * published through the table. The model is coarse in two ways: GP is one
 * object for every thread, so a reader that keeps using a pointer after its
 * read-side section is reported only if it ends no other section before the
 * callback runs; and a writer that meets a node another writer added
 * (replace, match) is ordered after that writer, as the table's atomics do
 * order them, so two writers of one table race unseen where they met.
 *
 * liburcu's own allocations, handed to its own threads and ordered by its
 * own waits: inside urcu_memb_barrier the calling thread's accesses are
 * ignored; what liburcu-cds allocates and hands to its resize worker
 * (work items, its queue, destroy completions) is covered by
 * tests/tsan.supp (called_from_lib: the libc calls liburcu-cds makes itself
 * are not checked), which scripts/test passes in TSAN_OPTIONS.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/tsan_interface.h>
#include <urcu/urcu-memb.h>
#include <urcu/rculfhash.h>

/* in libtsan, not declared by GCC 12's sanitizer/tsan_interface.h */
void __tsan_ignore_thread_begin(void);
void __tsan_ignore_thread_end(void);

static char gp_sync, cb_done_sync;

/* liburcu's own function. The pointer is stored with relaxed atomics: TSan
 * sees no race there, and no ordering that would hide one elsewhere. */
static void *real(const char *name, void **slot)
{
    void *p = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (!p) {
        p = dlsym(RTLD_NEXT, name);
        if (!p) {
            fprintf(stderr, "tsan_urcu: %s not found: %s\n", name, dlerror());
            abort();
        }
        __atomic_store_n(slot, p, __ATOMIC_RELAXED);
    }
    return p;
}
#define REAL(name) ((__typeof__(&name))real(#name, &real_##name))
#define DECL(name) static void *real_##name

/* ---------- publication through the lock-free hash table ---------- */

typedef struct {
    cds_lfht_match_fct match;
    const void *key;
} match_arg;

static int acquiring_match(struct cds_lfht_node *node, const void *arg)
{
    const match_arg *m = arg;
    __tsan_acquire(node);
    return m->match(node, m->key);
}

static void acquire_iter(struct cds_lfht_iter *iter)
{
    struct cds_lfht_node *n = cds_lfht_iter_get_node(iter);
    if (n)
        __tsan_acquire(n);
}

DECL(cds_lfht_lookup);
void cds_lfht_lookup(struct cds_lfht *ht, unsigned long hash, cds_lfht_match_fct match,
                     const void *key, struct cds_lfht_iter *iter)
{
    match_arg m = { match, key };
    REAL(cds_lfht_lookup)(ht, hash, acquiring_match, &m, iter);
    acquire_iter(iter);
}

DECL(cds_lfht_next_duplicate);
void cds_lfht_next_duplicate(struct cds_lfht *ht, cds_lfht_match_fct match, const void *key,
                             struct cds_lfht_iter *iter)
{
    match_arg m = { match, key };
    REAL(cds_lfht_next_duplicate)(ht, acquiring_match, &m, iter);
    acquire_iter(iter);
}

DECL(cds_lfht_first);
void cds_lfht_first(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
    REAL(cds_lfht_first)(ht, iter);
    acquire_iter(iter);
}

DECL(cds_lfht_next);
void cds_lfht_next(struct cds_lfht *ht, struct cds_lfht_iter *iter)
{
    REAL(cds_lfht_next)(ht, iter);
    acquire_iter(iter);
}

DECL(cds_lfht_add);
void cds_lfht_add(struct cds_lfht *ht, unsigned long hash, struct cds_lfht_node *node)
{
    __tsan_release(node);
    REAL(cds_lfht_add)(ht, hash, node);
}

DECL(cds_lfht_add_unique);
struct cds_lfht_node *cds_lfht_add_unique(struct cds_lfht *ht, unsigned long hash,
                                          cds_lfht_match_fct match, const void *key,
                                          struct cds_lfht_node *node)
{
    match_arg m = { match, key };
    __tsan_release(node);
    struct cds_lfht_node *r = REAL(cds_lfht_add_unique)(ht, hash, acquiring_match, &m, node);
    if (r != node)
        __tsan_acquire(r);          /* the node already there */
    return r;
}

DECL(cds_lfht_add_replace);
struct cds_lfht_node *cds_lfht_add_replace(struct cds_lfht *ht, unsigned long hash,
                                           cds_lfht_match_fct match, const void *key,
                                           struct cds_lfht_node *node)
{
    match_arg m = { match, key };
    __tsan_release(node);
    struct cds_lfht_node *old = REAL(cds_lfht_add_replace)(ht, hash, acquiring_match, &m, node);
    if (old)
        __tsan_acquire(old);
    return old;
}

DECL(cds_lfht_replace);
int cds_lfht_replace(struct cds_lfht *ht, struct cds_lfht_iter *old_iter, unsigned long hash,
                     cds_lfht_match_fct match, const void *key, struct cds_lfht_node *new_node)
{
    match_arg m = { match, key };
    __tsan_release(new_node);
    return REAL(cds_lfht_replace)(ht, old_iter, hash, acquiring_match, &m, new_node);
}

/* ---------- grace periods ---------- */

DECL(urcu_memb_read_unlock);
void urcu_memb_read_unlock(void)
{
    __tsan_release(&gp_sync);
    REAL(urcu_memb_read_unlock)();
}

DECL(urcu_memb_synchronize_rcu);
void urcu_memb_synchronize_rcu(void)
{
    REAL(urcu_memb_synchronize_rcu)();
    __tsan_acquire(&gp_sync);
}

/* call_rcu: the caller's head goes to liburcu wrapped, so that the callback
 * first acquires what the caller did (the wrapper) and the grace period. */
typedef struct {
    struct rcu_head head;           /* what liburcu queues */
    struct rcu_head *orig;
    void (*func)(struct rcu_head *);
} wrapped_cb;

static void run_wrapped(struct rcu_head *h)
{
    wrapped_cb *w = caa_container_of(h, wrapped_cb, head);
    __tsan_acquire(w);
    __tsan_acquire(&gp_sync);
    struct rcu_head *orig = w->orig;
    void (*func)(struct rcu_head *) = w->func;
    free(w);
    func(orig);
    __tsan_release(&cb_done_sync);
}

DECL(urcu_memb_call_rcu);
void urcu_memb_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *))
{
    wrapped_cb *w = malloc(sizeof *w);
    if (!w) {                       /* unannotated rather than lost */
        REAL(urcu_memb_call_rcu)(head, func);
        return;
    }
    w->orig = head;
    w->func = func;
    __tsan_release(w);
    REAL(urcu_memb_call_rcu)(&w->head, run_wrapped);
}

/* urcu_memb_barrier allocates a completion (calloc) for liburcu's own
 * callback on each call_rcu thread, which frees it there: liburcu's memory,
 * ordered by liburcu's futex wait, that TSan would report as a race between
 * the calloc here and the free there. The calling thread's memory accesses
 * are ignored while it is inside liburcu (it runs no code of ours there:
 * callbacks run on the call_rcu threads). */
DECL(urcu_memb_barrier);
void urcu_memb_barrier(void)
{
    __tsan_ignore_thread_begin();
    REAL(urcu_memb_barrier)();
    __tsan_ignore_thread_end();
    __tsan_acquire(&cb_done_sync);
}
