/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.h — the file plugin's zone store and lookup (private to
 * src/plugin/file/, exposed for the unit tests).
 *
 * A zone (fzone) is what one RFC 1035 master file yields for one origin: the
 * SOA and apex NS kept apart (as CoreDNS does), and every other owner name in
 * a uthash table keyed on the lower-cased wire name. Every ancestor of a name,
 * up to the apex, is inserted too (as an empty node when it owns nothing), so
 * empty non-terminals are found by one hash probe and the closest encloser of
 * a missing name is the deepest ancestor that is in the table.
 *
 * A loaded fzone is immutable. Readers hold a reference (fzone_ref/unref,
 * atomic counter); the reload thread publishes a new version and drops the
 * old one, which is freed by whichever side lets go last.
 *
 * fzone_lookup() is CoreDNS's Zone.Lookup: it fills an fres with the three
 * sections and a result kind; file.c turns that into a reply.
 */
#ifndef TOPODNS_PLUGIN_FILE_H
#define TOPODNS_PLUGIN_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "wire/dname.h"
#include "wire/msg.h"
#include "server/transfer.h"

/* One record: rdata in uncompressed wire form, embedded names of NS, CNAME,
 * MX, SOA, SVCB and HTTPS lower-cased like CoreDNS. */
typedef struct frr {
    uint16_t type, rclass;
    uint32_t ttl;
    uint16_t rdlen;
    uint8_t *rdata;
} frr;

typedef struct frrset {
    uint16_t type;
    unsigned n;
    frr *rrs;
} frrset;

typedef struct fzone fzone;

/* private to zone.c and lookup.c */
#include <uthash.h>
typedef struct fnode {
    UT_hash_handle hh;
    frrset *sets;                  /* none: an empty non-terminal */
    unsigned nsets;
    uint8_t name[];                /* lower-case wire name (the hash key) */
} fnode;

struct fzone {
    int refs;                      /* atomic */
    uint8_t origin[DNAME_MAX];
    int olabels;
    uint8_t soa_owner[DNAME_MAX];
    frr soa;
    uint32_t serial;
    frrset ns;                     /* apex NS */
    fnode *nodes;                  /* uthash by name */
    fnode *apex;
    size_t nrecords;
    fnode **order;                 /* the nodes with records, in DNSSEC
                                    * canonical order (transfers), made by
                                    * the loader; norder of them */
    size_t norder;
};

/* The node of an exact (lower-case) name, or NULL. */
fnode *fzone_find(const fzone *z, const uint8_t *lname);
const frrset *fnode_type(const fnode *n, uint16_t type);

/* Result kinds, as CoreDNS's file plugin names them. FR_ENT is CoreDNS's
 * "Success without an answer" for an empty non-terminal. */
enum fres_kind { FR_SUCCESS, FR_NODATA, FR_NXDOMAIN, FR_DELEGATION, FR_SERVFAIL, FR_ENT };

#define FRES_INLINE 32            /* records per section before the heap */
#define FRES_OWNERS 16             /* synthesized (wildcard) owner names */
#define FRES_ZONES 16              /* zones referenced by a result */

typedef struct fentry {
    const uint8_t *owner;          /* lower-case wire name */
    const frr *rr;
} fentry;

typedef struct fsections {
    fentry *e[SEC_COUNT];          /* inl[] until it outgrows it */
    unsigned n[SEC_COUNT], cap[SEC_COUNT];
    fentry inl[SEC_COUNT][FRES_INLINE];
} fsections;

/* Where CNAME chasing may continue: acquire() returns a referenced zone
 * (longest match) of the same plugin instance that contains name, or NULL. */
typedef struct fzone_set {
    fzone *(*acquire)(void *ctx, const uint8_t *name);
    void *ctx;
} fzone_set;

typedef struct fres {
    enum fres_kind kind;
    fsections s;
    /* private: storage the entries point into */
    uint8_t owners[FRES_OWNERS][DNAME_MAX];
    unsigned nowners;
    fzone *held[FRES_ZONES];       /* references released by fres_done */
    unsigned nheld;
    const fzone_set *others;
} fres;

/* Load path for origin (presentation form, "example.org."). 0, or -1 with
 * "path:line: message" (or another message naming the file) in err. */
int fzone_load(const char *path, const char *origin, fzone **out, char *err, size_t errlen);
/* What fzone_load does once the file is open: read fp (any stream, e.g. an
 * fmemopen'd buffer; the caller closes it) to its end, naming it name in
 * messages. fzone_load is this after file_open's checks. */
int fzone_load_fp(FILE *fp, const char *name, const char *origin, fzone **out,
                  char *err, size_t errlen);
void fzone_ref(fzone *z);
void fzone_unref(fzone *z);
uint32_t fzone_serial(const fzone *z);
const uint8_t *fzone_origin(const fzone *z);
size_t fzone_nrecords(const fzone *z);

/* Look qname (wire, any case) / qtype up in z (the caller holds a reference
 * to it). others may be NULL. Call fres_done() afterwards. */
void fzone_lookup(fzone *z, const fzone_set *others, const uint8_t *qname,
                  uint16_t qtype, fres *res);
void fres_done(fres *res);
/* Append the result's sections to m (a reply already started). 0, or -1. */
int fres_to_msg(const fres *res, dns_msg *m);

/* xfr.c: the zone's records in transfer order into emit (the walk of a
 * transfer source, src/server/transfer.h; serial as its). XFR_OK or
 * XFR_FAIL. */
int fzone_walk(fzone *z, uint32_t serial, xfr_emit_fn emit, void *sink);
/* The same, resumable (transfer.h's open/next/close): fzone_xfr_open()
 * takes a reference to z (the caller keeps its own) and returns a cursor
 * (NULL without memory); fzone_xfr_next() emits from the cursor's
 * position on and returns XFR_MORE after the record the sink answered
 * XFR_YIELD for (the rest comes from the next call), XFR_OK after the
 * closing SOA, or XFR_FAIL; fzone_xfr_close() drops the reference and
 * frees the cursor. The cursor points into its zone version only, which
 * is immutable and kept alive by that reference: a reload meanwhile does
 * not change what the transfer sends. Any thread, one at a time per
 * cursor. */
typedef struct fzone_xfr fzone_xfr;
fzone_xfr *fzone_xfr_open(fzone *z, uint32_t serial);
int fzone_xfr_next(fzone_xfr *c, xfr_emit_fn emit, void *sink);
void fzone_xfr_close(fzone_xfr *c);

#endif
