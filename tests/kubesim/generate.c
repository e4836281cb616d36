/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim generator — synthetic clusters (--generate) and churn (--churn).
 *
 * --generate nodes=N,pods=P,services=S,zones=Z,endpointsPerService=E builds:
 *   - Z zones "region-1a".. in region "region-1"; nodes "node-00000".. spread
 *     round-robin over zones, with hostname/zone/region/os/arch/instance-type
 *     labels, capacity and allocatable cpu (4, 8 or 16 cores), InternalIP
 *     10.0.x.y, Ready condition and nodeInfo;
 *   - max(1, S/50) namespaces "ns-0".. (plus default and kube-system);
 *   - services "svc-00000".. (every 5th headless; every 7th from #3 with
 *     trafficDistribution PreferClose; every 11th from #4 annotated
 *     topology-mode Auto), one TCP port 80 -> 8080;
 *   - pods as a Deployment (headless: StatefulSet, with hostname/subdomain)
 *     makes them, about 3.5 KB each with managedFields, ownerReferences,
 *     a projected token volume and full status; service s owns pods
 *     [s*E, (s+1)*E) (E defaults to ceil(P/S)), the rest are unowned; pod j
 *     runs on node (j*7919) mod N with IP 10.(128+j/65536).x.y (with
 *     podCIDRs=1: inside its node's podCIDR, see pod_cidr_bits); every 50th
 *     pod is not ready;
 *   - EndpointSlices of at most 100 endpoints per service with addresses,
 *     ready/serving/terminating, nodeName, zone, targetRef, hostname for
 *     headless services and own-zone hints for PreferClose/Auto services.
 * JSON is formatted directly (no cJSON) so 150k pods take about a second.
 * Every object takes its own resourceVersion, as real creates would.
 *
 * --churn N makes N changes per second (10 ticks/s): alternately a pod's
 * readiness flips (Ready/ContainersReady conditions, container ready) and a
 * random EndpointSlice endpoint's ready/serving flips, each as an update.
 * The fault API changes the rate at run time ({"churn":N}, 0 stops it).
 */
#include "kubesim.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---------- spec parsing ---------- */

static int pod_node_of(int j, int nodes) { return (int)(((long long)j * 7919) % nodes); }

/* podCIDRs=1: the node CIDRs are consecutive blocks of 10.128.0.0/9 just
 * large enough for the most pods a node runs (at least a /24), the pods of
 * a node numbered from the block's first address + 1. */
static int pod_cidr_bits(ks_gen *g, char *err, size_t errlen)
{
    int *per = calloc((size_t)(g->nodes ? g->nodes : 1), sizeof(int)), most = 0, j;
    if (!per) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (j = 0; j < g->pods; j++)
        if (++per[pod_node_of(j, g->nodes)] > most)
            most = per[pod_node_of(j, g->nodes)];
    free(per);
    for (g->host_bits = 8; (1L << g->host_bits) < (long)most + 2; g->host_bits++)
        ;
    if ((long long)g->nodes << g->host_bits > 1LL << 23) {
        snprintf(err, errlen, "podCIDRs=1: %d nodes of /%d (for %d pods a node) do not fit in "
                 "10.128.0.0/9", g->nodes, 32 - g->host_bits, most);
        return -1;
    }
    return 0;
}

int gen_parse(const char *spec, ks_gen *g, char *err, size_t errlen)
{
    char *dup = strdup(spec), *save = NULL, *tok;
    memset(g, 0, sizeof(*g));
    g->nodes = 3;
    g->zones = 3;
    for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '='), *end;
        long v;
        int *dst = NULL;
        if (!eq)
            goto bad;
        *eq = '\0';
        v = strtol(eq + 1, &end, 10);
        if (*end || v < 0 || v > 10000000)
            goto bad;
        if (!strcmp(tok, "nodes")) dst = &g->nodes;
        else if (!strcmp(tok, "pods")) dst = &g->pods;
        else if (!strcmp(tok, "services")) dst = &g->services;
        else if (!strcmp(tok, "zones")) dst = &g->zones;
        else if (!strcmp(tok, "endpointsPerService")) dst = &g->eps;
        else if (!strcmp(tok, "podCIDRs") && v <= 1) dst = &g->pod_cidrs;
        else goto bad;
        *dst = (int)v;
    }
    free(dup);
    if (g->zones < 1)
        g->zones = 1;
    if (g->pods > 0 && g->nodes < 1) {
        snprintf(err, errlen, "pods need at least one node");
        return -1;
    }
    if (!g->eps && g->services)
        g->eps = (g->pods + g->services - 1) / g->services;
    if (g->pod_cidrs && pod_cidr_bits(g, err, errlen) < 0)
        return -1;
    return 0;
bad:
    snprintf(err, errlen, "bad --generate item '%s' (want nodes=,pods=,services=,zones=,"
             "endpointsPerService=,podCIDRs=0|1)", tok);
    free(dup);
    return -1;
}

/* ---------- string builder ---------- */

typedef struct sb {
    char *s;
    size_t n, cap;
} sb;

static void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...)
{
    va_list ap;
    int need;
    for (;;) {
        va_start(ap, fmt);
        need = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (need >= 0 && (size_t)need < b->cap - b->n) {
            b->n += (size_t)need;
            return;
        }
        b->cap = (b->cap + (size_t)need + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s)
            abort();
    }
}

/* JSON of generated objects goes to 64 MiB arena blocks backed by huge
 * pages when the kernel allows (madvise): half the startup time of 150k pods
 * is page faults otherwise. Blocks are released only at exit. */
#define ARENA_BLOCK (64u << 20)

typedef struct arena_blk {
    struct arena_blk *next;
    size_t used, size;
} arena_blk;

static arena_blk *arena;

static char *arena_alloc(size_t n)
{
    arena_blk *b = arena;
    char *p;
    if (!b || b->used + n > b->size) {
        size_t sz = n + sizeof(arena_blk) > ARENA_BLOCK ? n + sizeof(arena_blk) : ARENA_BLOCK;
        void *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            abort();
#ifdef MADV_HUGEPAGE
        madvise(m, sz, MADV_HUGEPAGE);
#endif
        b = m;
        b->size = sz;
        b->used = sizeof(arena_blk);
        b->next = arena;
        arena = b;
    }
    p = (char *)b + b->used;
    b->used += n;
    return p;
}

void gen_free(void)
{
    while (arena) {
        arena_blk *n = arena->next;
        munmap(arena, arena->size);
        arena = n;
    }
}

static char *sb_take(sb *b, size_t *len)
{
    char *s = arena_alloc(b->n + 1);
    memcpy(s, b->s, b->n + 1);
    *len = b->n;
    b->n = 0;
    b->s[0] = '\0';
    return s;
}

/* ---------- deterministic names ---------- */

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void det_uuid(char out[37], uint64_t salt, uint64_t i)
{
    uint64_t a = mix(salt * 0x100000001ULL + i), b = mix(a ^ salt);
    snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
             (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
             (unsigned long long)(b & 0xffffffffffffULL));
}

static void det_suffix(char *out, size_t len, uint64_t seed)
{
    static const char al[] = "bcdfghjklmnpqrstvwxz2456789";
    size_t i;
    for (i = 0; i + 1 < len; i++) {
        out[i] = al[seed % 27];
        seed /= 27;
    }
    out[len - 1] = '\0';
}

typedef struct gen_ctx {
    const ks_gen *g;
    int *pod_idx; /* podCIDRs=1: pod j is the pod_idx[j]-th of its node */
    int nns;
    char now[32];
    char (*zones)[32];
    sb b;
} gen_ctx;

static void zone_name(char out[32], int z, int nz)
{
    if (nz <= 26)
        snprintf(out, 32, "region-1%c", 'a' + z);
    else
        snprintf(out, 32, "region-1-z%d", z);
}

static void node_ip(char out[20], int i)
{
    snprintf(out, 20, "10.%d.%d.%d", (i >> 16) & 127, (i >> 8) & 255, i & 255);
}

/* podCIDRs=1: the first address of node i's block, as a host-order integer */
static uint32_t node_block(const gen_ctx *c, int i)
{
    return (10u << 24 | 128u << 16) + ((uint32_t)i << c->g->host_bits);
}

static void ip4(char out[20], uint32_t a)
{
    snprintf(out, 20, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

static void node_cidr(char out[40], const gen_ctx *c, int i)
{
    char ip[20];
    if (!c->g->pod_cidrs) {
        snprintf(out, 40, "10.244.%d.0/24", i & 255);
        return;
    }
    ip4(ip, node_block(c, i));
    snprintf(out, 40, "%s/%d", ip, 32 - c->g->host_bits);
}

static void pod_ip(char out[20], const gen_ctx *c, int j)
{
    if (c->g->pod_cidrs)
        ip4(out, node_block(c, pod_node_of(j, c->g->nodes)) + 1 + (uint32_t)c->pod_idx[j]);
    else
        snprintf(out, 20, "10.%d.%d.%d", 128 + ((j >> 16) & 127), (j >> 8) & 255, j & 255);
}

static int headless(int s) { return s % 5 == 0; }
static int prefer_close(int s) { return s % 7 == 3; }
static int auto_mode(int s) { return s % 11 == 4; }
static int pod_ready(int j) { return j % 50 != 49; }
static int pod_node(const gen_ctx *c, int j) { return pod_node_of(j, c->g->nodes); }
static int pod_service(const gen_ctx *c, int j)
{
    return c->g->eps && j / c->g->eps < c->g->services ? j / c->g->eps : -1;
}

static void ns_name(char out[16], const gen_ctx *c, int s)
{
    snprintf(out, 16, "ns-%d", s % c->nns);
}

static void pod_name(char out[80], const gen_ctx *c, int j)
{
    int s = pod_service(c, j);
    char h[11], r[6];
    if (s >= 0 && headless(s)) {
        snprintf(out, 80, "svc-%05d-%d", s, j - s * c->g->eps);
        return;
    }
    det_suffix(h, sizeof h, mix((uint64_t)(s + 1) * 31));
    det_suffix(r, sizeof r, mix((uint64_t)j * 131 + 7));
    if (s >= 0)
        snprintf(out, 80, "svc-%05d-%s-%s", s, h, r);
    else
        snprintf(out, 80, "solo-%s-%s", h, r);
}

static void commit_new(int kind, const char *ns, const char *name, sb *b,
                       const char *const *labels, int nl, const char *const *fields)
{
    size_t len;
    char *json = sb_take(b, &len);
    ks_ver *v = ver_new(kind, store_next_rv(), ns, name, json, len, labels, nl, fields);
    if (!v)
        abort();
    v->json_arena = 1;
    store_commit(EV_ADDED, v, NULL);
    ver_unref(v);
}

#define META(c, kindname, apiv, name, uid) \
    sb_printf(&(c)->b, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"name\":\"%s\"," \
              "\"uid\":\"%s\",\"resourceVersion\":\"%llu\",\"creationTimestamp\":\"%s\"", \
              kindname, apiv, name, uid, (unsigned long long)store_next_rv(), (c)->now)

/* ---------- namespaces and nodes ---------- */

static void gen_namespace(gen_ctx *c, const char *name, int i)
{
    char uid[37];
    const char *labels[2] = {"kubernetes.io/metadata.name", name};
    if (store_get(K_NAMESPACE, "", name))
        return;
    det_uuid(uid, 1, (uint64_t)i);
    META(c, "Namespace", "v1", name, uid);
    sb_printf(&c->b, ",\"labels\":{\"kubernetes.io/metadata.name\":\"%s\"}},\"spec\":"
              "{\"finalizers\":[\"kubernetes\"]},\"status\":{\"phase\":\"Active\"}}", name);
    commit_new(K_NAMESPACE, "", name, &c->b, labels, 1, NULL);
}

static void gen_node(gen_ctx *c, int i)
{
    static const char *const cpu[3][2] = {{"4", "3920m"}, {"8", "7910m"}, {"16", "15890m"}};
    static const char *const mem[3][2] = {{"16Gi", "15Gi"}, {"32Gi", "30Gi"}, {"64Gi", "61Gi"}};
    static const char *const itype[3] = {"m5.xlarge", "m5.2xlarge", "m5.4xlarge"};
    char name[32], uid[37], ip[20], cidr[40];
    const char *zone = c->zones[i % c->g->zones];
    const char *labels[16] = {"beta.kubernetes.io/arch", "amd64", "beta.kubernetes.io/os", "linux",
                              "kubernetes.io/arch", "amd64", "kubernetes.io/hostname", name,
                              "kubernetes.io/os", "linux", "node.kubernetes.io/instance-type",
                              itype[i % 3], "topology.kubernetes.io/region", "region-1",
                              "topology.kubernetes.io/zone", zone};
    const char *fields[F_COUNT] = {[F_UNSCHED] = "false"};
    int t = i % 3;

    snprintf(name, sizeof name, "node-%05d", i);
    det_uuid(uid, 2, (uint64_t)i);
    node_ip(ip, i);
    node_cidr(cidr, c, i);
    META(c, "Node", "v1", name, uid);
    sb_printf(&c->b, ",\"labels\":{\"beta.kubernetes.io/arch\":\"amd64\",\"beta.kubernetes.io/os\":"
              "\"linux\",\"kubernetes.io/arch\":\"amd64\",\"kubernetes.io/hostname\":\"%s\","
              "\"kubernetes.io/os\":\"linux\",\"node.kubernetes.io/instance-type\":\"%s\","
              "\"topology.kubernetes.io/region\":\"region-1\",\"topology.kubernetes.io/zone\":"
              "\"%s\"},\"annotations\":{\"node.alpha.kubernetes.io/ttl\":\"0\","
              "\"volumes.kubernetes.io/controller-managed-attach-detach\":\"true\"}},"
              "\"spec\":{\"podCIDR\":\"%s\",\"podCIDRs\":[\"%s\"],"
              "\"providerID\":\"kubesim://%s\"},\"status\":{\"capacity\":{\"cpu\":\"%s\","
              "\"ephemeral-storage\":\"101430960Ki\",\"memory\":\"%s\",\"pods\":\"110\"},"
              "\"allocatable\":{\"cpu\":\"%s\",\"ephemeral-storage\":\"93478772582\","
              "\"memory\":\"%s\",\"pods\":\"110\"},\"conditions\":[{\"type\":\"Ready\","
              "\"status\":\"True\",\"lastHeartbeatTime\":\"%s\",\"lastTransitionTime\":\"%s\","
              "\"reason\":\"KubeletReady\",\"message\":\"kubelet is posting ready status\"}],"
              "\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"%s\"},{\"type\":"
              "\"Hostname\",\"address\":\"%s\"}],\"daemonEndpoints\":{\"kubeletEndpoint\":"
              "{\"Port\":10250}},\"nodeInfo\":{\"machineID\":\"%.32s\",\"systemUUID\":\"%s\","
              "\"bootID\":\"%s\",\"kernelVersion\":\"6.1.0-18-cloud-amd64\",\"osImage\":"
              "\"Debian GNU/Linux 12 (bookworm)\",\"containerRuntimeVersion\":"
              "\"containerd://1.7.13\",\"kubeletVersion\":\"v1.32.0\",\"kubeProxyVersion\":"
              "\"v1.32.0\",\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"}}}",
              name, itype[t], zone, cidr, cidr, name, cpu[t][0], mem[t][0], cpu[t][1],
              mem[t][1], c->now, c->now, ip, name, uid, uid, uid);
    commit_new(K_NODE, "", name, &c->b, labels, 8, fields);
}

/* ---------- services ---------- */

static void gen_service(gen_ctx *c, int s)
{
    char name[32], ns[16], uid[37], ip[20];
    const char *labels[2] = {"app", name};
    int k = s + 10;

    snprintf(name, sizeof name, "svc-%05d", s);
    ns_name(ns, c, s);
    det_uuid(uid, 3, (uint64_t)s);
    if (headless(s))
        snprintf(ip, sizeof ip, "None");
    else
        snprintf(ip, sizeof ip, "10.%d.%d.%d", 100 + ((k >> 16) & 15), (k >> 8) & 255, k & 255);
    META(c, "Service", "v1", name, uid);
    sb_printf(&c->b, ",\"namespace\":\"%s\",\"labels\":{\"app\":\"%s\"}", ns, name);
    if (auto_mode(s))
        sb_printf(&c->b, ",\"annotations\":{\"service.kubernetes.io/topology-mode\":\"Auto\"}");
    sb_printf(&c->b, "},\"spec\":{\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":80,"
              "\"targetPort\":8080}],\"selector\":{\"app\":\"%s\"},\"clusterIP\":\"%s\","
              "\"clusterIPs\":[\"%s\"],\"type\":\"ClusterIP\",\"sessionAffinity\":\"None\","
              "\"ipFamilies\":[\"IPv4\"],\"ipFamilyPolicy\":\"SingleStack\","
              "\"internalTrafficPolicy\":\"Cluster\"%s},\"status\":{\"loadBalancer\":{}}}",
              name, ip, ip, prefer_close(s) ? ",\"trafficDistribution\":\"PreferClose\"" : "");
    commit_new(K_SERVICE, ns, name, &c->b, labels, 1, NULL);
}

/* ---------- pods ---------- */

#define COND(t, st) "{\"type\":\"" t "\",\"status\":\"" st "\",\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\"}"
#define MF_COND(t) "\"k:{\\\"type\\\":\\\"" t "\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}"

static void pod_metadata(gen_ctx *c, int s, const char *name, const char *ns,
                         const char *uid, const char *app, const char *hash, const char *ip)
{
    char owner[80], ouid[37];
    int sts = s >= 0 && headless(s);
    if (sts)
        snprintf(owner, sizeof owner, "%s", app);
    else
        snprintf(owner, sizeof owner, "%s-%s", app, hash);
    det_uuid(ouid, 5, (uint64_t)(s + 1));
    META(c, "Pod", "v1", name, uid);
    sb_printf(&c->b, ",\"generateName\":\"%s-\",\"namespace\":\"%s\",\"labels\":{\"app\":\"%s\","
              "\"pod-template-hash\":\"%s\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
              "\"kind\":\"%s\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
              "\"blockOwnerDeletion\":true}],\"managedFields\":[{\"manager\":"
              "\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
              "\"time\":\"%s\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":"
              "{\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:app\":{},\"f:pod-template-hash\":{}},"
              "\"f:ownerReferences\":{\".\":{},\"k:{\\\"uid\\\":\\\"%s\\\"}\":{}}},\"f:spec\":"
              "{\"f:containers\":{\"k:{\\\"name\\\":\\\"app\\\"}\":{\".\":{},\"f:image\":{},"
              "\"f:imagePullPolicy\":{},\"f:name\":{},\"f:ports\":{\".\":{},"
              "\"k:{\\\"containerPort\\\":8080,\\\"protocol\\\":\\\"TCP\\\"}\":{\".\":{},"
              "\"f:containerPort\":{},\"f:name\":{},\"f:protocol\":{}}},\"f:resources\":{\".\":{},"
              "\"f:limits\":{\".\":{},\"f:memory\":{}},\"f:requests\":{\".\":{},\"f:cpu\":{},"
              "\"f:memory\":{}}},\"f:terminationMessagePath\":{},\"f:terminationMessagePolicy\":{}}},"
              "\"f:dnsPolicy\":{},\"f:enableServiceLinks\":{},\"f:restartPolicy\":{},"
              "\"f:schedulerName\":{},\"f:securityContext\":{},\"f:terminationGracePeriodSeconds\":{}}}},"
              "{\"manager\":\"kubelet\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"%s\","
              "\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{"
              MF_COND("ContainersReady") "," MF_COND("Initialized") "," MF_COND("PodScheduled") ","
              MF_COND("Ready") "},\"f:containerStatuses\":{},\"f:hostIP\":{},\"f:hostIPs\":{},"
              "\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"%s\\\"}\":"
              "{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}},\"subresource\":\"status\"}]}",
              app, ns, app, hash, sts ? "StatefulSet" : "ReplicaSet", owner, ouid, c->now, ouid,
              c->now, ip);
}

static void pod_spec(gen_ctx *c, int s, const char *name, const char *node, const char *vol)
{
    sb_printf(&c->b, ",\"spec\":{\"volumes\":[{\"name\":\"%s\",\"projected\":{\"sources\":["
              "{\"serviceAccountToken\":{\"expirationSeconds\":3607,\"path\":\"token\"}},"
              "{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":[{\"key\":\"ca.crt\","
              "\"path\":\"ca.crt\"}]}},{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\","
              "\"fieldRef\":{\"apiVersion\":\"v1\",\"fieldPath\":\"metadata.namespace\"}}]}}],"
              "\"defaultMode\":420}}],\"containers\":[{\"name\":\"app\",\"image\":"
              "\"registry.example/app:1.4.2\",\"ports\":[{\"name\":\"http\",\"containerPort\":8080,"
              "\"protocol\":\"TCP\"}],\"resources\":{\"limits\":{\"memory\":\"256Mi\"},"
              "\"requests\":{\"cpu\":\"100m\",\"memory\":\"128Mi\"}},\"volumeMounts\":[{\"name\":"
              "\"%s\",\"readOnly\":true,\"mountPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],"
              "\"terminationMessagePath\":\"/dev/termination-log\",\"terminationMessagePolicy\":"
              "\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restartPolicy\":\"Always\","
              "\"terminationGracePeriodSeconds\":30,\"dnsPolicy\":\"ClusterFirst\","
              "\"serviceAccountName\":\"default\",\"serviceAccount\":\"default\",\"nodeName\":\"%s\","
              "\"securityContext\":{},\"schedulerName\":\"default-scheduler\",\"tolerations\":["
              "{\"key\":\"node.kubernetes.io/not-ready\",\"operator\":\"Exists\",\"effect\":"
              "\"NoExecute\",\"tolerationSeconds\":300},{\"key\":\"node.kubernetes.io/unreachable\","
              "\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}],"
              "\"priority\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"",
              vol, vol, node);
    if (s >= 0 && headless(s))
        sb_printf(&c->b, ",\"hostname\":\"%s\",\"subdomain\":\"svc-%05d\"", name, s);
    sb_printf(&c->b, "}");
}

static void pod_status(gen_ctx *c, int j, const char *ip, const char *hostip, int ready)
{
    const char *r = ready ? "True" : "False";
    uint64_t h = mix((uint64_t)j * 977);
    sb_printf(&c->b, ",\"status\":{\"phase\":\"Running\",\"conditions\":[" COND("Initialized", "True")
              ",{\"type\":\"Ready\",\"status\":\"%s\",\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\"}"
              ",{\"type\":\"ContainersReady\",\"status\":\"%s\",\"lastProbeTime\":null,\"lastTransitionTime\":\"%s\"},"
              COND("PodScheduled", "True") "],\"hostIP\":\"%s\",\"hostIPs\":[{\"ip\":\"%s\"}],"
              "\"podIP\":\"%s\",\"podIPs\":[{\"ip\":\"%s\"}],\"startTime\":\"%s\","
              "\"containerStatuses\":[{\"name\":\"app\",\"state\":{\"running\":{\"startedAt\":\"%s\"}},"
              "\"lastState\":{},\"ready\":%s,\"restartCount\":0,\"image\":\"registry.example/app:1.4.2\","
              "\"imageID\":\"registry.example/app@sha256:%016llx%016llx%016llx%016llx\","
              "\"containerID\":\"containerd://%016llx%016llx%016llx%016llx\",\"started\":true}],"
              "\"qosClass\":\"Burstable\"}}",
              c->now, r, c->now, r, c->now, c->now, hostip, hostip, ip, ip, c->now, c->now,
              ready ? "true" : "false", 0x1234abcdULL, 0x5678ef01ULL, 0x9abc2345ULL, 0xdef06789ULL,
              (unsigned long long)h, (unsigned long long)mix(h), (unsigned long long)mix(h + 1),
              (unsigned long long)mix(h + 2));
}

static void gen_pod(gen_ctx *c, int j)
{
    int s = pod_service(c, j), n = pod_node(c, j);
    char name[80], ns[16], uid[37], ip[20], hostip[20], node[32], app[32], hash[11], vol[40];
    const char *labels[4] = {"app", app, "pod-template-hash", hash};
    const char *fields[F_COUNT] = {[F_NODENAME] = node, [F_PHASE] = "Running", [F_PODIP] = ip,
                                   [F_RESTART] = "Always", [F_SCHED] = "default-scheduler",
                                   [F_SA] = "default", [F_HOSTNET] = "false"};
    pod_name(name, c, j);
    if (s >= 0) {
        ns_name(ns, c, s);
        snprintf(app, sizeof app, "svc-%05d", s);
    } else {
        snprintf(ns, sizeof ns, "ns-%d", j % c->nns);
        snprintf(app, sizeof app, "solo");
    }
    det_suffix(hash, sizeof hash, mix((uint64_t)(s + 1) * 31));
    det_uuid(uid, 4, (uint64_t)j);
    pod_ip(ip, c, j);
    node_ip(hostip, n);
    snprintf(node, sizeof node, "node-%05d", n);
    snprintf(vol, sizeof vol, "kube-api-access-%.5s", uid);
    pod_metadata(c, s, name, ns, uid, app, hash, ip);
    pod_spec(c, s, name, node, vol);
    pod_status(c, j, ip, hostip, pod_ready(j));
    commit_new(K_POD, ns, name, &c->b, labels, 2, fields);
}

/* ---------- endpointslices ---------- */

static void slice_endpoint(gen_ctx *c, int s, int j, const char *ns, int hints)
{
    char name[80], uid[37], ip[20];
    int n = pod_node(c, j), ready = pod_ready(j);
    const char *zone = c->zones[n % c->g->zones];
    pod_name(name, c, j);
    det_uuid(uid, 4, (uint64_t)j);
    pod_ip(ip, c, j);
    sb_printf(&c->b, "{\"addresses\":[\"%s\"],\"conditions\":{\"ready\":%s,\"serving\":%s,"
              "\"terminating\":false}", ip, ready ? "true" : "false", ready ? "true" : "false");
    if (headless(s))
        sb_printf(&c->b, ",\"hostname\":\"%s\"", name);
    sb_printf(&c->b, ",\"targetRef\":{\"kind\":\"Pod\",\"namespace\":\"%s\",\"name\":\"%s\","
              "\"uid\":\"%s\"},\"nodeName\":\"node-%05d\",\"zone\":\"%s\"", ns, name, uid, n, zone);
    if (hints)
        sb_printf(&c->b, ",\"hints\":{\"forZones\":[{\"name\":\"%s\"}]}", zone);
    sb_printf(&c->b, "}");
}

static void gen_slice(gen_ctx *c, int s, int first, int last, int part)
{
    char svc[32], ns[16], name[48], uid[37], suid[37], sfx[6];
    const char *labels[6] = {"endpointslice.kubernetes.io/managed-by", "endpointslice-controller.k8s.io",
                             "kubernetes.io/service-name", svc, "service.kubernetes.io/headless", ""};
    int j, hints = prefer_close(s) || auto_mode(s);

    snprintf(svc, sizeof svc, "svc-%05d", s);
    ns_name(ns, c, s);
    det_suffix(sfx, sizeof sfx, mix((uint64_t)s * 1000 + (uint64_t)part));
    snprintf(name, sizeof name, "%s-%s", svc, sfx);
    det_uuid(uid, 6, (uint64_t)s * 1000 + (uint64_t)part);
    det_uuid(suid, 3, (uint64_t)s);
    META(c, "EndpointSlice", "discovery.k8s.io/v1", name, uid);
    sb_printf(&c->b, ",\"generateName\":\"%s-\",\"namespace\":\"%s\",\"generation\":1,\"labels\":{"
              "\"endpointslice.kubernetes.io/managed-by\":\"endpointslice-controller.k8s.io\","
              "\"kubernetes.io/service-name\":\"%s\"%s},\"annotations\":{"
              "\"endpoints.kubernetes.io/last-change-trigger-time\":\"%s\"},\"ownerReferences\":"
              "[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"name\":\"%s\",\"uid\":\"%s\","
              "\"controller\":true,\"blockOwnerDeletion\":true}]},\"addressType\":\"IPv4\","
              "\"endpoints\":[", svc, ns, svc,
              headless(s) ? ",\"service.kubernetes.io/headless\":\"\"" : "", c->now, svc, suid);
    for (j = first; j < last; j++) {
        if (j > first)
            sb_printf(&c->b, ",");
        slice_endpoint(c, s, j, ns, hints);
    }
    sb_printf(&c->b, "],\"ports\":[{\"name\":\"http\",\"protocol\":\"TCP\",\"port\":8080}]}");
    commit_new(K_ENDPOINTSLICE, ns, name, &c->b, labels, headless(s) ? 3 : 2, NULL);
}

static void gen_slices(gen_ctx *c, int s)
{
    int first = s * c->g->eps, last = first + c->g->eps, part = 0;
    if (last > c->g->pods)
        last = c->g->pods;
    if (first >= last) { /* a service without pods still gets an empty slice */
        gen_slice(c, s, 0, 0, 0);
        return;
    }
    for (; first < last; first += 100)
        gen_slice(c, s, first, first + 100 < last ? first + 100 : last, part++);
}

void gen_run(const ks_gen *g)
{
    gen_ctx c = {0};
    int i;
    c.g = g;
    c.nns = g->services / 50 > 1 ? g->services / 50 : 1;
    ks_now(c.now);
    c.zones = calloc((size_t)g->zones, sizeof(*c.zones));
    for (i = 0; i < g->zones; i++)
        zone_name(c.zones[i], i, g->zones);
    c.b.cap = 65536;
    c.b.s = malloc(c.b.cap);
    c.b.s[0] = '\0';
    if (g->pod_cidrs) {
        int *seen = calloc((size_t)(g->nodes ? g->nodes : 1), sizeof(int));
        c.pod_idx = calloc((size_t)g->pods + 1, sizeof(int));
        if (!seen || !c.pod_idx)
            abort();
        for (i = 0; i < g->pods; i++)
            c.pod_idx[i] = seen[pod_node(&c, i)]++;
        free(seen);
    }
    store_bulk_begin();
    for (i = 0; i < c.nns; i++) {
        char ns[16];
        snprintf(ns, sizeof ns, "ns-%d", i);
        gen_namespace(&c, ns, i);
    }
    for (i = 0; i < g->nodes; i++)
        gen_node(&c, i);
    for (i = 0; i < g->services; i++)
        gen_service(&c, i);
    for (i = 0; i < g->pods; i++)
        gen_pod(&c, i);
    for (i = 0; i < g->services; i++)
        gen_slices(&c, i);
    store_bulk_end();
    free(c.b.s);
    free(c.zones);
    free(c.pod_idx);
}

/* ---------- churn ---------- */

static struct event *churn_ev;
static double churn_rate, churn_acc;
static unsigned long churn_n;

static cJSON *find_by(cJSON *arr, const char *key, const char *val)
{
    cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        cJSON *k = cJSON_GetObjectItemCaseSensitive(it, key);
        if (cJSON_IsString(k) && !strcmp(k->valuestring, val))
            return it;
    }
    return NULL;
}

static void set_status_str(cJSON *o, const char *v)
{
    if (o) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, "status");
        cJSON_AddStringToObject(o, "status", v);
    }
}

static void flip_pod(void)
{
    size_t n = store_count(K_POD);
    ks_ver *v = n ? store_at(K_POD, ks_rand() % n) : NULL;
    cJSON *o, *st, *conds, *cs, *ready;
    ks_err e;
    int now;
    if (!v || !(o = ver_parse(v)))
        return;
    st = cJSON_GetObjectItemCaseSensitive(o, "status");
    conds = cJSON_GetObjectItemCaseSensitive(st, "conditions");
    ready = find_by(conds, "type", "Ready");
    now = !(ready && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ready, "status")) &&
            !strcmp(cJSON_GetObjectItemCaseSensitive(ready, "status")->valuestring, "True"));
    set_status_str(ready, now ? "True" : "False");
    set_status_str(find_by(conds, "type", "ContainersReady"), now ? "True" : "False");
    cs = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(st, "containerStatuses"), 0);
    if (cs)
        cJSON_ReplaceItemInObjectCaseSensitive(cs, "ready", cJSON_CreateBool(now));
    ver_unref(obj_update(K_POD, v->ns, v->name, o, 0, &e));
    cJSON_Delete(o);
}

static void flip_slice(void)
{
    size_t n = store_count(K_ENDPOINTSLICE);
    ks_ver *v = n ? store_at(K_ENDPOINTSLICE, ks_rand() % n) : NULL;
    cJSON *o, *eps, *ep, *cond;
    ks_err e;
    int now, cnt;
    if (!v || !(o = ver_parse(v)))
        return;
    eps = cJSON_GetObjectItemCaseSensitive(o, "endpoints");
    cnt = cJSON_IsArray(eps) ? cJSON_GetArraySize(eps) : 0;
    ep = cnt ? cJSON_GetArrayItem(eps, (int)(ks_rand() % (uint64_t)cnt)) : NULL;
    cond = ep ? cJSON_GetObjectItemCaseSensitive(ep, "conditions") : NULL;
    if (cJSON_IsObject(cond)) {
        now = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cond, "ready"));
        cJSON_DeleteItemFromObjectCaseSensitive(cond, "ready");
        cJSON_DeleteItemFromObjectCaseSensitive(cond, "serving");
        cJSON_AddBoolToObject(cond, "ready", now);
        cJSON_AddBoolToObject(cond, "serving", now);
        ver_unref(obj_update(K_ENDPOINTSLICE, v->ns, v->name, o, 0, &e));
    }
    cJSON_Delete(o);
}

static void on_churn(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    (void)arg;
    churn_acc += churn_rate / 10.0;
    while (churn_acc >= 1.0) {
        churn_acc -= 1.0;
        if (churn_n++ % 2)
            flip_slice();
        else
            flip_pod();
    }
}

void churn_start(int per_sec)
{
    struct timeval tv = {0, 100000};
    churn_stop();
    churn_acc = 0;
    if (per_sec <= 0)
        return;
    churn_rate = per_sec;
    churn_ev = event_new(ks_base, -1, EV_PERSIST, on_churn, NULL);
    evtimer_add(churn_ev, &tv);
}

int churn_rate_now(void)
{
    return churn_ev ? (int)churn_rate : 0;
}

void churn_stop(void)
{
    if (churn_ev)
        event_free(churn_ev);
    churn_ev = NULL;
}
