/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfr.c — a loaded zone in transfer order (CoreDNS's Zone.Transfer): the
 * SOA, the apex NS records, every other record name by name in DNSSEC
 * canonical order (RFC 4034 6.1, the order of CoreDNS's tree; z->order,
 * sorted by the loader), each name's record sets in the order the file
 * gave them, and the SOA again. An IXFR whose serial equals the zone's
 * gets the SOA alone.
 *
 * A cursor (fzone_xfr) is a reference to one zone version (immutable) and
 * a position in that order, so a transfer goes on a message at a time
 * (the transfer plugin calls fzone_xfr_next once per message) without
 * holding anything else between calls: the zone version it started on
 * stays alive, unchanged, until the cursor is closed, even when a reload
 * publishes a new one. fzone_walk runs a cursor to the end in one call.
 */
#include <assert.h>
#include <stdlib.h>
#include "plugin/file/file.h"

enum { X_SOA, X_NS, X_NODES, X_END, X_DONE };

struct fzone_xfr {
    fzone *z;                        /* a reference of the cursor's own */
    int noop;                        /* an IXFR that is up to date: the SOA alone */
    int stage;                       /* X_*: what comes next */
    size_t node;                     /* X_NODES: index into z->order, */
    unsigned set, rr;                /* its record set and record (X_NS: rr) */
};

fzone_xfr *fzone_xfr_open(fzone *z, uint32_t serial)
{
    assert(z);
    fzone_xfr *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    fzone_ref(z);
    c->z = z;
    c->noop = serial != 0 && serial == z->serial;
    c->stage = X_SOA;
    return c;
}

void fzone_xfr_close(fzone_xfr *c)
{
    if (!c)
        return;
    fzone_unref(c->z);
    free(c);
}

/* The record at the cursor, advancing it; NULL at the end. */
static const frr *step(fzone_xfr *c, const uint8_t **owner)
{
    const fzone *z = c->z;
    for (;;) {
        switch (c->stage) {
        case X_SOA:
            c->stage = c->noop ? X_DONE : X_NS;
            *owner = z->soa_owner;
            return &z->soa;
        case X_NS:
            if (c->rr < z->ns.n) {
                *owner = z->origin;
                return &z->ns.rrs[c->rr++];
            }
            c->stage = X_NODES;
            c->rr = 0;
            break;
        case X_NODES: {
            if (c->node >= z->norder) {
                c->stage = X_END;
                break;
            }
            const fnode *n = z->order[c->node];
            if (c->set < n->nsets && c->rr < n->sets[c->set].n) {
                *owner = n->name;
                return &n->sets[c->set].rrs[c->rr++];
            }
            if (c->set < n->nsets) {
                c->set++;
                c->rr = 0;
            } else {
                c->node++;
                c->set = 0;
                c->rr = 0;
            }
            break;
        }
        case X_END:
            c->stage = X_DONE;
            *owner = z->soa_owner;
            return &z->soa;
        default:
            return NULL;
        }
    }
}

int fzone_xfr_next(fzone_xfr *c, xfr_emit_fn emit, void *sink)
{
    assert(c && emit);
    const uint8_t *owner;
    const frr *r;
    while ((r = step(c, &owner))) {
        dns_rr rr = { .owner = owner, .type = r->type, .rclass = r->rclass, .ttl = r->ttl,
                      .rdata = r->rdata, .rdlen = r->rdlen };
        int rc = emit(sink, &rr);
        if (rc < 0)
            return XFR_FAIL;
        if (rc == XFR_YIELD && c->stage != X_DONE)
            return XFR_MORE;
    }
    return XFR_OK;
}

int fzone_walk(fzone *z, uint32_t serial, xfr_emit_fn emit, void *sink)
{
    fzone_xfr *c = fzone_xfr_open(z, serial);
    if (!c)
        return XFR_FAIL;
    int rc;
    while ((rc = fzone_xfr_next(c, emit, sink)) == XFR_MORE)
        ;
    fzone_xfr_close(c);
    return rc;
}
