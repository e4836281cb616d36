/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context.c — the kubernetes plugin's cluster context (kubernetes.h): the
 * store, the API client writing it and the reflectors' handlers.
 *
 * Threads: contexts are made, adopted and dropped on the loading thread
 * (setup/start/destroy); the reflector handlers below run on the context's
 * API thread, the store's only writer; workers read the store.
 *
 * A reload builds a new instance beside the running one. When the new
 * kubernetes stanza has the same fingerprint as one of the running
 * instance's (same tokens, zones and topology labels: the same watches
 * decoded the same way), the new plugin instance adopts that context: it
 * serves the synced store at once, the API server sees no relist, and
 * memory holds one copy of the cluster. Otherwise it builds its own and
 * the server keeps the old instance serving until the new one is synced
 * (instance_ready()).
 *
 * Renewal: the store's string table (strtab.h) only grows, and any user
 * who may write a Service, an EndpointSlice or a Pod can make it grow
 * (a new annotation value, port name, node name in a hint), so a long run
 * under churn would hold every string it ever saw. Once the table has
 * grown past its size after the first sync by more than that size or the
 * slack (TOPODNS_STRING_TABLE_SLACK, 8 MiB by default), whichever is more,
 * the API thread marks the context for renewal and asks the process for a
 * reload. That reload builds a new context instead of adopting this one:
 * a new store from a full list, with only the strings its objects use,
 * while this one serves until the new one is synced and then is freed
 * with its instance. Should the reload fail (a Corefile changed on disk
 * and broken), the old instance keeps serving, and the request is made
 * again after as much growth again.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "common/log.h"
#include "k8s/k8s.h"
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "plugin/kubernetes/context.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "topology/topology.h"

/* ---- reflector handlers (API thread) ------------------------------------------ */

typedef struct kref {
    kube_ctx *ctx;
    const char *resource;
    int (*upsert)(store *, const cJSON *);
    int relisting;
} kref;

enum { STRINGS_SLACK = 8u << 20 };

/* After each write: note the string table's size once synced, and ask for
 * a renewal once it has grown too far past it (the top comment). */
static void strings_check(kube_ctx *c)
{
    size_t now = store_strings_bytes(c->st);
    size_t slack = c->env && c->env->strings_slack ? c->env->strings_slack : STRINGS_SLACK;
    if (!c->strings_base) {
        if (c->client && k8s_client_synced(c->client)) {
            c->strings_base = now ? now : 1;
            c->renew_at = now + (now > slack ? now : slack);
        }
        return;
    }
    if (now < c->renew_at)
        return;
    c->renew_at = now + (c->strings_base > slack ? c->strings_base : slack);
    log_warning("plugin/kubernetes: the cluster store's string table has grown from %zu to %zu "
                "bytes since the sync (strings no object uses any more stay in it): reloading "
                "to build the store anew from a full list", c->strings_base, now);
    atomic_store(&c->renew, 1);
    if (c->env && c->env->request_reload)
        c->env->request_reload(c->env->reload_arg);
}

static void h_upsert(void *arg, const cJSON *obj)
{
    kref *r = arg;
    if (r->upsert == store_upsert_slice && !r->relisting)
        kube_programming_observe(r->ctx->m_programming, r->ctx->st, obj);
    r->upsert(r->ctx->st, obj);
    strings_check(r->ctx);
}

static void h_remove(void *arg, const cJSON *obj)
{
    kref *r = arg;
    store_remove(r->ctx->st, r->resource, obj);
}

static void h_begin(void *arg)
{
    kref *r = arg;
    r->relisting = 1;
    store_relist_begin(r->ctx->st, r->resource);
}

static void h_end(void *arg)
{
    kref *r = arg;
    r->relisting = 0;
    store_relist_end(r->ctx->st, r->resource);
}

enum { W_SVC, W_SLICE, W_NS, W_POD, W_NODE, W_SIMP, W_CILIUM, W_CALICO, W_COUNT };

static int watch(kube_ctx *c, int i, const char *resource, const char *path, const char *sel,
                 const char *fields, int (*upsert)(store *, const cJSON *))
{
    kref *r = &c->handlers[i];
    *r = (kref){ c, resource, upsert, 0 };
    k8s_handler h = { r, h_upsert, h_remove, h_begin, h_end };
    return k8s_reflect_fields(c->client, path, sel, fields, &h) ? 0 : -1;
}

/* ---- fingerprint ------------------------------------------------------------------ */

char *kube_fingerprint(const kube *k)
{
    const topo_cfg *c = k->topo ? topo_engine_cfg(k->topo) : NULL;
    size_t len = strlen(k->stanza ? k->stanza : "") + 64;
    for (int i = 0; i < k->nzones; i++)
        len += strlen(k->zones[i]) + 1;
    if (c)
        len += 16 * LOC_SRC_COUNT + strlen(c->zone_label ? c->zone_label : "") +
               strlen(c->region_label ? c->region_label : "") + strlen(c->node ? c->node : "");
    char *s = malloc(len);
    if (!s)
        return NULL;
    size_t o = (size_t)snprintf(s, len, "%s\nzones", k->stanza ? k->stanza : "");
    for (int i = 0; i < k->nzones; i++)
        o += (size_t)snprintf(s + o, len - o, " %s", k->zones[i]);
    snprintf(s + o, len - o, "\ntopology %d %s %s %s", c != NULL,
             c && c->zone_label ? c->zone_label : "-", c && c->region_label ? c->region_label : "-",
             c && c->node ? c->node : "-");
    /* the sources decide the watches: pods, CiliumNodes, BlockAffinities */
    o = strlen(s);
    o += (size_t)snprintf(s + o, len - o, "\nlocate");
    for (uint8_t i = 0; c && i < c->locate.n; i++)
        o += (size_t)snprintf(s + o, len - o, " %s", locator_source_name(c->locate.src[i]));
    return s;
}

/* ---- life ------------------------------------------------------------------------- */

/* An EndpointSlice endpoint whose nodeName is not the node of the range
 * holding its address (store.h): topodns_locator_conflicts_total{source}.
 * arg is the family, which lives as long as the process's registry. */
static void count_conflict(void *arg, int source)
{
    const char *v[] = { st_range_name(source) };
    metrics_add(arg, v, 1);
}

static kube_ctx *ctx_new(kube *k)
{
    const topo_cfg *c = k->topo ? topo_engine_cfg(k->topo) : NULL;
    store_opts o = { c ? c->zone_label : NULL, c ? c->region_label : NULL, k->nmc > 0, 0,
                     NULL, NULL, !k->endpoint_pod_names };
    static const char *const source[] = { "source", NULL };
    metric_family *conflicts = metrics_family(
        k->ins ? instance_metrics(k->ins) : NULL, "topodns_locator_conflicts_total",
        "EndpointSlice endpoints whose nodeName is not the node whose address range (source) "
        "holds their address, each address counted once.", METRIC_COUNTER, source, NULL, 0);
    if (c && conflicts) {
        o.conflict = count_conflict;
        o.conflict_arg = conflicts;
    }
    kube_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return NULL;
    ctx->refs = 1;
    atomic_init(&ctx->synced, 0);
    ctx->m_programming = k->m_programming;
    ctx->env = k->ins ? instance_env(k->ins) : NULL;
    atomic_init(&ctx->renew, 0);
    if (!(ctx->fingerprint = kube_fingerprint(k)) || !(ctx->st = store_new(&o)) ||
        !(ctx->handlers = calloc(W_COUNT, sizeof *ctx->handlers))) {
        free(ctx->fingerprint);
        store_free(ctx->st);
        free(ctx);
        return NULL;
    }
    return ctx;
}

static void ctx_free(kube_ctx *ctx)
{
    if (ctx->client)
        k8s_client_free(ctx->client);       /* the API thread stops: no writer left */
    store_free(ctx->st);
    free(ctx->handlers);
    free(ctx->fingerprint);
    free(ctx);
}

/* A started context of a kubernetes plugin of prev with this fingerprint,
 * unless it is being renewed. */
static kube_ctx *find_same(struct instance *prev, const char *fingerprint)
{
    const handler *hs[256];
    size_t n = prev ? instance_handlers(prev, hs, 256) : 0;
    for (size_t i = 0; i < n && i < 256; i++) {
        if (strcmp(hs[i]->def->name, "kubernetes") != 0)
            continue;
        const kube *o = hs[i]->inst;
        if (o->ctx && o->ctx->client && !atomic_load(&o->ctx->renew) &&
            !strcmp(o->ctx->fingerprint, fingerprint))
            return o->ctx;
    }
    return NULL;
}

/* The topology engine's Event poster (topo_post_fn): the API client's. */
static void post_api(void *client, const char *path, const char *json)
{
    k8s_client_post(client, path, json);
}

static void bind_topology(kube *k)
{
    if (k->topo)
        topo_engine_bind(k->topo, k->st, k->ctx->client ? post_api : NULL, k->ctx->client);
}

int kube_ctx_attach(kube *k, struct instance *prev)
{
    if (k->ctx)
        return 0;
    kube_topo_attach(k);
    char *fp = kube_fingerprint(k);
    if (!fp)
        return -1;
    kube_ctx *same = find_same(prev, fp);
    free(fp);
    if (same) {
        same->refs++;
        k->ctx = same;
    } else if (!(k->ctx = ctx_new(k))) {
        return -1;
    }
    k->st = k->ctx->st;
    bind_topology(k);
    return 0;
}

static int make_config(kube *k, k8s_config *cfg, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof *cfg);
    if (k->kubeconfig)
        return k8s_config_kubeconfig(cfg, k->kubeconfig, k->kcontext, err, errlen);
    if (k->endpoint)
        return k8s_config_endpoint(cfg, k->endpoint, k->tls_cert, k->tls_key, k->tls_ca,
                                   err, errlen);
    return k8s_config_incluster(cfg, err, errlen);
}

/* services, endpointslices (unless noendpoints), namespaces (filtered by
 * namespace_labels), serviceimports (multicluster, filtered by
 * namespace_labels); `labels` filters services, slices and pods.
 * Pods: with `pods verified` (filtered by `labels`); with topology in the
 * block and `pods` in its `locate` (the default), every pod, so that any
 * client address finds its pod. With `locate podcidr endpoints` (no
 * `pods`) and without `pods verified` no pod is ever listed or watched.
 * Nodes: with topology, every node; in node-local mode (`topology { node
 * NAME }`) only that Node (fieldSelector metadata.name=NAME) and no pod
 * watch for topology: every client is on NAME unless `pods verified`
 * brought its pod in (then its pod's node, whose labels are not known).
 * CiliumNodes / BlockAffinities (cluster-scoped) when `locate` has
 * `cilium` / `calico`. A cluster without that CRD answers the list with
 * 404: the reflector then counts the kind as listed and empty (ready is
 * not held back), logs it once and lists again with its backoff, so a CRD
 * installed later is picked up within 30 s (src/k8s/reflector.c). */
static int watch_all(kube *k, kube_ctx *c)
{
    const char *self = k->topo ? topo_engine_cfg(k->topo)->node : NULL;
    const loc_sources *loc = k->topo ? &topo_engine_cfg(k->topo)->locate : NULL;
    int topo_pods = k->topo && !self && locator_uses(loc, LOC_SRC_PODS);
    char fields[300] = "";
    if (self)
        snprintf(fields, sizeof fields, "metadata.name=%s", self);
    int rc = watch(c, W_SVC, "services", "/api/v1/services", k->label_selector, NULL,
                   store_upsert_service);
    if (rc == 0 && !k->noendpoints)
        rc = watch(c, W_SLICE, "endpointslices", "/apis/discovery.k8s.io/v1/endpointslices",
                   k->label_selector, NULL, store_upsert_slice);
    if (rc == 0)
        rc = watch(c, W_NS, "namespaces", "/api/v1/namespaces", k->ns_selector, NULL,
                   store_upsert_namespace);
    if (rc == 0 && (k->pod_mode == POD_VERIFIED || topo_pods))
        rc = watch(c, W_POD, "pods", "/api/v1/pods", topo_pods ? NULL : k->label_selector,
                   NULL, store_upsert_pod);
    if (rc == 0 && k->topo)
        rc = watch(c, W_NODE, "nodes", "/api/v1/nodes", NULL, self ? fields : NULL,
                   store_upsert_node);
    if (rc == 0 && k->topo && locator_uses(loc, LOC_SRC_CILIUM))
        rc = watch(c, W_CILIUM, "ciliumnodes", "/apis/cilium.io/v2/ciliumnodes", NULL, NULL,
                   store_upsert_ciliumnode);
    if (rc == 0 && k->topo && locator_uses(loc, LOC_SRC_CALICO))
        rc = watch(c, W_CALICO, "blockaffinities",
                   "/apis/crd.projectcalico.org/v1/blockaffinities", NULL, NULL,
                   store_upsert_blockaffinity);
    /* multicluster: ServiceImports, filtered by namespace_labels' selector
     * as CoreDNS lists them; the multicluster EndpointSlices come with the
     * slices above */
    if (rc == 0 && k->nmc > 0)
        rc = watch(c, W_SIMP, "serviceimports",
                   "/apis/multicluster.x-k8s.io/v1alpha1/serviceimports", k->ns_selector,
                   NULL, store_upsert_svcimport);
    return rc;
}

int kube_ctx_start(kube *k, char *err, size_t errlen)
{
    kube_ctx *c = k->ctx;
    if (c->client)
        return 0;                           /* adopted: running and synced */
    k8s_config cfg;
    char why[512] = "";
    if (make_config(k, &cfg, why, sizeof why) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: %s", why);
        k8s_config_free(&cfg);
        return -1;
    }
    c->client = k8s_client_new(&cfg, instance_metrics(k->ins), why, sizeof why);
    k8s_config_free(&cfg);
    if (!c->client) {
        snprintf(err, errlen, "plugin/kubernetes: %s", why);
        return -1;
    }
    bind_topology(k);
    if (watch_all(k, c) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: cannot create a watch");
        return -1;
    }
    if (k8s_client_start(c->client, why, sizeof why) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: %s", why);
        return -1;
    }
    return 0;
}

void kube_ctx_detach(kube *k)
{
    kube_ctx *c = k->ctx;
    k->ctx = NULL;
    k->st = NULL;
    assert(!c || c->refs > 0);
    if (c && --c->refs == 0)
        ctx_free(c);
}

/* ---- sync: the one place that says whether the watches synced -------------- */

int kube_synced(kube *k)
{
    kube_ctx *c = k->ctx;
    if (!c)
        return 0;
    if (atomic_load(&c->synced))
        return 1;
    if (c->client && k8s_client_synced(c->client)) {
        atomic_store(&c->synced, 1);
        return 1;
    }
    return 0;
}

/* The one place of the rule "SERVFAIL until the watches sync": a name the
 * cluster does not have is NXDOMAIN only once every watch listed; before,
 * the plugin cannot tell "absent" from "not listed yet" (CoreDNS). */
int kube_name_error_rcode(kube *k)
{
    return kube_synced(k) ? RC_NXDOMAIN : RC_SERVFAIL;
}
