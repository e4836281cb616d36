/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_cache.c — the cache plugin: option parsing (defaults, every option,
 * errors with file:line), capacity rounding, reply classification (success,
 * NODATA incl. CNAME chains, NXDOMAIN with/without SOA, SERVFAIL, errors,
 * AXFR, delegation, TC), lifetimes (min TTL, SOA MINIMUM, clamps), the key
 * hash, entries rebuilt into replies (TTL rewrite, AA/AD, question case),
 * the shared table (replace, delete, random eviction per shard, chains of
 * several entries in one bucket, readers racing a writer), and the plugin
 * through the server (req_new_internal/req_run over `file`): miss then hit
 * written by "cache", metrics, disable per zone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "plugin/cache/cache.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "testenv.h"

/* ---- options ------------------------------------------------------------ */

static int parse(const char *text, cache_cfg *c, char *err, size_t errlen)
{
    char perr[512];
    cf_file *f = cf_parse_string("Corefile", text, perr, sizeof perr);
    assert_non_null(f);
    const cf_directive *dir = cf_block_directive(&f->blocks[0], "cache");
    assert_non_null(dir);
    cf_disp d;
    cf_disp_init(&d, dir);
    const char *bz[] = { "example.org.", "example.net." };
    int rc = cache_parse(&d, bz, 2, c);
    if (err)
        snprintf(err, errlen, "%s", d.err);
    cf_free(f);
    return rc;
}

static void test_defaults(void **state)
{
    (void)state;
    cache_cfg c;
    assert_int_equal(parse("example.org {\n cache\n}\n", &c, NULL, 0), 0);
    assert_int_equal(c.nzones, 2);
    assert_string_equal(c.zones_label, "example.org.,example.net.");
    assert_int_equal(c.pttl, 3600);
    assert_int_equal(c.nttl, 1800);
    assert_int_equal(c.minpttl, 5);
    assert_int_equal(c.minnttl, 5);
    assert_int_equal(c.pcap, 10000);
    assert_int_equal(c.ncap, 10000);
    assert_true(c.failttl_ns == 5000000000ull);
    assert_int_equal(c.prefetch, 0);
    assert_true(c.prefetch_dur_ns == 60000000000ull);
    assert_int_equal(c.prefetch_pct, 10);
    assert_true(c.stale_ns == 0);
    assert_int_equal(c.keepttl, 0);
    assert_int_equal(c.npexcept + c.nnexcept, 0);
    cache_cfg_free(&c);

    assert_int_equal(parse("example.org {\n cache 30 Sub.Example.ORG\n}\n", &c, NULL, 0), 0);
    assert_int_equal(c.pttl, 30);
    assert_int_equal(c.nttl, 30);
    assert_int_equal(c.nzones, 1);
    assert_string_equal(c.zones_label, "sub.example.org.");
    cache_cfg_free(&c);
}

static void test_options(void **state)
{
    (void)state;
    cache_cfg c;
    assert_int_equal(parse("example.org {\n cache 300 a.org b.org {\n"
                           "  success 5000 60 10\n  denial 2000 20 1\n"
                           "  prefetch 3 30s 20%\n  serve_stale 2h verify\n"
                           "  servfail 1m\n  disable success x.a.org y.a.org\n"
                           "  disable denial\n  keepttl\n }\n}\n", &c, NULL, 0), 0);
    assert_string_equal(c.zones_label, "a.org.,b.org.");
    assert_int_equal(c.pcap, 5000);
    assert_int_equal(c.pttl, 60);
    assert_int_equal(c.minpttl, 10);
    assert_int_equal(c.ncap, 2000);
    assert_int_equal(c.nttl, 20);
    assert_int_equal(c.minnttl, 1);
    assert_int_equal(c.prefetch, 3);
    assert_true(c.prefetch_dur_ns == 30000000000ull);
    assert_int_equal(c.prefetch_pct, 20);
    assert_true(c.stale_ns == 7200000000000ull);
    assert_int_equal(c.verify_stale, 1);
    assert_true(c.failttl_ns == 60000000000ull);
    assert_int_equal(c.npexcept, 2);
    assert_int_equal(c.nnexcept, 1);
    assert_int_equal(c.nexcept[0][0], 0);           /* the root */
    assert_int_equal(c.keepttl, 1);
    cache_cfg_free(&c);

    assert_int_equal(parse("example.org {\n cache {\n serve_stale\n servfail 0\n }\n}\n", &c, NULL, 0), 0);
    assert_true(c.stale_ns == 3600000000000ull);
    assert_int_equal(c.verify_stale, 0);
    assert_true(c.failttl_ns == 0);
    cache_cfg_free(&c);

    assert_int_equal(parse("example.org {\n cache {\n serve_stale 10m immediate 30s\n }\n}\n", &c, NULL, 0), 0);
    assert_int_equal(c.stale_ttl, 30);
    cache_cfg_free(&c);
}

static void test_option_errors(void **state)
{
    (void)state;
    static const struct { const char *text, *want; } cases[] = {
        { "cache 0", "can not be zero or negative" },
        { "cache -5", "can not be zero or negative" },
        { "cache {\n servfail 6m\n }", "over 5 minutes" },
        { "cache {\n servfail -1s\n }", "negative" },
        { "cache {\n prefetch 1 1m 5%\n }", "range [10, 90]" },
        { "cache {\n prefetch 1 1m 50\n }", "percentage" },
        { "cache {\n prefetch\n }", "Wrong argument count" },
        { "cache {\n prefetch -1\n }", "positive" },
        { "cache {\n disable foo\n }", "must be \"success\" or \"denial\"" },
        { "cache {\n success\n }", "Wrong argument count" },
        { "cache {\n success x\n }", "not a number" },
        /* regression: strtol's clamp made these LONG_MAX instead of an error */
        { "cache {\n success 99999999999999999999\n }", "value out of range" },
        { "cache {\n denial 100 99999999999999999999\n }", "value out of range" },
        { "cache {\n prefetch 99999999999999999999\n }", "value out of range" },
        { "cache {\n success 100 0\n }", "zero or negative" },
        { "cache {\n denial 100 10 -1\n }", "can not be negative" },
        { "cache {\n serve_stale 1h later\n }", "refresh mode" },
        { "cache {\n serve_stale 1h verify 100ms\n }", "not supported" },
        { "cache {\n serve_stale_policy prefer_positive\n }", "not supported" },
        { "cache {\n keepttl 1\n }", "Wrong argument count" },
        { "cache {\n bogus\n }", "unknown property" },
        { "cache\n cache 10", "only be used once" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[256], err[600];
        cache_cfg c;
        snprintf(text, sizeof text, "example.org {\n %s\n}\n", cases[i].text);
        assert_int_equal(parse(text, &c, err, sizeof err), -1);
        if (!strstr(err, cases[i].want) || !strstr(err, "Corefile:"))
            fail_msg("case %zu: '%s' lacks '%s'", i, err, cases[i].want);
    }
}

static void test_capacity(void **state)
{
    (void)state;
    assert_int_equal(cache_usable_cap(10000), 9984);
    assert_int_equal(cache_usable_cap(0), 1024);
    assert_int_equal(cache_usable_cap(1024), 1024);
    assert_int_equal(cache_usable_cap(5000), 4864);
    assert_int_equal(cache_usable_cap(100000), 99840);
}

/* ---- classification and lifetimes --------------------------------------- */

static const uint8_t *W(const char *s)
{
    static uint8_t buf[8][DNAME_MAX];
    static int i;
    uint8_t *b = buf[i++ & 7];
    assert_true(dname_from_str(b, s) > 0);
    return b;
}

static void reply_init(dns_msg *m, const char *qname, uint16_t qtype, int rcode)
{
    msg_init(m);
    m->flags = F_QR | F_AA;
    m->has_question = 1;
    dname_from_str(m->qname, qname);
    m->qtype = qtype;
    m->qclass = C_IN;
    m->rcode = (uint16_t)rcode;
}

static void add_a(dns_msg *m, int sec, const char *owner, uint32_t ttl)
{
    struct in_addr a = { htonl(0x0a000001) };
    assert_int_equal(msg_add_a(m, sec, W(owner), ttl, &a), 0);
}

static void add_soa(dns_msg *m, uint32_t ttl, uint32_t minimum)
{
    assert_int_equal(msg_add_soa(m, SEC_AUTHORITY, W("example.org."), ttl, W("ns.example.org."),
                                 W("admin.example.org."), 1, 7200, 3600, 1209600, minimum), 0);
}

static void test_classify(void **state)
{
    (void)state;
    dns_msg m;
    reply_init(&m, "www.example.org.", T_A, RC_NOERROR);
    add_a(&m, SEC_ANSWER, "www.example.org.", 300);
    assert_int_equal(cache_classify(&m, 0, 0), CT_NOERROR);
    assert_true(cache_cacheable(&m, CT_NOERROR));
    m.flags |= F_TC;
    assert_false(cache_cacheable(&m, CT_NOERROR));
    msg_free(&m);

    /* CNAME chain that ends in the asked type answers */
    reply_init(&m, "alias.example.org.", T_A, RC_NOERROR);
    assert_int_equal(msg_add_name(&m, SEC_ANSWER, W("ALIAS.example.org."), T_CNAME, 300,
                                  W("www.example.org.")), 0);
    add_a(&m, SEC_ANSWER, "www.example.org.", 300);
    assert_true(cache_answers(&m));
    assert_int_equal(cache_classify(&m, 0, 0), CT_NOERROR);
    msg_free(&m);

    /* a chain that does not reach the type: NODATA with SOA, else uncacheable */
    reply_init(&m, "alias.example.org.", T_AAAA, RC_NOERROR);
    assert_int_equal(msg_add_name(&m, SEC_ANSWER, W("alias.example.org."), T_CNAME, 300,
                                  W("www.example.org.")), 0);
    assert_false(cache_answers(&m));
    assert_int_equal(cache_classify(&m, 0, 0), CT_NOERROR);
    assert_false(cache_cacheable(&m, CT_NOERROR));
    add_soa(&m, 3600, 60);
    assert_int_equal(cache_classify(&m, 0, 0), CT_NODATA);
    assert_true(cache_cacheable(&m, CT_NODATA));
    msg_free(&m);

    /* a CNAME loop never answers */
    reply_init(&m, "a.example.org.", T_A, RC_NOERROR);
    msg_add_name(&m, SEC_ANSWER, W("a.example.org."), T_CNAME, 300, W("b.example.org."));
    msg_add_name(&m, SEC_ANSWER, W("b.example.org."), T_CNAME, 300, W("a.example.org."));
    assert_false(cache_answers(&m));
    msg_free(&m);

    reply_init(&m, "nx.example.org.", T_A, RC_NXDOMAIN);
    assert_int_equal(cache_classify(&m, 0, 0), CT_NXDOMAIN);
    assert_false(cache_cacheable(&m, CT_NXDOMAIN));          /* no SOA */
    add_soa(&m, 3600, 60);
    assert_true(cache_cacheable(&m, CT_NXDOMAIN));
    msg_free(&m);

    reply_init(&m, "x.example.org.", T_A, RC_NOERROR);
    add_soa(&m, 3600, 60);
    assert_int_equal(cache_classify(&m, 0, 0), CT_NODATA);
    msg_free(&m);

    reply_init(&m, "x.example.org.", T_A, RC_SERVFAIL);
    assert_int_equal(cache_classify(&m, 0, 0), CT_SERVERROR);
    assert_true(cache_cacheable(&m, CT_SERVERROR));
    m.rcode = RC_NOTIMP;
    assert_int_equal(cache_classify(&m, 0, 0), CT_SERVERROR);
    m.rcode = RC_REFUSED;
    assert_int_equal(cache_classify(&m, 0, 0), CT_OTHER);
    assert_false(cache_cacheable(&m, CT_OTHER));
    msg_free(&m);

    reply_init(&m, "x.example.org.", T_A, RC_NXDOMAIN);
    add_a(&m, SEC_ANSWER, "x.example.org.", 30);
    assert_int_equal(cache_classify(&m, 0, 0), CT_OTHER);    /* NXDOMAIN with an answer */
    msg_free(&m);

    reply_init(&m, "example.org.", T_AXFR, RC_NOERROR);
    add_a(&m, SEC_ANSWER, "example.org.", 30);
    assert_int_equal(cache_classify(&m, 0, 0), CT_META);
    assert_false(cache_cacheable(&m, CT_META));
    msg_free(&m);

    reply_init(&m, "x.sub.example.org.", T_A, RC_NOERROR);
    msg_add_name(&m, SEC_AUTHORITY, W("sub.example.org."), T_NS, 300, W("ns.sub.example.org."));
    assert_int_equal(cache_classify(&m, 0, 0), CT_DELEGATION);
    assert_true(cache_cacheable(&m, CT_DELEGATION));
    msg_free(&m);
}

static void test_ttl(void **state)
{
    (void)state;
    cache_cfg c;
    assert_int_equal(parse("example.org {\n cache\n}\n", &c, NULL, 0), 0);
    dns_msg m;
    reply_init(&m, "www.example.org.", T_A, RC_NOERROR);
    add_a(&m, SEC_ANSWER, "www.example.org.", 300);
    add_a(&m, SEC_ADDITIONAL, "ns.example.org.", 120);
    assert_int_equal(cache_min_ttl(&m, CT_NOERROR, 3600), 120);
    assert_int_equal(cache_duration(&c, &m, CT_NOERROR), 120);
    msg_free(&m);

    reply_init(&m, "www.example.org.", T_A, RC_NOERROR);
    add_a(&m, SEC_ANSWER, "www.example.org.", 1);
    assert_int_equal(cache_duration(&c, &m, CT_NOERROR), 5);         /* MINTTL */
    msg_free(&m);

    reply_init(&m, "www.example.org.", T_A, RC_NOERROR);
    add_a(&m, SEC_ANSWER, "www.example.org.", 86400);
    assert_int_equal(cache_duration(&c, &m, CT_NOERROR), 3600);      /* max TTL */
    msg_free(&m);

    /* denial: the SOA counts as min(TTL, MINIMUM) and the cap is 1800 */
    reply_init(&m, "nx.example.org.", T_A, RC_NXDOMAIN);
    add_soa(&m, 3600, 60);
    assert_int_equal(cache_duration(&c, &m, CT_NXDOMAIN), 60);
    msg_free(&m);
    reply_init(&m, "nx.example.org.", T_A, RC_NXDOMAIN);
    add_soa(&m, 40, 600);
    assert_int_equal(cache_duration(&c, &m, CT_NXDOMAIN), 40);
    msg_free(&m);
    reply_init(&m, "nx.example.org.", T_A, RC_NXDOMAIN);
    add_soa(&m, 86400, 86400);
    assert_int_equal(cache_duration(&c, &m, CT_NXDOMAIN), 1800);
    msg_free(&m);

    /* no records at all, and delegations: 5 s */
    reply_init(&m, "x.example.org.", T_A, RC_NOERROR);
    assert_int_equal(cache_duration(&c, &m, CT_NOERROR), 5);
    msg_add_name(&m, SEC_AUTHORITY, W("sub.example.org."), T_NS, 300, W("ns.sub.example.org."));
    assert_int_equal(cache_duration(&c, &m, CT_DELEGATION), 5);
    msg_free(&m);

    reply_init(&m, "x.example.org.", T_A, RC_SERVFAIL);
    assert_int_equal(cache_duration(&c, &m, CT_SERVERROR), 5);
    msg_free(&m);
    cache_cfg_free(&c);

    /* `cache 30` caps both */
    assert_int_equal(parse("example.org {\n cache 30\n}\n", &c, NULL, 0), 0);
    reply_init(&m, "nx.example.org.", T_A, RC_NXDOMAIN);
    add_soa(&m, 3600, 300);
    assert_int_equal(cache_duration(&c, &m, CT_NXDOMAIN), 30);
    msg_free(&m);
    cache_cfg_free(&c);
}

static void test_hash(void **state)
{
    (void)state;
    uint8_t a[DNAME_MAX], b[DNAME_MAX];
    dname_from_str(a, "WWW.Example.org.");
    dname_from_str(b, "www.example.org.");
    dname_lower(a);
    uint64_t h = cache_hash(b, T_A, C_IN, 0, 0, "", 0);
    assert_true(cache_hash(a, T_A, C_IN, 0, 0, "", 0) == h);
    assert_true(cache_hash(b, T_AAAA, C_IN, 0, 0, "", 0) != h);
    assert_true(cache_hash(b, T_A, C_CH, 0, 0, "", 0) != h);
    assert_true(cache_hash(b, T_A, C_IN, 1, 0, "", 0) != h);
    assert_true(cache_hash(b, T_A, C_IN, 0, 1, "", 0) != h);
    assert_true(cache_hash(b, T_A, C_IN, 0, 0, "z:a", 3) != h);
    assert_true(cache_hash(b, T_A, C_IN, 0, 0, "z:a", 3) != cache_hash(b, T_A, C_IN, 0, 0, "z:b", 3));
}

static void test_entry(void **state)
{
    (void)state;
    dns_msg m, q, out;
    reply_init(&m, "www.example.org.", T_A, RC_NOERROR);
    m.flags |= F_AD | F_RA;
    add_a(&m, SEC_ANSWER, "www.example.org.", 300);
    add_soa(&m, 3600, 60);
    add_a(&m, SEC_ADDITIONAL, "ns.example.org.", 120);
    uint8_t lname[DNAME_MAX];
    dname_from_str(lname, "www.example.org.");
    centry *e = centry_new(&m, lname, 0, "", 0, 42, 120, 1000000000ull);
    assert_non_null(e);
    assert_int_equal(e->nrr, 3);
    assert_int_equal(centry_ttl(e, 1000000000ull), 120);
    assert_int_equal(centry_ttl(e, 1000000000ull + 999999999ull), 120);
    assert_int_equal(centry_ttl(e, 1000000000ull + 10000000000ull), 110);
    assert_true(centry_ttl(e, 1000000000ull + 121000000000ull) < 0);

    msg_init(&q);
    q.id = 0x4242;
    q.flags = F_RD;
    q.has_question = 1;
    dname_from_str(q.qname, "WwW.example.ORG.");
    q.qtype = T_A;
    q.qclass = C_IN;
    msg_init(&out);
    assert_int_equal(centry_to_msg(e, &out, &q, 77), 0);
    assert_int_equal(out.id, 0x4242);
    assert_true(out.flags & F_QR);
    assert_true(out.flags & F_AA);
    assert_true(out.flags & F_RA);
    assert_true(out.flags & F_RD);
    assert_false(out.flags & F_AD);                   /* neither DO nor AD asked */
    assert_int_equal(msg_count(&out, SEC_ANSWER), 1);
    assert_int_equal(msg_count(&out, SEC_AUTHORITY), 1);
    assert_int_equal(msg_count(&out, SEC_ADDITIONAL), 1);
    for (int s = 0; s < 3; s++)
        assert_int_equal(msg_rr(&out, s, 0).ttl, 77);
    assert_memory_equal(msg_rr(&out, SEC_ANSWER, 0).owner, q.qname, dname_len(q.qname));
    assert_int_equal(msg_rr(&out, SEC_AUTHORITY, 0).type, T_SOA);
    q.flags |= F_AD;
    assert_int_equal(centry_to_msg(e, &out, &q, 1), 0);
    assert_true(out.flags & F_AD);                    /* kept when AD was asked */
    centry_free(e);
    msg_free(&m);
    msg_free(&q);
    msg_free(&out);
}

/* ---- table ---------------------------------------------------------------- */

static centry *mk(const char *name, uint64_t hash)
{
    dns_msg m;
    reply_init(&m, name, T_A, RC_NOERROR);
    add_a(&m, SEC_ANSWER, name, 30);
    uint8_t l[DNAME_MAX];
    dname_from_str(l, name);
    centry *e = centry_new(&m, l, 0, "", 0, hash, 30, 1);
    msg_free(&m);
    return e;
}

static ckey key(const char *name, uint64_t hash, uint8_t *buf)
{
    dname_from_str(buf, name);
    ckey k = { .hash = hash, .lname = buf, .qlen = (uint8_t)dname_len(buf), .qtype = T_A,
               .qclass = C_IN, .docd = 0, .variant = "", .vlen = 0 };
    return k;
}

static void test_table(void **state)
{
    (void)state;
    ctable t;
    assert_int_equal(ctable_init(&t, 0), 0);           /* 4 per shard */
    uint8_t b[DNAME_MAX];
    /* same shard (low byte 7), different identities */
    const char *names[] = { "a.", "b.", "c.", "d.", "e.", "f." };
    for (int i = 0; i < 4; i++)
        assert_int_equal(ctable_put(&t, mk(names[i], 0x100u * (unsigned)i + 7)), 0);
    assert_int_equal(ctable_len(&t), 4);
    urcu_memb_read_lock();
    ckey k = key("c.", 0x207, b);
    assert_non_null(ctable_get(&t, &k));
    ckey k2 = key("c.", 0x307, b);                     /* hash differs: another key */
    assert_null(ctable_get(&t, &k2));
    urcu_memb_read_unlock();
    /* replacing an existing key evicts nothing */
    assert_int_equal(ctable_put(&t, mk("c.", 0x207)), 0);
    assert_int_equal(ctable_len(&t), 4);
    /* a fifth key in the full shard evicts one at random */
    assert_int_equal(ctable_put(&t, mk("e.", 0x407)), 1);
    assert_int_equal(ctable_len(&t), 4);
    /* another shard is unaffected */
    assert_int_equal(ctable_put(&t, mk("f.", 0x408)), 0);
    assert_int_equal(ctable_len(&t), 5);
    k = key("f.", 0x408, b);
    assert_int_equal(ctable_del(&t, &k), 1);
    assert_int_equal(ctable_del(&t, &k), 0);
    assert_int_equal(ctable_len(&t), 4);
    urcu_memb_barrier();
    ctable_destroy(&t);
}

/* Whether the entry with this identity is in t (read lock taken here). */
static const centry *has(ctable *t, const char *name, uint64_t hash)
{
    uint8_t b[DNAME_MAX];
    ckey k = key(name, hash, b);
    urcu_memb_read_lock();
    const centry *e = ctable_get(t, &k);
    urcu_memb_read_unlock();
    return e;                                         /* compared only */
}

static void test_table_chains(void **state)
{
    (void)state;
    ctable t;
    assert_int_equal(ctable_init(&t, 0), 0);           /* 4 per shard, 4 buckets */
    uint8_t b[DNAME_MAX];
    /* shard 7, bucket 0: the chain is c, b, a */
    assert_int_equal(ctable_put(&t, mk("a.", 0x007)), 0);
    assert_int_equal(ctable_put(&t, mk("b.", 0x407)), 0);
    assert_int_equal(ctable_put(&t, mk("c.", 0x807)), 0);
    assert_non_null(has(&t, "a.", 0x007));
    assert_non_null(has(&t, "b.", 0x407));
    assert_non_null(has(&t, "c.", 0x807));

    /* a reader standing on the head while it is removed still reaches
     * the rest of the chain, and the entry stays readable */
    urcu_memb_read_lock();
    ckey k = key("c.", 0x807, b);
    centry *c = ctable_get(&t, &k);
    assert_non_null(c);
    assert_int_equal(ctable_del(&t, &k), 1);
    assert_null(ctable_get(&t, &k));
    centry *next = atomic_load(&c->next);
    assert_non_null(next);
    assert_true(next->hash == 0x407);
    assert_true(c->hash == 0x807);
    urcu_memb_read_unlock();

    /* the middle, then the tail replaced, then the head */
    assert_int_equal(ctable_put(&t, mk("c.", 0x807)), 0);  /* c, b, a again */
    k = key("b.", 0x407, b);
    assert_int_equal(ctable_del(&t, &k), 1);
    assert_null(has(&t, "b.", 0x407));
    assert_non_null(has(&t, "a.", 0x007));
    assert_non_null(has(&t, "c.", 0x807));
    const centry *olda = has(&t, "a.", 0x007);
    assert_int_equal(ctable_put(&t, mk("a.", 0x007)), 0);
    assert_true(has(&t, "a.", 0x007) != olda);
    assert_int_equal(ctable_len(&t), 2);
    k = key("c.", 0x807, b);
    assert_int_equal(ctable_del(&t, &k), 1);
    assert_non_null(has(&t, "a.", 0x007));
    assert_int_equal(ctable_len(&t), 1);

    /* fill the shard over several buckets; a fifth key evicts one */
    assert_int_equal(ctable_put(&t, mk("d.", 0x107)), 0);
    assert_int_equal(ctable_put(&t, mk("e.", 0x507)), 0);
    assert_int_equal(ctable_put(&t, mk("f.", 0x307)), 0);
    assert_int_equal(ctable_put(&t, mk("g.", 0xc07)), 1);
    assert_int_equal(ctable_len(&t), 4);
    assert_non_null(has(&t, "g.", 0xc07));
    int left = !!has(&t, "a.", 0x007) + !!has(&t, "d.", 0x107) + !!has(&t, "e.", 0x507) +
               !!has(&t, "f.", 0x307);
    assert_int_equal(left, 3);
    urcu_memb_barrier();
    ctable_destroy(&t);
}

/* Readers walking one shard while the writer replaces, deletes and evicts
 * its entries (under ASan or valgrind, an entry freed too early shows). */
#define RACE_KEYS 16

typedef struct race {
    ctable t;
    atomic_int stop;                 /* 1: done, 2: a reader saw a wrong entry */
} race;

static const char *race_name(unsigned i)
{
    static const char *const n[RACE_KEYS] = { "k0.", "k1.", "k2.", "k3.", "k4.", "k5.",
                                              "k6.", "k7.", "k8.", "k9.", "k10.", "k11.",
                                              "k12.", "k13.", "k14.", "k15." };
    return n[i % RACE_KEYS];
}

static void *race_reader(void *arg)
{
    race *r = arg;
    uint8_t b[DNAME_MAX];
    urcu_memb_register_thread();
    for (unsigned i = 0; !atomic_load(&r->stop); i++) {
        ckey k = key(race_name(i), ((uint64_t)(i % RACE_KEYS) << 8) | 7, b);
        urcu_memb_read_lock();
        const centry *e = ctable_get(&r->t, &k);
        if (e && (e->hash != k.hash || memcmp(e->data, b, k.qlen) != 0 || e->nrr != 1))
            atomic_store(&r->stop, 2);
        urcu_memb_read_unlock();
    }
    urcu_memb_unregister_thread();
    return NULL;
}

static void test_table_race(void **state)
{
    (void)state;
    static race r;
    memset(&r, 0, sizeof r);
    assert_int_equal(ctable_init(&r.t, 0), 0);         /* 4 per shard: evictions */
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, race_reader, &r), 0);
    uint8_t b[DNAME_MAX];
    for (unsigned i = 0; i < 20000 && atomic_load(&r.stop) == 0; i++) {
        unsigned j = (i * 7) % RACE_KEYS;
        uint64_t h = ((uint64_t)j << 8) | 7;
        if (i % 3 == 2) {
            ckey k = key(race_name(j), h, b);
            ctable_del(&r.t, &k);
        } else {
            ctable_put(&r.t, mk(race_name(j), h));
        }
    }
    int bad = atomic_exchange(&r.stop, 1) == 2;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_false(bad);
    assert_true(ctable_len(&r.t) <= 4);
    urcu_memb_barrier();
    ctable_destroy(&r.t);
}

/* ---- through the server --------------------------------------------------- */

static char *write_tmp(const char *text)
{
    char *p = strdup("/tmp/test_cache.XXXXXX");
    int fd = mkstemp(p);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return p;
}

static const char *ZONE =
    "$ORIGIN example.org.\n"
    "@ 3600 IN SOA ns.example.org. admin.example.org. 1 7200 3600 1209600 20\n"
    "@ 3600 IN NS ns\n"
    "ns 3600 IN A 192.0.2.53\n"
    "www 300 IN A 192.0.2.10\n"
    "x.nocache 300 IN A 192.0.2.11\n";

typedef struct reply {
    int rcode;
    const char *writer;
    uint32_t ttl;
    unsigned n[3];
} reply;

static reply query(instance *ins, const char *name, uint16_t type)
{
    uint8_t wire[512];
    memset(wire, 0, 12);
    wire[0] = 0x12, wire[1] = 0x34, wire[2] = 0x01, wire[5] = 1;
    int nl = dname_from_str(wire + 12, name);
    size_t len = 12 + (size_t)nl;
    wire[len++] = (uint8_t)(type >> 8), wire[len++] = (uint8_t)type;
    wire[len++] = 0, wire[len++] = 1;
    dns_req *r = req_new_internal(ins, NULL, wire, len, NULL);
    assert_non_null(r);
    req_run(r);
    reply out = { r->resp.rcode, r->writer && strcmp(r->writer, "cache") == 0 ? "cache" : "other",
                  0, { 0, 0, 0 } };
    for (int s = 0; s < 3; s++)
        out.n[s] = msg_count(&r->resp, s);
    if (out.n[0])
        out.ttl = msg_rr(&r->resp, SEC_ANSWER, 0).ttl;
    else if (out.n[1])
        out.ttl = msg_rr(&r->resp, SEC_AUTHORITY, 0).ttl;
    assert_memory_equal(r->resp.qname, wire + 12, (size_t)nl);
    req_free(r);
    return out;
}

static double metric(const char *name, const char *type)
{
    if (type) {
        const char *v[] = { "dns://:1053", type, "example.org.", "" };
        return metrics_value(test_registry(), name, v);
    }
    const char *v[] = { "dns://:1053", "example.org.", "" };
    return metrics_value(test_registry(), name, v);
}

static void test_plugin(void **state)
{
    (void)state;
    char *zp = write_tmp(ZONE);
    char text[512], err[512] = "";
    snprintf(text, sizeof text,
             "example.org:1053 {\n cache 60 {\n  disable success nocache.example.org\n }\n"
             " file %s\n}\n", zp);
    char *cp = write_tmp(text);
    instance *ins = instance_load(test_env(), cp, err, sizeof err);
    if (!ins)
        fail_msg("load: %s", err);
    double req0 = metric("coredns_cache_requests_total", NULL);
    double hit0 = metric("coredns_cache_hits_total", "success");
    double dhit0 = metric("coredns_cache_hits_total", "denial");

    reply r = query(ins, "www.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NOERROR);
    assert_string_equal(r.writer, "other");            /* miss: file wrote */
    assert_int_equal(r.ttl, 60);                       /* capped by `cache 60` */
    r = query(ins, "WWW.example.org.", T_A);
    assert_string_equal(r.writer, "cache");            /* hit, any case */
    assert_true(r.ttl <= 60 && r.ttl >= 59);
    assert_int_equal(r.n[1], 1);                       /* authority NS kept */

    r = query(ins, "nx.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NXDOMAIN);
    assert_string_equal(r.writer, "other");
    assert_int_equal(r.ttl, 20);                       /* SOA MINIMUM */
    r = query(ins, "nx.example.org.", T_A);
    assert_int_equal(r.rcode, RC_NXDOMAIN);
    assert_string_equal(r.writer, "cache");

    /* success disabled below nocache.example.org */
    r = query(ins, "x.nocache.example.org.", T_A);
    assert_string_equal(r.writer, "other");
    r = query(ins, "x.nocache.example.org.", T_A);
    assert_string_equal(r.writer, "other");
    assert_int_equal(r.ttl, 60);                       /* TTL still rewritten */

    assert_true(metric("coredns_cache_requests_total", NULL) - req0 == 6);
    assert_true(metric("coredns_cache_hits_total", "success") - hit0 == 1);
    assert_true(metric("coredns_cache_hits_total", "denial") - dhit0 == 1);
    assert_true(metric("coredns_cache_entries", "success") == 1);
    assert_true(metric("coredns_cache_entries", "denial") == 1);
    instance_free(ins);
    unlink(zp);
    unlink(cp);
    free(zp);
    free(cp);
}

int main(void)
{
    urcu_memb_register_thread();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_option_errors),
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_ttl),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_entry),
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_table_chains),
        cmocka_unit_test(test_table_race),
        cmocka_unit_test(test_plugin),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    urcu_memb_barrier();
    urcu_memb_unregister_thread();
    return rc;
}
