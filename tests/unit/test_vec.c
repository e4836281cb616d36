/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_vec.c — the growable array (common/vec) and the string buffer on
 * top of it (common/sbuf): growth from zero to the first capacity, doubling
 * to cover a need, no reallocation while the need fits, refusal (with the
 * array left as it was) when count * size overflows size_t, exact resizing
 * of count-only arrays, and text built
 * by appends and printf longer than any fixed scratch buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "common/sbuf.h"
#include "common/vec.h"

typedef struct pair {
    int a;
    double b;
} pair;

static void test_from_zero(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t n = 0, cap = 0;
    assert_int_equal(VEC_RESERVE(v, cap, 1), 0);
    assert_non_null(v);
    assert_int_equal(cap, 8);                   /* the default first capacity */
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(VEC_RESERVE(v, cap, n + 1), 0);
        assert_true(cap >= n + 1);
        v[n++] = (pair){ i, i * 0.5 };
    }
    assert_int_equal(cap, 1024);                /* 8 doubled seven times */
    for (int i = 0; i < 1000; i++)
        assert_true(v[i].a == i && v[i].b == i * 0.5);
    free(v);

    /* a first capacity of the caller's choosing; a need beyond it is met */
    char *s = NULL;
    cap = 0;
    assert_int_equal(VEC_RESERVE_FROM(s, cap, 10, 4096), 0);
    assert_int_equal(cap, 4096);
    free(s);
    s = NULL;
    cap = 0;
    assert_int_equal(VEC_RESERVE_FROM(s, cap, 5000, 16), 0);
    assert_int_equal(cap, 8192);
    s[4999] = 'x';
    free(s);
}

static void test_fits_no_realloc(void **state)
{
    (void)state;
    int *v = NULL;
    size_t cap = 0;
    assert_int_equal(VEC_RESERVE(v, cap, 20), 0);
    assert_int_equal(cap, 32);
    int *was = v;
    assert_int_equal(VEC_RESERVE(v, cap, 32), 0);
    assert_ptr_equal(v, was);
    assert_int_equal(cap, 32);
    assert_int_equal(VEC_RESERVE(v, cap, 0), 0);
    assert_int_equal(cap, 32);
    free(v);
}

static void test_overflow(void **state)
{
    (void)state;
    pair *v = NULL;
    size_t cap = 0;
    /* count * size does not fit size_t: refused before any allocation */
    assert_int_equal(VEC_RESERVE(v, cap, SIZE_MAX / sizeof *v + 1), -1);
    assert_null(v);
    assert_int_equal(cap, 0);
    assert_int_equal(VEC_RESERVE(v, cap, SIZE_MAX), -1);
    assert_null(v);

    /* an array in use stays as it was */
    assert_int_equal(VEC_RESERVE(v, cap, 3), 0);
    v[0] = (pair){ 7, 1.5 };
    pair *was = v;
    size_t wascap = cap;
    assert_int_equal(VEC_RESERVE(v, cap, SIZE_MAX / 2), -1);
    assert_ptr_equal(v, was);
    assert_int_equal(cap, wascap);
    assert_int_equal(v[0].a, 7);

    free(v);
}

static void test_resize(void **state)
{
    (void)state;
    int *v = NULL;
    assert_int_equal(VEC_RESIZE(v, 0), 0);      /* from nothing to an empty array */
    assert_non_null(v);
    for (size_t n = 1; n <= 100; n++) {
        assert_int_equal(VEC_RESIZE(v, n), 0);
        v[n - 1] = (int)n;
    }
    for (size_t i = 0; i < 100; i++)
        assert_int_equal(v[i], (int)i + 1);
    int *was = v;
    assert_int_equal(VEC_RESIZE(v, SIZE_MAX / sizeof *v + 1), -1);   /* count * size overflows */
    assert_ptr_equal(v, was);
    assert_int_equal(v[99], 100);
    free(v);
}

static void test_sbuf(void **state)
{
    (void)state;
    sbuf b = { 0 };
    sbuf_str(&b, "");
    assert_non_null(b.p);
    assert_string_equal(b.p, "");
    sbuf_add(&b, "abc", 2);
    sbuf_str(&b, "-");
    sbuf_fmt(&b, "%d/%s", 42, "x");
    assert_string_equal(b.p, "ab-42/x");
    assert_int_equal(b.len, 7);

    /* printf output far longer than the first 256 octets, kept whole */
    char word[1000];
    memset(word, 'w', sizeof word - 1);
    word[sizeof word - 1] = '\0';
    sbuf_fmt(&b, "[%s]", word);
    assert_int_equal(b.len, 7 + 1001);
    assert_int_equal(b.p[7], '[');
    assert_int_equal(b.p[b.len - 1], ']');
    assert_int_equal(b.p[b.len], '\0');
    assert_int_equal(strlen(b.p), b.len);
    assert_int_equal(b.oom, 0);
    free(b.p);

    /* an append that cannot fit size_t sets oom and changes nothing */
    sbuf c = { 0 };
    sbuf_str(&c, "keep");
    sbuf_add(&c, "x", SIZE_MAX);
    assert_int_equal(c.oom, 1);
    assert_string_equal(c.p, "keep");
    sbuf_str(&c, "more");                       /* later appends do nothing */
    assert_string_equal(c.p, "keep");
    free(c.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_zero),
        cmocka_unit_test(test_fits_no_realloc),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_sbuf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
