/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_zone.c — fuzz harness for the file plugin's zones
 * (src/plugin/file/): the RFC 1035 master-file reader ($ORIGIN, $TTL,
 * $INCLUDE refused or resolved, parentheses, escapes, every record type's
 * presentation form), then lookups in the loaded zone (CoreDNS's
 * Zone.Lookup: delegations, wildcards, CNAME chains, empty non-terminals,
 * DNAME-free NXDOMAIN/NODATA), the reply sections and their encoding, and
 * the zone-transfer walk.
 *
 * Input: 8 octets that choose the questions, then the zone file for origin
 * example.org., read from memory (fmemopen) by fzone_load_fp, the reader
 * that fzone_load runs once it has opened and checked the path: no file is
 * written or opened per input. A zone that loads is asked four questions:
 * octets 2i and 2i+1 pick the name (among a few fixed names and the first
 * 16 owner names of the zone) and the type (A, AAAA, CNAME, MX, NS, SOA,
 * TXT, SRV or ANY) of question i; each result becomes a reply that must
 * encode and parse back and truncate to 512 octets. (Asking every name
 * every type made an input cost up to 216 lookups; four chosen by the
 * input reach the same code at a fiftieth of the cost, and libFuzzer
 * finds the pairs that matter.) The transfer walk must start and end with
 * the SOA and emit every record.
 *
 * Cost: nearly all of an execution is the reader's library (ldns), which
 * takes about 200 KB of scratch memory (four malloc/free pairs of 10-64 KB)
 * per record; under ASan each costs shadow poisoning and quarantine churn.
 * The lookups, encodings and the walk are under a tenth of the time.
 *
 * Skipped: inputs that could hold an IPSECKEY or a CERT record (their
 * names, or TYPE45 and TYPE37 in any case; see names_leaky_type()). ldns
 * 1.8.3 leaks on malformed rdata of these two types, and nowhere else in
 * its record parser: ldns_rdf_new_frm_str() frees only the rdf shell when a
 * field's parser fails after allocating, and the CERT algorithm's parser
 * (ldns_str2rdf_cert_alg) does that for algorithm 0; the IPSECKEY parser
 * (ldns_str2rdf_ipseckey) drops the fields it has parsed when a later one
 * is bad. Each was found by a long run (8.7M and 6.9M executions). The
 * allocations are ldns's, and ldns has no frame pointers, so
 * LeakSanitizer's fast unwinder stops at the allocating ldns function and
 * no suppression can tell that leak from one of ours; the slow unwinder
 * that could costs 2.4 times the CPU. The reader handles every type
 * through the same ldns call, so nothing of ours goes unexercised.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include "plugin/file/file.h"

enum { PICKS = 4, SELECT = 2 * PICKS };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_zone: %s\n", why);
    abort();
}

typedef struct walk { size_t n; uint16_t first, last; } walk;

static int emit(void *sink, const dns_rr *rr)
{
    walk *w = sink;
    if (w->n++ == 0)
        w->first = rr->type;
    w->last = rr->type;
    return 0;
}

static void ask(fzone *z, const uint8_t *name, uint16_t type)
{
    static uint8_t out[65536];
    fres res;
    dns_msg q, m, back;
    int hdr_ok;
    uint8_t qw[512];
    dns_query dq = { .id = 7, .qname = name, .qtype = type, .qclass = 1, .edns_size = 1232 };
    int qn = msg_query(&dq, qw, sizeof qw);
    if (qn < 0)
        return;
    msg_init(&q);
    msg_init(&m);
    msg_init(&back);
    if (msg_parse(&q, qw, (size_t)qn, &hdr_ok) != 0)
        fail("own query does not parse");
    fzone_lookup(z, NULL, name, type, &res);
    msg_reply_to(&m, &q);
    if (fres_to_msg(&res, &m) == 0) {
        int n = msg_encode(&m, out, sizeof out, 65535, 1);
        if (n < 0 || msg_parse(&back, out, (size_t)n, &hdr_ok) != 0)
            fail("a lookup's reply does not encode and parse back");
        n = msg_encode(&m, out, sizeof out, 512, 1);
        if (n < 0 || n > 512)
            fail("a lookup's reply does not truncate to 512");
    }
    fres_done(&res);
    msg_free(&q);
    msg_free(&m);
    msg_free(&back);
}

/* Whether the text could name one of the types on whose malformed rdata
 * ldns leaks: the name, or "type" and a number that reads as the type's
 * (TYPE45, type045), in any case. */
static int names_leaky_type(const uint8_t *d, size_t n)
{
    static const struct { const char *name; size_t len; unsigned long num; } leaky[] = {
        { "ipseckey", 8, 45 },
        { "cert", 4, 37 },
    };
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof leaky / sizeof leaky[0]; k++)
            if (n - i >= leaky[k].len && strncasecmp((const char *)d + i, leaky[k].name, leaky[k].len) == 0)
                return 1;
        if (n - i >= 4 && strncasecmp((const char *)d + i, "type", 4) == 0) {
            size_t j = i + 4;
            unsigned long v = 0;
            while (j < n && d[j] >= '0' && d[j] <= '9' && v < 1000)
                v = v * 10 + (unsigned long)(d[j++] - '0');
            for (size_t k = 0; j > i + 4 && k < sizeof leaky / sizeof leaky[0]; k++)
                if (v == leaky[k].num)
                    return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const fixed[] = {
        "example.org.", "www.example.org.", "a.b.c.example.org.", "x.wild.example.org.",
        "sub.example.org.", "deep.sub.example.org.", "nonexistent.example.org.", "EXAMPLE.org.",
    };
    static const uint16_t types[] = { T_A, T_AAAA, T_CNAME, T_MX, T_NS, T_SOA, T_TXT, T_SRV, 255 };
    uint8_t pick[SELECT] = { 0 };
    size_t np = size < SELECT ? size : SELECT;
    memcpy(pick, data, np);
    data += np;
    size -= np;
    if (names_leaky_type(data, size))
        return 0;
    char err[1024] = "";
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        abort();
    fzone *z = NULL;
    int rc = fzone_load_fp(f, "db.example.org", "example.org.", &z, err, sizeof err);
    fclose(f);
    if (rc == 0) {
        uint8_t names[24][DNAME_MAX];
        size_t nn = 0;
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (dname_from_str(names[nn], fixed[i]) > 0)
                nn++;
        for (const fnode *n = z->nodes; n && nn < 24; n = n->hh.next)
            memcpy(names[nn++], n->name, dname_len(n->name));
        for (size_t i = 0; i < PICKS; i++)
            ask(z, names[pick[2 * i] % nn], types[pick[2 * i + 1] % (sizeof types / sizeof types[0])]);
        walk w = { 0 };
        if (fzone_walk(z, 0, emit, &w) != XFR_OK)
            fail("the transfer walk failed");
        if (w.first != T_SOA || w.last != T_SOA || w.n < 2)
            fail("the transfer walk does not start and end with the SOA");
        fzone_unref(z);
    } else if (!err[0]) {
        fail("failed without a message");
    }
    return 0;
}
