/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim kinds — the resource table and immutable object versions.
 *
 * Each stored object state is a ks_ver: the serialized JSON (kind and
 * apiVersion first, so list items can skip them by offset) plus the values
 * selectors need (namespace, name, labels, the pod/node selectable fields),
 * packed into one allocation and shared by reference between the current
 * store, the event history and responses still being written (evbuffer
 * references drop their ref when sent).
 */
#include "kubesim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ks_kind ks_kinds[KS_KIND_MAX] = {
    [K_NAMESPACE] = {"namespaces", "namespace", "Namespace", "NamespaceList", "", "v1", "ns", 0, 0},
    [K_NODE] = {"nodes", "node", "Node", "NodeList", "", "v1", "no", 0, 0},
    [K_SERVICE] = {"services", "service", "Service", "ServiceList", "", "v1", "svc", 1, 0},
    [K_POD] = {"pods", "pod", "Pod", "PodList", "", "v1", "po", 1, 0},
    [K_EVENT] = {"events", "event", "Event", "EventList", "", "v1", "ev", 1, 0},
    [K_ENDPOINTSLICE] = {"endpointslices", "endpointslice", "EndpointSlice",
                         "EndpointSliceList", "discovery.k8s.io", "discovery.k8s.io/v1",
                         NULL, 1, 0},
    /* Opaque kinds: stored as sent (no defaults, no validation beyond the
     * name, no field selectors beyond metadata), so that the manifests
     * operators apply round-trip through kubectl. */
    [K_CONFIGMAP] = {"configmaps", "configmap", "ConfigMap", "ConfigMapList", "", "v1", "cm", 1, 0},
    [K_SERVICEACCOUNT] = {"serviceaccounts", "serviceaccount", "ServiceAccount",
                          "ServiceAccountList", "", "v1", "sa", 1, 0},
    [K_DEPLOYMENT] = {"deployments", "deployment", "Deployment", "DeploymentList", "apps",
                      "apps/v1", "deploy", 1, 0},
    [K_DAEMONSET] = {"daemonsets", "daemonset", "DaemonSet", "DaemonSetList", "apps",
                     "apps/v1", "ds", 1, 0},
    [K_PDB] = {"poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget",
               "PodDisruptionBudgetList", "policy", "policy/v1", "pdb", 1, 0},
    [K_CLUSTERROLE] = {"clusterroles", "clusterrole", "ClusterRole", "ClusterRoleList",
                       "rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", NULL, 0, 1},
    [K_CLUSTERROLEBINDING] = {"clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding",
                              "ClusterRoleBindingList", "rbac.authorization.k8s.io",
                              "rbac.authorization.k8s.io/v1", NULL, 0, 1},
    [K_ROLE] = {"roles", "role", "Role", "RoleList", "rbac.authorization.k8s.io",
                "rbac.authorization.k8s.io/v1", NULL, 1, 1},
    [K_ROLEBINDING] = {"rolebindings", "rolebinding", "RoleBinding", "RoleBindingList",
                       "rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", NULL, 1, 1},
    /* The apiserver serves core/v1 and events.k8s.io/v1 Events from one
     * storage (converting between the two schemas); kubesim keeps them
     * apart, each as sent. */
    [K_EVENT_V1] = {"events", "event", "Event", "EventList", "events.k8s.io",
                    "events.k8s.io/v1", "ev", 1, 0},
    /* the Multi-Cluster Services API's CRD (the kubernetes plugin's multicluster) */
    [K_SERVICEIMPORT] = {"serviceimports", "serviceimport", "ServiceImport", "ServiceImportList",
                         "multicluster.x-k8s.io", "multicluster.x-k8s.io/v1alpha1", "svcim", 1, 0},
    [K_HPA] = {"horizontalpodautoscalers", "horizontalpodautoscaler", "HorizontalPodAutoscaler",
               "HorizontalPodAutoscalerList", "autoscaling", "autoscaling/v2", "hpa", 1, 0},
    /* validated, given its status and served by crd.c */
    [K_CRD] = {"customresourcedefinitions", "customresourcedefinition",
               "CustomResourceDefinition", "CustomResourceDefinitionList",
               "apiextensions.k8s.io", "apiextensions.k8s.io/v1", "crd", 0, 0},
    /* slots K_COUNT.. are the kinds of CRDs (crd.c) */
};

/* API groups, in the order discovery lists them (the core group first). */
const ks_group ks_groups[KS_NGROUPS] = {
    {"", "v1", "v1"},
    {"apps", "apps/v1", "v1"},
    {"discovery.k8s.io", "discovery.k8s.io/v1", "v1"},
    {"events.k8s.io", "events.k8s.io/v1", "v1"},
    {"policy", "policy/v1", "v1"},
    {"rbac.authorization.k8s.io", "rbac.authorization.k8s.io/v1", "v1"},
    {"multicluster.x-k8s.io", "multicluster.x-k8s.io/v1alpha1", "v1alpha1"},
    {"autoscaling", "autoscaling/v2", "v2"},
    {"apiextensions.k8s.io", "apiextensions.k8s.io/v1", "v1"},
};

const char *const ks_field_paths[F_COUNT] = {
    [F_NODENAME] = "spec.nodeName", [F_PHASE] = "status.phase",
    [F_PODIP] = "status.podIP", [F_RESTART] = "spec.restartPolicy",
    [F_SCHED] = "spec.schedulerName", [F_SA] = "spec.serviceAccountName",
    [F_HOSTNET] = "spec.hostNetwork", [F_NOMINATED] = "status.nominatedNodeName",
    [F_UNSCHED] = "spec.unschedulable",
};

int ks_kind_live(int k)
{
    return k >= 0 && k < KS_KIND_MAX && ks_kinds[k].resource &&
           (k < K_COUNT || ks_kinds[k].active);
}

int ks_kind_by_resource(const char *group, const char *resource)
{
    int k;
    for (k = 0; k < KS_KIND_MAX; k++)
        if (ks_kind_live(k) && !strcmp(ks_kinds[k].group, group) &&
            !strcmp(ks_kinds[k].resource, resource))
            return k;
    return -1;
}

int ks_kind_serves(int k, const char *version)
{
    char **v;
    if (k < K_COUNT) {
        int g = ks_group_by_name(ks_kinds[k].group);
        return g >= 0 && !strcmp(ks_groups[g].version, version);
    }
    for (v = ks_kinds[k].served; v && *v; v++)
        if (!strcmp(*v, version))
            return 1;
    return 0;
}

int ks_kind_by_route(const char *group, const char *version, const char *resource)
{
    int k;
    for (k = 0; k < KS_KIND_MAX; k++)
        if (ks_kind_live(k) && !strcmp(ks_kinds[k].group, group) &&
            !strcmp(ks_kinds[k].resource, resource) && ks_kind_serves(k, version))
            return k;
    return -1;
}

const char *ks_kind_gr(int k, char *buf, size_t len)
{
    if (!*ks_kinds[k].group)
        return ks_kinds[k].resource;
    snprintf(buf, len, "%s.%s", ks_kinds[k].resource, ks_kinds[k].group);
    return buf;
}

int ks_group_by_name(const char *group)
{
    int g;
    for (g = 0; g < KS_NGROUPS; g++)
        if (!strcmp(ks_groups[g].name, group))
            return g;
    return -1;
}

int ks_kind_by_kind(const char *api_version, const char *kind)
{
    const char *slash = strchr(api_version, '/');
    int k;
    for (k = 0; k < KS_KIND_MAX; k++) {
        if (!ks_kind_live(k) || strcmp(ks_kinds[k].kind, kind))
            continue;
        if (k < K_COUNT ? !strcmp(ks_kinds[k].api_version, api_version)
                        : slash && strlen(ks_kinds[k].group) == (size_t)(slash - api_version) &&
                              !strncmp(ks_kinds[k].group, api_version, (size_t)(slash - api_version)) &&
                              ks_kind_serves(k, slash + 1))
            return k;
    }
    return -1;
}

static int field_index(const char *path)
{
    int f;
    for (f = 0; f < F_COUNT; f++)
        if (!strcmp(ks_field_paths[f], path))
            return f;
    return -1;
}

int ks_field_supported(int kind, const char *path)
{
    int f;
    /* nodes: the apiserver's field label conversion for Node knows only
     * metadata.name and spec.unschedulable (no metadata.namespace) */
    if (kind == K_NODE)
        return !strcmp(path, "metadata.name") || field_index(path) == F_UNSCHED;
    if (!strcmp(path, "metadata.name") || !strcmp(path, "metadata.namespace"))
        return 1;
    f = field_index(path);
    if (kind == K_POD)
        return f >= 0 && f != F_UNSCHED;
    return 0;
}

/* Kubernetes' version order (CompareKubeAwareVersionStrings): GA before
 * beta before alpha, higher numbers first; other strings last, by name. */
static int version_rank(const char *v, long *major, long *minor)
{
    char *end;
    int stage = 3;
    *minor = 0;
    if (v[0] != 'v' || !isdigit((unsigned char)v[1]))
        return 0;
    *major = strtol(v + 1, &end, 10);
    if (!*end)
        return stage;
    if (!strncmp(end, "beta", 4))
        stage = 2, end += 4;
    else if (!strncmp(end, "alpha", 5))
        stage = 1, end += 5;
    else
        return 0;
    if (!isdigit((unsigned char)*end))
        return 0;
    *minor = strtol(end, &end, 10);
    return *end ? 0 : stage;
}

int ks_version_cmp(const char *x, const char *y)
{
    long xm = 0, xn = 0, ym = 0, yn = 0;
    int xs = version_rank(x, &xm, &xn), ys = version_rank(y, &ym, &yn);
    if (xs != ys)
        return ys - xs;
    if (!xs)
        return strcmp(x, y);
    if (xm != ym)
        return ym > xm ? 1 : -1;
    return yn > xn ? 1 : yn < xn ? -1 : 0;
}

/* ---------- versions ---------- */

static size_t slen(const char *s)
{
    return s ? strlen(s) + 1 : 0;
}

static const char *pack(char **p, const char *s)
{
    char *d = *p;
    size_t n = strlen(s) + 1;
    memcpy(d, s, n);
    *p += n;
    return d;
}

static size_t body_offset(int kind, const char *json, size_t len)
{
    char pre[128];
    int n = snprintf(pre, sizeof pre, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",",
                     ks_kinds[kind].kind, ks_kinds[kind].api_version);
    if (n > 0 && (size_t)n < len && !memcmp(json, pre, (size_t)n))
        return (size_t)n;
    return 0;
}

ks_ver *ver_new(int kind, uint64_t rv, const char *ns, const char *name, char *json,
                size_t len, const char *const *labels, int nlabels,
                const char *const *fields)
{
    size_t sz = sizeof(ks_ver) + sizeof(char *) * (size_t)nlabels * 2;
    size_t keylen = strlen(ns) + strlen(name) + 2;
    ks_ver *v;
    char *p;
    int i;

    sz += slen(ns) + slen(name) + keylen;
    for (i = 0; i < nlabels * 2; i++)
        sz += slen(labels[i]);
    for (i = 0; fields && i < F_COUNT; i++)
        sz += slen(fields[i]);
    v = calloc(1, sz);
    if (!v)
        return NULL;
    v->refs = 1;
    v->kind = kind;
    v->rv = rv;
    v->json = json;
    v->len = len;
    v->body_off = body_offset(kind, json, len);
    v->nlabels = nlabels;
    v->labels = (const char **)(v + 1);
    p = (char *)(v->labels + nlabels * 2);
    v->ns = pack(&p, ns);
    v->name = pack(&p, name);
    v->key = p;
    p += snprintf(p, keylen, "%s%s%s", ns, *ns ? "/" : "", name) + 1;
    for (i = 0; i < nlabels * 2; i++)
        v->labels[i] = pack(&p, labels[i]);
    for (i = 0; fields && i < F_COUNT; i++)
        v->fields[i] = fields[i] ? pack(&p, fields[i]) : NULL;
    return v;
}

void ver_ref(ks_ver *v)
{
    if (v)
        v->refs++;
}

void ver_unref(ks_ver *v)
{
    if (v && --v->refs == 0) {
        if (!v->json_arena)
            free(v->json);
        free(v);
    }
}

const char *ver_label(const void *ctx, const char *key)
{
    const ks_ver *v = ctx;
    int i;
    for (i = 0; i < v->nlabels; i++)
        if (!strcmp(v->labels[2 * i], key))
            return v->labels[2 * i + 1];
    return NULL;
}

const char *ver_field(const void *ctx, const char *path)
{
    const ks_ver *v = ctx;
    int f;
    if (!strcmp(path, "metadata.name"))
        return v->name;
    if (!strcmp(path, "metadata.namespace"))
        return v->ns;
    f = field_index(path);
    if (f < 0)
        return NULL;
    return v->fields[f] ? v->fields[f] : "";
}

cJSON *ver_parse(const ks_ver *v)
{
    return cJSON_ParseWithLength(v->json, v->len);
}

/* ---------- building versions from cJSON ---------- */

static const char *jstr(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static const char *jbool(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, a), b);
    return cJSON_IsTrue(x) ? "true" : "false";
}

static void extract_fields(int kind, const cJSON *obj, const char **f)
{
    if (kind == K_POD) {
        f[F_NODENAME] = jstr(obj, "spec", "nodeName");
        f[F_PHASE] = jstr(obj, "status", "phase");
        f[F_PODIP] = jstr(obj, "status", "podIP");
        f[F_RESTART] = jstr(obj, "spec", "restartPolicy");
        f[F_SCHED] = jstr(obj, "spec", "schedulerName");
        f[F_SA] = jstr(obj, "spec", "serviceAccountName");
        f[F_HOSTNET] = jbool(obj, "spec", "hostNetwork");
        f[F_NOMINATED] = jstr(obj, "status", "nominatedNodeName");
    } else if (kind == K_NODE) {
        f[F_UNSCHED] = jbool(obj, "spec", "unschedulable");
    }
}

char *ks_print_object(int kind, cJSON *obj, size_t *len)
{
    char *s;
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "kind");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "apiVersion");
    /* insert at the front, apiVersion after kind */
    cJSON_InsertItemInArray(obj, 0, cJSON_CreateString(ks_kinds[kind].api_version));
    cJSON_InsertItemInArray(obj, 0, cJSON_CreateString(ks_kinds[kind].kind));
    /* InsertItemInArray leaves keys unset: name them */
    if (obj->child && !obj->child->string) {
        obj->child->string = strdup("kind");
        if (obj->child->next && !obj->child->next->string)
            obj->child->next->string = strdup("apiVersion");
    }
    s = cJSON_PrintUnformatted(obj);
    *len = s ? strlen(s) : 0;
    return s;
}

ks_ver *ver_from_json(int kind, const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(md, "labels"), *l;
    const char *fields[F_COUNT] = {0};
    const char *rvs = jstr(obj, "metadata", "resourceVersion");
    const char **lv;
    cJSON *copy = cJSON_Duplicate(obj, 1);
    size_t len, n = 0;
    char *json;
    ks_ver *v;

    if (!copy)
        return NULL;
    json = ks_print_object(kind, copy, &len);
    cJSON_Delete(copy);
    if (!json)
        return NULL;
    lv = calloc((size_t)cJSON_GetArraySize(labels) * 2 + 1, sizeof(char *));
    cJSON_ArrayForEach(l, labels) {
        if (cJSON_IsString(l) && l->string) {
            lv[n * 2] = l->string;
            lv[n * 2 + 1] = l->valuestring;
            n++;
        }
    }
    extract_fields(kind, obj, fields);
    v = ver_new(kind, rvs ? strtoull(rvs, NULL, 10) : 0,
                jstr(obj, "metadata", "namespace") ? jstr(obj, "metadata", "namespace") : "",
                jstr(obj, "metadata", "name") ? jstr(obj, "metadata", "name") : "",
                json, len, lv, (int)n, fields);
    free(lv);
    if (!v)
        free(json);
    return v;
}

ks_ver *ver_with_rv(const ks_ver *v, uint64_t rv)
{
    cJSON *o = ver_parse(v), *md;
    char buf[32];
    ks_ver *nv;
    if (!o)
        return NULL;
    md = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)rv);
    cJSON_DeleteItemFromObjectCaseSensitive(md, "resourceVersion");
    cJSON_AddStringToObject(md, "resourceVersion", buf);
    nv = ver_from_json(v->kind, o);
    cJSON_Delete(o);
    return nv;
}

/* ---------- helpers ---------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

void ks_seed(uint64_t seed)
{
    rng_state = seed ? seed : 1;
}

uint64_t ks_rand(void) /* splitmix64 */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void ks_uuid(char out[37])
{
    uint64_t a = ks_rand(), b = ks_rand();
    snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
             (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
             (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
             (unsigned long long)(b & 0xffffffffffffULL));
}

void ks_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
