/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cache — a front-end cache of whole replies, as CoreDNS's cache plugin,
 * that also keys answers on the client's topology.
 *
 * Serving a query under the cache's zones:
 *
 *   lookup ── hit (fresh) ──► rebuild the reply from the entry, every TTL
 *     │                       the remaining lifetime, AA set; maybe start a
 *     │                       prefetch in the background
 *     ├── hit (expired, within serve_stale) ──► immediate: serve with TTL 0
 *     │        (or RESPONSE_TTL) and refresh in the background; verify: ask
 *     │        the rest of the chain first, serve stale only if that fails
 *     └── miss ──► register a write hook, plugin_next(); the hook classifies
 *                  the reply (classify.c), sets every TTL to the cache
 *                  lifetime and stores it in the success or denial table
 *
 * Lookups check the denial table first, then success, like CoreDNS (a cached
 * SERVFAIL does not hide a valid positive entry). Both tables are shared by
 * all workers (table.c): a hit takes no lock and allocates nothing (the
 * reply is rebuilt into the request's pooled message).
 *
 * Background refreshes (prefetch, serve_stale) re-run the original query
 * bytes, as the same client address, through the plugins after the cache as
 * an internal request on the worker's event loop (req_new_internal); a
 * forwarder answers it asynchronously, so no worker ever waits for one. At
 * most one refresh per entry is in flight.
 *
 * Topology: a plugin whose answer depended on the client marks the request
 * (topo_mark, r->topo_dep = zone or node). Such a reply is stored as a
 * variant of its key under the client's value in that dimension
 * (topo_client_variant: "z:<zone>", "n:<node>", "?"), and a marker records
 * that the key is client-dependent. A lookup that finds the marker computes
 * the asking client's value and serves only the variant stored under it,
 * re-marking the request so the reply carries the right ECS scope. Answers
 * that did not depend on the client are shared by everyone. Without a
 * `topology` directive no answer is ever marked and the cache is CoreDNS's.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <event2/event.h>
#include "plugin/cache/cache.h"
#include "server/plugin.h"
#include "common/log.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "server/reqtopo.h"
#include "topology/topology.h"

#define REFRESH_HOLD_NS (30ull * 1000000000ull)

typedef struct cache {
    cache_cfg cfg;
    ctable pc, nc;                   /* success, denial */
    ctable deps;                     /* markers of client-dependent keys */
    struct instance *ins;
    _Atomic long inflight;           /* background refreshes running */
    struct {                         /* the instance registry's families */
        metric_family *entries, *requests, *hits, *misses, *prefetch, *drops, *stale, *evict;
    } m;
    struct server_block *blk;
    const topo_engine *topo;         /* the block's topology engine, or NULL */
} cache;

enum { MODE_MISS, MODE_PREFETCH, MODE_STALE, MODE_VERIFY };

/* A background (or verifying) refresh through the rest of the chain. */
typedef struct refresh {
    cache *c;
    const handler *h;
    dns_req *ir;                     /* the internal request */
    dns_req *client;                 /* verify: the request waiting for us */
    int mode;
    uint32_t hits;                   /* prefetch: frequency carried over */
    uint64_t hit_ns;
    int refreshed;                   /* the write hook accepted a reply */
    int in_start, finished, client_rc;
    int stale_dep, stale_ecs;
    ctable *tab;                     /* where the refreshed entry lives */
    const centry *old;               /* compared only, never dereferenced */
    ckey key;
    uint8_t lname[DNAME_MAX];
    char variant[CACHE_VARIANT_MAX];
} refresh;

/* The identity of the asked question. */
typedef struct qkey {
    uint8_t lname[DNAME_MAX];
    int do_bit, cd_bit, docd;
    ckey base;                       /* no variant */
    ckey var;                        /* with the client's variant */
    char variant[CACHE_VARIANT_MAX];
    int via_ecs;                     /* the variant came from the client's ECS */
} qkey;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- metrics ------------------------------------------------------------ */

static void metrics_init(cache *c, metrics_registry *reg)
{
    static const char *const l3[] = { "server", "zones", "view", NULL };
    static const char *const l4[] = { "server", "type", "zones", "view", NULL };
    c->m.entries = metrics_family(reg, "coredns_cache_entries",
                                  "The number of elements in the cache.", METRIC_GAUGE, l4,
                                  NULL, 0);
    c->m.requests = metrics_family(reg, "coredns_cache_requests_total",
                                   "The count of cache requests.", METRIC_COUNTER, l3, NULL, 0);
    c->m.hits = metrics_family(reg, "coredns_cache_hits_total", "The count of cache hits.",
                               METRIC_COUNTER, l4, NULL, 0);
    c->m.misses = metrics_family(reg, "coredns_cache_misses_total",
                                 "The count of cache misses. Deprecated, derive misses from "
                                 "cache hits/requests counters.", METRIC_COUNTER, l3, NULL, 0);
    c->m.prefetch = metrics_family(reg, "coredns_cache_prefetch_total",
                                   "The number of times the cache has prefetched a cached item.",
                                   METRIC_COUNTER, l3, NULL, 0);
    c->m.drops = metrics_family(reg, "coredns_cache_drops_total",
                                "The number responses that are not cached, because the reply "
                                "is malformed.", METRIC_COUNTER, l3, NULL, 0);
    c->m.stale = metrics_family(reg, "coredns_cache_served_stale_total",
                                "The number of requests served from stale cache entries.",
                                METRIC_COUNTER, l3, NULL, 0);
    c->m.evict = metrics_family(reg, "coredns_cache_evictions_total",
                                "The count of cache evictions.", METRIC_COUNTER, l4, NULL, 0);
}

static void count3(metric_family *f, const cache *c, const dns_req *r)
{
    const char *v[] = { r->server ? r->server : "", c->cfg.zones_label, "" };
    metrics_add(f, v, 1);
}

static void count4(metric_family *f, const cache *c, const dns_req *r, const char *type)
{
    const char *v[] = { r->server ? r->server : "", type, c->cfg.zones_label, "" };
    metrics_add(f, v, 1);
}

static void set_entries(cache *c, const dns_req *r)
{
    const char *v[] = { r->server ? r->server : "", "success", c->cfg.zones_label, "" };
    metrics_set(c->m.entries, v, (double)ctable_len(&c->pc));
    v[1] = "denial";
    metrics_set(c->m.entries, v, (double)ctable_len(&c->nc));
}

/* ---- keys --------------------------------------------------------------- */

static int in_list(uint8_t (*zones)[DNAME_MAX], size_t n, const uint8_t *name)
{
    for (size_t i = 0; i < n; i++)
        if (dname_is_sub(name, zones[i]))
            return 1;
    return 0;
}

static void key_fill(ckey *k, const qkey *q, const dns_msg *m, const char *v, size_t vlen)
{
    assert(k && q && m && vlen <= UINT8_MAX);     /* ckey.vlen; callers refuse longer variants */
    k->lname = q->lname;
    k->qlen = (uint8_t)dname_len(q->lname);
    k->qtype = m->qtype;
    k->qclass = m->qclass;
    k->docd = (uint8_t)q->docd;
    k->variant = v;
    k->vlen = (uint8_t)vlen;
    k->hash = cache_hash(q->lname, m->qtype, m->qclass, q->do_bit, q->cd_bit, v, vlen);
}

/* The key of the question of r (the query), without a variant. */
static void qkey_init(qkey *q, const dns_req *r)
{
    memcpy(q->lname, r->q.qname, dname_len(r->q.qname));
    dname_lower(q->lname);
    q->do_bit = r->q.edns.present && r->q.edns.do_bit;
    q->cd_bit = (r->q.flags & F_CD) != 0;
    q->docd = (q->do_bit ? CE_DO : 0) | (q->cd_bit ? CE_CD : 0);
    q->variant[0] = '\0';
    q->via_ecs = 0;
    key_fill(&q->base, q, &r->q, "", 0);
}

/* ---- lookup ------------------------------------------------------------- */

static int usable(const cache *c, const centry *e, uint64_t now)
{
    int64_t ttl = centry_ttl(e, now);
    if (ttl > 0)
        return 1;
    return c->cfg.stale_ns && -ttl < (int64_t)(c->cfg.stale_ns / 1000000000ull);
}

/* Denial first, then success; a SERVFAIL does not hide a valid success. */
static centry *find_in(cache *c, const ckey *k, uint64_t now, ctable **tab)
{
    centry *n = ctable_get(&c->nc, k), *p;
    if (n && usable(c, n, now)) {
        if (n->rcode == RC_SERVFAIL && (p = ctable_get(&c->pc, k)) && usable(c, p, now)) {
            *tab = &c->pc;
            return p;
        }
        *tab = &c->nc;
        return n;
    }
    p = ctable_get(&c->pc, k);
    if (p && usable(c, p, now)) {
        *tab = &c->pc;
        return p;
    }
    return NULL;
}

/* Inside the read lock. *dep: the dimension of a variant served (0 when
 * the entry is shared); *key: the identity the entry was found by. */
/* The client's variant of r in dimension dep (topo_client_variant). */
static size_t client_variant(const cache *c, const dns_req *r, int dep, char *out, size_t cap,
                             int *via_ecs)
{
    topo_client cl;
    req_topo_client(r, &cl);
    return topo_client_variant(c->topo, &cl, dep, out, cap, via_ecs);
}

static centry *find(cache *c, const dns_req *r, qkey *q, uint64_t now, ctable **tab, int *dep,
                    const ckey **key)
{
    *dep = 0;
    *key = &q->base;
    centry *e = find_in(c, &q->base, now, tab);
    if (e || ctable_len(&c->deps) == 0)
        return e;
    centry *mk = ctable_get(&c->deps, &q->base);
    if (!mk)
        return NULL;
    size_t vlen = client_variant(c, r, mk->dep, q->variant, sizeof q->variant, &q->via_ecs);
    if (vlen == 0 || vlen > 255)
        return NULL;
    key_fill(&q->var, q, &r->q, q->variant, vlen);
    e = find_in(c, &q->var, now, tab);
    if (e) {
        *dep = mk->dep;
        *key = &q->var;
    }
    return e;
}

/* Prefetch frequency (CoreDNS freq): hits with no gap longer than the
 * prefetch DURATION; refresh once AMOUNT is reached and the TTL is at most
 * PERCENTAGE of the original lifetime. */
static int should_prefetch(const cache *c, centry *e, uint64_t now, int64_t ttl)
{
    if (c->cfg.prefetch == 0)
        return 0;
    uint64_t last = atomic_load_explicit(&e->last_ns, memory_order_relaxed);
    uint32_t hits;
    if (last == 0 || last + c->cfg.prefetch_dur_ns < now) {
        atomic_store_explicit(&e->hits, 1, memory_order_relaxed);
        hits = 1;
    } else {
        hits = atomic_fetch_add_explicit(&e->hits, 1, memory_order_relaxed) + 1;
    }
    atomic_store_explicit(&e->last_ns, now, memory_order_relaxed);
    uint64_t thr = ((uint64_t)c->cfg.prefetch_pct * e->orig_ttl + 99) / 100;
    return hits >= c->cfg.prefetch && ttl <= (int64_t)thr;
}

/* At most one refresh per entry in flight. */
static int begin_refresh(centry *e, uint64_t now)
{
    uint64_t v = atomic_load(&e->refresh_ns);
    if (v > now)
        return 0;
    return atomic_compare_exchange_strong(&e->refresh_ns, &v, now + REFRESH_HOLD_NS);
}

/* ---- storing ------------------------------------------------------------ */

static int reply_matches(const dns_req *r)
{
    const dns_msg *m = &r->resp;
    return (m->flags & F_QR) && m->has_question && m->qtype == r->q.qtype &&
           dname_equal(m->qname, r->q.qname);
}

static void set_ttls(dns_msg *m, uint32_t ttl)
{
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        unsigned n = msg_count(m, sec);
        for (unsigned i = 0; i < n; i++)
            msg_set_ttl(m, sec, i, ttl);
    }
}

/* Record that the key of q depends on the client (dep), or that it no
 * longer does. */
static void track_dependency(cache *c, qkey *q, int dep)
{
    if (dep) {
        centry *mk = centry_marker(q->lname, q->base.qtype, q->base.qclass, q->docd,
                                   q->base.hash, dep);
        if (mk)
            ctable_put(&c->deps, mk);
        ctable_del(&c->pc, &q->base);
        ctable_del(&c->nc, &q->base);
    } else if (ctable_len(&c->deps)) {
        ctable_del(&c->deps, &q->base);
    }
}

static void put(cache *c, dns_req *r, cache_type t, uint32_t dur, const refresh *rf)
{
    int success = t == CT_NOERROR || t == CT_DELEGATION;
    const dns_msg *m = &r->resp;
    if (success ? in_list(c->cfg.pexcept, c->cfg.npexcept, m->qname)
                : in_list(c->cfg.nexcept, c->cfg.nnexcept, m->qname))
        return;
    qkey q;
    qkey_init(&q, r);
    size_t vlen = 0;
    if (r->topo_dep) {
        vlen = client_variant(c, r, r->topo_dep, q.variant, sizeof q.variant, NULL);
        if (vlen == 0 || vlen > 255)
            return;                     /* client-dependent, client unknown: keep nothing */
    }
    ckey k;
    key_fill(&k, &q, &r->q, q.variant, vlen);
    centry *e = centry_new(m, q.lname, q.docd, q.variant, vlen, k.hash, dur, mono_ns());
    if (!e)
        return;
    e->qtype = r->q.qtype;
    e->qclass = r->q.qclass;
    e->dep = r->topo_dep;
    e->own_case = r->owners_own_case;
    if (rf && rf->mode == MODE_PREFETCH) {
        atomic_store(&e->hits, rf->hits);
        atomic_store(&e->last_ns, rf->hit_ns);
    }
    if (ctable_put(success ? &c->pc : &c->nc, e))
        count4(c->m.evict, c, r, success ? "success" : "denial");
    if (rf && success && rf->mode != MODE_VERIFY)
        ctable_del(&c->nc, &k);         /* the refresh is the newest state */
    track_dependency(c, &q, r->topo_dep);
}

/* CoreDNS's cache ResponseWriter.WriteMsg on r->resp. */
static void store_reply(cache *c, dns_req *r, const refresh *rf)
{
    dns_msg *m = &r->resp;
    int do_bit = r->q.edns.present && r->q.edns.do_bit;
    int ad = (r->q.flags & F_AD) != 0;
    cache_type t = cache_classify(m, do_bit, (uint32_t)time(NULL));
    uint32_t dur = cache_duration(&c->cfg, m, t);
    set_ttls(m, dur);
    if (cache_cacheable(m, t) && dur > 0) {
        if (reply_matches(r))
            put(c, r, t, dur, rf);
        else
            count3(c->m.drops, c, r);
        set_entries(c, r);
    }
    if (!do_bit && !ad)
        m->flags &= (uint16_t)~F_AD;
}

static void on_write(dns_req *r, void *data)
{
    store_reply(data, r, NULL);
}

/* ---- background and verifying refreshes --------------------------------- */

static void refresh_free(refresh *rf)
{
    if (rf->ir)
        req_free(rf->ir);
    atomic_fetch_sub(&rf->c->inflight, 1);
    free(rf);
}

static void refresh_free_cb(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    refresh_free(arg);
}

static void refresh_write(dns_req *ir, void *data)
{
    refresh *rf = data;
    if (rf->mode == MODE_PREFETCH) {
        rf->refreshed = 1;
        store_reply(rf->c, ir, rf);
        return;
    }
    /* serve_stale: only a complete NOERROR or NXDOMAIN replaces the entry
     * (RFC 8767 section 4) */
    const dns_msg *m = &ir->resp;
    int do_bit = ir->q.edns.present && ir->q.edns.do_bit;
    cache_type t = cache_classify(m, do_bit, (uint32_t)time(NULL));
    if ((m->flags & F_TC) || !reply_matches(ir) || t == CT_OTHER || t == CT_META ||
        (m->rcode != RC_NOERROR && m->rcode != RC_NXDOMAIN))
        return;
    rf->refreshed = 1;
    store_reply(rf->c, ir, rf);
}

/* verify: answer the waiting client with the fresh reply or the stale one
 * already built in its r->resp. */
static void finish_client(refresh *rf, dns_req *ir)
{
    dns_req *r = rf->client;
    int rc;
    if (rf->refreshed && ir->written && msg_copy(&r->resp, &ir->resp) == 0) {
        r->resp.id = r->q.id;
        req_topo_mark(r, ir->topo_dep, ir->topo_ecs);
    } else {
        if (rf->refreshed) {             /* the copy failed: rebuild nothing, fail */
            msg_reply_to(&r->resp, &r->q);
            r->resp.rcode = RC_SERVFAIL;
        }
        count3(rf->c->m.stale, rf->c, r);
        req_topo_mark(r, rf->stale_dep, rf->stale_ecs);
    }
    rc = req_write(r, rf->h);
    if (rf->in_start)
        rf->client_rc = rc;
    else
        req_finish(r, rc);
}

static void refresh_done(dns_req *ir, int rcode, void *data)
{
    refresh *rf = data;
    (void)rcode;
    if (rf->tab)
        ctable_refresh_done(rf->tab, &rf->key, rf->old);
    if (rf->mode == MODE_VERIFY)
        finish_client(rf, ir);
    if (rf->in_start) {
        rf->finished = 1;
        return;
    }
    /* ir cannot be freed while req_finish() is still using it */
    static const struct timeval zero = { 0, 0 };
    struct event_base *base = req_event_base(ir);
    if (!base || event_base_once(base, -1, EV_TIMEOUT, refresh_free_cb, rf, &zero) < 0)
        log_error("plugin/cache: cannot release a finished refresh");
}

static refresh *refresh_new(cache *c, const handler *h, int mode, const ckey *k, ctable *tab,
                            const centry *old)
{
    refresh *rf = calloc(1, sizeof *rf);
    if (!rf)
        return NULL;
    atomic_fetch_add(&c->inflight, 1);
    rf->c = c;
    rf->h = h;
    rf->mode = mode;
    if (k) {
        memcpy(rf->lname, k->lname, k->qlen);
        memcpy(rf->variant, k->variant, k->vlen);
        rf->key = *k;
        rf->key.lname = rf->lname;
        rf->key.variant = rf->variant;
        rf->tab = tab;
        rf->old = old;
    }
    return rf;
}

/* Run the client's query again through the plugins after the cache. The
 * refresh may finish before this returns (rf->finished). 0, or -1. */
static int refresh_start(refresh *rf, dns_req *r)
{
    char peer[64];
    int port;
    req_peer_str(r, peer, sizeof peer, &port);
    dns_req *ir = req_new_internal(rf->c->ins, req_event_base(r), r->raw, r->rawlen, peer);
    if (!ir)
        return -1;
    rf->ir = ir;
    ir->block = r->block;
    ir->zone = r->zone;
    ir->server = r->server;
    ir->depth = r->depth;            /* a refresh of a chase is as deep */
    req_on_write(ir, refresh_write, rf);
    req_on_done(ir, refresh_done, rf);
    count3(rf->c->m.prefetch, rf->c, r);
    rf->in_start = 1;
    int rc = plugin_next(rf->h, ir);
    if (rc != REQ_ASYNC)
        req_finish(ir, rc);
    rf->in_start = 0;
    return 0;
}

/* Fire and forget (prefetch, serve_stale immediate). */
static void background_refresh(cache *c, const handler *h, dns_req *r, refresh *rf)
{
    (void)c;
    if (!rf)
        return;
    if (!r->raw || refresh_start(rf, r) < 0) {
        if (rf->tab)
            ctable_refresh_done(rf->tab, &rf->key, rf->old);
        refresh_free(rf);
        return;
    }
    (void)h;
    if (rf->finished)
        refresh_free(rf);
}

/* ---- serving ------------------------------------------------------------ */

static int miss(cache *c, const handler *h, dns_req *r)
{
    count3(c->m.misses, c, r);
    if (req_on_write(r, on_write, c) < 0)
        log_error("plugin/cache: too many write hooks; reply not cached");
    return plugin_next(h, r);
}

/* serve_stale verify: the rest of the chain first, the stale reply (already
 * in r->resp) if that does not give a usable answer. */
static int verify(cache *c, const handler *h, dns_req *r, refresh *rf)
{
    if (!rf || !r->raw || refresh_start(rf, r) < 0) {
        if (rf)
            refresh_free(rf);
        count3(c->m.stale, c, r);
        return req_write(r, h);
    }
    if (!rf->finished)
        return REQ_ASYNC;
    int rc = rf->client_rc;
    refresh_free(rf);
    return rc;
}

static uint32_t out_ttl(const cache *c, const centry *e, int64_t ttl, int stale)
{
    if (stale && c->cfg.stale_ttl > 0)
        return c->cfg.stale_ttl;
    if (c->cfg.keepttl)
        return e->orig_ttl;
    return stale ? 0 : (uint32_t)ttl;
}

static int cache_serve(const handler *h, dns_req *r)
{
    cache *c = h->inst;
    if (!r->q.has_question || !in_list(c->cfg.zones, c->cfg.nzones, r->q.qname))
        return plugin_next(h, r);
    qkey q;
    qkey_init(&q, r);
    uint64_t now = mono_ns();
    count3(c->m.requests, c, r);
    urcu_memb_read_lock();
    ctable *tab;
    int dep;
    const ckey *key;
    centry *e = find(c, r, &q, now, &tab, &dep, &key);
    if (!e) {
        urcu_memb_read_unlock();
        return miss(c, h, r);
    }
    count4(c->m.hits, c, r, tab == &c->pc ? "success" : "denial");
    int64_t ttl = centry_ttl(e, now);
    int stale = ttl <= 0;
    refresh *rf = NULL;
    if (stale && c->cfg.verify_stale) {
        rf = refresh_new(c, h, MODE_VERIFY, NULL, NULL, NULL);
        if (rf) {
            rf->client = r;
            rf->stale_dep = dep;
            rf->stale_ecs = q.via_ecs;
        }
    } else if (stale) {
        count3(c->m.stale, c, r);
        if (begin_refresh(e, now))
            rf = refresh_new(c, h, MODE_STALE, key, tab, e);
    } else if (should_prefetch(c, e, now, ttl) && begin_refresh(e, now)) {
        rf = refresh_new(c, h, MODE_PREFETCH, key, tab, e);
        if (rf) {
            rf->hits = atomic_load(&e->hits);
            rf->hit_ns = now;
        }
    }
    int ok = centry_to_msg(e, &r->resp, &r->q, out_ttl(c, e, ttl, stale));
    urcu_memb_read_unlock();
    if (ok < 0) {                        /* out of memory: let the chain answer */
        if (rf) {
            if (rf->tab)
                ctable_refresh_done(rf->tab, &rf->key, rf->old);
            refresh_free(rf);
        }
        return miss(c, h, r);
    }
    if (rf && rf->mode == MODE_VERIFY)
        return verify(c, h, r, rf);
    if (dep)
        req_topo_mark(r, dep, q.via_ecs);
    int rc = req_write(r, h);
    background_refresh(c, h, r, rf);
    return rc;
}

/* ---- lifecycle ---------------------------------------------------------- */

static void cache_free(cache *c)
{
    ctable_destroy(&c->pc);
    ctable_destroy(&c->nc);
    ctable_destroy(&c->deps);
    cache_cfg_free(&c->cfg);
    free(c);
}

static int cache_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    const char *bz[64];
    size_t nb = 0;
    for (size_t i = 0; ctx->blk && i < ctx->blk->nkeys && nb < 64; i++)
        bz[nb++] = ctx->blk->keys[i].zone;
    cache *c = calloc(1, sizeof *c);
    if (!c)
        return cf_err(d, "plugin/cache: out of memory");
    if (cache_parse(d, bz, nb, &c->cfg) < 0) {
        free(c);
        return -1;
    }
    if (ctable_init(&c->pc, c->cfg.pcap) < 0 || ctable_init(&c->nc, c->cfg.ncap) < 0 ||
        ctable_init(&c->deps, c->cfg.pcap + c->cfg.ncap) < 0) {
        cache_cfg_free(&c->cfg);
        free(c);
        return cf_err(d, "plugin/cache: out of memory");
    }
    metrics_init(c, instance_metrics(ctx->ins));
    c->ins = ctx->ins;
    c->blk = ctx->blk;
    *inst = c;
    return 0;
}

/* The block's topology engine, when it has one, was published at setup. */
static int cache_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    cache *c = inst;
    c->ins = ins;
    c->topo = block_value(c->blk, TOPO_ENGINE_KEY);
    return 0;
}

static void cache_destroy(void *inst)
{
    cache *c = inst;
    if (!c)
        return;
    long n = atomic_load(&c->inflight);
    if (n) {
        /* a refresh still refers to the cache: keep it rather than risk a
         * use after free */
        log_warning("plugin/cache: %ld background refreshes still running at shutdown", n);
        return;
    }
    cache_free(c);
}

const plugin_def plugin_cache = {
    .name = "cache",
    .flags = PLUGIN_ONCE,
    .setup = cache_setup,
    .start = cache_start,
    .destroy = cache_destroy,
    .serve = cache_serve,
};
