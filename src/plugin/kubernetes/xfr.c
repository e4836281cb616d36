/* SPDX-License-Identifier: Apache-2.0 */
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
 * Resumable (transfer.h's open/next/close): open() takes the opening SOA
 * (and so the serial) and the list of Services as (name, namespace) keys,
 * sorted, copied out of the store; each next() opens its own store
 * read-side section, looks each Service up again by its key and goes on
 * from the position kept in the cursor: the Service, and within a
 * headless one the endpoint position in its merged view. So the zone is
 * walked once (linear in it: the sort of the Service keys once, then each
 * record once), a message at a time, and no read-side section is held
 * across the worker's event loop. What the client gets while the cluster
 * changes is what an AXFR server sends from a zone that changes under a
 * transfer: both SOAs carry the serial at the start; a Service deleted
 * meanwhile is left out, a Service created meanwhile is not in the
 * transfer, and a Service changed meanwhile is sent as it is when its turn
 * comes (a headless Service whose endpoints change between two messages
 * is resumed at the same position of its new endpoint list, so an
 * endpoint may be skipped or sent twice). The client sees the next serial
 * at its next SOA check and transfers again.
 *
 * Each record is built in a scratch message and handed to the sink at
 * once. walk() (the source's one-call form, used by tests) runs the same
 * cursor to the end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "server/transfer.h"
#include "common/vec.h"

typedef struct kxfr {
    kq q;                            /* k, st, zone_q, arena: apex.c's helpers */
    dns_msg m;                       /* scratch: the record being emitted */
    xfr_emit_fn emit;
    void *sink;
    int yield;                       /* the sink said XFR_YIELD */
} kxfr;

/* Hand every record of the scratch message to the sink, then empty it. */
static int out(kxfr *x, int added)
{
    int rc = added;
    unsigned n = msg_count(&x->m, SEC_ANSWER);
    for (unsigned i = 0; rc >= 0 && i < n; i++) {
        dns_rr rr = msg_rr(&x->m, SEC_ANSWER, i);
        rc = x->emit(x->sink, &rr);
        x->yield |= rc == XFR_YIELD;
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
    st_ip ip = st_ep_ip(ep);
    if (addr(x, name, &ip, x->q.k->ttl) < 0)
        return -1;
    kube_endpoint_name(ep, x->q.k->endpoint_pod_names, label, sizeof label);
    if (prepend(host, label, name) < 0)
        return 0;
    if (addr(x, host, &ip, x->q.k->ttl) < 0)
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

/* Endpoints slice by slice from position *pos: the SRV weight counts one
 * slice's ready ones (a resumed walk counts the slice of *pos again: at
 * most one slice's work more per message). 0 when the Service is done
 * (*pos back to 0), XFR_MORE with *pos where to go on, -1. */
static int headless(kxfr *x, const st_service *svc, const uint8_t *name, size_t *pos)
{
    const st_endpoints *eps = store_endpoints(x->q.st, svc->ns, svc->name);
    size_t from = eps && *pos < eps->n ? *pos : 0, i = from, j;
    while (i > 0 && same_slice(&eps->eps[i - 1], &eps->eps[from]))
        i--;
    for (; eps && *pos < eps->n && i < eps->n; i = j) {
        size_t ready = 0;
        for (j = i; j < eps->n && same_slice(&eps->eps[i], &eps->eps[j]); j++)
            ready += eps->eps[j].ready;
        uint16_t weight = srv_weight(ready ? ready : 1);
        for (size_t k = i < from ? from : i; k < j; k++) {
            if (eps->eps[k].ready && endpoint(x, &eps->eps[k], name, weight) < 0)
                return -1;
            if (x->yield && k + 1 < eps->n) {
                *pos = k + 1;
                return XFR_MORE;
            }
        }
    }
    *pos = 0;
    return 0;
}

static int external(kxfr *x, const st_service *svc, const uint8_t *name)
{
    st_ip ip;
    uint8_t target[DNAME_MAX];
    const char *ext = st_svc_x(svc)->external_name;
    if (!ext || st_parse_ip(ext, &ip) == 0 || dname_from_str(target, ext) < 0)
        return 0;
    return out(x, msg_add_name(&x->m, SEC_ANSWER, name, T_CNAME, x->q.k->ttl, target));
}

static int service(kxfr *x, const st_service *svc, size_t *pos)
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
    return headless(x, svc, name, pos);
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

/* ---- the cursor ------------------------------------------------------------------ */

typedef struct kcur {
    kube *k;
    int zi;
    int uptodate;                    /* an IXFR at the current serial */
    int stage;                       /* 0 the SOA and apex, 1 Services, 2 done */
    dns_msg soa;                     /* the opening SOA, sent again last */
    char *keys;                      /* "name\0ns\0" back to back */
    size_t len, cap;
    size_t *at;                      /* offsets into keys, sorted by name then ns */
    size_t n, nat;
    size_t svc;                      /* the next Service (index into at) */
    size_t ep;                       /* its next endpoint (headless) */
    int oom;
} kcur;

static int keep_key(const st_service *svc, void *arg)
{
    kcur *c = arg;
    size_t nl = strlen(svc->name) + 1, sl = strlen(svc->ns) + 1;
    if (VEC_RESERVE_FROM(c->keys, c->cap, c->len + nl + sl, 4096) != 0 ||
        VEC_RESERVE_FROM(c->at, c->nat, c->n + 1, 64) != 0)
        return c->oom = 1;
    c->at[c->n++] = c->len;
    memcpy(c->keys + c->len, svc->name, nl);
    memcpy(c->keys + c->len + nl, svc->ns, sl);
    c->len += nl + sl;
    return 0;
}

/* qsort has no argument: the offsets are turned into pointers for it. */
static int by_name(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int c = strcmp(x, y);
    return c ? c : strcmp(x + strlen(x) + 1, y + strlen(y) + 1);
}

static int sort_keys(kcur *c)
{
    const char **p = malloc((c->n ? c->n : 1) * sizeof *p);
    if (!p)
        return -1;
    for (size_t i = 0; i < c->n; i++)
        p[i] = c->keys + c->at[i];
    qsort(p, c->n, sizeof *p, by_name);
    for (size_t i = 0; i < c->n; i++)
        c->at[i] = (size_t)(p[i] - c->keys);
    free(p);
    return 0;
}

static void kube_xfr_close(void *cur)
{
    kcur *c = cur;
    if (!c)
        return;
    msg_free(&c->soa);
    free(c->keys);
    free(c->at);
    free(c);
}

static int kube_xfr_open(void *data, const uint8_t *zone, uint32_t serial, void **cur)
{
    kube *k = data;
    int zi = -1;
    for (int i = 0; i < k->nzones && zi < 0; i++)
        if (dname_equal(zone, k->zwire[i]) && !kube_is_reverse(k->zwire[i]))
            zi = i;
    if (zi < 0)
        return XFR_NOTAUTH;
    kcur *c = k->st ? calloc(1, sizeof *c) : NULL;
    if (!c)
        return XFR_FAIL;
    c->k = k;
    c->zi = zi;
    msg_init(&c->soa);
    kq q = { .k = k, .st = k->st, .zi = zi, .zone_q = k->zwire[zi] };
    store_read_begin();
    int rc = kube_add_soa(&q, &c->soa, SEC_ANSWER) < 0 ? -1 : 0;
    c->uptodate = serial != 0 && serial == store_serial(k->st);
    if (rc == 0 && !c->uptodate)
        store_foreach_service(k->st, keep_key, c);
    store_read_end();
    karena_free(&q.arena);
    if (rc < 0 || c->oom || sort_keys(c) < 0) {
        kube_xfr_close(c);
        return XFR_FAIL;
    }
    *cur = c;
    return XFR_OK;
}

static int emit_soa(kxfr *x, const dns_msg *soa)
{
    dns_rr rr = msg_rr(soa, SEC_ANSWER, 0);
    int rc = x->emit(x->sink, &rr);
    x->yield |= rc == XFR_YIELD;
    return rc < 0 ? -1 : 0;
}

/* The Services from the cursor's position on, until the sink yields. */
static int services(kxfr *x, kcur *c)
{
    while (c->svc < c->n) {
        const char *name = c->keys + c->at[c->svc], *ns = name + strlen(name) + 1;
        const st_service *svc = store_service(x->q.st, ns, name);
        int rc = svc ? service(x, svc, &c->ep) : 0;
        if (rc < 0)
            return -1;
        if (rc == XFR_MORE)
            return XFR_MORE;
        c->svc++;
        c->ep = 0;
        if (x->yield && c->svc < c->n)
            return XFR_MORE;
    }
    return 0;
}

static int step(kxfr *x, kcur *c)
{
    int rc = 0;
    if (c->stage == 0) {
        rc = emit_soa(x, &c->soa);
        if (rc == 0 && c->uptodate) {
            c->stage = 2;
            return XFR_OK;
        }
        if (rc == 0)
            rc = apex(x);
        c->stage = 1;
    }
    if (rc == 0 && c->stage == 1)
        rc = services(x, c);
    if (rc == 0) {
        rc = emit_soa(x, &c->soa);
        c->stage = 2;
    }
    return rc < 0 ? XFR_FAIL : rc == XFR_MORE ? XFR_MORE : XFR_OK;
}

static int kube_xfr_next(void *cur, xfr_emit_fn emit, void *sink)
{
    kcur *c = cur;
    if (c->stage == 2)
        return XFR_OK;
    kxfr x = { .q = { .k = c->k, .st = c->k->st, .zi = c->zi, .zone_q = c->k->zwire[c->zi] },
               .emit = emit, .sink = sink };
    msg_init(&x.m);
    store_read_begin();
    int rc = step(&x, c);
    store_read_end();
    msg_free(&x.m);
    karena_free(&x.q.arena);
    return rc;
}

static int kube_xfr_walk(void *data, const uint8_t *zone, uint32_t serial, xfr_emit_fn emit,
                         void *sink)
{
    void *cur = NULL;
    int rc = kube_xfr_open(data, zone, serial, &cur);
    while (rc == XFR_OK && (rc = kube_xfr_next(cur, emit, sink)) == XFR_MORE)
        rc = XFR_OK;
    kube_xfr_close(cur);
    return rc;
}

int kube_publish_transfer(kube *k, struct server_block *blk)
{
    xfr_source src = { .walk = kube_xfr_walk, .data = k, .open = kube_xfr_open,
                       .next = kube_xfr_next, .close = kube_xfr_close };
    return xfr_source_publish(blk, "kubernetes", &src);
}
