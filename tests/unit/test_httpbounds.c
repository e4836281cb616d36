/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_httpbounds.c — unit tests of the pure parts of the HTTP and accept
 * bounds: where a request's header block ends (http_header_end,
 * src/server/http.c), read in pieces as a socket delivers it, and the
 * pause and log decisions after accept() errors (accept_backoff_error,
 * src/server/accept.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "server/accept.h"
#include "server/http.h"

/* Feed s in pieces of step octets; the offset just past the header block
 * in s, or 0 when it never ends. */
static size_t end_in_pieces(const char *s, size_t step)
{
    int st = 0;
    size_t n = strlen(s);
    for (size_t at = 0; at < n; at += step) {
        size_t len = n - at < step ? n - at : step;
        size_t e = http_header_end(&st, s + at, len);
        if (e)
            return at + e;
    }
    return 0;
}

static void header_end_crlf_and_lf(void **state)
{
    (void)state;
    const char *crlf = "GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY";
    const char *lf = "GET / HTTP/1.1\nHost: x\n\nBODY";
    const char *mixed = "GET / HTTP/1.1\r\nHost: x\n\r\nBODY";
    for (size_t step = 1; step <= 40; step++) {
        assert_int_equal(end_in_pieces(crlf, step), strlen(crlf) - 4);
        assert_int_equal(end_in_pieces(lf, step), strlen(lf) - 4);
        assert_int_equal(end_in_pieces(mixed, step), strlen(mixed) - 4);
    }
}

static void header_end_not_yet(void **state)
{
    (void)state;
    /* a line holding a lone CR, CR CR LF, or a header field never ended */
    const char *open[] = {
        "GET / HTTP/1.1\r\nX: a\r\n",
        "GET / HTTP/1.1\r\n\r\r\n",
        "GET / HTTP/1.1\r\nX: \r\r\nY: b\r\n",
        "GET / HTTP/1.1\r\nX-Big: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    };
    for (size_t i = 0; i < sizeof open / sizeof open[0]; i++)
        for (size_t step = 1; step <= 8; step++)
            assert_int_equal(end_in_pieces(open[i], step), 0);
}

static void header_end_state_carries(void **state)
{
    (void)state;
    int st = 0;
    assert_int_equal(http_header_end(&st, "GET / HTTP/1.1\r", 15), 0);
    assert_int_equal(http_header_end(&st, "\n", 1), 0);
    assert_int_equal(st, 1);
    assert_int_equal(http_header_end(&st, "\r", 1), 0);
    assert_int_equal(st, 2);
    assert_int_equal(http_header_end(&st, "\nnext", 5), 1);
    assert_int_equal(st, 0);                    /* ready for the next request */
}

static void backoff_doubles_to_a_second(void **state)
{
    (void)state;
    accept_backoff b = { 0 };
    int log_now;
    unsigned long covered;
    uint64_t t = 1000;
    unsigned want[] = { 5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000 };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        unsigned d = accept_backoff_error(&b, t, &log_now, &covered);
        assert_int_equal(d, want[i]);
        t += d;                                 /* the next error right after the pause */
    }
}

static void backoff_logs_once_an_interval_with_a_count(void **state)
{
    (void)state;
    accept_backoff b = { 0 };
    int log_now;
    unsigned long covered;
    uint64_t t = 5000;
    accept_backoff_error(&b, t, &log_now, &covered);
    assert_true(log_now);                       /* the first error: at once */
    assert_int_equal(covered, 1);
    int lines = 0;
    unsigned long total = 1;
    for (int i = 0; i < 999; i++) {             /* 999 errors, one every 2 ms */
        t += 2;
        accept_backoff_error(&b, t, &log_now, &covered);
        lines += log_now;
        total += covered;
        assert_true(log_now || covered == 0);
    }
    assert_int_equal(lines, 1);                 /* ~2 s: one more line */
    t += ACCEPT_LOG_INTERVAL_MS;
    accept_backoff_error(&b, t, &log_now, &covered);
    assert_true(log_now);
    total += covered;
    assert_int_equal(total, 1001);              /* every error accounted for */
}

static void backoff_new_episode_starts_over(void **state)
{
    (void)state;
    accept_backoff b = { 0 };
    int log_now;
    unsigned long covered;
    uint64_t t = 100;
    for (int i = 0; i < 6; i++)
        t += accept_backoff_error(&b, t, &log_now, &covered);
    assert_true(b.delay_ms > ACCEPT_PAUSE_MIN_MS);
    t += ACCEPT_EPISODE_GAP_MS;                 /* quiet long enough */
    assert_int_equal(accept_backoff_error(&b, t, &log_now, &covered), ACCEPT_PAUSE_MIN_MS);
    assert_true(log_now);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_end_crlf_and_lf),
        cmocka_unit_test(header_end_not_yet),
        cmocka_unit_test(header_end_state_carries),
        cmocka_unit_test(backoff_doubles_to_a_second),
        cmocka_unit_test(backoff_logs_once_an_interval_with_a_count),
        cmocka_unit_test(backoff_new_episode_starts_over),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
