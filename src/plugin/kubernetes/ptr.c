/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ptr.c — PTR answers (CoreDNS Reverse/serviceRecordForIP).
 *
 * A complete reverse name (4 IPv4 labels or 32 nibbles) is an address:
 *   1. the first service whose cluster IPs hold it gives one PTR,
 *      <svc>.<ns>.svc.<primary zone>;
 *   2. otherwise every ready endpoint with that address gives
 *      <endpoint-name>.<svc>.<ns>.svc.<primary zone>, duplicates removed.
 * Only the `namespaces` option filters (quirk: namespace_labels does not).
 * Nothing found is a name error. Any other name takes the forward grammar:
 * a name error if it does not exist, else no records (NODATA).
 */
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"

typedef struct ptr_ctx {
    kq *q;
    krrvec *out;
    kset seen;                      /* the targets in out */
    int err;
} ptr_ctx;

static int ns_allowed(kq *q, const char *ns)
{
    return q->k->nnamespaces == 0 || kube_ns_exposed(q, ns);
}

/* <first>.<svc>.<ns>.svc.<primary zone> (first may be NULL) */
static const uint8_t *ptr_target(kq *q, const char *first, const st_service *svc)
{
    const char *labels[4];
    int n = 0;
    if (first)
        labels[n++] = first;
    labels[n++] = svc->name;
    labels[n++] = svc->ns;
    labels[n++] = "svc";
    uint8_t buf[DNAME_MAX];
    size_t o = 0;
    const uint8_t *zone = q->k->zwire[q->k->primary];
    for (int i = 0; i < n; i++) {
        size_t l = strlen(labels[i]);
        if (l == 0 || l > 63 || o + l + 1 + dname_len(zone) > DNAME_MAX)
            return NULL;
        buf[o++] = (uint8_t)l;
        memcpy(buf + o, labels[i], l);
        o += l;
    }
    memcpy(buf + o, zone, dname_len(zone));
    return karena_dname(&q->arena, buf);
}

static int same_target(const krr *have, const krr *want)
{
    return dname_equal(have->target, want->target);
}

static int push_ptr(ptr_ctx *c, const uint8_t *target)
{
    if (!target)
        return 0;
    krr rr = { .type = T_PTR, .owner = c->q->r->q.qname, .ttl = c->q->k->ttl, .target = target };
    uint32_t h = dname_hash(target);
    if (kset_has(&c->seen, c->out, h, same_target, &rr))
        return 0;
    if (krr_push(c->out, &rr) < 0 || kset_add(&c->seen, h, c->out->n - 1) < 0)
        c->err = K_FAIL;
    return 0;
}

static int on_service(const st_service *svc, void *arg)
{
    ptr_ctx *c = arg;
    if (!ns_allowed(c->q, svc->ns))
        return 0;
    push_ptr(c, ptr_target(c->q, NULL, svc));
    return 1;                       /* the first match only */
}

static int on_endpoint(const st_service *svc, const st_endpoint *ep, void *arg)
{
    ptr_ctx *c = arg;
    if (!ns_allowed(c->q, svc->ns))
        return 0;
    char name[KLABEL];
    kube_endpoint_name(ep, c->q->k->endpoint_pod_names, name, sizeof name);
    push_ptr(c, ptr_target(c->q, name, svc));
    return 0;
}

int kube_ptr(kq *q, const uint8_t *name, krrvec *out)
{
    st_ip ip;
    if (!kube_reverse_addr(name, &ip)) {
        kvec v = { 0 };
        int e = kube_records(q, name, &v);
        kvec_free(&v);
        return e;
    }
    ptr_ctx c = { .q = q, .out = out, .err = K_OK };
    store_services_by_ip(q->st, &ip, on_service, &c);
    if (out->n == 0 && !q->k->noendpoints)
        store_endpoints_by_ip(q->st, &ip, on_endpoint, &c);
    kset_free(&c.seen);
    if (c.err != K_OK)
        return c.err;
    return out->n ? K_OK : K_NOITEMS;
}
