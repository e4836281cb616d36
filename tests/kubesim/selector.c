/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim selectors — parser and matcher for label and field selectors.
 *
 * The label parser is a small hand-written lexer + recursive descent parser
 * over the apimachinery grammar (labels.Parse): identifiers, the operators
 * `=`, `==`, `!=`, `!`, `in`, `notin`, parentheses and commas. Keys must be
 * qualified names ([dns-subdomain/]name, name <= 63 chars of [A-Za-z0-9-_.]
 * starting and ending alphanumeric) and values empty or such a name.
 * The field parser splits on unescaped commas and takes the first operator.
 */
#include "selector.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- requirement list helpers ---------- */

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || !errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static sel_req *add_req(selector *s, sel_op op, const char *key, size_t klen)
{
    sel_req *r = realloc(s->reqs, sizeof(*r) * (size_t)(s->n + 1));
    if (!r)
        return NULL;
    s->reqs = r;
    r = &s->reqs[s->n++];
    memset(r, 0, sizeof(*r));
    r->op = op;
    r->key = strndup(key, klen);
    return r->key ? r : NULL;
}

static int add_val(sel_req *r, const char *v, size_t vlen)
{
    char **vals = realloc(r->vals, sizeof(char *) * (size_t)(r->nvals + 1));
    if (!vals)
        return -1;
    r->vals = vals;
    vals[r->nvals] = strndup(v, vlen);
    if (!vals[r->nvals])
        return -1;
    r->nvals++;
    return 0;
}

void sel_free(selector *s)
{
    int i, j;
    if (!s)
        return;
    for (i = 0; i < s->n; i++) {
        free(s->reqs[i].key);
        for (j = 0; j < s->reqs[i].nvals; j++)
            free(s->reqs[i].vals[j]);
        free(s->reqs[i].vals);
    }
    free(s->reqs);
    s->reqs = NULL;
    s->n = 0;
}

/* ---------- syntax validation ---------- */

static int is_alnum(char c)
{
    return isalnum((unsigned char)c) != 0;
}

/* name part of a qualified name or a label value (non-empty) */
static int valid_name(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || n > 63 || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
        return 0;
    for (i = 0; i < n; i++)
        if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

static int valid_subdomain(const char *s, size_t n)
{
    size_t i;
    if (n == 0 || n > 253)
        return 0;
    if (!islower((unsigned char)s[0]) && !isdigit((unsigned char)s[0]))
        return 0;
    if (!islower((unsigned char)s[n - 1]) && !isdigit((unsigned char)s[n - 1]))
        return 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (!islower((unsigned char)c) && !isdigit((unsigned char)c) && c != '-' && c != '.')
            return 0;
    }
    return 1;
}

static int valid_key(const char *s, size_t n)
{
    const char *slash = memchr(s, '/', n);
    if (!slash)
        return valid_name(s, n);
    return valid_subdomain(s, (size_t)(slash - s)) &&
           valid_name(slash + 1, n - (size_t)(slash - s) - 1);
}

static int valid_value(const char *s, size_t n)
{
    return n == 0 || valid_name(s, n);
}

/* ---------- label lexer ---------- */

typedef enum {
    T_END, T_ID, T_EQ, T_DEQ, T_NE, T_NOT, T_IN, T_NOTIN, T_LP, T_RP, T_COMMA, T_BAD
} tok_type;

typedef struct lexer {
    const char *p;
    tok_type t;
    const char *s;
    size_t n;
} lexer;

static int special(char c)
{
    return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' ||
           c == '<' || c == '>' || isspace((unsigned char)c);
}

static void lex(lexer *lx)
{
    const char *p = lx->p;
    while (isspace((unsigned char)*p))
        p++;
    lx->s = p;
    lx->n = 1;
    switch (*p) {
    case '\0': lx->t = T_END; lx->n = 0; break;
    case '(': lx->t = T_LP; break;
    case ')': lx->t = T_RP; break;
    case ',': lx->t = T_COMMA; break;
    case '<': case '>': lx->t = T_BAD; break;
    case '=':
        if (p[1] == '=') { lx->t = T_DEQ; lx->n = 2; } else lx->t = T_EQ;
        break;
    case '!':
        if (p[1] == '=') { lx->t = T_NE; lx->n = 2; } else lx->t = T_NOT;
        break;
    default: {
        const char *q = p;
        while (*q && !special(*q))
            q++;
        lx->n = (size_t)(q - p);
        lx->t = T_ID;
        if (lx->n == 2 && !strncmp(p, "in", 2))
            lx->t = T_IN;
        else if (lx->n == 5 && !strncmp(p, "notin", 5))
            lx->t = T_NOTIN;
    }
    }
    lx->p = p + lx->n;
}

/* ---------- label parser ---------- */

static int parse_set(lexer *lx, sel_req *r, char *err, size_t errlen)
{
    lex(lx);
    if (lx->t != T_LP) {
        set_err(err, errlen, "found '%.*s', expected: '('", (int)lx->n, lx->s);
        return -1;
    }
    for (;;) {
        lex(lx);
        if (lx->t == T_ID || lx->t == T_IN || lx->t == T_NOTIN) {
            if (!valid_value(lx->s, lx->n)) {
                set_err(err, errlen, "invalid label value: \"%.*s\"", (int)lx->n, lx->s);
                return -1;
            }
            if (add_val(r, lx->s, lx->n) < 0)
                return -1;
            lex(lx);
        } else if (lx->t == T_COMMA || lx->t == T_RP) {
            if (add_val(r, "", 0) < 0) /* empty value, as apimachinery allows */
                return -1;
        }
        if (lx->t == T_RP)
            return 0;
        if (lx->t != T_COMMA) {
            set_err(err, errlen, "found '%.*s', expected: ',' or ')'", (int)lx->n, lx->s);
            return -1;
        }
    }
}

static int parse_single_value(lexer *lx, sel_req *r, char *err, size_t errlen)
{
    const char *save = lx->p;
    lex(lx);
    if (lx->t == T_END || lx->t == T_COMMA) { /* "k=" means k equals "" */
        lx->p = save;
        return add_val(r, "", 0);
    }
    if (lx->t != T_ID && lx->t != T_IN && lx->t != T_NOTIN) {
        set_err(err, errlen, "found '%.*s', expected: identifier", (int)lx->n, lx->s);
        return -1;
    }
    if (!valid_value(lx->s, lx->n)) {
        set_err(err, errlen, "invalid label value: \"%.*s\"", (int)lx->n, lx->s);
        return -1;
    }
    return add_val(r, lx->s, lx->n);
}

static int parse_requirement(lexer *lx, selector *out, char *err, size_t errlen)
{
    int negate = 0;
    const char *key;
    size_t klen;
    sel_req *r;
    const char *save;

    lex(lx);
    if (lx->t == T_NOT) {
        negate = 1;
        lex(lx);
    }
    if (lx->t != T_ID) {
        set_err(err, errlen, "found '%.*s', expected: identifier", (int)lx->n, lx->s);
        return -1;
    }
    key = lx->s;
    klen = lx->n;
    if (!valid_key(key, klen)) {
        set_err(err, errlen, "invalid label key \"%.*s\"", (int)klen, key);
        return -1;
    }
    save = lx->p;
    lex(lx);
    if (negate || lx->t == T_END || lx->t == T_COMMA) {
        if (negate && lx->t != T_END && lx->t != T_COMMA) {
            set_err(err, errlen, "exists operator does not take values");
            return -1;
        }
        lx->p = save;
        return add_req(out, negate ? SEL_NOTEXISTS : SEL_EXISTS, key, klen) ? 0 : -1;
    }
    switch (lx->t) {
    case T_EQ: case T_DEQ: case T_NE:
        r = add_req(out, lx->t == T_NE ? SEL_NE : SEL_EQ, key, klen);
        return r ? parse_single_value(lx, r, err, errlen) : -1;
    case T_IN: case T_NOTIN:
        r = add_req(out, lx->t == T_IN ? SEL_IN : SEL_NOTIN, key, klen);
        return r ? parse_set(lx, r, err, errlen) : -1;
    default:
        set_err(err, errlen, "found '%.*s', expected: in, notin, =, ==, !=, or end",
                (int)lx->n, lx->s);
        return -1;
    }
}

int sel_parse_labels(const char *s, selector *out, char *err, size_t errlen)
{
    lexer lx = {0};
    memset(out, 0, sizeof(*out));
    lx.p = s ? s : "";
    lex(&lx);
    if (lx.t == T_END)
        return 0;
    lx.p = lx.s;
    for (;;) {
        if (parse_requirement(&lx, out, err, errlen) < 0)
            goto fail;
        lex(&lx);
        if (lx.t == T_END)
            return 0;
        if (lx.t != T_COMMA) {
            set_err(err, errlen, "found '%.*s', expected: ',' or 'end of string'",
                    (int)lx.n, lx.s);
            goto fail;
        }
    }
fail:
    if (err && !err[0])
        set_err(err, errlen, "out of memory");
    sel_free(out);
    return -1;
}

/* ---------- field selectors ---------- */

/* Copy s[0..n) to a new string, resolving backslash escapes. */
static char *unescape(const char *s, size_t n)
{
    char *o = malloc(n + 1), *q = o;
    size_t i;
    if (!o)
        return NULL;
    for (i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n)
            i++;
        *q++ = s[i];
    }
    *q = '\0';
    return o;
}

static int parse_field_term(const char *t, size_t n, selector *out, char *err, size_t errlen)
{
    size_t i, oplen = 0;
    sel_op op = SEL_EQ;
    sel_req *r;
    char *v;

    for (i = 0; i < n; i++) {
        if (t[i] == '\\') { i++; continue; }
        if (t[i] == '!' && i + 1 < n && t[i + 1] == '=') { op = SEL_NE; oplen = 2; break; }
        if (t[i] == '=') { oplen = (i + 1 < n && t[i + 1] == '=') ? 2 : 1; break; }
    }
    if (i >= n || i == 0) {
        set_err(err, errlen, "invalid selector: '%.*s'; can't understand '%.*s'",
                (int)n, t, (int)n, t);
        return -1;
    }
    r = add_req(out, op, t, i);
    v = r ? unescape(t + i + oplen, n - i - oplen) : NULL;
    if (!v)
        return -1;
    if (add_val(r, v, strlen(v)) < 0) {
        free(v);
        return -1;
    }
    free(v);
    return 0;
}

int sel_parse_fields(const char *s, selector *out, char *err, size_t errlen)
{
    const char *start;
    memset(out, 0, sizeof(*out));
    if (!s)
        return 0;
    start = s;
    for (;;) {
        const char *p = start;
        while (*p && *p != ',') {
            if (*p == '\\' && p[1])
                p++;
            p++;
        }
        /* trim whitespace around the term */
        {
            const char *a = start, *b = p;
            while (a < b && isspace((unsigned char)*a)) a++;
            while (b > a && isspace((unsigned char)b[-1])) b--;
            if (b > a && parse_field_term(a, (size_t)(b - a), out, err, errlen) < 0) {
                sel_free(out);
                return -1;
            }
        }
        if (!*p)
            return 0;
        start = p + 1;
    }
}

/* ---------- matching ---------- */

static int in_set(const sel_req *r, const char *v)
{
    int i;
    for (i = 0; i < r->nvals; i++)
        if (!strcmp(r->vals[i], v))
            return 1;
    return 0;
}

static int req_match(const sel_req *r, const char *v)
{
    switch (r->op) {
    case SEL_EQ: case SEL_IN: return v && in_set(r, v);
    case SEL_NE: case SEL_NOTIN: return !v || !in_set(r, v);
    case SEL_EXISTS: return v != NULL;
    case SEL_NOTEXISTS: return v == NULL;
    }
    return 0;
}

int sel_match(const selector *s, sel_lookup fn, const void *ctx)
{
    int i;
    for (i = 0; s && i < s->n; i++)
        if (!req_match(&s->reqs[i], fn(ctx, s->reqs[i].key)))
            return 0;
    return 1;
}
