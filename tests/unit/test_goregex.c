/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_goregex.c — Go regular expressions on RE2 (common/goregex): the
 * examples of Go's regexp and regexp/syntax documentation (leftmost-first
 * alternation, lazy and greedy repeats, \b, named groups in both spellings,
 * flags, Unicode classes, \Q...\E), the group table, what Go rejects and
 * the message it gives, the bounds (repeat counts, nesting, program size)
 * and their cost: a pathological pattern compiles or is refused in
 * milliseconds and a worst-case name is matched in milliseconds; and one
 * compiled object matched from several threads at once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <cmocka.h>
#include "common/goregex.h"

static goregex *comp(const char *pat)
{
    char err[256] = "";
    goregex *g = NULL;
    if (goregex_compile(pat, &g, err, sizeof err) != GOREGEX_OK)
        fail_msg("%s: %s", pat, err);
    return g;
}

/* Whole match and groups of s as "m0|g1|g2..." ("-" for an unset group). */
static const char *run(const char *pat, const char *s, char *out, size_t cap)
{
    goregex *g = comp(pat);
    long m[2 * 32];
    size_t ng = goregex_ngroups(g) + 1;
    assert_true(ng <= 32);
    if (!goregex_match(g, s, m, ng)) {
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

/* The examples of Go's regexp and regexp/syntax documentation. */
static void test_go_semantics(void **state)
{
    (void)state;
    /* leftmost-first: the first alternative that leads to a match wins
     * (POSIX's leftmost-longest would give "ab", "cd", "") */
    MATCH("(a|ab)(c|bcd)(d*)", "abcd", "abcd|a|bcd|");
    MATCH("(x|xy)", "xy", "x|x");              /* leftmost-longest: xy */
    MATCH("(x*|xy)z?", "xyz", "x|x");
    MATCH("a(x*)b(y|z)c", "-axxxbyc-", "axxxbyc|xxx|y");
    MATCH("a(x*)b(y|z)c", "-abzc-", "abzc||z");
    MATCH("foo.?", "seafood fool", "food");
    /* lazy and greedy repeats */
    MATCH("a+?", "aaa", "a");
    MATCH("(a+?)(a*)", "aaa", "aaa|a|aa");
    MATCH("(a*?)b", "aab", "aab|aa");
    MATCH("x{2,3}?", "xxxx", "xx");
    MATCH("(?U)a+", "aaa", "a");
    MATCH("(?U)a+?", "aaa", "aaa");
    MATCH("(a*)+", "b", "|");
    MATCH("(a)|(b)", "b", "b|-|b");
    MATCH("a|", "xyz", "");
    /* word boundaries */
    MATCH("\\bfoo\\b", "a foo b", "foo");
    MATCH("\\bfoo\\b", "afoo b", "NOMATCH");
    MATCH("\\Boo\\B", "afoob", "oo");
    /* named groups, both spellings */
    MATCH("(?P<first>[a-zA-Z]+) (?P<last>[a-zA-Z]+)", "Alan Turing", "Alan Turing|Alan|Turing");
    MATCH("(?<first>[a-z]+)-(?<second>[0-9]+)", "ab-12", "ab-12|ab|12");
    /* flags */
    MATCH("(?i)hello", "say HeLLo", "HeLLo");
    MATCH("a(?i)b", "aB", "aB");
    MATCH("a(?i)b", "AB", "NOMATCH");
    MATCH("(?i:B)c", "bc", "bc");
    MATCH("(?i:B)c", "bC", "NOMATCH");
    MATCH("a.b", "a\nb", "NOMATCH");
    MATCH("(?s)a.b", "a\nb", "a\nb");
    MATCH("^b$", "a\nb\nc", "NOMATCH");
    MATCH("(?m)^b$", "a\nb\nc", "b");
    /* Unicode */
    MATCH("\\pL+", "héllo1", "héllo");
    MATCH("\\p{Greek}+", "abc αβγ", "αβγ");
    MATCH("\\PL+", "ab12cd", "12");
    MATCH("[\\p{Lu}]+", "abCDe", "CD");
    MATCH("\\x{263a}", "a☺b", "☺");
    MATCH("[é]", "café", "é");
    MATCH("(?i)É", "é", "é");
    /* classes, escapes, anchors */
    MATCH("[[:alpha:]]+", "12ab3", "ab");
    MATCH("[[:word:]]+", "-a_1-", "a_1");
    MATCH("\\Q.*\\E+", "a.*.*", ".*");
    MATCH("\\Aab\\z", "ab", "ab");
    MATCH("\\Aab\\z", "ab\n", "NOMATCH");
    MATCH("ab$", "ab\n", "NOMATCH");
    MATCH("[\\(<]x", "(x", "(x");    /* '(' in brackets opens no group */
    MATCH("\\(?<a>x", "(<a>x", "(<a>x");
    MATCH("\\Q(?<\\E", "(?<", "(?<");
}

static void test_groups(void **state)
{
    (void)state;
    MATCH("(?:a|b)(c)", "bc", "bc|c");
    goregex *g = comp("(?:x)(?P<a>1)((?:y)(?<b>2))");
    assert_int_equal(goregex_ngroups(g), 3);
    assert_string_equal(goregex_name(g, 0), "");
    assert_string_equal(goregex_name(g, 1), "a");
    assert_string_equal(goregex_name(g, 2), "");
    assert_string_equal(goregex_name(g, 3), "b");
    assert_string_equal(goregex_name(g, 4), "");
    assert_string_equal(goregex_source(g), "(?:x)(?P<a>1)((?:y)(?<b>2))");
    long m[10];
    assert_int_equal(goregex_match(g, "x1y2", m, 5), 1);
    assert_int_equal(m[0], 0);
    assert_int_equal(m[1], 4);
    assert_int_equal(m[2], 1);                  /* a */
    assert_int_equal(m[4], 2);                  /* (y2) */
    assert_int_equal(m[6], 3);                  /* b */
    assert_int_equal(m[8], -1);                 /* no group 4 */
    assert_int_equal(m[9], -1);
    assert_int_equal(goregex_match(g, "x1y2", m, 2), 1);   /* fewer groups asked */
    assert_int_equal(m[2], 1);
    assert_int_equal(goregex_match(g, "x1y2", NULL, 0), 1);
    assert_int_equal(goregex_match(g, "x1y3", NULL, 0), 0);
    goregex_free(g);
    /* Go accepts a name twice */
    g = comp("(?P<n>a)(?P<n>b)");
    assert_string_equal(goregex_name(g, 2), "n");
    goregex_free(g);
}

/* Go's own parse errors, in Go's words. */
static void test_refused(void **state)
{
    (void)state;
    static const struct { const char *pat; const char *msg; } cases[] = {
        { "a{1001}", "error parsing regexp: invalid repeat count: `{1001}`" },
        { "(a{100}){100}", "invalid repeat count: `{100}`" },
        { "((a{10}){10}){11}", "invalid repeat count" },
        { "a**", "invalid nested repetition operator: `**`" },
        { "(a", "missing closing ): `(a`" },
        { "a)", "unexpected ): `a)`" },
        { "[a", "missing closing ]: `[a`" },
        { "*a", "missing argument to repetition operator: `*`" },
        { "\\q", "invalid escape sequence: `\\q`" },
        { "\\1", "invalid escape sequence" },
        { "\\C", "invalid escape sequence: `\\C`" },
        { "[\\C]", "invalid escape sequence: `\\C`" },
        { "\\Z", "invalid escape sequence" },
        { "a\\", "trailing backslash at end of expression" },
        { "[z-a]", "invalid character class range: `z-a`" },
        { "[[:nope:]]", "invalid character class range" },
        { "\\p{Nope}", "invalid character class range" },
        { "(?P<>x)", "invalid named capture" },
        { "(?<=a)b", "invalid named capture" },
        { "(?P=a)", "invalid or unsupported Perl syntax" },
        { "(?x)a", "invalid or unsupported Perl syntax" },
        { "\xff", "invalid UTF-8" },
        { "\\pL{1000}", "expression too large" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[256] = "";
        goregex *g = (goregex *)1;
        int rc = goregex_compile(cases[i].pat, &g, err, sizeof err);
        if (rc != GOREGEX_INVALID || !strstr(err, cases[i].msg))
            fail_msg("%s: rc %d err '%s', want '%s'", cases[i].pat, rc, err, cases[i].msg);
        assert_null(g);
    }
    char big[GOREGEX_MAX_LEN + 2];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    char err[256];
    goregex *g;
    assert_int_equal(goregex_compile(big, &g, err, sizeof err), GOREGEX_INVALID);
    assert_non_null(strstr(err, "too long"));
    big[GOREGEX_MAX_LEN] = '\0';                /* at the limit: fine */
    goregex_free(comp(big));
}

/* Groups nested 999 deep are Go's limit (a tree 1000 high). */
static void test_nesting(void **state)
{
    (void)state;
    char pat[2 * GOREGEX_MAX_NEST + 8];
    for (int depth = GOREGEX_MAX_NEST - 1; depth <= GOREGEX_MAX_NEST; depth++) {
        size_t o = 0;
        for (int i = 0; i < depth; i++)
            pat[o++] = '(';
        pat[o++] = 'a';
        for (int i = 0; i < depth; i++)
            pat[o++] = ')';
        pat[o] = '\0';
        char err[256] = "";
        goregex *g = NULL;
        int rc = goregex_compile(pat, &g, err, sizeof err);
        if (depth < GOREGEX_MAX_NEST) {
            assert_int_equal(rc, GOREGEX_OK);
            assert_int_equal(goregex_ngroups(g), depth);
            goregex_free(g);
        } else {
            assert_int_equal(rc, GOREGEX_INVALID);
            assert_non_null(strstr(err, "expression nests too deeply"));
        }
    }
    /* non-capturing groups and brackets do not count */
    goregex_free(comp("(?:(?:(?:a)))[(((]"));
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Under valgrind everything is ~50 times slower: the costs are not checked. */
static int timed(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return !pre || !strstr(pre, "vgpreload");
}

/* The patterns that cost seconds and gigabytes as POSIX EREs: compiled in
 * milliseconds, and a worst-case name (240 characters) matched in
 * milliseconds, groups included. */
static void test_cost(void **state)
{
    (void)state;
    char name[260];
    memset(name, 'a', 240);
    strcpy(name + 240, ".example.");
    static const struct { const char *pat; const char *subject; int match; } cases[] = {
        { "^(.?){1000}(.?){1000}$", NULL, 1 },
        { "((a*)*){1000}b", NULL, 0 },
        { "(a|aa)*(a|aa)*(a|aa)*(a|aa)*$", NULL, 1 },
        { "^(([a-z])+.)+[A-Z]([a-z])+$", NULL, 0 },
        { "(.*){1000}z", NULL, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *subject = cases[i].subject ? cases[i].subject : name;
        double t0 = cpu_ms();
        goregex *g = comp(cases[i].pat);
        double t1 = cpu_ms();
        size_t ng = goregex_ngroups(g) + 1;
        long m[2 * 8];
        assert_true(ng <= 8);
        assert_int_equal(goregex_match(g, subject, m, ng), cases[i].match);
        assert_int_equal(goregex_match(g, subject, NULL, 0), cases[i].match);
        double t2 = cpu_ms();
        print_message("%-32s compile %7.2f ms, match %7.2f ms\n", cases[i].pat, t1 - t0, t2 - t1);
        if (timed()) {
            assert_true(t1 - t0 < 500);
            assert_true(t2 - t1 < 200);
        }
        goregex_free(g);
    }
    /* refused ones are refused fast */
    static const char *const refused[] = { "\\pL{1000}", "(\\pL{30}){30}x", "a{1001}" };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char err[256];
        goregex *g;
        double t0 = cpu_ms();
        assert_int_equal(goregex_compile(refused[i], &g, err, sizeof err), GOREGEX_INVALID);
        double t1 = cpu_ms();
        print_message("%-32s refused in %7.2f ms: %s\n", refused[i], t1 - t0, err);
        if (timed())
            assert_true(t1 - t0 < 1000);
    }
}

/* The 8 MiB budget in RE2 instructions: a 200-character literal repeated
 * 1000 times fits (about 200,000 instructions), an 800-character one does
 * not (Go, counting 3.3 million of its own, would take both). */
static void test_budget(void **state)
{
    (void)state;
    for (int chars = 200; chars <= 800; chars += 600) {
        char pat[1000];
        size_t o = 0;
        pat[o++] = '(';
        for (int i = 0; i < chars; i++)
            pat[o++] = (char)('a' + i % 26);
        o += (size_t)snprintf(pat + o, sizeof pat - o, "){1000}");
        char err[256] = "";
        goregex *g = NULL;
        int rc = goregex_compile(pat, &g, err, sizeof err);
        if (chars == 200) {
            assert_int_equal(rc, GOREGEX_OK);
            goregex_free(g);
        } else {
            assert_int_equal(rc, GOREGEX_INVALID);
            assert_non_null(strstr(err, "expression too large"));
        }
    }
}

static void *matcher(void *arg)
{
    const goregex *g = arg;
    long m[4];
    char name[64];
    for (int i = 0; i < 20000; i++) {
        snprintf(name, sizeof name, "ip-%d-1-2-3.example.", i % 300);
        if (!goregex_match(g, name, m, 2) || m[3] - m[2] != (i % 300 < 10 ? 1 : i % 300 < 100 ? 2 : 3))
            return (void *)1;
    }
    return NULL;
}

/* One compiled object, eight threads matching with it at once. */
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
        cmocka_unit_test(test_go_semantics),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_cost),
        cmocka_unit_test(test_budget),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
