/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache.h — internals of the cache plugin, shared by its files and its unit
 * test (tests/unit/test_cache.c). Nothing outside src/plugin/cache uses this.
 *
 *   setup.c     the Corefile options (cache_parse) with CoreDNS's defaults
 *   classify.c  what a reply is (success, denial, ...), whether and for how
 *               long it may be cached, the key hash, entries built from a
 *               reply and replies rebuilt from an entry
 *   table.c     the shared table: 256 shards with random eviction; readers
 *               run inside an RCU read-side section and never lock, writers
 *               lock one shard; replaced entries are freed after a grace
 *               period (liburcu, the flavour the cluster store uses)
 *   cache.c     the plugin: lookup, store hook, prefetch, serve_stale,
 *               topology variants, metrics
 */
#ifndef TOPODNS_CACHE_H
#define TOPODNS_CACHE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <urcu/urcu-memb.h>
#include "corefile/corefile.h"
#include "wire/dname.h"
#include "wire/msg.h"

#define CACHE_SHARDS 256
#define CACHE_DEFAULT_CAP 10000
#define CACHE_MAX_TTL 3600          /* success */
#define CACHE_MAX_NTTL 1800         /* denial */
#define CACHE_MIN_TTL 5
#define CACHE_VARIANT_MAX 320

/* ---- configuration ------------------------------------------------------ */

typedef struct cache_cfg {
    uint8_t (*zones)[DNAME_MAX];     /* lower-case wire names */
    size_t nzones;
    char *zones_label;               /* zones joined with ",", as CoreDNS */
    unsigned long pcap, ncap;        /* capacities as written */
    uint32_t pttl, minpttl;          /* seconds */
    uint32_t nttl, minnttl;
    uint64_t failttl_ns;             /* servfail DURATION (0 = off) */
    unsigned long prefetch;          /* AMOUNT, 0 = off */
    uint64_t prefetch_dur_ns;        /* default 1m */
    unsigned prefetch_pct;           /* default 10 */
    uint64_t stale_ns;               /* serve_stale DURATION, 0 = off */
    int verify_stale;                /* REFRESH_MODE verify */
    uint32_t stale_ttl;              /* RESPONSE_TTL (immediate), default 0 */
    uint8_t (*pexcept)[DNAME_MAX];   /* disable success ZONES */
    size_t npexcept;
    uint8_t (*nexcept)[DNAME_MAX];   /* disable denial ZONES */
    size_t nnexcept;
    int keepttl;
} cache_cfg;

/* Parse every occurrence of the directive (only one is allowed) into c.
 * block_zones: the server block's zones in presentation form, used when the
 * directive names none. 0, or -1 with d->err set. */
int cache_parse(cf_disp *d, const char *const *block_zones, size_t nblock, cache_cfg *c);
void cache_cfg_free(cache_cfg *c);
/* Entries a table of this capacity holds: 256 shards of max(cap/256, 4). */
unsigned long cache_usable_cap(unsigned long cap);

/* ---- classification ----------------------------------------------------- */

/* CoreDNS's response.Typify, with NOERROR replies whose answer does not
 * answer the question but carry an SOA reclassified as NODATA. */
typedef enum {
    CT_NOERROR, CT_NODATA, CT_NXDOMAIN, CT_DELEGATION, CT_SERVERROR, CT_OTHER, CT_META
} cache_type;

/* now: Unix time (for RRSIG validity when do is set). */
cache_type cache_classify(const dns_msg *m, int do_bit, uint32_t now);
/* Whether a reply of this type may be cached at all (TC, errors, an
 * NXDOMAIN without SOA, an SOA-less NOERROR that does not answer). */
int cache_cacheable(const dns_msg *m, cache_type t);
/* The smallest TTL of the message, at most max (an SOA in a denial counts
 * as min(TTL, MINIMUM)); 5 s for types that are not answers or when there
 * are no records. */
uint32_t cache_min_ttl(const dns_msg *m, cache_type t, uint32_t max);
/* Cache lifetime in seconds (0: do not store) for a reply of type t. */
uint32_t cache_duration(const cache_cfg *c, const dns_msg *m, cache_type t);
/* 1 when the answer section answers (qname, qtype) following CNAMEs. */
int cache_answers(const dns_msg *m);
/* The key: lower-cased qname, qtype, qclass, DO, CD, and the topology
 * variant ("" for answers every client shares). */
uint64_t cache_hash(const uint8_t *lname, uint16_t qtype, uint16_t qclass, int do_bit,
                    int cd_bit, const char *variant, size_t vlen);

/* ---- entries -------------------------------------------------------------- */

typedef struct centry {
    struct rcu_head rcu;
    struct centry *_Atomic next;     /* chain in a shard bucket */
    uint64_t hash;
    uint64_t stored_ns;              /* monotonic clock when stored */
    uint32_t orig_ttl;               /* lifetime in seconds */
    uint16_t qtype, qclass;
    uint8_t docd;                    /* bit 0 DO, bit 1 CD */
    uint8_t dep;                     /* TOPO_DEP_* of a variant or marker */
    uint8_t own_case;                /* owners served as stored (dns_req.owners_own_case) */
    uint16_t rcode;
    uint16_t hflags;                 /* F_AD and F_RA of the stored reply */
    uint16_t nrr;
    _Atomic uint64_t last_ns;        /* prefetch frequency: last hit */
    _Atomic uint32_t hits;           /*   hits with no gap over DURATION */
    _Atomic uint64_t refresh_ns;     /* a refresh is in flight until then */
    uint8_t qlen, vlen;
    uint32_t dlen;
    uint8_t data[];                  /* qname (lower) | variant | records */
} centry;

#define CE_DO 1
#define CE_CD 2

/* Build an entry from a reply (records of all sections, TTLs not kept).
 * NULL on allocation failure. */
centry *centry_new(const dns_msg *m, const uint8_t *lname, int docd, const char *variant,
                   size_t vlen, uint64_t hash, uint32_t ttl, uint64_t now_ns);
/* A marker: "the answer for this key depends on the client in dimension dep". */
centry *centry_marker(const uint8_t *lname, uint16_t qtype, uint16_t qclass, int docd,
                      uint64_t hash, int dep);
/* Remaining seconds at now (may be negative once expired). */
int64_t centry_ttl(const centry *e, uint64_t now_ns);
/* Rebuild the reply to q in out with every TTL set to ttl. AA is set, RA
 * as stored, AD as stored only when the query had DO or AD. Owners equal to
 * the question name take the question's case unless e->own_case. 0, or -1. */
int centry_to_msg(const centry *e, dns_msg *out, const dns_msg *q, uint32_t ttl);
void centry_free(centry *e);

/* ---- table ---------------------------------------------------------------- */

typedef struct cshard {
    pthread_mutex_t mu;              /* writers only */
    centry *_Atomic *b;              /* bucket heads */
    unsigned nb;                     /* power of two */
    unsigned n, cap;
} cshard;

typedef struct ctable {
    cshard s[CACHE_SHARDS];
    _Atomic long n;
} ctable;

/* The identity an entry is found by. */
typedef struct ckey {
    uint64_t hash;
    const uint8_t *lname;            /* lower-case */
    uint8_t qlen;
    uint16_t qtype, qclass;
    uint8_t docd;
    const char *variant;
    uint8_t vlen;
} ckey;

int ctable_init(ctable *t, unsigned long cap);
/* Free every entry (no reader may be active). */
void ctable_destroy(ctable *t);
/* Reader, inside urcu_memb_read_lock(): the entry or NULL. */
centry *ctable_get(ctable *t, const ckey *k);
/* Writer: insert e (replacing an entry with the same identity). Returns 1
 * when another entry was evicted to make room, 0 otherwise. */
int ctable_put(ctable *t, centry *e);
/* Writer: remove the entry with this identity; 1 when there was one. */
int ctable_del(ctable *t, const ckey *k);
long ctable_len(ctable *t);
/* Writer: clear the refresh mark of the entry with identity k if it is
 * still e (looked up under the read lock; e is only compared). */
void ctable_refresh_done(ctable *t, const ckey *k, const centry *e);

#endif
