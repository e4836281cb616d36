/*
 * transfer.h — zone transfer sources: how a plugin that holds whole zones
 * (kubernetes, file) offers them to the transfer plugin, which answers
 * AXFR and IXFR (CoreDNS's transfer.Transferer), without either plugin
 * including the other.
 *
 * A source is a zone iterator: a function that walks one zone's records in
 * transfer order and hands each to a sink, plus the data it needs. The
 * plugin that has zones publishes it from its setup() as a named value of
 * its server block (xfr_source_publish, key "transfer/<plugin>", owned and
 * freed by the block). The transfer plugin finds the sources of its own
 * block from its start(), one per handler of the block in chain order
 * (xfr_source_find), and asks them in that order, as CoreDNS asks its
 * Transferers: the first that does not answer XFR_NOTAUTH serves the
 * transfer.
 *
 * Threads: publish and find run on the loading thread; walk() runs on the
 * worker serving the transfer and must not block (it reads in-memory data:
 * the cluster store, a loaded zone). The sink encodes the records into
 * messages as they come and queues each full one on the client's
 * connection (req_write / req_write_more).
 */
#ifndef TOPODNS_TRANSFER_H
#define TOPODNS_TRANSFER_H

#include <stdint.h>
#include "wire/msg.h"

struct server_block;

/* What walk() returns. */
enum { XFR_OK = 0, XFR_NOTAUTH = 1, XFR_FAIL = -1 };

/* The sink: takes one record (owner and rdata in uncompressed wire form;
 * valid only during the call). 0, or -1 to stop the walk (the client has
 * gone, out of memory): walk() then returns XFR_FAIL. */
typedef int (*xfr_emit_fn)(void *sink, const dns_rr *rr);

typedef struct xfr_source {
    /* Walk the zone whose apex is zone (wire form, lower case):
     *   - XFR_NOTAUTH, before emitting anything, when the source has no
     *     zone with exactly this apex;
     *   - serial != 0 (an IXFR) equal to the zone's current serial: the
     *     SOA alone (the client is up to date);
     *   - else the whole zone: the SOA first, then every record (the apex
     *     NS and their addresses next, as CoreDNS does), the SOA again last.
     * XFR_FAIL when the data cannot be read or the sink stopped. */
    int (*walk)(void *data, const uint8_t *zone, uint32_t serial, xfr_emit_fn emit,
                void *sink);
    void *data;                      /* the publishing plugin's instance */
} xfr_source;

/* Publish src (copied) as plugin's source in block b. 0, or -1. */
int xfr_source_publish(struct server_block *b, const char *plugin, const xfr_source *src);
/* plugin's source in block b, or NULL. */
const xfr_source *xfr_source_find(const struct server_block *b, const char *plugin);

#endif
