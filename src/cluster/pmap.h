/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pmap.h — a published map: a lock-free hash table (liburcu rculfhash, memb
 * flavor) from a byte key to an immutable value.
 *
 * One writer puts and deletes; readers get inside store_read_begin/_end.
 * A value replaced or deleted is destroyed (its dtor runs) after a grace
 * period, when no reader can still hold it. Every value of a map has the
 * same dtor (the map keeps one, not one per entry): every pmap_put and
 * pmap_put_entry on a map passes the same (assert()ed).
 */
#ifndef TOPODNS_PMAP_H
#define TOPODNS_PMAP_H

#include <stddef.h>
#include <stdint.h>
#include <urcu/urcu-memb.h>

typedef struct pmap pmap;
typedef void (*pmap_dtor)(void *val);

pmap *pmap_new(void);
/* A map expected to hold many entries: start with that many buckets
 * (rounded up to a power of two, 64 .. 2^20). Every map grows from the
 * writer as it fills: past two entries per bucket, a
 * pmap_put that adds one doubles the buckets before it
 * returns — when called outside any read-side section; inside one, the
 * table is left to liburcu's slower background resize. */
pmap *pmap_new_sized(unsigned long buckets);
/* Destroy the map and every value (no reader may be active). */
void pmap_free(pmap *m, pmap_dtor dtor);
/* Writer: insert or replace; the old value is destroyed after a grace period.
 * -1 when memory runs out or klen is above PMAP_KEY_MAX (the map unchanged). */
enum { PMAP_KEY_MAX = 32767 };
int pmap_put(pmap *m, const void *key, size_t klen, void *val, pmap_dtor dtor);
/* A value kept inside its entry's own block: one malloc chunk instead of
 * two (the store's 10,000 Services and their endpoint views).
 * pmap_entry_new (writer) makes an unpublished entry for key with vsize
 * bytes of zeroed value space, aligned for pointers and 64-bit integers,
 * and sets *val to it (NULL when memory runs out: *val is then NULL too);
 * the writer fills the value, then either pmap_put_entry publishes it
 * exactly as pmap_put would (the map owns the block from then on; it
 * returns 0) or
 * pmap_entry_free discards it unpublished. dtor, when not NULL, releases
 * what the value owns but never the value itself: the block is freed with
 * the entry, after the grace period that follows its replacement or
 * deletion. pmap_entry_key is the entry's own copy of the key (klen
 * bytes, then a NUL), as long-lived as the value: a value may point into
 * it instead of keeping the same text again. */
typedef struct pent pmap_entry;
pmap_entry *pmap_entry_new(const void *key, size_t klen, size_t vsize, void **val);
const char *pmap_entry_key(const pmap_entry *e);
int pmap_put_entry(pmap *m, pmap_entry *e, pmap_dtor dtor);
void pmap_entry_free(pmap_entry *e);
/* Writer: delete; 0 when it was there, -1 when not. */
int pmap_del(pmap *m, const void *key, size_t klen);
/* Reader (inside store_read_begin/_end): the value, or NULL. */
void *pmap_get(pmap *m, const void *key, size_t klen);
/* Writer: the same lookup in a read-side section of its own (a lookup
 * must not race with a background resize of the table); liburcu's read
 * locks nest, so the writer may also call it inside one (the topology
 * observer does). The value stays valid because only the writer retires
 * values. */
void *pmap_get_writer(pmap *m, const void *key, size_t klen);
size_t pmap_count(pmap *m);
/* Reader: call fn for every value until it returns non-zero (inside a
 * read-side section; values seen are those published at some instant). */
void pmap_foreach(pmap *m, int (*fn)(void *val, void *arg), void *arg);

/* An address-keyed map: one value per address (the store keeps one map
 * per use: the pod holding an IP, the services with a ready endpoint there
 * (PTR), the services with that cluster IP). Per address family a
 * directory of sorted shards, each two arrays: the values, then the
 * addresses — 12 bytes per IPv4 address, 24 per IPv6 one, plus a shard
 * header per 16 to 32 addresses (pmap.c). Same publication as pmap: one
 * writer sets, readers get inside store_read_begin/_end and see an
 * address's old or new value; a shard that gains or loses an address is
 * published anew, the old one freed after a grace period (as is the whole
 * directory when it doubles); while held (ipmap_hold), added addresses are
 * published together at the release. The values are not owned by the map: the
 * writer retires a value it replaces itself (pmap_defer). An address
 * whose value is NULL has no entry; an empty map is one small block. */
typedef struct ipmap ipmap;

ipmap *ipmap_new(void);
/* Destroy the map (no reader may be active); the values are the caller's. */
void ipmap_free(ipmap *m);
/* Writer: the value of addr (alen 4 or 16 bytes) becomes val (NULL
 * removes the address). 0, or -1 (alen wrong, out of memory: the map is
 * unchanged). */
int ipmap_set(ipmap *m, const void *addr, size_t alen, void *val);
/* Reader (inside store_read_begin/_end): the value, or NULL. */
void *ipmap_get(ipmap *m, const void *addr, size_t alen);
/* Writer, inside or outside a read-side section: the writer's own shards. */
void *ipmap_get_writer(ipmap *m, const void *addr, size_t alen);
/* Writer: the addresses held (the writer's view, held or not). */
size_t ipmap_count(ipmap *m);
/* Writer: a batch of changes (the store holds a map while it applies a
 * relist of the resource that feeds it). On 1, changes go to shards
 * private to the writer, each copied once with room to grow and then
 * edited in place, instead of a copy published per change;
 * ipmap_get_writer sees them at once. Readers keep the published shards,
 * in which the writer changes in place the value of every address they
 * already have (a removed address reads as absent), so a value the writer
 * retires after ipmap_set is never reachable from them, held or not;
 * addresses added while held appear to readers only at ipmap_hold(m, 0),
 * which publishes every changed shard once, sized exactly, and frees the
 * replaced ones after a grace period. Holding a held map changes nothing.
 * Release returns 1 when it published something, 0 when nothing changed,
 * -1 when memory ran out (the map stays held, its changes kept: the next
 * release tries again). */
int ipmap_hold(ipmap *m, int on);

/* RCU plumbing shared by the store. */
void pmap_read_lock(void);
void pmap_read_unlock(void);
/* 1 inside a read-side section on this thread (for assert()s): liburcu's
 * own per-thread check, called directly (no call through pmap.c). */
static inline int pmap_read_ongoing(void)
{
    return urcu_memb_read_ongoing();
}
void pmap_register_thread(void);
void pmap_unregister_thread(void);
/* Run fn(arg) after a grace period (from the writer). */
void pmap_defer(void (*fn)(void *), void *arg);
/* Wait until every deferred destruction queued so far has run. */
void pmap_barrier(void);

#endif
