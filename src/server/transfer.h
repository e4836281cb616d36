/* SPDX-License-Identifier: Apache-2.0 */
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
 * A source may also be resumable (open/next/close, below: kubernetes,
 * file): the transfer plugin then produces the zone one message at a
 * time, going back to the worker's event loop between messages and asking
 * for the next only when the client's connection has room for it
 * (req_when_writable, request.h), so that a zone of any size holds the
 * worker for one message's work at a time and a client that reads slowly
 * holds a bounded amount of queued output. A source without open() is
 * walked whole in one call, its messages all queued at once.
 *
 * Threads: publish and find run on the loading thread; walk(), open(),
 * next() and close() run on the worker serving the transfer and must not
 * block (they read in-memory data: the cluster store, a loaded zone). The
 * sink encodes the records into messages as they come and queues each
 * full one on the client's connection (req_write / req_write_more).
 *
 * Memory: a cursor is the source's (malloc'd by open(), freed by close(),
 * which the transfer plugin calls exactly once for every cursor open()
 * returned, also when the transfer stops early or the worker stops).
 * Between two next() calls, which may be any time apart (the client reads
 * at its pace), a cursor holds no read-side section of the cluster store
 * and no pointer into data a writer may free: it keeps copied keys and
 * positions and reads the current data again at each call (kubernetes),
 * or holds a reference to an immutable zone version (file).
 */
#ifndef TOPODNS_TRANSFER_H
#define TOPODNS_TRANSFER_H

#include <stdint.h>
#include "wire/msg.h"

struct server_block;

/* What walk(), open() and next() return. */
enum { XFR_OK = 0, XFR_NOTAUTH = 1, XFR_MORE = 2, XFR_FAIL = -1 };

/* What the sink returns besides 0 and -1: the record was taken and a
 * message went out; a resumable source should stop at its next resumable
 * point (next() returns XFR_MORE). walk() goes on. */
#define XFR_YIELD 1

/* The sink: takes one record (owner and rdata in uncompressed wire form;
 * valid only during the call). 0, XFR_YIELD, or -1 to stop the walk (the
 * client has gone, out of memory): walk() / next() then return XFR_FAIL. */
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
    /* Resumable form (all three, or open NULL). open(): XFR_NOTAUTH as
     * walk() (nothing made), XFR_FAIL, or XFR_OK with *cur set; nothing is
     * emitted yet. next(): emits the records from where the cursor stands,
     * in walk()'s order, and returns XFR_MORE at the first resumable point
     * after the sink answered XFR_YIELD (the rest comes from the next
     * call), XFR_OK once the last record (the closing SOA) was emitted, or
     * XFR_FAIL. The closing SOA is the opening one, as RFC 5936 asks, even
     * when the data changed in between. */
    int (*open)(void *data, const uint8_t *zone, uint32_t serial, void **cur);
    int (*next)(void *cur, xfr_emit_fn emit, void *sink);
    void (*close)(void *cur);
} xfr_source;

/* Publish src (copied) as plugin's source in block b. 0, or -1. */
int xfr_source_publish(struct server_block *b, const char *plugin, const xfr_source *src);
/* plugin's source in block b, or NULL. */
const xfr_source *xfr_source_find(const struct server_block *b, const char *plugin);

#endif
