/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kubernetes.c — plugin glue: start, readiness, metrics, test hooks.
 *
 * start() attaches the instance's cluster context (context.c: the store and
 * the API client with one reflector per watched resource, adopted from the
 * instance a reload replaces when it is the same) and, at the first start
 * only, waits up to startup_timeout for the first lists (on the main
 * thread), logging CoreDNS's messages. ready() = every watch synced.
 *
 * Slice upserts outside a relist record
 * coredns_kubernetes_dns_programming_duration_seconds{service_kind} from the
 * endpoints.kubernetes.io/last-change-trigger-time annotation. As CoreDNS
 * (since its fix #7951), the slice's Service is looked up in the store by
 * the slice's kubernetes.io/service-name label and decides the
 * service_kind: a ClusterIP (NodePort, LoadBalancer) Service records
 * cluster_ip, a headless Service with a selector headless_with_selector
 * (only the endpoint controllers, which work for Services with a selector,
 * write the annotation). An ExternalName Service, a headless one without a
 * selector and a slice whose Service is not (yet) in the store record
 * nothing; headless_without_selector is never recorded, as in CoreDNS.
 *
 * Our own addresses (NS records) are the block's bind addresses, else every
 * non-loopback interface address; TOPODNS_SELF_IPS="ip,ip" overrides both
 * (tests and out-of-cluster setups).
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>
#include "k8s/k8s.h"
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "plugin/kubernetes/context.h"
#include "cluster/decode.h"
#include "topology/topology.h"
#include "common/log.h"
#include "runtime/metrics.h"
#include "server/server.h"

/* ---- our own addresses ------------------------------------------------------ */

static void add_self(kube *k, const char *text)
{
    st_ip ip;
    if (k->nself >= KUBE_MAX_SELF || st_parse_ip(text, &ip) < 0)
        return;
    for (int i = 0; i < k->nself; i++)
        if (!memcmp(&k->self[i], &ip, sizeof ip))
            return;
    k->self[k->nself++] = ip;
}

static int loopback(const char *text)
{
    st_ip ip;
    static const uint8_t v6lo[16] = { [15] = 1 };
    if (st_parse_ip(text, &ip) < 0)
        return 1;
    return ip.family == 4 ? ip.addr[0] == 127 : !memcmp(ip.addr, v6lo, 16);
}

static void interface_ips(kube *k)
{
    struct ifaddrs *ifa;
    if (getifaddrs(&ifa) < 0)
        return;
    for (struct ifaddrs *p = ifa; p; p = p->ifa_next) {
        char txt[INET6_ADDRSTRLEN];
        if (!p->ifa_addr)
            continue;
        if (p->ifa_addr->sa_family == AF_INET)
            inet_ntop(AF_INET, &((struct sockaddr_in *)p->ifa_addr)->sin_addr, txt, sizeof txt);
        else if (p->ifa_addr->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p->ifa_addr)->sin6_addr, txt, sizeof txt);
        else
            continue;
        if (!loopback(txt))
            add_self(k, txt);
    }
    freeifaddrs(ifa);
}

void kube_self_ips(kube *k)
{
    if (k->self_done)
        return;
    k->self_done = 1;
    const char *env = getenv("TOPODNS_SELF_IPS");
    if (env && *env) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", env);
        for (char *save, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
            add_self(k, t);
        return;
    }
    for (size_t i = 0; k->blk && i < k->blk->nbind; i++)
        if (!loopback(k->blk->bind[i]))
            add_self(k, k->blk->bind[i]);
    if (!k->blk || k->blk->nbind == 0)
        interface_ips(k);
}

/* ---- sync ------------------------------------------------------------------------ */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wall-clock bounded, as CoreDNS's ticker + timeout: a message every
 * 500 ms, at most startup_timeout in total even on a loaded machine. */
static void wait_sync(kube *k)
{
    double start = mono_now(), next_log = start + 0.5;
    while (!kube_synced(k)) {
        double now = mono_now();
        if (now - start >= k->startup_timeout) {
            log_warning("plugin/kubernetes: starting server with unsynced Kubernetes API");
            return;
        }
        if (now >= next_log) {
            log_info("plugin/kubernetes: waiting for Kubernetes API before starting server");
            next_log += 0.5;
        }
        double left = start + k->startup_timeout - now, step = next_log - now;
        if (step > left)
            step = left;
        if (step > 0.05)
            step = 0.05;
        usleep((useconds_t)(step > 0 ? step * 1e6 : 1000));
    }
}

/* ---- metrics ---------------------------------------------------------------------- */

static metric_family *programming_family(metrics_registry *reg)
{
    static const char *const labels[] = { "service_kind", NULL };
    double buckets[20];
    metrics_exponential_buckets(buckets, 20, 0.001, 2);
    return metrics_family(reg, "coredns_kubernetes_dns_programming_duration_seconds",
                          "Histogram of the time (in seconds) it took to program a dns instance.",
                          METRIC_HISTOGRAM, labels, buckets, 20);
}

void kube_record_programming(kube *k, const cJSON *slice)
{
    kube_programming_observe(k->m_programming, k->st, slice);
}

/* ---- lifecycle --------------------------------------------------------------------- */

/* The cluster context: adopted from the instance being replaced when it
 * has the same one, else made and started. At the first start the server
 * waits here for the first lists (up to startup_timeout, as CoreDNS); on a
 * reload it does not: the running instance keeps serving until this one is
 * ready (instance_ready()). */
static int kube_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    kube *k = inst;
    k->ins = ins;
    kube_self_ips(k);
    struct instance *prev = instance_previous(ins);
    if (kube_ctx_attach(k, prev) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: out of memory");
        return -1;
    }
    if (kube_ctx_start(k, err, errlen) < 0)
        return -1;
    if (!prev)
        wait_sync(k);
    return 0;
}

static void kube_destroy(void *inst)
{
    kube *k = inst;
    if (!k)
        return;
    kube_rend_free(k);
    kube_topo_free(k);
    kube_ctx_detach(k);
    kube_free_config(k);
}

static int kube_ready(void *inst)
{
    return kube_synced(inst);
}

/* ---- test hooks ------------------------------------------------------------------- */

store *kubernetes_store(void *inst)
{
    kube *k = inst;
    kube_self_ips(k);
    return kube_ctx_attach(k, NULL) < 0 ? NULL : k->st;
}

void kubernetes_set_synced(void *inst, int synced)
{
    kube *k = inst;
    if (kube_ctx_attach(k, NULL) == 0)
        atomic_store(&k->ctx->synced, synced ? 1 : 0);
}

void kubernetes_set_prerender(void *inst, int on)
{
    kube *k = inst;
    k->prerender = on;
    k->rend_unthreaded = on;
}

static int kube_setup_plugin(cf_disp *d, setup_ctx *ctx, void **inst)
{
    if (kube_setup(d, ctx, inst) < 0)
        return -1;
    kube *k = *inst;
    k->m_programming = programming_family(instance_metrics(ctx->ins));
    k->prerender = kube_rend_env();
    const char *why = NULL;
    if (resolv_search_read("/etc/resolv.conf", &k->search, &why) < 0)
        k->search.n = 0;            /* as CoreDNS: no search domains of our own */
    if (kube_publish_transfer(k, ctx->blk) < 0 || kube_publish_autopath(k, ctx->blk) < 0 ||
        kube_publish_external(k, ctx->blk) < 0) {
        kube_free_config(k);
        *inst = NULL;
        return cf_err(d, "plugin/kubernetes: out of memory");
    }
    return 0;
}

const plugin_def plugin_kubernetes = {
    .name = "kubernetes",
    .flags = PLUGIN_ONCE,
    .setup = kube_setup_plugin,
    .start = kube_start,
    .destroy = kube_destroy,
    .serve = kube_serve,
    .ready = kube_ready,
    .metadata = kube_metadata,
};
