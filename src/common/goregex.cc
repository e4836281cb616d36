/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goregex.cc — Go regular expressions on RE2; see goregex.h.
 *
 * goregex_compile() first reads the pattern once the way Go's parser
 * tokenizes it (escapes, \Q...\E, bracket expressions, groups) to do what
 * RE2 2022 does not do as Go does: it rewrites `(?<name>` as `(?P<name>`,
 * refuses `\C`, and refuses capturing groups nested GOREGEX_MAX_NEST
 * deep. RE2 then parses and compiles the result with Go's options and the
 * memory budget; its error codes are given Go's words. The reverse program
 * RE2 builds lazily for some searches is built here, at startup, so that no
 * worker compiles anything.
 *
 * Every entry point catches C++ exceptions (std::bad_alloc): none crosses
 * into C.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <re2/re2.h>
#include "common/goregex.h"

struct goregex {
    std::string src;                    /* the pattern as written */
    std::unique_ptr<RE2> re;
    size_t ngroups = 0;
    std::vector<std::string> names;     /* [0..ngroups], "" when unnamed */
};

namespace {

/* Go's ErrorCode text for an RE2 error code. */
const char *go_code(RE2::ErrorCode c)
{
    switch (c) {
    case RE2::ErrorBadEscape: return "invalid escape sequence";
    case RE2::ErrorBadCharClass: return "invalid character class";
    case RE2::ErrorBadCharRange: return "invalid character class range";
    case RE2::ErrorMissingBracket: return "missing closing ]";
    case RE2::ErrorMissingParen: return "missing closing )";
    case RE2::ErrorUnexpectedParen: return "unexpected )";
    case RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize: return "invalid repeat count";
    case RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp: return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8: return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture: return "invalid named capture";
    case RE2::ErrorPatternTooLarge: return "expression too large";
    default: return "regexp/syntax: internal error";
    }
}

int fail(char *err, size_t errlen, const char *code, const std::string &expr)
{
    snprintf(err, errlen, "error parsing regexp: %s: `%s`", code, expr.c_str());
    return GOREGEX_INVALID;
}

/* The index just past the bracket expression that starts at p[i] == '['. */
size_t class_end(const char *p, size_t i, size_t n, int *bad_c)
{
    size_t j = i + 1;
    if (j < n && p[j] == '^')
        j++;
    bool first = true;                  /* a ']' first is a literal */
    while (j < n && (p[j] != ']' || first)) {
        first = false;
        if (p[j] == '[' && j + 1 < n && p[j + 1] == ':') {
            const char *e = strstr(p + j + 2, ":]");
            if (e) {
                j = (size_t)(e - p) + 2;
                continue;
            }
        }
        if (p[j] == '\\' && j + 1 < n) {
            if (p[j + 1] == 'C')
                *bad_c = 1;
            j += 2;
            continue;
        }
        j++;
    }
    return j < n ? j + 1 : n;
}

/* The pattern RE2 is given, or GOREGEX_INVALID with err. */
int prepare(const char *p, std::string &out, char *err, size_t errlen)
{
    size_t n = strlen(p);
    std::vector<bool> open;             /* the open groups: capturing or not */
    size_t depth = 0;                   /* capturing groups open */
    out.reserve(n + 8);
    for (size_t i = 0; i < n;) {
        char c = p[i];
        if (c == '\\' && i + 1 < n) {
            if (p[i + 1] == 'C')
                return fail(err, errlen, "invalid escape sequence", "\\C");
            if (p[i + 1] == 'Q') {      /* literal up to \E or the end */
                const char *e = strstr(p + i + 2, "\\E");
                size_t stop = e ? (size_t)(e - p) + 2 : n;
                out.append(p + i, stop - i);
                i = stop;
                continue;
            }
            out.append(p + i, 2);
            i += 2;
            continue;
        }
        if (c == '[') {
            int bad_c = 0;
            size_t e = class_end(p, i, n, &bad_c);
            if (bad_c)
                return fail(err, errlen, "invalid escape sequence", "\\C");
            out.append(p + i, e - i);
            i = e;
            continue;
        }
        if (c == '(') {
            bool capture = true;
            if (i + 1 < n && p[i + 1] == '?') {
                if (i + 2 < n && p[i + 2] == '<') {
                    out += "(?P<";      /* Go 1.22's (?<name>re) */
                    i += 3;
                    open.push_back(true);
                    if (++depth >= GOREGEX_MAX_NEST)
                        return fail(err, errlen, "expression nests too deeply", p);
                    continue;
                }
                capture = i + 3 < n && p[i + 2] == 'P' && p[i + 3] == '<';
            }
            open.push_back(capture);
            if (capture && ++depth >= GOREGEX_MAX_NEST)
                return fail(err, errlen, "expression nests too deeply", p);
        } else if (c == ')' && !open.empty()) {
            if (open.back())
                depth--;
            open.pop_back();
        }
        out += c;
        i++;
    }
    return GOREGEX_OK;
}

RE2::Options go_options()
{
    RE2::Options o;
    o.set_encoding(RE2::Options::EncodingUTF8);
    o.set_posix_syntax(false);          /* Perl syntax: \d \b (?i) (?P<n>) ... */
    o.set_longest_match(false);         /* leftmost-first, as Go */
    o.set_perl_classes(true);
    o.set_word_boundary(true);
    o.set_one_line(true);               /* ^ $ at the text's ends unless (?m) */
    o.set_dot_nl(false);
    o.set_never_nl(false);
    o.set_never_capture(false);
    o.set_case_sensitive(true);
    o.set_literal(false);
    o.set_log_errors(false);            /* errors come back to the caller */
    o.set_max_mem(GOREGEX_MAX_MEM);
    return o;
}

int compile(const char *pattern, goregex **out, char *err, size_t errlen)
{
    size_t plen = strlen(pattern);
    if (plen > GOREGEX_MAX_LEN) {
        snprintf(err, errlen, "regex pattern too long: %zu > %d", plen, GOREGEX_MAX_LEN);
        return GOREGEX_INVALID;
    }
    std::string text;
    if (prepare(pattern, text, err, errlen) != GOREGEX_OK)
        return GOREGEX_INVALID;
    std::unique_ptr<goregex> g(new goregex());   /* freed on every way out */
    g->src = pattern;
    g->re.reset(new RE2(text, go_options()));
    const RE2 &re = *g->re;
    if (!re.ok()) {
        std::string arg = re.error_arg().empty() ? g->src : re.error_arg();
        int rc = fail(err, errlen, go_code(re.error_code()), arg);
        if (re.error_code() == RE2::ErrorPatternTooLarge) {
            size_t used = strlen(err);
            snprintf(err + used, errlen - used, " (over the %d MiB budget of one regex)",
                     GOREGEX_MAX_MEM >> 20);
        }
        return rc;
    }
    g->ngroups = (size_t)re.NumberOfCapturingGroups();
    g->names.assign(g->ngroups + 1, std::string());
    for (const auto &kv : re.CapturingGroupNames())
        if (kv.first > 0 && (size_t)kv.first <= g->ngroups)
            g->names[(size_t)kv.first] = kv.second;
    /* the reverse program, now rather than in the first worker to need it
     * (when it does not fit, RE2 searches without it) */
    (void)re.ReverseProgramSize();
    *out = g.release();
    return GOREGEX_OK;
}

} /* namespace */

extern "C" int goregex_compile(const char *pattern, goregex **out, char *err, size_t errlen)
{
    assert(pattern && out && err && errlen > 0);
    *out = NULL;
    err[0] = '\0';
    try {
        return compile(pattern, out, err, errlen);
    } catch (...) {
        snprintf(err, errlen, "out of memory");
        return GOREGEX_INVALID;
    }
}

extern "C" void goregex_free(goregex *g)
{
    delete g;
}

extern "C" size_t goregex_ngroups(const goregex *g)
{
    assert(g);
    return g->ngroups;
}

extern "C" const char *goregex_source(const goregex *g)
{
    assert(g);
    return g->src.c_str();
}

extern "C" const char *goregex_name(const goregex *g, size_t i)
{
    assert(g);
    return i <= g->ngroups ? g->names[i].c_str() : "";
}

extern "C" int goregex_match(const goregex *g, const char *s, long *m, size_t nm)
{
    assert(g && s && (m || nm == 0));
    size_t want = nm < g->ngroups + 1 ? nm : g->ngroups + 1;
    re2::StringPiece text(s);
    re2::StringPiece few[16];
    try {
        std::vector<re2::StringPiece> many;
        re2::StringPiece *sub = few;
        if (want > 16) {
            many.resize(want);
            sub = many.data();
        }
        if (!g->re->Match(text, 0, text.size(), RE2::UNANCHORED, sub, (int)want))
            return 0;
        for (size_t i = 0; i < nm; i++) {
            bool set = i < want && sub[i].data() != NULL;
            m[2 * i] = set ? (long)(sub[i].data() - s) : -1;
            m[2 * i + 1] = set ? (long)(sub[i].data() - s + (long)sub[i].size()) : -1;
        }
        return 1;
    } catch (...) {
        return 0;
    }
}
