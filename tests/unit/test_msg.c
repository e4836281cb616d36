/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_msg.c — DNS messages against ldns as the reference: what msg_encode
 * writes ldns decodes to the same records (with and without compression);
 * what ldns_pkt2wire writes msg_parse reads back; every FORMERR path of the
 * strict parser; CoreDNS-style truncation; EDNS and client-subnet round
 * trips; record storage (stable views, reuse without allocation, permute,
 * copy); names of types, classes and rcodes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <ldns/ldns.h>
#include "wire/msg.h"

static uint8_t wire[65536];

/* A wire name from presentation form, from a ring of buffers. */
static const uint8_t *N(const char *s)
{
    static uint8_t ring[32][DNAME_MAX];
    static unsigned k;
    uint8_t *b = ring[k++ % 32];
    assert_true(dname_from_str(b, s) > 0);
    return b;
}

static struct in_addr A4(const char *s)
{
    struct in_addr a;
    assert_int_equal(inet_pton(AF_INET, s, &a), 1);
    return a;
}

static struct in6_addr A6(const char *s)
{
    struct in6_addr a;
    assert_int_equal(inet_pton(AF_INET6, s, &a), 1);
    return a;
}

/* Record i of an ldns list equals the record written in presentation form. */
static void assert_rr(ldns_rr_list *l, size_t i, const char *want)
{
    assert_true(i < ldns_rr_list_rr_count(l));
    ldns_rr *w = NULL;
    assert_int_equal(ldns_rr_new_frm_str(&w, want, 0, NULL, NULL), LDNS_STATUS_OK);
    ldns_rr *got = ldns_rr_list_rr(l, i);
    if (ldns_rr_compare(got, w) != 0 || ldns_rr_ttl(got) != ldns_rr_ttl(w)) {
        char *s = ldns_rr2str(got);
        print_error("got  %swant %s\n", s, want);
        free(s);
        fail();
    }
    ldns_rr_free(w);
}

static ldns_rr_list *sec_list(const ldns_pkt *p, int s)
{
    return s == 0 ? ldns_pkt_answer(p) : s == 1 ? ldns_pkt_authority(p) : ldns_pkt_additional(p);
}

static ldns_pkt *decode(int n)
{
    ldns_pkt *p = NULL;
    assert_true(n > 0);
    assert_int_equal(ldns_wire2pkt(&p, wire, (size_t)n), LDNS_STATUS_OK);
    return p;
}

static void build_reply(dns_msg *m)
{
    msg_init(m);
    m->id = 0xbeef;
    m->flags = F_QR | F_AA | F_RD;
    m->has_question = 1;
    memcpy(m->qname, N("Svc.Example.com."), dname_len(N("Svc.Example.com.")));
    m->qtype = T_A;
    m->qclass = C_IN;
    struct in_addr a = A4("10.0.0.1");
    struct in6_addr a6 = A6("fd00::1");
    const char *txt[] = { "hello", "world" };
    assert_int_equal(msg_add_name(m, SEC_ANSWER, N("Svc.Example.com."), T_CNAME, 30, N("target.example.com.")), 0);
    assert_int_equal(msg_add_a(m, SEC_ANSWER, N("target.example.com."), 30, &a), 0);
    assert_int_equal(msg_add_aaaa(m, SEC_ANSWER, N("target.example.com."), 30, &a6), 0);
    assert_int_equal(msg_add_srv(m, SEC_ANSWER, N("_http._tcp.example.com."), 30, 0, 10, 80, N("target.example.com.")), 0);
    assert_int_equal(msg_add_mx(m, SEC_ANSWER, N("example.com."), 30, 10, N("mail.example.com.")), 0);
    assert_int_equal(msg_add_txt(m, SEC_ANSWER, N("example.com."), 30, txt, 2), 0);
    assert_int_equal(msg_add_name(m, SEC_ANSWER, N("1.0.0.10.in-addr.arpa."), T_PTR, 30, N("target.example.com.")), 0);
    assert_int_equal(msg_add_name(m, SEC_AUTHORITY, N("example.com."), T_NS, 30, N("ns.example.com.")), 0);
    assert_int_equal(msg_add_soa(m, SEC_AUTHORITY, N("example.com."), 30, N("ns.example.com."),
                                 N("hostmaster.example.com."), 1, 7200, 1800, 86400, 5), 0);
    /* additional added first: it must still be written after the others */
    msg_add_a(m, SEC_ADDITIONAL, N("ns.example.com."), 30, &a);
}

static void check_reply(ldns_pkt *p)
{
    assert_int_equal(ldns_pkt_id(p), 0xbeef);
    assert_true(ldns_pkt_qr(p) && ldns_pkt_aa(p) && ldns_pkt_rd(p));
    assert_false(ldns_pkt_tc(p) || ldns_pkt_ra(p));
    assert_int_equal(ldns_pkt_get_rcode(p), 0);
    assert_int_equal(ldns_pkt_qdcount(p), 1);
    assert_int_equal(ldns_pkt_ancount(p), 7);
    assert_int_equal(ldns_pkt_nscount(p), 2);
    assert_int_equal(ldns_pkt_arcount(p), 1);
    ldns_rr_list *an = ldns_pkt_answer(p), *ns = ldns_pkt_authority(p), *ar = ldns_pkt_additional(p);
    assert_rr(an, 0, "Svc.Example.com. 30 IN CNAME target.example.com.");
    assert_rr(an, 1, "target.example.com. 30 IN A 10.0.0.1");
    assert_rr(an, 2, "target.example.com. 30 IN AAAA fd00::1");
    assert_rr(an, 3, "_http._tcp.example.com. 30 IN SRV 0 10 80 target.example.com.");
    assert_rr(an, 4, "example.com. 30 IN MX 10 mail.example.com.");
    assert_rr(an, 5, "example.com. 30 IN TXT \"hello\" \"world\"");
    assert_rr(an, 6, "1.0.0.10.in-addr.arpa. 30 IN PTR target.example.com.");
    assert_rr(ns, 0, "example.com. 30 IN NS ns.example.com.");
    assert_rr(ns, 1, "example.com. 30 IN SOA ns.example.com. hostmaster.example.com. 1 7200 1800 86400 5");
    assert_rr(ar, 0, "ns.example.com. 30 IN A 10.0.0.1");
    ldns_rr *q = ldns_rr_list_rr(ldns_pkt_question(p), 0);
    char *qs = ldns_rdf2str(ldns_rr_owner(q));
    assert_string_equal(qs, "Svc.Example.com.");
    free(qs);
}

static void encode_matches_ldns(void **state)
{
    dns_msg m;
    build_reply(&m);
    int plain = msg_encode(&m, wire, sizeof wire, 65535, 0);
    ldns_pkt *p = decode(plain);
    check_reply(p);
    ldns_pkt_free(p);
    int comp = msg_encode(&m, wire, sizeof wire, 65535, 1);
    p = decode(comp);
    check_reply(p);
    ldns_pkt_free(p);
    assert_true(comp < plain - 60);
    /* msg_encode of the same message is the same octets */
    uint8_t again[4096];
    assert_int_equal(msg_encode(&m, again, sizeof again, 65535, 1), comp);
    assert_memory_equal(again, wire, (size_t)comp);
    msg_free(&m);
}

static size_t count_seq(const uint8_t *w, size_t n, const uint8_t *seq, size_t sl)
{
    size_t c = 0;
    for (size_t i = 0; i + sl <= n; i++)
        c += memcmp(w + i, seq, sl) == 0;
    return c;
}

/* Owners and RFC 1035 rdata names are compressed; SRV targets never are. */
static void compression_rules(void **state)
{
    dns_msg m;
    msg_init(&m);
    m.has_question = 1;
    memcpy(m.qname, N("_x._tcp.example.com."), dname_len(N("_x._tcp.example.com.")));
    m.qtype = T_SRV;
    m.qclass = C_IN;
    msg_add_srv(&m, SEC_ANSWER, N("_x._tcp.example.com."), 5, 1, 2, 3, N("a.example.com."));
    msg_add_srv(&m, SEC_ANSWER, N("_x._tcp.example.com."), 5, 1, 2, 3, N("a.example.com."));
    msg_add_name(&m, SEC_ANSWER, N("_x._tcp.example.com."), T_DNAME, 5, N("b.example.com."));
    msg_add_name(&m, SEC_ANSWER, N("c.example.com."), T_CNAME, 5, N("a.example.com."));
    int n = msg_encode(&m, wire, sizeof wire, 65535, 1);
    static const uint8_t full_a[] = "\x01" "a" "\x07" "example" "\x03" "com";
    static const uint8_t full_b[] = "\x01" "b" "\x07" "example" "\x03" "com";
    /* both SRV targets are written in full (but serve as pointer targets);
     * the DNAME target is written in full; the CNAME target is a pointer */
    assert_int_equal(count_seq(wire, (size_t)n, full_a, sizeof full_a), 2);
    assert_int_equal(count_seq(wire, (size_t)n, full_b, sizeof full_b), 1);
    ldns_pkt *p = decode(n);
    ldns_rr_list *an = ldns_pkt_answer(p);
    assert_rr(an, 0, "_x._tcp.example.com. 5 IN SRV 1 2 3 a.example.com.");
    assert_rr(an, 1, "_x._tcp.example.com. 5 IN SRV 1 2 3 a.example.com.");
    assert_rr(an, 2, "_x._tcp.example.com. 5 IN DNAME b.example.com.");
    assert_rr(an, 3, "c.example.com. 5 IN CNAME a.example.com.");
    ldns_pkt_free(p);
    /* header and question 37, SRV 2+10+6+15 twice, DNAME 2+10+15, CNAME
     * "c" + pointer (4) + 10 + pointer (2) */
    assert_int_equal(n, 37 + 33 * 2 + 27 + 16);
    msg_free(&m);
}

/* A name whose first labels repeat ("0.0.") must not be matched against
 * itself while it is being written, whatever the buffer held before. */
static void encode_into_dirty_buffer(void **state)
{
    dns_msg m;
    msg_init(&m);
    struct in_addr a4 = A4("10.0.0.1");
    msg_add_a(&m, SEC_ANSWER, N("0.0.example."), 5, &a4);
    static uint8_t a[512], b[512];
    int n = msg_encode(&m, a, sizeof a, 512, 1);
    assert_int_equal(n, 12 + 13 + 10 + 4);
    /* stale octets right after the first label that would complete a
     * bogus match of "0.example." against the name being written */
    memcpy(b, a, sizeof b);
    memcpy(b + 14, "\x07" "example" "\x00", 9);
    assert_int_equal(msg_encode(&m, b, sizeof b, 512, 1), n);
    assert_memory_equal(a, b, (size_t)n);
    memcpy(wire, b, (size_t)n);
    ldns_pkt *p = decode(n);
    assert_rr(ldns_pkt_answer(p), 0, "0.0.example. 5 IN A 10.0.0.1");
    ldns_pkt_free(p);
    msg_free(&m);
}

/* Compression never points at offsets >= 0x4000. */
static void compression_offset_limit(void **state)
{
    dns_msg m;
    msg_init(&m);
    char big[201], name[64];
    memset(big, 'x', 200);
    big[200] = '\0';
    const char *strs[] = { big };
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "n%d.example.", i);
        msg_add_txt(&m, SEC_ANSWER, N(name), 1, strs, 1);
    }
    msg_add_txt(&m, SEC_ANSWER, N("late.example."), 1, strs, 1);
    msg_add_txt(&m, SEC_ANSWER, N("late.example."), 1, strs, 1);
    int n = msg_encode(&m, wire, sizeof wire, 65535, 1);
    assert_true(n > 0x4000 + 400);
    static const uint8_t late[] = "\x04" "late";
    assert_int_equal(count_seq(wire, (size_t)n, late, 5), 2);
    ldns_pkt *p = decode(n);
    assert_int_equal(ldns_pkt_ancount(p), 102);
    char want[400];
    snprintf(want, sizeof want, "late.example. 1 IN TXT \"%s\"", big);
    assert_rr(ldns_pkt_answer(p), 101, want);
    assert_rr(ldns_pkt_answer(p), 100, want);
    ldns_pkt_free(p);
    msg_free(&m);
}

static void case_preserved(void **state)
{
    dns_msg m;
    msg_init(&m);
    m.has_question = 1;
    memcpy(m.qname, N("FOO.example."), 13);
    m.qtype = T_A;
    m.qclass = C_IN;
    struct in_addr a = A4("1.2.3.4");
    msg_add_a(&m, SEC_ANSWER, N("foo.example."), 5, &a);
    msg_add_a(&m, SEC_ANSWER, N("Foo.Example."), 5, &a);
    msg_add_a(&m, SEC_ANSWER, N("FOO.example."), 5, &a);
    int n = msg_encode(&m, wire, sizeof wire, 65535, 1);
    ldns_pkt *p = decode(n);
    const char *want[] = { "foo.example.", "Foo.Example.", "FOO.example." };
    for (int i = 0; i < 3; i++) {
        char *s = ldns_rdf2str(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_answer(p), (size_t)i)));
        assert_string_equal(s, want[i]);
        free(s);
    }
    ldns_pkt_free(p);
    /* and the parser keeps case too */
    int hdr_ok;
    dns_msg back;
    msg_init(&back);
    assert_int_equal(msg_parse(&back, wire, (size_t)n, &hdr_ok), 0);
    char s[DNAME_STR_MAX];
    dns_rr rr = msg_rr(&back, SEC_ANSWER, 1);
    dname_to_str(s, sizeof s, rr.owner);
    assert_string_equal(s, "Foo.Example.");
    dname_to_str(s, sizeof s, back.qname);
    assert_string_equal(s, "FOO.example.");
    msg_free(&back);
    msg_free(&m);
}

/* Build a packet with ldns (which compresses), parse it, compare records. */
static void parse_ldns_packet(void **state)
{
    static const char *an[] = {
        "www.Example.com. 60 IN CNAME web.example.com.",
        "web.example.com. 60 IN A 192.0.2.1",
        "web.example.com. 60 IN AAAA 2001:db8::1",
        "example.com. 60 IN MX 5 mx.example.com.",
        "_sip._udp.example.com. 60 IN SRV 1 2 5060 sip.example.com.",
        "example.com. 60 IN TXT \"v=spf1 -all\" \"x\"",
        "2.0.192.in-addr.arpa. 60 IN PTR web.example.com.",
        "d.example.com. 60 IN DNAME other.example.com.",
        "example.com. 60 IN NAPTR 100 10 \"u\" \"E2U+sip\" \"!^.*$!sip:a@example.com!\" _sip._udp.example.com.",
        "example.com. 60 IN RP mbox.example.com. txt.example.com.",
        "example.com. 60 IN AFSDB 1 afs.example.com.",
        "example.com. 60 IN HINFO \"cpu\" \"os\"",
        "example.com. 60 IN CAA 0 issue \"ca.example.net\"",
    };
    static const char *ns[] = {
        "example.com. 60 IN NS ns1.example.com.",
        "example.com. 60 IN SOA ns1.example.com. admin.example.com. 2024 3600 600 86400 60",
    };
    static const char *ar[] = { "ns1.example.com. 60 IN A 192.0.2.53" };
    ldns_pkt *p = ldns_pkt_query_new(ldns_dname_new_frm_str("www.Example.com."), LDNS_RR_TYPE_A,
                                     LDNS_RR_CLASS_IN, LDNS_RD);
    ldns_pkt_set_id(p, 4242);
    ldns_pkt_set_qr(p, true);
    ldns_pkt_set_rcode(p, LDNS_RCODE_NXDOMAIN);
    struct { const char **rrs; size_t n; ldns_pkt_section sec; } secs[] = {
        { an, sizeof an / sizeof *an, LDNS_SECTION_ANSWER },
        { ns, sizeof ns / sizeof *ns, LDNS_SECTION_AUTHORITY },
        { ar, sizeof ar / sizeof *ar, LDNS_SECTION_ADDITIONAL },
    };
    for (int s = 0; s < 3; s++)
        for (size_t i = 0; i < secs[s].n; i++) {
            ldns_rr *rr = NULL;
            assert_int_equal(ldns_rr_new_frm_str(&rr, secs[s].rrs[i], 0, NULL, NULL), LDNS_STATUS_OK);
            ldns_pkt_push_rr(p, secs[s].sec, rr);
        }
    ldns_pkt_set_edns_udp_size(p, 1232);
    ldns_pkt_set_edns_do(p, true);
    uint8_t *w = NULL;
    size_t wl = 0;
    assert_int_equal(ldns_pkt2wire(&w, p, &wl), LDNS_STATUS_OK);
    /* the reference is what ldns itself reads back from those octets (its
     * compression ignores case, so names may take the case of a suffix) */
    ldns_pkt *ref = NULL;
    assert_int_equal(ldns_wire2pkt(&ref, w, wl), LDNS_STATUS_OK);

    dns_msg m;
    int hdr_ok = 0;
    msg_init(&m);
    assert_int_equal(msg_parse(&m, w, wl, &hdr_ok), 0);
    assert_true(hdr_ok);
    assert_int_equal(m.id, 4242);
    assert_true(m.flags & F_QR && m.flags & F_RD);
    assert_int_equal(m.rcode, RC_NXDOMAIN);
    assert_true(m.has_question);
    assert_true(dname_equal(m.qname, N("www.example.com.")));
    assert_int_equal(m.qtype, T_A);
    assert_true(m.edns.present && m.edns.do_bit);
    assert_int_equal(m.edns.udp_size, 1232);
    assert_int_equal(m.edns.version, 0);
    assert_false(m.edns.has_ecs);
    for (int s = 0; s < 3; s++) {
        assert_int_equal(msg_count(&m, s), secs[s].n);
        for (size_t i = 0; i < secs[s].n; i++) {
            dns_rr rr = msg_rr(&m, s, (unsigned)i);
            char got[1024];
            assert_true(rr_to_str(&rr, got, sizeof got) > 0);
            char *want = ldns_rr2str(ldns_rr_list_rr(sec_list(ref, s), i));
            want[strcspn(want, "\n")] = '\0';
            assert_string_equal(got, want);
            free(want);
        }
    }
    /* stored rdata is uncompressed: the CNAME target is the full name */
    dns_rr c = msg_rr(&m, SEC_ANSWER, 0);
    assert_int_equal(c.rdlen, dname_len(N("web.example.com.")));
    assert_true(dname_equal(c.rdata, N("web.example.com.")));
    /* re-encoding what we parsed decodes to the same packet in ldns */
    int n = msg_encode(&m, wire, sizeof wire, 65535, 1);
    ldns_pkt *p2 = decode(n);
    for (int s = 0; s < 3; s++)
        assert_int_equal(ldns_rr_list_compare(sec_list(p, s), sec_list(p2, s)), 0);
    assert_int_equal(ldns_pkt_edns_udp_size(p2), 1232);
    assert_true(ldns_pkt_edns_do(p2));
    ldns_pkt_free(p2);
    free(w);
    ldns_pkt_free(ref);
    ldns_pkt_free(p);
    msg_free(&m);
}

/* ---- FORMERR paths ----------------------------------------------------- */

static size_t put_hdr(uint8_t *b, unsigned qd, unsigned an, unsigned ns, unsigned ar)
{
    static const uint8_t h[4] = { 0xab, 0xcd, 0x01, 0x00 };
    memcpy(b, h, 4);
    b[4] = 0; b[5] = (uint8_t)qd;
    b[6] = 0; b[7] = (uint8_t)an;
    b[8] = 0; b[9] = (uint8_t)ns;
    b[10] = 0; b[11] = (uint8_t)ar;
    return 12;
}

static size_t put_raw(uint8_t *b, const void *p, size_t n)
{
    memcpy(b, p, n);
    return n;
}

/* question "a." A IN at offset 12 */
static size_t put_q(uint8_t *b)
{
    return put_raw(b, "\x01" "a" "\x00" "\x00\x01\x00\x01", 7);
}

static size_t put_opt(uint8_t *b, const uint8_t *opts, size_t olen)
{
    uint8_t h[11] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, (uint8_t)olen };
    memcpy(b, h, 11);
    if (olen)
        memcpy(b + 11, opts, olen);
    return 11 + olen;
}

static void expect_formerr(const uint8_t *b, size_t n)
{
    dns_msg m;
    int hdr_ok = -1;
    msg_init(&m);
    assert_int_equal(msg_parse(&m, b, n, &hdr_ok), RC_FORMERR);
    if (n >= 12) {
        assert_true(hdr_ok);
        assert_int_equal(m.id, 0xabcd);
        assert_true(m.flags & F_RD);
    } else {
        assert_false(hdr_ok);
    }
    msg_free(&m);
}

static void expect_ok(const uint8_t *b, size_t n, dns_msg *m)
{
    int hdr_ok;
    msg_init(m);
    assert_int_equal(msg_parse(m, b, n, &hdr_ok), 0);
}

static void formerr_header_and_question(void **state)
{
    uint8_t b[600];
    size_t n;
    dns_msg m;
    /* short header */
    n = put_hdr(b, 1, 0, 0, 0);
    expect_formerr(b, 11);
    expect_formerr(b, 0);
    /* qdcount 2 */
    n = put_hdr(b, 2, 0, 0, 0);
    n += put_q(b + n);
    n += put_q(b + n);
    expect_formerr(b, n);
    /* qdcount 0 is fine */
    n = put_hdr(b, 0, 0, 0, 0);
    expect_ok(b, n, &m);
    assert_false(m.has_question);
    msg_free(&m);
    /* truncated question */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_q(b + n);
    expect_formerr(b, n - 1);
    expect_formerr(b, 14);
    /* trailing garbage */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_q(b + n);
    b[n++] = 0;
    expect_formerr(b, n);
    /* more records announced than present */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    expect_formerr(b, n);
}

static void formerr_names(void **state)
{
    uint8_t b[600];
    size_t n;
    /* pointer loop: a label then a pointer back to it */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_raw(b + n, "\x01" "a" "\xc0\x0c" "\x00\x01\x00\x01", 8);
    expect_formerr(b, n);
    /* self pointer */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x01\x00\x01", 6);
    expect_formerr(b, n);
    /* forward pointer */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_raw(b + n, "\xc0\x12" "\x00\x01\x00\x01" "\x01" "a" "\x00", 9);
    expect_formerr(b, n);
    /* two pointers chasing each other in the answer section */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x13" "\xc0\x13" "\x00\x01\x00\x01\x00\x00\x00\x00\x00\x00", 14);
    expect_formerr(b, n);
    /* label types 0x40 and 0x80; a 64-octet label length is one */
    n = put_hdr(b, 1, 0, 0, 0);
    n += put_raw(b + n, "\x41" "a\x00\x00\x01\x00\x01", 7);
    expect_formerr(b, n);
    b[12] = 0x81;
    expect_formerr(b, n);
    n = put_hdr(b, 1, 0, 0, 0);
    b[n++] = 64;
    memset(b + n, 'a', 64);
    n += 64;
    n += put_raw(b + n, "\x00\x00\x01\x00\x01", 5);
    expect_formerr(b, n);
    /* name over 255 octets: 4 labels of 63 */
    n = put_hdr(b, 1, 0, 0, 0);
    for (int i = 0; i < 4; i++) {
        b[n++] = 63;
        memset(b + n, 'a', 63);
        n += 63;
    }
    n += put_raw(b + n, "\x00\x00\x01\x00\x01", 5);
    expect_formerr(b, n);
    /* ... also when reached through a pointer: 3x63 + pointer to 2x63 */
    n = put_hdr(b, 1, 1, 0, 0);
    for (int i = 0; i < 3; i++) {
        b[n++] = 63;
        memset(b + n, 'a', 63);
        n += 63;
    }
    n += put_raw(b + n, "\x00\x00\x01\x00\x01", 5);
    n += put_raw(b + n, "\x01" "b" "\x3f", 3);
    memset(b + n, 'b', 63);
    n += 63;
    n += put_raw(b + n, "\xc0\x0c" "\x00\x01\x00\x01\x00\x00\x00\x00\x00\x04\x01\x02\x03\x04", 16);
    expect_formerr(b, n);
    /* a pointer into the middle of the question is fine (backward) */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_raw(b + n, "\x01" "x" "\x01" "a" "\x00" "\x00\x01\x00\x01", 9);
    n += put_raw(b + n, "\xc0\x0e" "\x00\x01\x00\x01\x00\x00\x00\x05\x00\x04\x01\x02\x03\x04", 16);
    dns_msg m;
    expect_ok(b, n, &m);
    assert_true(dname_equal(msg_rr(&m, SEC_ANSWER, 0).owner, N("a.")));
    msg_free(&m);
}

static void formerr_rdata(void **state)
{
    uint8_t b[600];
    size_t n;
    /* truncated rdata: rdlength 4, 2 octets present */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x01\x00\x01\x00\x00\x00\x05\x00\x04\x01\x02", 14);
    expect_formerr(b, n);
    /* truncated record header */
    expect_formerr(b, n - 6);
    /* A with 5 octets */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x01\x00\x01\x00\x00\x00\x05\x00\x05\x01\x02\x03\x04\x05", 17);
    expect_formerr(b, n);
    /* CNAME whose rdata has a byte after the name */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x05\x00\x01\x00\x00\x00\x05\x00\x04\x01" "b" "\x00\x00", 16);
    expect_formerr(b, n);
    /* CNAME whose name runs past the rdata */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x05\x00\x01\x00\x00\x00\x05\x00\x02\x01" "b" "\x00", 15);
    expect_formerr(b, n);
    /* MX too short for its preference */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x0f\x00\x01\x00\x00\x00\x05\x00\x01\x00", 13);
    expect_formerr(b, n);
    /* TXT string longer than the rdata */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x10\x00\x01\x00\x00\x00\x05\x00\x02\x05" "a", 14);
    expect_formerr(b, n);
    /* a compressed CNAME target is decompressed; empty rdata is kept */
    n = put_hdr(b, 1, 2, 0, 0);
    n += put_q(b + n);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x05\x00\x01\x00\x00\x00\x05\x00\x04\x01" "b" "\xc0\x0c", 16);
    n += put_raw(b + n, "\xc0\x0c" "\x00\x05\x00\xff\x00\x00\x00\x00\x00\x00", 12);
    dns_msg m;
    expect_ok(b, n, &m);
    dns_rr rr = msg_rr(&m, SEC_ANSWER, 0);
    assert_int_equal(rr.rdlen, 5);
    assert_memory_equal(rr.rdata, "\x01" "b" "\x01" "a" "\x00", 5);
    assert_int_equal(msg_rr(&m, SEC_ANSWER, 1).rdlen, 0);
    assert_int_equal(msg_rr(&m, SEC_ANSWER, 1).rclass, C_ANY);
    /* and written back as empty */
    int len = msg_encode(&m, wire, sizeof wire, 65535, 1);
    assert_int_equal(len, (int)n);
    msg_free(&m);
}

static void formerr_opt(void **state)
{
    uint8_t b[600];
    size_t n;
    dns_msg m;
    /* two OPT records */
    n = put_hdr(b, 1, 0, 0, 2);
    n += put_q(b + n);
    n += put_opt(b + n, NULL, 0);
    n += put_opt(b + n, NULL, 0);
    expect_formerr(b, n);
    /* OPT with a non-root owner */
    n = put_hdr(b, 1, 0, 0, 1);
    n += put_q(b + n);
    n += put_raw(b + n, "\x01" "a" "\x00" "\x00\x29\x04\xd0\x00\x00\x00\x00\x00\x00", 13);
    expect_formerr(b, n);
    /* OPT outside the additional section */
    n = put_hdr(b, 1, 1, 0, 0);
    n += put_q(b + n);
    n += put_opt(b + n, NULL, 0);
    expect_formerr(b, n);
    /* option length past the rdata, and a cut option header */
    n = put_hdr(b, 1, 0, 0, 1);
    n += put_q(b + n);
    n += put_opt(b + n, (const uint8_t *)"\x00\x0a\x00\x08" "abc", 7);
    expect_formerr(b, n);
    n = put_hdr(b, 1, 0, 0, 1);
    n += put_q(b + n);
    n += put_opt(b + n, (const uint8_t *)"\x00\x0a\x00", 3);
    expect_formerr(b, n);
    /* a COOKIE option is 8 octets (client cookie) or 16 to 40 (client and
     * server cookie); any other length is FORMERR (RFC 7873 5.2.2) */
    static const int cookie_len[] = { 0, 1, 3, 7, 9, 15, 41, 64, 8, 16, 24, 40 };
    for (size_t i = 0; i < sizeof cookie_len / sizeof cookie_len[0]; i++) {
        int l = cookie_len[i], good = l == 8 || (l >= 16 && l <= 40);
        uint8_t o[4 + 64] = { 0, 10, 0, (uint8_t)l };
        memset(o + 4, 'c', (size_t)l);
        n = put_hdr(b, 1, 0, 0, 1);
        n += put_q(b + n);
        n += put_opt(b + n, o, 4 + (size_t)l);
        if (good) {
            expect_ok(b, n, &m);
            msg_free(&m);
        } else {
            expect_formerr(b, n);
        }
    }
    /* unknown options (a cookie) are skipped */
    n = put_hdr(b, 1, 0, 0, 1);
    n += put_q(b + n);
    n += put_opt(b + n, (const uint8_t *)"\x00\x0a\x00\x08" "abcdefgh", 12);
    expect_ok(b, n, &m);
    assert_true(m.edns.present);
    assert_false(m.edns.has_ecs);
    assert_int_equal(m.edns.udp_size, 1232);
    msg_free(&m);
}

static void formerr_ecs(void **state)
{
    uint8_t b[600];
    size_t n;
    struct { const char *opt; size_t len; int ok; } cases[] = {
        { "\x00\x08\x00\x07" "\x00\x01\x18\x00" "\x0a\x01\x02", 11, 1 },          /* /24 */
        { "\x00\x08\x00\x08" "\x00\x01\x18\x00" "\x0a\x01\x02\x03", 12, 0 },      /* 4 octets for /24 */
        { "\x00\x08\x00\x06" "\x00\x01\x18\x00" "\x0a\x01", 10, 0 },              /* 2 octets for /24 */
        { "\x00\x08\x00\x09" "\x00\x01\x21\x00" "\x0a\x01\x02\x03\x04", 13, 0 },  /* /33 */
        { "\x00\x08\x00\x05" "\x00\x01\x08\x21" "\x0a", 9, 0 },                   /* scope 33 */
        { "\x00\x08\x00\x04" "\x00\x03\x00\x00", 8, 0 },                          /* family 3 */
        { "\x00\x08\x00\x04" "\x00\x00\x00\x00", 8, 1 },                          /* family 0, /0 */
        { "\x00\x08\x00\x05" "\x00\x00\x08\x00" "\x0a", 9, 0 },                   /* family 0, /8 */
        { "\x00\x08\x00\x03" "\x00\x01\x00", 7, 0 },                              /* too short */
        { "\x00\x08\x00\x14" "\x00\x02\x80\x00" "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01", 24, 1 },
        { "\x00\x08\x00\x15" "\x00\x02\x81\x00" "\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00", 25, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        n = put_hdr(b, 1, 0, 0, 1);
        n += put_q(b + n);
        n += put_opt(b + n, (const uint8_t *)cases[i].opt, cases[i].len);
        if (cases[i].ok) {
            dns_msg m;
            expect_ok(b, n, &m);
            assert_true(m.edns.has_ecs);
            msg_free(&m);
        } else {
            expect_formerr(b, n);
        }
    }
}

/* ---- truncation -------------------------------------------------------- */

static void add_many_a(dns_msg *m, int sec, const char *owner, int count)
{
    for (int i = 0; i < count; i++) {
        struct in_addr a;
        a.s_addr = htonl(0x0a000000u + (uint32_t)i);
        assert_int_equal(msg_add_a(m, sec, N(owner), 5, &a), 0);
    }
}

static void setup_q(dns_msg *m, const char *qname)
{
    msg_init(m);
    m->id = 7;
    m->flags = F_QR | F_AA | F_RD;
    m->has_question = 1;
    memcpy(m->qname, N(qname), dname_len(N(qname)));
    m->qtype = T_A;
    m->qclass = C_IN;
}

static void truncation(void **state)
{
    dns_msg m;
    /* header 12 + question 17 = 29; each compressed A is 16 octets */
    setup_q(&m, "svc.example.");
    add_many_a(&m, SEC_ANSWER, "svc.example.", 100);
    int n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(n, 29 + 30 * 16);
    assert_true(m.flags & F_TC);
    ldns_pkt *p = decode(n);
    assert_true(ldns_pkt_tc(p));
    assert_int_equal(ldns_pkt_ancount(p), 30);
    ldns_pkt_free(p);
    /* a limit under 512 means 512 */
    assert_int_equal(msg_encode(&m, wire, sizeof wire, 100, 1), n);

    /* with EDNS the OPT (11 octets) is budgeted and kept */
    m.edns.present = 1;
    m.edns.udp_size = 512;
    n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(n, 29 + 29 * 16 + 11);
    p = decode(n);
    assert_true(ldns_pkt_tc(p));
    assert_int_equal(ldns_pkt_ancount(p), 29);
    assert_int_equal(wire[10] << 8 | wire[11], 1);         /* the OPT */
    assert_true(ldns_pkt_edns(p));
    assert_int_equal(ldns_pkt_edns_udp_size(p), 512);
    ldns_pkt_free(p);
    /* a bigger limit: everything fits, TC is cleared again */
    n = msg_encode(&m, wire, sizeof wire, 4096, 1);
    assert_int_equal(n, 29 + 100 * 16 + 11);
    assert_false(m.flags & F_TC);
    p = decode(n);
    assert_false(ldns_pkt_tc(p));
    assert_int_equal(ldns_pkt_ancount(p), 100);
    ldns_pkt_free(p);
    msg_free(&m);
}

/* The first record that does not fit drops everything after it, even a
 * small additional record that would have fit (miekg/dns Truncate). */
static void truncation_drops_rest(void **state)
{
    dns_msg m;
    setup_q(&m, "svc.example.");
    add_many_a(&m, SEC_ANSWER, "svc.example.", 25);          /* 29 + 400 = 429 */
    char big[201];
    memset(big, 't', 200);
    big[200] = '\0';
    const char *strs[] = { big };
    msg_add_txt(&m, SEC_AUTHORITY, N("svc.example."), 5, strs, 1);
    add_many_a(&m, SEC_ADDITIONAL, "svc.example.", 1);
    int n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(n, 429);
    ldns_pkt *p = decode(n);
    assert_true(ldns_pkt_tc(p));
    assert_int_equal(ldns_pkt_ancount(p), 25);
    assert_int_equal(ldns_pkt_nscount(p), 0);
    assert_int_equal(ldns_pkt_arcount(p), 0);
    ldns_pkt_free(p);
    /* records that exactly fill the budget leave TC clear */
    msg_clear_section(&m, SEC_AUTHORITY);
    msg_clear_section(&m, SEC_ADDITIONAL);
    msg_clear_section(&m, SEC_ANSWER);
    m.flags &= (uint16_t)~F_TC;
    add_many_a(&m, SEC_ANSWER, "svc.example.", 30);            /* 509 */
    const char *s3[] = { "" };
    msg_add_txt(&m, SEC_ADDITIONAL, N("."), 0, s3, 1);        /* 1+10+1 = 12 > 3 left */
    n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(n, 509);
    assert_true(m.flags & F_TC);
    msg_clear_section(&m, SEC_ADDITIONAL);
    n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(n, 509);
    assert_false(m.flags & F_TC);
    msg_free(&m);
}

static void encode_too_small(void **state)
{
    dns_msg m;
    setup_q(&m, "a-rather-long-name.example.");
    add_many_a(&m, SEC_ANSWER, "x.", 1);
    assert_int_equal(msg_encode(&m, wire, 20, 512, 1), -1);
    /* cap smaller than max: the cap is the limit */
    int n = msg_encode(&m, wire, 12 + 33, 512, 1);
    assert_int_equal(n, 12 + 32);
    assert_true(m.flags & F_TC);
    msg_free(&m);
}

/* ---- EDNS -------------------------------------------------------------- */

static void ecs_round_trip(void **state)
{
    dns_msg m, back;
    int hdr_ok;
    setup_q(&m, "a.example.");
    m.edns.present = 1;
    m.edns.udp_size = 1232;
    m.edns.do_bit = 1;
    m.edns.has_ecs = 1;
    m.edns.ecs.family = 1;
    m.edns.ecs.source_prefix = 20;
    m.edns.ecs.scope_prefix = 0;
    static const uint8_t addr[4] = { 10, 1, 255, 255 };
    memcpy(m.edns.ecs.addr, addr, 4);
    int n = msg_encode(&m, wire, sizeof wire, 512, 1);
    /* ... OPT: root, type 41, class 1232, ttl DO, rdlen 11, option 8 len 7 */
    static const uint8_t opt[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 11,
                                   0, 8, 0, 7, 0, 1, 20, 0, 10, 1, 0xf0 };
    assert_int_equal(n, 12 + 15 + (int)sizeof opt);
    assert_memory_equal(wire + n - sizeof opt, opt, sizeof opt);
    ldns_pkt *p = decode(n);
    assert_int_equal(ldns_pkt_edns_udp_size(p), 1232);
    assert_true(ldns_pkt_edns_do(p));
    ldns_pkt_free(p);
    msg_init(&back);
    assert_int_equal(msg_parse(&back, wire, (size_t)n, &hdr_ok), 0);
    assert_true(back.edns.present && back.edns.has_ecs && back.edns.do_bit);
    assert_int_equal(back.edns.ecs.family, 1);
    assert_int_equal(back.edns.ecs.source_prefix, 20);
    static const uint8_t masked[16] = { 10, 1, 0xf0 };
    assert_memory_equal(back.edns.ecs.addr, masked, 16);
    /* IPv6 /56 */
    m.edns.ecs.family = 2;
    m.edns.ecs.source_prefix = 56;
    m.edns.ecs.scope_prefix = 48;
    struct in6_addr a6 = A6("2001:db8:1:2ff::1");
    memcpy(m.edns.ecs.addr, &a6, 16);
    n = msg_encode(&m, wire, sizeof wire, 512, 1);
    assert_int_equal(msg_parse(&back, wire, (size_t)n, &hdr_ok), 0);
    assert_int_equal(back.edns.ecs.family, 2);
    assert_int_equal(back.edns.ecs.scope_prefix, 48);
    struct in6_addr w6 = A6("2001:db8:1:200::");
    assert_memory_equal(back.edns.ecs.addr, &w6, 16);
    msg_free(&back);
    msg_free(&m);
}

static void ext_rcode_and_version(void **state)
{
    dns_msg m, back;
    int hdr_ok;
    setup_q(&m, "a.example.");
    m.edns.present = 1;
    m.edns.udp_size = 4096;
    m.rcode = RC_BADVERS;
    int n = msg_encode(&m, wire, sizeof wire, 512, 0);
    ldns_pkt *p = decode(n);
    assert_int_equal(ldns_pkt_get_rcode(p), 0);
    assert_int_equal(ldns_pkt_edns_extended_rcode(p), 1);
    assert_int_equal(ldns_pkt_edns_version(p), 0);
    ldns_pkt_free(p);
    msg_init(&back);
    assert_int_equal(msg_parse(&back, wire, (size_t)n, &hdr_ok), 0);
    assert_int_equal(back.rcode, RC_BADVERS);
    assert_int_equal(back.edns.ext_rcode, 1);
    /* a query with version 1 is read as such */
    m.rcode = 0;
    m.edns.version = 1;
    n = msg_encode(&m, wire, sizeof wire, 512, 0);
    assert_int_equal(msg_parse(&back, wire, (size_t)n, &hdr_ok), 0);
    assert_int_equal(back.edns.version, 1);
    msg_free(&back);
    msg_free(&m);
}

/* ---- storage ----------------------------------------------------------- */

static void views_stay_valid(void **state)
{
    dns_msg m;
    msg_init(&m);
    struct in_addr a = A4("10.0.0.1");
    msg_add_a(&m, SEC_ANSWER, N("first.example."), 5, &a);
    dns_rr v = msg_rr(&m, SEC_ANSWER, 0);
    /* add a record whose owner is a view into the same message */
    assert_int_equal(msg_add_name(&m, SEC_ANSWER, v.owner, T_CNAME, 5, v.owner), 0);
    for (int i = 0; i < 5000; i++)
        assert_int_equal(msg_add_a(&m, SEC_ADDITIONAL, v.owner, 5, &a), 0);
    dns_rr again = msg_rr(&m, SEC_ANSWER, 0);
    assert_ptr_equal(again.owner, v.owner);
    assert_true(dname_equal(v.owner, N("first.example.")));
    assert_memory_equal(v.rdata, &a, 4);
    dns_rr c = msg_rr(&m, SEC_ANSWER, 1);
    assert_true(dname_equal(c.rdata, N("first.example.")));
    assert_int_equal(msg_count(&m, SEC_ADDITIONAL), 5000);
    msg_free(&m);
}

static void reuse_without_growth(void **state)
{
    dns_msg m;
    msg_init(&m);
    size_t acap = 0;
    unsigned rcap = 0;
    for (int round = 0; round < 5; round++) {
        msg_reset(&m);
        m.has_question = 1;
        memcpy(m.qname, N("x.example."), 11);
        add_many_a(&m, SEC_ANSWER, "svc.example.", 200);
        if (round == 1) {
            acap = m.arena_cap;
            rcap = m.caprecs;
        } else if (round > 1) {
            assert_int_equal(m.arena_cap, acap);
            assert_int_equal(m.caprecs, rcap);
        }
    }
    msg_free(&m);
}

static void permute_clear_ttl_copy(void **state)
{
    dns_msg m, c;
    msg_init(&m);
    msg_init(&c);
    add_many_a(&m, SEC_ADDITIONAL, "ar.example.", 1);
    add_many_a(&m, SEC_ANSWER, "an.example.", 4);
    add_many_a(&m, SEC_AUTHORITY, "ns.example.", 2);
    assert_int_equal(msg_count(&m, SEC_ANSWER), 4);
    assert_int_equal(msg_count(&m, SEC_AUTHORITY), 2);
    assert_int_equal(msg_count(&m, SEC_ADDITIONAL), 1);
    unsigned perm[4] = { 3, 1, 0, 2 };
    msg_permute(&m, SEC_ANSWER, perm, 4);
    static const uint8_t order[4] = { 3, 1, 0, 2 };
    for (unsigned i = 0; i < 4; i++)
        assert_int_equal(msg_rr(&m, SEC_ANSWER, i).rdata[3], order[i]);
    unsigned bad[4] = { 0, 1, 2, 9 };
    msg_permute(&m, SEC_ANSWER, bad, 4);                 /* ignored */
    assert_int_equal(msg_rr(&m, SEC_ANSWER, 0).rdata[3], 3);
    msg_set_ttl(&m, SEC_AUTHORITY, 1, 99);
    assert_int_equal(msg_rr(&m, SEC_AUTHORITY, 1).ttl, 99);
    assert_int_equal(msg_rr(&m, SEC_AUTHORITY, 0).ttl, 5);
    /* out of range reads are empty, not crashes */
    assert_int_equal(msg_rr(&m, SEC_AUTHORITY, 2).rdlen, 0);
    msg_set_ttl(&m, SEC_AUTHORITY, 7, 1);
    m.edns.present = 1;
    assert_int_equal(msg_copy(&c, &m), 0);
    msg_clear_section(&m, SEC_ANSWER);
    assert_int_equal(msg_count(&m, SEC_ANSWER), 0);
    assert_int_equal(msg_count(&m, SEC_AUTHORITY), 2);
    assert_int_equal(msg_count(&m, SEC_ADDITIONAL), 1);
    msg_free(&m);                                         /* the copy is deep */
    assert_int_equal(msg_count(&c, SEC_ANSWER), 4);
    assert_true(c.edns.present);
    assert_true(dname_equal(msg_rr(&c, SEC_ANSWER, 0).owner, N("an.example.")));
    assert_int_equal(msg_rr(&c, SEC_ANSWER, 0).rdata[3], 3);
    assert_int_equal(msg_rr(&c, SEC_AUTHORITY, 1).ttl, 99);
    msg_free(&c);
}

static void add_validation(void **state)
{
    dns_msg m;
    msg_init(&m);
    const uint8_t *o = N("x.example.");
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_CNAME, C_IN, 5, (const uint8_t *)"\x01" "a" "\x00", 3), 0);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_CNAME, C_IN, 5, (const uint8_t *)"\x01" "a" "\x00\x00", 4), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_CNAME, C_IN, 5, (const uint8_t *)"\x01" "a" "\xc0\x0c", 4), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_CNAME, C_IN, 5, (const uint8_t *)"\x05" "a", 2), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_CNAME, C_IN, 5, NULL, 0), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_A, C_IN, 5, (const uint8_t *)"\x01\x02\x03\x04\x05", 5), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_MX, C_IN, 5, (const uint8_t *)"\x00\x0a\x00", 3), 0);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_MX, C_IN, 5, (const uint8_t *)"\x00\x0a", 2), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, T_TXT, C_IN, 5, (const uint8_t *)"\x03" "ab", 3), -1);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, o, 999, C_IN, 5, (const uint8_t *)"anything", 8), 0);
    assert_int_equal(msg_add_rr(&m, SEC_ADDITIONAL, N("."), T_OPT, 1232, 0, NULL, 0), -1);
    assert_int_equal(msg_add_rr(&m, 3, o, T_A, C_IN, 5, (const uint8_t *)"\x01\x02\x03\x04", 4), -1);
    uint8_t badowner[70] = { 64 };
    memset(badowner + 1, 'a', 64);
    assert_int_equal(msg_add_rr(&m, SEC_ANSWER, badowner, T_A, C_IN, 5, (const uint8_t *)"\x01\x02\x03\x04", 4), -1);
    assert_int_equal(msg_add_name(&m, SEC_ANSWER, o, T_NS, 5, badowner), -1);
    assert_int_equal(msg_count(&m, SEC_ANSWER), 3);
    msg_free(&m);
}

static void reply_to(void **state)
{
    dns_msg q, r;
    setup_q(&q, "Q.example.");
    q.flags = (uint16_t)((5 << 11) | F_RD | F_CD | F_AA | F_AD);
    q.id = 99;
    q.edns.present = 1;
    q.rcode = 3;
    add_many_a(&q, SEC_ADDITIONAL, "x.", 1);
    msg_init(&r);
    add_many_a(&r, SEC_ANSWER, "stale.", 3);
    r.edns.present = 1;
    msg_reply_to(&r, &q);
    assert_int_equal(r.id, 99);
    assert_int_equal(r.flags, (5 << 11) | F_QR | F_RD | F_CD);
    assert_int_equal(msg_opcode(&r), 5);
    assert_int_equal(r.rcode, 0);
    assert_false(r.edns.present);
    assert_int_equal(msg_count(&r, SEC_ANSWER) + msg_count(&r, SEC_ADDITIONAL), 0);
    assert_true(r.has_question);
    assert_memory_equal(r.qname, N("Q.example."), 11);
    assert_int_equal(r.qtype, T_A);
    /* in place */
    msg_reply_to(&q, &q);
    assert_int_equal(q.flags, (5 << 11) | F_QR | F_RD | F_CD);
    assert_memory_equal(q.qname, N("Q.example."), 11);
    msg_free(&q);
    msg_free(&r);
}

/* ---- names ------------------------------------------------------------- */

static void names(void **state)
{
    char b[16];
    assert_string_equal(rr_type_name(T_A, b), "A");
    assert_string_equal(rr_type_name(T_AAAA, b), "AAAA");
    assert_string_equal(rr_type_name(T_HTTPS, b), "HTTPS");
    assert_string_equal(rr_type_name(T_AXFR, b), "AXFR");
    assert_string_equal(rr_type_name(T_ANY, b), "ANY");
    assert_string_equal(rr_type_name(257, b), "CAA");
    assert_string_equal(rr_type_name(23, b), "NSAP-PTR");
    assert_string_equal(rr_type_name(11, b), "TYPE11");
    assert_string_equal(rr_type_name(1234, b), "TYPE1234");
    assert_string_equal(rr_type_name(65280, b), "TYPE65280");
    assert_string_equal(rr_class_name(C_IN, b), "IN");
    assert_string_equal(rr_class_name(C_CH, b), "CH");
    assert_string_equal(rr_class_name(254, b), "NONE");
    assert_string_equal(rr_class_name(1000, b), "CLASS1000");
    assert_string_equal(rcode_name(RC_NOERROR, b), "NOERROR");
    assert_string_equal(rcode_name(RC_NXDOMAIN, b), "NXDOMAIN");
    assert_string_equal(rcode_name(RC_NOTIMP, b), "NOTIMP");
    assert_string_equal(rcode_name(RC_NOTZONE, b), "NOTZONE");
    assert_string_equal(rcode_name(RC_BADVERS, b), "BADSIG");
    assert_string_equal(rcode_name(23, b), "BADCOOKIE");
    assert_string_equal(rcode_name(12, b), "RCODE12");
    assert_string_equal(rcode_name(4000, b), "RCODE4000");
    assert_int_equal(rr_type_from_name("A"), T_A);
    assert_int_equal(rr_type_from_name("NSAP-PTR"), 23);
    assert_int_equal(rr_type_from_name("CAA"), 257);
    assert_int_equal(rr_type_from_name("ANY"), T_ANY);
    assert_int_equal(rr_type_from_name("a"), -1);         /* exact names only */
    assert_int_equal(rr_type_from_name("TYPE11"), -1);
    assert_int_equal(rr_type_from_name("Reserved"), -1);
    assert_int_equal(rr_class_from_name("CH"), C_CH);
    assert_int_equal(rr_class_from_name("ANY"), C_ANY);
    assert_int_equal(rr_class_from_name("in"), -1);
    assert_int_equal(rcode_from_name("NXDOMAIN"), RC_NXDOMAIN);
    assert_int_equal(rcode_from_name("BADSIG"), 16);
    assert_int_equal(rcode_from_name("BADCOOKIE"), 23);
    assert_int_equal(rcode_from_name("RCODE12"), -1);
    assert_int_equal(rcode_from_name("nxdomain"), -1);
}

static void to_str(void **state)
{
    dns_msg m;
    msg_init(&m);
    msg_add_srv(&m, SEC_ANSWER, N("_http._tcp.Example.com."), 30, 0, 10, 80, N("t.example.com."));
    msg_add_rr(&m, SEC_ANSWER, N("x."), 999, C_IN, 7, (const uint8_t *)"\x01\x02", 2);
    char s[256];
    dns_rr rr = msg_rr(&m, SEC_ANSWER, 0);
    int n = rr_to_str(&rr, s, sizeof s);
    assert_string_equal(s, "_http._tcp.Example.com.\t30\tIN\tSRV\t0 10 80 t.example.com.");
    assert_int_equal(n, (int)strlen(s));
    rr = msg_rr(&m, SEC_ANSWER, 1);
    rr_to_str(&rr, s, sizeof s);
    assert_string_equal(s, "x.\t7\tIN\tTYPE999\t\\# 2 0102");
    /* a small buffer truncates; the full length is returned */
    char tiny[8];
    rr = msg_rr(&m, SEC_ANSWER, 0);
    assert_int_equal(rr_to_str(&rr, tiny, sizeof tiny), n);
    assert_string_equal(tiny, "_http._");
    msg_free(&m);
}

/* msg_query: the queries topodns sends itself, octet for octet — loop's
 * HINFO probe (RD), forward's health probe and explain's query (no flags),
 * the kubernetes chase (RD, the client's EDNS size and DO bit) — read back
 * by ldns and by msg_parse; a buffer one octet short is refused. */
static void check_query(const dns_query *q, const uint8_t *want, size_t wlen)
{
    uint8_t b[512];
    int n = msg_query(q, b, sizeof b);
    assert_int_equal(n, (int)wlen);
    assert_memory_equal(b, want, wlen);
    ldns_pkt *p = NULL;
    assert_int_equal(ldns_wire2pkt(&p, b, (size_t)n), LDNS_STATUS_OK);
    assert_int_equal(ldns_pkt_id(p), q->id);
    assert_int_equal(ldns_pkt_rd(p), !!(q->flags & F_RD));
    assert_false(ldns_pkt_qr(p));
    assert_int_equal(ldns_pkt_qdcount(p), 1);
    assert_int_equal(ldns_pkt_edns(p), q->edns_size != 0);
    if (q->edns_size) {
        assert_int_equal(ldns_pkt_edns_udp_size(p), q->edns_size);
        assert_int_equal(ldns_pkt_edns_do(p), !!q->do_bit);
    }
    ldns_pkt_free(p);
    dns_msg m;
    int hdr_ok;
    msg_init(&m);
    assert_int_equal(msg_parse(&m, b, (size_t)n, &hdr_ok), 0);
    assert_int_equal(m.id, q->id);
    assert_int_equal(m.flags, q->flags);
    assert_true(dname_equal(m.qname, q->qname));
    assert_int_equal(m.qtype, q->qtype);
    assert_int_equal(m.qclass, q->qclass);
    assert_int_equal(m.edns.present, q->edns_size != 0);
    assert_int_equal(m.edns.udp_size, q->edns_size);
    assert_int_equal(m.edns.do_bit, !!q->do_bit);
    msg_free(&m);
    assert_int_equal(msg_query(q, b, wlen - 1), -1);
}

static void query_packets(void **state)
{
    (void)state;
    static const uint8_t hinfo[] = { 0xbe, 0xef, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
                                     1, '7', 2, '4', '2', 0, 0, 13, 0, 1 };
    check_query(&(dns_query){ .id = 0xbeef, .flags = F_RD, .qname = N("7.42."),
                              .qtype = T_HINFO, .qclass = C_IN }, hinfo, sizeof hinfo);
    static const uint8_t probe[] = { 0, 7, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1 };
    check_query(&(dns_query){ .id = 7, .qname = N("."), .qtype = T_NS, .qclass = C_IN },
                probe, sizeof probe);
    static const uint8_t chase[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1,
                                     3, 'w', 'w', 'w', 4, 'T', 'e', 's', 't', 0, 0, 28, 0, 1,
                                     0, 0, 41, 0x04, 0xd0, 0, 0, 0x80, 0, 0, 0 };
    check_query(&(dns_query){ .id = 0x1234, .flags = F_RD, .qname = N("www.Test."),
                              .qtype = T_AAAA, .qclass = C_IN, .edns_size = 1232, .do_bit = 1 },
                chase, sizeof chase);
    static const uint8_t big[] = { 0xff, 0xff, 0x01, 0x10, 0, 1, 0, 0, 0, 0, 0, 1,
                                   1, 'x', 0, 0, 16, 0, 3,
                                   0, 0, 41, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
    check_query(&(dns_query){ .id = 0xffff, .flags = F_RD | F_CD, .qname = N("x."),
                              .qtype = T_TXT, .qclass = C_CH, .edns_size = 65535 },
                big, sizeof big);
    /* the rcode bits of flags are never written */
    uint8_t b[64];
    assert_int_equal(msg_query(&(dns_query){ .flags = F_RD | 0x000f, .qname = N("."),
                                             .qtype = T_NS, .qclass = C_IN }, b, sizeof b), 17);
    assert_int_equal(b[2], 0x01);
    assert_int_equal(b[3], 0x00);
}

/* msg_wire_set_udp_size: the OPT record found past the question and
 * records with compressed owners; nothing changed without one. */
static void wire_udp_size(void **state)
{
    (void)state;
    uint8_t q[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 2,
                    1, 'x', 0, 0, 1, 0, 1,
                    0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 5, 0, 2, 1, 'a',      /* TXT, owner ptr */
                    0, 0, 41, 0x10, 0x00, 0, 0, 0x80, 0, 0, 0 };
    assert_int_equal(msg_wire_set_udp_size(q, sizeof q, 1232), 0);
    assert_int_equal(q[sizeof q - 8], 0x04);
    assert_int_equal(q[sizeof q - 7], 0xd0);
    dns_msg m;
    msg_init(&m);
    int hdr_ok;
    assert_int_equal(msg_parse(&m, q, sizeof q, &hdr_ok), 0);
    assert_int_equal(m.edns.udp_size, 1232);
    assert_true(m.edns.do_bit);
    msg_free(&m);
    uint8_t plain[] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'x', 0, 0, 1, 0, 1 };
    uint8_t copy[sizeof plain];
    memcpy(copy, plain, sizeof plain);
    assert_int_equal(msg_wire_set_udp_size(copy, sizeof copy, 512), -1);
    assert_memory_equal(copy, plain, sizeof plain);
    assert_int_equal(msg_wire_set_udp_size(q, 20, 512), -1);     /* cut short */
}

/* EDNS options other than ECS: kept from the wire, found, added to a
 * reply and written after ECS; removed; too many octets left out. */
static void edns_options(void **state)
{
    (void)state;
    const uint8_t q[] = { 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 1, 'x', 0, 0, 1, 0, 1,
                          0, 0, 41, 0x10, 0x00, 0, 0, 0, 0, 0, 27,
                          0, 3, 0, 0,                                   /* NSID, empty */
                          0, 8, 0, 7, 0, 1, 24, 0, 10, 1, 2,            /* ECS 10.1.2/24 */
                          0, 10, 0, 8, 'c', 'o', 'o', 'k', 'i', 'e', '!', '!' }; /* COOKIE */
    dns_msg m;
    msg_init(&m);
    int hdr_ok;
    assert_int_equal(msg_parse(&m, q, sizeof q, &hdr_ok), 0);
    assert_true(m.edns.has_ecs);
    uint16_t len = 99;
    assert_non_null(edns_opt_find(&m.edns, EDNS_OPT_NSID, &len));
    assert_int_equal(len, 0);
    const uint8_t *c = edns_opt_find(&m.edns, 10, &len);
    assert_non_null(c);
    assert_int_equal(len, 8);
    assert_memory_equal(c, "cookie!!", 8);
    assert_null(edns_opt_find(&m.edns, EDNS_OPT_ECS, &len));
    assert_null(edns_opt_find(&m.edns, EDNS_OPT_EDE, &len));

    /* a reply: ECS echoed, then NSID and EDE as added */
    dns_msg r;
    msg_init(&r);
    msg_reply_to(&r, &m);
    assert_int_equal(r.edns.opts_len, 0);
    r.edns.present = 1;
    r.edns.udp_size = 1232;
    r.edns.has_ecs = 1;
    r.edns.ecs = m.edns.ecs;
    assert_int_equal(edns_opt_add(&r.edns, EDNS_OPT_NSID, "ns1", 3), 0);
    const uint8_t ede[] = { 0, 15 };
    assert_int_equal(edns_opt_add(&r.edns, EDNS_OPT_EDE, ede, 2), 0);
    assert_int_equal(edns_opt_add(&r.edns, EDNS_OPT_ECS, ede, 2), -1);
    uint8_t out[512];
    int n = msg_encode(&r, out, sizeof out, 512, 0);
    const uint8_t want[] = { 0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 24,
                             0, 8, 0, 7, 0, 1, 24, 0, 10, 1, 2,
                             0, 3, 0, 3, 'n', 's', '1',
                             0, 15, 0, 2, 0, 15 };
    assert_int_equal(n, 19 + (int)sizeof want);
    assert_memory_equal(out + 19, want, sizeof want);
    dns_msg back;
    msg_init(&back);
    assert_int_equal(msg_parse(&back, out, (size_t)n, &hdr_ok), 0);
    c = edns_opt_find(&back.edns, EDNS_OPT_NSID, &len);
    assert_non_null(c);
    assert_memory_equal(c, "ns1", 3);

    edns_opt_remove(&r.edns, EDNS_OPT_NSID);
    assert_null(edns_opt_find(&r.edns, EDNS_OPT_NSID, &len));
    assert_non_null(edns_opt_find(&r.edns, EDNS_OPT_EDE, &len));
    assert_int_equal(r.edns.opts_len, 6);

    /* options past EDNS_OPTS_MAX octets are left out, the rest is kept */
    uint8_t big[4 + EDNS_OPTS_MAX] = { 0 };
    assert_int_equal(edns_opt_add(&r.edns, 65001, big, EDNS_OPTS_MAX - 10), 0);
    assert_int_equal(edns_opt_add(&r.edns, 65002, big, 1), -1);
    assert_int_equal(r.edns.opts_len, EDNS_OPTS_MAX);
    msg_free(&m);
    msg_free(&r);
    msg_free(&back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(encode_matches_ldns),
        cmocka_unit_test(compression_rules),
        cmocka_unit_test(compression_offset_limit),
        cmocka_unit_test(encode_into_dirty_buffer),
        cmocka_unit_test(case_preserved),
        cmocka_unit_test(parse_ldns_packet),
        cmocka_unit_test(formerr_header_and_question),
        cmocka_unit_test(formerr_names),
        cmocka_unit_test(formerr_rdata),
        cmocka_unit_test(formerr_opt),
        cmocka_unit_test(formerr_ecs),
        cmocka_unit_test(truncation),
        cmocka_unit_test(truncation_drops_rest),
        cmocka_unit_test(encode_too_small),
        cmocka_unit_test(ecs_round_trip),
        cmocka_unit_test(ext_rcode_and_version),
        cmocka_unit_test(views_stay_valid),
        cmocka_unit_test(reuse_without_growth),
        cmocka_unit_test(permute_clear_ttl_copy),
        cmocka_unit_test(add_validation),
        cmocka_unit_test(reply_to),
        cmocka_unit_test(names),
        cmocka_unit_test(to_str),
        cmocka_unit_test(query_packets),
        cmocka_unit_test(wire_udp_size),
        cmocka_unit_test(edns_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
