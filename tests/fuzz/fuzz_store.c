/*
 * fuzz_store.c — fuzz harness for what the API server sends us: any JSON
 * text fed to every store writer (as a Service, EndpointSlice, Pod, Node,
 * Namespace, and as a removal) must be decoded or rejected without a crash,
 * leak or out-of-bounds read, and the store must keep answering: after each
 * input every service is looked up, its endpoints walked, every client of
 * the fixture located and the topology decision run for it.
 *
 * libFuzzer: scripts/fuzz (`make fuzz`) builds and runs it, starting from
 * tests/fuzz/corpus_store/ (single objects of the topology fixture).
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
#include "cluster/store.h"
#include "topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static store *S;
static topo_engine *E;

static int (*const writers[])(store *, const cJSON *) = {
    store_upsert_service, store_upsert_slice, store_upsert_pod, store_upsert_node,
    store_upsert_namespace,
};
static const char *const resources[] = { "services", "endpointslices", "pods", "nodes", "namespaces" };

/* The store and an engine with the default topology configuration. */
static void start(void)
{
    store_reader_register();
    S = store_new(NULL);
    topo_cfg cfg = { .hints = TOPO_HINTS_COMPUTE, .itp = 1 };
    E = topo_engine_new(&cfg, NULL);
    if (!S || !E)
        abort();
    topo_engine_bind(E, S, NULL);
}

static int visit(const st_service *svc, void *arg)
{
    (void)arg;
    const st_endpoints *eps = store_endpoints(S, svc->ns, svc->name);
    size_t n = eps ? eps->n : 0;
    uint8_t *keep = malloc(n ? n : 1);
    static const char *const clients[] = { "127.0.1.1", "127.0.2.1", "127.0.10.3", "10.9.9.9", "fd00::1" };
    for (size_t c = 0; keep && c < sizeof clients / sizeof clients[0]; c++) {
        st_ip ip;
        topo_loc loc;
        topo_result res;
        if (st_parse_ip(clients[c], &ip) < 0)
            abort();
        locator_find(S, &ip, &loc);
        topo_select(E, svc, eps, &loc, 3, keep, &res, NULL);
        for (size_t i = 0; i < n; i++)
            if (keep[i] && !eps->eps[i].ready)
                abort();            /* only ready endpoints are ever kept */
    }
    free(keep);
    return 0;
}

static void serve_everything(void)
{
    store_read_begin();
    store_foreach_service(S, visit, NULL);
    store_read_end();
}

static void feed(const cJSON *o, int remove_too)
{
    for (size_t w = 0; w < sizeof writers / sizeof writers[0]; w++)
        writers[w](S, o);
    if (remove_too)
        for (size_t r = 0; r < sizeof resources / sizeof resources[0]; r++)
            store_remove(S, resources[r], o);
    serve_everything();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!S)
        start();
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (o) {
        feed(o, size % 2);
        cJSON_Delete(o);
    }
    return 0;
}

#ifndef FUZZING_LIBFUZZER
static long variants;

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
    serve_everything();
    for (int i = 0; i < objects; i++) {
        sweep(all[i]);
        cJSON_Delete(all[i]);
    }
    serve_everything();
    topo_engine_free(E);
    store_free(S);
    store_reader_unregister();
    printf("fuzz_store: %d objects, %ld damaged variants fed\n", objects, variants);
    printf("%d passed, %d failed\n", objects - rejected, rejected);
    return rejected ? 1 : 0;
}
#endif
