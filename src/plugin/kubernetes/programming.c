/* SPDX-License-Identifier: Apache-2.0 */
/*
 * programming.c — the DNS programming latency metric of an EndpointSlice
 * (coredns_kubernetes_dns_programming_duration_seconds): observed by the
 * watch callbacks of context.c and by kubernetes.c's test hook. API
 * thread, the store's writer. Calls nothing of the plugin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "plugin/kubernetes/kubernetes.h"
#include "cluster/decode.h"
#include "common/log.h"
#include "runtime/metrics.h"

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

/* The service_kind a slice is recorded under: its Service, looked up by
 * kubernetes.io/service-name, decides — "cluster_ip" for a ClusterIP (or
 * NodePort, LoadBalancer) Service, "headless_with_selector" for a headless
 * one with a selector; NULL (not recorded) for a headless Service without
 * a selector (its slices are not the endpoint controller's), an
 * ExternalName, or a Service not in the store. API thread, the store's
 * writer. */
static const char *slice_service_kind(store *st, const cJSON *slice)
{
    const char *svc = decode_obj_label(slice, "kubernetes.io/service-name");
    if (!st || !svc)
        return NULL;
    const char *kind = NULL;
    store_read_begin();
    const st_service *s = store_service(st, decode_obj_ns(slice), svc);
    if (s && s->kind == SVC_CLUSTERIP)
        kind = "cluster_ip";
    else if (s && s->kind == SVC_HEADLESS && s->has_selector)
        kind = "headless_with_selector";
    store_read_end();
    return kind;
}

void kube_programming_observe(metric_family *m, store *st, const cJSON *slice)
{
    const char *kind = slice_service_kind(st, slice);
    if (!kind)
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
    const char *const v[] = { kind };
    metrics_observe(m, v, d < 0 ? 0 : d);
}
