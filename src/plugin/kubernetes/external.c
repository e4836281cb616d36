/* SPDX-License-Identifier: Apache-2.0 */
/*
 * external.c — the kubernetes plugin as the k8s_external plugin's data
 * source (src/server/external.h), CoreDNS's Kubernetes.External,
 * ExternalAddress and ExternalSerial.
 *
 * lookup: a name under k8s_external's zone, read from the right:
 *
 *   <ns>                          the namespace: exists (NODATA) or not
 *   <svc>.<ns>                    the Service's external addresses
 *   <ep>.<svc>.<ns>               an endpoint of a headless Service (with
 *                                 `headless`; else the Service's addresses)
 *   <port>.<proto>.<svc>.<ns>     the same, only for a matching port (one
 *                                 leading '_' stripped, case ignored)
 *   anything longer               NXDOMAIN
 *
 * External addresses are spec.externalIPs, then the load-balancer ingress
 * (ip, or hostname): one item per address and matching port. With
 * `headless`, a headless Service without external addresses (or any
 * Service asked for by an endpoint name) gives an item per ready endpoint
 * and matching port of its EndpointSlices instead. A PTR query for a full
 * reverse name gives "<svc>.<ns>" for every Service with that external
 * address (NXDOMAIN without one); a PTR for any other name only gets the
 * rcode of the forward lookup.
 *
 * ns_addrs: CoreDNS's nsAddrs for an external zone: the Services with a
 * ready endpoint at one of our own addresses give their external
 * addresses (a headless one, with `headless`, its ready endpoints'); none
 * found: our own addresses.
 *
 * Runs on the worker, inside its own store read-side section.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/external.h"

typedef struct xctx {
    kq q;
    const uint8_t *zone;
    ext_emit_fn emit;
    void *sink;
    int silent;                     /* PTR for a forward name: rcode only */
    int failed;
} xctx;

/* Text labels (plain Kubernetes names) + zone → wire name. */
static int join(uint8_t *out, const char *const *labels, int n, const uint8_t *zone)
{
    size_t o = 0, zl = dname_len(zone);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(labels[i]);
        if (l == 0 || l > 63 || o + 1 + l + zl > DNAME_MAX)
            return -1;
        out[o++] = (uint8_t)l;
        memcpy(out + o, labels[i], l);
        o += l;
    }
    memcpy(out + o, zone, zl);
    dname_lower(out);
    return 0;
}

/* CoreDNS matchPortAndProtocol: an empty request field is wild. */
static int port_match(const char *port, const char *proto, const st_port *p)
{
    return (!port[0] || !strcasecmp(port, p->name ? p->name : "")) &&
           (!proto[0] || !strcasecmp(proto, kube_proto_name(p)));
}

static const char *proto_lower(const st_port *p)
{
    if (p->port == -1)
        return "";
    switch (p->proto) {
    case ST_UDP: return "udp";
    case ST_SCTP: return "sctp";
    default: return "tcp";
    }
}

static const char *strip_us(const char *s)
{
    return s[0] == '_' ? s + 1 : s;
}

static void emit(xctx *x, const ext_item *it)
{
    if (!x->silent && !x->failed && x->emit(x->sink, it) < 0)
        x->failed = 1;
}

static const st_port sentinel = { .name = "", .port = -1, .proto = ST_TCP };

static int svc_items(xctx *x, const st_service *svc, const char *endpoint, const char *port,
                     const char *proto, int headless)
{
    kube *k = x->q.k;
    int rc = RC_NXDOMAIN;
    const st_svc_extra *sx = st_svc_x(svc);
    if (headless && sx->n_external == 0 && (svc->kind == SVC_HEADLESS || endpoint[0])) {
        const st_endpoints *eps = store_endpoints(x->q.st, svc->ns, svc->name);
        for (size_t i = 0; eps && i < eps->n; i++) {
            const st_endpoint *ep = &eps->eps[i];
            char label[KLABEL];
            if (!ep->ready)
                continue;
            kube_endpoint_name(ep, k->endpoint_pod_names, label, sizeof label);
            if (endpoint[0] && strcasecmp(endpoint, label))
                continue;
            uint8_t name[DNAME_MAX];
            const char *labels[] = { label, svc->name, svc->ns };
            int named = join(name, labels, 3, x->zone) == 0;
            for (uint16_t j = 0; j < st_ep_nports(ep); j++) {
                if (!port_match(port, proto, &st_ep_ports(ep)[j]))
                    continue;
                rc = RC_NOERROR;
                st_ip ip = st_ep_ip(ep);
                ext_item it = { .kind = EXT_ADDR, .family = ip.family,
                                .port = st_ep_ports(ep)[j].port, .ttl = k->ttl,
                                .port_name = st_ep_ports(ep)[j].name ? st_ep_ports(ep)[j].name : "",
                                .proto = proto_lower(&st_ep_ports(ep)[j]),
                                .name = named ? name : NULL };
                memcpy(it.addr, ip.addr, 16);
                emit(x, &it);
            }
        }
        return rc;
    }
    uint8_t name[DNAME_MAX];
    const char *labels[] = { svc->name, svc->ns };
    int named = join(name, labels, 2, x->zone) == 0;
    const st_port *ports = svc->nports ? svc->ports : &sentinel;
    uint16_t nports = svc->nports ? svc->nports : 1;
    for (uint8_t i = 0; i < sx->n_external; i++) {
        for (uint16_t j = 0; j < nports; j++) {
            if (!port_match(port, proto, &ports[j]))
                continue;
            rc = RC_NOERROR;
            ext_item it = { .kind = EXT_HOST, .host = sx->external[i], .port = ports[j].port,
                            .port_name = ports[j].name ? ports[j].name : "",
                            .proto = proto_lower(&ports[j]),
                            .ttl = k->ttl, .name = named ? name : NULL };
            st_ip ip;
            if (st_parse_ip(sx->external[i], &ip) == 0) {
                it.kind = EXT_ADDR;
                it.family = ip.family;
                memcpy(it.addr, ip.addr, 16);
                it.host = NULL;
            }
            emit(x, &it);
        }
    }
    return rc;
}

typedef struct rev {
    xctx *x;
    st_ip ip;
    int found;
} rev;

static int rev_svc(const st_service *svc, void *arg)
{
    rev *r = arg;
    kube *k = r->x->q.k;
    if (k->nnamespaces > 0 && !kube_ns_exposed(&r->x->q, svc->ns))
        return 0;
    const st_svc_extra *sx = st_svc_x(svc);
    for (uint8_t i = 0; i < sx->n_external; i++) {
        st_ip ip;
        if (st_parse_ip(sx->external[i], &ip) < 0 || memcmp(&ip, &r->ip, sizeof ip))
            continue;
        char host[KLABEL * 2 + 2];
        snprintf(host, sizeof host, "%s.%s", svc->name, svc->ns);
        ext_item it = { .kind = EXT_HOST, .host = host, .port = -1, .port_name = "", .proto = "",
                        .ttl = k->ttl };
        emit(r->x, &it);
        r->found = 1;
        break;
    }
    return r->x->failed;
}

static int lookup(xctx *x, const uint8_t *name, uint16_t qtype, int headless)
{
    if (qtype == T_PTR && kube_is_reverse(name)) {
        rev r = { .x = x };
        if (kube_reverse_addr(name, &r.ip)) {
            store_foreach_service(x->q.st, rev_svc, &r);
            return r.found ? RC_NOERROR : RC_NXDOMAIN;
        }
    }
    x->silent = qtype == T_PTR;
    const uint8_t *labs[128];
    int n = 0;
    for (const uint8_t *p = name; *p && n < 128; p += *p + 1)
        labs[n++] = p;
    int last = n - dname_labels(x->zone) - 1;
    if (last < 0)
        return RC_SERVFAIL;
    char ns[KLABEL], service[KLABEL], seg[KLABEL];
    char endpoint[KLABEL] = "", port[KLABEL] = "", proto[KLABEL] = "";
    kube_label_text(labs[last], ns, sizeof ns);
    if (!kube_ns_exposed(&x->q, ns))
        return RC_NXDOMAIN;
    if (--last < 0)
        return RC_NOERROR;
    kube_label_text(labs[last], service, sizeof service);
    last--;
    if (last == 0) {
        kube_label_text(labs[0], seg, sizeof seg);
        snprintf(endpoint, sizeof endpoint, "%s", strip_us(seg));
        last--;
    } else if (last == 1) {
        kube_label_text(labs[1], seg, sizeof seg);
        snprintf(proto, sizeof proto, "%s", strip_us(seg));
        kube_label_text(labs[0], seg, sizeof seg);
        snprintf(port, sizeof port, "%s", strip_us(seg));
        last -= 2;
    }
    if (last != -1)
        return RC_NXDOMAIN;         /* too long */
    const st_service *svc = store_service(x->q.st, ns, service);
    if (!svc)
        return RC_NXDOMAIN;
    return svc_items(x, svc, endpoint, port, proto, headless);
}

static int kube_ext_lookup(void *data, const uint8_t *name, const uint8_t *zone, uint16_t qtype,
                           int headless, ext_emit_fn fn, void *sink)
{
    kube *k = data;
    if (!k->st)
        return RC_SERVFAIL;
    xctx x = { .q = { .k = k, .st = k->st }, .zone = zone, .emit = fn, .sink = sink };
    store_read_begin();
    int rc = lookup(&x, name, qtype, headless);
    store_read_end();
    karena_free(&x.q.arena);
    return x.failed ? -1 : rc;
}

static void addr_item(xctx *x, const st_ip *ip)
{
    ext_item it = { .kind = EXT_ADDR, .family = ip->family, .port = -1, .port_name = "",
                    .proto = "", .ttl = x->q.k->ttl };
    memcpy(it.addr, ip->addr, 16);
    emit(x, &it);
}

static int kube_ext_ns_addrs(void *data, const uint8_t *zone, int headless, ext_emit_fn fn,
                             void *sink)
{
    kube *k = data;
    xctx x = { .q = { .k = k, .st = k->st }, .zone = zone, .emit = fn, .sink = sink };
    int found = 0;
    if (k->st)
        store_read_begin();
    for (int i = 0; k->st && !k->noendpoints && i < k->nself; i++) {
        const st_service *svcs[KUBE_MAX_NS_SVCS];
        int n = kube_services_at(k->st, &k->self[i], svcs, KUBE_MAX_NS_SVCS);
        found |= n > 0;
        for (int j = 0; j < n; j++) {
            const st_service *svc = svcs[j];
            if (headless && svc->kind == SVC_HEADLESS) {
                const st_endpoints *eps = store_endpoints(k->st, svc->ns, svc->name);
                for (size_t e = 0; eps && e < eps->n; e++)
                    if (eps->eps[e].ready) {
                        st_ip ip = st_ep_ip(&eps->eps[e]);
                        addr_item(&x, &ip);
                    }
                continue;
            }
            const st_svc_extra *sx = st_svc_x(svc);
            for (uint8_t e = 0; e < sx->n_external; e++) {
                st_ip ip;
                if (st_parse_ip(sx->external[e], &ip) == 0)
                    addr_item(&x, &ip);
            }
        }
    }
    if (k->st)
        store_read_end();
    for (int i = 0; !found && i < k->nself; i++)
        addr_item(&x, &k->self[i]);
    return x.failed ? -1 : 0;
}

static uint32_t kube_ext_serial(void *data, const uint8_t *zone)
{
    (void)zone;
    kube *k = data;
    return k->st ? store_serial(k->st) : 0;
}

typedef struct xnames {
    int headless;
    ext_name_fn fn;
    void *sink;
    int failed;
} xnames;

static int name_of(const st_service *svc, void *arg)
{
    xnames *x = arg;
    if (st_svc_x(svc)->n_external > 0 || (x->headless && svc->kind == SVC_HEADLESS))
        x->failed = x->fn(x->sink, svc->ns, svc->name) < 0;
    return x->failed;
}

static int kube_ext_names(void *data, int headless, ext_name_fn fn, void *sink)
{
    kube *k = data;
    xnames x = { headless, fn, sink, 0 };
    if (!k->st)
        return 0;
    store_read_begin();
    store_foreach_service(k->st, name_of, &x);
    store_read_end();
    return x.failed ? -1 : 0;
}

int kube_publish_external(kube *k, struct server_block *blk)
{
    external_source src = { kube_ext_lookup, kube_ext_ns_addrs, kube_ext_serial, kube_ext_names,
                            k };
    return external_source_publish(blk, "kubernetes", &src);
}
