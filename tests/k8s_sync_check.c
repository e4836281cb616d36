/* SPDX-License-Identifier: Apache-2.0 */
/*
 * k8s_sync_check — reflects services, endpointslices, pods, nodes and
 * namespaces from an API server into the cluster store with the real client
 * and prints the store's counts whenever they change:
 *   counts synced=1 services=N endpointslices=N pods=N nodes=N namespaces=N
 * Used by tests/integration/k8s_client.sh against kubesim.
 *   k8s_sync_check URL [TOKEN_FILE] SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/thread.h>
#include <cjson/cJSON.h>
#include "cluster/store.h"
#include "k8s/k8s.h"

static store *S;

#define GLUE(kind, fn, res) \
    static void up_##kind(void *c, const cJSON *o) { fn(S, o); } \
    static void rm_##kind(void *c, const cJSON *o) { store_remove(S, res, o); } \
    static void rb_##kind(void *c) { store_relist_begin(S, res); } \
    static void re_##kind(void *c) { store_relist_end(S, res); }
GLUE(svc, store_upsert_service, "services")
GLUE(eps, store_upsert_slice, "endpointslices")
GLUE(pod, store_upsert_pod, "pods")
GLUE(node, store_upsert_node, "nodes")
GLUE(ns, store_upsert_namespace, "namespaces")

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    evthread_use_pthreads();
    store_reader_register();
    S = store_new(NULL);
    char err[512];
    k8s_config cfg;
    if (k8s_config_endpoint(&cfg, argv[1], NULL, NULL, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (argc > 3)
        cfg.token_file = strdup(argv[2]);
    int seconds = atoi(argv[argc - 1]);
    k8s_client *c = k8s_client_new(&cfg, NULL, err, sizeof err);
    k8s_config_free(&cfg);
    if (!c) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    k8s_handler h[] = {
        { NULL, up_svc, rm_svc, rb_svc, re_svc }, { NULL, up_eps, rm_eps, rb_eps, re_eps },
        { NULL, up_pod, rm_pod, rb_pod, re_pod }, { NULL, up_node, rm_node, rb_node, re_node },
        { NULL, up_ns, rm_ns, rb_ns, re_ns },
    };
    k8s_reflect(c, "/api/v1/services", NULL, &h[0]);
    k8s_reflect(c, "/apis/discovery.k8s.io/v1/endpointslices", NULL, &h[1]);
    k8s_reflect(c, "/api/v1/pods", NULL, &h[2]);
    k8s_reflect(c, "/api/v1/nodes", NULL, &h[3]);
    k8s_reflect(c, "/api/v1/namespaces", NULL, &h[4]);
    if (k8s_client_start(c, err, sizeof err) < 0)
        return 1;
    char last[256] = "";
    for (int i = 0; i < seconds * 10; i++) {
        char now[256];
        snprintf(now, sizeof now, "counts synced=%d services=%zu endpointslices=%zu pods=%zu nodes=%zu namespaces=%zu",
                 k8s_client_synced(c), store_count(S, "services"), store_count(S, "endpointslices"),
                 store_count(S, "pods"), store_count(S, "nodes"), store_count(S, "namespaces"));
        if (strcmp(now, last)) {
            puts(now);
            snprintf(last, sizeof last, "%s", now);
        }
        usleep(100000);
    }
    k8s_client_free(c);
    store_free(S);
    return 0;
}
