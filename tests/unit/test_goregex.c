/*
 * test_goregex.c — Go (RE2) patterns run as POSIX EREs: the translations
 * (escapes, classes in and out of brackets, bracket sets with ']' '^' '-'
 * '[', non-capturing and named groups, literal braces, \Q...\E, (?i)), the
 * group table (numbering past non-capturing groups, names, unset groups),
 * what is refused as unsupported and what is rejected as Go rejects it,
 * and matching from several threads at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>
#include "common/goregex.h"

static goregex *comp(const char *pat)
{
    char err[256] = "";
    goregex *g = NULL;
    int rc = goregex_compile(pat, &g, err, sizeof err);
    if (rc != GOREGEX_OK)
        fail_msg("%s: %s", pat, err);
    return g;
}

/* Whole match and groups of s as "m0|g1|g2..." ("-" for an unset group). */
static const char *run(const char *pat, const char *s, char *out, size_t cap)
{
    goregex *g = comp(pat);
    long m[2 * (GOREGEX_MAX_GROUPS + 1)];
    if (!goregex_match(g, s, m)) {
        snprintf(out, cap, "NOMATCH");
        goregex_free(g);
        return out;
    }
    size_t o = 0;
    for (size_t i = 0; i <= goregex_ngroups(g); i++) {
        if (i)
            o += (size_t)snprintf(out + o, cap - o, "|");
        if (m[2 * i] < 0)
            o += (size_t)snprintf(out + o, cap - o, "-");
        else
            o += (size_t)snprintf(out + o, cap - o, "%.*s", (int)(m[2 * i + 1] - m[2 * i]), s + m[2 * i]);
    }
    goregex_free(g);
    return out;
}

#define MATCH(pat, s, want) do { char b_[512]; assert_string_equal(run(pat, s, b_, sizeof b_), want); } while (0)

static void test_basics(void **state)
{
    (void)state;
    MATCH("(.*)-(us-west-1)\\.example\\.org", "ftp-us-west-1.example.org.", "ftp-us-west-1.example.org|ftp|us-west-1");
    MATCH("^ip-([0-9]+)\\.", "ip-10.x.", "ip-10.|10");
    MATCH("example\\.org", "exampleXorg.", "NOMATCH");
    MATCH("a.c", "abc", "abc");
    MATCH("", "anything", "");
    MATCH("x{2}", "axxb", "xx");
    MATCH("x{2,}", "xxxx", "xxxx");
    MATCH("x{1,2}y", "xxxy", "xxy");
    MATCH("a{,2}", "a{,2}", "a{,2}");        /* not a repeat in Go: literal */
    MATCH("a{b", "a{b", "a{b");
    MATCH("]", "a]", "]");
    MATCH("}", "}", "}");
    MATCH("(a|b)+c", "xababc", "ababc|b");
}

static void test_escapes(void **state)
{
    (void)state;
    MATCH("\\d+", "ab123c", "123");
    MATCH("\\D+", "12ab3", "ab");
    MATCH("\\w+", "--a_1--", "a_1");
    MATCH("\\W", "ab.c", ".");
    MATCH("a\\sb", "a b", "a b");
    MATCH("\\S+", "  xy ", "xy");
    MATCH("\\.", "a.b", ".");
    MATCH("\\-\\/\\#", "x-/#", "-/#");
    MATCH("\\x41\\x{42}", "zAB", "AB");
    MATCH("\\101", "A", "A");
    MATCH("\\Aab\\z", "ab", "ab");
    MATCH("\\Aab\\z", "abc", "NOMATCH");
    MATCH("\\Qa.b*\\E+", "a.b**", "a.b**");
    MATCH("\\\\", "a\\b", "\\");
    MATCH("\\^\\$", "^$", "^$");
    MATCH("\\t", "a\tb", "\t");
}

static void test_brackets(void **state)
{
    (void)state;
    MATCH("[a-c]+", "xxabcabd", "abcab");
    MATCH("[^a-c]+", "abxyzab", "xyz");
    MATCH("[]a]+", "x]a]x", "]a]");
    MATCH("[^]a]+", "]a]xyz", "xyz");
    MATCH("[\\d.]+", "ip-10.0.0.1", "10.0.0.1");
    MATCH("[\\w-]+", "..a-b_c..", "a-b_c");
    MATCH("[\\.]", "a.b", ".");
    MATCH("[\\]]", "a]b", "]");
    MATCH("[\\^x]+", "a^x^b", "^x^");
    MATCH("[\\^]", "a^", "^");
    MATCH("[-^]+", "a-^-b", "-^-");
    MATCH("[\\[\\]]+", "a[]b", "[]");
    MATCH("[[:digit:]]+", "ab42", "42");
    MATCH("[[:^digit:]]+", "42ab4", "ab");
    MATCH("[a-]+", "-a-b", "-a-");
    MATCH("[\\\\]", "a\\", "\\");
    MATCH("[\\D]+", "12ab", "ab");
    MATCH("[\\x41-\\x43]+", "ABCD", "ABC");
}

static void test_groups(void **state)
{
    (void)state;
    MATCH("(?:a|b)(c)", "bc", "bc|c");
    MATCH("(?P<first>[a-z]+)-(?<second>[0-9]+)", "ab-12", "ab-12|ab|12");
    MATCH("(a)|(b)", "b", "b|-|b");
    MATCH("(?i)ABC", "xabcx", "abc");
    goregex *g = comp("(?:x)(?P<a>1)((?:y)(?P<b>2))");
    assert_int_equal(goregex_ngroups(g), 3);
    assert_string_equal(goregex_name(g, 0), "");
    assert_string_equal(goregex_name(g, 1), "a");
    assert_string_equal(goregex_name(g, 2), "");
    assert_string_equal(goregex_name(g, 3), "b");
    assert_string_equal(goregex_source(g), "(?:x)(?P<a>1)((?:y)(?P<b>2))");
    long m[8];
    assert_int_equal(goregex_match(g, "x1y2", m), 1);
    assert_int_equal(m[2], 1);                  /* a */
    assert_int_equal(m[4], 2);                  /* (y2) */
    assert_int_equal(m[6], 3);                  /* b */
    goregex_free(g);
}

static void test_refused(void **state)
{
    (void)state;
    static const struct { const char *pat; int rc; const char *msg; } cases[] = {
        { "a*?", GOREGEX_UNSUPPORTED, "lazy quantifier `*?`" },
        { "a{2,3}?", GOREGEX_UNSUPPORTED, "lazy quantifier `{2,3}?`" },
        { "(?s).", GOREGEX_UNSUPPORTED, "flags `(?s)`" },
        { "a(?i)b", GOREGEX_UNSUPPORTED, "flags `(?i)`" },
        { "\\bfoo", GOREGEX_UNSUPPORTED, "`\\b` is not supported" },
        { "\\pL", GOREGEX_UNSUPPORTED, "`\\p` is not supported" },
        { "[é]", GOREGEX_UNSUPPORTED, "outside ASCII" },
        { "\\x00", GOREGEX_UNSUPPORTED, "NUL" },
        { "(a", GOREGEX_INVALID, "missing closing )" },
        { "a)", GOREGEX_INVALID, "unexpected )" },
        { "[a", GOREGEX_INVALID, "missing closing ]" },
        { "*a", GOREGEX_INVALID, "missing argument to repetition operator" },
        { "a**", GOREGEX_INVALID, "invalid nested repetition operator" },
        { "a{1001}", GOREGEX_INVALID, "invalid repeat count" },
        { "a{3,2}", GOREGEX_INVALID, "invalid repeat count" },
        { "\\q", GOREGEX_INVALID, "invalid escape sequence: `\\q`" },
        { "\\1", GOREGEX_INVALID, "invalid escape sequence" },
        { "[z-a]", GOREGEX_INVALID, "invalid character class range" },
        { "[[:nope:]]", GOREGEX_INVALID, "invalid character class range" },
        { "(?P<a>x)(?P<a>y)", GOREGEX_INVALID, "duplicate capture group name" },
        { "(?P<>x)", GOREGEX_INVALID, "invalid named capture" },
        { "(?P=a)", GOREGEX_INVALID, "invalid or unsupported Perl syntax" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        goregex *g = (goregex *)1;
        int rc = goregex_compile(cases[i].pat, &g, err, sizeof err);
        if (rc != cases[i].rc || !strstr(err, cases[i].msg))
            fail_msg("%s: rc %d err '%s', want %d '%s'", cases[i].pat, rc, err, cases[i].rc, cases[i].msg);
        assert_null(g);
    }
    char big[GOREGEX_MAX_LEN + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char err[256];
    goregex *g;
    assert_int_equal(goregex_compile(big, &g, err, sizeof err), GOREGEX_INVALID);
    assert_non_null(strstr(err, "too long"));
}

static void *matcher(void *arg)
{
    goregex *g = arg;
    long m[4];
    for (int i = 0; i < 20000; i++)
        if (!goregex_match(g, "ip-10-1-2-3.example.", m) || m[3] - m[2] != 2)
            return (void *)1;
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    goregex *g = comp("^ip-([0-9]+)-");
    pthread_t th[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, matcher, g);
    for (int i = 0; i < 8; i++) {
        void *rv;
        pthread_join(th[i], &rv);
        assert_null(rv);
    }
    goregex_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basics),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_brackets),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
