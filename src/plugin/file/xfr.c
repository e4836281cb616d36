/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfr.c — a loaded zone in transfer order (CoreDNS's Zone.Transfer): the
 * SOA, the apex NS records, every other record name by name in DNSSEC
 * canonical order (RFC 4034 6.1, the order of CoreDNS's tree), each name's
 * record sets in the order the file gave them, and the SOA again. An IXFR
 * whose serial equals the zone's gets the SOA alone.
 *
 * Runs on the worker serving the transfer, on a zone the caller holds a
 * reference to (immutable); the names are sorted into a temporary array
 * freed before returning.
 */
#include <stdlib.h>
#include "plugin/file/file.h"

static int emit_rr(xfr_emit_fn emit, void *sink, const uint8_t *owner, const frr *r)
{
    dns_rr rr = { .owner = owner, .type = r->type, .rclass = r->rclass, .ttl = r->ttl,
                  .rdata = r->rdata, .rdlen = r->rdlen };
    return emit(sink, &rr) < 0 ? -1 : 0;      /* XFR_YIELD: a walk goes on */
}

static int canonical(const void *a, const void *b)
{
    return dname_compare((*(const fnode *const *)a)->name, (*(const fnode *const *)b)->name);
}

/* Every node with records, in canonical order (malloc'd), *n of them. */
static fnode **sorted_nodes(const fzone *z, size_t *n)
{
    size_t cap = HASH_COUNT(z->nodes), k = 0;
    fnode **v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return NULL;
    for (fnode *e = z->nodes; e; e = e->hh.next)
        if (e->nsets && k < cap)
            v[k++] = e;
    qsort(v, k, sizeof *v, canonical);
    *n = k;
    return v;
}

static int walk_nodes(const fzone *z, xfr_emit_fn emit, void *sink)
{
    size_t n = 0;
    fnode **v = sorted_nodes(z, &n);
    if (!v)
        return -1;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++)
        for (unsigned s = 0; rc == 0 && s < v[i]->nsets; s++)
            for (unsigned j = 0; rc == 0 && j < v[i]->sets[s].n; j++)
                rc = emit_rr(emit, sink, v[i]->name, &v[i]->sets[s].rrs[j]);
    free(v);
    return rc;
}

int fzone_walk(const fzone *z, uint32_t serial, xfr_emit_fn emit, void *sink)
{
    if (emit_rr(emit, sink, z->soa_owner, &z->soa) < 0)
        return XFR_FAIL;
    if (serial != 0 && serial == z->serial)
        return XFR_OK;
    for (unsigned i = 0; i < z->ns.n; i++)
        if (emit_rr(emit, sink, z->origin, &z->ns.rrs[i]) < 0)
            return XFR_FAIL;
    if (walk_nodes(z, emit, sink) < 0 || emit_rr(emit, sink, z->soa_owner, &z->soa) < 0)
        return XFR_FAIL;
    return XFR_OK;
}
