/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_store.c — fuzz harness for what the API server sends us: any JSON
 * text fed to every store writer (as a Service, EndpointSlice, Pod, Node,
 * Namespace, CiliumNode, BlockAffinity, and as a removal) must be decoded or rejected without a crash,
 * leak or out-of-bounds read, and the store must keep answering: after each
 * input every service is looked up, its endpoints walked, every client of
 * the fixture located (by the default `pods` and by every source of
 * `locate` in turn) and the topology decision run for it.
 *
 * libFuzzer: scripts/fuzz (`make fuzz`) builds and runs it, starting from
 * tests/fuzz/corpus_store/ (objects of the topology fixture, alone and
 * several together). An input is one or more JSON texts one after another
 * (at most 40 are read): each goes to every writer, the store serves, then
 * each is removed as every resource (and when the input's length is odd
 * the store serves again), and pmap_barrier() runs the RCU callbacks that
 * free what was replaced or removed. So an input leaves the store as it
 * found it and its mallocs and frees balance (but for a string interned
 * for the first time: the store's string table keeps those, and an
 * endpoint/range conflict seen for the first time: the store remembers
 * it, to report it once), and
 * libFuzzer's per-input leak check, on for every input, scans the heap
 * only when something really leaked.
 *
 * One store and one engine serve every input. A fresh store (and engine)
 * per input would balance exactly, but measured three times the CPU per
 * input and about 10 ms of waiting: store_free() and the engine's free
 * destroy nine hash tables, and liburcu's cds_lfht_destroy() flushes its
 * resize worker's queue each time. (An engine kept across stores would
 * trust its node-set memo, keyed on the store's nodes version, in a store
 * it was not made from.)
 * Every 4096th input frees them (and the next makes new ones): the
 * string table keeps every new string a mutation brings, which over
 * millions of inputs would grow without bound; the 10 ms that costs come
 * once per 4096 inputs.
 * The shared store is made with store_opts.expected_pods = 1, its maps at
 * their 64-bucket minimum: serving walks every service, and walking a
 * map costs its bucket count (a store sized for 150k pods spent most of
 * an input there). The maps grow with an input's objects and shrink back.
 * In the libFuzzer build, rcu_now.h runs the RCU callbacks in this thread
 * at the barrier (after a grace period) instead of on liburcu's worker,
 * which sleeps up to 10 ms before each batch.
 *
 * Without FUZZING_LIBFUZZER a main() replays every object of
 * tests/data/topology/cluster.yaml (converted to JSON by the test's caller
 * into $FUZZ_STORE_CORPUS, one object per line) and, for each, a
 * deterministic sweep of damaged variants: every member removed, and every
 * value replaced by null, a huge negative number, a fraction, NaN (which
 * JSON text cannot carry but a decoder must still refuse), a string, an
 * empty object, an empty array and a huge string. The good objects must be accepted; then the
 * damaged ones go in on top and the store must still serve. `make check`
 * runs it that way through tests/fuzz/fuzz_store.sh, and then, with
 * --replay, every file of tests/fuzz/regress_store/ (once there is one).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "cluster/locator.h"
#include "cluster/pmap.h"
#include "cluster/store.h"
#include "topology/topology.h"
#ifdef FUZZING_LIBFUZZER
#include "quiet.h"
#include "rcu_now.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int registered;

static int (*const writers[])(store *, const cJSON *) = {
    store_upsert_service, store_upsert_slice, store_upsert_pod, store_upsert_node,
    store_upsert_namespace, store_upsert_ciliumnode, store_upsert_blockaffinity,
};
static const char *const resources[] = { "services", "endpointslices", "pods", "nodes", "namespaces",
                                         "ciliumnodes", "blockaffinities" };


/* A store and an engine with the default topology configuration (the
 * first call also registers the thread as a reader). */
static void start_one(store **s, topo_engine **e)
{
    if (!registered) {
        store_reader_register();
#ifdef FUZZING_LIBFUZZER
        fuzz_quiet_stdout();
#endif
        registered = 1;
    }
    store_opts o = { .expected_pods = 1 };     /* see the top comment */
    *s = store_new(&o);
    topo_cfg cfg = { .hints = TOPO_HINTS_COMPUTE, .itp = 1 };
    *e = topo_engine_new(&cfg, NULL);
    if (!*s || !*e)
        abort();
    topo_engine_bind(*e, *s, NULL, NULL);
}

static int visit(const st_service *svc, void *arg)
{
    topo_engine *e = arg;
    store *st = topo_engine_store(e);
    const st_endpoints *eps = store_endpoints(st, svc->ns, svc->name);
    size_t n = eps ? eps->n : 0;
    uint8_t *keep = malloc(n ? n : 1);
    static const char *const clients[] = { "127.0.1.1", "127.0.2.1", "127.0.10.3", "10.9.9.9", "fd00::1" };
    for (size_t c = 0; keep && c < sizeof clients / sizeof clients[0]; c++) {
        st_ip ip;
        topo_loc loc;
        topo_result res;
        if (st_parse_ip(clients[c], &ip) < 0)
            abort();
        static const loc_sources all = {
            LOC_SRC_COUNT, { LOC_SRC_CALICO, LOC_SRC_CILIUM, LOC_SRC_ENDPOINTS, LOC_SRC_PODCIDR,
                             LOC_SRC_PODS } };
        for (int how = 0; how < 2; how++) {
            if (how)
                locator_find_in(st, &ip, &all, "n1", &loc);
            else
                locator_find(st, &ip, &loc);
            topo_select(e, svc, eps, &loc, 3, keep, &res, NULL);
            for (size_t i = 0; i < n; i++)
                if (keep[i] && !eps->eps[i].ready)
                    abort();        /* only ready endpoints are ever kept */
        }
    }
    free(keep);
    return 0;
}

static void serve_everything(topo_engine *e)
{
    store_read_begin();
    store_foreach_service(topo_engine_store(e), visit, e);
    store_read_end();
}

static void write_all(store *s, const cJSON *o)
{
    for (size_t w = 0; w < sizeof writers / sizeof writers[0]; w++)
        writers[w](s, o);
}

static void remove_all(store *s, const cJSON *o)
{
    for (size_t r = 0; r < sizeof resources / sizeof resources[0]; r++)
        store_remove(s, resources[r], o);
}

enum { MAX_OBJECTS = 40, RENEW = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *objs[MAX_OBJECTS];
    int n = 0;
    for (const char *at = text, *end = NULL; n < MAX_OBJECTS && *at; at = end) {
        objs[n] = cJSON_ParseWithOpts(at, &end, 0);
        if (!objs[n])
            break;
        n++;
        while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t')
            end++;
    }
    free(text);
    static store *s;
    static topo_engine *e;
    static unsigned inputs;
    if (!s)
        start_one(&s, &e);
    if (n) {
        for (int i = 0; i < n; i++)
            write_all(s, objs[i]);
        serve_everything(e);
        for (int i = 0; i < n; i++)
            remove_all(s, objs[i]);
        if (size % 2)
            serve_everything(e);
        pmap_barrier();
    }
    for (int i = 0; i < n; i++)
        cJSON_Delete(objs[i]);
    if (++inputs % RENEW == 0) {    /* see the top comment */
        topo_engine_free(e);
        store_free(s);
        s = NULL;
    }
    return 0;
}

#ifndef FUZZING_LIBFUZZER
static store *S;                   /* main(): the one store of the sweep */
static topo_engine *E;
static long variants;

static void start(void)
{
    start_one(&S, &E);
}

static void feed(const cJSON *o, int remove_too)
{
    write_all(S, o);
    if (remove_too)
        remove_all(S, o);
    serve_everything(E);
}

static cJSON *replacement(int k)
{
    static char huge[70000];
    if (!huge[0])
        memset(huge, 'x', sizeof huge - 1);
    switch (k) {
    case 0: return cJSON_CreateNull();
    case 1: return cJSON_CreateNumber(-1e300);
    case 2: return cJSON_CreateNumber(80.5);
    case 3: return cJSON_CreateNumber(NAN);
    case 4: return cJSON_CreateString("");
    case 5: return cJSON_CreateObject();
    case 6: return cJSON_CreateArray();
    default: return cJSON_CreateString(huge);
    }
}

/* The member at depth-first position `target` of root (counting from 0), or
 * NULL; *parent gets its container. */
static cJSON *nth(cJSON *node, int *count, int target, cJSON **parent)
{
    for (cJSON *c = node->child; c; c = c->next) {
        if ((*count)++ == target) {
            *parent = node;
            return c;
        }
        cJSON *hit = nth(c, count, target, parent);
        if (hit)
            return hit;
    }
    return NULL;
}

/* Every member of root in turn: removed, then replaced by a value of each
 * other type; each damaged copy is fed to every writer. */
static void sweep(const cJSON *root)
{
    for (int target = 0;; target++) {
        for (int k = -1; k < 8; k++) {
            cJSON *copy = cJSON_Duplicate(root, 1), *parent = NULL;
            int count = 0;
            cJSON *victim = copy ? nth(copy, &count, target, &parent) : NULL;
            if (!victim) {
                cJSON_Delete(copy);
                return;
            }
            if (k < 0)
                cJSON_Delete(cJSON_DetachItemViaPointer(parent, victim));
            else if (cJSON_IsObject(parent))    /* keeps the member's name */
                cJSON_ReplaceItemInObjectCaseSensitive(parent, victim->string, replacement(k));
            else
                cJSON_ReplaceItemViaPointer(parent, victim, replacement(k));
            feed(copy, 0);
            variants++;
            cJSON_Delete(copy);
        }
    }
}

/* --replay FILE...: each file once through LLVMFuzzerTestOneInput (the
 * regression inputs of tests/fuzz/regress_store/, see fuzz_store.sh). */
static int replay(int n, char **files)
{
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(files[i], "rb");
        static uint8_t buf[1 << 20];
        size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
        if (!f) {
            fprintf(stderr, "cannot open %s\n", files[i]);
            return 1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("fuzz_store: %d regression inputs replayed\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--replay"))
        return replay(argc - 2, argv + 2);
    const char *path = argc > 1 ? argv[1] : getenv("FUZZ_STORE_CORPUS");
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f) {
        fprintf(stderr, "usage: fuzz_store FILE (one JSON object per line)\n");
        return 2;
    }
    start();
    char *line = NULL;
    size_t cap = 0;
    int objects = 0, rejected = 0;
    cJSON *all[512];
    while (getline(&line, &cap, f) > 0 && objects < 512) {
        cJSON *o = cJSON_Parse(line);
        if (!o)
            continue;
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
        int w = !cJSON_IsString(kind) ? -1 :
                !strcmp(kind->valuestring, "Service") ? 0 :
                !strcmp(kind->valuestring, "EndpointSlice") ? 1 :
                !strcmp(kind->valuestring, "Pod") ? 2 :
                !strcmp(kind->valuestring, "Node") ? 3 :
                !strcmp(kind->valuestring, "Namespace") ? 4 : -1;
        if (w >= 0 && writers[w](S, o) != 0)
            rejected++;             /* a good object must be accepted */
        all[objects++] = o;
    }
    free(line);
    fclose(f);
    serve_everything(E);
    for (int i = 0; i < objects; i++) {
        sweep(all[i]);
        cJSON_Delete(all[i]);
    }
    serve_everything(E);
    topo_engine_free(E);
    store_free(S);
    store_reader_unregister();
    printf("fuzz_store: %d objects, %ld damaged variants fed\n", objects, variants);
    printf("%d passed, %d failed\n", objects - rejected, rejected);
    return rejected ? 1 : 0;
}
#endif
