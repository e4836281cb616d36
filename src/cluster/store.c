/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.c — see store.h.
 *
 * Published side (read by DNS workers, lock-free, pmap.c):
 *   svc     "ns\0name"     → the Service's writer record (wsvcrec), then
 *                            its st_service: store_service() skips the head
 *   eps     "ns\0service"  → merged (st_endpoints + the slice blobs it uses)
 *   podip   address        → st_pod: the best pod holding that IP (the
 *                            writer's own record, freed after a grace
 *                            period); stays empty without a pod watch
 *   ptr     address        → ip_svcs: the services with a ready endpoint
 *                            there (PTR, the endpoints locator)
 *   podip, ptr and svcip are address maps (ipmap, pmap.h: sorted shards,
 *   12 bytes per IPv4 address, 24 per IPv6 one). While a resource
 *   relists (relist_begin … relist_end) the map it feeds is held
 *   (EndpointSlices: ptr, Services: svcip, pods: podip, Nodes: naddr):
 *   the writer sees its changes at once, readers see the addresses the
 *   relist adds only at its end (changed and removed ones at once), as
 *   an informer's indexer is replaced at the end of its list.
 *   nodes   name           → st_node
 *   naddr   address        → node name (interned; an address map, pmap.h)
 *   nss     name           → st_namespace
 *   svcip   address        → ip_svcs: services with that cluster IP
 *   simp    "ns\0name"     → st_svcimport
 *   ranges[ST_RANGE_*]     address range → node name (prefix.h): Node
 *                          podCIDRs (owner: the Node), CiliumNode podCIDRs,
 *                          BlockAffinity cidr (owner: that object)
 *   eps also holds the multicluster slices of a service, under the key
 *   "\1ns\0service" (merged views like any other, never in the PTR slot).
 *
 * Writer side (API thread only): one record per object name (wtab, chained
 * tables of compact records; a pod's record is the block that also holds
 * its published st_pod, see wpod; a Service's is the head of its svc
 * entry's value, see wsvcrec), with a relist generation, plus what is
 * needed to rebuild the published entries: the slices of each service
 * (wstab, chained like wtab), the pods of an IP that several pods hold
 * (uthash), the addresses of each node. The
 * IP → services lists and the IP → pod map have no writer-side copy: the
 * writer reads what it published. Memory per object matters here (150,000
 * pods): see docs/benchmarks.md.
 */
#include <assert.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include <uthash.h>
#include "cluster/decode.h"
#include "cluster/pmap.h"
#include "cluster/prefix.h"
#include "common/log.h"
#include "common/vec.h"

enum { R_SVC, R_SLICE, R_POD, R_NODE, R_NS, R_SIMP, R_CILIUM, R_CALICO, R_COUNT };
static const char *const resource_names[R_COUNT] = {
    "services", "endpointslices", "pods", "nodes", "namespaces", "serviceimports",
    "ciliumnodes", "blockaffinities",
};
/* The range source each resource feeds, -1 for none. */
static const int resource_range[R_COUNT] = {
    -1, -1, -1, ST_RANGE_PODCIDR, -1, -1, ST_RANGE_CILIUM, ST_RANGE_CALICO,
};
static const char *const range_names[ST_RANGE_COUNT] = { "podcidr", "cilium", "calico" };

/* Conflicts already reported (address, range source): each is logged and
 * counted once; past CONFLICTS_MAX of them no new one is tracked. */
enum { CONFLICTS_MAX = 65536 };
typedef struct wconflict {
    UT_hash_handle hh;
    struct { st_ip ip; uint8_t source; } key;
} wconflict;

/* A writer-side record: one per object but Services (wsvcrec) and pods
 * (wpod), keyed (ns, name),
 * in its resource's wtab: 30 bytes and the name (wrec_name). An
 * EndpointSlice's record keeps no name of its own: it is its current
 * blob's (a 48-byte malloc chunk whatever the name). */
typedef struct wrec {
    struct wrec *next;              /* chain of its wtab bucket */
    const char *ns;                 /* interned; "" for nodes and namespaces */
    union {                         /* by resource */
        slice_blob *slice;          /* R_SLICE: the current blob */
        st_ip *addrs;               /* R_NODE: indexed addresses (naddrs
                                     * of them, up to 8) */
    };
    uint32_t gen;
    uint8_t naddrs;
    uint8_t in_slice : 1;           /* R_SLICE: the name is slice->pub.name
                                     * (name[] is empty) */
    char name[];
} wrec;

static const char *wrec_name(const wrec *w)
{
    assert(!w->in_slice || (w->slice && !w->name[0]));
    return w->in_slice ? w->slice->pub.name : w->name;
}

/* The records of one resource: a chained hash table (API thread only),
 * at most two records per bucket on average. */
typedef struct wtab {
    wrec **b;
    size_t nb, n;
} wtab;

/* Slices of one service, writer side, in the store's wstab: one 64-byte
 * malloc chunk whatever the names' length (they are the slices' interned
 * strings). Its slices are wsvc_slices(ws)[0 .. n). */
typedef struct wsvc {
    struct wsvc *next;              /* chain of its wstab bucket */
    union {
        slice_blob *one;            /* while cap is 1: the slots are &one */
        slice_blob **many;          /* cap > 1: malloc'd, cap slots */
    } sl;
    const struct merged *published;
    struct ip_svcs *self;           /* the PTR list "this service only",
                                     * shared by its IPs (refcounted) */
    const char *ns, *service;       /* interned (the store's string table) */
    uint32_t n;
    uint32_t cap : 31;
    uint32_t mcs : 1;               /* multicluster slices: key "\1ns\0service" */
} wsvc;
_Static_assert(sizeof(void *) != 8 || sizeof(wsvc) == 56, "a wsvc is a 64-byte malloc chunk");

static slice_blob **wsvc_slices(wsvc *ws)
{
    assert(ws->cap >= 1 && ws->n <= ws->cap);
    return ws->cap == 1 ? &ws->sl.one : ws->sl.many;
}

/* The wsvc records by key: a chained table like wtab (API thread only). */
typedef struct wstab {
    wsvc **b;
    size_t nb, n;
} wstab;

/* A published view: the blobs it holds a reference to follow the struct
 * (one allocation with its eps map entry, pmap_entry_new: 96 bytes for a
 * Service of one slice and a key of up to 21 bytes). With several blobs
 * pub.eps is the view's own copy of their endpoints (freed with it); with
 * one it is that blob's array. */
typedef struct merged {
    st_endpoints pub;               /* first: readers get &pub */
    /* Large views only (more than BY_IP_MIN endpoints): the indexes of the
     * endpoints that are ready or have a nodeName, sorted by address then
     * slice order. One index for both readers: PTR (store_endpoints_by_ip
     * takes the ready ones of an address) and the locator's `endpoints`
     * source (store_endpoint_node takes the first with a nodeName). NULL
     * otherwise (a pass over a few endpoints costs less). */
    uint32_t *by_ip;
    uint32_t nby_ip;
    uint32_t nblobs;
    slice_blob *blobs[];
} merged;
_Static_assert(sizeof(void *) != 8 || sizeof(merged) == 40, "a view of one slice is 48 bytes");

enum { BY_IP_MIN = 32 };

typedef struct ip_svcs {
    size_t n;
    const char **ns, **name;
    atomic_int refs;                /* shared one-service lists only */
} ip_svcs;

/* The writer record that heads a published block: the chain of its
 * btab bucket and its relist generation, then the published object, a
 * pod's (wpod, see the pods section) or a Service's (wsvcrec, see the
 * services section). A change of the object makes a new block, which takes
 * the old one's place in the table (btab_unlink); the old block stays
 * valid until the map it is published in retires it. */
typedef struct wblk {
    struct wblk *next;              /* chain of its btab bucket */
    uint32_t gen;
} wblk;
typedef wblk wpod;
typedef wblk wsvcrec;

static st_pod *wpod_pod(const wpod *w)
{
    return (st_pod *)(w + 1);
}

static st_service *wsr_svc(const wsvcrec *r)
{
    return (st_service *)(r + 1);
}
_Static_assert(sizeof(wblk) % _Alignof(st_service) == 0 && sizeof(wblk) % _Alignof(st_pod) == 0,
               "the object follows its head");

/* Blocks by (ns, name), writer side: the same chained table as wtab, of
 * wblk heads; pods' (svc 0) or Services' (svc 1). Only the writer looks
 * them up by name: up to four per bucket (0.5 MB less at 150,000 pods). */
typedef struct btab {
    wblk **b;
    size_t nb, n;
    int svc;
} btab;

/* IP → pods, writer side, for IPs held by two or more answering pods. */
typedef struct wpodip {
    UT_hash_handle hh;
    st_ip ip;
    wpod **pods;
    size_t n;
} wpodip;

struct store {
    store_opts opts;
    pmap *svc, *eps, *nodes, *nss, *simp;
    ipmap *podip, *ptr, *svcip;     /* address → pod, PTR list, cluster-IP list */
    ipmap *naddr;                   /* a Node's address → its name */
    pfx_index *ranges[ST_RANGE_COUNT];
    wconflict *conflicts;           /* reported endpoint/range conflicts */
    size_t nconflicts;
    wtab recs[R_COUNT];             /* every resource but services and pods */
    btab svcrecs;                   /* services (svc 1) */
    btab pods;
    uint32_t gen[R_COUNT];
    int relisting[R_COUNT];
    wstab svcslices;
    wpodip *podips;
    _Atomic uint32_t serial;
    _Atomic uint64_t nodes_version;
    _Atomic uint64_t changes;       /* store_version(): every write */
    uint64_t next_version;          /* writer: versions of the views */
    strtab *strs;                   /* the store's string table */
};

/* ---- small helpers ---------------------------------------------------- */

static size_t nskey(char *buf, size_t cap, const char *ns, const char *name)
{
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 1 > cap)
        return 0;
    memcpy(buf, ns, a);
    buf[a] = '\0';
    memcpy(buf + a + 1, name, b);
    return a + 1 + b;
}

static void bump(store *s)
{
    atomic_store(&s->serial, (uint32_t)time(NULL));
}

/* After every write the readers may see (store_version): released after
 * the maps were updated, so a reader that loads the new value sees them. */
static void changed(store *s)
{
    atomic_fetch_add_explicit(&s->changes, 1, memory_order_release);
}

static uint32_t rec_hash(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;       /* FNV-1a over ns, '/', name */
    for (const char *p = ns; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *p = name; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h;
}

static wrec **wtab_slot(const wtab *t, const char *ns, const char *name)
{
    if (!t->nb)
        return NULL;
    wrec **pp = &t->b[rec_hash(ns, name) & (t->nb - 1)];
    while (*pp && (strcmp(wrec_name(*pp), name) != 0 || strcmp((*pp)->ns, ns) != 0))
        pp = &(*pp)->next;
    return pp;
}

static int wtab_add(wtab *t, wrec *w)
{
    if (t->n >= 2 * t->nb) {        /* grow: twice the buckets, rehash */
        size_t nb = t->nb ? t->nb * 2 : 64;
        wrec **b = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < t->nb; i++)
            for (wrec *e = t->b[i], *next; e; e = next) {
                next = e->next;
                size_t k = rec_hash(e->ns, wrec_name(e)) & (nb - 1);
                e->next = b[k];
                b[k] = e;
            }
        free(t->b);
        t->b = b;
        t->nb = nb;
    }
    size_t k = rec_hash(w->ns, wrec_name(w)) & (t->nb - 1);
    w->next = t->b[k];
    t->b[k] = w;
    t->n++;
    return 0;
}

static void wtab_del(wtab *t, wrec *w)
{
    wrec **pp = wtab_slot(t, w->ns, wrec_name(w));
    while (pp && *pp && *pp != w)
        pp = &(*pp)->next;
    if (pp && *pp) {
        *pp = w->next;
        t->n--;
    }
}

static wrec *rec_get(store *s, int r, const char *ns, const char *name, int create)
{
    wrec **pp = wtab_slot(&s->recs[r], ns, name);
    wrec *w = pp ? *pp : NULL;
    if (!w && create) {
        size_t n = strlen(name);
        const char *ins = strtab_intern(s->strs, ns);
        if (!ins || !(w = calloc(1, offsetof(wrec, name) + n + 1)))
            return NULL;
        w->ns = ins;
        memcpy(w->name, name, n + 1);
        if (wtab_add(&s->recs[r], w) < 0) {
            free(w);
            return NULL;
        }
    }
    if (w && create)
        w->gen = s->gen[r];
    return w;
}

static void logskip(const char *res, const cJSON *obj, const char *why)
{
    log_warning("plugin/kubernetes: skipping %s %s/%s: %s", res, decode_obj_ns(obj), decode_obj_name(obj), why);
}

/* ---- IP → services indexes -------------------------------------------- */

/* The published list is the index itself (no writer-side copy): a list is
 * one block, the header, then ns[n], name[n], then the names' text, and a
 * change publishes a new block. Each (IP, service) pair is in it once.
 * Every list is reference counted: a one-service list is shared by the
 * IPs of that service and by the service itself, any other has one
 * holder. The last holder frees it (an index after its grace period). */
static void ip_svcs_unref(void *p)
{
    ip_svcs *l = p;
    if (l && atomic_fetch_sub(&l->refs, 1) == 1)
        free(l);
}

/* The two IP → services indexes, address maps whose lists the store
 * retires: cluster IPs (svcip) and ready endpoint IPs (ptr). */
enum { IDX_CLUSTERIP, IDX_ENDPOINT };

static size_t ip_alen(const st_ip *ip)
{
    return ip->family == 4 ? 4 : 16;
}

static ipmap *idx_map(store *s, int idx)
{
    return idx == IDX_CLUSTERIP ? s->svcip : s->ptr;
}

static const ip_svcs *idx_get(store *s, int idx, const st_ip *ip)
{
    return ipmap_get_writer(idx_map(s, idx), ip->addr, ip_alen(ip));
}

/* Publish l (holding one reference the index takes over) at ip, or remove
 * the list there (l NULL); the old list is released after a grace period. */
static void idx_put(store *s, int idx, const st_ip *ip, ip_svcs *l)
{
    ipmap *m = idx_map(s, idx);
    ip_svcs *old = ipmap_get_writer(m, ip->addr, ip_alen(ip));
    if (ipmap_set(m, ip->addr, ip_alen(ip), l) < 0) {
        ip_svcs_unref(l);           /* out of memory: the old list stays */
        return;
    }
    if (old && old != l)
        pmap_defer(ip_svcs_unref, old);
}

/* Add (add=1) or remove (add=0) the service key "ns\0name" (klen bytes,
 * not terminated) at ip. */
static void ipidx_set(store *s, int idx, const st_ip *ip, const char *key, size_t klen, int add,
                      ip_svcs *shared)
{
    const ip_svcs *cur = idx_get(s, idx, ip);
    size_t nsl = strnlen(key, klen);
    if (nsl >= klen)
        return;
    const char *nm = key + nsl + 1;
    size_t nml = klen - nsl - 1;
    size_t n = cur ? cur->n : 0, at = n, text = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(cur->name[i]);
        if (at == n && l == nml && memcmp(cur->name[i], nm, nml) == 0 &&
            strlen(cur->ns[i]) == nsl && memcmp(cur->ns[i], key, nsl) == 0)
            at = i;
        text += l + 1;
    }
    if ((at < n) == add)
        return;                     /* already so */
    size_t nn = add ? n + 1 : n - 1;
    if (nn == 0) {
        idx_put(s, idx, ip, NULL);
        return;
    }
    if (n == 0 && shared) {         /* the common case: one service per IP */
        atomic_fetch_add(&shared->refs, 1);
        idx_put(s, idx, ip, shared);
        return;
    }
    text += add ? nml + 1 : 0;
    ip_svcs *l = malloc(sizeof *l + 2 * nn * sizeof(char *) + text);
    if (!l)
        return;
    l->ns = (const char **)(l + 1);
    l->name = l->ns + nn;
    char *t = (char *)(l->name + nn);
    l->n = 0;
    atomic_init(&l->refs, 1);
    for (size_t i = 0; i < n; i++) {
        if (i == at)
            continue;
        size_t len = strlen(cur->name[i]) + 1;
        l->ns[l->n] = cur->ns[i];
        l->name[l->n++] = memcpy(t, cur->name[i], len);
        t += len;
    }
    if (add) {
        l->ns[l->n] = strtab_intern(s->strs, key);  /* key's ns part is terminated */
        l->name[l->n++] = t;
        memcpy(t, nm, nml);
        t[nml] = '\0';
    }
    idx_put(s, idx, ip, l);
}

static int ip_cmp(const void *a, const void *b)
{
    return memcmp(a, b, sizeof(st_ip));
}

/* Move a service's entries from the IPs in old[] to those in new[] (both
 * sorted, without duplicates): IPs in both are left alone. */
static void ipidx_move(store *s, int idx, const st_ip *old, size_t no, const st_ip *new,
                       size_t nn, const char *key, size_t klen, ip_svcs *shared)
{
    size_t i = 0, j = 0;
    while (i < no || j < nn) {
        int c = i == no ? 1 : j == nn ? -1 : ip_cmp(&old[i], &new[j]);
        if (c < 0)
            ipidx_set(s, idx, &old[i++], key, klen, 0, NULL);
        else if (c > 0)
            ipidx_set(s, idx, &new[j++], key, klen, 1, shared);
        else
            i++, j++;
    }
}

/* Sort and deduplicate n IPs in place; the new count. */
static size_t ips_unique(st_ip *v, size_t n)
{
    if (n < 2)
        return n;
    qsort(v, n, sizeof *v, ip_cmp);
    size_t k = 1;
    for (size_t i = 1; i < n; i++)
        if (ip_cmp(&v[i], &v[k - 1]) != 0)
            v[k++] = v[i];
    return k;
}

/* ---- published blocks with their writer record (btab) ---------------- */

/* The ns and name of w's object (both begin with them). */
static const char *blk_ns(const btab *t, const wblk *w)
{
    return t->svc ? wsr_svc(w)->ns : wpod_pod(w)->ns;
}

static const char *blk_name(const btab *t, const wblk *w)
{
    return t->svc ? wsr_svc(w)->name : wpod_pod(w)->name;
}

static wblk **btab_slot(const btab *t, const char *ns, const char *name)
{
    if (!t->nb)
        return NULL;
    wblk **pp = &t->b[rec_hash(ns, name) & (t->nb - 1)];
    while (*pp && (strcmp(blk_name(t, *pp), name) != 0 || strcmp(blk_ns(t, *pp), ns) != 0))
        pp = &(*pp)->next;
    return pp;
}

static wblk *btab_get(const btab *t, const char *ns, const char *name)
{
    wblk **pp = btab_slot(t, ns, name);
    return pp ? *pp : NULL;
}

static int btab_add(btab *t, wblk *w)
{
    if (t->n >= 4 * t->nb) {        /* grow: twice the buckets, rehash */
        size_t nb = t->nb ? t->nb * 2 : 64;
        wblk **b = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < t->nb; i++)
            for (wblk *e = t->b[i], *next; e; e = next) {
                next = e->next;
                size_t k = rec_hash(blk_ns(t, e), blk_name(t, e)) & (nb - 1);
                e->next = b[k];
                b[k] = e;
            }
        free(t->b);
        t->b = b;
        t->nb = nb;
    }
    size_t k = rec_hash(blk_ns(t, w), blk_name(t, w)) & (t->nb - 1);
    w->next = t->b[k];
    t->b[k] = w;
    t->n++;
    return 0;
}

/* Unlink w; with nw, put nw (same ns and name) in its place. */
static void btab_unlink(btab *t, wblk *w, wblk *nw)
{
    wblk **pp = btab_slot(t, blk_ns(t, w), blk_name(t, w));
    while (pp && *pp && *pp != w)
        pp = &(*pp)->next;
    if (!pp || !*pp)
        return;
    if (nw) {
        nw->next = w->next;
        *pp = nw;
    } else {
        *pp = w->next;
        t->n--;
    }
}

/* ---- services --------------------------------------------------------- */

static wsvc **wstab_slot(const wstab *t, const char *ns, const char *service, int mcs);
static ip_svcs *wsvc_self(store *s, wsvc *ws);

/* A one-service list naming ns and name, both interned (they outlive every
 * list: no copy of the text), holding one reference; NULL when memory runs
 * out. */
static ip_svcs *svc_list_new(const char *ns, const char *name)
{
    ip_svcs *l = name ? malloc(sizeof *l + 2 * sizeof(char *)) : NULL;
    if (!l)
        return NULL;
    l->n = 1;
    l->ns = (const char **)(l + 1);
    l->name = l->ns + 1;
    l->ns[0] = ns;
    l->name[0] = name;
    atomic_init(&l->refs, 1);
    return l;
}

/* decode_service_into's allocator: the Service's block is the value space
 * of its own svc map entry (one malloc chunk for both). */
typedef struct svc_alloc {
    const char *key;
    size_t kl;
    pmap_entry *e;
    wsvcrec *rec;                   /* the head of the entry's value */
} svc_alloc;

/* A Service's writer record is the head of its svc map entry's value
 * (wblk): no record of its own (10,000 malloc chunks fewer); store_service()
 * skips the head, readers never read it. The Service's name, namespace and
 * cluster IPs are read from its st_service. */

/* The cluster IPs of svc, sorted and unique, into out[8]: how many. */
static size_t svc_ips(const st_service *svc, st_ip *out)
{
    size_t n = 0;
    for (uint8_t i = 0; i < svc->n_cluster_ips && n < 8; i++)
        out[n++] = svc->cluster_ips[i];
    return ips_unique(out, n);
}

static void *svc_entry_alloc(void *arg, size_t size)
{
    svc_alloc *a = arg;
    void *val;
    a->e = pmap_entry_new(a->key, a->kl, sizeof(wsvcrec) + size, &val);
    a->rec = val;
    return val ? wsr_svc(val) : NULL;
}

int store_upsert_service(store *s, const cJSON *obj)
{
    const char *why = NULL;
    char key[512];
    size_t kl = nskey(key, sizeof key, decode_obj_ns(obj), decode_obj_name(obj));
    svc_alloc a = { key, kl, NULL, NULL };
    st_service *svc = kl ? decode_service_into(s->strs, obj, &why, DECODE_SVC_NO_NAME,
                                               svc_entry_alloc, &a) : NULL;
    if (!svc) {
        logskip("service", obj, kl ? why : "metadata.namespace or metadata.name too long");
        return -1;
    }
    /* the name's text is in the entry's key ("ns\0name", then a NUL) */
    assert(a.e && svc == wsr_svc(a.rec) && !svc->name && strlen(svc->ns) < kl &&
           memcmp(key, svc->ns, strlen(svc->ns)) == 0);
    svc->name = pmap_entry_key(a.e) + strlen(svc->ns) + 1;
    wsvcrec *r = a.rec, *old = btab_get(&s->svcrecs, svc->ns, svc->name);
    r->gen = s->gen[R_SVC];
    if (old)
        btab_unlink(&s->svcrecs, old, r);
    else if (btab_add(&s->svcrecs, r) < 0) {
        pmap_entry_free(a.e);
        return -1;
    }
    st_ip was[8], now[8];
    size_t no = old ? svc_ips(wsr_svc(old), was) : 0, n = svc_ips(svc, now);
    /* a cluster IP held by this service only shares the one-service list
     * of its endpoints (wsvc_self), when its slices came first; else a new
     * one naming the interned strings (its slices, when they come, intern
     * the same name and take that list: wsvc_self) */
    wsvc *ws = s->svcslices.nb ? *wstab_slot(&s->svcslices, svc->ns, svc->name, 0) : NULL;
    ip_svcs *own = ws ? wsvc_self(s, ws) : NULL;
    if (!ws && n > 0)
        own = svc_list_new(svc->ns, strtab_intern(s->strs, svc->name));
    ipidx_move(s, IDX_CLUSTERIP, was, no, now, n, key, kl, own);
    if (!ws)
        ip_svcs_unref(own);         /* the indexes took their own references */
    pmap_put_entry(s->svc, a.e, NULL);   /* retires old's block; owns nothing apart */
    bump(s);
    changed(s);
    return 0;
}

/* Everything read from r's block before pmap_del retires it. */
static void remove_service(store *s, wsvcrec *r)
{
    const st_service *svc = wsr_svc(r);
    char key[512];
    size_t kl = nskey(key, sizeof key, svc->ns, svc->name);
    st_ip was[8];
    size_t no = svc_ips(svc, was);
    ipidx_move(s, IDX_CLUSTERIP, was, no, NULL, 0, key, kl, NULL);
    btab_unlink(&s->svcrecs, r, NULL);
    pmap_del(s->svc, key, kl);
    bump(s);
}

/* ---- EndpointSlices --------------------------------------------------- */

/* What a view owns apart from itself (the view is the value space of its
 * eps map entry: pmap_entry_new, freed with the entry). */
static void merged_release(void *p)
{
    merged *m = p;
    if (!m)
        return;
    for (size_t i = 0; i < m->nblobs; i++)
        decode_slice_unref(m->blobs[i]);
    if (m->nblobs > 1)
        free((void *)m->pub.eps);
    free(m->by_ip);
}

typedef struct ip_idx {
    st_ip ip;
    uint32_t i;
} ip_idx;

static int ip_idx_cmp(const void *a, const void *b)
{
    const ip_idx *x = a, *y = b;
    int c = memcmp(&x->ip, &y->ip, sizeof x->ip);
    return c ? c : (x->i > y->i) - (x->i < y->i);   /* slice order among equals */
}

/* m->by_ip for a large view; without memory it stays NULL (a pass then). */
static void index_by_ip(merged *m)
{
    if (m->pub.n <= BY_IP_MIN || m->pub.n > UINT32_MAX)
        return;
    ip_idx *t = malloc(m->pub.n * sizeof *t);
    size_t n = 0;
    for (size_t i = 0; t && i < m->pub.n; i++)
        if (m->pub.eps[i].node || m->pub.eps[i].ready)
            t[n++] = (ip_idx){ st_ep_ip(&m->pub.eps[i]), (uint32_t)i };
    if (t && n && (m->by_ip = malloc(n * sizeof *m->by_ip))) {
        qsort(t, n, sizeof *t, ip_idx_cmp);
        for (size_t i = 0; i < n; i++)
            m->by_ip[i] = t[i].i;
        m->nby_ip = n;
    }
    free(t);
}

/* The ready addresses of a merged view, sorted and unique (malloc'd). */
static st_ip *ready_ips(const merged *m, size_t *n)
{
    *n = 0;
    if (!m || m->pub.n == 0)
        return NULL;
    st_ip *v = malloc(m->pub.n * sizeof *v);
    if (!v)
        return NULL;
    for (size_t i = 0; i < m->pub.n; i++)
        if (m->pub.eps[i].ready)
            v[(*n)++] = st_ep_ip(&m->pub.eps[i]);
    *n = ips_unique(v, *n);
    return v;
}

/* The map key of ws's view, "ns\0service" ("\1ns\0service" for
 * multicluster slices), in buf (512 bytes): its length, 0 when too long. */
static size_t wsvc_key(const wsvc *ws, char *buf)
{
    buf[0] = 1;
    size_t kl = nskey(buf + ws->mcs, 512 - 1, ws->ns, ws->service);
    return kl ? kl + ws->mcs : 0;
}

/* The one-service list of ws (made on first use): the list its Service's
 * first cluster IP already has when that IP is its alone (the Service came
 * before its slices), else a new one naming the interned strings of ws;
 * the cluster IPs of a Service that comes later take it too
 * (store_upsert_service). */
static ip_svcs *wsvc_self(store *s, wsvc *ws)
{
    if (ws->self)
        return ws->self;
    const wsvcrec *r = btab_get(&s->svcrecs, ws->ns, ws->service);
    const st_service *svc = r ? wsr_svc(r) : NULL;
    ip_svcs *c = svc && svc->n_cluster_ips ? (ip_svcs *)idx_get(s, IDX_CLUSTERIP, &svc->cluster_ips[0])
                                           : NULL;
    if (c && c->n == 1 && strcmp(c->name[0], ws->service) == 0 && strcmp(c->ns[0], ws->ns) == 0) {
        atomic_fetch_add(&c->refs, 1);
        return ws->self = c;
    }
    return ws->self = svc_list_new(ws->ns, ws->service);   /* the service's own reference */
}

/* PTR index: the service's ready IPs went from old's to now's. */
static void ready_ips_move(store *s, wsvc *ws, const merged *old, const merged *now,
                           const char *key, size_t kl)
{
    size_t no, nn;
    st_ip *a = ready_ips(old, &no), *b = ready_ips(now, &nn);
    ipidx_move(s, IDX_ENDPOINT, a, no, b, nn, key, kl, nn ? wsvc_self(s, ws) : NULL);
    free(a);
    free(b);
}

/* Rebuild and publish the merged view of one service's slices. */
static void publish_service_eps(store *s, wsvc *ws)
{
    char key[512];
    size_t kl = wsvc_key(ws, key);
    void *val = NULL;
    pmap_entry *e = ws->n > 0 && kl ? pmap_entry_new(key, kl, sizeof(merged) +
                                                     ws->n * sizeof(slice_blob *), &val) : NULL;
    merged *m = val;
    slice_blob **sl = m ? wsvc_slices(ws) : NULL;
    if (ws->n > 0 && !m)
        return;                     /* out of memory: the old view stays */
    if (m) {
        size_t total = 0;
        for (size_t i = 0; i < ws->n; i++)
            total += sl[i]->n;
        /* one slice (most services): publish its own array, no copy */
        st_endpoint *arr = ws->n > 1 ? calloc(total ? total : 1, sizeof *arr) : NULL;
        if (ws->n > 1 && !arr) {
            pmap_entry_free(e);
            return;
        }
        for (size_t i = 0; i < ws->n; i++) {
            decode_slice_ref(sl[i]);
            m->blobs[m->nblobs++] = sl[i];
            if (arr)
                memcpy(arr + m->pub.n, sl[i]->eps, sl[i]->n * sizeof *arr);
            m->pub.n += sl[i]->n;
        }
        m->pub.eps = arr ? arr : sl[0]->eps;
        m->pub.version = s->next_version++;
        index_by_ip(m);
    }
    if (!ws->mcs)                   /* multicluster slices answer no PTR */
        ready_ips_move(s, ws, ws->published, m, key, kl);
    ws->published = m;
    if (m)
        pmap_put_entry(s->eps, e, merged_release);
    else
        pmap_del(s->eps, key, kl);
}

static uint32_t wsvc_hash(const char *ns, const char *service, int mcs)
{
    return rec_hash(ns, service) ^ (uint32_t)mcs;
}

static wsvc **wstab_slot(const wstab *t, const char *ns, const char *service, int mcs)
{
    wsvc **pp = &t->b[wsvc_hash(ns, service, mcs) & (t->nb - 1)];
    while (*pp && ((*pp)->mcs != mcs || strcmp((*pp)->service, service) != 0 ||
                   strcmp((*pp)->ns, ns) != 0))
        pp = &(*pp)->next;
    return pp;
}

static int wstab_add(wstab *t, wsvc *ws)
{
    if (t->n >= 2 * t->nb) {        /* grow: twice the buckets, rehash */
        size_t nb = t->nb ? t->nb * 2 : 64;
        wsvc **b = calloc(nb, sizeof *b);
        if (!b)
            return -1;
        for (size_t i = 0; i < t->nb; i++)
            for (wsvc *e = t->b[i], *next; e; e = next) {
                next = e->next;
                size_t k = wsvc_hash(e->ns, e->service, e->mcs) & (nb - 1);
                e->next = b[k];
                b[k] = e;
            }
        free(t->b);
        t->b = b;
        t->nb = nb;
    }
    size_t k = wsvc_hash(ws->ns, ws->service, ws->mcs) & (t->nb - 1);
    ws->next = t->b[k];
    t->b[k] = ws;
    t->n++;
    return 0;
}

static void wstab_del(wstab *t, wsvc *ws)
{
    wsvc **pp = wstab_slot(t, ws->ns, ws->service, ws->mcs);
    if (*pp == ws) {
        *pp = ws->next;
        t->n--;
    }
}

/* The record of b's service (b->service set), made when missing; NULL
 * when memory runs out. */
static wsvc *wsvc_get(store *s, const slice_blob *b)
{
    assert(b->service && b->mcs <= 1);
    wsvc *ws = s->svcslices.nb ? *wstab_slot(&s->svcslices, b->ns, b->service, b->mcs) : NULL;
    if (!ws && (ws = calloc(1, sizeof *ws))) {
        ws->ns = b->ns;
        ws->service = b->service;
        ws->mcs = b->mcs;
        ws->cap = 1;
        if (wstab_add(&s->svcslices, ws) < 0) {
            free(ws);
            return NULL;
        }
    }
    return ws;
}

/* Detach a blob from its service (if it had one) and republish. */
static void slice_detach(store *s, slice_blob *b)
{
    if (!b || !b->service)
        return;
    wsvc *ws = wsvc_get(s, b);
    if (!ws)
        return;
    slice_blob **sl = wsvc_slices(ws);
    for (size_t i = 0; i < ws->n; i++)
        if (sl[i] == b) {
            memmove(&sl[i], &sl[i + 1], (ws->n - i - 1) * sizeof *sl);
            ws->n--;
            break;
        }
    publish_service_eps(s, ws);
    if (ws->n == 0) {
        wstab_del(&s->svcslices, ws);
        ip_svcs_unref(ws->self);
        if (ws->cap > 1)
            free(ws->sl.many);
        free(ws);
    }
}

static void slice_attach(store *s, slice_blob *b)
{
    if (!b->service)
        return;
    wsvc *ws = wsvc_get(s, b);
    if (!ws)
        return;
    if (ws->n == ws->cap) {
        uint32_t nc = ws->cap * 2;
        slice_blob **ns = ws->cap == 1 ? malloc(nc * sizeof *ns)
                                       : realloc(ws->sl.many, nc * sizeof *ns);
        if (!ns)
            return;
        if (ws->cap == 1)
            ns[0] = ws->sl.one;
        ws->sl.many = ns;
        ws->cap = nc;
    }
    slice_blob **sl = wsvc_slices(ws);
    sl[ws->n++] = b;
    publish_service_eps(s, ws);
}

/* ---- endpoint / range conflicts ----------------------------------------- */

/* An endpoint whose nodeName is not the node whose range of source src
 * holds its address: logged and counted once per (address, source). */
static void conflict_check(store *s, int src, const slice_blob *b, const st_endpoint *ep)
{
    if (!ep->node)
        return;
    st_ip ip = st_ep_ip(ep);
    const char *rn = pfx_find(s->ranges[src], &ip, NULL);
    if (!rn || !strcmp(rn, st_ep_node(ep)))
        return;
    wconflict key, *e;
    memset(&key, 0, sizeof key);
    key.key.ip = ip;
    key.key.source = (uint8_t)src;
    HASH_FIND(hh, s->conflicts, &key.key, sizeof key.key, e);
    if (e || s->nconflicts >= CONFLICTS_MAX || !(e = calloc(1, sizeof *e)))
        return;
    e->key = key.key;
    HASH_ADD(hh, s->conflicts, key, sizeof e->key, e);
    char abuf[ST_ADDR_STRLEN];
    if (++s->nconflicts == CONFLICTS_MAX)
        log_warning("plugin/kubernetes: %d endpoint/range conflicts seen; further ones are "
                    "neither logged nor counted", CONFLICTS_MAX);
    log_warning("plugin/kubernetes: locator conflict: endpoint %s of EndpointSlice %s/%s is on "
                "node %s, but the %s range holding it belongs to node %s: the CNI may not "
                "allocate pod addresses from that source (clients are located in the order of "
                "`locate`)", st_ep_addr(ep, abuf), b->ns, b->pub.name, st_ep_node(ep),
                range_names[src], rn);
    if (s->opts.conflict)
        s->opts.conflict(s->opts.conflict_arg, src);
}

static void conflicts_of_slice(store *s, int src, const slice_blob *b)
{
    for (size_t i = 0; b && i < b->n; i++)
        conflict_check(s, src, b, &b->eps[i]);
}

/* The ranges of src changed: every slice against them. */
static void conflicts_scan(store *s, int src)
{
    const wtab *t = &s->recs[R_SLICE];
    if (!pfx_count(s->ranges[src]))
        return;
    for (size_t i = 0; i < t->nb; i++)
        for (const wrec *w = t->b[i]; w; w = w->next)
            conflicts_of_slice(s, src, w->slice);
}

/* Owner's ranges of source src became c[0..n) on node. */
static void ranges_set(store *s, int r, const char *owner, const char *node, const cidr *c,
                       size_t n)
{
    int src = resource_range[r];
    if (pfx_set(s->ranges[src], owner, node, c, n) == 1) {
        bump(s);
        if (!s->relisting[r])
            conflicts_scan(s, src);     /* a relist scans once, at its end */
    }
}

int store_upsert_slice(store *s, const cJSON *obj)
{
    const char *why = NULL;
    slice_blob *b = decode_slice(s->strs, obj, !s->opts.drop_pod_names, &why);
    if (!b) {
        logskip("endpointslice", obj, why);
        return -1;
    }
    const char *mc;
    if (!b->service && s->opts.multicluster &&
        (mc = decode_obj_label(obj, "multicluster.kubernetes.io/service-name"))) {
        const char *cl = decode_obj_label(obj, "multicluster.kubernetes.io/source-cluster");
        b->service = strtab_intern(s->strs, mc);
        b->cluster = strtab_intern(s->strs, cl ? cl : "");
        b->mcs = 1;
    }
    wrec *w = rec_get(s, R_SLICE, b->ns, b->pub.name, 0);
    slice_blob *old = w ? w->slice : NULL;
    if (!w) {                       /* its record, named by b */
        w = calloc(1, sizeof *w);   /* an empty name[] */
        if (w) {
            w->ns = b->ns;          /* interned */
            w->slice = b;
            w->in_slice = 1;
        }
        if (!w || wtab_add(&s->recs[R_SLICE], w) < 0) {
            free(w);
            decode_slice_unref(b);
            return -1;
        }
    }
    w->gen = s->gen[R_SLICE];
    if (old && old->service == b->service && old->mcs == b->mcs && b->service) {
        /* replace in place: keeps slice order stable */
        wsvc *ws = wsvc_get(s, b);
        for (size_t i = 0; ws && i < ws->n; i++)
            if (wsvc_slices(ws)[i] == old)
                wsvc_slices(ws)[i] = b;
        if (ws)
            publish_service_eps(s, ws);
    } else {
        slice_detach(s, old);
        slice_attach(s, b);
    }
    w->slice = b;
    decode_slice_unref(old);
    for (int src = 0; src < ST_RANGE_COUNT; src++)
        conflicts_of_slice(s, src, b);
    bump(s);
    changed(s);
    return 0;
}

static void remove_slice(store *s, wrec *w)
{
    wtab_del(&s->recs[R_SLICE], w);     /* while its blob names it */
    slice_detach(s, w->slice);
    decode_slice_unref(w->slice);
    free(w);
    bump(s);
}

/* ---- pods ------------------------------------------------------------- */

/* Which pod answers for an IP: a running one that is not terminating, then
 * any other indexable one; none when only terminal or hostNetwork pods. */
static int pod_rank(const st_pod *p)
{
    if (p->host_network || p->phase == ST_PHASE_SUCCEEDED || p->phase == ST_PHASE_FAILED)
        return 0;
    if (p->phase == ST_PHASE_RUNNING && !p->terminating)
        return 3;
    return p->terminating ? 1 : 2;
}

/* A pod's record (wpod) and its published st_pod are one block: the head
 * (chain, relist generation), the st_pod with its addresses, then its
 * name (one 96-byte malloc chunk for one IPv4 address and a name of up to
 * 26 characters). The map publishes the block's st_pod, so a block is freed
 * only after a grace period; a change of the pod makes a new block, which
 * takes the old one's place in the table. */
static void pod_publish(store *s, const st_ip *ip, st_pod *p)
{
    if (ipmap_get_writer(s->podip, ip->addr, ip_alen(ip)) != p)
        ipmap_set(s->podip, ip->addr, ip_alen(ip), p);
}

/* Publish the best of an IP's pods (several hold it). */
static void podip_refresh(store *s, const wpodip *e)
{
    wpod *best = NULL;
    int rank = 0;
    for (size_t i = 0; i < e->n; i++) {
        int r = pod_rank(wpod_pod(e->pods[i]));
        if (r > rank) {
            rank = r;
            best = e->pods[i];
        }
    }
    pod_publish(s, &e->ip, wpod_pod(best));
}

/* Index w's pod under ip. Only answering pods (rank > 0) are indexed; an IP
 * held by one pod is indexed by the published map alone, a wpodip is made
 * only when a second pod holds the same IP (reuse while the old one
 * terminates or after it finished). */
static void podip_add(store *s, wpod *w, const st_ip *ip)
{
    wpodip *e;
    HASH_FIND(hh, s->podips, ip, sizeof *ip, e);
    if (!e) {
        const st_pod *cur = ipmap_get_writer(s->podip, ip->addr, ip_alen(ip));
        wpod *cw = cur ? btab_get(&s->pods, cur->ns, cur->name) : NULL;
        if (!cw || cw == w) {
            pod_publish(s, ip, wpod_pod(w));
            return;
        }
        if (!(e = calloc(1, sizeof *e)) || !(e->pods = malloc(2 * sizeof *e->pods))) {
            free(e);
            return;
        }
        e->ip = *ip;
        e->pods[e->n++] = cw;
        HASH_ADD(hh, s->podips, ip, sizeof e->ip, e);
    } else {
        if (VEC_RESIZE(e->pods, e->n + 1) != 0)
            return;
    }
    e->pods[e->n++] = w;
    podip_refresh(s, e);
}

static void podip_drop(store *s, wpod *w, const st_ip *ip)
{
    wpodip *e;
    HASH_FIND(hh, s->podips, ip, sizeof *ip, e);
    if (!e) {
        if (ipmap_get_writer(s->podip, ip->addr, ip_alen(ip)) == wpod_pod(w))
            ipmap_set(s->podip, ip->addr, ip_alen(ip), NULL);
        return;
    }
    for (size_t j = 0; j < e->n; j++)
        if (e->pods[j] == w) {
            e->pods[j] = e->pods[--e->n];
            break;
        }
    if (e->n > 1) {
        podip_refresh(s, e);
        return;
    }
    if (e->n == 1)
        pod_publish(s, ip, wpod_pod(e->pods[0]));
    else
        ipmap_set(s->podip, ip->addr, ip_alen(ip), NULL);
    HASH_DEL(s->podips, e);
    free(e->pods);
    free(e);
}

static int pod_has_ip(const st_pod *p, const st_ip *ip)
{
    for (uint8_t i = 0; i < p->nips; i++)
        if (!memcmp(&p->ips[i], ip, sizeof *ip))
            return 1;
    return 0;
}

/* w (the new block) keeps ip, under which its previous block was indexed
 * (and was replaced by w in the IP's wpodip): publish the best holder
 * again, replacing the entry in one step (never deleted in between). */
static void podip_replace(store *s, wpod *w, const st_ip *ip)
{
    wpodip *e;
    HASH_FIND(hh, s->podips, ip, sizeof *ip, e);
    if (e)
        podip_refresh(s, e);
    else
        pod_publish(s, ip, wpod_pod(w));
}

/* The same reader-visible pod (the store keeps nothing else of it). */
static int pod_same(const st_pod *a, const st_pod *b)
{
    return a->node_name == b->node_name && a->nips == b->nips &&
           a->host_network == b->host_network && a->phase == b->phase &&
           a->terminating == b->terminating &&
           memcmp(a->ips, b->ips, a->nips * sizeof *a->ips) == 0;
}

int store_upsert_pod(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_pod *p = decode_pod(s->strs, obj, &why);
    if (!p) {
        logskip("pod", obj, why);
        return -1;
    }
    wpod *old = btab_get(&s->pods, p->ns, p->name);
    if (old && pod_same(wpod_pod(old), p)) {    /* a status change the store does not keep */
        old->gen = s->gen[R_POD];
        decode_pod_free(p);
        return 0;
    }
    size_t nl = strlen(p->name), ipb = p->nips * sizeof *p->ips;
    wpod *w = malloc(sizeof *w + sizeof *p + ipb + nl + 1);
    if (!w) {
        decode_pod_free(p);
        return -1;
    }
    w->next = NULL;
    w->gen = s->gen[R_POD];
    st_pod *np = wpod_pod(w);
    memcpy(np, p, sizeof *p + ipb);
    np->name = memcpy((char *)np->ips + ipb, p->name, nl + 1);    /* was the JSON's string */
    decode_pod_free(p);
    p = np;
    const st_pod *op = old ? wpod_pod(old) : NULL;
    int changed_ip = !op || op->nips != p->nips || memcmp(op->ips, p->ips, ipb) != 0;
    int was = op && pod_rank(op) > 0, is = pod_rank(p) > 0;
    /* Readers must never find an address of the pod unpublished while it
     * keeps it: the addresses it loses go, those it keeps are replaced in
     * place, those it gains are added. */
    if (was)
        for (uint8_t i = 0; i < op->nips; i++) {
            if (!is || !pod_has_ip(p, &op->ips[i])) {
                podip_drop(s, old, &op->ips[i]);
                continue;
            }
            wpodip *e;              /* kept: w takes old's place among its holders */
            HASH_FIND(hh, s->podips, &op->ips[i], sizeof op->ips[i], e);
            for (size_t j = 0; e && j < e->n; j++)
                if (e->pods[j] == old)
                    e->pods[j] = w;
        }
    if (old)
        btab_unlink(&s->pods, old, w);
    else if (btab_add(&s->pods, w) < 0) {
        free(w);
        return -1;
    }
    if (is)
        for (uint8_t i = 0; i < p->nips; i++) {
            if (was && pod_has_ip(op, &p->ips[i]))
                podip_replace(s, w, &p->ips[i]);
            else
                podip_add(s, w, &p->ips[i]);
        }
    if (old)
        pmap_defer(free, old);      /* readers may hold its st_pod */
    if (changed_ip)
        bump(s);
    changed(s);
    return 0;
}

static void remove_pod(store *s, wpod *w)
{
    const st_pod *p = wpod_pod(w);
    if (pod_rank(p) > 0)
        for (uint8_t i = 0; i < p->nips; i++)
            podip_drop(s, w, &p->ips[i]);
    btab_unlink(&s->pods, w, NULL);
    pmap_defer(free, w);
    bump(s);
    changed(s);
}

/* ---- nodes and namespaces ---------------------------------------------- */

int store_upsert_node(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_node *n = decode_node(s->strs, obj, &s->opts, &why);
    if (!n) {
        logskip("node", obj, why);
        return -1;
    }
    wrec *w = rec_get(s, R_NODE, "", n->name, 1);
    if (!w) {
        decode_node_free(n);
        return -1;
    }
    /* The node first, then its addresses (replaced in place, never deleted
     * and put back: a reader must always find a node by an address it
     * keeps), then the addresses it lost. */
    uint8_t nnew = n->naddrs < 8 ? n->naddrs : 8;
    st_ip *old = w->addrs, *now = NULL;
    uint8_t nold = w->naddrs;
    if (nnew && !(now = malloc(nnew * sizeof *now))) {
        decode_node_free(n);
        return -1;
    }
    pmap_put(s->nodes, n->name, strlen(n->name), n, decode_node_free);
    for (uint8_t i = 0; i < nnew; i++) {
        now[i] = n->addrs[i];
        ipmap_set(s->naddr, n->addrs[i].addr, ip_alen(&n->addrs[i]), (void *)n->name);
    }
    for (uint8_t i = 0; i < nold; i++) {
        int kept = 0;
        for (uint8_t j = 0; j < nnew && !kept; j++)
            kept = !memcmp(&old[i], &now[j], sizeof old[i]);
        if (!kept)
            ipmap_set(s->naddr, old[i].addr, ip_alen(&old[i]), NULL);
    }
    free(old);
    w->addrs = now;
    w->naddrs = nnew;
    ranges_set(s, R_NODE, n->name, n->name, n->cidrs, n->ncidrs);
    atomic_fetch_add(&s->nodes_version, 1);
    changed(s);
    return 0;
}

static void remove_node(store *s, wrec *w)
{
    for (uint8_t i = 0; i < w->naddrs; i++)
        ipmap_set(s->naddr, w->addrs[i].addr, ip_alen(&w->addrs[i]), NULL);
    pmap_del(s->nodes, w->name, strlen(w->name));
    pfx_del(s->ranges[ST_RANGE_PODCIDR], w->name);
    atomic_fetch_add(&s->nodes_version, 1);
    wtab_del(&s->recs[R_NODE], w);
    free(w->addrs);
    free(w);
}

int store_upsert_namespace(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_namespace *ns = decode_namespace(s->strs, obj, &why);
    if (!ns) {
        logskip("namespace", obj, why);
        return -1;
    }
    if (!rec_get(s, R_NS, "", ns->name, 1)) {
        decode_namespace_free(ns);
        return -1;
    }
    pmap_put(s->nss, ns->name, strlen(ns->name), ns, decode_namespace_free);
    changed(s);
    return 0;
}

static void remove_namespace(store *s, wrec *w)
{
    pmap_del(s->nss, w->name, strlen(w->name));
    wtab_del(&s->recs[R_NS], w);
    free(w);
}

/* ---- ServiceImports ----------------------------------------------------- */

int store_upsert_svcimport(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_svcimport *si = decode_svcimport(s->strs, obj, &why);
    if (!si) {
        logskip("serviceimport", obj, why);
        return -1;
    }
    char key[512];
    size_t kl = nskey(key, sizeof key, si->ns, si->name);
    if (!kl || !rec_get(s, R_SIMP, si->ns, si->name, 1)) {
        decode_svcimport_free(si);
        return -1;
    }
    pmap_put(s->simp, key, kl, si, decode_svcimport_free);
    bump(s);
    changed(s);
    return 0;
}

static void remove_svcimport(store *s, wrec *w)
{
    char key[512];
    size_t kl = nskey(key, sizeof key, w->ns, w->name);
    if (kl)
        pmap_del(s->simp, key, kl);
    wtab_del(&s->recs[R_SIMP], w);
    free(w);
    bump(s);
}

/* ---- CNI range objects: CiliumNode, BlockAffinity ----------------------- */

static int upsert_range_obj(store *s, int r, const cJSON *obj, const char *what)
{
    const char *why = NULL, *node = NULL;
    cidr c[8];
    int n = r == R_CILIUM ? decode_ciliumnode(obj, c, 8, &why)
                          : decode_blockaffinity(obj, c, &node, &why);
    if (n < 0) {
        logskip(what, obj, why);
        return -1;
    }
    const char *name = decode_obj_name(obj);
    wrec *w = rec_get(s, r, "", name, 1);
    const char *in = strtab_intern(s->strs, r == R_CILIUM ? name : node ? node : "");
    if (!w || !in)
        return -1;
    ranges_set(s, r, w->name, in, c, (size_t)n);
    changed(s);
    return 0;
}

int store_upsert_ciliumnode(store *s, const cJSON *obj)
{
    return upsert_range_obj(s, R_CILIUM, obj, "ciliumnode");
}

int store_upsert_blockaffinity(store *s, const cJSON *obj)
{
    return upsert_range_obj(s, R_CALICO, obj, "blockaffinity");
}

static void remove_range_obj(store *s, int r, wrec *w)
{
    pfx_del(s->ranges[resource_range[r]], w->name);
    wtab_del(&s->recs[r], w);
    free(w);
    bump(s);
}

const char *st_range_name(int source)
{
    return source >= 0 && source < ST_RANGE_COUNT ? range_names[source] : "?";
}

/* ---- removal and relists ---------------------------------------------- */

static int resource_index(const char *resource)
{
    for (int i = 0; i < R_COUNT; i++)
        if (strcmp(resource_names[i], resource) == 0)
            return i;
    return -1;
}

static void remove_rec(store *s, int r, wrec *w)
{
    switch (r) {
    case R_SLICE: remove_slice(s, w); break;
    case R_NODE: remove_node(s, w); break;
    case R_SIMP: remove_svcimport(s, w); break;
    case R_CILIUM:
    case R_CALICO: remove_range_obj(s, r, w); break;
    default: remove_namespace(s, w); break;
    }
    changed(s);
}

int store_remove(store *s, const char *resource, const cJSON *obj)
{
    int r = resource_index(resource);
    if (r < 0)
        return -1;
    const char *ns = (r == R_NODE || r == R_NS || r == R_CILIUM || r == R_CALICO)
                         ? "" : decode_obj_ns(obj);
    if (r == R_POD) {
        wpod *p = btab_get(&s->pods, ns, decode_obj_name(obj));
        if (!p)
            return -1;
        remove_pod(s, p);
        return 0;
    }
    if (r == R_SVC) {
        wsvcrec *sr = btab_get(&s->svcrecs, ns, decode_obj_name(obj));
        if (!sr)
            return -1;
        remove_service(s, sr);
        changed(s);
        return 0;
    }
    wrec *w = rec_get(s, r, ns, decode_obj_name(obj), 0);
    if (!w)
        return -1;
    remove_rec(s, r, w);
    return 0;
}

/* The address map a resource feeds (NULL: none): its changes are batched
 * while that resource relists (ipmap_hold). */
static ipmap *relist_map(store *s, int r)
{
    switch (r) {
    case R_SLICE: return s->ptr;
    case R_SVC: return s->svcip;
    case R_POD: return s->podip;
    case R_NODE: return s->naddr;
    default: return NULL;
    }
}

void store_relist_begin(store *s, const char *resource)
{
    int r = resource_index(resource);
    if (r < 0)
        return;
    s->gen[r]++;
    s->relisting[r] = 1;
    if (resource_range[r] >= 0)
        pfx_hold(s->ranges[resource_range[r]], 1);
    if (relist_map(s, r))
        ipmap_hold(relist_map(s, r), 1);
}

void store_relist_end(store *s, const char *resource)
{
    int r = resource_index(resource);
    if (r < 0 || !s->relisting[r])
        return;
    if (r == R_POD)
        for (size_t i = 0; i < s->pods.nb; i++)
            for (wpod *w = s->pods.b[i], *next; w; w = next) {
                next = w->next;     /* removal unlinks w only */
                if (w->gen != s->gen[r])
                    remove_pod(s, w);
            }
    if (r == R_SVC)
        for (size_t i = 0; i < s->svcrecs.nb; i++)
            for (wsvcrec *w = s->svcrecs.b[i], *next; w; w = next) {
                next = w->next;     /* removal unlinks w only */
                if (w->gen != s->gen[r]) {
                    remove_service(s, w);
                    changed(s);
                }
            }
    wtab *t = &s->recs[r];
    for (size_t i = 0; i < t->nb; i++)
        for (wrec *w = t->b[i], *next; w; w = next) {
            next = w->next;         /* removal unlinks w only */
            if (w->gen != s->gen[r])
                remove_rec(s, r, w);
        }
    s->relisting[r] = 0;
    if (resource_range[r] >= 0 && pfx_hold(s->ranges[resource_range[r]], 0) == 1)
        conflicts_scan(s, resource_range[r]);
    /* the relist's addresses, published at once (out of memory: the map
     * stays held, the next relist end publishes) */
    if (relist_map(s, r) && ipmap_hold(relist_map(s, r), 0) < 0)
        log_warning("plugin/kubernetes: out of memory publishing the %s address index", resource);
    /* a (re)list parsed pages of JSON: give the freed heap back to the system */
    malloc_trim(0);
}

/* ---- readers ---------------------------------------------------------- */

void store_reader_register(void) { pmap_register_thread(); }
void store_reader_unregister(void) { pmap_unregister_thread(); }
void store_read_begin(void) { pmap_read_lock(); }
void store_read_end(void) { pmap_read_unlock(); }

const st_service *store_service(store *s, const char *ns, const char *name)
{
    char key[512];
    size_t kl = nskey(key, sizeof key, ns, name);
    const wsvcrec *r = kl ? pmap_get(s->svc, key, kl) : NULL;
    return r ? wsr_svc(r) : NULL;
}

const st_endpoints *store_endpoints(store *s, const char *ns, const char *service)
{
    char key[512];
    size_t kl = nskey(key, sizeof key, ns, service);
    merged *m = kl ? pmap_get(s->eps, key, kl) : NULL;
    return m ? &m->pub : NULL;
}

const st_svcimport *store_svcimport(store *s, const char *ns, const char *name)
{
    char key[512];
    size_t kl = nskey(key, sizeof key, ns, name);
    return kl ? pmap_get(s->simp, key, kl) : NULL;
}

void store_foreach_mcslice(store *s, const char *ns, const char *service, st_mcslice_cb cb,
                           void *arg)
{
    char key[512];
    key[0] = 1;
    size_t kl = nskey(key + 1, sizeof key - 1, ns, service);
    const merged *m = kl ? pmap_get(s->eps, key, kl + 1) : NULL;
    for (size_t i = 0; m && i < m->nblobs; i++)
        if (cb(m->blobs[i]->cluster ? m->blobs[i]->cluster : "", m->blobs[i]->eps,
               m->blobs[i]->n, arg))
            return;
}

const st_namespace *store_namespace(store *s, const char *name)
{
    return pmap_get(s->nss, name, strlen(name));
}

const st_pod *store_pod_by_ip(store *s, const st_ip *ip)
{
    return ipmap_get(s->podip, ip->addr, ip_alen(ip));
}

const st_node *store_node(store *s, const char *name)
{
    return name ? pmap_get(s->nodes, name, strlen(name)) : NULL;
}

const st_node *store_node_by_addr(store *s, const st_ip *ip)
{
    const char *name = ip->family == 4 || ip->family == 6 ?
                       ipmap_get(s->naddr, ip->addr, ip_alen(ip)) : NULL;
    return store_node(s, name);
}

const char *store_node_by_range(store *s, int source, const st_ip *ip)
{
    if (source < 0 || source >= ST_RANGE_COUNT)
        return NULL;
    return pfx_find(s->ranges[source], ip, NULL);
}

size_t store_range_count(store *s, int source)
{
    return source < 0 || source >= ST_RANGE_COUNT ? 0 : pfx_count(s->ranges[source]);
}

/* memcmp of an endpoint's address (st_ep_ip) with ip: <0, 0, >0. */
static int ep_ip_cmp(const st_endpoint *ep, const st_ip *ip)
{
    st_ip a = st_ep_ip(ep);
    return memcmp(&a, ip, sizeof a);
}

/* The position in m->by_ip of the first entry with address ip (m->nby_ip
 * when none): a binary search. */
static size_t by_ip_first(const merged *m, const st_ip *ip)
{
    const st_endpoint *eps = m->pub.eps;
    size_t lo = 0, hi = m->nby_ip;
    assert(m->by_ip);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ep_ip_cmp(&eps[m->by_ip[mid]], ip) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first endpoint of m (in slice order) with address ip and a nodeName:
 * a binary search in a large view, a pass in a small one. */
static const char *merged_node_of(const merged *m, const st_ip *ip)
{
    const st_endpoint *eps = m->pub.eps;
    if (!m->by_ip) {
        for (size_t j = 0; j < m->pub.n; j++)
            if (eps[j].node && ep_ip_cmp(&eps[j], ip) == 0)
                return st_ep_node(&eps[j]);
        return NULL;
    }
    for (size_t k = by_ip_first(m, ip);
         k < m->nby_ip && !ep_ip_cmp(&eps[m->by_ip[k]], ip); k++)
        if (eps[m->by_ip[k]].node)
            return st_ep_node(&eps[m->by_ip[k]]);
    return NULL;
}

const char *store_endpoint_node(store *s, const st_ip *ip)
{
    const ip_svcs *l = ipmap_get(s->ptr, ip->addr, ip_alen(ip));
    for (size_t i = 0; l && i < l->n; i++) {
        char key[512];
        size_t kl = nskey(key, sizeof key, l->ns[i], l->name[i]);
        const merged *m = kl ? pmap_get(s->eps, key, kl) : NULL;
        const char *node = m ? merged_node_of(m, ip) : NULL;
        if (node)
            return node;
    }
    return NULL;
}

void store_services_by_ip(store *s, const st_ip *ip, st_service_cb cb, void *arg)
{
    const ip_svcs *l = ipmap_get(s->svcip, ip->addr, ip_alen(ip));
    for (size_t i = 0; l && i < l->n; i++) {
        const st_service *svc = store_service(s, l->ns[i], l->name[i]);
        if (svc && cb(svc, arg))
            return;
    }
}

void store_endpoints_by_ip(store *s, const st_ip *ip, st_endpoint_cb cb, void *arg)
{
    const ip_svcs *l = ipmap_get(s->ptr, ip->addr, ip_alen(ip));
    for (size_t i = 0; l && i < l->n; i++) {
        const st_service *svc = store_service(s, l->ns[i], l->name[i]);
        const st_endpoints *eps = store_endpoints(s, l->ns[i], l->name[i]);
        const merged *m = (const merged *)eps;      /* pub is its first member */
        if (svc && m && m->by_ip) {                 /* log(n) + that address */
            for (size_t k = by_ip_first(m, ip);
                 k < m->nby_ip && !ep_ip_cmp(&eps->eps[m->by_ip[k]], ip); k++)
                if (eps->eps[m->by_ip[k]].ready && cb(svc, &eps->eps[m->by_ip[k]], arg))
                    return;
            continue;
        }
        for (size_t j = 0; svc && eps && j < eps->n; j++) {
            const st_endpoint *ep = &eps->eps[j];
            if (ep->ready && ep_ip_cmp(ep, ip) == 0 && cb(svc, ep, arg))
                return;
        }
    }
}

struct each_svc { st_service_cb cb; void *arg; };
struct each_node { st_node_cb cb; void *arg; };

static int each_svc_cb(void *val, void *arg)
{
    struct each_svc *e = arg;
    return e->cb(wsr_svc(val), e->arg);
}

static int each_node_cb(void *val, void *arg)
{
    struct each_node *e = arg;
    return e->cb(val, e->arg);
}

void store_foreach_service(store *s, st_service_cb cb, void *arg)
{
    struct each_svc e = { cb, arg };
    pmap_foreach(s->svc, each_svc_cb, &e);
}

void store_foreach_node(store *s, st_node_cb cb, void *arg)
{
    struct each_node e = { cb, arg };
    pmap_foreach(s->nodes, each_node_cb, &e);
}

uint64_t store_nodes_version(const store *s)
{
    return atomic_load(&((store *)s)->nodes_version);
}

uint64_t store_version(const store *s)
{
    return atomic_load_explicit(&((store *)s)->changes, memory_order_acquire);
}

uint32_t store_serial(const store *s)
{
    return atomic_load(&((store *)s)->serial);
}

size_t store_count(const store *s, const char *resource)
{
    int r = resource_index(resource);
    return r < 0 ? 0 : r == R_POD ? s->pods.n : r == R_SVC ? s->svcrecs.n : s->recs[r].n;
}

size_t store_strings_bytes(const store *s)
{
    return strtab_bytes(s->strs);
}

/* ---- life ------------------------------------------------------------- */

store *store_new(const store_opts *opts)
{
    store *s = calloc(1, sizeof *s);
    if (!s || !(s->strs = strtab_new())) {
        free(s);
        return NULL;
    }
    s->opts.zone_label = opts && opts->zone_label ? opts->zone_label : "topology.kubernetes.io/zone";
    s->opts.region_label = opts && opts->region_label ? opts->region_label
                                                      : "topology.kubernetes.io/region";
    s->opts.multicluster = opts && opts->multicluster;
    s->opts.conflict = opts ? opts->conflict : NULL;
    s->opts.conflict_arg = opts ? opts->conflict_arg : NULL;
    s->opts.drop_pod_names = opts && opts->drop_pod_names;
    for (int i = 0; i < ST_RANGE_COUNT; i++)
        if (!(s->ranges[i] = pfx_new())) {
            store_free(s);
            return NULL;
        }
    /* Every map starts at 64 buckets and grows with what it holds
     * (pmap.c): a store that watches no pods has no pod-sized table, a
     * small cluster no large one. opts->expected_pods presizes them
     * instead, in proportion to the scale limits of docs/benchmarks.md
     * (150k pods, 10k services, 5k nodes). */
    enum { FULL_PODS = 150000 };
    size_t pods = !opts || !opts->expected_pods ? 0
                  : opts->expected_pods < 16 * FULL_PODS ? opts->expected_pods : 16 * FULL_PODS;
    pmap **maps[] = { &s->svc, &s->eps, &s->nodes, &s->nss, &s->simp };
    static const unsigned long sizes[] = { 16384, 16384, 8192, 1024, 64 };
    /* the address maps grow by themselves, from nothing (pmap.c): the pod
     * map stays one small block unless pods are watched */
    if (!(s->podip = ipmap_new()) || !(s->ptr = ipmap_new()) || !(s->svcip = ipmap_new()) ||
        !(s->naddr = ipmap_new())) {
        store_free(s);
        return NULL;
    }
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (!(*maps[i] = pmap_new_sized(sizes[i] * pods / FULL_PODS))) {
            store_free(s);
            return NULL;
        }
    atomic_init(&s->serial, (uint32_t)time(NULL));
    s->next_version = 1;
    s->svcrecs.svc = 1;
    return s;
}

void store_free(store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_RANGE_COUNT; i++)
        if (s->ranges[i])
            pfx_hold(s->ranges[i], 1);  /* no rebuild per removed owner */
    for (int r = 0; r < R_COUNT; r++) {
        wtab *t = &s->recs[r];
        for (size_t i = 0; i < t->nb; i++)
            for (wrec *w = t->b[i], *next; w; w = next) {
                next = w->next;
                remove_rec(s, r, w);
            }
        free(t->b);
    }
    for (size_t i = 0; i < s->pods.nb; i++)
        for (wpod *w = s->pods.b[i], *next; w; w = next) {
            next = w->next;
            remove_pod(s, w);
        }
    free(s->pods.b);
    for (size_t i = 0; i < s->svcrecs.nb; i++)
        for (wsvcrec *w = s->svcrecs.b[i], *next; w; w = next) {
            next = w->next;
            remove_service(s, w);
        }
    free(s->svcrecs.b);
    free(s->svcslices.b);           /* its records went with their slices */
    pmap_barrier();
    pmap **maps[] = { &s->svc, &s->eps, &s->nodes, &s->nss, &s->simp };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        pmap_free(*maps[i], NULL);
    /* empty by now: their values went with the records */
    assert(!s->podip || ipmap_count(s->podip) == 0);
    assert(!s->ptr || ipmap_count(s->ptr) == 0);
    assert(!s->svcip || ipmap_count(s->svcip) == 0);
    assert(!s->naddr || ipmap_count(s->naddr) == 0);
    ipmap_free(s->naddr);
    ipmap_free(s->podip);
    ipmap_free(s->ptr);
    ipmap_free(s->svcip);
    for (int i = 0; i < ST_RANGE_COUNT; i++)
        pfx_free(s->ranges[i]);
    wconflict *c, *tmp;
    HASH_ITER(hh, s->conflicts, c, tmp) {
        HASH_DEL(s->conflicts, c);
        free(c);
    }
    pmap_barrier();                 /* values freed: now their strings */
    strtab_free(s->strs);
    free(s);
}
