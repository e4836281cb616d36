/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apex.c — the records of a zone's apex: SOA, and the names and addresses
 * behind NS and ns.dns.<zone>.
 *
 * SOA: owner the zone as the client spelled it, TTL min(ttl, 300), MNAME
 * ns.dns.<zone>, RNAME hostmaster.<zone>, serial = the store's last
 * DNS-relevant change, 7200 1800 86400, MINIMUM = ttl.
 *
 * NS (CoreDNS nsAddrs): for each of our own addresses, every service with a
 * ready endpoint holding it contributes <svc>.<ns>.svc.<zone> with its
 * cluster IPs, or for a headless service <ep>.<svc>.<ns>.svc.<zone> per
 * ready endpoint. With none, ns.dns.<zone> with our own addresses.
 */
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"

static int prefixed(uint8_t *out, const char *a, const char *b, const uint8_t *zone)
{
    size_t o = 0, la = strlen(a), lb = b ? strlen(b) : 0, zl = dname_len(zone);
    if (la + lb + 2 + zl > DNAME_MAX)
        return -1;
    out[o++] = (uint8_t)la;
    memcpy(out + o, a, la);
    o += la;
    if (b) {
        out[o++] = (uint8_t)lb;
        memcpy(out + o, b, lb);
        o += lb;
    }
    memcpy(out + o, zone, zl);
    return 0;
}

int kube_add_soa(kq *q, dns_msg *m, int sec)
{
    uint8_t mname[DNAME_MAX], rname[DNAME_MAX];
    if (prefixed(mname, "ns", "dns", q->zone_q) < 0 ||
        prefixed(rname, "hostmaster", NULL, q->zone_q) < 0)
        return -1;
    uint32_t ttl = q->k->ttl < 300 ? q->k->ttl : 300;
    return msg_add_soa(m, sec, q->zone_q, ttl, mname, rname, store_serial(q->st),
                       7200, 1800, 86400, q->k->ttl);
}

typedef struct svc_set {
    const st_service **svcs;
    int n, max;
} svc_set;

static int collect(const st_service *svc, const st_endpoint *ep, void *arg)
{
    (void)ep;
    svc_set *s = arg;
    for (int i = 0; i < s->n; i++)
        if (s->svcs[i] == svc)
            return 0;
    if (s->n < s->max)
        s->svcs[s->n++] = svc;
    return 0;
}

int kube_services_at(store *st, const st_ip *ip, const st_service **out, int max)
{
    svc_set set = { .svcs = out, .n = 0, .max = max };
    store_endpoints_by_ip(st, ip, collect, &set);
    return set.n;
}

static int push(kq *q, kvec *out, const uint8_t *name, const st_ip *ip)
{
    const uint8_t *key = karena_dname(&q->arena, name);
    kentry e = { .kind = KE_IP, .ip = *ip, .key = key, .ttl = q->k->ttl };
    return key && kvec_push(out, &e) == 0 ? 0 : -1;
}

/* <svc>.<ns>.svc.<zone> in wire form */
static int svc_name(kq *q, const st_service *svc, uint8_t *out)
{
    uint8_t tail[DNAME_MAX];
    if (prefixed(tail, "svc", NULL, q->zone_q) < 0)
        return -1;
    return prefixed(out, svc->name, svc->ns, tail);
}

static int add_service(kq *q, const st_service *svc, kvec *out)
{
    uint8_t name[DNAME_MAX];
    if (svc_name(q, svc, name) < 0)
        return 0;
    if (svc->kind != SVC_HEADLESS) {
        for (uint8_t i = 0; i < svc->n_cluster_ips; i++)
            if (push(q, out, name, &svc->cluster_ips[i]) < 0)
                return -1;
        return 0;
    }
    const st_endpoints *eps = store_endpoints(q->st, svc->ns, svc->name);
    for (size_t i = 0; eps && i < eps->n; i++) {
        const st_endpoint *ep = &eps->eps[i];
        char label[KLABEL];
        uint8_t full[DNAME_MAX];
        if (!ep->ready)
            continue;
        kube_endpoint_name(ep, q->k->endpoint_pod_names, label, sizeof label);
        size_t l = strlen(label), nl = dname_len(name);
        if (l == 0 || l > 63 || l + 1 + nl > DNAME_MAX)
            continue;
        full[0] = (uint8_t)l;
        memcpy(full + 1, label, l);
        memcpy(full + 1 + l, name, nl);
        st_ip ip = st_ep_ip(ep);
        if (push(q, out, full, &ip) < 0)
            return -1;
    }
    return 0;
}

int kube_ns_addrs(kq *q, kvec *out)
{
    kube *k = q->k;
    for (int i = 0; !k->noendpoints && i < k->nself; i++) {
        const st_service *svcs[KUBE_MAX_NS_SVCS];
        int n = kube_services_at(q->st, &k->self[i], svcs, KUBE_MAX_NS_SVCS);
        for (int j = 0; j < n; j++)
            if (add_service(q, svcs[j], out) < 0)
                return K_FAIL;
    }
    if (out->n > 0)
        return K_OK;
    uint8_t name[DNAME_MAX];
    if (prefixed(name, "ns", "dns", q->zone_q) < 0)
        return K_OK;
    for (int i = 0; i < k->nself; i++)
        if (push(q, out, name, &k->self[i]) < 0)
            return K_FAIL;
    return K_OK;
}
