/* SPDX-License-Identifier: Apache-2.0 */
/*
 * autopath.c — the kubernetes plugin as the autopath plugin's search path
 * source (`autopath @kubernetes`, src/server/autopath.h), CoreDNS's
 * Kubernetes.AutoPath: for a query under one of the plugin's zones from a
 * client that is a known pod (`pods verified`: the store's pod index by the
 * query's source address), the pod's resolv.conf search path as kubelet
 * writes it, then this server's own:
 *
 *   <pod namespace>.svc.<zone>   svc.<zone>   <zone>
 *   the search domains of /etc/resolv.conf (read at setup)
 *   the bare name (the root name)
 *
 * with <zone> the plugin zone the query falls in ("svc." and "." for the
 * root zone). No list (no autopath) for other queries and clients, and
 * never without `pods verified` (the source then says so: autopath logs it
 * at start).
 *
 * search() runs on the worker, inside its own store read-side section.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/autopath.h"

/* Room is kept for the root name that ends every list. */
static void push(autopath_list *out, const char *text)
{
    if (out->n < AUTOPATH_MAX - 1 && dname_from_str(out->name[out->n], text) > 0)
        dname_lower(out->name[out->n++]);
}

int kube_autopath_list(const kube *k, int zi, const char *ns, autopath_list *out)
{
    char buf[DNAME_STR_MAX + 80];
    const char *zone = k->zones[zi];
    int root = strcmp(zone, ".") == 0;
    out->n = 0;
    snprintf(buf, sizeof buf, "%s.svc.%s", ns, root ? "" : zone);
    push(out, buf);
    snprintf(buf, sizeof buf, "svc.%s", root ? "" : zone);
    push(out, buf);
    push(out, zone);
    for (int i = 0; i < k->search.n; i++)
        push(out, k->search.name[i]);
    out->name[out->n++][0] = 0;
    return out->n;
}

/* The client's address as the store keys pods. */
static int client_ip(const dns_req *r, st_ip *ip)
{
    memset(ip, 0, sizeof *ip);
    if (r->peer.ss_family == AF_INET) {
        ip->family = 4;
        memcpy(ip->addr, &((const struct sockaddr_in *)&r->peer)->sin_addr, 4);
        return 0;
    }
    if (r->peer.ss_family == AF_INET6) {
        ip->family = 6;
        memcpy(ip->addr, &((const struct sockaddr_in6 *)&r->peer)->sin6_addr, 16);
        return 0;
    }
    return -1;
}

static int kube_autopath(void *data, const dns_req *r, autopath_list *out)
{
    kube *k = data;
    out->n = 0;
    uint8_t low[DNAME_MAX];
    st_ip ip;
    if (k->pod_mode != POD_VERIFIED || !k->st || client_ip(r, &ip) < 0)
        return 0;
    memcpy(low, r->q.qname, dname_len(r->q.qname));
    dname_lower(low);
    int zi = kube_match_zone(k, low);
    if (zi < 0)
        return 0;
    char ns[KLABEL] = "";
    store_read_begin();
    const st_pod *pod = store_pod_by_ip(k->st, &ip);
    if (pod)
        snprintf(ns, sizeof ns, "%s", pod->ns);
    store_read_end();
    return ns[0] ? kube_autopath_list(k, zi, ns, out) : 0;
}

int kube_publish_autopath(kube *k, struct server_block *blk)
{
    autopath_source src = {
        kube_autopath, k,
        k->pod_mode == POD_VERIFIED ? NULL
            : "the kubernetes plugin finds client pods only with `pods verified`: "
              "autopath @kubernetes completes no search path",
    };
    return autopath_source_publish(blk, "kubernetes", &src);
}
