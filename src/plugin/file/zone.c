/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zone.c — loading an RFC 1035 master file into an immutable fzone.
 *
 * ldns parses the file one record at a time ($ORIGIN defaults to the zone,
 * $TTL, relative names, owner-less lines; a record without a TTL gets $TTL,
 * else the last TTL written, else 3600, like miekg/dns; no $INCLUDE).
 * Errors name the file and the line the record starts on. Each record is copied into our own
 * storage: owner name lower-cased (every type but SRV, as CoreDNS does;
 * topodns lower-cases SRV owners too since lookups are by lower-case key),
 * rdata in uncompressed wire form with the embedded names of NS, CNAME, MX,
 * SOA, SVCB and HTTPS lower-cased. The first SOA and the apex NS set are
 * kept apart from the name table, as CoreDNS's Apex; records outside the
 * origin can never be reached and are dropped. NSEC3 zones are refused like
 * CoreDNS ("NSEC3 zone is not supported").
 *
 * Names are held in a uthash table; inserting a name also inserts every
 * ancestor down to the apex as an empty node, which is how lookup.c finds
 * empty non-terminals and closest enclosers in O(labels) probes.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ldns/ldns.h>
#include "common/file.h"
#include "plugin/file/file.h"
#include "common/vec.h"

static void rrset_free(frrset *s)
{
    for (unsigned i = 0; i < s->n; i++)
        free(s->rrs[i].rdata);
    free(s->rrs);
}

static void zone_free(fzone *z)
{
    fnode *n, *tmp;
    HASH_ITER(hh, z->nodes, n, tmp) {
        HASH_DEL(z->nodes, n);
        for (unsigned i = 0; i < n->nsets; i++)
            rrset_free(&n->sets[i]);
        free(n->sets);
        free(n);
    }
    rrset_free(&z->ns);
    free(z->soa.rdata);
    free(z->order);
    free(z);
}

void fzone_ref(fzone *z)
{
    __atomic_add_fetch(&z->refs, 1, __ATOMIC_RELAXED);
}

void fzone_unref(fzone *z)
{
    if (z && __atomic_sub_fetch(&z->refs, 1, __ATOMIC_ACQ_REL) == 0)
        zone_free(z);
}

uint32_t fzone_serial(const fzone *z) { return z->serial; }
const uint8_t *fzone_origin(const fzone *z) { return z->origin; }
size_t fzone_nrecords(const fzone *z) { return z->nrecords; }

fnode *fzone_find(const fzone *z, const uint8_t *lname)
{
    fnode *n = NULL;
    HASH_FIND(hh, z->nodes, lname, dname_len(lname), n);
    return n;
}

const frrset *fnode_type(const fnode *n, uint16_t type)
{
    for (unsigned i = 0; n && i < n->nsets; i++)
        if (n->sets[i].type == type && n->sets[i].n)
            return &n->sets[i];
    return NULL;
}

/* The node for lname, created (with its missing ancestors) when absent. */
static fnode *node_get(fzone *z, const uint8_t *lname)
{
    fnode *n = fzone_find(z, lname);
    if (n)
        return n;
    if (dname_labels(lname) > z->olabels &&
        !node_get(z, dname_suffix(lname, dname_labels(lname) - 1)))
        return NULL;
    size_t len = dname_len(lname);
    n = calloc(1, sizeof *n + len);
    if (!n)
        return NULL;
    memcpy(n->name, lname, len);
    HASH_ADD_KEYPTR(hh, z->nodes, n->name, len, n);
    return n;
}

static int rrset_add(frrset *s, const frr *rr)
{
    if (VEC_RESIZE(s->rrs, s->n + 1) < 0)
        return -1;
    s->rrs[s->n++] = *rr;
    return 0;
}

static frrset *node_rrset(fnode *n, uint16_t type)
{
    for (unsigned i = 0; i < n->nsets; i++)
        if (n->sets[i].type == type)
            return &n->sets[i];
    if (VEC_RESIZE(n->sets, n->nsets + 1) < 0)
        return NULL;
    memset(&n->sets[n->nsets], 0, sizeof *n->sets);
    n->sets[n->nsets].type = type;
    return &n->sets[n->nsets++];
}

/* Lower-case a name embedded at off in rdata, when it is well formed. */
static void lower_at(uint8_t *rd, size_t len, size_t off)
{
    size_t p = off;
    while (p < len && rd[p] != 0 && rd[p] < 64)
        p += (size_t)rd[p] + 1;
    if (p < len && rd[p] == 0)
        dname_lower(rd + off);
}

static void lower_rdata_names(uint16_t type, uint8_t *rd, size_t len)
{
    switch (type) {
    case T_NS: case T_CNAME:
        lower_at(rd, len, 0);
        break;
    case T_MX: case T_SVCB: case T_HTTPS:
        lower_at(rd, len, 2);
        break;
    case T_SOA:
        lower_at(rd, len, 0);
        if (len && rd[0] < 64) {
            size_t p = 0;
            while (p < len && rd[p] != 0)
                p += (size_t)rd[p] + 1;
            if (p + 1 < len)
                lower_at(rd, len, p + 1);
        }
        break;
    default:
        break;
    }
}

/* Our copy of one ldns record's rdata: its fields' wire forms end to end
 * (what ldns_rr_rdata2buffer_wire writes), in one allocation. -1 when out
 * of memory, -2 when the rdata is not well formed for its type (ldns takes
 * e.g. NS \# b, RFC 3597 generic rdata that is no name; the lookups read
 * names out of these types' rdata). */
static int rr_copy(const ldns_rr *lr, frr *out)
{
    size_t nf = ldns_rr_rd_count(lr), len = 0;
    for (size_t i = 0; i < nf; i++)
        len += ldns_rdf_size(ldns_rr_rdf(lr, i));
    if (len > 65535)
        return -1;
    out->type = (uint16_t)ldns_rr_get_type(lr);
    out->rclass = (uint16_t)ldns_rr_get_class(lr);
    out->ttl = ldns_rr_ttl(lr);
    out->rdlen = (uint16_t)len;
    out->rdata = malloc(len ? len : 1);
    if (!out->rdata)
        return -1;
    size_t at = 0;
    for (size_t i = 0; i < nf; i++) {
        const ldns_rdf *f = ldns_rr_rdf(lr, i);
        if (ldns_rdf_size(f))
            memcpy(out->rdata + at, ldns_rdf_data(f), ldns_rdf_size(f));
        at += ldns_rdf_size(f);
    }
    if (!msg_rdata_ok(out->type, out->rdata, len)) {
        free(out->rdata);
        out->rdata = NULL;
        return -2;
    }
    lower_rdata_names(out->type, out->rdata, len);
    return 0;
}

static int owner_of(const ldns_rr *lr, uint8_t *out)
{
    const ldns_rdf *o = ldns_rr_owner(lr);
    size_t len = o ? ldns_rdf_size(o) : 0;
    if (len == 0 || len > DNAME_MAX)
        return -1;
    memcpy(out, ldns_rdf_data(o), len);
    dname_lower(out);
    return 0;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int add_soa(fzone *z, const ldns_rr *lr, const uint8_t *owner)
{
    if (rr_copy(lr, &z->soa) < 0)
        return -1;
    memcpy(z->soa_owner, owner, dname_len(owner));
    z->serial = get32(z->soa.rdata + z->soa.rdlen - 20);
    z->nrecords++;
    return 0;
}

/* Insert one record; 1 when it was dropped (outside the origin). */
static int add_rr(fzone *z, const ldns_rr *lr, char *err, size_t errlen)
{
    uint8_t owner[DNAME_MAX];
    uint16_t type = (uint16_t)ldns_rr_get_type(lr);
    if (owner_of(lr, owner) < 0) {
        snprintf(err, errlen, "bad owner name");
        return -1;
    }
    if (type == T_NSEC3 || type == 51 /* NSEC3PARAM */) {
        char o[DNAME_STR_MAX], zo[DNAME_STR_MAX];
        dname_to_str(o, sizeof o, owner);
        dname_to_str(zo, sizeof zo, z->origin);
        snprintf(err, errlen, "NSEC3 zone is not supported, dropping RR: %s for zone: %s", o, zo);
        return -1;
    }
    if (!dname_is_sub(owner, z->origin))
        return 1;
    frr rr;
    int rc = rr_copy(lr, &rr);
    if (rc < 0) {
        char tn[16];
        if (rc == -2)
            snprintf(err, errlen, "bad %s rdata", rr_type_name(type, tn));
        else
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    int apex = dname_equal(owner, z->origin);
    frrset *set;
    if (apex && type == T_NS) {
        set = &z->ns;
    } else if (apex && type == T_RRSIG && rr.rdlen >= 2 &&
               ((rr.rdata[0] << 8 | rr.rdata[1]) == T_NS || (rr.rdata[0] << 8 | rr.rdata[1]) == T_SOA)) {
        free(rr.rdata);              /* signatures are not served */
        return 1;
    } else {
        fnode *n = node_get(z, owner);
        set = n ? node_rrset(n, type) : NULL;
    }
    if (!set || rrset_add(set, &rr) < 0) {
        free(rr.rdata);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    z->nrecords++;
    return 0;
}

#define NO_TTL 0xfffffffeu         /* "no TTL written" marker given to ldns */

/* TTL state of a master file: $TTL when seen, else the last explicit TTL
 * (3600 at first), as miekg/dns does. */
typedef struct ttl_state {
    uint32_t ldns_default;         /* what ldns fills in: NO_TTL or a $TTL it read */
    uint32_t dollar;
    int have_dollar;
    uint32_t last;
} ttl_state;

static void fix_ttl(ldns_rr *rr, ttl_state *t)
{
    if (ldns_rr_ttl(rr) == NO_TTL)
        ldns_rr_set_ttl(rr, t->have_dollar ? t->dollar : t->last);
    else if (!t->have_dollar)
        t->last = ldns_rr_ttl(rr);
}

/* One parsed record into the zone (first SOA becomes the zone's). */
static int take_rr(fzone *z, ldns_rr *rr, const char *path, const char *origin, int line,
                   char *err, size_t errlen)
{
    char e[2200];
    uint8_t owner[DNAME_MAX];
    if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA) {
        if (z->soa.rdata)
            return 0;
        if (owner_of(rr, owner) == 0 && add_soa(z, rr, owner) == 0)
            return 0;
        snprintf(err, errlen, "%s:%d: bad SOA record", path, line);
        return -1;
    }
    if (add_rr(z, rr, e, sizeof e) < 0) {
        snprintf(err, errlen, "%s:%d: %s (origin %s)", path, line, e, origin);
        return -1;
    }
    return 0;
}

/* Read every record of fp into z. */
static int parse_file(fzone *z, FILE *fp, const char *path, const char *origin,
                      char *err, size_t errlen)
{
    ldns_rdf *orig = ldns_dname_new_frm_str(origin), *prev = NULL;
    ttl_state t = { NO_TTL, 0, 0, 3600 };
    int line = 1, rc = 0;
    if (!orig) {
        snprintf(err, errlen, "bad origin %s", origin);
        return -1;
    }
    while (rc == 0 && !feof(fp)) {
        ldns_rr *rr = NULL;
        int at = line;
        ldns_status st = ldns_rr_new_frm_fp_l(&rr, fp, &t.ldns_default, &orig, &prev, &line);
        if (st == LDNS_STATUS_OK) {
            fix_ttl(rr, &t);
            rc = take_rr(z, rr, path, origin, at, err, errlen);
            ldns_rr_free(rr);
        } else if (st == LDNS_STATUS_SYNTAX_TTL) {
            t.dollar = t.ldns_default;
            t.have_dollar = 1;
            t.ldns_default = NO_TTL;
        } else if (st == LDNS_STATUS_SYNTAX_INCLUDE) {
            snprintf(err, errlen, "%s:%d: $INCLUDE is not supported", path, at);
            rc = -1;
        } else if (st != LDNS_STATUS_SYNTAX_EMPTY && st != LDNS_STATUS_SYNTAX_ORIGIN) {
            snprintf(err, errlen, "%s:%d: %s", path, at, ldns_get_errorstr_by_id(st));
            rc = -1;
        }
    }
    ldns_rdf_deep_free(orig);
    if (prev)
        ldns_rdf_deep_free(prev);
    if (rc == 0 && !z->soa.rdata) {
        snprintf(err, errlen, "file \"%s\" has no SOA record for origin %s", path, origin);
        rc = -1;
    }
    return rc;
}

static int canonical(const void *a, const void *b)
{
    return dname_compare((*(const fnode *const *)a)->name, (*(const fnode *const *)b)->name);
}

/* z->order: the nodes with records in canonical order, the order of a
 * transfer (xfr.c), sorted here once so that a transfer starts at once.
 * 0, or -1 without memory. */
static int sort_nodes(fzone *z)
{
    size_t cap = HASH_COUNT(z->nodes), k = 0;
    fnode **v = malloc((cap ? cap : 1) * sizeof *v);
    if (!v)
        return -1;
    for (fnode *e = z->nodes; e; e = e->hh.next)
        if (e->nsets)
            v[k++] = e;
    assert(k <= cap);
    qsort(v, k, sizeof *v, canonical);
    z->order = v;
    z->norder = k;
    return 0;
}

static fzone *zone_new(const char *origin)
{
    fzone *z = calloc(1, sizeof *z);
    if (!z)
        return NULL;
    if (dname_from_str(z->origin, origin) < 0) {
        free(z);
        return NULL;
    }
    dname_lower(z->origin);
    z->olabels = dname_labels(z->origin);
    z->refs = 1;
    z->apex = node_get(z, z->origin);
    if (!z->apex) {
        zone_free(z);
        return NULL;
    }
    return z;
}

int fzone_load_fp(FILE *fp, const char *name, const char *origin, fzone **out,
                  char *err, size_t errlen)
{
    fzone *z = zone_new(origin);
    if (!z) {
        snprintf(err, errlen, "bad origin %s", origin);
        return -1;
    }
    if (parse_file(z, fp, name, origin, err, errlen) < 0) {
        zone_free(z);
        return -1;
    }
    if (sort_nodes(z) < 0) {
        snprintf(err, errlen, "%s: out of memory", name);
        zone_free(z);
        return -1;
    }
    *out = z;
    return 0;
}

int fzone_load(const char *path, const char *origin, fzone **out, char *err, size_t errlen)
{
    const char *why = NULL;
    FILE *fp = file_open(path, FILE_REGULAR, &why);  /* /dev/zero would never end */
    if (!fp) {
        snprintf(err, errlen, "open %s: %s", path, why);
        return -1;
    }
    int rc = fzone_load_fp(fp, path, origin, out, err, errlen);
    fclose(fp);
    return rc;
}
