/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup.c — what exists under a name: CoreDNS's Records(), findServices(),
 * findPods() and Services(), as "entries" (an address with a port, a CNAME
 * target or a TXT string, each with the domain it belongs to).
 *
 * The record builders in answer.c turn entries into records the way
 * CoreDNS's backend_lookup.go does; the split keeps the quirks where CoreDNS
 * has them (e.g. `_port._proto` names answering A with the VIP, endpoint
 * names under ClusterIP services, SRV weights counted before dedup).
 *
 * All lookups run inside store_read_begin()/_end(), taken by serve().
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"

/* ---- names of entries ------------------------------------------------------ */

/* labels… + the zone as queried, into the arena; NULL when too long. */
static const uint8_t *key_name(kq *q, const char *const *labels, int n)
{
    uint8_t buf[DNAME_MAX];
    size_t o = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(labels[i]);
        if (l == 0 || l > 63 || o + l + 1 >= DNAME_MAX)
            return NULL;
        buf[o++] = (uint8_t)l;
        memcpy(buf + o, labels[i], l);
        o += l;
    }
    size_t zl = dname_len(q->zone_q);
    if (o + zl > DNAME_MAX)
        return NULL;
    memcpy(buf + o, q->zone_q, zl);
    return karena_dname(&q->arena, buf);
}

/* Entry domains are only needed by SRV (targets): skip building them for
 * the other qtypes, which matters for large headless services. */
static const uint8_t *entry_key(kq *q, const char *const *labels, int n)
{
    return q->need_keys ? key_name(q, labels, n) : NULL;
}

/* 0, -1 out of memory, or 1 when q->entry_cap entries are there already
 * (q->entries_cut set): the caller stops and reports K_OK. */
static int push_ip(kq *q, kvec *out, const st_ip *ip, int32_t port, const uint8_t *key)
{
    if (!key && q->need_keys)
        return 0;
    if (q->entry_cap && out->n >= q->entry_cap) {
        q->entries_cut = 1;
        return 1;
    }
    kentry e = { .kind = KE_IP, .ip = *ip, .port = port, .key = key, .ttl = q->k->ttl };
    return kvec_push(out, &e);
}

/* ---- namespaces ------------------------------------------------------------- */

static int ns_listed(const kube *k, const char *ns)
{
    if (k->nnamespaces == 0)
        return 1;
    for (int i = 0; i < k->nnamespaces; i++)
        if (!strcmp(k->namespaces[i], ns))
            return 1;
    return 0;
}

/* Listed (or no list), watched, and — a second check of what the watch's
 * label selector already filters — matching namespace_labels. */
int kube_ns_exposed(kq *q, const char *ns)
{
    if (!ns_listed(q->k, ns))
        return 0;
    const st_namespace *n = store_namespace(q->st, ns);
    return n && (q->k->ns_sel.n == 0 || ksel_match(&q->k->ns_sel, n->labels, n->nlabels));
}

/* ---- services ---------------------------------------------------------------- */

const char *kube_proto_name(const st_port *p)
{
    if (p->port == -1)
        return "";
    switch (p->proto) {
    case ST_UDP: return "UDP";
    case ST_SCTP: return "SCTP";
    default: return "TCP";
    }
}

/* CoreDNS matchPortAndProtocol: empty request fields are wild. */
static int port_match(const kreq *r, const st_port *p)
{
    return (!r->port[0] || !strcasecmp(r->port, p->name ? p->name : "")) &&
           (!r->proto[0] || !strcasecmp(r->proto, kube_proto_name(p)));
}

static size_t ready_count(const st_endpoints *eps)
{
    size_t n = 0;
    for (size_t i = 0; eps && i < eps->n; i++)
        n += eps->eps[i].ready;
    return n;
}

static int external_name(kq *q, const st_service *svc, const kreq *r, kvec *out)
{
    const char *target = st_svc_x(svc)->external_name;
    if (r->endpoint[0] || r->port[0] || r->proto[0] || !target)
        return K_NOITEMS;
    st_ip ip;
    if (!*target || st_parse_ip(target, &ip) == 0)
        return K_NOITEMS;           /* an IP is not served */
    const char *labels[] = { svc->name, svc->ns, "svc" };
    size_t hl = strlen(target) + 1;
    char *host = karena_alloc(&q->arena, hl);
    if (!host)
        return K_FAIL;
    memcpy(host, target, hl);
    kentry e = { .kind = KE_CNAME, .host = host,
                 .key = key_name(q, labels, 3), .ttl = q->k->ttl };
    if (!e.key)
        return K_NOITEMS;
    return kvec_push(out, &e) < 0 ? K_FAIL : K_OK;
}

static int endpoint_entries(kq *q, const st_service *svc, const st_endpoints *eps,
                            const kreq *r, kvec *out)
{
    int err = K_NOITEMS;
    char name[KLABEL];
    /* topology (topo.c): NULL keeps every ready endpoint */
    const uint8_t *keep = r->endpoint[0] ? NULL : kube_topo_keep(q, svc, eps);
    int filtered = 0;               /* topology hid a matching endpoint */
    for (size_t i = 0; eps && i < eps->n; i++) {
        const st_endpoint *ep = &eps->eps[i];
        if (!ep->ready)
            continue;
        if (keep && !keep[i]) {
            /* topology hides it (keep is NULL for <ep>.<svc> names) */
            for (uint16_t p = 0; !filtered && p < st_ep_nports(ep); p++)
                filtered = port_match(r, &st_ep_ports(ep)[p]);
            continue;
        }
        /* the endpoint's name is needed only to match <ep>.<svc> or for
         * SRV targets (need_keys): not built for plain A/AAAA */
        if (r->endpoint[0] || q->need_keys)
            kube_endpoint_name(ep, q->k->endpoint_pod_names, name, sizeof name);
        else
            name[0] = '\0';
        if (r->endpoint[0] && strcasecmp(r->endpoint, name))
            continue;
        const char *labels[] = { name, svc->name, svc->ns, "svc" };
        const uint8_t *key = NULL;
        st_ip ip = st_ep_ip(ep);
        for (uint16_t p = 0; p < st_ep_nports(ep); p++) {
            if (!port_match(r, &st_ep_ports(ep)[p]))
                continue;
            if (!key && !(key = entry_key(q, labels, 4)) && q->need_keys)
                break;
            int rc = push_ip(q, out, &ip, st_ep_ports(ep)[p].port, key);
            if (rc)
                return rc < 0 ? K_FAIL : K_OK;
            err = K_OK;
        }
    }
    /* the name exists; this client just gets no address: NODATA */
    return err == K_NOITEMS && filtered ? K_OK : err;
}

static int cluster_ip_entries(kq *q, const st_service *svc, const kreq *r, kvec *out)
{
    int err = K_NOITEMS;
    const char *labels[] = { svc->name, svc->ns, "svc" };
    const uint8_t *key = NULL;
    for (uint16_t p = 0; p < svc->nports; p++) {
        if (!port_match(r, &svc->ports[p]))
            continue;
        err = K_OK;
        if (!key && !(key = entry_key(q, labels, 3)) && q->need_keys)
            return K_NOITEMS;
        for (uint8_t i = 0; i < svc->n_cluster_ips; i++) {
            int rc = push_ip(q, out, &svc->cluster_ips[i], svc->ports[p].port, key);
            if (rc)
                return rc < 0 ? K_FAIL : K_OK;
        }
    }
    return err;
}

/* <zone>.pin|prefer._zone.<svc>.<ns>.svc: headless only; an empty pin is
 * NODATA, an empty prefer widens to every ready endpoint. */
static int zonal_entries(kq *q, const st_service *svc, const st_endpoints *eps,
                         const kreq *r, kvec *out)
{
    if (svc->kind != SVC_HEADLESS)
        return K_NOITEMS;
    q->zonal_hit = 1;
    int any = 0;
    for (size_t i = 0; eps && i < eps->n; i++)
        any |= eps->eps[i].ready && st_ep_zone(&eps->eps[i]) &&
               !strcmp(st_ep_zone(&eps->eps[i]), r->topo_zone);
    int all = !any && r->zonal == ZONAL_PREFER;
    char name[KLABEL];
    for (size_t i = 0; eps && i < eps->n; i++) {
        const st_endpoint *ep = &eps->eps[i];
        if (!ep->ready || (!all && !(st_ep_zone(ep) && !strcmp(st_ep_zone(ep), r->topo_zone))))
            continue;
        kube_endpoint_name(ep, q->k->endpoint_pod_names, name, sizeof name);
        const char *labels[] = { name, svc->name, svc->ns, "svc" };
        const uint8_t *key = entry_key(q, labels, 4);
        st_ip ip = st_ep_ip(ep);
        for (uint16_t p = 0; (key || !q->need_keys) && p < st_ep_nports(ep); p++) {
            int rc = push_ip(q, out, &ip, st_ep_ports(ep)[p].port, key);
            if (rc)
                return rc < 0 ? K_FAIL : K_OK;
        }
    }
    return K_OK;
}

static int find_services(kq *q, const kreq *r, kvec *out)
{
    if (!r->service[0])
        return K_OK;                /* <ns>.svc: NODATA */
    const st_service *svc = store_service(q->st, r->ns, r->service);
    if (!svc)
        return K_NOITEMS;
    const st_endpoints *eps = q->k->noendpoints ? NULL :
                              store_endpoints(q->st, svc->ns, svc->name);
    if (r->zonal)
        return zonal_entries(q, svc, eps, r, out);
    if (q->k->ignore_empty && svc->kind == SVC_CLUSTERIP && ready_count(eps) == 0)
        return K_NOITEMS;
    if (svc->kind == SVC_EXTERNALNAME)
        return external_name(q, svc, r, out);
    if (svc->kind == SVC_HEADLESS || r->endpoint[0])
        return endpoint_entries(q, svc, eps, r, out);
    return cluster_ip_entries(q, svc, r, out);
}

/* ---- multicluster (ServiceImports) ------------------------------------------ */

typedef struct mcwalk {
    kq *q;
    const st_svcimport *si;
    const kreq *r;
    kvec *out;
    int err;
    size_t ready;
} mcwalk;

static int mc_count(const char *cluster, const st_endpoint *eps, size_t n, void *arg)
{
    (void)cluster;
    mcwalk *w = arg;
    for (size_t i = 0; i < n; i++)
        w->ready += eps[i].ready;
    return 0;
}

/* CoreDNS findMultiClusterServices, endpoint part: every ready endpoint
 * of every multicluster slice (an endpoint name must match the endpoint
 * and its slice's cluster), per matching port. */
static int mc_endpoints(const char *cluster, const st_endpoint *eps, size_t n, void *arg)
{
    mcwalk *w = arg;
    kq *q = w->q;
    char name[KLABEL];
    for (size_t i = 0; i < n; i++) {
        const st_endpoint *ep = &eps[i];
        if (!ep->ready)
            continue;
        kube_endpoint_name(ep, q->k->endpoint_pod_names, name, sizeof name);
        if (w->r->endpoint[0] &&
            (strcasecmp(w->r->cluster, cluster) || strcasecmp(w->r->endpoint, name)))
            continue;
        const char *labels[] = { name, cluster, w->si->name, w->si->ns, "svc" };
        const uint8_t *key = NULL;
        st_ip ip = st_ep_ip(ep);
        for (uint16_t p = 0; p < st_ep_nports(ep); p++) {
            if (!port_match(w->r, &st_ep_ports(ep)[p]))
                continue;
            if (!key && !(key = entry_key(q, labels, 5)) && q->need_keys)
                break;
            int rc = push_ip(q, w->out, &ip, st_ep_ports(ep)[p].port, key);
            if (rc) {
                w->err = rc < 0 ? K_FAIL : K_OK;
                return 1;
            }
            w->err = K_OK;
        }
    }
    return 0;
}

static int find_mc_services(kq *q, const kreq *r, kvec *out)
{
    if (!r->service[0])
        return K_OK;                /* <ns>.svc: NODATA */
    const st_svcimport *si = store_svcimport(q->st, r->ns, r->service);
    if (!si)
        return K_NOITEMS;
    mcwalk w = { q, si, r, out, K_NOITEMS, 0 };
    if (q->k->ignore_empty && !si->headless) {
        store_foreach_mcslice(q->st, si->ns, si->name, mc_count, &w);
        if (w.ready == 0)
            return K_NOITEMS;
    }
    if (si->headless || r->endpoint[0]) {
        store_foreach_mcslice(q->st, si->ns, si->name, mc_endpoints, &w);
        return w.err;
    }
    const char *labels[] = { si->name, si->ns, "svc" };
    const uint8_t *key = NULL;
    for (uint16_t p = 0; p < si->nports; p++) {
        if (!port_match(r, &si->ports[p]))
            continue;
        w.err = K_OK;
        if (!key && !(key = entry_key(q, labels, 3)) && q->need_keys)
            return K_NOITEMS;
        for (uint8_t i = 0; i < si->nips; i++) {
            int rc = push_ip(q, out, &si->ips[i], si->ports[p].port, key);
            if (rc)
                return rc < 0 ? K_FAIL : K_OK;
        }
    }
    return w.err;
}

/* ---- pods ------------------------------------------------------------------- */

static int find_pods(kq *q, const kreq *r, kvec *out)
{
    if (q->k->pod_mode == POD_DISABLED)
        return K_NOITEMS;
    if (!r->service[0])
        return K_OK;                /* <ns>.pod: NODATA */
    char text[KLABEL];
    st_ip ip;
    kube_pod_label_ip(r->service, text, sizeof text);
    if (st_parse_ip(text, &ip) < 0)
        return K_NOITEMS;
    const char *labels[] = { r->service, r->ns, "pod" };
    const uint8_t *key = entry_key(q, labels, 3);
    if (!key && q->need_keys)
        return K_NOITEMS;
    if (q->k->pod_mode == POD_INSECURE)
        return push_ip(q, out, &ip, 0, key) < 0 ? K_FAIL : K_OK;     /* cap ≥ 1: never cut */
    /* verified: a watched pod of this namespace whose status.podIP is this
     * address, written exactly as the label gives it */
    char canon[INET6_ADDRSTRLEN];
    inet_ntop(ip.family == 4 ? AF_INET : AF_INET6, ip.addr, canon, sizeof canon);
    const st_pod *pod = store_pod_by_ip(q->st, &ip);
    if (!pod || strcmp(canon, text) || strcmp(pod->ns, r->ns) || pod->nips == 0 ||
        memcmp(&pod->ips[0], &ip, sizeof ip) ||
        pod->phase == ST_PHASE_SUCCEEDED || pod->phase == ST_PHASE_FAILED ||
        pod->phase == ST_PHASE_UNKNOWN)
        return K_NOITEMS;
    return push_ip(q, out, &ip, 0, key) < 0 ? K_FAIL : K_OK;
}

/* ---- Records and Services -------------------------------------------------- */

int kube_records(kq *q, const uint8_t *name, kvec *out)
{
    kreq r;
    int mc = q->k->zone_mc[q->zi];
    int e = kube_parse_mc(name, q->k->zlabels[q->zi], q->k->zonal, mc, &r);
    if (e != K_OK)
        return e;
    if (r.podsvc == KR_NONE)
        return K_OK;
    if (kube_is_reverse(name))
        return K_NOITEMS;
    if (!kube_ns_exposed(q, r.ns))
        return K_NSNOTEXPOSED;
    if (r.podsvc == KR_POD)
        return find_pods(q, &r, out);
    return mc ? find_mc_services(q, &r, out) : find_services(q, &r, out);
}

/* name is exactly <label>.<zone> */
static int is_zone_child(kq *q, const uint8_t *name, const char *label)
{
    size_t l = strlen(label);
    if (dname_labels(name) != q->k->zlabels[q->zi] + 1 || name[0] != l ||
        strncasecmp((const char *)name + 1, label, l))
        return 0;
    return 1;
}

static int txt_services(kq *q, const uint8_t *name, kvec *out)
{
    if (is_zone_child(q, name, "dns-version")) {
        kentry e = { .kind = KE_TXT, .host = "1.1.0", .ttl = 28800 };
        return kvec_push(out, &e) < 0 ? K_FAIL : K_OK;
    }
    kvec tmp = { 0 };
    q->zonal_hit = 0;
    kube_records(q, name, &tmp);
    int found = tmp.n > 0 || q->zonal_hit;
    kvec_free(&tmp);
    return found ? K_OK : K_NOITEMS;
}

/* ns.dns.<zone> A/AAAA: the NS addresses of that family, under the qname */
static int ns_dns_services(kq *q, uint16_t qtype, kvec *out)
{
    kvec all = { 0 };
    int e = kube_ns_addrs(q, &all);
    for (size_t i = 0; e == K_OK && i < all.n; i++) {
        kentry en = all.v[i];
        if ((qtype == T_A && en.ip.family != 4) || (qtype == T_AAAA && en.ip.family != 6) ||
            (qtype != T_A && qtype != T_AAAA))
            continue;
        en.key = q->r->q.qname;
        if (kvec_push(out, &en) < 0)
            e = K_FAIL;
    }
    kvec_free(&all);
    return e;
}

/* name is ns.dns.<zone> */
static int is_ns_dns(kq *q, const uint8_t *name)
{
    const uint8_t *rest = name + name[0] + 1;
    return dname_labels(name) == q->k->zlabels[q->zi] + 2 &&
           name[0] == 2 && !strncasecmp((const char *)name + 1, "ns", 2) &&
           rest[0] == 3 && !strncasecmp((const char *)rest + 1, "dns", 3);
}

int kube_services(kq *q, const uint8_t *name, uint16_t qtype, kvec *out)
{
    if (qtype == T_TXT)
        return txt_services(q, name, out);
    if (qtype == T_NS)
        return kube_ns_addrs(q, out);
    if (is_ns_dns(q, name))
        return ns_dns_services(q, qtype, out);
    int e = kube_records(q, name, out);
    if (qtype == T_SRV) {
        size_t w = 0;
        for (size_t i = 0; i < out->n; i++)
            if (out->v[i].kind != KE_CNAME)
                out->v[w++] = out->v[i];
        out->n = w;
    }
    return e;
}
