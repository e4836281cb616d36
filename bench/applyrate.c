/* SPDX-License-Identifier: Apache-2.0 */
/*
 * applyrate — how many watch events per second topodns's API-thread code
 * applies, without the network and without kubesim's own speed in the way.
 *
 *   bench/applyrate DIR
 *
 * DIR holds what bench/churn recorded from kubesim: the list pages
 * RES.0.json, RES.1.json, ... (RES = services, endpointslices, pods, nodes,
 * namespaces; one consistent snapshot) and RES.watch, the raw body of a
 * watch on pods and endpointslices from the list's resourceVersion while
 * kubesim churned. For each resource a real reflector (src/k8s/reflector.c)
 * is driven over a scripted transport like the unit test's: the pages are
 * fed as list responses, then the watch body in 16 KiB reads (curl's
 * default), and every event goes through the reflector's framing and JSON
 * parsing into the real cluster store (src/cluster/), exactly as on the API
 * thread. Prints the list time, then events, seconds and events/s for the
 * watch part (CPU time of this single thread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "cluster/store.h"
#include "k8s/reflector.h"

static store *S;
static unsigned long events;

#define GLUE(kind, fn, res) \
    static void up_##kind(void *c, const cJSON *o) { (void)c; fn(S, o); } \
    static void rm_##kind(void *c, const cJSON *o) { (void)c; store_remove(S, res, o); } \
    static void rb_##kind(void *c) { (void)c; store_relist_begin(S, res); } \
    static void re_##kind(void *c) { (void)c; store_relist_end(S, res); }
GLUE(svc, store_upsert_service, "services")
GLUE(eps, store_upsert_slice, "endpointslices")
GLUE(pod, store_upsert_pod, "pods")
GLUE(node, store_upsert_node, "nodes")
GLUE(ns, store_upsert_namespace, "namespaces")

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int o_start(void *ctx, const char *url) { (void)ctx; (void)url; return 0; }
static void o_schedule(void *ctx, double d) { (void)ctx; (void)d; }
static double o_now(void *ctx) { (void)ctx; return cpu_now(); }
static double o_random(void *ctx) { (void)ctx; return 0.5; }
static void o_applied(void *ctx) { (void)ctx; events++; }
static const refl_ops OPS = { o_start, o_schedule, o_now, o_random, NULL, NULL, o_applied, NULL };

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *b = malloc(len > 0 ? (size_t)len : 1);
    *n = b ? fread(b, 1, len > 0 ? (size_t)len : 0, f) : 0;
    fclose(f);
    return b;
}

/* Feed body in reads of at most chunk bytes. */
static void feed(refl *r, const char *body, size_t n, size_t chunk)
{
    refl_on_headers(r, 200, NULL);
    for (size_t off = 0; off < n; off += chunk)
        if (refl_on_body(r, body + off, n - off < chunk ? n - off : chunk) < 0)
            break;
    refl_on_done(r, 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: applyrate DIR\n");
        return 2;
    }
    static const struct {
        const char *res, *path;
        k8s_handler h;
    } R[] = {
        { "services", "/api/v1/services", { NULL, up_svc, rm_svc, rb_svc, re_svc } },
        { "endpointslices", "/apis/discovery.k8s.io/v1/endpointslices", { NULL, up_eps, rm_eps, rb_eps, re_eps } },
        { "pods", "/api/v1/pods", { NULL, up_pod, rm_pod, rb_pod, re_pod } },
        { "nodes", "/api/v1/nodes", { NULL, up_node, rm_node, rb_node, re_node } },
        { "namespaces", "/api/v1/namespaces", { NULL, up_ns, rm_ns, rb_ns, re_ns } },
    };
    enum { NR = sizeof R / sizeof R[0] };
    refl *rf[NR];
    store_opts so = { 0 };
    S = store_new(&so);
    double t0 = cpu_now();
    for (int i = 0; i < NR; i++) {
        rf[i] = refl_new("http://bench", R[i].path, NULL, &R[i].h, &OPS, NULL);
        refl_start(rf[i]);
        for (int page = 0;; page++) {
            char path[4096];
            size_t n;
            snprintf(path, sizeof path, "%s/%s.%d.json", argv[1], R[i].res, page);
            char *b = slurp(path, &n);
            if (!b)
                break;
            feed(rf[i], b, n, 1 << 16);
            free(b);
        }
        if (!refl_synced(rf[i]))
            fprintf(stderr, "applyrate: %s did not sync from %s\n", R[i].res, argv[1]);
    }
    double t1 = cpu_now();
    printf("list: %zu services, %zu endpointslices, %zu pods, %zu nodes in %.2f s CPU\n",
           store_count(S, "services"), store_count(S, "endpointslices"), store_count(S, "pods"),
           store_count(S, "nodes"), t1 - t0);
    unsigned long total = 0;
    double spent = 0;
    for (int i = 0; i < NR; i++) {
        char path[4096];
        size_t n;
        snprintf(path, sizeof path, "%s/%s.watch", argv[1], R[i].res);
        char *b = slurp(path, &n);
        if (!b)
            continue;
        events = 0;
        double a = cpu_now();
        feed(rf[i], b, n, 16384);
        double d = cpu_now() - a;
        free(b);
        printf("watch %-15s %8lu events %8.1f MB in %6.3f s CPU: %8.0f events/s\n", R[i].res,
               events, n / 1e6, d, d > 0 ? events / d : 0);
        total += events;
        spent += d;
    }
    printf("applied %lu events in %.3f s CPU: %.0f events/s\n", total, spent,
           spent > 0 ? total / spent : 0);
    for (int i = 0; i < NR; i++)
        refl_free(rf[i]);
    store_free(S);
    return 0;
}
