/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metadata.c — the kubernetes plugin as a metadata provider (CoreDNS's
 * plugin/kubernetes/metadata.go), for the metadata plugin and the log
 * plugin's {/kubernetes/...} placeholders.
 *
 * kube_metadata() registers, when the block's metadata plugin collects:
 *   - with `pods verified`: kubernetes/client-namespace and
 *     kubernetes/client-pod-name, the pod whose address is the client's
 *     (none when there is no such pod);
 *   - for a name in one of the plugin's zones, from the name alone
 *     (kube_parse, CoreDNS's parseRequest): kubernetes/port-name,
 *     kubernetes/protocol, kubernetes/endpoint, kubernetes/service,
 *     kubernetes/namespace, kubernetes/kind ("svc", "pod", or empty at the
 *     apex), and kubernetes/zone with `zonal`; a name the grammar rejects
 *     gets kubernetes/parse-error "invalid query name" instead.
 * Values are computed when read (req_meta_get), on the worker thread
 * serving the request: the name is parsed again, the pod looked up inside
 * store_read_begin/_end and copied out. Nothing here changes how queries
 * are answered.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"

/* The longest of the plugin's zones holding the lower-cased name, or -1. */
static int zone_of(const kube *k, const uint8_t *low)
{
    int best = -1;
    for (int i = 0; i < k->nzones; i++)
        if (dname_is_sub(low, k->zwire[i]) && (best < 0 || k->zlabels[i] > k->zlabels[best]))
            best = i;
    return best;
}

static int parse_name(const kube *k, const dns_req *r, kreq *kr)
{
    uint8_t low[DNAME_MAX];
    memcpy(low, r->q.qname, dname_len(r->q.qname));
    dname_lower(low);
    int zi = zone_of(k, low);
    if (zi < 0)
        return K_INVALID;
    /* multicluster zones too: CoreDNS asks its parser with the zone its
     * metadata collector never sets, so their names are read as in any zone */
    return kube_parse(low, k->zlabels[zi], k->zonal, kr);
}

static const char *name_value(const dns_req *r, const char *key, const void *data, char *buf,
                              size_t cap)
{
    kreq kr;
    if (parse_name(data, r, &kr) != K_OK)
        return NULL;
    const char *v = "";
    if (!strcmp(key, "kubernetes/port-name"))
        v = kr.port;
    else if (!strcmp(key, "kubernetes/protocol"))
        v = kr.proto;
    else if (!strcmp(key, "kubernetes/endpoint"))
        v = kr.endpoint;
    else if (!strcmp(key, "kubernetes/service"))
        v = kr.service;
    else if (!strcmp(key, "kubernetes/namespace"))
        v = kr.ns;
    else if (!strcmp(key, "kubernetes/zone"))
        v = kr.topo_zone;
    else if (!strcmp(key, "kubernetes/kind"))
        v = kr.podsvc == KR_SVC ? "svc" : kr.podsvc == KR_POD ? "pod" : "";
    snprintf(buf, cap, "%s", v);
    return buf;
}

static const char *parse_error(const dns_req *r, const char *key, const void *data, char *buf,
                               size_t cap)
{
    (void)r, (void)key, (void)data;
    snprintf(buf, cap, "invalid query name");
    return buf;
}

/* The client's pod (pods verified): its namespace or name. */
static const char *client_value(const dns_req *r, const char *key, const void *data, char *buf,
                                size_t cap)
{
    const kube *k = data;
    char addr[INET6_ADDRSTRLEN];
    st_ip ip;
    req_peer_str(r, addr, sizeof addr, NULL);
    if (!k->st || st_parse_ip(addr, &ip) < 0)
        return NULL;
    const char *v = NULL;
    store_read_begin();
    const st_pod *pod = store_pod_by_ip(k->st, &ip);
    if (pod) {
        snprintf(buf, cap, "%s", strcmp(key, "kubernetes/client-namespace") ? pod->name : pod->ns);
        v = buf;
    }
    store_read_end();
    return v;
}

void kube_metadata(const handler *h, dns_req *r)
{
    const kube *k = h->inst;
    if (k->pod_mode == POD_VERIFIED) {
        req_meta_set(r, "kubernetes/client-namespace", client_value, k);
        req_meta_set(r, "kubernetes/client-pod-name", client_value, k);
    }
    uint8_t low[DNAME_MAX];
    memcpy(low, r->q.qname, dname_len(r->q.qname));
    dname_lower(low);
    if (zone_of(k, low) < 0)
        return;
    kreq kr;
    if (parse_name(k, r, &kr) != K_OK) {
        req_meta_set(r, "kubernetes/parse-error", parse_error, k);
        return;
    }
    static const char *const keys[] = {
        "kubernetes/port-name", "kubernetes/protocol", "kubernetes/endpoint",
        "kubernetes/service", "kubernetes/namespace", "kubernetes/kind",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        req_meta_set(r, keys[i], name_value, k);
    if (k->zonal)
        req_meta_set(r, "kubernetes/zone", name_value, k);
}
