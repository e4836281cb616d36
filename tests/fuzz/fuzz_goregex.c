/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_goregex.c — fuzz harness for Go regular expressions on RE2
 * (src/common/goregex.h): the pattern scan of goregex.cc (escapes,
 * \Q...\E, bracket expressions, groups, the (?<name> rewrite, \C, nesting)
 * and RE2 behind it.
 *
 * The input is a pattern, then optionally a newline and a subject. A
 * pattern is either refused with a message (and no object), or compiles into
 * an object whose group table is consistent and which, on the subject and on
 * a few fixed names: answers yes/no the same way with and without groups,
 * gives offsets inside the subject with start <= end, a set group 0 on a
 * match, and the same answer twice. Never a crash, leak or read out of
 * bounds.
 *
 * libFuzzer: scripts/fuzz goregex (built by clang++ for goregex.cc).
 *
 * Without FUZZING_LIBFUZZER a main() runs 30000 patterns made of regex
 * tokens from a fixed seed (the same patterns every run) against names and
 * prints "N passed, M failed"; `make check` runs it that way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/goregex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_GROUPS 40

static void fail(const char *why, const char *pat, const char *subject)
{
    fprintf(stderr, "fuzz_goregex: invariant broken: %s: pattern '%s' subject '%s'\n", why, pat,
            subject);
    abort();
}

static void check_match(const goregex *g, const char *pat, const char *s)
{
    long m[2 * MAX_GROUPS], m2[2 * MAX_GROUPS];
    size_t ng = goregex_ngroups(g) + 1, want = ng + 1 < MAX_GROUPS ? ng + 1 : MAX_GROUPS;
    long len = (long)strlen(s);
    int yes = goregex_match(g, s, NULL, 0);
    int full = goregex_match(g, s, m, want);
    if (yes != full)
        fail("yes/no and groups disagree", pat, s);
    if (!full)
        return;
    if (m[0] < 0 || m[1] < m[0] || m[1] > len)
        fail("whole match out of the subject", pat, s);
    for (size_t i = 1; i < want; i++) {
        if (m[2 * i] == -1 && m[2 * i + 1] == -1)
            continue;
        if (i >= ng || m[2 * i] < 0 || m[2 * i + 1] < m[2 * i] || m[2 * i + 1] > len)
            fail("group out of the subject", pat, s);
    }
    if (goregex_match(g, s, m2, want) != 1 || memcmp(m, m2, 2 * want * sizeof *m))
        fail("two runs differ", pat, s);
}

static void one(const char *pat, const char *subject)
{
    goregex *g = NULL;
    char err[256] = "";
    if (goregex_compile(pat, &g, err, sizeof err) != GOREGEX_OK) {
        if (g || !err[0])
            fail("refused without a message", pat, subject);
        return;
    }
    if (!g || strcmp(goregex_source(g), pat))
        fail("no object, or not the pattern as written", pat, subject);
    for (size_t i = 0; i <= goregex_ngroups(g) + 1; i++)
        if (!goregex_name(g, i))
            fail("no group name", pat, subject);
    static const char *const names[] = {
        "", "ip-10-1-2-3.example.", "abcd", "a.b.c.cluster.local.", "\\255x.example.",
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx.test.",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        check_match(g, pat, names[i]);
    check_match(g, pat, subject);
    goregex_free(g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *nl = memchr(text, '\n', size);
    if (nl)
        *nl = '\0';
    one(text, nl ? nl + 1 : "");
    free(text);
    return 0;
}

#ifndef FUZZING_LIBFUZZER
int main(void)
{
    static const char *const toks[] = {
        "(", ")", "(?:", "(?P<n>", "(?<m>", "(?<", "(?P<", "(?i)", "(?s:", "(?U)", "(?m)", "|",
        "*", "+", "?", "*?", "+?", "{2}", "{1,3}", "{0,}", "{1000}", "{1001}", "{,2}", "[", "]",
        "[^", "[:alpha:]", "[[:^digit:]]", "-", "\\", "\\d", "\\b", "\\B", "\\pL", "\\p{Greek}",
        "\\PN", "\\Q", "\\E", "\\C", "\\x41", "\\x{263a}", "\\101", "\\z", "\\A", "^", "$", ".",
        "a", "b", "x", "-", "é", ">", "<", "=", "\\.", "example", "[a-z]", "[]a]", "[\\]]",
    };
    const size_t ntoks = sizeof toks / sizeof toks[0];
    uint64_t s = 0x2545f4914f6cdd1du;
    unsigned n = 0;
    for (; n < 30000; n++) {
        char buf[400];
        size_t len = 0;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int k = (int)(s % 16) + 1;
        for (int i = 0; i < k; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            const char *t = toks[s % ntoks];
            size_t l = strlen(t);
            memcpy(buf + len, t, l);
            len += l;
        }
        buf[len] = '\0';
        one(buf, "ip-1-2-3-4.example.");
    }
    /* deep nesting on either side of the limit, and the longest pattern */
    static char deep[2 * GOREGEX_MAX_NEST + 4];
    for (int d = GOREGEX_MAX_NEST - 1; d <= GOREGEX_MAX_NEST; d++, n++) {
        memset(deep, '(', (size_t)d);
        deep[d] = 'a';
        memset(deep + d + 1, ')', (size_t)d);
        deep[2 * d + 1] = '\0';
        one(deep, "a");
    }
    static char longest[GOREGEX_MAX_LEN + 1];
    memset(longest, '[', GOREGEX_MAX_LEN);
    one(longest, "[");
    n++;
    printf("fuzz_goregex: %u passed, 0 failed\n", n);
    return 0;
}
#endif
