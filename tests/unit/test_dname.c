/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_dname.c — wire names: presentation parse/print with escapes, limits,
 * case-insensitive equality and hashing, suffixes, canonical order (checked
 * against ldns_dname_compare).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <ldns/ldns.h>
#include "wire/dname.h"

static void parse_basic(void **state)
{
    uint8_t dn[DNAME_MAX];
    static const uint8_t want[] = { 3, 'f', 'o', 'o', 7, 'E', 'x', 'a', 'm', 'p', 'l', 'e', 0 };
    assert_int_equal(dname_from_str(dn, "foo.Example."), (int)sizeof want);
    assert_memory_equal(dn, want, sizeof want);
    assert_int_equal(dname_from_str(dn, "foo.Example"), (int)sizeof want);
    assert_memory_equal(dn, want, sizeof want);
    assert_int_equal(dname_len(dn), sizeof want);
    assert_int_equal(dname_labels(dn), 2);
    assert_int_equal(dname_from_str(dn, "."), 1);
    assert_int_equal(dn[0], 0);
    assert_int_equal(dname_labels(dn), 0);
    assert_int_equal(dname_from_str(dn, "a"), 3);
}

static void parse_escapes(void **state)
{
    uint8_t dn[DNAME_MAX];
    static const uint8_t want[] = { 3, 'a', '.', 'b', 3, 'A', ' ', 0xff, 1, '\\', 0 };
    assert_int_equal(dname_from_str(dn, "a\\.b.\\065\\032\\255.\\\\."), (int)sizeof want);
    assert_memory_equal(dn, want, sizeof want);
    assert_int_equal(dname_from_str(dn, "a\\256.b"), -1);
    assert_int_equal(dname_from_str(dn, "a\\"), -1);
}

static void parse_errors(void **state)
{
    uint8_t dn[DNAME_MAX];
    char buf[600];
    assert_int_equal(dname_from_str(dn, "a..b"), -1);
    assert_int_equal(dname_from_str(dn, ".a"), -1);
    assert_int_equal(dname_from_str(dn, ".."), -1);
    /* 63-octet label ok, 64 not */
    memset(buf, 'x', 63);
    strcpy(buf + 63, ".com.");
    assert_int_equal(dname_from_str(dn, buf), 63 + 1 + 4 + 1);
    memset(buf, 'x', 64);
    strcpy(buf + 64, ".com.");
    assert_int_equal(dname_from_str(dn, buf), -1);
    /* exactly 255 octets: three 63-octet labels and one of 61 */
    char *p = buf;
    for (int i = 0; i < 3; i++) {
        memset(p, 'a', 63);
        p[63] = '.';
        p += 64;
    }
    memset(p, 'b', 61);
    strcpy(p + 61, ".");
    assert_int_equal(dname_from_str(dn, buf), 255);
    assert_int_equal(dname_len(dn), 255);
    assert_int_equal(dname_labels(dn), 4);
    /* one more octet is too long, with or without the trailing dot */
    memset(p, 'b', 62);
    strcpy(p + 62, ".");
    assert_int_equal(dname_from_str(dn, buf), -1);
    p[62] = '\0';
    assert_int_equal(dname_from_str(dn, buf), -1);
}

static void print_escapes(void **state)
{
    uint8_t dn[DNAME_MAX];
    char s[DNAME_STR_MAX];
    static const uint8_t n1[] = { 4, 'a', '.', 'b', ' ', 3, 0x01, 0x7f, '@', 3, 'C', 'o', 'M', 0 };
    size_t len = dname_to_str(s, sizeof s, n1);
    assert_string_equal(s, "a\\.b\\ .\\001\\127\\@.CoM.");
    assert_int_equal(len, strlen(s));
    /* what we print parses back to the same name */
    assert_int_equal(dname_from_str(dn, s), (int)sizeof n1);
    assert_memory_equal(dn, n1, sizeof n1);
    static const uint8_t root[] = { 0 };
    dname_to_str(s, sizeof s, root);
    assert_string_equal(s, ".");
    /* a too small buffer truncates but stays terminated */
    len = dname_to_str(s, 5, n1);
    assert_true(len < 5);
    assert_int_equal(strlen(s), len);
}

static void print_matches_ldns(void **state)
{
    static const char *names[] = { "www.example.com.", "a\\.b.c.", "x\\001y.z.", "_http._tcp.svc.cluster.local." };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        uint8_t dn[DNAME_MAX];
        char s[DNAME_STR_MAX];
        assert_true(dname_from_str(dn, names[i]) > 0);
        dname_to_str(s, sizeof s, dn);
        ldns_rdf *r = NULL;
        assert_int_equal(ldns_str2rdf_dname(&r, names[i]), LDNS_STATUS_OK);
        assert_int_equal(ldns_rdf_size(r), dname_len(dn));
        assert_memory_equal(ldns_rdf_data(r), dn, dname_len(dn));
        char *ls = ldns_rdf2str(r);
        assert_string_equal(s, ls);
        free(ls);
        ldns_rdf_deep_free(r);
    }
}

static void case_insensitive(void **state)
{
    uint8_t a[DNAME_MAX], b[DNAME_MAX], c[DNAME_MAX];
    dname_from_str(a, "Foo.EXAMPLE.com.");
    dname_from_str(b, "foo.example.COM.");
    dname_from_str(c, "foo.example.org.");
    assert_true(dname_equal(a, b));
    assert_false(dname_equal(a, c));
    assert_int_equal(dname_hash(a), dname_hash(b));
    assert_int_not_equal(dname_hash(a), dname_hash(c));
    assert_int_equal(dname_compare(a, b), 0);
    dname_lower(a);
    static const uint8_t low[] = { 3, 'f', 'o', 'o', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0 };
    assert_memory_equal(a, low, sizeof low);
}

static void suffixes(void **state)
{
    uint8_t n[DNAME_MAX], z[DNAME_MAX], o[DNAME_MAX], root[1] = { 0 };
    dname_from_str(n, "a.b.Cluster.Local.");
    dname_from_str(z, "cluster.local.");
    dname_from_str(o, "ster.local.");
    assert_true(dname_is_sub(n, z));
    assert_true(dname_is_sub(z, z));
    assert_false(dname_is_sub(z, n));
    assert_false(dname_is_sub(n, o));     /* label boundaries, not strings */
    assert_true(dname_is_sub(n, root));
    assert_true(dname_equal(dname_suffix(n, 2), z));
    assert_ptr_equal(dname_suffix(n, 4), n);
    assert_ptr_equal(dname_suffix(n, 9), n);
    assert_int_equal(dname_suffix(n, 0)[0], 0);
    assert_int_equal(dname_labels(dname_suffix(n, 3)), 3);
    const uint8_t *at[DNAME_SUFFIXES];
    assert_int_equal(dname_suffixes(n, at), 4);
    assert_ptr_equal(at[0], n);
    assert_true(dname_equal(at[4 - 2], z));             /* the suffix with 2 labels */
    assert_ptr_equal(at[4], dname_suffix(n, 0));        /* the root */
    for (int k = 0; k <= 4; k++)
        assert_ptr_equal(at[4 - k], dname_suffix(n, k));
    assert_int_equal(dname_suffixes(root, at), 0);
    assert_ptr_equal(at[0], root);
    uint8_t deep[DNAME_MAX];                            /* 127 labels: every slot used */
    for (int i = 0; i < 127; i++) {
        deep[2 * i] = 1;
        deep[2 * i + 1] = 'x';
    }
    deep[254] = 0;
    assert_int_equal(dname_suffixes(deep, at), 127);
    assert_ptr_equal(at[127], deep + 254);
}

/* RFC 4034 section 6.1 example, in canonical order. */
static void canonical_order(void **state)
{
    static const char *order[] = {
        "example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.",
        "zABC.a.EXAMPLE.", "z.example.", "\\001.z.example.", "*.z.example.",
        "\\200.z.example.",
    };
    size_t n = sizeof order / sizeof order[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            uint8_t a[DNAME_MAX], b[DNAME_MAX];
            assert_true(dname_from_str(a, order[i]) > 0);
            assert_true(dname_from_str(b, order[j]) > 0);
            int c = dname_compare(a, b);
            if (i < j)
                assert_true(c < 0);
            else if (i > j)
                assert_true(c > 0);
            else
                assert_int_equal(c, 0);
            ldns_rdf *ra = ldns_dname_new_frm_str(order[i]), *rb = ldns_dname_new_frm_str(order[j]);
            int lc = ldns_dname_compare(ra, rb);
            assert_true((lc < 0) == (c < 0) && (lc > 0) == (c > 0));
            ldns_rdf_deep_free(ra);
            ldns_rdf_deep_free(rb);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_basic),
        cmocka_unit_test(parse_escapes),
        cmocka_unit_test(parse_errors),
        cmocka_unit_test(print_escapes),
        cmocka_unit_test(print_matches_ldns),
        cmocka_unit_test(case_insensitive),
        cmocka_unit_test(suffixes),
        cmocka_unit_test(canonical_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
