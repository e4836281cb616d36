/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dispenser.c — walks the tokens of one directive (all its occurrences in a
 * server block) for a plugin's setup, like caddy's Dispenser / CoreDNS's
 * Controller, plus the error formatting and value helpers setup code shares.
 *
 * Two tokens are "on the same line" when they come from the same file
 * instance (same interned file pointer; every import and snippet expansion
 * has its own) and the second starts on the line where the first ends (a
 * quoted token may span lines).
 *
 *   cf_next        any next token (the directive name, per occurrence).
 *   cf_next_arg    the next token if it is on the current line and is not a
 *                  brace. caddy's NextArg does return a '{' on the line; we
 *                  stop before it (as caddy's RemainingArgs does) so that
 *                  `while (cf_next_arg(d))` reads exactly the arguments and
 *                  leaves the block to cf_next_block. The very first call
 *                  (before any token) returns the first token, as in caddy.
 *   cf_next_block  if the next token is a '{' on the current line, enter that
 *                  block and return its first token (0 for an empty block).
 *                  Inside a block: move to the first token of the next line,
 *                  skipping what the caller left unread on the current line
 *                  (including a nested { } block it did not enter); return 0
 *                  at the '}' closing the block. caddy returns the next token
 *                  whatever its line; skipping is safer. A property whose line
 *                  ends with '{' is entered by calling cf_next_block again
 *                  right after reading its arguments, so blocks can nest:
 *
 *                      while (cf_next_block(d))            // outer lines
 *                          if (!strcmp(cf_val(d), "sub"))
 *                              while (cf_next_block(d))    // lines of sub { }
 *                                  ...
 *
 *   cf_file_name   before the first token: the first token's file (caddy
 *                  gives the dispenser's file name); "" when there are none.
 *
 * Errors are "FILE:LINE: MESSAGE near 'TOKEN'" at the current token (the first
 * token before any was read).
 */
#include <assert.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "corefile/corefile.h"
#include "corefile/cf_private.h"

void cf_disp_init(cf_disp *d, const cf_directive *dir)
{
    assert(d);
    memset(d, 0, sizeof *d);
    d->toks = dir ? dir->tokens : NULL;
    d->n = dir ? dir->ntokens : 0;
    d->cur = -1;
}

static const cf_token *cur_tok(const cf_disp *d)
{
    assert(d && d->cur >= -1 && (d->toks || d->n == 0));
    if (d->cur < 0 || (size_t)d->cur >= d->n)
        return NULL;
    return &d->toks[d->cur];
}

static int same_line(const cf_token *a, const cf_token *b)
{
    return a->file == b->file && a->line + cf_newlines(a->text) == b->line;
}

static int tok_is(const cf_token *t, const char *s)
{
    return strcmp(t->text, s) == 0;
}

int cf_next(cf_disp *d)
{
    assert(d && d->cur >= -1);
    if ((size_t)(d->cur + 1) >= d->n)
        return 0;
    d->cur++;
    return 1;
}

int cf_next_arg(cf_disp *d)
{
    if (d->cur < 0)
        return cf_next(d);
    size_t i = (size_t)d->cur + 1;
    if (i >= d->n)
        return 0;
    const cf_token *t = &d->toks[i];
    if (!same_line(&d->toks[d->cur], t) || tok_is(t, "{") || tok_is(t, "}"))
        return 0;
    d->cur++;
    return 1;
}

/* Index of the '}' matching the '{' at i (d->n if unmatched). */
static size_t skip_balanced(const cf_disp *d, size_t i)
{
    int depth = 0;
    for (; i < d->n; i++) {
        depth += tok_is(&d->toks[i], "{") - tok_is(&d->toks[i], "}");
        if (depth == 0)
            return i;
    }
    return d->n;
}

/* Enter the block whose '{' is at index i. */
static int enter_block(cf_disp *d, size_t i)
{
    d->cur = (long)i;
    if (i + 1 >= d->n)
        return 0;
    d->cur = (long)i + 1;
    if (tok_is(&d->toks[i + 1], "}"))
        return 0;
    d->nesting++;
    return 1;
}

int cf_next_block(cf_disp *d)
{
    size_t i = (size_t)(d->cur + 1);
    if (i < d->n && tok_is(&d->toks[i], "{") &&
        (d->cur < 0 || same_line(&d->toks[d->cur], &d->toks[i])))
        return enter_block(d, i);
    if (d->nesting == 0)
        return 0;
    for (; i < d->n; i++) {
        const cf_token *t = &d->toks[i];
        if (tok_is(t, "}")) {
            d->cur = (long)i;
            d->nesting--;
            return 0;
        }
        if (tok_is(t, "{")) {
            i = skip_balanced(d, i);
            continue;
        }
        if (i == 0 || !same_line(&d->toks[i - 1], t)) {
            d->cur = (long)i;
            return 1;
        }
    }
    /* ran out of tokens inside a block: only with hand-made token lists */
    d->cur = (long)d->n - 1;
    d->nesting = 0;
    return 0;
}

const char *cf_val(const cf_disp *d)
{
    const cf_token *t = cur_tok(d);
    return t ? t->text : "";
}

int cf_line(const cf_disp *d)
{
    const cf_token *t = cur_tok(d);
    return t ? t->line : 0;
}

const char *cf_file_name(const cf_disp *d)
{
    const cf_token *t = cur_tok(d);
    if (!t && d->n > 0)
        t = &d->toks[0];
    return t && t->file ? t->file : "";
}

int cf_remaining_args(cf_disp *d, const char **out, int max)
{
    assert(d && max >= 0);
    int n = 0;
    while (cf_next_arg(d)) {
        if (out && n < max)
            out[n] = cf_val(d);
        if (n < INT_MAX)
            n++;
    }
    return n;
}

/* ---- errors ------------------------------------------------------------ */

static int verr(cf_disp *d, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static int verr(cf_disp *d, const char *fmt, va_list ap)
{
    const cf_token *t = cur_tok(d);
    if (!t && d->n > 0)
        t = &d->toks[0];
    size_t cap = sizeof d->err;
    int n = snprintf(d->err, cap, "%s:%d: ", cf_file_name(d), t ? t->line : 0);
    size_t off = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
    n = vsnprintf(d->err + off, cap - off, fmt, ap);
    off += n < 0 ? 0 : (size_t)n < cap - off ? (size_t)n : cap - off - 1;
    snprintf(d->err + off, cap - off, " near '%s'", t ? t->text : "");
    return -1;
}

int cf_err(cf_disp *d, const char *fmt, ...)
{
    assert(d && fmt);
    va_list ap;
    va_start(ap, fmt);
    verr(d, fmt, ap);
    va_end(ap);
    return -1;
}

int cf_arg_err(cf_disp *d)
{
    return cf_err(d, "Wrong argument count or unexpected line ending");
}

int cf_prop_err(cf_disp *d)
{
    return cf_err(d, "unknown property '%s'", cf_val(d));
}

/* ---- values ------------------------------------------------------------ */

/* ---- durations: Go's time.ParseDuration ------------------------------------------------------- */

static const struct { const char *name; uint64_t ns; } units[] = {
    { "ns", 1ull }, { "us", 1000ull }, { "\xc2\xb5s", 1000ull }, { "\xce\xbcs", 1000ull },
    { "ms", 1000000ull }, { "s", 1000000000ull }, { "m", 60000000000ull },
    { "h", 3600000000000ull },
};

static int dur_err(char *err, size_t errlen, const char *what, const char *unit, const char *orig)
{
    if (unit)
        snprintf(err, errlen, "time: unknown unit \"%s\" in duration \"%s\"", unit, orig);
    else
        snprintf(err, errlen, "time: %s duration \"%s\"", what, orig);
    return -1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* One "<number><unit>" element; adds its value to *d. */
static int parse_elem(const char **sp, uint64_t *d, const char *orig, char *err, size_t errlen)
{
    const char *s = *sp;
    const uint64_t lim = 1ull << 63;
    if (!(*s == '.' || is_digit(*s)))
        return dur_err(err, errlen, "invalid", NULL, orig);
    uint64_t v = 0, f = 0;
    double scale = 1;
    const char *start = s;
    for (; is_digit(*s); s++) {
        if (v > (lim - 1) / 10)
            return dur_err(err, errlen, "invalid", NULL, orig);
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > lim)
            return dur_err(err, errlen, "invalid", NULL, orig);
    }
    int pre = s != start, post = 0;
    if (*s == '.') {
        s++;
        const char *fs = s;
        int overflow = 0;
        for (; is_digit(*s); s++) {
            if (overflow)
                continue;
            if (f > (lim - 1) / 10) {
                overflow = 1;
                continue;
            }
            f = f * 10 + (uint64_t)(*s - '0');
            scale *= 10;
        }
        post = s != fs;
    }
    if (!pre && !post)
        return dur_err(err, errlen, "invalid", NULL, orig);
    const char *us = s;
    while (*s && *s != '.' && !is_digit(*s))
        s++;
    if (s == us)
        return dur_err(err, errlen, "missing unit in", NULL, orig);
    char unit[16];
    snprintf(unit, sizeof unit, "%.*s", (int)(s - us), us);
    uint64_t un = 0;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if ((size_t)(s - us) == strlen(units[i].name) && strncmp(us, units[i].name, (size_t)(s - us)) == 0)
            un = units[i].ns;
    if (!un)
        return dur_err(err, errlen, NULL, unit, orig);
    if (v > lim / un)
        return dur_err(err, errlen, "invalid", NULL, orig);
    v *= un;
    if (f > 0) {
        v += (uint64_t)((double)f * ((double)un / scale));
        if (v > lim)
            return dur_err(err, errlen, "invalid", NULL, orig);
    }
    *d += v;
    if (*d > lim)
        return dur_err(err, errlen, "invalid", NULL, orig);
    *sp = s;
    return 0;
}

int cf_go_duration(const char *s, int64_t *ns, char *err, size_t errlen)
{
    assert(s && ns && (err || errlen == 0));
    const char *orig = s;
    int neg = 0;
    if (*s == '-' || *s == '+') {
        neg = *s == '-';
        s++;
    }
    if (strcmp(s, "0") == 0) {
        *ns = 0;
        return 0;
    }
    if (!*s)
        return dur_err(err, errlen, "invalid", NULL, orig);
    uint64_t d = 0;
    while (*s)
        if (parse_elem(&s, &d, orig, err, errlen) < 0)
            return -1;
    if (neg) {
        *ns = d == (1ull << 63) ? INT64_MIN : -(int64_t)d;
        return 0;
    }
    if (d > (uint64_t)INT64_MAX)
        return dur_err(err, errlen, "invalid", NULL, orig);
    *ns = (int64_t)d;
    return 0;
}

int cf_parse_duration(cf_disp *d, const char *s, double *seconds)
{
    assert(d && seconds);
    char err[CF_ERR_MAX];
    int64_t ns;
    if (cf_go_duration(s ? s : "", &ns, err, sizeof err) < 0)
        return cf_err(d, "%s", err);
    if (ns < 0)
        return cf_err(d, "negative duration '%s'", s);
    *seconds = (double)ns / 1e9;
    return 0;
}

int cf_parse_uint(cf_disp *d, const char *s, unsigned long min, unsigned long max,
                  unsigned long *out)
{
    assert(d && out && min <= max);
    if (!s || !*s || s[strspn(s, "0123456789")] != '\0')
        return cf_err(d, "invalid number '%s'", s ? s : "");
    unsigned long v = 0;
    int over = 0;
    for (const char *p = s; *p; p++) {
        unsigned dig = (unsigned)(*p - '0');
        if (v > (ULONG_MAX - dig) / 10)
            over = 1;
        else
            v = v * 10 + dig;
    }
    if (over || v < min || v > max)
        return cf_err(d, "number '%s' out of range [%lu, %lu]", s, min, max);
    *out = v;
    return 0;
}
