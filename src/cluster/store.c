/*
 * store.c — see store.h.
 *
 * Published side (read by DNS workers, lock-free, pmap.c):
 *   svc     "ns\0name"     → st_service
 *   eps     "ns\0service"  → merged (st_endpoints + the slice blobs it uses)
 *   pods    st_ip          → st_pod (the best pod holding that IP)
 *   nodes   name           → st_node
 *   naddr   st_ip          → node name (interned)
 *   nss     name           → st_namespace
 *   svcip   st_ip          → ip_svcs: services with that cluster IP
 *   epip    st_ip          → ip_svcs: services with a ready endpoint there
 *
 * Writer side (API thread only, uthash): one record per object name, with a
 * relist generation, plus what is needed to rebuild the published entries:
 * the slices of each service, the pods of each IP, the addresses of each
 * node, the (service, count) pairs of each IP.
 */
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include <uthash.h>
#include "decode.h"
#include "pmap.h"
#include "server/log.h"

enum { R_SVC, R_SLICE, R_POD, R_NODE, R_NS, R_COUNT };
static const char *const resource_names[R_COUNT] = {
    "services", "endpointslices", "pods", "nodes", "namespaces",
};

/* A writer-side record: one per object, keyed "ns/name". */
typedef struct wrec {
    UT_hash_handle hh;
    uint32_t gen;
    slice_blob *slice;              /* R_SLICE: the current blob */
    st_pod *pod;                    /* R_POD: writer's copy */
    st_ip *addrs;                   /* R_NODE: indexed addresses / R_SVC: cluster IPs
                                     * (up to 8; allocated for those two only) */
    uint8_t naddrs;
    char key[];
} wrec;

/* Slices of one service, writer side. */
typedef struct wsvc {
    UT_hash_handle hh;
    slice_blob **slices;
    size_t n, cap;
    const struct merged *published;
    char key[];                     /* "ns\0service" */
} wsvc;

typedef struct merged {
    st_endpoints pub;               /* first: readers get &pub */
    slice_blob **blobs;
    size_t nblobs;
    st_endpoint *arr;
} merged;

/* IP → (service key, count) pairs, writer side, and the published list. */
typedef struct wip_ref { char *key; size_t klen; int count; } wip_ref;
typedef struct wip {
    UT_hash_handle hh;
    st_ip ip;
    wip_ref *refs;
    size_t n;
} wip;

typedef struct ip_svcs {
    size_t n;
    const char **ns, **name;
} ip_svcs;

/* IP → pod keys, writer side. */
typedef struct wpodip {
    UT_hash_handle hh;
    st_ip ip;
    wrec **pods;
    size_t n;
} wpodip;

struct store {
    store_opts opts;
    pmap *svc, *eps, *pods, *nodes, *naddr, *nss, *svcip, *epip;
    wrec *recs[R_COUNT];
    uint32_t gen[R_COUNT];
    int relisting[R_COUNT];
    wsvc *svcslices;
    wip *svcips, *epips;
    wpodip *podips;
    _Atomic uint32_t serial;
    _Atomic uint64_t nodes_version;
};

static uint64_t next_version = 1;

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

static wrec *rec_get(store *s, int r, const char *ns, const char *name, int create)
{
    char key[512];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    wrec *w;
    HASH_FIND_STR(s->recs[r], key, w);
    if (!w && create) {
        size_t n = strlen(key);
        w = calloc(1, sizeof *w + n + 1);
        if (!w)
            return NULL;
        memcpy(w->key, key, n + 1);
        HASH_ADD_STR(s->recs[r], key, w);
    }
    if (w && create)
        w->gen = s->gen[r];
    return w;
}

static void logskip(const char *res, const cJSON *obj, const char *why)
{
    log_warning("plugin/kubernetes: skipping %s %s/%s: %s", res, obj_ns(obj), obj_name(obj), why);
}

/* ---- IP → services indexes -------------------------------------------- */

/* One block: the header, then ns[n], name[n], then the names' text. */
static void ip_svcs_free(void *p)
{
    free(p);
}

static void ipidx_publish(pmap *m, wip *w)
{
    if (w->n == 0) {
        pmap_del(m, &w->ip, sizeof w->ip);
        return;
    }
    size_t text = 0;
    for (size_t i = 0; i < w->n; i++)
        text += w->refs[i].klen - strlen(w->refs[i].key);     /* "name\0" */
    ip_svcs *l = malloc(sizeof *l + 2 * w->n * sizeof(char *) + text);
    if (!l)
        return;
    l->ns = (const char **)(l + 1);
    l->name = l->ns + w->n;
    char *t = (char *)(l->name + w->n);
    l->n = 0;
    for (size_t i = 0; i < w->n; i++) {
        const char *nm = w->refs[i].key + strlen(w->refs[i].key) + 1;
        size_t nl = strlen(nm) + 1;
        l->ns[i] = intern(w->refs[i].key);
        l->name[i] = memcpy(t, nm, nl);
        t += nl;
        l->n++;
    }
    pmap_put(m, &w->ip, sizeof w->ip, l, ip_svcs_free);
}

/* Add delta to (ip, service key); republish the ip's list. */
static void ipidx_adjust(wip **head, pmap *m, const st_ip *ip, const char *key, size_t klen, int delta)
{
    wip *w;
    HASH_FIND(hh, *head, ip, sizeof *ip, w);
    if (!w) {
        if (delta <= 0 || !(w = calloc(1, sizeof *w)))
            return;
        w->ip = *ip;
        HASH_ADD(hh, *head, ip, sizeof w->ip, w);
    }
    size_t i;
    for (i = 0; i < w->n; i++)
        if (w->refs[i].klen == klen && memcmp(w->refs[i].key, key, klen) == 0)
            break;
    if (i == w->n) {
        if (delta <= 0)
            return;
        wip_ref *nr = realloc(w->refs, (w->n + 1) * sizeof *nr);
        if (!nr)
            return;
        w->refs = nr;
        w->refs[i].key = malloc(klen + 1);      /* "ns\0name\0" */
        if (!w->refs[i].key)
            return;
        memcpy(w->refs[i].key, key, klen);
        w->refs[i].key[klen] = '\0';
        w->refs[i].klen = klen;
        w->refs[i].count = 0;
        w->n++;
    }
    int before = w->refs[i].count;
    w->refs[i].count += delta;
    int gone = w->refs[i].count <= 0;
    if (gone) {
        free(w->refs[i].key);
        w->refs[i] = w->refs[--w->n];
    }
    if (gone || before == 0)
        ipidx_publish(m, w);        /* the set of services changed */
    if (w->n == 0) {
        HASH_DEL(*head, w);
        free(w->refs);
        free(w);
    }
}

/* ---- services --------------------------------------------------------- */

int store_upsert_service(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_service *svc = decode_service(obj, &why);
    if (!svc) {
        logskip("service", obj, why);
        return -1;
    }
    svc->version = next_version++;
    char key[512];
    size_t kl = nskey(key, sizeof key, svc->ns, svc->name);
    wrec *w = rec_get(s, R_SVC, svc->ns, svc->name, 1);
    if (!kl || !w) {
        service_free(svc);
        return -1;
    }
    for (uint8_t i = 0; i < w->naddrs; i++)
        ipidx_adjust(&s->svcips, s->svcip, &w->addrs[i], key, kl, -1);
    w->naddrs = 0;
    if (!w->addrs && !(w->addrs = calloc(8, sizeof *w->addrs))) {
        service_free(svc);
        return -1;
    }
    for (uint8_t i = 0; i < svc->n_cluster_ips && w->naddrs < 8; i++) {
        w->addrs[w->naddrs++] = svc->cluster_ips[i];
        ipidx_adjust(&s->svcips, s->svcip, &svc->cluster_ips[i], key, kl, 1);
    }
    pmap_put(s->svc, key, kl, svc, service_free);
    bump(s);
    return 0;
}

static void remove_service(store *s, wrec *w)
{
    char key[512], ns[256];
    const char *slash = strchr(w->key, '/');
    size_t nl = (size_t)(slash - w->key);
    if (nl >= sizeof ns)
        return;
    memcpy(ns, w->key, nl);
    ns[nl] = '\0';
    size_t kl = nskey(key, sizeof key, ns, slash + 1);
    for (uint8_t i = 0; i < w->naddrs; i++)
        ipidx_adjust(&s->svcips, s->svcip, &w->addrs[i], key, kl, -1);
    pmap_del(s->svc, key, kl);
    HASH_DEL(s->recs[R_SVC], w);
    free(w->addrs);
    free(w);
    bump(s);
}

/* ---- EndpointSlices --------------------------------------------------- */

static void merged_free(void *p)
{
    merged *m = p;
    if (!m)
        return;
    for (size_t i = 0; i < m->nblobs; i++)
        slice_unref(m->blobs[i]);
    free(m->blobs);
    free(m->arr);
    free(m);
}

static void ready_ips_adjust(store *s, const merged *m, const char *key, size_t kl, int delta)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->pub.n; i++) {
        const st_endpoint *ep = &m->pub.eps[i];
        if (!ep->ready)
            continue;
        int seen = 0;               /* count each IP once per service */
        for (size_t j = 0; j < i && !seen; j++)
            seen = m->pub.eps[j].ready && memcmp(&m->pub.eps[j].ip, &ep->ip, sizeof ep->ip) == 0;
        if (!seen)
            ipidx_adjust(&s->epips, s->epip, &ep->ip, key, kl, delta);
    }
}

/* Rebuild and publish the merged view of one service's slices. */
static void publish_service_eps(store *s, wsvc *ws, size_t kl)
{
    merged *m = NULL;
    if (ws->n > 0 && (m = calloc(1, sizeof *m))) {
        size_t total = 0;
        for (size_t i = 0; i < ws->n; i++)
            total += ws->slices[i]->n;
        m->blobs = calloc(ws->n, sizeof *m->blobs);
        m->arr = calloc(total ? total : 1, sizeof *m->arr);
        if (!m->blobs || !m->arr) {
            merged_free(m);
            return;
        }
        for (size_t i = 0; i < ws->n; i++) {
            slice_ref(ws->slices[i]);
            m->blobs[m->nblobs++] = ws->slices[i];
            memcpy(m->arr + m->pub.n, ws->slices[i]->eps, ws->slices[i]->n * sizeof *m->arr);
            m->pub.n += ws->slices[i]->n;
        }
        m->pub.ns = ws->slices[0]->ns;
        m->pub.service = ws->slices[0]->service;
        m->pub.eps = m->arr;
        m->pub.version = next_version++;
    }
    ready_ips_adjust(s, ws->published, ws->key, kl, -1);
    ready_ips_adjust(s, m, ws->key, kl, 1);
    ws->published = m;
    if (m)
        pmap_put(s->eps, ws->key, kl, m, merged_free);
    else
        pmap_del(s->eps, ws->key, kl);
}

static wsvc *wsvc_get(store *s, const char *ns, const char *svc, size_t *kl)
{
    char key[512];
    *kl = nskey(key, sizeof key, ns, svc);
    if (!*kl)
        return NULL;
    wsvc *ws;
    HASH_FIND(hh, s->svcslices, key, *kl, ws);
    if (!ws && (ws = calloc(1, sizeof *ws + *kl))) {
        memcpy(ws->key, key, *kl);
        HASH_ADD(hh, s->svcslices, key, *kl, ws);
    }
    return ws;
}

/* Detach a blob from its service (if it had one) and republish. */
static void slice_detach(store *s, slice_blob *b)
{
    if (!b || !b->service)
        return;
    size_t kl;
    wsvc *ws = wsvc_get(s, b->ns, b->service, &kl);
    if (!ws)
        return;
    for (size_t i = 0; i < ws->n; i++)
        if (ws->slices[i] == b) {
            memmove(&ws->slices[i], &ws->slices[i + 1], (ws->n - i - 1) * sizeof *ws->slices);
            ws->n--;
            break;
        }
    publish_service_eps(s, ws, kl);
    if (ws->n == 0) {
        HASH_DEL(s->svcslices, ws);
        free(ws->slices);
        free(ws);
    }
}

static void slice_attach(store *s, slice_blob *b)
{
    if (!b->service)
        return;
    size_t kl;
    wsvc *ws = wsvc_get(s, b->ns, b->service, &kl);
    if (!ws)
        return;
    if (ws->n == ws->cap) {
        size_t nc = ws->cap ? ws->cap * 2 : 2;
        slice_blob **ns = realloc(ws->slices, nc * sizeof *ns);
        if (!ns)
            return;
        ws->slices = ns;
        ws->cap = nc;
    }
    ws->slices[ws->n++] = b;
    publish_service_eps(s, ws, kl);
}

int store_upsert_slice(store *s, const cJSON *obj)
{
    const char *why = NULL;
    slice_blob *b = decode_slice(obj, &why);
    if (!b) {
        logskip("endpointslice", obj, why);
        return -1;
    }
    wrec *w = rec_get(s, R_SLICE, b->ns, b->name, 1);
    if (!w) {
        slice_unref(b);
        return -1;
    }
    slice_blob *old = w->slice;
    if (old && old->service == b->service && b->service) {
        /* replace in place: keeps slice order stable */
        size_t kl;
        wsvc *ws = wsvc_get(s, b->ns, b->service, &kl);
        for (size_t i = 0; ws && i < ws->n; i++)
            if (ws->slices[i] == old)
                ws->slices[i] = b;
        if (ws)
            publish_service_eps(s, ws, kl);
    } else {
        slice_detach(s, old);
        slice_attach(s, b);
    }
    w->slice = b;
    slice_unref(old);
    bump(s);
    return 0;
}

static void remove_slice(store *s, wrec *w)
{
    slice_detach(s, w->slice);
    slice_unref(w->slice);
    HASH_DEL(s->recs[R_SLICE], w);
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

static st_pod *pod_copy(const st_pod *p)
{
    st_pod *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    *c = *p;
    c->name = strdup(p->name);
    return c;
}

static void podip_refresh(store *s, const st_ip *ip)
{
    wpodip *e;
    HASH_FIND(hh, s->podips, ip, sizeof *ip, e);
    const st_pod *best = NULL;
    int rank = 0;
    for (size_t i = 0; e && i < e->n; i++) {
        int r = pod_rank(e->pods[i]->pod);
        if (r > rank) {
            rank = r;
            best = e->pods[i]->pod;
        }
    }
    st_pod *c = best ? pod_copy(best) : NULL;
    if (c)
        pmap_put(s->pods, ip, sizeof *ip, c, pod_free);
    else
        pmap_del(s->pods, ip, sizeof *ip);
}

static void podip_link(store *s, wrec *w, int add)
{
    for (uint8_t i = 0; w->pod && i < w->pod->nips; i++) {
        const st_ip *ip = &w->pod->ips[i];
        wpodip *e;
        HASH_FIND(hh, s->podips, ip, sizeof *ip, e);
        if (add) {
            if (!e && (e = calloc(1, sizeof *e))) {
                e->ip = *ip;
                HASH_ADD(hh, s->podips, ip, sizeof e->ip, e);
            }
            wrec **np = e ? realloc(e->pods, (e->n + 1) * sizeof *np) : NULL;
            if (np) {
                e->pods = np;
                e->pods[e->n++] = w;
            }
        } else if (e) {
            for (size_t j = 0; j < e->n; j++)
                if (e->pods[j] == w) {
                    e->pods[j] = e->pods[--e->n];
                    break;
                }
            if (e->n == 0) {
                HASH_DEL(s->podips, e);
                free(e->pods);
                free(e);
            }
        }
        podip_refresh(s, ip);
    }
}

int store_upsert_pod(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_pod *p = decode_pod(obj, &why);
    if (!p) {
        logskip("pod", obj, why);
        return -1;
    }
    wrec *w = rec_get(s, R_POD, p->ns, p->name, 1);
    if (!w) {
        pod_free(p);
        return -1;
    }
    int changed_ip = !w->pod || w->pod->nips != p->nips ||
                     memcmp(w->pod->ips, p->ips, sizeof p->ips) != 0;
    podip_link(s, w, 0);
    pod_free(w->pod);
    w->pod = p;
    podip_link(s, w, 1);
    if (changed_ip)
        bump(s);
    return 0;
}

static void remove_pod(store *s, wrec *w)
{
    podip_link(s, w, 0);
    pod_free(w->pod);
    HASH_DEL(s->recs[R_POD], w);
    free(w);
    bump(s);
}

/* ---- nodes and namespaces ---------------------------------------------- */

int store_upsert_node(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_node *n = decode_node(obj, &s->opts, &why);
    if (!n) {
        logskip("node", obj, why);
        return -1;
    }
    wrec *w = rec_get(s, R_NODE, "", n->name, 1);
    if (!w) {
        node_free(n);
        return -1;
    }
    for (uint8_t i = 0; i < w->naddrs; i++)
        pmap_del(s->naddr, &w->addrs[i], sizeof w->addrs[i]);
    w->naddrs = 0;
    if (!w->addrs && !(w->addrs = calloc(8, sizeof *w->addrs))) {
        node_free(n);
        return -1;
    }
    for (uint8_t i = 0; i < n->naddrs && w->naddrs < 8; i++) {
        w->addrs[w->naddrs++] = n->addrs[i];
        pmap_put(s->naddr, &n->addrs[i], sizeof n->addrs[i], (void *)n->name, NULL);
    }
    pmap_put(s->nodes, n->name, strlen(n->name), n, node_free);
    atomic_fetch_add(&s->nodes_version, 1);
    return 0;
}

static void remove_node(store *s, wrec *w)
{
    for (uint8_t i = 0; i < w->naddrs; i++)
        pmap_del(s->naddr, &w->addrs[i], sizeof w->addrs[i]);
    const char *name = strchr(w->key, '/') + 1;
    pmap_del(s->nodes, name, strlen(name));
    atomic_fetch_add(&s->nodes_version, 1);
    HASH_DEL(s->recs[R_NODE], w);
    free(w->addrs);
    free(w);
}

int store_upsert_namespace(store *s, const cJSON *obj)
{
    const char *why = NULL;
    st_namespace *ns = decode_namespace(obj, &why);
    if (!ns) {
        logskip("namespace", obj, why);
        return -1;
    }
    if (!rec_get(s, R_NS, "", ns->name, 1)) {
        namespace_free(ns);
        return -1;
    }
    pmap_put(s->nss, ns->name, strlen(ns->name), ns, namespace_free);
    return 0;
}

static void remove_namespace(store *s, wrec *w)
{
    const char *name = strchr(w->key, '/') + 1;
    pmap_del(s->nss, name, strlen(name));
    HASH_DEL(s->recs[R_NS], w);
    free(w);
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
    case R_SVC: remove_service(s, w); break;
    case R_SLICE: remove_slice(s, w); break;
    case R_POD: remove_pod(s, w); break;
    case R_NODE: remove_node(s, w); break;
    default: remove_namespace(s, w); break;
    }
}

int store_remove(store *s, const char *resource, const cJSON *obj)
{
    int r = resource_index(resource);
    if (r < 0)
        return -1;
    const char *ns = (r == R_NODE || r == R_NS) ? "" : obj_ns(obj);
    wrec *w = rec_get(s, r, ns, obj_name(obj), 0);
    if (!w)
        return -1;
    remove_rec(s, r, w);
    return 0;
}

void store_relist_begin(store *s, const char *resource)
{
    int r = resource_index(resource);
    if (r < 0)
        return;
    s->gen[r]++;
    s->relisting[r] = 1;
}

void store_relist_end(store *s, const char *resource)
{
    int r = resource_index(resource);
    if (r < 0 || !s->relisting[r])
        return;
    wrec *w, *tmp;
    HASH_ITER(hh, s->recs[r], w, tmp) {
        if (w->gen != s->gen[r])
            remove_rec(s, r, w);
    }
    s->relisting[r] = 0;
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
    return kl ? pmap_get(s->svc, key, kl) : NULL;
}

const st_endpoints *store_endpoints(store *s, const char *ns, const char *service)
{
    char key[512];
    size_t kl = nskey(key, sizeof key, ns, service);
    merged *m = kl ? pmap_get(s->eps, key, kl) : NULL;
    return m ? &m->pub : NULL;
}

const st_namespace *store_namespace(store *s, const char *name)
{
    return pmap_get(s->nss, name, strlen(name));
}

const st_pod *store_pod_by_ip(store *s, const st_ip *ip)
{
    return pmap_get(s->pods, ip, sizeof *ip);
}

const st_node *store_node(store *s, const char *name)
{
    return name ? pmap_get(s->nodes, name, strlen(name)) : NULL;
}

const st_node *store_node_by_addr(store *s, const st_ip *ip)
{
    const char *name = pmap_get(s->naddr, ip, sizeof *ip);
    return store_node(s, name);
}

void store_services_by_ip(store *s, const st_ip *ip, st_service_cb cb, void *arg)
{
    const ip_svcs *l = pmap_get(s->svcip, ip, sizeof *ip);
    for (size_t i = 0; l && i < l->n; i++) {
        const st_service *svc = store_service(s, l->ns[i], l->name[i]);
        if (svc && cb(svc, arg))
            return;
    }
}

void store_endpoints_by_ip(store *s, const st_ip *ip, st_endpoint_cb cb, void *arg)
{
    const ip_svcs *l = pmap_get(s->epip, ip, sizeof *ip);
    for (size_t i = 0; l && i < l->n; i++) {
        const st_service *svc = store_service(s, l->ns[i], l->name[i]);
        const st_endpoints *eps = store_endpoints(s, l->ns[i], l->name[i]);
        for (size_t j = 0; svc && eps && j < eps->n; j++) {
            const st_endpoint *ep = &eps->eps[j];
            if (ep->ready && memcmp(&ep->ip, ip, sizeof *ip) == 0 && cb(svc, ep, arg))
                return;
        }
    }
}

struct each_svc { st_service_cb cb; void *arg; };
struct each_node { st_node_cb cb; void *arg; };

static int each_svc_cb(void *val, void *arg)
{
    struct each_svc *e = arg;
    return e->cb(val, e->arg);
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

uint32_t store_serial(const store *s)
{
    return atomic_load(&((store *)s)->serial);
}

size_t store_count(const store *s, const char *resource)
{
    int r = resource_index(resource);
    return r < 0 ? 0 : HASH_COUNT(s->recs[r]);
}

/* ---- life ------------------------------------------------------------- */

store *store_new(const store_opts *opts)
{
    store *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->opts.zone_label = opts && opts->zone_label ? opts->zone_label : "topology.kubernetes.io/zone";
    s->opts.region_label = opts && opts->region_label ? opts->region_label
                                                      : "topology.kubernetes.io/region";
    /* initial sizes for the scale limits of kube-api-and-performance.md B
     * (150k pods, 10k services, 5k nodes); the maps still grow beyond */
    pmap **maps[] = { &s->svc, &s->eps, &s->pods, &s->nodes, &s->naddr, &s->nss, &s->svcip, &s->epip };
    static const unsigned long sizes[] = { 16384, 16384, 131072, 8192, 16384, 1024, 16384, 131072 };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        if (!(*maps[i] = pmap_new_sized(sizes[i]))) {
            store_free(s);
            return NULL;
        }
    atomic_init(&s->serial, (uint32_t)time(NULL));
    return s;
}

void store_free(store *s)
{
    if (!s)
        return;
    for (int r = 0; r < R_COUNT; r++) {
        wrec *w, *tmp;
        HASH_ITER(hh, s->recs[r], w, tmp) remove_rec(s, r, w);
    }
    pmap_barrier();
    pmap **maps[] = { &s->svc, &s->eps, &s->pods, &s->nodes, &s->naddr, &s->nss, &s->svcip, &s->epip };
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        pmap_free(*maps[i], NULL);
    free(s);
}
