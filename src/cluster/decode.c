/* SPDX-License-Identifier: Apache-2.0 */
/*
 * decode.c — see decode.h. Field names and defaulting: docs/topology.md
 * ("API fields topodns reads") and docs/compatibility.md (1.13 Ingestion).
 */
#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <uthash.h>
#include "cluster/decode.h"
#include "cluster/strtab.h"
#include "cluster/prefix.h"
#include "common/addr.h"
#include "common/log.h"

/* ---- JSON helpers ----------------------------------------------------- */

static const cJSON *jget(const cJSON *o, const char *k)
{
    return o && cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* An array, or NULL: cJSON_ArrayForEach over NULL is a no-op. */
static const cJSON *jarray(const cJSON *a)
{
    return cJSON_IsArray(a) ? a : NULL;
}

static const cJSON *obj_or_null(const cJSON *o)
{
    return cJSON_IsObject(o) ? o : NULL;
}

/* A string value's text, or NULL. */
static const char *str_of(const cJSON *v)
{
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *jstr(const cJSON *o, const char *k)
{
    return str_of(jget(o, k));
}

/* A boolean value: true, false, else dflt (absent or null). */
static int jbool_of(const cJSON *v, int dflt)
{
    return cJSON_IsTrue(v) ? 1 : cJSON_IsFalse(v) ? 0 : dflt;
}

static int jbool(const cJSON *o, const char *k, int dflt)
{
    return jbool_of(jget(o, k), dflt);
}

/* The number v as an integer in [lo, hi] into *out: 1. 0 for anything else
 * (not a number, a fraction, NaN, infinite, out of range), which is never
 * converted: casting such a double to an integer type is undefined. */
static int jint(const cJSON *v, double lo, double hi, long *out)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi))      /* false for NaN too */
        return 0;
    long i = (long)d;
    if ((double)i != d)
        return 0;
    *out = i;
    return 1;
}

const char *decode_obj_ns(const cJSON *obj)
{
    const char *s = jstr(jget(obj, "metadata"), "namespace");
    return s ? s : "";
}

const char *decode_obj_name(const cJSON *obj)
{
    const char *s = jstr(jget(obj, "metadata"), "name");
    return s ? s : "";
}

const char *decode_obj_label(const cJSON *obj, const char *key)
{
    return jstr(jget(jget(obj, "metadata"), "labels"), key);
}

static const char *annotation(const cJSON *obj, const char *key)
{
    return jstr(jget(jget(obj, "metadata"), "annotations"), key);
}

/* The store's address maps hash and compare an st_ip as bytes: no padding
 * may hide between its fields (st_parse_ip zeroes the unused octets). */
static_assert(sizeof(st_ip) == 1 + 16, "st_ip is compared as bytes");

int st_parse_ip(const char *text, st_ip *out)
{
    assert(out);
    memset(out, 0, sizeof *out);
    if (!text)
        return -1;
    int fam;
    if (addr_parse_bytes(text, strlen(text), 0, &fam, out->addr) < 0)
        return -1;
    out->family = fam == AF_INET ? 4 : 6;
    return 0;
}

static uint8_t proto_of(const char *p)
{
    if (!p || strcmp(p, "TCP") == 0)
        return ST_TCP;
    if (strcmp(p, "UDP") == 0)
        return ST_UDP;
    if (strcmp(p, "SCTP") == 0)
        return ST_SCTP;
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* ---- ports ------------------------------------------------------------ */

/* The API server validates a Service's ports as integers in 1..65535. An
 * EndpointSlice's are int32 without a range of their own: a value outside
 * int32 (or a fraction) cannot come from an API server, one outside 0..65535
 * can but is no port (an SRV record holds 16 bits). */
#define SVC_PORT_MIN 1
#define SLICE_PORT_MIN 0
#define PORT_MAX 65535
#define INT32_LO (-2147483648.0)
#define INT32_HI 2147483647.0

typedef struct port_ctx {
    const cJSON *obj;               /* for the log line of a dropped port */
    int slice;                      /* 1: slice ports (sentinel, int32 rule) */
    const char *why;                /* set when the object must be skipped */
} port_ctx;

/* One port's number: 1 to keep it, 0 to drop it, -1 to skip the object. */
static int port_number(port_ctx *c, const cJSON *num, int i, long *out)
{
    if (!c->slice) {
        if (jint(num, SVC_PORT_MIN, PORT_MAX, out))
            return 1;
        c->why = "spec.ports: a port is not an integer in 1..65535";
        return -1;
    }
    if (!jint(num, INT32_LO, INT32_HI, out)) {
        c->why = "ports: a port is not a 32-bit integer";
        return -1;
    }
    if (*out >= SLICE_PORT_MIN && *out <= PORT_MAX)
        return 1;
    log_warning("plugin/kubernetes: endpointslice %s/%s: dropping ports[%d]: %ld is not in 0..65535",
                decode_obj_ns(c->obj), decode_obj_name(c->obj), i, *out);
    return 0;
}

/* spec.ports / slice ports → array (every port, up to the 65,535 a count
 * holds; more are logged and dropped); NULL with *n = 0 when none. A slice
 * without (usable) ports gets the sentinel -1. NULL with c->why set when
 * the object must be skipped. */
/* How many ports decode_ports_into may write for arr: at least 1. */
static int ports_cap(const cJSON *arr)
{
    int cnt = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    return cnt > UINT16_MAX ? UINT16_MAX : cnt ? cnt : 1;    /* as decode_ports_into */
}

/* The same into ports[ports_cap(arr)], which the caller owns: -1 with c->why
 * set when the object must be skipped. */
static int decode_ports_into(strtab *strs, const cJSON *arr, st_port *ports, uint16_t *n,
                             port_ctx *c)
{
    int cnt = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    if (cnt > UINT16_MAX) {             /* what nports holds; the API sets no limit */
        log_warning("plugin/kubernetes: %s %s/%s: %d ports, only the first %d are served",
                    c->slice ? "endpointslice" : "service", decode_obj_ns(c->obj),
                    decode_obj_name(c->obj), cnt, UINT16_MAX);
        cnt = UINT16_MAX;
    }
    *n = 0;
    const cJSON *p;
    int i = 0;
    cJSON_ArrayForEach(p, arr) {
        long port;
        const cJSON *num = jget(p, "port");
        int at = i++;
        if (*n >= cnt)
            break;
        if (!cJSON_IsNumber(num))
            continue;
        int keep = port_number(c, num, at, &port);
        if (keep < 0)
            return -1;
        if (!keep)
            continue;
        const char *name = jstr(p, "name");
        ports[*n].name = strtab_intern(strs, name ? name : "");
        ports[*n].port = (int32_t)port;
        ports[*n].proto = proto_of(jstr(p, "protocol"));
        (*n)++;
    }
    if (*n == 0 && c->slice) {
        ports[0].name = strtab_intern(strs, "");
        ports[0].port = -1;
        ports[0].proto = ST_TCP;
        *n = 1;
    }
    return 0;
}

static st_port *decode_ports(strtab *strs, const cJSON *arr, uint16_t *n, port_ctx *c)
{
    st_port *ports = calloc((size_t)ports_cap(arr), sizeof *ports);
    if (ports && decode_ports_into(strs, arr, ports, n, c) < 0) {
        free(ports);
        return NULL;
    }
    return ports;
}

/* ---- services --------------------------------------------------------- */

/* A Service being decoded: every part its own allocation (service_pack
 * then copies them into the Service's one block). */
typedef struct svc_parts {
    st_service s;
    st_svc_extra x;
} svc_parts;

static void split_keys(strtab *strs, st_svc_extra *s, const char *csv)
{
    const char *keys[32];
    int n = 0;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", csv);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < 32; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        char *e = t + strlen(t);
        while (e > t && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (*t)
            keys[n++] = strtab_intern(strs, t);
    }
    const char **arr = calloc((size_t)(n ? n : 1), sizeof *arr);
    if (!arr)
        return;
    memcpy(arr, keys, (size_t)n * sizeof *arr);
    s->topology_keys = arr;
    s->n_topology_keys = (uint8_t)n;
}

static void service_topology(strtab *strs, svc_parts *p, const cJSON *obj, const cJSON *spec)
{
    st_svc_extra *s = &p->x;
    const cJSON *tk = jget(spec, "topologyKeys");
    if (cJSON_IsArray(tk) && cJSON_GetArraySize(tk) > 0) {
        int n = 0, max = cJSON_GetArraySize(tk) < 32 ? cJSON_GetArraySize(tk) : 32;
        const char **arr = calloc((size_t)max, sizeof *arr);
        const cJSON *k;
        cJSON_ArrayForEach(k, tk) {
            if (arr && n < max && cJSON_IsString(k))
                arr[n++] = strtab_intern(strs, k->valuestring);
        }
        s->topology_keys = arr;
        s->n_topology_keys = (uint8_t)n;
    } else if (annotation(obj, "topodns.io/topology-keys")) {
        split_keys(strs, s, annotation(obj, "topodns.io/topology-keys"));
        s->topology_keys_from_annotation = 1;
    }
    const char *itp = jstr(spec, "internalTrafficPolicy");
    p->s.itp_local = itp && strcmp(itp, "Local") == 0;
    s->traffic_distribution = strtab_intern(strs, jstr(spec, "trafficDistribution"));
    /* the old key, when present at all (even empty), wins over the new */
    const char *mode = annotation(obj, "service.kubernetes.io/topology-aware-hints");
    if (!mode)
        mode = annotation(obj, "service.kubernetes.io/topology-mode");
    s->topology_mode = strtab_intern(strs, mode);
    const char *same = annotation(obj, "endpointslice.kubernetes.io/same-zone");
    if (!same)                      /* the KEP 2004 draft's later name */
        same = annotation(obj, "service.kubernetes.io/same-zone");
    s->same_zone = strtab_intern(strs, same);
    s->routing_preference = strtab_intern(strs, jstr(spec, "routingPreference"));
}

static int service_ips(st_service *s, const cJSON *spec)
{
    const cJSON *ips = jget(spec, "clusterIPs");
    const char *list[4];
    int n = 0;
    const cJSON *ip;
    cJSON_ArrayForEach(ip, jarray(ips)) {
        if (cJSON_IsString(ip) && n < 4)
            list[n++] = ip->valuestring;
    }
    if (n == 0 && jstr(spec, "clusterIP"))
        list[n++] = jstr(spec, "clusterIP");
    if (n > 0 && strcmp(list[0], "None") == 0) {
        s->kind = SVC_HEADLESS;
        return 0;
    }
    st_ip *arr = calloc((size_t)(n ? n : 1), sizeof *arr);
    if (!arr)
        return -1;
    int m = 0;
    for (int i = 0; i < n; i++) {
        st_ip v;
        if (st_parse_ip(list[i], &v) < 0)
            continue;
        int dup = 0;
        for (int j = 0; j < m; j++)
            dup |= memcmp(&arr[j], &v, sizeof v) == 0;
        if (!dup)
            arr[m++] = v;
    }
    s->cluster_ips = arr;
    s->n_cluster_ips = (uint8_t)m;
    return 0;
}

/* spec.externalIPs, then each status.loadBalancer.ingress's ip (or its
 * hostname without one), as CoreDNS keeps them: one block holding the
 * pointer array and the strings, at most 255. Empty strings are skipped. */
static int service_external(st_svc_extra *s, const cJSON *spec, const cJSON *status)
{
    const char *list[255];
    int n = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, jarray(jget(spec, "externalIPs"))) {
        if (cJSON_IsString(v) && *v->valuestring && n < 255)
            list[n++] = v->valuestring;
    }
    cJSON_ArrayForEach(v, jarray(jget(jget(status, "loadBalancer"), "ingress"))) {
        const char *ip = jstr(v, "ip"), *host = jstr(v, "hostname");
        const char *t = ip && *ip ? ip : host;
        if (t && *t && n < 255)
            list[n++] = t;
    }
    if (n == 0)
        return 0;
    size_t need = (size_t)n * sizeof(char *);
    for (int i = 0; i < n; i++)
        need += strlen(list[i]) + 1;
    char **arr = malloc(need);
    if (!arr)
        return -1;
    char *p = (char *)(arr + n);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(list[i]) + 1;
        memcpy(p, list[i], l);
        arr[i] = p;
        p += l;
    }
    s->external = (const char *const *)arr;
    s->n_external = (uint8_t)n;
    return 0;
}

/* Why an object's names are unusable, or NULL. Namespaces are DNS labels
 * (at most 63 characters) and names DNS subdomains (at most 253), as the API
 * server validates them; anything else did not come from one. ns NULL: a
 * cluster-scoped object. */
static const char *bad_names(const char *ns, const char *name)
{
    if ((ns && !*ns) || !*name)
        return ns ? "no metadata.namespace or metadata.name" : "no metadata.name";
    if ((ns && strlen(ns) > 63) || strlen(name) > 253)
        return "metadata.namespace or metadata.name too long";
    return NULL;
}

static void service_parts_free(svc_parts *p)
{
    if (!p)
        return;
    free((void *)p->s.name);
    free((void *)p->s.cluster_ips);
    free((void *)p->s.ports);
    free((void *)p->x.external_name);
    free((void *)p->x.external);
    free((void *)p->x.topology_keys);
    free(p);
}

/* Whether a Service has any extra part (st_svc_extra): its block then
 * holds one. */
static int has_extra(const st_svc_extra *x)
{
    return x->external_name || x->external || x->topology_keys || x->traffic_distribution ||
           x->topology_mode || x->same_zone || x->routing_preference || x->n_external ||
           x->n_topology_keys || x->topology_keys_from_annotation;
}

/* The parts copied into one block from alloc(arg, size) (the store keeps
 * 10,000 of them: one malloc chunk instead of four to seven, and the
 * store's map entry in the same chunk): the st_service, its st_svc_extra
 * when it has one, ports, topology keys, external pointers, cluster IPs,
 * then the text (the name unless DECODE_SVC_NO_NAME, the ExternalName,
 * the external addresses). NULL when memory runs out; p is left as it
 * was. */
static st_service *service_pack(const svc_parts *sp, int flags, void *(*alloc)(void *, size_t),
                                void *arg)
{
    const st_service *s = &sp->s;
    const st_svc_extra *x = &sp->x;
    int with_x = has_extra(x);
    size_t nl = flags & DECODE_SVC_NO_NAME ? 0 : strlen(s->name) + 1;
    size_t el = x->external_name ? strlen(x->external_name) + 1 : 0, xl = 0;
    for (uint8_t i = 0; i < x->n_external; i++)
        xl += strlen(x->external[i]) + 1;
    size_t at_ports = sizeof *s + (with_x ? sizeof *x : 0);     /* pointer-aligned parts first */
    size_t at_keys = at_ports + s->nports * sizeof *s->ports;
    size_t at_ext = at_keys + x->n_topology_keys * sizeof *x->topology_keys;
    size_t at_ips = at_ext + x->n_external * sizeof *x->external;
    size_t at_text = at_ips + s->n_cluster_ips * sizeof *s->cluster_ips;
    static_assert(sizeof(st_svc_extra) % _Alignof(st_port) == 0, "the ports are aligned");
    char *blk = alloc(arg, at_text + nl + el + xl);
    if (!blk)
        return NULL;
    st_service *p = memcpy(blk, s, sizeof *s);
    st_svc_extra *px = with_x ? memcpy(blk + sizeof *s, x, sizeof *x) : NULL;
    p->has_extra = px != NULL;
    assert(!px || st_svc_x(p) == px);
    char *t = blk + at_text;
    p->name = nl ? memcpy(t, s->name, nl) : NULL;
    t += nl;
    /* a part that was there stays non-NULL, also when it is empty */
    p->ports = s->ports ? memcpy(blk + at_ports, s->ports, s->nports * sizeof *s->ports) : NULL;
    p->cluster_ips = s->cluster_ips ? memcpy(blk + at_ips, s->cluster_ips,
                                             s->n_cluster_ips * sizeof *s->cluster_ips)
                                    : NULL;
    if (!px)
        return p;
    if (el) {
        px->external_name = memcpy(t, x->external_name, el);
        t += el;
    }
    px->topology_keys = x->topology_keys ? memcpy(blk + at_keys, x->topology_keys,
                                                  x->n_topology_keys * sizeof *x->topology_keys)
                                         : NULL;
    px->external = NULL;
    if (x->n_external) {
        const char **e = (const char **)(blk + at_ext);
        for (uint8_t i = 0; i < x->n_external; i++) {
            size_t l = strlen(x->external[i]) + 1;
            e[i] = memcpy(t, x->external[i], l);
            t += l;
        }
        px->external = e;
    }
    return p;
}

static void *plain_alloc(void *arg, size_t size)
{
    (void)arg;
    return malloc(size);
}

st_service *decode_service(strtab *strs, const cJSON *obj, const char **why)
{
    return decode_service_into(strs, obj, why, 0, plain_alloc, NULL);
}

st_service *decode_service_into(strtab *strs, const cJSON *obj, const char **why, int flags,
                                void *(*alloc)(void *arg, size_t size), void *arg)
{
    assert(alloc);
    const char *ns = decode_obj_ns(obj), *name = decode_obj_name(obj);
    const cJSON *spec = jget(obj, "spec");
    if ((*why = bad_names(ns, name)))
        return NULL;
    if (!cJSON_IsObject(spec)) {
        *why = "no spec";
        return NULL;
    }
    svc_parts *p = calloc(1, sizeof *p);
    st_service *s = p ? &p->s : NULL;
    if (!p || !(s->name = strdup(name))) {
        free(p);
        *why = "out of memory";
        return NULL;
    }
    s->ns = strtab_intern(strs, ns);
    const char *type = jstr(spec, "type");
    if (type && strcmp(type, "ExternalName") == 0) {
        s->kind = SVC_EXTERNALNAME;
        p->x.external_name = dup_or_null(jstr(spec, "externalName"));
    } else {
        s->kind = SVC_CLUSTERIP;
        if (service_ips(s, spec) < 0) {
            service_parts_free(p);
            *why = "out of memory";
            return NULL;
        }
    }
    if (service_external(&p->x, spec, jget(obj, "status")) < 0) {
        service_parts_free(p);
        *why = "out of memory";
        return NULL;
    }
    port_ctx pc = { obj, 0, NULL };
    s->ports = decode_ports(strs, jget(spec, "ports"), &s->nports, &pc);
    if (pc.why) {
        service_parts_free(p);
        *why = pc.why;
        return NULL;
    }
    const cJSON *sel = jget(spec, "selector");
    s->has_selector = cJSON_IsObject(sel) && sel->child != NULL;
    service_topology(strs, p, obj, spec);
    st_service *packed = service_pack(p, flags, alloc, arg);
    service_parts_free(p);
    if (!packed)
        *why = "out of memory";
    return packed;
}

void decode_service_free(void *p)
{
    free(p);                        /* one block (service_pack) */
}

/* ---- ServiceImports (multicluster.x-k8s.io/v1alpha1) ------------------ */

st_svcimport *decode_svcimport(strtab *strs, const cJSON *obj, const char **why)
{
    const char *ns = decode_obj_ns(obj), *name = decode_obj_name(obj);
    const cJSON *spec = jget(obj, "spec");
    if ((*why = bad_names(ns, name)))
        return NULL;
    st_svcimport *si = calloc(1, sizeof *si);
    if (!si) {
        *why = "out of memory";
        return NULL;
    }
    si->ns = strtab_intern(strs, ns);
    si->name = strdup(name);
    const char *type = jstr(spec, "type");
    si->headless = type && strcmp(type, "Headless") == 0;
    int n = cJSON_GetArraySize(jarray(jget(spec, "ips")));
    si->ips = calloc((size_t)(n > 0 ? (n > 8 ? 8 : n) : 1), sizeof *si->ips);
    const cJSON *v;
    cJSON_ArrayForEach(v, jarray(jget(spec, "ips"))) {
        st_ip ip;
        if (si->ips && si->nips < 8 && cJSON_IsString(v) && st_parse_ip(v->valuestring, &ip) == 0)
            ((st_ip *)si->ips)[si->nips++] = ip;
    }
    port_ctx pc = { obj, 0, NULL };
    si->ports = decode_ports(strs, jget(spec, "ports"), &si->nports, &pc);
    if (!si->name || !si->ips || !si->ports || pc.why) {
        decode_svcimport_free(si);
        *why = pc.why ? pc.why : "out of memory";
        return NULL;
    }
    return si;
}

void decode_svcimport_free(void *p)
{
    st_svcimport *si = p;
    if (!si)
        return;
    free((void *)si->name);
    free((void *)si->ips);
    free((void *)si->ports);
    free(si);
}

/* ---- EndpointSlices --------------------------------------------------- */

/* A slice is decoded into scratch arrays sized by upper bounds (slice_tmp),
 * then packed into one exact block (decode_slice): an endpoint is 24 bytes
 * with its node, zone and hint set as indexes into per-slice tables
 * (deduplicated) and its strings at one offset into the slice's pool. */
typedef struct slice_tmp {
    st_endpoint *eps;
    size_t n;
    const char **names;             /* [0] = NULL */
    size_t nnames;
    const char **nhash;             /* open addressing over names, by pointer */
    uint16_t *nhidx;
    size_t hcap;                    /* a power of two */
    st_hints *hints;                /* [0] = none */
    size_t nhints;
    const char **hnames;
    size_t nhnames;
    char *pool;
    size_t pool_used;
    size_t hpfx;                    /* hostnames' shared prefix, at pool[0] */
} slice_tmp;

/* The index of the interned name p in t->names (added when new); 0 for NULL. */
static uint16_t name_index(slice_tmp *t, const char *p)
{
    if (!p)
        return 0;
    size_t h = (size_t)(((uintptr_t)p >> 3) * 0x9E3779B97F4A7C15ull) & (t->hcap - 1);
    while (t->nhash[h] && t->nhash[h] != p)
        h = (h + 1) & (t->hcap - 1);
    if (!t->nhash[h]) {
        assert(t->nnames < UINT16_MAX);     /* at most 2 per endpoint object + 1 */
        t->nhash[h] = p;
        t->nhidx[h] = (uint16_t)t->nnames;
        t->names[t->nnames++] = p;
    }
    return t->nhidx[h];
}

static size_t pool_put(slice_tmp *t, const char *str)
{
    size_t at = t->pool_used, n = strlen(str) + 1;
    memcpy(t->pool + at, str, n);
    t->pool_used += n;
    return at;
}

/* The members of one endpoint object decode_slice reads, found in one pass
 * over its children (and one over each of conditions, hints and
 * targetRef) instead of a lookup per field: ~6 members per endpoint, 150,000
 * endpoints in a large cluster. Like cJSON_GetObjectItemCaseSensitive, the
 * first member of a name wins; a member of the wrong type reads as absent. */
typedef struct ep_fields {
    const cJSON *addrs;             /* addresses (an array, or NULL) */
    const cJSON *zones, *nodes;     /* hints.forZones, hints.forNodes */
    const cJSON *ready, *serving, *terminating;     /* conditions.* */
    const char *host, *node, *zone; /* hostname, nodeName, zone */
    const char *kind, *pod;         /* targetRef.kind, targetRef.name */
    uint8_t has_hints;              /* hints is an object */
} ep_fields;

/* *slot = c when c is the first member named want. */
static void first_of(const cJSON **slot, const cJSON *c, const char *want)
{
    if (!*slot && strcmp(c->string, want) == 0)
        *slot = c;
}

static void ep_fields_of(const cJSON *e, ep_fields *f)
{
    memset(f, 0, sizeof *f);
    const cJSON *c, *addrs = NULL, *cond = NULL, *hints = NULL, *ref = NULL;
    const cJSON *host = NULL, *node = NULL, *zone = NULL;
    cJSON_ArrayForEach(c, obj_or_null(e)) {
        if (!c->string)
            continue;
        switch (c->string[0]) {
        case 'a': first_of(&addrs, c, "addresses"); break;
        case 'c': first_of(&cond, c, "conditions"); break;
        case 'h':
            first_of(&host, c, "hostname");
            first_of(&hints, c, "hints");
            break;
        case 'n': first_of(&node, c, "nodeName"); break;
        case 't': first_of(&ref, c, "targetRef"); break;
        case 'z': first_of(&zone, c, "zone"); break;
        default: break;
        }
    }
    f->addrs = jarray(addrs);
    f->host = str_of(host);
    f->node = str_of(node);
    f->zone = str_of(zone);
    cJSON_ArrayForEach(c, obj_or_null(cond)) {
        if (!c->string)
            continue;
        switch (c->string[0]) {
        case 'r': first_of(&f->ready, c, "ready"); break;
        case 's': first_of(&f->serving, c, "serving"); break;
        case 't': first_of(&f->terminating, c, "terminating"); break;
        default: break;
        }
    }
    f->has_hints = cJSON_IsObject(hints) != 0;
    cJSON_ArrayForEach(c, obj_or_null(hints)) {
        if (!c->string)
            continue;
        if (c->string[0] == 'f') {
            first_of(&f->zones, c, "forZones");
            first_of(&f->nodes, c, "forNodes");
        }
    }
    const cJSON *kind = NULL, *name = NULL;
    cJSON_ArrayForEach(c, obj_or_null(ref)) {
        if (!c->string)
            continue;
        if (c->string[0] == 'k')
            first_of(&kind, c, "kind");
        else if (c->string[0] == 'n')
            first_of(&name, c, "name");
    }
    f->kind = str_of(kind);
    f->pod = str_of(name);
}

/* The prefix every hostname of the slice shares (a StatefulSet's pods are
 * "web-0", "web-1", ...), written once at the pool's start (t->hpfx bytes
 * and a NUL); its endpoints keep only the rest. pool_need counted every
 * address's whole hostname, so with K >= 2 addresses carrying one the
 * K * len bytes not repeated make room for the len + 1 of the prefix.
 * None when fewer than two addresses have a hostname, when a hostname
 * would not fit a reader's buffer (ST_HOST_STRLEN), or when the prefix is
 * shorter than 2 bytes. */
static void shared_host_prefix(slice_tmp *t, const ep_fields *fs, size_t n)
{
    const char *first = NULL;
    size_t len = 0, k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *h = fs[i].host;
        if (!h || !cJSON_GetArraySize(fs[i].addrs))
            continue;
        k += (size_t)cJSON_GetArraySize(fs[i].addrs);
        size_t hl = strlen(h);
        if (hl >= ST_HOST_STRLEN || hl > UINT8_MAX)
            return;
        if (!first) {
            first = h;
            len = hl;
        } else {
            size_t c = 0;
            while (c < len && h[c] == first[c])
                c++;
            len = c;
        }
    }
    if (!first || len < 2 || k < 2)
        return;
    assert(t->pool_used == 0 && len <= UINT8_MAX);
    memcpy(t->pool, first, len);
    t->pool[len] = '\0';
    t->pool_used = len + 1;
    t->hpfx = len;
}

/* Upper bound of the pool bytes one endpoint object needs (16 octets per
 * address of an IPv6 slice besides the strings). */
static size_t pool_need(const ep_fields *f, int family, int pod_names)
{
    const char *host = f->host;
    const char *pod = pod_names ? f->pod : NULL;
    if (host && pod && strcmp(host, pod) == 0)
        pod = NULL;                 /* stored once (decode_endpoint) */
    size_t per = (host ? strlen(host) + 1 : 0) + (pod ? strlen(pod) + 1 : 0) +
                 (family == 6 ? 16 : 0);
    size_t need = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, f->addrs)
        need += per + (cJSON_IsString(a) ? strlen(a->valuestring) + 1 : 0);
    return need;
}

static size_t hints_need(const ep_fields *f)
{
    return (size_t)cJSON_GetArraySize(f->zones) + (size_t)cJSON_GetArraySize(f->nodes);
}

/* The hint names of arr appended to t->hnames (at most UINT8_MAX:
 * decode_slice refuses more): their count. */
static uint8_t hint_names(strtab *strs, slice_tmp *t, const cJSON *arr)
{
    int cnt = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : 0;
    uint8_t n = 0;
    if (cnt == 0 || cnt > UINT8_MAX)
        return 0;
    const cJSON *h;
    cJSON_ArrayForEach(h, arr) {
        const char *nm = jstr(h, "name");
        if (nm && n < cnt)
            t->hnames[t->nhnames + n++] = strtab_intern(strs, nm);
    }
    return n;
}

/* The hint set of endpoint object e: an index into t->hints (an equal
 * earlier set is shared), 0 when it names nothing. */
static uint16_t hint_set(strtab *strs, slice_tmp *t, const ep_fields *f)
{
    st_hints h = { .zones = (uint32_t)t->nhnames };
    h.nzones = hint_names(strs, t, f->zones);
    t->nhnames += h.nzones;
    h.nodes = (uint32_t)t->nhnames;
    h.nnodes = hint_names(strs, t, f->nodes);
    t->nhnames += h.nnodes;
    if (!h.nzones && !h.nnodes) {
        t->nhnames = h.zones;
        return 0;
    }
    for (size_t i = 1; i < t->nhints; i++) {
        const st_hints *o = &t->hints[i];
        if (o->nzones == h.nzones && o->nnodes == h.nnodes &&
            !memcmp(t->hnames + o->zones, t->hnames + h.zones, h.nzones * sizeof(char *)) &&
            !memcmp(t->hnames + o->nodes, t->hnames + h.nodes, h.nnodes * sizeof(char *))) {
            t->nhnames = h.zones;   /* shared: drop the copy */
            return (uint16_t)i;
        }
    }
    assert(t->nhints < UINT16_MAX);
    t->hints[t->nhints] = h;
    return (uint16_t)t->nhints++;
}

static void decode_endpoint(strtab *strs, slice_tmp *t, const ep_fields *f, int family,
                            int pod_names)
{
    const char *kind = f->kind, *pod = f->pod;
    const char *host = f->host;
    if (!pod_names || !(kind && strcmp(kind, "Pod") == 0 && pod && strlen(pod) < 64))
        pod = NULL;
    uint16_t node = name_index(t, strtab_intern(strs, f->node));
    uint16_t zone = name_index(t, strtab_intern_lower(strs, f->zone));
    uint16_t hset = 0;
    int hset_done = 0;
    int ready = jbool_of(f->ready, 1), serving = jbool_of(f->serving, 1);
    int terminating = jbool_of(f->terminating, 0);
    const cJSON *a;
    cJSON_ArrayForEach(a, f->addrs) {
        st_endpoint *ep = &t->eps[t->n];
        st_ip ip;
        memset(ep, 0, sizeof *ep);
        if (!cJSON_IsString(a) || st_parse_ip(a->valuestring, &ip) < 0 || ip.family != family)
            continue;
        if (!hset_done) {           /* once per endpoint object, and only with an address */
            hset = hint_set(strs, t, f);
            hset_done = 1;
        }
        char canon[ST_ADDR_STRLEN];
        inet_ntop(family == 4 ? AF_INET : AF_INET6, ip.addr, canon, sizeof canon);
        if (family == 6) {          /* its 16 octets in the pool (store.h) */
            ep->v6 = 1;
            ep->a.ip6 = (uint32_t)t->pool_used;     /* <= UINT32_MAX: decode_slice checks */
            memcpy(t->pool + t->pool_used, ip.addr, 16);
            t->pool_used += 16;
        } else {
            memcpy(ep->a.ip4, ip.addr, 4);
        }
        ep->str = (uint32_t)t->pool_used;
        if (host) {
            ep->has_host = 1;
            assert(strncmp(host, t->pool, t->hpfx) == 0);
            pool_put(t, host + t->hpfx);
        }
        if (pod) {                  /* a headless Service's hostname is usually
                                     * the pod's name: one copy */
            ep->has_pod = 1;
            if (host && strcmp(host, pod) == 0)
                ep->pod_is_host = 1;
            else
                pool_put(t, pod);
        }
        if (strcmp(canon, a->valuestring) != 0) {
            ep->addr_text = 1;
            pool_put(t, a->valuestring);
        }
        if (!ep->has_host && !ep->has_pod && !ep->addr_text)
            ep->str = 0;
        ep->node = node;
        ep->zone = zone;
        ep->hints = hset;
        ep->has_hints = f->has_hints;
        ep->ready = ready != 0;
        ep->ready_unset = !cJSON_IsBool(f->ready);
        ep->serving = serving != 0;
        ep->terminating = terminating != 0;
        t->n++;
    }
}

/* Why an endpoint's hints cannot be counted in 8 bits (the API allows 8
 * of each), or NULL. */
static const char *too_many_hints(const ep_fields *f)
{
    if (cJSON_GetArraySize(f->zones) > UINT8_MAX || cJSON_GetArraySize(f->nodes) > UINT8_MAX)
        return "an endpoint has more than 255 hints";
    return NULL;
}

static void slice_tmp_free(slice_tmp *t)
{
    free(t->eps);
    free(t->names);
    free(t->nhash);
    free(t->nhidx);
    free(t->hints);
    free(t->hnames);
    free(t->pool);
}

/* Scratch arrays for total addresses of nobj endpoint objects: 0, or -1
 * without memory. */
static int slice_tmp_init(slice_tmp *t, size_t total, size_t nobj, size_t hn, size_t pool)
{
    memset(t, 0, sizeof *t);
    size_t maxnames = 2 * nobj + 1;
    for (t->hcap = 16; t->hcap < 2 * maxnames; t->hcap *= 2)
        ;
    t->eps = malloc((total ? total : 1) * sizeof *t->eps);
    t->names = malloc(maxnames * sizeof *t->names);
    t->nhash = calloc(t->hcap, sizeof *t->nhash);
    t->nhidx = malloc(t->hcap * sizeof *t->nhidx);
    t->hints = calloc(nobj + 1, sizeof *t->hints);
    t->hnames = malloc((hn ? hn : 1) * sizeof *t->hnames);
    t->pool = malloc(pool ? pool : 1);
    if (!t->eps || !t->names || !t->nhash || !t->nhidx || !t->hints || !t->hnames || !t->pool) {
        slice_tmp_free(t);
        return -1;
    }
    t->names[0] = NULL;
    t->nnames = 1;
    t->nhints = 1;                  /* [0]: no hint names */
    return 0;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

slice_blob *decode_slice(strtab *strs, const cJSON *obj, int pod_names, const char **why)
{
    const char *ns = decode_obj_ns(obj), *name = decode_obj_name(obj);
    if ((*why = bad_names(ns, name)))
        return NULL;
    const char *at = jstr(obj, "addressType");
    int family = at && strcmp(at, "IPv4") == 0 ? 4 : at && strcmp(at, "IPv6") == 0 ? 6 : 0;
    const cJSON *eps = jget(obj, "endpoints");
    if (eps && !cJSON_IsArray(eps) && !cJSON_IsNull(eps)) {
        *why = "endpoints is not a list";
        return NULL;
    }
    size_t nobj = (size_t)cJSON_GetArraySize(jarray(eps));
    if (nobj > DECODE_SLICE_MAX) {  /* the API allows 1,000 */
        *why = "more than 30000 endpoints";
        return NULL;
    }
    ep_fields *fs = malloc((nobj ? nobj : 1) * sizeof *fs);
    if (!fs) {
        *why = "out of memory";
        return NULL;
    }
    size_t total = 0, pool = 0, hn = 0, i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, jarray(eps)) {
        ep_fields *f = &fs[i++];
        ep_fields_of(e, f);
        total += (size_t)cJSON_GetArraySize(f->addrs);
        pool += pool_need(f, family, pod_names);
        hn += hints_need(f);
        if ((*why = too_many_hints(f))) {
            free(fs);
            return NULL;
        }
    }
    assert(i == nobj);
    if (pool > UINT32_MAX) {        /* far beyond what the API server stores */
        free(fs);
        *why = "endpoints too large";
        return NULL;
    }
    slice_tmp t;
    if (slice_tmp_init(&t, family ? total : 0, nobj, hn, pool) < 0) {
        free(fs);
        *why = "out of memory";
        return NULL;
    }
    if (family) {                   /* FQDN slices are ignored */
        shared_host_prefix(&t, fs, nobj);
        for (i = 0; i < nobj; i++)
            decode_endpoint(strs, &t, &fs[i], family, pod_names);
    }
    free(fs);
    /* one block: the blob, eps, ports, names, hints, hnames, pool, name */
    const cJSON *parr = jget(obj, "ports");
    size_t nl = strlen(name) + 1, pcap = (size_t)ports_cap(parr);
    size_t at_eps = align8(sizeof(slice_blob));
    size_t at_ports = align8(at_eps + t.n * sizeof(st_endpoint));
    size_t at_names = align8(at_ports + pcap * sizeof(st_port));
    size_t at_hints = align8(at_names + t.nnames * sizeof(char *));
    size_t at_hnames = align8(at_hints + t.nhints * sizeof(st_hints));
    size_t at_pool = at_hnames + t.nhnames * sizeof(char *);
    size_t at_name = at_pool + t.pool_used;
    slice_blob *b = calloc(1, at_name + nl);
    if (!b) {
        slice_tmp_free(&t);
        *why = "out of memory";
        return NULL;
    }
    char *base = (char *)b;
    st_port *ports = (st_port *)(base + at_ports);
    b->eps = (st_endpoint *)(base + at_eps);
    b->n = t.n;
    b->pub.ports = ports;
    b->pub.names = memcpy(base + at_names, t.names, t.nnames * sizeof(char *));
    b->pub.nnames = (uint16_t)t.nnames;
    b->pub.hints = memcpy(base + at_hints, t.hints, t.nhints * sizeof(st_hints));
    b->pub.nhints = (uint16_t)t.nhints;
    b->pub.hnames = (const char *const *)(base + at_hnames);
    if (t.nhnames)
        memcpy(base + at_hnames, t.hnames, t.nhnames * sizeof(char *));
    b->pub.pool = base + at_pool;
    b->pub.hpfx = (uint8_t)t.hpfx;
    if (t.pool_used)
        memcpy(base + at_pool, t.pool, t.pool_used);
    b->pub.name = memcpy(base + at_name, name, nl);
    b->pub.family = (uint8_t)family;
    for (i = 0; i < t.n; i++) {
        b->eps[i] = t.eps[i];
        b->eps[i].sl = &b->pub;
        assert(b->eps[i].node < t.nnames && b->eps[i].zone < t.nnames &&
               b->eps[i].hints < t.nhints && b->eps[i].str <= t.pool_used &&
               b->eps[i].v6 == (family == 6) && (!b->eps[i].v6 || b->eps[i].a.ip6 + 16 <= t.pool_used));
    }
    slice_tmp_free(&t);
    atomic_init(&b->refs, 1);
    b->ns = strtab_intern(strs, ns);
    b->service = strtab_intern(strs, decode_obj_label(obj, "kubernetes.io/service-name"));
    port_ctx pc = { obj, 1, NULL };
    if (decode_ports_into(strs, parr, ports, &b->pub.nports, &pc) < 0) {
        decode_slice_unref(b);
        *why = pc.why;
        return NULL;
    }
    return b;
}

/* The pool string at p (an endpoint's hostname part) with the slice's
 * hostname prefix before it, in buf; p itself without a prefix. */
static const char *with_prefix(const st_slice *sl, const char *p, char *buf)
{
    if (!sl->hpfx)
        return p;
    size_t n = strlen(p);
    assert(sl->hpfx + n < ST_HOST_STRLEN);      /* shared_host_prefix's bound */
    memcpy(buf, sl->pool, sl->hpfx);
    memcpy(buf + sl->hpfx, p, n + 1);
    return buf;
}

const char *st_ep_hostname(const st_endpoint *ep, char *buf)
{
    if (!ep->has_host)
        return NULL;
    return with_prefix(ep->sl, ep->sl->pool + ep->str, buf);
}

const char *st_ep_pod(const st_endpoint *ep, char *buf)
{
    if (!ep->has_pod)
        return NULL;
    const char *p = ep->sl->pool + ep->str;
    if (ep->pod_is_host)
        return with_prefix(ep->sl, p, buf);
    if (ep->has_host)
        p += strlen(p) + 1;
    return p;
}

const char *st_ep_addr(const st_endpoint *ep, char *buf)
{
    if (!ep->addr_text) {
        st_ip ip = st_ep_ip(ep);
        return inet_ntop(ip.family == 4 ? AF_INET : AF_INET6, ip.addr, buf, ST_ADDR_STRLEN) ?
               buf : "";
    }
    const char *p = ep->sl->pool + ep->str;
    if (ep->has_host)
        p += strlen(p) + 1;
    if (ep->has_pod && !ep->pod_is_host)
        p += strlen(p) + 1;
    return p;
}

void decode_slice_ref(slice_blob *b)
{
    assert(b && atomic_load(&b->refs) > 0);   /* only a live slice gains a reference */
    atomic_fetch_add(&b->refs, 1);
}

void decode_slice_unref(slice_blob *b)
{
    assert(!b || atomic_load(&b->refs) > 0);
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    free(b);                        /* one block (decode_slice) */
}

/* ---- pods ------------------------------------------------------------- */

static uint8_t phase_of(const char *p)
{
    if (!p)
        return ST_PHASE_PENDING;
    if (!strcmp(p, "Running"))
        return ST_PHASE_RUNNING;
    if (!strcmp(p, "Succeeded"))
        return ST_PHASE_SUCCEEDED;
    if (!strcmp(p, "Failed"))
        return ST_PHASE_FAILED;
    if (!strcmp(p, "Unknown"))
        return ST_PHASE_UNKNOWN;
    return ST_PHASE_PENDING;
}

st_pod *decode_pod(strtab *strs, const cJSON *obj, const char **why)
{
    const char *ns = decode_obj_ns(obj), *name = decode_obj_name(obj);
    if ((*why = bad_names(ns, name)))
        return NULL;
    const cJSON *spec = jget(obj, "spec"), *status = jget(obj, "status");
    st_ip v[2];
    uint8_t nips = 0;
    memset(v, 0, sizeof v);
    const cJSON *ips = jget(status, "podIPs"), *ip;
    cJSON_ArrayForEach(ip, jarray(ips)) {
        if (nips < 2 && st_parse_ip(jstr(ip, "ip"), &v[nips]) == 0)
            nips++;
    }
    if (nips == 0 && st_parse_ip(jstr(status, "podIP"), &v[0]) == 0)
        nips = 1;
    /* the addresses follow the record: 45 bytes for one IPv4 pod */
    st_pod *p = calloc(1, sizeof *p + nips * sizeof *v);
    if (!p) {
        *why = "out of memory";
        return NULL;
    }
    p->nips = nips;
    memcpy(p->ips, v, nips * sizeof *v);
    p->ns = strtab_intern(strs, ns);
    p->name = name;                 /* the JSON's: the store points it at its own copy */
    p->node_name = strtab_intern(strs, jstr(spec, "nodeName"));
    p->host_network = (uint8_t)jbool(spec, "hostNetwork", 0);
    p->phase = phase_of(jstr(status, "phase"));
    p->terminating = jget(jget(obj, "metadata"), "deletionTimestamp") != NULL &&
                     !cJSON_IsNull(jget(jget(obj, "metadata"), "deletionTimestamp"));
    return p;
}

void decode_pod_free(void *pod)
{
    free(pod);
}

/* ---- nodes ------------------------------------------------------------ */

/* Quantity suffixes (SI and binary) and their factors. */
static const struct { const char *suffix; double mult; } cpu_units[] = {
    { "", 1 }, { "n", 1e-9 }, { "u", 1e-6 }, { "m", 1e-3 }, { "k", 1e3 }, { "M", 1e6 },
    { "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 }, { "E", 1e18 },
    { "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 }, { "Ti", 1099511627776.0 },
    { "Pi", 1125899906842624.0 }, { "Ei", 1152921504606846976.0 },
};

/* The factor of a quantity's suffix; -1 when it is none. A decimal exponent
 * ("e3", "E-2") is left to strtod: factor 1. */
static double cpu_suffix(const char *s)
{
    if ((*s == 'e' || *s == 'E') && s[1]) {
        const char *d = s + 1 + (s[1] == '+' || s[1] == '-');
        if (*d && strspn(d, "0123456789") == strlen(d))
            return 1;
    }
    for (size_t i = 0; i < sizeof cpu_units / sizeof cpu_units[0]; i++)
        if (!strcmp(s, cpu_units[i].suffix))
            return cpu_units[i].mult;
    return -1;
}

/* A quantity as the API writes one: [+-]digits[.digits] then a suffix, no
 * blanks, no hex, no "nan"/"inf" (which strtod alone would take). The
 * result must fit the store's uint32_t millicores; anything else is -1. */
long st_cpu_milli(const char *q)
{
    if (!q)
        return -1;
    const char *p = q + (*q == '+' || *q == '-');
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    double mult = digits ? cpu_suffix(p) : -1;
    if (mult < 0)
        return -1;
    double v = strtod(q, NULL);
    double milli = v * mult * 1000.0;
    if (!(milli >= 0 && milli <= (double)UINT32_MAX))   /* also NaN and infinities */
        return -1;
    long r = (long)milli;
    if ((double)r < milli - 1e-9)
        r++;                        /* round up */
    return r <= (long)UINT32_MAX ? r : -1;
}

static int cmp_label(const void *a, const void *b)
{
    return strcmp(((const st_label *)a)->key, ((const st_label *)b)->key);
}

/* metadata.labels, sorted by key. NULL with *why when there are more than
 * the 16-bit count holds (the object is skipped). */
static st_label *decode_labels(strtab *strs, const cJSON *obj, uint16_t *n, const char **why)
{
    const cJSON *labels = jget(jget(obj, "metadata"), "labels");
    int cnt = cJSON_IsObject(labels) ? cJSON_GetArraySize(labels) : 0;
    *n = 0;
    if (cnt > UINT16_MAX) {
        *why = "more than 65535 labels";
        return NULL;
    }
    st_label *out = calloc((size_t)(cnt ? cnt : 1), sizeof *out);
    if (!out)
        return NULL;
    const cJSON *l;
    cJSON_ArrayForEach(l, obj_or_null(labels)) {
        if (cJSON_IsString(l) && *n < cnt) {
            out[*n].key = strtab_intern(strs, l->string);
            out[(*n)++].value = strtab_intern(strs, l->valuestring);
        }
    }
    qsort(out, *n, sizeof *out, cmp_label);
    return out;
}

const char *st_node_label(const st_node *n, const char *key)
{
    size_t lo = 0, hi = n->nlabels;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(n->labels[mid].key, key);
        if (c == 0)
            return n->labels[mid].value;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* status.allocatable.cpu in millicores; 0 (unknown) when absent, or when
 * the quantity is malformed or beyond what the store holds: the API server
 * accepts any quantity there, so the field is dropped, not the node. */
static uint32_t node_cpu(const cJSON *obj, const char *q)
{
    long cpu = st_cpu_milli(q);
    if (q && cpu < 0)
        log_warning("plugin/kubernetes: node %s: ignoring status.allocatable.cpu \"%.40s%s\": not "
                    "a quantity in 0..4294967295m", decode_obj_name(obj), q,
                    strlen(q) > 40 ? "..." : "");
    return cpu > 0 ? (uint32_t)cpu : 0;
}

/* A Node in one block (5,000 of them in a large cluster): the st_node,
 * then its labels, addresses and ranges. */
st_node *decode_node(strtab *strs, const cJSON *obj, const store_opts *o, const char **why)
{
    assert(strs && o && why);
    const char *name = decode_obj_name(obj);
    if ((*why = bad_names(NULL, name)))
        return NULL;
    uint16_t nlabels = 0;
    st_label *labels = decode_labels(strs, obj, &nlabels, why);
    if (!labels) {
        if (!*why)
            *why = "out of memory";
        return NULL;
    }
    const cJSON *status = jget(obj, "status");
    const cJSON *addrs = jget(status, "addresses");
    int cnt = cJSON_IsArray(addrs) ? cJSON_GetArraySize(addrs) : 0;
    size_t cap = cnt > 255 ? 255 : (size_t)cnt;
    /* spec.podCIDRs (dual-stack: one per family), else spec.podCIDR */
    const cJSON *spec = jget(obj, "spec"), *pc = jarray(jget(spec, "podCIDRs")), *cc;
    cidr cidrs[8];
    uint8_t ncidrs = 0;
    cJSON_ArrayForEach(cc, pc)
        if (ncidrs < 8 && cidr_parse_host(cJSON_GetStringValue(cc), &cidrs[ncidrs]) == 0)
            ncidrs++;
    if (!ncidrs && cidr_parse_host(jstr(spec, "podCIDR"), &cidrs[0]) == 0)
        ncidrs = 1;
    size_t at_labels = align8(sizeof(st_node));
    size_t at_cidrs = align8(at_labels + nlabels * sizeof(st_label));
    size_t at_addrs = align8(at_cidrs + ncidrs * sizeof(cidr));
    st_node *n = calloc(1, at_addrs + cap * sizeof(st_ip));
    if (!n) {
        free(labels);
        *why = "out of memory";
        return NULL;
    }
    char *base = (char *)n;
    n->name = strtab_intern(strs, name);
    n->nlabels = nlabels;
    if (nlabels)
        memcpy(base + at_labels, labels, nlabels * sizeof(st_label));
    n->labels = (const st_label *)(base + at_labels);
    free(labels);
    const char *z = st_node_label(n, o->zone_label), *r = st_node_label(n, o->region_label);
    n->zone = z ? strtab_intern_lower(strs, z) : NULL;
    n->region = r ? strtab_intern_lower(strs, r) : NULL;
    n->control_plane = st_node_label(n, "node-role.kubernetes.io/control-plane") != NULL ||
                       st_node_label(n, "node-role.kubernetes.io/master") != NULL;
    n->cpu_milli = node_cpu(obj, jstr(jget(status, "allocatable"), "cpu"));
    const cJSON *c;
    cJSON_ArrayForEach(c, jarray(jget(status, "conditions"))) {
        const char *t = jstr(c, "type"), *st = jstr(c, "status");
        if (t && st && !strcmp(t, "Ready"))
            n->ready = !strcmp(st, "True");
    }
    st_ip *ips = (st_ip *)(base + at_addrs);
    const cJSON *a;
    cJSON_ArrayForEach(a, jarray(addrs)) {
        if (n->naddrs < cap && st_parse_ip(jstr(a, "address"), &ips[n->naddrs]) == 0)
            n->naddrs++;
    }
    n->addrs = ips;
    n->ncidrs = ncidrs;
    n->cidrs = ncidrs ? memcpy(base + at_cidrs, cidrs, ncidrs * sizeof(cidr)) : NULL;
    assert(n->naddrs <= cap && n->ncidrs <= 8);
    return n;
}

void decode_node_free(void *p)
{
    free(p);                        /* one block (decode_node) */
}

/* ---- CNI range objects ------------------------------------------------ */

int decode_ciliumnode(const cJSON *obj, cidr *out, size_t cap, const char **why)
{
    assert((out || cap == 0) && why);
    if ((*why = bad_names(NULL, decode_obj_name(obj))))
        return -1;
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, jarray(jget(jget(jget(obj, "spec"), "ipam"), "podCIDRs")))
        if ((size_t)n < cap && cidr_parse_host(cJSON_GetStringValue(c), &out[n]) == 0)
            n++;
    return n;
}

int decode_blockaffinity(const cJSON *obj, cidr *out, const char **node, const char **why)
{
    assert(out && node && why);
    if ((*why = bad_names(NULL, decode_obj_name(obj))))
        return -1;
    const cJSON *spec = jget(obj, "spec"), *del = jget(spec, "deleted");
    const char *state = jstr(spec, "state");
    *node = jstr(spec, "node");
    if (!state || strcmp(state, "confirmed") || cJSON_IsTrue(del) ||
        (cJSON_IsString(del) && !strcmp(del->valuestring, "true")))
        return 0;
    if (!*node || !**node) {
        *why = "spec.node missing";
        return -1;
    }
    if (cidr_parse_host(jstr(spec, "cidr"), out) < 0) {
        *why = "spec.cidr is not a CIDR";
        return -1;
    }
    return 1;
}

/* ---- namespaces ------------------------------------------------------- */

st_namespace *decode_namespace(strtab *strs, const cJSON *obj, const char **why)
{
    const char *name = decode_obj_name(obj);
    if ((*why = bad_names(NULL, name)))
        return NULL;
    st_namespace *ns = calloc(1, sizeof *ns);
    if (!ns) {
        *why = "out of memory";
        return NULL;
    }
    ns->name = strtab_intern(strs, name);
    ns->labels = decode_labels(strs, obj, &ns->nlabels, why);
    if (*why) {
        decode_namespace_free(ns);
        return NULL;
    }
    return ns;
}

void decode_namespace_free(void *p)
{
    st_namespace *ns = p;
    if (ns)
        free((void *)ns->labels);
    free(ns);
}
