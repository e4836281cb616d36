/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_file.c — the file plugin: zone loading (ldns parse, SOA required,
 * errors with file and line, NSEC3 refused), lookups straight on an fzone
 * (apex SOA/NS with glue, positive answers with apex NS in authority,
 * NODATA/NXDOMAIN with the SOA, empty non-terminals, CNAME chains, loops,
 * dangling and out-of-zone targets, RFC 4592 wildcards, referrals with glue,
 * MX/SRV additional processing, case folding), and the plugin through the
 * server (req_new_internal/req_run): AA flag, rcodes, referrals without AA,
 * names outside the zones, AXFR refused, fallthrough, multiple zones.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "plugin/file/file.h"
#include "server/server.h"
#include "testenv.h"

static const char *ZONE =
    "$ORIGIN example.org.\n"
    "$TTL 3600\n"
    "@ IN SOA ns1.example.org. hostmaster.example.org. 2024010101 7200 3600 1209600 300\n"
    "  IN NS ns1\n"
    "  IN NS ns2.example.org.\n"
    "  IN NS ns.elsewhere.net.\n"
    "  IN MX 10 mail\n"
    "  IN MX 20 Mail\n"
    "ns1 IN A 192.0.2.53\n"
    "ns1 IN AAAA 2001:db8::53\n"
    "ns2 IN A 192.0.2.54\n"
    "www 300 IN A 192.0.2.10\n"
    "www IN AAAA 2001:db8::10\n"
    "mail IN A 192.0.2.25\n"
    "alias IN CNAME alias2\n"
    "alias2 IN CNAME WWW\n"
    "external IN CNAME www.example.net.\n"
    "dangling IN CNAME nothere\n"
    "loop1 IN CNAME loop2\n"
    "loop2 IN CNAME loop1\n"
    "towild IN CNAME x.wild\n"
    "tosub IN CNAME host.sub\n"
    "_http._tcp IN SRV 10 20 80 www\n"
    "*.wild IN A 192.0.2.100\n";

static char zone_text[8192];

static const char *TAIL =
    "exists.wild IN A 192.0.2.101\n"
    "*.cw IN CNAME www\n"
    "a.*.entwild IN A 192.0.2.7\n"
    "sub IN NS ns.sub\n"
    "sub IN NS ns1.example.org.\n"
    "ns.sub IN A 192.0.2.200\n"
    "a.b.c IN A 192.0.2.3\n"
    "MixedCase IN A 192.0.2.77\n";

static char *write_tmp(const char *text)
{
    char *path = strdup("/tmp/test_file.XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static const uint8_t *N(const char *s)
{
    static uint8_t ring[32][DNAME_MAX];
    static unsigned k;
    uint8_t *b = ring[k++ % 32];
    assert_true(dname_from_str(b, s) > 0);
    return b;
}

static fzone *Z;
static char *zpath;

static int setup_zone(void **state)
{
    (void)state;
    snprintf(zone_text, sizeof zone_text, "%s%s", ZONE, TAIL);
    zpath = write_tmp(zone_text);
    char err[1024];
    if (fzone_load(zpath, "example.org.", &Z, err, sizeof err) < 0)
        fail_msg("load: %s", err);
    return 0;
}

static int teardown_zone(void **state)
{
    (void)state;
    fzone_unref(Z);
    unlink(zpath);
    free(zpath);
    return 0;
}

static fres R;

static void lk(const char *name, uint16_t type)
{
    fzone_lookup(Z, NULL, N(name), type, &R);
}

/* Presentation form of entry i of section s. */
static const char *str(int s, unsigned i)
{
    static char buf[4][512];
    static unsigned k;
    char *b = buf[k++ % 4];
    assert_true(i < R.s.n[s]);
    const fentry *e = &R.s.e[s][i];
    dns_rr rr = { e->owner, e->rr->type, e->rr->rclass, e->rr->ttl, e->rr->rdata, e->rr->rdlen };
    assert_true(rr_to_str(&rr, b, 512) >= 0);
    for (char *p = b; *p; p++)
        if (*p == '\t')
            *p = ' ';
    return b;
}

static int has(int s, const char *needle)
{
    for (unsigned i = 0; i < R.s.n[s]; i++)
        if (strstr(str(s, i), needle))
            return 1;
    return 0;
}

static void counts(unsigned a, unsigned n, unsigned x)
{
    if (R.s.n[0] != a || R.s.n[1] != n || R.s.n[2] != x) {
        for (int s = 0; s < 3; s++)
            for (unsigned i = 0; i < R.s.n[s]; i++)
                print_message("  [%d] %s\n", s, str(s, i));
        fail_msg("counts %u/%u/%u, want %u/%u/%u", R.s.n[0], R.s.n[1], R.s.n[2], a, n, x);
    }
}

/* ---- loading ------------------------------------------------------------ */

static void test_load_basics(void **state)
{
    (void)state;
    assert_int_equal(fzone_serial(Z), 2024010101u);
    assert_true(dname_equal(fzone_origin(Z), N("example.org.")));
    assert_true(fzone_nrecords(Z) > 25);
}

static void expect_load_error(const char *text, const char *origin, const char *want)
{
    char *p = write_tmp(text);
    fzone *z = NULL;
    char err[1024] = "";
    assert_int_equal(fzone_load(p, origin, &z, err, sizeof err), -1);
    assert_null(z);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
    if (!strstr(err, p))
        fail_msg("error '%s' does not name the file", err);
    unlink(p);
    free(p);
}

static void test_load_errors(void **state)
{
    (void)state;
    expect_load_error("$ORIGIN example.org.\nwww 60 IN A 192.0.2.1\n", "example.org.", "no SOA");
    expect_load_error("@ 60 IN SOA a. b. 1 2 3 4 5\nwww 60 IN A 300.1.2.3\n", "example.org.", ":2:");
    expect_load_error("@ 60 IN SOA a. b. 1 2 3 4 5\n\n\nx 60 IN BOGUS foo\n", "example.org.", ":4:");
    expect_load_error("@ 60 IN SOA a. b. 1 2 3 4 5\n"
                      "x 60 IN NSEC3 1 0 10 AABB 2T7B4G4VSA5SMI47K61MV5BV1A22BOJR A\n",
                      "example.org.", "NSEC3 zone is not supported");
    /* RFC 3597 generic rdata that is no name, for types whose rdata the
     * lookups read names from: refused with the line, never loaded (ldns
     * takes \# b for these types; it refuses most other bad forms
     * itself, e.g. a label longer than the rdata) */
    expect_load_error("@ 60 IN SOA a. b. 1 2 3 4 5\nsub 60 IN NS \\# b\n", "example.org.",
                      ":2: bad NS rdata");
    expect_load_error("@ 60 IN SOA a. b. 1 2 3 4 5\nx 60 IN MX \\# b\n", "example.org.",
                      ":2: bad MX rdata");
    fzone *z = NULL;
    char err[256];
    assert_int_equal(fzone_load("/nonexistent/zone", "example.org.", &z, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/zone"));
}

static void test_load_relative_and_ttl(void **state)
{
    (void)state;
    /* no $TTL: records without a TTL get 3600; names relative to the origin
     * given by the caller */
    char *p = write_tmp("@ IN SOA ns hm 7 1 1 1 1\n@ IN NS ns\nns IN A 192.0.2.1\n");
    fzone *z = NULL;
    char err[256];
    assert_int_equal(fzone_load(p, "Other.Test.", &z, err, sizeof err), 0);
    fzone *save = Z;
    Z = z;
    lk("ns.other.test.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    assert_string_equal(str(0, 0), "ns.other.test. 3600 IN A 192.0.2.1");
    fres_done(&R);
    lk("other.test.", T_SOA);
    assert_non_null(strstr(str(0, 0), "ns.other.test. hm.other.test. 7"));
    fres_done(&R);
    Z = save;
    fzone_unref(z);
    unlink(p);
    free(p);

    /* without $TTL the last TTL written carries on; with it, $TTL is used */
    p = write_tmp("@ 60 IN SOA ns hm 7 1 1 1 1\na 120 IN A 192.0.2.1\nb IN A 192.0.2.2\n"
                  "$TTL 30\nc IN A 192.0.2.3\n");
    assert_int_equal(fzone_load(p, "t.", &z, err, sizeof err), 0);
    Z = z;
    lk("b.t.", T_A);
    assert_string_equal(str(0, 0), "b.t. 120 IN A 192.0.2.2");
    fres_done(&R);
    lk("c.t.", T_A);
    assert_string_equal(str(0, 0), "c.t. 30 IN A 192.0.2.3");
    fres_done(&R);
    Z = save;
    fzone_unref(z);
    unlink(p);
    free(p);
}

/* ---- lookups ------------------------------------------------------------ */

static void test_apex(void **state)
{
    (void)state;
    lk("example.org.", T_SOA);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(1, 3, 0);
    assert_true(has(0, "SOA ns1.example.org. hostmaster.example.org. 2024010101"));
    fres_done(&R);

    lk("Example.ORG.", T_NS);
    assert_int_equal(R.kind, FR_SUCCESS);
    /* glue only for in-bailiwick names: ns1 A+AAAA, ns2 A */
    counts(3, 0, 3);
    assert_true(has(2, "ns1.example.org. 3600 IN A 192.0.2.53"));
    assert_true(has(2, "ns1.example.org. 3600 IN AAAA 2001:db8::53"));
    assert_true(has(2, "ns2.example.org. 3600 IN A 192.0.2.54"));
    fres_done(&R);

    lk("example.org.", T_A);            /* the apex exists: NODATA */
    assert_int_equal(R.kind, FR_NODATA);
    counts(0, 1, 0);
    fres_done(&R);
}

static void test_positive_and_negative(void **state)
{
    (void)state;
    lk("www.example.org.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(1, 3, 0);
    assert_string_equal(str(0, 0), "www.example.org. 300 IN A 192.0.2.10");
    assert_true(has(1, "IN NS ns1.example.org."));
    fres_done(&R);

    lk("www.example.org.", T_MX);
    assert_int_equal(R.kind, FR_NODATA);
    counts(0, 1, 0);
    /* the SOA as written: TTL 3600, not min(TTL, MINIMUM) */
    assert_true(has(1, "example.org. 3600 IN SOA"));
    fres_done(&R);

    lk("nothere.example.org.", T_A);
    assert_int_equal(R.kind, FR_NXDOMAIN);
    counts(0, 1, 0);
    assert_true(has(1, "IN SOA"));
    fres_done(&R);

    lk("deep.www.example.org.", T_A);
    assert_int_equal(R.kind, FR_NXDOMAIN);
    fres_done(&R);

    lk("www.example.org.", T_ANY);      /* CoreDNS: no records of type ANY */
    assert_int_equal(R.kind, FR_NODATA);
    fres_done(&R);

    lk("mixedcase.EXAMPLE.org.", T_A);
    assert_string_equal(str(0, 0), "mixedcase.example.org. 3600 IN A 192.0.2.77");
    fres_done(&R);
}

static void test_empty_non_terminal(void **state)
{
    (void)state;
    lk("b.c.example.org.", T_A);
    assert_int_equal(R.kind, FR_ENT);
    counts(0, 1, 0);
    assert_true(has(1, "IN SOA"));
    fres_done(&R);
    lk("c.example.org.", T_TXT);
    assert_int_equal(R.kind, FR_ENT);
    fres_done(&R);
    lk("x.b.c.example.org.", T_A);
    assert_int_equal(R.kind, FR_NXDOMAIN);
    fres_done(&R);
    lk("a.b.c.example.org.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    fres_done(&R);
}

static void test_cname(void **state)
{
    (void)state;
    lk("alias.example.org.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(3, 3, 0);
    assert_string_equal(str(0, 0), "alias.example.org. 3600 IN CNAME alias2.example.org.");
    assert_string_equal(str(0, 1), "alias2.example.org. 3600 IN CNAME www.example.org.");
    assert_string_equal(str(0, 2), "www.example.org. 300 IN A 192.0.2.10");
    fres_done(&R);

    lk("alias.example.org.", T_CNAME);  /* not chased */
    counts(1, 3, 0);
    fres_done(&R);

    lk("alias.example.org.", T_MX);     /* target lacks the type: CNAMEs, NOERROR */
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(2, 3, 0);
    fres_done(&R);

    lk("external.example.org.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(1, 3, 0);
    assert_true(has(0, "CNAME www.example.net."));
    fres_done(&R);

    lk("dangling.example.org.", T_A);   /* in-zone target that does not exist */
    assert_int_equal(R.kind, FR_NXDOMAIN);
    counts(1, 1, 0);
    assert_true(has(1, "IN SOA"));
    fres_done(&R);

    lk("loop1.example.org.", T_A);      /* a loop stops, each link once */
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(2, 3, 0);
    fres_done(&R);

    lk("towild.example.org.", T_A);     /* target synthesized from a wildcard */
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(2, 3, 0);
    assert_string_equal(str(0, 1), "x.wild.example.org. 3600 IN A 192.0.2.100");
    fres_done(&R);

    lk("tosub.example.org.", T_A);      /* target below a zone cut: referral, answer kept */
    assert_int_equal(R.kind, FR_DELEGATION);
    counts(1, 2, 1);
    fres_done(&R);
}

static void test_wildcard(void **state)
{
    (void)state;
    lk("Foo.wild.example.org.", T_A);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(1, 3, 0);
    assert_string_equal(str(0, 0), "foo.wild.example.org. 3600 IN A 192.0.2.100");
    fres_done(&R);

    lk("a.b.wild.example.org.", T_A);   /* several labels below the closest encloser */
    assert_int_equal(R.kind, FR_SUCCESS);
    fres_done(&R);

    lk("foo.wild.example.org.", T_AAAA);
    assert_int_equal(R.kind, FR_NODATA);
    fres_done(&R);

    lk("exists.wild.example.org.", T_TXT); /* existing names are not wildcard-matched */
    assert_int_equal(R.kind, FR_NODATA);
    fres_done(&R);
    lk("x.exists.wild.example.org.", T_A); /* closest encloser exists.wild has no wildcard */
    assert_int_equal(R.kind, FR_NXDOMAIN);
    fres_done(&R);

    lk("q.cw.example.org.", T_A);       /* wildcard CNAME, owner is the query name */
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(2, 3, 0);
    assert_string_equal(str(0, 0), "q.cw.example.org. 3600 IN CNAME www.example.org.");
    fres_done(&R);

    lk("z.entwild.example.org.", T_A);  /* the wildcard is an empty non-terminal */
    assert_int_equal(R.kind, FR_NODATA);
    counts(0, 1, 0);
    fres_done(&R);
}

static void test_delegation(void **state)
{
    (void)state;
    lk("host.sub.example.org.", T_A);
    assert_int_equal(R.kind, FR_DELEGATION);
    counts(0, 2, 1);                    /* glue only for ns.sub */
    assert_true(has(1, "sub.example.org. 3600 IN NS ns.sub.example.org."));
    assert_true(has(2, "ns.sub.example.org. 3600 IN A 192.0.2.200"));
    fres_done(&R);

    lk("sub.example.org.", T_NS);
    assert_int_equal(R.kind, FR_DELEGATION);
    fres_done(&R);

    lk("ns.sub.example.org.", T_A);     /* glue is not answered authoritatively */
    assert_int_equal(R.kind, FR_DELEGATION);
    fres_done(&R);

    lk("sub.example.org.", T_DS);       /* the parent answers DS at the cut */
    assert_int_equal(R.kind, FR_NODATA);
    fres_done(&R);
}

static void test_additional(void **state)
{
    (void)state;
    lk("example.org.", T_MX);           /* "mail" and "Mail" are one target */
    counts(2, 3, 1);
    assert_string_equal(str(2, 0), "mail.example.org. 3600 IN A 192.0.2.25");
    fres_done(&R);

    lk("_http._tcp.example.org.", T_SRV);
    counts(1, 3, 2);
    assert_true(has(2, "www.example.org. 300 IN A 192.0.2.10"));
    assert_true(has(2, "www.example.org. 3600 IN AAAA 2001:db8::10"));
    fres_done(&R);
}

static fzone *other_zone;

static fzone *acquire_other(void *ctx, const uint8_t *name)
{
    (void)ctx;
    if (dname_is_sub(name, fzone_origin(other_zone))) {
        fzone_ref(other_zone);
        return other_zone;
    }
    return NULL;
}

static void test_cname_into_other_zone(void **state)
{
    (void)state;
    char *p = write_tmp("$ORIGIN example.net.\n@ 60 IN SOA ns hm 9 1 1 1 60\n@ 60 IN NS ns\n"
                        "www 60 IN A 198.51.100.80\n");
    char err[256];
    assert_int_equal(fzone_load(p, "example.net.", &other_zone, err, sizeof err), 0);
    fzone_set set = { acquire_other, NULL };
    fzone_lookup(Z, &set, N("external.example.org."), T_A, &R);
    assert_int_equal(R.kind, FR_SUCCESS);
    counts(2, 3, 0);
    assert_string_equal(str(0, 1), "www.example.net. 60 IN A 198.51.100.80");
    fres_done(&R);
    fzone_lookup(Z, &set, N("external.example.org."), T_TXT, &R);
    assert_int_equal(R.kind, FR_NODATA);
    counts(1, 1, 0);
    fres_done(&R);
    fzone_unref(other_zone);           /* the lookups released theirs */
    unlink(p);
    free(p);
}

/* ---- transfers (xfr.c) ------------------------------------------------------ */

typedef struct xcol {
    char recs[128][256];
    unsigned n;
    unsigned stop_at;              /* nonzero: refuse the record after this many */
    unsigned yield_every;          /* nonzero: XFR_YIELD after every this many */
} xcol;

static int collect(void *sink, const dns_rr *rr)
{
    xcol *c = sink;
    if ((c->stop_at && c->n == c->stop_at) || c->n == 128)
        return -1;
    assert_true(rr_to_str(rr, c->recs[c->n], sizeof c->recs[0]) >= 0);
    for (char *p = c->recs[c->n]; *p; p++)
        if (*p == '\t')
            *p = ' ';
    c->n++;
    return c->yield_every && c->n % c->yield_every == 0 ? XFR_YIELD : 0;
}

/* The owners of the collected records, each run once, space-separated. */
static const char *owners(const xcol *c)
{
    static char out[4096];
    size_t o = 0;
    char last[256] = "";
    out[0] = '\0';
    for (unsigned i = 0; i < c->n; i++) {
        char own[256];
        sscanf(c->recs[i], "%255s", own);
        if (strcmp(own, last) != 0)
            o += (size_t)snprintf(out + o, sizeof out - o, "%s ", own);
        snprintf(last, sizeof last, "%s", own);
    }
    return out;
}

static void test_walk(void **state)
{
    (void)state;
    xcol *c = calloc(1, sizeof *c);
    assert_int_equal(fzone_walk(Z, 0, collect, c), XFR_OK);
    assert_int_equal(c->n, fzone_nrecords(Z) + 1);          /* the SOA twice */
    assert_non_null(strstr(c->recs[0], "IN SOA ns1.example.org. hostmaster.example.org. 2024010101"));
    assert_string_equal(c->recs[0], c->recs[c->n - 1]);
    assert_string_equal(c->recs[1], "example.org. 3600 IN NS ns1.example.org.");
    assert_string_equal(c->recs[3], "example.org. 3600 IN NS ns.elsewhere.net.");
    /* the apex's other records, then DNSSEC canonical order, lower case */
    assert_string_equal(owners(c),
        "example.org. _http._tcp.example.org. alias.example.org. alias2.example.org. "
        "a.b.c.example.org. *.cw.example.org. dangling.example.org. a.*.entwild.example.org. "
        "external.example.org. loop1.example.org. loop2.example.org. mail.example.org. "
        "mixedcase.example.org. ns1.example.org. ns2.example.org. sub.example.org. "
        "ns.sub.example.org. tosub.example.org. towild.example.org. *.wild.example.org. "
        "exists.wild.example.org. www.example.org. example.org. ");
    assert_string_equal(c->recs[4], "example.org. 3600 IN MX 10 mail.example.org.");
    /* an IXFR at the zone's serial: the SOA alone; an older one: everything */
    memset(c, 0, sizeof *c);
    assert_int_equal(fzone_walk(Z, 2024010101, collect, c), XFR_OK);
    assert_int_equal(c->n, 1);
    memset(c, 0, sizeof *c);
    assert_int_equal(fzone_walk(Z, 2024010100, collect, c), XFR_OK);
    assert_int_equal(c->n, fzone_nrecords(Z) + 1);
    /* a sink that stops (the client went away) stops the walk */
    memset(c, 0, sizeof *c);
    c->stop_at = 3;
    assert_int_equal(fzone_walk(Z, 0, collect, c), XFR_FAIL);
    assert_int_equal(c->n, 3);
    free(c);
}

/* The resumable form: a sink that yields after every k records gets, over
 * several next() calls, exactly the walk's records, each call stopping
 * right after the record it yielded on; the cursor keeps its zone version
 * alive after the caller dropped it (a reload meanwhile), which ASan and
 * valgrind would catch otherwise. */
static void test_cursor(void **state)
{
    (void)state;
    xcol *walk = calloc(1, sizeof *walk), *c = calloc(1, sizeof *c);
    assert_int_equal(fzone_walk(Z, 0, collect, walk), XFR_OK);
    for (unsigned k = 1; k <= 5; k++) {
        fzone *z = NULL;
        char err[1024];
        assert_int_equal(fzone_load(zpath, "example.org.", &z, err, sizeof err), 0);
        fzone_xfr *cur = fzone_xfr_open(z, 0);
        assert_non_null(cur);
        fzone_unref(z);                 /* the slot's reference goes: a reload */
        memset(c, 0, sizeof *c);
        c->yield_every = k;
        unsigned calls = 0;
        int rc;
        while ((rc = fzone_xfr_next(cur, collect, c)) == XFR_MORE) {
            calls++;
            assert_int_equal(c->n, calls * k);  /* stopped right after the yield */
        }
        assert_int_equal(rc, XFR_OK);
        assert_int_equal(calls, (walk->n - 1) / k);   /* the last call ends it */
        fzone_xfr_close(cur);
        assert_int_equal(c->n, walk->n);
        for (unsigned i = 0; i < walk->n; i++)
            assert_string_equal(c->recs[i], walk->recs[i]);
    }
    /* an up-to-date IXFR: the SOA, and done, even when the sink yields on it */
    fzone_xfr *cur = fzone_xfr_open(Z, 2024010101);
    memset(c, 0, sizeof *c);
    c->yield_every = 1;
    assert_int_equal(fzone_xfr_next(cur, collect, c), XFR_OK);
    assert_int_equal(c->n, 1);
    fzone_xfr_close(cur);
    /* a sink that fails stops it; closing an unfinished cursor frees it */
    cur = fzone_xfr_open(Z, 0);
    memset(c, 0, sizeof *c);
    c->stop_at = 2;
    assert_int_equal(fzone_xfr_next(cur, collect, c), XFR_FAIL);
    fzone_xfr_close(cur);
    free(walk);
    free(c);
}

/* ---- through the server ------------------------------------------------- */

static instance *load_conf(const char *fmt, const char *zfile)
{
    char text[2048], err[1024] = "";
    snprintf(text, sizeof text, fmt, zfile, zfile);
    char *p = write_tmp(text);
    instance *ins = instance_load(test_env(), p, err, sizeof err);
    unlink(p);
    free(p);
    if (!ins)
        fail_msg("load: %s", err);
    return ins;
}

typedef struct reply {
    int rcode;
    uint16_t flags;
    unsigned n[3];
    const char *writer;
} reply;

static reply query(instance *ins, const char *name, uint16_t type)
{
    uint8_t wire[512];
    memset(wire, 0, 12);
    wire[0] = 0x12, wire[1] = 0x34, wire[2] = 0x01, wire[5] = 1;
    int nl = dname_from_str(wire + 12, name);
    assert_true(nl > 0);
    size_t len = 12 + (size_t)nl;
    wire[len++] = (uint8_t)(type >> 8), wire[len++] = (uint8_t)type;
    wire[len++] = 0, wire[len++] = 1;
    dns_req *r = req_new_internal(ins, NULL, wire, len, NULL);
    assert_non_null(r);
    reply out;
    req_run(r);
    out.rcode = r->resp.rcode;
    out.flags = r->resp.flags;
    out.writer = r->writer && strcmp(r->writer, "file") == 0 ? "file" : "other";
    for (int s = 0; s < 3; s++)
        out.n[s] = msg_count(&r->resp, s);
    assert_memory_equal(r->resp.qname, wire + 12, (size_t)nl); /* question case kept */
    req_free(r);
    return out;
}

static void test_plugin(void **state)
{
    (void)state;
    instance *ins = load_conf("example.org:1053 {\n    file %s\n}\n", zpath);
    reply r = query(ins, "WWW.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NOERROR);
    assert_true(r.flags & F_AA);
    assert_string_equal(r.writer, "file");
    assert_int_equal(r.n[0], 1);
    r = query(ins, "nothere.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NXDOMAIN);
    assert_true(r.flags & F_AA);
    assert_int_equal(r.n[1], 1);
    r = query(ins, "b.c.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NOERROR);
    assert_int_equal(r.n[0], 0);
    r = query(ins, "host.sub.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NOERROR);
    assert_false(r.flags & F_AA);
    assert_int_equal(r.n[1], 2);
    r = query(ins, "dangling.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NXDOMAIN);
    assert_true(r.flags & F_AA);
    assert_int_equal(r.n[0], 1);
    r = query(ins, "example.org.", T_AXFR);
    assert_int_equal(r.rcode, RC_REFUSED);
    instance_free(ins);
}

/* The plugin publishes its zones as a transfer source of its block; only
 * exact origins are its to transfer. Without a transfer plugin AXFR is
 * REFUSED (above); with one, an AXFR that is not over TCP is refused by it
 * (internal requests are not TCP). */
static void test_transfer_source(void **state)
{
    (void)state;
    instance *ins = load_conf("example.org:1053 {\n    file %s\n    transfer {\n"
                              "        to *\n    }\n}\n", zpath);
    const xfr_source *src = xfr_source_find(instance_block(ins, 0), "file");
    assert_non_null(src);
    xcol *c = calloc(1, sizeof *c);
    assert_int_equal(src->walk(src->data, N("example.org."), 0, collect, c), XFR_OK);
    assert_int_equal(c->n, fzone_nrecords(Z) + 1);
    memset(c, 0, sizeof *c);
    assert_int_equal(src->walk(src->data, N("www.example.org."), 0, collect, c), XFR_NOTAUTH);
    assert_int_equal(src->walk(src->data, N("org."), 0, collect, c), XFR_NOTAUTH);
    assert_int_equal(src->walk(src->data, N("example.net."), 0, collect, c), XFR_NOTAUTH);
    assert_int_equal(c->n, 0);
    free(c);
    reply r = query(ins, "example.org.", T_AXFR);
    assert_int_equal(r.rcode, RC_REFUSED);
    assert_string_equal(r.writer, "other");
    assert_int_equal(query(ins, "www.example.org.", T_A).rcode, RC_NOERROR);
    instance_free(ins);
}

static void test_plugin_fallthrough(void **state)
{
    (void)state;
    /* with fallthrough and no next plugin, NXDOMAIN becomes the server's
     * SERVFAIL "no next plugin found"; NODATA does not fall through */
    instance *ins = load_conf("example.org:1053 {\n    file %s {\n        fallthrough\n    }\n}\n", zpath);
    assert_int_equal(query(ins, "nothere.example.org.", T_A).rcode, RC_SERVFAIL);
    assert_int_equal(query(ins, "b.c.example.org.", T_A).rcode, RC_SERVFAIL);
    assert_int_equal(query(ins, "www.example.org.", T_MX).rcode, RC_NOERROR);
    assert_int_equal(query(ins, "www.example.org.", T_A).rcode, RC_NOERROR);
    instance_free(ins);

    ins = load_conf("example.org:1053 {\n    file %s {\n        fallthrough sub2.example.org\n    }\n}\n", zpath);
    assert_int_equal(query(ins, "nothere.example.org.", T_A).rcode, RC_NXDOMAIN);
    assert_int_equal(query(ins, "x.sub2.example.org.", T_A).rcode, RC_SERVFAIL);
    instance_free(ins);
}

static void test_plugin_zones(void **state)
{
    (void)state;
    /* explicit zones: the same file under two origins; other names go on
     * (here: no next plugin, REFUSED as CoreDNS's file does) */
    char *p = write_tmp("@ 60 IN SOA ns hm 1 1 1 1 1\n@ 60 IN NS ns\nwww 60 IN A 192.0.2.1\n");
    instance *ins = load_conf(".:1053 {\n    file %s example.org example.com\n}\n", p);
    assert_int_equal(query(ins, "www.example.com.", T_A).rcode, RC_NOERROR);
    assert_int_equal(query(ins, "www.example.org.", T_A).rcode, RC_NOERROR);
    assert_int_equal(query(ins, "nothere.example.com.", T_A).rcode, RC_NXDOMAIN);
    assert_int_equal(query(ins, "www.example.net.", T_A).rcode, RC_REFUSED);
    instance_free(ins);
    /* the zone file's own $ORIGIN wins over the zone it is loaded for: its
     * records fall outside example.com and cannot be reached */
    ins = load_conf("example.com:1053 {\n    file %s\n}\n", zpath);
    assert_int_equal(query(ins, "www.example.com.", T_A).rcode, RC_NXDOMAIN);
    instance_free(ins);
    unlink(p);
    free(p);
}

static void expect_setup_error(const char *conf, const char *want)
{
    char *p = write_tmp(conf), err[1024] = "";
    instance *ins = instance_load(test_env(), p, err, sizeof err);
    unlink(p);
    free(p);
    assert_null(ins);
    if (!strstr(err, want))
        fail_msg("error '%s' lacks '%s'", err, want);
}

static void test_setup_errors(void **state)
{
    (void)state;
    char conf[1024];
    expect_setup_error("example.org:1053 {\n    file\n}\n", "Wrong argument count");
    snprintf(conf, sizeof conf, "example.org:1053 {\n    file %s {\n        bogus\n    }\n}\n", zpath);
    expect_setup_error(conf, "unknown property 'bogus'");
    snprintf(conf, sizeof conf, "example.org:1053 {\n    file %s {\n        reload\n    }\n}\n", zpath);
    expect_setup_error(conf, "reload duration value is expected");
    snprintf(conf, sizeof conf, "example.org:1053 {\n    file %s {\n        reload xyz\n    }\n}\n", zpath);
    expect_setup_error(conf, "xyz");
    expect_setup_error("example.org:1053 {\n    file /nonexistent/db {\n        reload 0\n    }\n}\n",
                       "/nonexistent/db");
    char *bad = write_tmp("$ORIGIN example.org.\n@ 60 IN SOA a. b. 1 2 3 4 5\nwww 60 IN A nope\n");
    snprintf(conf, sizeof conf, "example.org:1053 {\n    file %s\n}\n", bad);
    char want[512];
    snprintf(want, sizeof want, "%s:3:", bad);
    expect_setup_error(conf, want);
    unlink(bad);
    free(bad);
}

/* Regression: `file /dev/zero` spun forever at startup (ldns read NUL
 * bytes without end) and a FIFO blocked the open. A DBFILE that exists but
 * is no regular file stops startup at its own token, whatever `reload` says;
 * a reload refuses one too. The alarm turns a hang into a failure. */
static void test_setup_not_regular(void **state)
{
    (void)state;
    char conf[1024], want[1024], fifo[64];
    alarm(60);
    expect_setup_error("example.org:1053 {\n    file /dev/zero example.org\n}\n",
                       ":2: plugin/file: /dev/zero is not a regular file near '/dev/zero'");
    expect_setup_error("example.org:1053 {\n    file /dev/null {\n        reload 0\n    }\n}\n",
                       ":2: plugin/file: /dev/null is not a regular file near '/dev/null'");
    expect_setup_error("example.org:1053 {\n    file /tmp\n}\n",
                       ":2: plugin/file: /tmp is a directory near '/tmp'");
    snprintf(fifo, sizeof fifo, "/tmp/test_file.fifo.%d", (int)getpid());
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(conf, sizeof conf, "example.org:1053 {\n    file %s\n}\n", fifo);
    snprintf(want, sizeof want, ":2: plugin/file: %s is not a regular file near '%s'", fifo, fifo);
    expect_setup_error(conf, want);
    /* what a reload reads: refused, never read */
    fzone *z = NULL;
    char err[256];
    assert_int_equal(fzone_load(fifo, "example.org.", &z, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a regular file"));
    assert_int_equal(fzone_load("/dev/zero", "example.org.", &z, err, sizeof err), -1);
    assert_string_equal(err, "open /dev/zero: not a regular file");
    unlink(fifo);
    alarm(0);
}

static void test_missing_file_servfail(void **state)
{
    (void)state;
    /* a file that cannot be opened is retried (reload > 0): SERVFAIL meanwhile */
    instance *ins = load_conf("example.org:1053 {\n    file /nonexistent/db%.0s\n}\n", "");
    assert_int_equal(query(ins, "www.example.org.", T_A).rcode, RC_SERVFAIL);
    instance_free(ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_basics),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_relative_and_ttl),
        cmocka_unit_test(test_apex),
        cmocka_unit_test(test_positive_and_negative),
        cmocka_unit_test(test_empty_non_terminal),
        cmocka_unit_test(test_cname),
        cmocka_unit_test(test_wildcard),
        cmocka_unit_test(test_delegation),
        cmocka_unit_test(test_additional),
        cmocka_unit_test(test_cname_into_other_zone),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_cursor),
        cmocka_unit_test(test_plugin),
        cmocka_unit_test(test_transfer_source),
        cmocka_unit_test(test_plugin_fallthrough),
        cmocka_unit_test(test_plugin_zones),
        cmocka_unit_test(test_setup_errors),
        cmocka_unit_test(test_setup_not_regular),
        cmocka_unit_test(test_missing_file_servfail),
    };
    return cmocka_run_group_tests(tests, setup_zone, teardown_zone);
}
