/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scratch.h — the per-query scratch containers of the kubernetes plugin
 * (scratch.c), the bottom layer: every other file of the plugin uses them,
 * they call nothing of the plugin.
 *
 *   karena  names and small objects that live until the reply is sent
 *   kvec    the entries a lookup found (lookup.c, apex.c)
 *   krrvec  the records an answer is built from (answer.c, ptr.c, xfr.c)
 *   kset    a dedup index into one krrvec
 *
 * Who writes, reads and frees: each container belongs to the one query (one
 * thread) that made it, zero-initialised (a zeroed container is empty and
 * needs no freeing). The query that owns it writes and reads it and frees it
 * with karena_free(), kvec_free(), krr_free(), kset_free() before its
 * reply is done (chase.c takes them over with the query, see
 * kube_chase_run()). Pointers into an arena are valid until karena_free();
 * pointers into a vector until its next push. Push and alloc functions
 * return 0 (or the memory) on success and -1 (NULL) when out of memory,
 * leaving the container as it was.
 *
 * Invariants, asserted in scratch.c: a vector's n <= cap, with storage
 * once cap > 0; a set's cap is 0 or a power of two, and the set is at most
 * half full (so a probe always ends at an empty slot).
 */
#ifndef TOPODNS_KUBERNETES_SCRATCH_H
#define TOPODNS_KUBERNETES_SCRATCH_H

#include <stddef.h>
#include <stdint.h>
#include "cluster/store.h"

/* ---- entries and the arena ---------------------------------------------- */
enum { KE_IP, KE_CNAME, KE_TXT };

typedef struct kentry {
    uint8_t kind;
    st_ip ip;
    int32_t port;
    const char *host;               /* CNAME target text / TXT text */
    const uint8_t *key;             /* the entry's domain (SRV target) */
    uint32_t ttl;
} kentry;

typedef struct kvec {
    kentry *v;
    size_t n, cap;
} kvec;

/* Per-query scratch: an arena for names that lives until the reply is sent. */
typedef struct karena {
    struct kblk *head;
} karena;

void *karena_alloc(karena *a, size_t n);
void karena_free(karena *a);
const uint8_t *karena_dname(karena *a, const uint8_t *dn);

int kvec_push(kvec *v, const kentry *e);
void kvec_free(kvec *v);

/* ---- records ------------------------------------------------------------- */
typedef struct krr {
    uint16_t type;
    const uint8_t *owner;
    uint32_t ttl;
    st_ip ip;
    uint16_t prio, weight, port;
    const uint8_t *target;
    const char *txt;
    const uint8_t *rdata;           /* raw rdata (records copied from upstream) */
    uint16_t rdlen;
    uint16_t chase;                 /* placeholder: the records of chase
                                     * chase - 1 go here (0: none) */
} krr;

typedef struct krrvec {
    krr *v;
    size_t n, cap;
} krrvec;

int krr_push(krrvec *v, const krr *rr);
void krr_free(krrvec *v);

/* Dedup sets (scratch.c). The dedup rules (A/AAAA by address, SRV by
 * (target, port), glue by (owner, address), NS and PTR by target) look a
 * record up among the records of the same list built so far: an
 * open-addressing table of indexes into that krrvec, keyed by a hash of
 * what the rule compares, so a large headless Service costs linear time,
 * not a scan of every earlier record. A set belongs to the lookup that
 * builds the list (one thread), lives on the heap and is freed by it with
 * kset_free() before the list goes. */
typedef struct kset {
    uint32_t *slot;                 /* index + 1 into the krrvec, 0: empty */
    uint32_t *hash;                 /* the hash of each slot's record */
    size_t cap, n;                  /* cap: a power of two (or 0) */
} kset;

typedef int (*kset_eq)(const krr *have, const krr *want);

/* Free a set (a zeroed set is empty and needs no freeing). */
void kset_free(kset *s);
/* FNV-1a over n octets, continuing from h; the hash of an address. */
uint32_t kset_mix(uint32_t h, const void *p, size_t n);
uint32_t kset_ip_hash(const st_ip *ip);
/* 1 when a record of v equal to want (eq) is in the set (its hash h). */
int kset_has(const kset *s, const krrvec *v, uint32_t h, kset_eq eq, const krr *want);
/* Add v->v[idx] with hash h. 0, or -1 out of memory. */
int kset_add(kset *s, uint32_t h, size_t idx);

#endif
