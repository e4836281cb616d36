/*
 * kubernetes.c — plugin glue: the API client, its reflectors and the store.
 *
 * start() builds a k8s_config from the options (kubeconfig, else endpoint
 * with tls, else in-cluster), creates the store and one reflector per
 * watched resource — services, endpointslices (unless noendpoints),
 * namespaces (filtered by namespace_labels), pods (only with `pods
 * verified`); `labels` filters services, slices and pods — whose handlers
 * are the store's writer functions, starts the API thread, and waits up to
 * startup_timeout for the first lists (on the main thread, at startup only),
 * logging CoreDNS's messages. ready() = every watch synced.
 *
 * Slice upserts outside a relist record
 * coredns_kubernetes_dns_programming_duration_seconds{service_kind} from the
 * endpoints.kubernetes.io/last-change-trigger-time annotation, for slices of
 * headless services with a selector (what CoreDNS records).
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
#include "cluster/decode.h"
#include "topology/topology.h"
#include "common/log.h"
#include "server/metrics.h"
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

int kube_synced(kube *k)
{
    if (atomic_load(&k->synced))
        return 1;
    if (k->client && k8s_client_synced(k->client)) {
        atomic_store(&k->synced, 1);
        return 1;
    }
    return 0;
}

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

/* RFC 3339 (fractions and offsets allowed) → Unix seconds; -1 when bad. */
static double parse_rfc3339(const char *s)
{
    struct tm tm = { 0 };
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        return -1;
    double frac = 0, scale = 0.1;
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    long off = 0;
    if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2)
            return -1;
        off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
    } else if (*p != 'Z' && *p != 'z') {
        return -1;
    }
    return (double)timegm(&tm) - (double)off + frac;
}

void kube_record_programming(kube *k, const cJSON *slice)
{
    if (!decode_obj_label(slice, "service.kubernetes.io/headless"))
        return;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(slice, "metadata"), "annotations");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(ann, "endpoints.kubernetes.io/last-change-trigger-time");
    if (!cJSON_IsString(t))
        return;
    double at = parse_rfc3339(t->valuestring);
    if (at < 0) {
        log_warning("plugin/kubernetes: DnsProgrammingLatency cannot be calculated for "
                    "EndpointSlice '%s/%s'; invalid annotation value %s",
                    decode_obj_ns(slice), decode_obj_name(slice), t->valuestring);
        return;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double d = (double)now.tv_sec + now.tv_nsec / 1e9 - at;
    static const char *const kind[] = { "headless_with_selector" };
    metrics_observe(k->m_programming, kind, d < 0 ? 0 : d);
}

/* ---- reflector handlers (API thread) ------------------------------------------ */

typedef struct kref {
    kube *k;
    const char *resource;
    int (*upsert)(store *, const cJSON *);
    int relisting;
} kref;

static void h_upsert(void *ctx, const cJSON *obj)
{
    kref *r = ctx;
    if (r->upsert == store_upsert_slice && !r->relisting)
        kube_record_programming(r->k, obj);
    r->upsert(r->k->st, obj);
}

static void h_remove(void *ctx, const cJSON *obj)
{
    kref *r = ctx;
    store_remove(r->k->st, r->resource, obj);
}

static void h_begin(void *ctx)
{
    kref *r = ctx;
    r->relisting = 1;
    store_relist_begin(r->k->st, r->resource);
}

static void h_end(void *ctx)
{
    kref *r = ctx;
    r->relisting = 0;
    store_relist_end(r->k->st, r->resource);
}

static int watch(kube *k, int i, const char *resource, const char *path, const char *sel,
                 int (*upsert)(store *, const cJSON *))
{
    kref *r = &k->refs[i];
    *r = (kref){ k, resource, upsert, 0 };
    k8s_handler h = { r, h_upsert, h_remove, h_begin, h_end };
    return k8s_reflect(k->client, path, sel, &h) ? 0 : -1;
}

/* ---- lifecycle --------------------------------------------------------------------- */

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

/* The store (this instance's cluster context), made on first use with
 * the topology engine's labels and bound to it. */
static int ensure_store(kube *k)
{
    if (k->st)
        return 0;
    kube_topo_attach(k);
    const topo_cfg *c = k->topo ? topo_engine_cfg(k->topo) : NULL;
    store_opts o = { c ? c->zone_label : NULL, c ? c->region_label : NULL };
    if (!(k->st = store_new(&o)))
        return -1;
    if (k->topo)
        topo_engine_bind(k->topo, k->st, NULL);
    return 0;
}

static int kube_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    kube *k = inst;
    k->ins = ins;
    kube_self_ips(k);
    if (ensure_store(k) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: out of memory");
        return -1;
    }
    k8s_config cfg;
    char why[512] = "";
    if (make_config(k, &cfg, why, sizeof why) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: %s", why);
        k8s_config_free(&cfg);
        return -1;
    }
    k->client = k8s_client_new(&cfg, instance_metrics(ins), why, sizeof why);
    k8s_config_free(&cfg);
    if (!k->client) {
        snprintf(err, errlen, "plugin/kubernetes: %s", why);
        return -1;
    }
    if (k->topo)
        topo_engine_bind(k->topo, k->st, k->client);
    if (!k->refs && !(k->refs = calloc(5, sizeof *k->refs))) {
        snprintf(err, errlen, "plugin/kubernetes: out of memory");
        return -1;
    }
    int rc = watch(k, 0, "services", "/api/v1/services", k->label_selector, store_upsert_service);
    if (rc == 0 && !k->noendpoints)
        rc = watch(k, 1, "endpointslices", "/apis/discovery.k8s.io/v1/endpointslices",
                   k->label_selector, store_upsert_slice);
    if (rc == 0)
        rc = watch(k, 2, "namespaces", "/api/v1/namespaces", k->ns_selector, store_upsert_namespace);
    /* topology locates clients: every pod (no label filter) and every node */
    if (rc == 0 && (k->pod_mode == POD_VERIFIED || k->topo))
        rc = watch(k, 3, "pods", "/api/v1/pods", k->topo ? NULL : k->label_selector,
                   store_upsert_pod);
    if (rc == 0 && k->topo)
        rc = watch(k, 4, "nodes", "/api/v1/nodes", NULL, store_upsert_node);
    if (rc < 0 || k8s_client_start(k->client, why, sizeof why) < 0) {
        snprintf(err, errlen, "plugin/kubernetes: %s", rc < 0 ? "cannot create a watch" : why);
        return -1;
    }
    wait_sync(k);
    return 0;
}

static void kube_stop(void *inst)
{
    kube *k = inst;
    if (k->client) {
        k8s_client_free(k->client);
        k->client = NULL;
    }
}

static void kube_destroy(void *inst)
{
    kube *k = inst;
    if (!k)
        return;
    kube_stop(k);
    if (k->st)
        store_free(k->st);
    free(k->refs);
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
    return ensure_store(k) < 0 ? NULL : k->st;
}

void kubernetes_set_synced(void *inst, int synced)
{
    atomic_store(&((kube *)inst)->synced, synced ? 1 : 0);
}

static int kube_setup_plugin(cf_disp *d, setup_ctx *ctx, void **inst)
{
    if (kube_setup(d, ctx, inst) < 0)
        return -1;
    ((kube *)*inst)->m_programming = programming_family(instance_metrics(ctx->ins));
    return 0;
}

const plugin_def plugin_kubernetes = {
    .name = "kubernetes",
    .flags = PLUGIN_ONCE,
    .setup = kube_setup_plugin,
    .start = kube_start,
    .stop = kube_stop,
    .destroy = kube_destroy,
    .serve = kube_serve,
    .ready = kube_ready,
};
