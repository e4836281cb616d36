/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim store — objects per kind in key order, one resourceVersion
 * counter and the event history.
 *
 * Like etcd, every change of any kind takes the next value of a single
 * global revision. Each kind keeps a uthash (key -> current version) and a
 * sorted array of the same entries (binary search + memmove on create and
 * delete), which gives ordered, resumable list scans like etcd's key ranges.
 *
 * The history is a ring of the last N events, each holding the new and the
 * previous version. It serves watch replay from a resourceVersion and
 * consistent paginated lists at an older revision: the state at R is the
 * current state with every event newer than R undone (newest first).
 * compact_rv is the newest revision no longer fully covered; anything older
 * answers 410 Expired.
 *
 * Saved states (store_save/store_restore) are what an etcd snapshot is: every
 * current version (referenced, not copied) and the revision. Restoring one
 * puts the store back at that revision with an empty history, the way an
 * etcd restore (without a revision bump) makes the API go back in time.
 * The store owns the saved states; store_free() releases them.
 */
#include "kubesim.h"

#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct ks_obj {
    ks_ver *cur;
    UT_hash_handle hh;
} ks_obj;

typedef struct kind_store {
    ks_obj *hash;
    ks_obj **sorted;
    size_t n, cap;
} kind_store;

static kind_store kinds[KS_KIND_MAX];
static uint64_t cur_rv = 1, compact_rv = 1;
static ks_event *ring;
static int bulk; /* appending unsorted; store_bulk_end() sorts */
static size_t ring_cap, ring_head, ring_len; /* head = oldest */

const char *const ks_evtype_names[3] = {"ADDED", "MODIFIED", "DELETED"};

void store_init(size_t history)
{
    ring_cap = history ? history : 1;
    ring = calloc(ring_cap, sizeof(*ring));
}

uint64_t store_rv(void) { return cur_rv; }
uint64_t store_compact_rv(void) { return compact_rv; }
uint64_t store_next_rv(void) { return cur_rv + 1; }
size_t store_count(int kind) { return kinds[kind].n; }

ks_ver *store_at(int kind, size_t i)
{
    return i < kinds[kind].n ? kinds[kind].sorted[i]->cur : NULL;
}

static void make_key(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "%s%s%s", ns ? ns : "", ns && *ns ? "/" : "", name);
}

ks_ver *store_get(int kind, const char *ns, const char *name)
{
    char key[600];
    ks_obj *o;
    make_key(key, sizeof key, ks_kinds[kind].namespaced ? ns : "", name);
    HASH_FIND_STR(kinds[kind].hash, key, o);
    return o ? o->cur : NULL;
}

/* first index whose key is > key (strict) or >= key */
static size_t bound(const kind_store *ks, const char *key, int strict)
{
    size_t lo = 0, hi = ks->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(ks->sorted[mid]->cur->key, key);
        if (c < 0 || (strict && c == 0))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void index_insert(kind_store *ks, ks_obj *o)
{
    size_t at;
    if (ks->n == ks->cap) {
        size_t nc = ks->cap ? ks->cap * 2 : 256;
        ks_obj **ns = realloc(ks->sorted, nc * sizeof(*ns));
        if (!ns)
            abort();
        ks->sorted = ns;
        ks->cap = nc;
    }
    at = bulk ? ks->n : bound(ks, o->cur->key, 0);
    memmove(&ks->sorted[at + 1], &ks->sorted[at], (ks->n - at) * sizeof(*ks->sorted));
    ks->sorted[at] = o;
    ks->n++;
    HASH_ADD_KEYPTR(hh, ks->hash, o->cur->key, strlen(o->cur->key), o);
}

static int obj_cmp(const void *a, const void *b)
{
    return strcmp((*(ks_obj *const *)a)->cur->key, (*(ks_obj *const *)b)->cur->key);
}

void store_bulk_begin(void)
{
    bulk = 1;
}

void store_bulk_end(void)
{
    int k;
    bulk = 0;
    for (k = 0; k < KS_KIND_MAX; k++)
        if (kinds[k].n > 1)
            qsort(kinds[k].sorted, kinds[k].n, sizeof(*kinds[k].sorted), obj_cmp);
}

static void index_remove(kind_store *ks, ks_obj *o)
{
    size_t at = bound(ks, o->cur->key, 0);
    if (at < ks->n && ks->sorted[at] == o) {
        memmove(&ks->sorted[at], &ks->sorted[at + 1], (ks->n - at - 1) * sizeof(*ks->sorted));
        ks->n--;
    }
    HASH_DEL(ks->hash, o);
}

static void apply_current(int type, ks_ver *obj)
{
    kind_store *ks = &kinds[obj->kind];
    ks_obj *o;
    HASH_FIND_STR(ks->hash, obj->key, o);
    if (type == EV_DELETED) {
        if (o) {
            index_remove(ks, o);
            ver_unref(o->cur);
            free(o);
        }
        return;
    }
    if (o) { /* same key string content, so the hash stays valid after swap */
        HASH_DEL(ks->hash, o);
        ver_unref(o->cur);
        ver_ref(obj);
        o->cur = obj;
        HASH_ADD_KEYPTR(hh, ks->hash, o->cur->key, strlen(o->cur->key), o);
        return;
    }
    o = calloc(1, sizeof(*o));
    if (!o)
        abort();
    ver_ref(obj);
    o->cur = obj;
    index_insert(ks, o);
}

static void ring_push(int type, ks_ver *obj, ks_ver *prev)
{
    ks_event *e;
    if (ring_len == ring_cap) {
        e = &ring[ring_head];
        compact_rv = e->rv;
        ver_unref(e->obj);
        ver_unref(e->prev);
        ring_head = (ring_head + 1) % ring_cap;
        ring_len--;
    }
    e = &ring[(ring_head + ring_len) % ring_cap];
    e->rv = obj->rv;
    e->type = type;
    e->obj = obj;
    e->prev = prev;
    ver_ref(obj);
    ver_ref(prev);
    ring_len++;
}

void store_commit(int type, ks_ver *obj, ks_ver *prev)
{
    ks_event ev;
    cur_rv = obj->rv;
    ver_ref(prev); /* keep it alive across apply_current */
    apply_current(type, obj);
    ring_push(type, obj, prev);
    ev.rv = obj->rv;
    ev.type = type;
    ev.obj = obj;
    ev.prev = prev;
    watch_dispatch(&ev);
    ver_unref(prev);
    http_rv_advanced();
}

static void drop_history(void)
{
    while (ring_len) {
        ks_event *e = &ring[ring_head];
        ver_unref(e->obj);
        ver_unref(e->prev);
        ring_head = (ring_head + 1) % ring_cap;
        ring_len--;
    }
}

void store_expire_history(void)
{
    drop_history();
    cur_rv++;
    compact_rv = cur_rv;
}

static ks_event *ring_at(size_t i)
{
    return &ring[(ring_head + i) % ring_cap];
}

/* index of the first event with rv > after */
static size_t ring_find(uint64_t after)
{
    size_t lo = 0, hi = ring_len;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ring_at(mid)->rv <= after)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int store_history_each(uint64_t after, void (*fn)(const ks_event *, void *), void *arg)
{
    size_t i;
    if (after < compact_rv)
        return -1;
    for (i = ring_find(after); i < ring_len; i++)
        fn(ring_at(i), arg);
    return 0;
}

/* ---------- saved states ---------- */

typedef struct saved {
    uint64_t rv;
    ks_ver **v[KS_KIND_MAX]; /* each kind in key order */
    size_t n[KS_KIND_MAX];
    struct saved *next;
    char name[];
} saved;

static saved *saves;

static saved **find_saved(const char *name)
{
    saved **p;
    for (p = &saves; *p; p = &(*p)->next)
        if (!strcmp((*p)->name, name))
            break;
    return p;
}

static void saved_free(saved *sv)
{
    int k;
    size_t i;
    for (k = 0; k < KS_KIND_MAX; k++) {
        for (i = 0; i < sv->n[k]; i++)
            ver_unref(sv->v[k][i]);
        free(sv->v[k]);
    }
    free(sv);
}

int store_saved(const char *name)
{
    return *find_saved(name) != NULL;
}

void store_save(const char *name)
{
    saved **p = find_saved(name), *sv = calloc(1, sizeof(*sv) + strlen(name) + 1);
    int k;
    size_t i;
    if (!sv)
        abort();
    strcpy(sv->name, name);
    sv->rv = cur_rv;
    for (k = 0; k < KS_KIND_MAX; k++) {
        sv->n[k] = kinds[k].n;
        sv->v[k] = calloc(kinds[k].n + 1, sizeof(*sv->v[k]));
        for (i = 0; i < kinds[k].n; i++) {
            sv->v[k][i] = kinds[k].sorted[i]->cur;
            ver_ref(sv->v[k][i]);
        }
    }
    if (*p) { /* replace the state of that name */
        sv->next = (*p)->next;
        saved_free(*p);
    }
    *p = sv;
}

static void drop_objects(int kind)
{
    ks_obj *o, *tmp;
    HASH_ITER(hh, kinds[kind].hash, o, tmp) {
        HASH_DEL(kinds[kind].hash, o);
        ver_unref(o->cur);
        free(o);
    }
    kinds[kind].n = 0;
}

int store_restore(const char *name)
{
    saved *sv = *find_saved(name);
    int k;
    size_t i;
    if (!sv)
        return -1;
    drop_history();
    for (k = 0; k < KS_KIND_MAX; k++) {
        drop_objects(k);
        for (i = 0; i < sv->n[k]; i++) /* in key order: each one appends */
            apply_current(EV_ADDED, sv->v[k][i]);
    }
    cur_rv = compact_rv = sv->rv;
    return 0;
}

/* ---------- scans at a revision ---------- */

typedef struct undo {
    const char *key;
    ks_ver *ver; /* state at the revision, NULL = absent */
    UT_hash_handle hh;
} undo;

static int undo_cmp(const void *a, const void *b)
{
    return strcmp((*(undo *const *)a)->key, (*(undo *const *)b)->key);
}

static int in_scope(const char *key, const char *prefix, size_t plen, const char *after)
{
    return (!plen || !strncmp(key, prefix, plen)) && (!after || strcmp(key, after) > 0);
}

/* Undo records (sorted by key) for kind, newer than at_rv, within scope. */
static undo **collect_undo(int kind, uint64_t at_rv, const char *prefix, size_t plen,
                           const char *after, size_t *count)
{
    undo *h = NULL, *u, *tmp;
    undo **arr;
    size_t i, n = 0;
    for (i = ring_len; i > 0 && ring_at(i - 1)->rv > at_rv; i--) {
        ks_event *e = ring_at(i - 1);
        if (e->obj->kind != kind || !in_scope(e->obj->key, prefix, plen, after))
            continue;
        HASH_FIND_STR(h, e->obj->key, u);
        if (!u) {
            u = calloc(1, sizeof(*u));
            u->key = e->obj->key;
            HASH_ADD_KEYPTR(hh, h, u->key, strlen(u->key), u);
            n++;
        }
        u->ver = e->type == EV_ADDED ? NULL : e->prev; /* oldest event wins */
    }
    arr = calloc(n + 1, sizeof(*arr));
    n = 0;
    HASH_ITER(hh, h, u, tmp) {
        HASH_DEL(h, u);
        arr[n++] = u;
    }
    qsort(arr, n, sizeof(*arr), undo_cmp);
    *count = n;
    return arr;
}

static void free_undo(undo **arr, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        free(arr[i]);
    free(arr);
}

int store_scan(int kind, const char *ns, uint64_t at_rv, const char *after,
               ks_visit fn, void *arg)
{
    kind_store *ks = &kinds[kind];
    char prefix[300] = "";
    size_t plen = 0, i, j = 0, nundo = 0;
    undo **ud = NULL;
    int stop = 0;

    if (at_rv && at_rv < cur_rv) {
        if (at_rv < compact_rv)
            return -1;
    } else {
        at_rv = 0;
    }
    if (ns && ks_kinds[kind].namespaced)
        plen = (size_t)snprintf(prefix, sizeof prefix, "%s/", ns);
    i = bound(ks, after && strcmp(after, prefix) > 0 ? after : prefix, after && strcmp(after, prefix) > 0);
    if (at_rv)
        ud = collect_undo(kind, at_rv, prefix, plen, after, &nundo);
    while (!stop) {
        ks_ver *cur = i < ks->n ? ks->sorted[i]->cur : NULL;
        undo *u = j < nundo ? ud[j] : NULL;
        int c;
        if (cur && plen && strncmp(cur->key, prefix, plen))
            cur = NULL;
        if (!cur && !u)
            break;
        c = !cur ? 1 : !u ? -1 : strcmp(cur->key, u->key);
        if (c < 0) {
            stop = fn(cur, arg);
            i++;
        } else {
            if (u->ver)
                stop = fn(u->ver, arg);
            j++;
            if (c == 0)
                i++;
        }
    }
    if (stop) { /* more keys left? */
        int more = j < nundo;
        if (!more && i < ks->n)
            more = !plen || !strncmp(ks->sorted[i]->cur->key, prefix, plen);
        free_undo(ud, nundo);
        return more;
    }
    free_undo(ud, nundo);
    return 0;
}

size_t store_count_after(int kind, const char *ns, const char *after)
{
    kind_store *ks = &kinds[kind];
    char prefix[300];
    size_t start, end;
    if (!ns || !ks_kinds[kind].namespaced) {
        start = after ? bound(ks, after, 1) : 0;
        return ks->n - start;
    }
    snprintf(prefix, sizeof prefix, "%s/", ns);
    start = after && strcmp(after, prefix) > 0 ? bound(ks, after, 1) : bound(ks, prefix, 0);
    prefix[strlen(prefix) - 1] = '/' + 1; /* "ns0": just past every "ns/..." key */
    end = bound(ks, prefix, 0);
    return end > start ? end - start : 0;
}

void store_free(void)
{
    int k;
    drop_history();
    free(ring);
    ring = NULL;
    while (saves) {
        saved *sv = saves;
        saves = sv->next;
        saved_free(sv);
    }
    for (k = 0; k < KS_KIND_MAX; k++) {
        drop_objects(k);
        free(kinds[k].sorted);
        memset(&kinds[k], 0, sizeof(kinds[k]));
    }
}
