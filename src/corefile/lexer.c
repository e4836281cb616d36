/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lexer.c — splits a Corefile into tokens the way coredns/caddy's
 * caddyfile lexer does:
 *
 *   - tokens are separated by Unicode white space; '\r' is dropped wherever
 *     it appears (so CRLF files read exactly like LF files, also inside
 *     quotes — caddy keeps '\r' inside quotes, we do not);
 *   - a UTF-8 byte order mark at the very start is skipped;
 *   - '#' outside quotes starts a comment up to the end of the line, even in
 *     the middle of a word ("abc#def" gives "abc");
 *   - a token that *starts* with '"' runs to the next unescaped '"' and may
 *     contain white space and newlines; inside it "\"" is the only escape,
 *     every other backslash is kept as written; "" is an empty token; an
 *     unterminated quote at end of input yields what was read (if anything);
 *   - a '"' in the middle of a word is an ordinary character;
 *   - each token records the line where it starts. Only '\n' counts as a
 *     line break.
 *
 * Bytes are kept as they are (invalid UTF-8 is not replaced).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "corefile/cf_private.h"
#include "common/log.h"
#include "common/vec.h"

/* ---- allocation helpers ------------------------------------------------ */

void *cf_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        log_fatal("corefile: out of memory");
    return q;
}

char *cf_xstrndup(const char *s, size_t n)
{
    assert(s);
    char *d = cf_xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *cf_xstrdup(const char *s)
{
    return cf_xstrndup(s, strlen(s));
}

void cf_grow(void **vec, size_t *cap, size_t need, size_t elsz)
{
    assert(vec && cap && elsz > 0);
    if (vec_reserve(vec, cap, need, elsz, 8) < 0)
        log_fatal("corefile: out of memory");
}

int cf_newlines(const char *s)
{
    assert(s);
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- token vector ------------------------------------------------------ */

void cf_tokvec_push(cf_tokvec *tv, char *text, int line, int inst)
{
    assert(tv && text);
    cf_grow((void **)&tv->v, &tv->cap, tv->n + 1, sizeof *tv->v);
    tv->v[tv->n].text = text;
    tv->v[tv->n].line = line;
    tv->v[tv->n].inst = inst;
    tv->n++;
}

void cf_tokvec_free(cf_tokvec *tv)
{
    for (size_t i = 0; i < tv->n; i++)
        free(tv->v[i].text);
    free(tv->v);
    tv->v = NULL;
    tv->n = tv->cap = 0;
}

/* ---- the lexer --------------------------------------------------------- */

/* A growable byte buffer for the token being read. */
typedef struct sbuf {
    char *b;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *s, char c)
{
    cf_grow((void **)&s->b, &s->cap, s->n + 1, 1);
    s->b[s->n++] = c;
}

/* Length of the white-space character at p (what Go's unicode.IsSpace
 * accepts), or 0 if p does not start with one. */
static size_t space_len(const unsigned char *p, size_t left)
{
    if (*p == ' ' || (*p >= '\t' && *p <= '\r'))
        return 1;
    if (left >= 2 && p[0] == 0xC2 && (p[1] == 0x85 || p[1] == 0xA0))
        return 2;                               /* NEL, NBSP */
    if (left < 3)
        return 0;
    if (p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80)
        return 3;                               /* U+1680 */
    if (p[0] == 0xE2 && p[1] == 0x80 &&
        (p[2] <= 0x8A || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF) && p[2] >= 0x80)
        return 3;                               /* U+2000-200A, 2028, 2029, 202F */
    if (p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F)
        return 3;                               /* U+205F */
    if (p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80)
        return 3;                               /* U+3000 */
    return 0;
}

typedef struct lexer {
    const unsigned char *p;
    size_t len, i;
    int line;
    int inst;
    cf_tokvec *out;
} lexer;

/* Read a quoted token; l->i is just past the opening quote. */
static void lex_quoted(lexer *l, int start_line)
{
    sbuf s = { 0 };
    int closed = 0;
    while (l->i < l->len) {
        char c = (char)l->p[l->i++];
        if (c == '\r')
            continue;
        if (c == '"') {
            closed = 1;
            break;
        }
        if (c == '\\' && l->i < l->len) {
            char e = (char)l->p[l->i];
            if (e == '"') {
                l->i++;
                sb_add(&s, '"');
                continue;
            }
            sb_add(&s, '\\');         /* kept; e is taken literally */
            c = e;
            l->i++;
            if (c == '\r')
                continue;
        }
        if (c == '\n')
            l->line++;
        sb_add(&s, c);
    }
    if (closed || s.n > 0) {
        cf_tokvec_push(l->out, cf_xstrndup(s.b ? s.b : "", s.n), start_line, l->inst);
    }
    free(s.b);
}

/* Read an unquoted word; l->i is at its first byte. */
static void lex_word(lexer *l)
{
    sbuf s = { 0 };
    while (l->i < l->len) {
        unsigned char c = l->p[l->i];
        if (c == '\r') {
            l->i++;
            continue;
        }
        if (c == '#' || space_len(l->p + l->i, l->len - l->i))
            break;
        sb_add(&s, (char)c);
        l->i++;
    }
    cf_tokvec_push(l->out, cf_xstrndup(s.b, s.n), l->line, l->inst);
    free(s.b);
}

static void skip_comment(lexer *l)
{
    while (l->i < l->len && l->p[l->i] != '\n')
        l->i++;
}

void cf_lex(const char *buf, size_t len, int inst, cf_tokvec *out, size_t max)
{
    assert((buf || len == 0) && out);
    lexer l = { (const unsigned char *)buf, len, 0, 1, inst, out };
    if (len >= 3 && l.p[0] == 0xEF && l.p[1] == 0xBB && l.p[2] == 0xBF)
        l.i = 3;
    while (l.i < l.len && out->n <= max) {
        unsigned char c = l.p[l.i];
        size_t sp = space_len(l.p + l.i, l.len - l.i);
        if (sp) {
            if (c == '\n')
                l.line++;
            l.i += sp;
        } else if (c == '#') {
            skip_comment(&l);
        } else if (c == '"') {
            l.i++;
            lex_quoted(&l, l.line);
        } else {
            lex_word(&l);
        }
    }
}
