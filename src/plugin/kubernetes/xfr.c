/*
 * xfr.c — the kubernetes plugin as a zone transfer source
 * (src/server/transfer.h) for the transfer plugin: a zone's records in the
 * order of CoreDNS's plugin/kubernetes Transfer():
 *
 *   SOA (as the apex SOA: TTL min(ttl, 300), serial = the store's)
 *   NS  <zone> → each distinct name of the NS addresses (apex.c), TTL ttl
 *   the NS addresses themselves (A/AAAA), TTL 0 (CoreDNS sends them bare)
 *   every Service, sorted by name (then namespace: CoreDNS's sort leaves
 *   equal names in no fixed order), of exposed namespaces:
 *     ClusterIP  A/AAAA <svc>.<ns>.svc.<zone> per cluster IP; per port an
 *                SRV 0 100 <port> <svc>.<ns>.svc.<zone> at that name, and
 *                for a named port the same SRV at _<port>._<proto>.<svc>…
 *     headless   per EndpointSlice (weight floor(100/N), N its ready
 *                addresses), per ready address: A/AAAA at <svc>.<ns>.svc…,
 *                A/AAAA at <ep>.<svc>.<ns>.svc…, and per named port
 *                SRV 0 <weight> <port> <ep>.<svc>… at _<port>._<proto>.<svc>…
 *     ExternalName  CNAME to the target (none when it is an IP)
 *   SOA again.
 * TTLs are the plugin's `ttl`. Pods, PTRs, zonal and topology names are
 * not part of it (CoreDNS's neither). An IXFR whose serial equals the
 * store's gets the SOA alone.
 *
 * Zones: the plugin's forward zones, by their exact apex. A reverse zone,
 * or a name below a zone, is not ours to transfer (XFR_NOTAUTH): CoreDNS
 * would send its Services again under that name.
 *
 * Runs on the worker serving the transfer, inside one store read-side
 * section; each record is built in a scratch message and handed to the
 * sink at once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "server/transfer.h"

typedef struct kxfr {
    kq q;                            /* k, st, zone_q, arena: apex.c's helpers */
    dns_msg m;                       /* scratch: the record being emitted */
    xfr_emit_fn emit;
    void *sink;
} kxfr;

/* Hand every record of the scratch message to the sink, then empty it. */
static int out(kxfr *x, int added)
{
    int rc = added;
    unsigned n = msg_count(&x->m, SEC_ANSWER);
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        dns_rr rr = msg_rr(&x->m, SEC_ANSWER, i);
        rc = x->emit(x->sink, &rr);
    }
    msg_reset(&x->m);
    return rc < 0 ? -1 : 0;
}

static int addr(kxfr *x, const uint8_t *owner, const st_ip *ip, uint32_t ttl)
{
    if (ip->family == 4) {
        struct in_addr a;
        memcpy(&a, ip->addr, 4);
        return out(x, msg_add_a(&x->m, SEC_ANSWER, owner, ttl, &a));
    }
    struct in6_addr a;
    memcpy(&a, ip->addr, 16);
    return out(x, msg_add_aaaa(&x->m, SEC_ANSWER, owner, ttl, &a));
}

static int srv(kxfr *x, const uint8_t *owner, uint16_t weight, int32_t port,
               const uint8_t *target)
{
    return out(x, msg_add_srv(&x->m, SEC_ANSWER, owner, x->q.k->ttl, 0, weight,
                              (uint16_t)port, target));
}

/* label + name in wire form; -1 when it does not fit or the label is no
 * DNS label. */
static int prepend(uint8_t *out, const char *label, const uint8_t *name)
{
    size_t l = strlen(label), nl = dname_len(name);
    if (l == 0 || l > 63 || l + 1 + nl > DNAME_MAX)
        return -1;
    out[0] = (uint8_t)l;
    memcpy(out + 1, label, l);
    memcpy(out + 1 + l, name, nl);
    return 0;
}

/* _<port>._<proto>.<name>, both labels lower-cased as CoreDNS writes them. */
static int port_name(uint8_t *out, const st_port *p, const uint8_t *name)
{
    static const char *const protos[] = { [ST_TCP] = "_tcp", [ST_UDP] = "_udp", [ST_SCTP] = "_sctp" };
    const char *proto = p->proto == ST_UDP || p->proto == ST_SCTP ? protos[p->proto] : protos[ST_TCP];
    char label[KLABEL];
    uint8_t mid[DNAME_MAX];
    size_t l = strlen(p->name);
    if (l + 2 > sizeof label)
        return -1;
    label[0] = '_';
    for (size_t i = 0; i <= l; i++)
        label[i + 1] = (char)(p->name[i] >= 'A' && p->name[i] <= 'Z' ? p->name[i] + 32 : p->name[i]);
    return prepend(mid, proto, name) < 0 ? -1 : prepend(out, label, mid);
}

/* ---- Services ------------------------------------------------------------------ */

static int cluster_ip(kxfr *x, const st_service *svc, const uint8_t *name)
{
    for (uint8_t i = 0; i < svc->n_cluster_ips; i++)
        if (addr(x, name, &svc->cluster_ips[i], x->q.k->ttl) < 0)
            return -1;
    for (uint16_t i = 0; i < svc->nports; i++) {
        const st_port *p = &svc->ports[i];
        uint8_t named[DNAME_MAX];
        if (srv(x, name, 100, p->port, name) < 0)
            return -1;
        if (p->name && p->name[0] && port_name(named, p, name) == 0 &&
            srv(x, named, 100, p->port, name) < 0)
            return -1;
    }
    return 0;
}

/* CoreDNS calcSRVWeight: 100 / (100·n) · 100, floored, at least 1. */
static uint16_t srv_weight(size_t n)
{
    double w = floor((100.0 / (double)(100 * n)) * 100);
    return (uint16_t)(w < 1 ? 1 : w > 65535 ? 65535 : w);
}

static int same_slice(const st_endpoint *a, const st_endpoint *b)
{
    return a->sl == b->sl || !strcmp(st_ep_slice(a), st_ep_slice(b));
}

static int endpoint(kxfr *x, const st_endpoint *ep, const uint8_t *name, uint16_t weight)
{
    char label[KLABEL];
    uint8_t host[DNAME_MAX];
    if (addr(x, name, &ep->ip, x->q.k->ttl) < 0)
        return -1;
    kube_endpoint_name(ep, x->q.k->endpoint_pod_names, label, sizeof label);
    if (prepend(host, label, name) < 0)
        return 0;
    if (addr(x, host, &ep->ip, x->q.k->ttl) < 0)
        return -1;
    for (uint16_t i = 0; i < st_ep_nports(ep); i++) {
        uint8_t named[DNAME_MAX];
        const st_port *p = &st_ep_ports(ep)[i];
        if (p->name && p->name[0] && port_name(named, p, name) == 0 &&
            srv(x, named, weight, p->port, host) < 0)
            return -1;
    }
    return 0;
}

/* Endpoints slice by slice: the SRV weight counts one slice's ready ones. */
static int headless(kxfr *x, const st_service *svc, const uint8_t *name)
{
    const st_endpoints *eps = store_endpoints(x->q.st, svc->ns, svc->name);
    for (size_t i = 0, j; eps && i < eps->n; i = j) {
        size_t ready = 0;
        for (j = i; j < eps->n && same_slice(&eps->eps[i], &eps->eps[j]); j++)
            ready += eps->eps[j].ready;
        uint16_t weight = srv_weight(ready ? ready : 1);
        for (size_t k = i; k < j; k++)
            if (eps->eps[k].ready && endpoint(x, &eps->eps[k], name, weight) < 0)
                return -1;
    }
    return 0;
}

static int external(kxfr *x, const st_service *svc, const uint8_t *name)
{
    st_ip ip;
    uint8_t target[DNAME_MAX];
    if (!svc->external_name || st_parse_ip(svc->external_name, &ip) == 0 ||
        dname_from_str(target, svc->external_name) < 0)
        return 0;
    return out(x, msg_add_name(&x->m, SEC_ANSWER, name, T_CNAME, x->q.k->ttl, target));
}

static int service(kxfr *x, const st_service *svc)
{
    uint8_t tail[DNAME_MAX], mid[DNAME_MAX], name[DNAME_MAX];
    if (!kube_ns_exposed(&x->q, svc->ns))
        return 0;
    if (prepend(tail, "svc", x->q.zone_q) < 0 || prepend(mid, svc->ns, tail) < 0 ||
        prepend(name, svc->name, mid) < 0)
        return 0;
    if (svc->kind == SVC_EXTERNALNAME)
        return external(x, svc, name);
    if (svc->kind == SVC_CLUSTERIP && svc->n_cluster_ips > 0)
        return cluster_ip(x, svc, name);
    return headless(x, svc, name);
}

typedef struct svc_list {
    const st_service **v;
    size_t n, cap;
    int oom;
} svc_list;

static int collect(const st_service *svc, void *arg)
{
    svc_list *l = arg;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        const st_service **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = 1;
            return 1;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = svc;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    const st_service *x = *(const st_service *const *)a, *y = *(const st_service *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->ns, y->ns);
}

static int services(kxfr *x)
{
    svc_list l = { 0 };
    store_foreach_service(x->q.st, collect, &l);
    int rc = l.oom ? -1 : 0;
    if (l.n)
        qsort(l.v, l.n, sizeof *l.v, by_name);
    for (size_t i = 0; rc == 0 && i < l.n; i++)
        rc = service(x, l.v[i]);
    free(l.v);
    return rc;
}

/* ---- the apex -------------------------------------------------------------------- */

/* NS <zone> for each distinct name of the NS addresses, then the addresses
 * with TTL 0. */
static int apex(kxfr *x)
{
    kvec v = { 0 };
    int rc = kube_ns_addrs(&x->q, &v) == K_OK ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < v.n; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = dname_equal(v.v[j].key, v.v[i].key);
        if (!seen)
            rc = out(x, msg_add_name(&x->m, SEC_ANSWER, x->q.zone_q, T_NS, x->q.k->ttl,
                                     v.v[i].key));
    }
    for (size_t i = 0; rc == 0 && i < v.n; i++)
        rc = addr(x, v.v[i].key, &v.v[i].ip, 0);
    kvec_free(&v);
    return rc;
}

static int emit_soa(kxfr *x, const dns_msg *soa)
{
    dns_rr rr = msg_rr(soa, SEC_ANSWER, 0);
    return x->emit(x->sink, &rr);
}

static int walk(kxfr *x, uint32_t serial)
{
    dns_msg soa;
    msg_init(&soa);
    int rc = kube_add_soa(&x->q, &soa, SEC_ANSWER) < 0 ? -1 : emit_soa(x, &soa);
    if (rc == 0 && !(serial != 0 && serial == store_serial(x->q.st))) {
        rc = apex(x);
        if (rc == 0)
            rc = services(x);
        if (rc == 0)
            rc = emit_soa(x, &soa);
    }
    msg_free(&soa);
    return rc;
}

static int kube_xfr_walk(void *data, const uint8_t *zone, uint32_t serial, xfr_emit_fn emit,
                         void *sink)
{
    kube *k = data;
    int zi = -1;
    for (int i = 0; i < k->nzones && zi < 0; i++)
        if (dname_equal(zone, k->zwire[i]) && !kube_is_reverse(k->zwire[i]))
            zi = i;
    if (zi < 0)
        return XFR_NOTAUTH;
    if (!k->st)
        return XFR_FAIL;
    kxfr x = { .q = { .k = k, .st = k->st, .zi = zi, .zone_q = k->zwire[zi] },
               .emit = emit, .sink = sink };
    msg_init(&x.m);
    store_read_begin();
    int rc = walk(&x, serial);
    store_read_end();
    msg_free(&x.m);
    karena_free(&x.q.arena);
    return rc < 0 ? XFR_FAIL : XFR_OK;
}

int kube_publish_transfer(kube *k, struct server_block *blk)
{
    xfr_source src = { kube_xfr_walk, k };
    return xfr_source_publish(blk, "kubernetes", &src);
}
