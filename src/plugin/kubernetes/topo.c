/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topo.c — the kubernetes plugin's side of topology: for a query on a
 * headless Service, locate the client once and ask the engine
 * (src/topology/) which ready endpoints it gets. Without a `topology`
 * directive in the block nothing here runs and answers are CoreDNS's.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/server.h"
#include "server/reqtopo.h"
#include "topology/topology.h"

void kube_topo_attach(kube *k)
{
    k->topo = block_value(k->blk, TOPO_ENGINE_KEY);
}

/* The client's value in dimension dep, as topo_client_variant() writes
 * it (the cache plugin's key), from a location; SIZE_MAX when it does not
 * fit (then nothing is memoised or looked up for the client). */
size_t kube_loc_variant(const topo_loc *loc, int dep, char *out, size_t cap)
{
    const char *v = NULL;
    char p = 0;
    if (!dep)
        v = "";
    else if (loc->via == LOC_UNKNOWN)
        v = "?";
    else {
        p = dep == TOPO_DEP_NODE ? 'n' : 'z';
        v = dep == TOPO_DEP_NODE ? loc->node_name : loc->zone;
        if (!v)
            v = "";
    }
    size_t o = 0;
    if (p && cap > 3) {
        out[o++] = p;
        out[o++] = ':';
    }
    size_t l = strlen(v);
    if (l > cap - 1 - o)
        return SIZE_MAX;
    memcpy(out + o, v, l);
    o += l;
    out[o] = '\0';
    return o;
}

static int query_families(uint16_t qtype)
{
    return qtype == T_A ? 1 : qtype == T_AAAA ? 2 : 3;
}

/* ---- the per-worker cache of decisions --------------------------------------
 * topo_select() walks every endpoint of the Service; for a large one that
 * is most of an answer's cost although the decision is the same for every
 * client of a zone (or node). So each worker keeps the decisions it made
 * (for every Service, so that every topology test runs through the
 * cache): keyed by the endpoints
 * (their address and version: compared, never dereferenced), the address
 * families, the store and topology versions loaded before the lookup
 * (q->sver/q->tver; any store write or Prefer change makes new ones) and
 * the client's variant in the dimension the decision depended on — found,
 * as the pre-rendered answers find it, through a marker entry per Service
 * that records that dimension. What an entry holds is what topo_select()
 * and the family rule below wrote: keep[] and the result to count.
 * k->topo_cache[w] is worker w's, touched by that worker's thread only
 * (the single-threaded tests' requests use 0 with rend_unthreaded), freed
 * by kube_topo_free() after the workers stopped; KTOPO_SLOTS entries
 * direct-mapped, each of eps->n + a few hundred octets. */
#define KTOPO_SLOTS 256

struct ktopo_entry {
    const st_endpoints *eps;
    uint64_t epsver, sver, tver;
    uint32_t hash;
    uint8_t fams, marker;           /* marker: the key without a variant */
    uint8_t has_keep;               /* keep[] holds the decision */
    topo_result res;
    size_t vl, n;
    char var[KREND_MAX_VARIANT];
    uint8_t keep[];
};

struct ktopo {
    struct ktopo_entry *slot[KTOPO_SLOTS];
};

void kube_topo_free(kube *k)
{
    for (int i = 0; i < KREND_MAX_WORKERS; i++) {
        struct ktopo *c = k->topo_cache[i];
        if (!c)
            continue;
        for (size_t s = 0; s < KTOPO_SLOTS; s++)
            free(c->slot[s]);
        free(c);
        k->topo_cache[i] = NULL;
    }
}

static struct ktopo *cache_of(kq *q)
{
    int w = req_worker_index(q->r);
    if (w < 0 && q->k->rend_unthreaded)
        w = 0;
    if (w < 0 || w >= KREND_MAX_WORKERS)
        return NULL;
    if (!q->k->topo_cache[w])
        q->k->topo_cache[w] = calloc(1, sizeof *q->k->topo_cache[w]);
    return q->k->topo_cache[w];
}

static uint32_t entry_hash(const st_endpoints *eps, int fams, const char *var, size_t vl)
{
    uint64_t h = ((uint64_t)(uintptr_t)eps ^ eps->version * 0x9e3779b97f4a7c15ull) + (uint64_t)fams;
    for (size_t i = 0; i < vl; i++)
        h = (h ^ (uint8_t)var[i]) * 0x100000001b3ull;
    return (uint32_t)(h ^ h >> 32);
}

static struct ktopo_entry *cache_find(struct ktopo *c, const kq *q, const st_endpoints *eps,
                                      int fams, const char *var, size_t vl, int marker)
{
    uint32_t h = entry_hash(eps, fams, var, vl);
    struct ktopo_entry *x = c->slot[h % KTOPO_SLOTS];
    if (!x || x->hash != h || x->eps != eps || x->epsver != eps->version || x->n != eps->n ||
        x->fams != fams || x->sver != q->sver || x->tver != q->tver || x->marker != marker ||
        x->vl != vl || memcmp(x->var, var, vl))
        return NULL;
    return x;
}

static void cache_put(struct ktopo *c, const kq *q, const st_endpoints *eps, int fams,
                      const char *var, size_t vl, int marker, const topo_result *res,
                      const uint8_t *keep)
{
    size_t n = keep ? eps->n : 0;
    struct ktopo_entry *x = malloc(sizeof *x + n);
    if (!x)
        return;
    x->eps = eps;
    x->epsver = eps->version;
    x->n = eps->n;
    x->sver = q->sver;
    x->tver = q->tver;
    x->hash = entry_hash(eps, fams, var, vl);
    x->fams = (uint8_t)fams;
    x->marker = (uint8_t)marker;
    x->has_keep = keep != NULL;
    x->res = *res;
    x->vl = vl;
    memcpy(x->var, var, vl);
    if (n)
        memcpy(x->keep, keep, n);
    struct ktopo_entry **s = &c->slot[x->hash % KTOPO_SLOTS];
    free(*s);
    *s = x;
}

/* The decision for this client from the cache, into keep: 1, or 0. */
static int cached(struct ktopo *c, kq *q, const st_endpoints *eps, int fams, uint8_t *keep,
                  topo_result *res)
{
    const struct ktopo_entry *mk = cache_find(c, q, eps, fams, "", 0, 1);
    if (!mk)
        return 0;
    const struct ktopo_entry *x = mk;
    if (!mk->has_keep) {
        char var[KREND_MAX_VARIANT];
        size_t vl = kube_loc_variant(&q->loc, mk->res.dep, var, sizeof var);
        x = vl == SIZE_MAX ? NULL : cache_find(c, q, eps, fams, var, vl, 0);
    }
    if (!x || !x->has_keep)
        return 0;
    memcpy(keep, x->keep, eps->n);
    *res = x->res;
    return 1;
}

static void remember(struct ktopo *c, kq *q, const st_endpoints *eps, int fams,
                     const uint8_t *keep, const topo_result *res)
{
    char var[KREND_MAX_VARIANT];
    size_t vl = kube_loc_variant(&q->loc, res->dep, var, sizeof var);
    if (vl == SIZE_MAX)
        return;
    if (!vl) {                      /* no client dimension: the marker is it */
        cache_put(c, q, eps, fams, "", 0, 1, res, keep);
        return;
    }
    uint32_t h0 = entry_hash(eps, fams, "", 0), h = entry_hash(eps, fams, var, vl);
    if (h0 % KTOPO_SLOTS == h % KTOPO_SLOTS)
        return;                     /* one would evict the other */
    cache_put(c, q, eps, fams, "", 0, 1, res, NULL);
    cache_put(c, q, eps, fams, var, vl, 0, res, keep);
}

const uint8_t *kube_topo_keep(kq *q, const st_service *svc, const st_endpoints *eps)
{
    topo_engine *e = q->k->topo;
    if (!e || svc->kind != SVC_HEADLESS || !eps || eps->n == 0)
        return NULL;
    uint8_t *keep = karena_alloc(&q->arena, eps->n);
    if (!keep)
        return NULL;
    if (!q->located) {
        topo_client cl;
        req_topo_client(q->r, &cl);
        topo_locate(e, &cl, &q->loc);
        q->located = 1;
    }
    int fams = query_families(q->r->q.qtype);
    topo_result res;
    struct ktopo *c = q->k->prerender ? cache_of(q) : NULL;
    if (!c || !cached(c, q, eps, fams, keep, &res)) {
        topo_select(e, svc, eps, &q->loc, fams, keep, &res, NULL);
        /* the other family is left to the qtype filter, untouched */
        for (size_t i = 0; i < eps->n; i++)
            if (eps->eps[i].ready && !((st_ep_family(&eps->eps[i]) == 4 ? 1 : 2) & fams))
                keep[i] = 1;
        if (c)
            remember(c, q, eps, fams, keep, &res);
    }
    if (res.dep > q->topo_dep)
        q->topo_dep = res.dep;
    if (q->topo_quiet)
        return keep;                /* counted by the first build already */
    topo_count(e, &res);
    q->topo_counts++;               /* a pre-rendered answer counts the same */
    q->topo_policy = (int)res.policy;
    q->topo_outcome = (int)res.outcome;
    return keep;
}
