/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tmpl.c — the Go text/template subset of the template plugin (tmpl.h).
 *
 * Compiling lexes and parses the text into nodes (text, or an action
 * holding a pipeline of commands of operands) and prints the tree the way
 * Go's parse package does, for the metric label. Executing walks the nodes
 * with typed values (string, int, uint64, uint16, uint8, bool, the match
 * list, the group map, the message and the question) and applies Go's
 * rules for argument types and printing.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sbuf.h"
#include "plugin/template/tmpl.h"
#include "common/vec.h"

/* ---- the tree --------------------------------------------------------- */

enum { A_FIELD, A_DOT, A_STRING, A_NUMBER, A_BOOL, A_FUNC, A_PIPE };
enum { F_ZONE, F_NAME, F_REGEX, F_MATCH, F_GROUP, F_CLASS, F_TYPE, F_MESSAGE, F_QUESTION,
       F_REMOTE, F_META };
enum { S_NONE, S_GROUP_KEY, S_MSG_ID, S_Q_NAME, S_Q_TYPE, S_Q_CLASS };
enum { FN_INDEX, FN_LEN, FN_PRINT, FN_PARSEINT };

typedef struct tpipe tpipe;

typedef struct targ {
    int kind;
    int field, sub;                 /* A_FIELD */
    char *key;                      /* A_FIELD .Group.KEY */
    char *text;                     /* as Go prints it */
    char *str;                      /* A_STRING value */
    size_t slen;
    int64_t num;                    /* A_NUMBER, A_BOOL */
    int fn;                         /* A_FUNC */
    tpipe *pipe;                    /* A_PIPE */
} targ;

typedef struct tcmd {
    targ *args;
    size_t nargs;
} tcmd;

struct tpipe {
    tcmd *cmds;
    size_t ncmds;
};

typedef struct tnode {
    char *text;                     /* text node, or NULL */
    size_t tlen;
    tpipe *pipe;                    /* action */
} tnode;

struct tmpl {
    tnode *nodes;
    size_t n;
    char *str;
    unsigned uses;
};

static void pipe_free(tpipe *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ncmds; i++) {
        for (size_t j = 0; j < p->cmds[i].nargs; j++) {
            targ *a = &p->cmds[i].args[j];
            free(a->key);
            free(a->text);
            free(a->str);
            pipe_free(a->pipe);
        }
        free(p->cmds[i].args);
    }
    free(p->cmds);
    free(p);
}

void tmpl_free(tmpl *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->nodes[i].text);
        pipe_free(t->nodes[i].pipe);
    }
    free(t->nodes);
    free(t->str);
    free(t);
}

const char *tmpl_string(const tmpl *t) { return t->str; }
unsigned tmpl_uses(const tmpl *t) { return t->uses; }

/* ---- parsing ---------------------------------------------------------- */

typedef struct parser {
    const char *s;                  /* the action's text */
    size_t pos, end;
    char *err;
    size_t errlen;
    unsigned uses;
    int failed;
} parser;

static int perr(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(parser *p, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, p->errlen, fmt, ap);
        va_end(ap);
        p->failed = 1;
    }
    return -1;
}

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static int is_alnum_(int c) { return c == '_' || isalnum(c) || c >= 0x80; }

static void skip_space(parser *p)
{
    while (p->pos < p->end && is_space((unsigned char)p->s[p->pos]))
        p->pos++;
}

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static const char *const builtin_funcs[] = {
    "and", "call", "html", "js", "not", "or", "printf", "println", "slice", "urlquery",
    "eq", "ge", "gt", "le", "lt", "ne", NULL,
};
static const char *const keywords[] = {
    "if", "else", "end", "range", "with", "define", "template", "block", "break",
    "continue", NULL,
};

static int in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (!strcmp(*l, s))
            return 1;
    return 0;
}

/* The UTF-8 form of code point v (at most 0x10ffff) into u; its length. */
static size_t utf8_put(unsigned char *u, unsigned long v)
{
    if (v < 0x80) {
        u[0] = (unsigned char)v;
        return 1;
    }
    if (v < 0x800) {
        u[0] = (unsigned char)(0xc0 | (v >> 6));
        u[1] = (unsigned char)(0x80 | (v & 0x3f));
        return 2;
    }
    if (v < 0x10000) {
        u[0] = (unsigned char)(0xe0 | (v >> 12));
        u[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
        u[2] = (unsigned char)(0x80 | (v & 0x3f));
        return 3;
    }
    u[0] = (unsigned char)(0xf0 | (v >> 18));
    u[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3f));
    u[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3f));
    u[3] = (unsigned char)(0x80 | (v & 0x3f));
    return 4;
}

/* Go's strconv.Unquote of a "..." literal starting at s[0] == '"'; the
 * value into *out. Returns the literal's length, or -1. */
static long unquote(parser *p, const char *s, size_t avail, char **out, size_t *outlen)
{
    sbuf b = { 0 };
    size_t i = 1;
    while (i < avail && s[i] != '"') {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            break;
        if (c != '\\') {
            sbuf_add(&b, s + i, 1);
            i++;
            continue;
        }
        if (++i >= avail)
            break;
        char e = s[i++];
        const char *simple = strchr("abfnrtv\\\"", e);
        if (simple && e) {
            static const char vals[] = "\a\b\f\n\r\t\v\\\"";
            sbuf_add(&b, &vals[simple - "abfnrtv\\\""], 1);
            continue;
        }
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : (e >= '0' && e <= '7') ? 3 : 0;
        if (!digits) {
            free(b.p);
            return perr(p, "invalid syntax in string literal: unknown escape \\%c", e);
        }
        unsigned long v = 0;
        int base = (e >= '0' && e <= '7') ? 8 : 16;
        size_t start = base == 8 ? i - 1 : i;
        for (int k = 0; k < digits; k++) {
            if (start + (size_t)k >= avail || !isxdigit((unsigned char)s[start + (size_t)k]) ||
                (base == 8 && (s[start + (size_t)k] < '0' || s[start + (size_t)k] > '7'))) {
                free(b.p);
                return perr(p, "invalid syntax in string literal: bad escape");
            }
            char d[2] = { s[start + (size_t)k], 0 };
            v = v * (unsigned long)base + strtoul(d, NULL, 16);
        }
        i = start + (size_t)digits;
        if (e == 'x' || base == 8) {
            if (v > 255) {
                free(b.p);
                return perr(p, "invalid syntax in string literal: octal escape above 255");
            }
            unsigned char ch = (unsigned char)v;
            sbuf_add(&b, (const char *)&ch, 1);
        } else {
            if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) {
                free(b.p);
                return perr(p, "invalid syntax in string literal: bad code point");
            }
            unsigned char u[4];
            size_t n = utf8_put(u, v);
            sbuf_add(&b, (const char *)u, n);
        }
    }
    if (i >= avail || s[i] != '"') {
        free(b.p);
        return perr(p, "unterminated quoted string");
    }
    if (b.oom) {
        free(b.p);
        return perr(p, "out of memory");
    }
    if (!b.p)
        b.p = calloc(1, 1);
    *out = b.p;
    *outlen = b.len;
    return (long)i + 1;
}

/* An integer literal as Go reads it (0x, 0o, 0b, leading 0 octal, _). */
static int parse_int_lit(const char *t, int64_t *v)
{
    const char *s = t;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; s += 2; }
    else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) { base = 8; s += 2; }
    else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) { base = 2; s += 2; }
    else if (s[0] == '0' && s[1]) { base = 8; s += 1; }
    if (!*s)
        return -1;
    uint64_t acc = 0;
    int ndig = 0;
    for (; *s; s++) {
        if (*s == '_')
            continue;
        int d = isdigit((unsigned char)*s) ? *s - '0'
              : isxdigit((unsigned char)*s) ? tolower((unsigned char)*s) - 'a' + 10 : 99;
        if (d >= base)
            return -1;
        if (acc > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return -1;
        acc = acc * (uint64_t)base + (uint64_t)d;
        ndig++;
    }
    if (!ndig || acc > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return -1;
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

static tpipe *parse_pipe(parser *p, int in_paren);

static int field_of(parser *p, const char *name, int *f)
{
    static const struct { const char *n; int f; } fields[] = {
        { "Zone", F_ZONE }, { "Name", F_NAME }, { "Regex", F_REGEX }, { "Match", F_MATCH },
        { "Group", F_GROUP }, { "Class", F_CLASS }, { "Type", F_TYPE },
        { "Message", F_MESSAGE }, { "Question", F_QUESTION }, { "Remote", F_REMOTE },
        { "Meta", F_META },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (!strcmp(fields[i].n, name)) {
            *f = fields[i].f;
            return 0;
        }
    if (!strcmp(name, "Var"))
        return perr(p, "field .Var is not supported (no var option)");
    return perr(p, "can't evaluate field %s (not supported)", name);
}

/* One operand at p->pos into a. */
static int parse_operand(parser *p, targ *a)
{
    const char *s = p->s;
    size_t st = p->pos;
    char c = s[st];
    memset(a, 0, sizeof *a);
    if (c == '.' && (st + 1 >= p->end || !is_alnum_((unsigned char)s[st + 1]) ||
                     isdigit((unsigned char)s[st + 1]))) {
        if (st + 1 < p->end && isdigit((unsigned char)s[st + 1]))
            return perr(p, "floating-point constants are not supported");
        p->pos++;
        a->kind = A_DOT;
        a->text = dupn(".", 1);
        return perr(p, "the bare dot (.) is not supported: name a field");
    }
    if (c == '.') {
        /* .Ident[.Ident...] */
        char *idents[4];
        int n = 0;
        while (p->pos < p->end && s[p->pos] == '.' && p->pos + 1 < p->end &&
               is_alnum_((unsigned char)s[p->pos + 1]) && !isdigit((unsigned char)s[p->pos + 1])) {
            size_t b = ++p->pos;
            while (p->pos < p->end && is_alnum_((unsigned char)s[p->pos]))
                p->pos++;
            if (n == 4) {
                for (int i = 0; i < n; i++)
                    free(idents[i]);
                return perr(p, "field chain %.*s is not supported", (int)(p->pos - st), s + st);
            }
            idents[n++] = dupn(s + b, p->pos - b);
        }
        a->kind = A_FIELD;
        a->text = dupn(s + st, p->pos - st);
        int rc = field_of(p, idents[0], &a->field);
        if (rc == 0 && n > 1) {
            if (a->field == F_GROUP && n == 2) {
                a->sub = S_GROUP_KEY;
                a->key = idents[1];
                idents[1] = NULL;
            } else if (a->field == F_MESSAGE && n == 2 && !strcmp(idents[1], "Id")) {
                a->sub = S_MSG_ID;
            } else if (a->field == F_QUESTION && n == 2 && !strcmp(idents[1], "Name")) {
                a->sub = S_Q_NAME;
            } else if (a->field == F_QUESTION && n == 2 && !strcmp(idents[1], "Qtype")) {
                a->sub = S_Q_TYPE;
            } else if (a->field == F_QUESTION && n == 2 && !strcmp(idents[1], "Qclass")) {
                a->sub = S_Q_CLASS;
            } else {
                rc = perr(p, "field %s is not supported", a->text ? a->text : "");
            }
        }
        if (rc == 0 && a->field == F_MESSAGE && a->sub == S_NONE)
            p->uses |= TMPL_USES_MESSAGE;
        if (rc == 0 && a->field == F_QUESTION && a->sub == S_NONE)
            p->uses |= TMPL_USES_QUESTION;
        for (int i = 0; i < n; i++)
            free(idents[i]);
        if (rc == 0 && p->pos < p->end && s[p->pos] == '.')
            return perr(p, "unexpected . after term %s", a->text ? a->text : "");
        return rc;
    }
    if (c == '"') {
        long n = unquote(p, s + st, p->end - st, &a->str, &a->slen);
        if (n < 0)
            return -1;
        a->kind = A_STRING;
        a->text = dupn(s + st, (size_t)n);
        p->pos += (size_t)n;
        return 0;
    }
    if (c == '`') {
        const char *e = memchr(s + st + 1, '`', p->end - st - 1);
        if (!e)
            return perr(p, "unterminated raw quoted string");
        size_t n = (size_t)(e - (s + st)) + 1;
        a->kind = A_STRING;
        a->text = dupn(s + st, n);
        /* Go drops carriage returns from raw strings. */
        a->str = malloc(n);
        if (a->str) {
            size_t k = 0;
            for (size_t i = st + 1; i < st + n - 1; i++)
                if (s[i] != '\r')
                    a->str[k++] = s[i];
            a->str[k] = '\0';
            a->slen = k;
        }
        p->pos += n;
        return 0;
    }
    if (c == '\'')
        return perr(p, "character constants are not supported");
    if (c == '$')
        return perr(p, "variables are not supported");
    if (isdigit((unsigned char)c) || ((c == '-' || c == '+') && st + 1 < p->end &&
                                      (isdigit((unsigned char)s[st + 1]) || s[st + 1] == '.'))) {
        size_t e = st + 1;
        while (e < p->end && (is_alnum_((unsigned char)s[e]) || s[e] == '.' ||
                              ((s[e] == '+' || s[e] == '-') && (s[e - 1] == 'e' || s[e - 1] == 'E' ||
                                                                  s[e - 1] == 'p' || s[e - 1] == 'P'))))
            e++;
        a->kind = A_NUMBER;
        a->text = dupn(s + st, e - st);
        p->pos = e;
        if (!a->text)
            return perr(p, "out of memory");
        if (parse_int_lit(a->text, &a->num) < 0)
            return perr(p, "number %s is not supported (integers only)", a->text);
        return 0;
    }
    if (c == '(') {
        p->pos++;
        a->kind = A_PIPE;
        a->pipe = parse_pipe(p, 1);
        if (!a->pipe)
            return -1;
        if (p->pos < p->end && s[p->pos] == '.')
            return perr(p, "fields of a parenthesized pipeline are not supported");
        return 0;
    }
    if (is_alnum_((unsigned char)c)) {
        size_t e = st;
        while (e < p->end && is_alnum_((unsigned char)s[e]))
            e++;
        a->text = dupn(s + st, e - st);
        p->pos = e;
        if (!a->text)
            return perr(p, "out of memory");
        if (!strcmp(a->text, "true") || !strcmp(a->text, "false")) {
            a->kind = A_BOOL;
            a->num = a->text[0] == 't';
            return 0;
        }
        if (!strcmp(a->text, "nil"))
            return perr(p, "nil is not supported");
        if (in_list(keywords, a->text))
            return perr(p, "{{%s}} is not supported", a->text);
        a->kind = A_FUNC;
        if (!strcmp(a->text, "index")) a->fn = FN_INDEX;
        else if (!strcmp(a->text, "len")) a->fn = FN_LEN;
        else if (!strcmp(a->text, "print")) a->fn = FN_PRINT;
        else if (!strcmp(a->text, "parseInt")) a->fn = FN_PARSEINT;
        else if (in_list(builtin_funcs, a->text))
            return perr(p, "function \"%s\" is not supported", a->text);
        else
            return perr(p, "function \"%s\" not defined", a->text);
        if (p->pos < p->end && s[p->pos] == '.')
            return perr(p, "unexpected . after term %s", a->text);
        return 0;
    }
    if (c == ':' || c == '=')
        return perr(p, "variables are not supported");
    return perr(p, "unexpected \"%c\" in command", c);
}

static tpipe *parse_pipe(parser *p, int in_paren)
{
    tpipe *pp = calloc(1, sizeof *pp);
    if (!pp) {
        perr(p, "out of memory");
        return NULL;
    }
    for (;;) {
        tcmd cmd = { 0 };
        for (;;) {
            skip_space(p);
            if (p->pos >= p->end || p->s[p->pos] == '|' || p->s[p->pos] == ')')
                break;
            if (VEC_RESIZE(cmd.args, cmd.nargs + 1) < 0) {
                perr(p, "out of memory");
                break;
            }
            int rc = parse_operand(p, &cmd.args[cmd.nargs++]);
            if (rc < 0)
                break;
            if (p->pos < p->end && !is_space((unsigned char)p->s[p->pos]) &&
                p->s[p->pos] != '|' && p->s[p->pos] != ')') {
                perr(p, "unexpected \"%c\" in operand", p->s[p->pos]);
                break;
            }
        }
        if (VEC_RESIZE(pp->cmds, pp->ncmds + 1) < 0) {
            free(cmd.args);
            perr(p, "out of memory");
            pipe_free(pp);
            return NULL;
        }
        pp->cmds[pp->ncmds++] = cmd;
        if (p->failed) {
            pipe_free(pp);
            return NULL;
        }
        if (cmd.nargs == 0) {
            perr(p, "missing value for command");
            pipe_free(pp);
            return NULL;
        }
        if (pp->ncmds > 1) {
            int k = cmd.args[0].kind;
            if (k == A_BOOL || k == A_DOT || k == A_NUMBER || k == A_STRING) {
                perr(p, "non executable command in pipeline stage %zu", pp->ncmds);
                pipe_free(pp);
                return NULL;
            }
        }
        if (p->pos < p->end && p->s[p->pos] == '|') {
            p->pos++;
            continue;
        }
        if (p->pos < p->end && p->s[p->pos] == ')') {
            if (!in_paren) {
                perr(p, "unexpected right paren");
                pipe_free(pp);
                return NULL;
            }
            p->pos++;
            return pp;
        }
        if (in_paren) {
            perr(p, "unclosed left paren");
            pipe_free(pp);
            return NULL;
        }
        return pp;
    }
}

static void print_pipe(sbuf *b, const tpipe *p)
{
    for (size_t i = 0; i < p->ncmds; i++) {
        if (i)
            sbuf_str(b, " | ");
        for (size_t j = 0; j < p->cmds[i].nargs; j++) {
            const targ *a = &p->cmds[i].args[j];
            if (j)
                sbuf_str(b, " ");
            if (a->kind == A_PIPE) {
                sbuf_str(b, "(");
                print_pipe(b, a->pipe);
                sbuf_str(b, ")");
            } else {
                sbuf_str(b, a->text ? a->text : "");
            }
        }
    }
}

static int add_node(tmpl *t, char *text, size_t tlen, tpipe *pipe)
{
    if (VEC_RESIZE(t->nodes, t->n + 1) < 0)
        return -1;
    t->nodes[t->n++] = (tnode){ .text = text, .tlen = tlen, .pipe = pipe };
    return 0;
}

int tmpl_compile(const char *text, tmpl **out, char *err, size_t errlen)
{
    *out = NULL;
    tmpl *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    size_t len = strlen(text), pos = 0;
    int trim_next = 0;
    parser p = { .s = text, .err = err, .errlen = errlen };
    while (pos <= len) {
        const char *open = strstr(text + pos, "{{");
        size_t tend = open ? (size_t)(open - text) : len;
        size_t astart = open ? tend + 2 : len;
        int ltrim = open && astart + 1 < len + 1 && text[astart] == '-' &&
                    astart + 1 < len && is_space((unsigned char)text[astart + 1]);
        size_t tb = pos, te = tend;
        if (trim_next)
            while (tb < te && is_space((unsigned char)text[tb]))
                tb++;
        if (ltrim)
            while (te > tb && is_space((unsigned char)text[te - 1]))
                te--;
        if (te > tb) {
            char *tx = dupn(text + tb, te - tb);
            if (!tx || add_node(t, tx, te - tb, NULL) < 0) {
                free(tx);
                perr(&p, "out of memory");
                goto fail;
            }
        }
        if (!open)
            break;
        size_t a = astart + (ltrim ? 2 : 0);
        /* The action runs to the first "}}" outside quotes. */
        size_t e = a;
        int rtrim = 0;
        if (text[a] == '/' && text[a + 1] == '*') {
            const char *ce = strstr(text + a + 2, "*/");
            if (!ce) {
                perr(&p, "unclosed comment");
                goto fail;
            }
            e = (size_t)(ce - text) + 2;
            if (!strncmp(text + e, " -}}", 4)) {
                rtrim = 1;
                e += 4;
            } else if (!strncmp(text + e, "}}", 2)) {
                e += 2;
            } else {
                perr(&p, "comment ends before closing delimiter");
                goto fail;
            }
            trim_next = rtrim;
            pos = e;
            continue;
        }
        while (e < len) {
            if (text[e] == '"' || text[e] == '`' || text[e] == '\'') {
                char q = text[e++];
                while (e < len && text[e] != q && (q == '`' || text[e] != '\n')) {
                    if (q != '`' && text[e] == '\\' && e + 1 < len)
                        e++;
                    e++;
                }
                if (e >= len || text[e] != q) {
                    perr(&p, q == '`' ? "unterminated raw quoted string"
                                      : q == '"' ? "unterminated quoted string"
                                                 : "unterminated character constant");
                    goto fail;
                }
                e++;
                continue;
            }
            if (text[e] == '}' && text[e + 1] == '}')
                break;
            e++;
        }
        if (e >= len) {
            perr(&p, "unclosed action");
            goto fail;
        }
        size_t ae = e;
        if (ae >= a + 2 && text[ae - 1] == '-' && is_space((unsigned char)text[ae - 2])) {
            rtrim = 1;
            ae -= 2;
        }
        p.pos = a;
        p.end = ae;
        skip_space(&p);
        if (p.pos >= p.end) {
            perr(&p, "missing value for command");
            goto fail;
        }
        tpipe *pp = parse_pipe(&p, 0);
        if (!pp)
            goto fail;
        if (add_node(t, NULL, 0, pp) < 0) {
            pipe_free(pp);
            perr(&p, "out of memory");
            goto fail;
        }
        trim_next = rtrim;
        pos = e + 2;
    }
    t->uses = p.uses;
    sbuf b = { 0 };
    sbuf_add(&b, "", 0);
    for (size_t i = 0; i < t->n; i++) {
        if (t->nodes[i].text) {
            sbuf_add(&b, t->nodes[i].text, t->nodes[i].tlen);
        } else {
            sbuf_str(&b, "{{");
            print_pipe(&b, t->nodes[i].pipe);
            sbuf_str(&b, "}}");
        }
    }
    if (b.oom) {
        free(b.p);
        perr(&p, "out of memory");
        goto fail;
    }
    t->str = b.p;
    *out = t;
    return 0;
fail:
    tmpl_free(t);
    return -1;
}

/* ---- execution -------------------------------------------------------- */

enum { V_NONE, V_STR, V_INT, V_U64, V_U16, V_U8, V_BOOL, V_MATCH, V_GROUP, V_MSG, V_QUESTION };

typedef struct val {
    int k;
    const char *s;                  /* V_STR */
    size_t n;
    int64_t i;                      /* V_INT, V_BOOL */
    uint64_t u;                     /* unsigned kinds */
} val;

typedef struct exec {
    const tmpl_data *d;
    char *err;
    size_t errlen;
    char **owned;                   /* strings made while running */
    size_t nowned;
    int failed;
} exec;

static int xerr(exec *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int xerr(exec *x, const char *fmt, ...)
{
    if (!x->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->err, x->errlen, fmt, ap);
        va_end(ap);
        x->failed = 1;
    }
    return -1;
}

static const char *keep(exec *x, char *s)
{
    if (!s)
        return NULL;
    if (VEC_RESIZE(x->owned, x->nowned + 1) < 0) {
        free(s);
        return NULL;
    }
    x->owned[x->nowned++] = s;
    return s;
}

static val vstr(const char *s) { return (val){ .k = V_STR, .s = s ? s : "", .n = s ? strlen(s) : 0 }; }

static const char *type_name(int k)
{
    static const char *const names[] = {
        "<nil>", "string", "int", "uint64", "uint16", "uint8", "bool", "[]string",
        "map[string]string", "*dns.Msg", "*dns.Question",
    };
    return names[k];
}

static const char *group_get(const tmpl_data *d, const char *key)
{
    for (size_t i = d->nmatch; i-- > 0;)
        if (d->gname && d->gname[i][0] && !strcmp(d->gname[i], key))
            return d->match[i];
    if (key[0] && (key[0] != '0' || !key[1])) {
        size_t i = 0;
        const char *k = key;
        for (; *k && isdigit((unsigned char)*k); k++) {
            if (i > d->nmatch)
                break;
            i = i * 10 + (size_t)(*k - '0');
        }
        if (!*k && i < d->nmatch)
            return d->match[i];
    }
    return NULL;
}

typedef struct gkv { const char *k, *v; char num[24]; } gkv;

static int gkv_cmp(const void *a, const void *b)
{
    return strcmp(((const gkv *)a)->k, ((const gkv *)b)->k);
}

/* fmt's %v of a value. */
static void print_val(sbuf *b, const tmpl_data *d, const val *v)
{
    switch (v->k) {
    case V_NONE: sbuf_str(b, "<no value>"); break;
    case V_STR: sbuf_add(b, v->s, v->n); break;
    case V_INT: sbuf_fmt(b, "%" PRId64, v->i); break;
    case V_U64: case V_U16: case V_U8: sbuf_fmt(b, "%" PRIu64, v->u); break;
    case V_BOOL: sbuf_str(b, v->i ? "true" : "false"); break;
    case V_MATCH:
        sbuf_str(b, "[");
        for (size_t i = 0; i < d->nmatch; i++) {
            if (i)
                sbuf_str(b, " ");
            sbuf_str(b, d->match[i]);
        }
        sbuf_str(b, "]");
        break;
    case V_GROUP: {
        gkv *kv = calloc(2 * d->nmatch + 1, sizeof *kv);
        if (!kv) {
            b->oom = 1;
            break;
        }
        size_t n = 0;
        for (size_t i = 0; i < d->nmatch; i++) {
            snprintf(kv[n].num, sizeof kv[n].num, "%zu", i);
            kv[n].k = kv[n].num;
            n++;
        }
        for (size_t i = 0; i < d->nmatch; i++) {
            if (!d->gname || !d->gname[i][0])
                continue;
            size_t j = 0;
            while (j < n && strcmp(kv[j].k, d->gname[i]))
                j++;
            if (j == n)
                kv[n++].k = d->gname[i];
        }
        for (size_t j = 0; j < n; j++)
            kv[j].v = group_get(d, kv[j].k);
        qsort(kv, n, sizeof *kv, gkv_cmp);
        sbuf_str(b, "map[");
        for (size_t j = 0; j < n; j++) {
            if (j)
                sbuf_str(b, " ");
            sbuf_str(b, kv[j].k);
            sbuf_str(b, ":");
            sbuf_str(b, kv[j].v ? kv[j].v : "");
        }
        sbuf_str(b, "]");
        free(kv);
        break;
    }
    case V_MSG: sbuf_str(b, d->message ? d->message : ""); break;
    case V_QUESTION: sbuf_str(b, d->question ? d->question : ""); break;
    }
}

static int eval_pipe(exec *x, const tpipe *p, val *out);

/* A field; args (the command's arguments and the previous command's
 * value) go to .Meta, the one method. */
static int eval_field(exec *x, const targ *a, const val *args, size_t total, val *out)
{
    const tmpl_data *d = x->d;
    if (a->field == F_META) {
        if (a->sub != S_NONE)
            return xerr(x, "can't evaluate %s", a->text);
        if (total != 1)
            return xerr(x, "wrong number of args for Meta: want 1 got %zu", total);
        if (args[0].k != V_STR)
            return xerr(x, "wrong type for value; expected string; got %s", type_name(args[0].k));
        char buf[1024];
        const char *v = d->meta ? d->meta(d->meta_ctx, args[0].s, buf, sizeof buf) : NULL;
        *out = vstr(v ? keep(x, strdup(v)) : "");
        return 0;
    }
    if (total)
        return xerr(x, "%s has arguments but cannot be invoked as function", a->text);
    switch (a->field) {
    case F_ZONE: *out = vstr(d->zone); return 0;
    case F_NAME: *out = vstr(d->name); return 0;
    case F_REGEX: *out = vstr(d->regex); return 0;
    case F_CLASS: *out = vstr(d->cls); return 0;
    case F_TYPE: *out = vstr(d->type); return 0;
    case F_REMOTE: *out = vstr(d->remote); return 0;
    case F_MATCH: *out = (val){ .k = V_MATCH }; return 0;
    case F_GROUP:
        if (a->sub == S_GROUP_KEY) {
            const char *v = group_get(d, a->key);
            *out = v ? vstr(v) : (val){ .k = V_NONE };
        } else {
            *out = (val){ .k = V_GROUP };
        }
        return 0;
    case F_MESSAGE:
        *out = a->sub == S_MSG_ID ? (val){ .k = V_U16, .u = d->id } : (val){ .k = V_MSG };
        return 0;
    case F_QUESTION:
        if (a->sub == S_Q_NAME) *out = vstr(d->qname);
        else if (a->sub == S_Q_TYPE) *out = (val){ .k = V_U16, .u = d->qtype };
        else if (a->sub == S_Q_CLASS) *out = (val){ .k = V_U16, .u = d->qclass };
        else *out = (val){ .k = V_QUESTION };
        return 0;
    }
    return xerr(x, "can't evaluate %s", a->text);
}

/* An operand as an argument (not a command). */
static int eval_arg(exec *x, const targ *a, val *out)
{
    switch (a->kind) {
    case A_STRING: *out = (val){ .k = V_STR, .s = a->str, .n = a->slen }; return 0;
    case A_NUMBER: *out = (val){ .k = V_INT, .i = a->num }; return 0;
    case A_BOOL: *out = (val){ .k = V_BOOL, .i = a->num }; return 0;
    case A_FIELD: return eval_field(x, a, NULL, 0, out);
    case A_PIPE: return eval_pipe(x, a->pipe, out);
    case A_FUNC: {
        /* A function named as an argument is called without arguments. */
        tcmd c = { .args = (targ *)a, .nargs = 1 };
        tpipe p = { .cmds = &c, .ncmds = 1 };
        return eval_pipe(x, &p, out);
    }
    }
    return xerr(x, "can't evaluate %s", a->text ? a->text : "");
}

static int is_intkind(int k) { return k == V_INT || k == V_U64 || k == V_U16 || k == V_U8; }

/* Go's underscoreOK: with base 0, '_' only between digits, or right
 * after a base prefix. */
static int underscore_ok(const char *s)
{
    char saw = '^';
    int hex = 0;
    if (s[0] == '0' && s[1] && strchr("xXoObB", s[1])) {
        hex = s[1] == 'x' || s[1] == 'X';
        saw = '0';
        s += 2;
    }
    for (; *s; s++) {
        if (isdigit((unsigned char)*s) || (hex && isxdigit((unsigned char)*s))) {
            saw = '0';
            continue;
        }
        if (*s == '_') {
            if (saw != '0')
                return 0;
            saw = '_';
            continue;
        }
        if (saw == '_')
            return 0;
        saw = '!';
    }
    return saw != '_';
}

/* strconv.ParseUint(s, base, bitSize). */
static int parse_uint(exec *x, const char *s, int64_t base, int64_t bits, uint64_t *out)
{
    const char *s0 = s;
    if (!*s)
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"\": invalid syntax");
    int base0 = base == 0;
    if (base == 0) {
        base = 10;
        if (s[0] == '0') {
            if (s[1] == 'x' || s[1] == 'X') { base = 16; s += 2; }
            else if (s[1] == 'o' || s[1] == 'O') { base = 8; s += 2; }
            else if (s[1] == 'b' || s[1] == 'B') { base = 2; s += 2; }
            else { base = 8; s += 1; }
        }
    } else if (base < 2 || base > 36) {
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": invalid base %" PRId64,
                    s0, base);
    }
    if (bits == 0)
        bits = 64;
    else if (bits < 0 || bits > 64)
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": invalid bit size %" PRId64,
                    s0, bits);
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    uint64_t n = 0;
    int range = 0, underscores = 0, ndig = 0;
    for (; *s; s++) {
        char c = *s;
        int dv;
        if (c == '_' && base0) { underscores = 1; continue; }
        if (c >= '0' && c <= '9') dv = c - '0';
        else if (isalpha((unsigned char)c)) dv = tolower((unsigned char)c) - 'a' + 10;
        else dv = 99;
        if (dv >= base)
            return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": invalid syntax", s0);
        ndig++;
        if (range)
            continue;
        if (n > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base || n * (uint64_t)base + (uint64_t)dv > max) {
            range = 1;
            continue;
        }
        n = n * (uint64_t)base + (uint64_t)dv;
    }
    if (!ndig && !(base0 && !strcmp(s0, "0")))
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": invalid syntax", s0);
    if (underscores && !underscore_ok(s0))
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": invalid syntax", s0);
    if (range)
        return xerr(x, "error calling parseInt: strconv.ParseUint: parsing \"%s\": value out of range", s0);
    *out = n;
    return 0;
}

static int call_func(exec *x, int fn, const val *av, size_t n, val *out)
{
    const tmpl_data *d = x->d;
    switch (fn) {
    case FN_PARSEINT:
        if (n != 3)
            return xerr(x, "wrong number of args for parseInt: want 3 got %zu", n);
        if (av[0].k != V_STR)
            return xerr(x, "wrong type for value; expected string; got %s", type_name(av[0].k));
        for (int i = 1; i < 3; i++)
            if (av[i].k != V_INT)
                return xerr(x, "wrong type for value; expected int; got %s", type_name(av[i].k));
        if (memchr(av[0].s, 0, av[0].n))
            return xerr(x, "error calling parseInt: invalid syntax");
        out->k = V_U64;
        return parse_uint(x, av[0].s, av[1].i, av[2].i, &out->u);
    case FN_LEN:
        if (n != 1)
            return xerr(x, "wrong number of args for len: want 1 got %zu", n);
        switch (av[0].k) {
        case V_STR: *out = (val){ .k = V_INT, .i = (int64_t)av[0].n }; return 0;
        case V_MATCH: *out = (val){ .k = V_INT, .i = (int64_t)d->nmatch }; return 0;
        case V_GROUP: {
            size_t cnt = d->nmatch;
            for (size_t i = 0; i < d->nmatch; i++) {
                if (!d->gname || !d->gname[i][0])
                    continue;
                const char *g = d->gname[i];
                int dup = 0;
                for (size_t j = 0; j < i; j++)
                    dup |= d->gname[j][0] && !strcmp(d->gname[j], g);
                size_t k = 0;
                int isnum = g[0] && (g[0] != '0' || !g[1]);
                for (const char *c = g; *c && isnum; c++)
                    isnum = isdigit((unsigned char)*c) != 0;
                if (isnum)
                    k = (size_t)strtoul(g, NULL, 10);
                if (!dup && !(isnum && k < d->nmatch))
                    cnt++;
            }
            *out = (val){ .k = V_INT, .i = (int64_t)cnt };
            return 0;
        }
        case V_NONE: return xerr(x, "error calling len: len of nil pointer");
        default: return xerr(x, "error calling len: len of type %s", type_name(av[0].k));
        }
    case FN_PRINT: {
        sbuf b = { 0 };
        sbuf_add(&b, "", 0);
        for (size_t i = 0; i < n; i++) {
            if (i && av[i].k != V_STR && av[i - 1].k != V_STR)
                sbuf_str(&b, " ");
            if (av[i].k == V_NONE)
                sbuf_str(&b, "<nil>");
            else
                print_val(&b, d, &av[i]);
        }
        if (b.oom) {
            free(b.p);
            return xerr(x, "out of memory");
        }
        const char *s = keep(x, b.p);
        if (!s)
            return xerr(x, "out of memory");
        *out = (val){ .k = V_STR, .s = s, .n = b.len };
        return 0;
    }
    case FN_INDEX: {
        if (n < 1)
            return xerr(x, "wrong number of args for index: want at least 1 got 0");
        val item = av[0];
        for (size_t i = 1; i < n; i++) {
            const val *ix = &av[i];
            if (item.k == V_NONE)
                return xerr(x, "error calling index: index of untyped nil");
            if (item.k == V_STR || item.k == V_MATCH) {
                if (ix->k == V_NONE)
                    return xerr(x, "error calling index: cannot index slice/array with nil");
                if (!is_intkind(ix->k))
                    return xerr(x, "error calling index: cannot index slice/array with type %s",
                                type_name(ix->k));
                int64_t k = ix->k == V_INT ? ix->i : ix->u > INT64_MAX ? -1 : (int64_t)ix->u;
                size_t len = item.k == V_STR ? item.n : d->nmatch;
                if (k < 0 || (uint64_t)k >= len)
                    return xerr(x, "error calling index: index out of range: %" PRId64, k);
                if (item.k == V_STR)
                    item = (val){ .k = V_U8, .u = (unsigned char)item.s[k] };
                else
                    item = vstr(d->match[k]);
            } else if (item.k == V_GROUP) {
                if (ix->k != V_STR)
                    return xerr(x, "error calling index: value has type %s; should be string",
                                type_name(ix->k));
                char *key = strndup(ix->s, ix->n);
                if (!key)
                    return xerr(x, "out of memory");
                const char *v = group_get(d, key);
                free(key);
                item = vstr(v ? v : "");
            } else {
                return xerr(x, "error calling index: can't index item of type %s",
                            type_name(item.k));
            }
        }
        *out = item;
        return 0;
    }
    }
    return xerr(x, "unknown function");
}

static int eval_cmd(exec *x, const tcmd *c, const val *final, val *out)
{
    const targ *a0 = &c->args[0];
    size_t nargs = c->nargs - 1;
    val av[32];
    if (c->nargs + 1 > sizeof av / sizeof av[0])
        return xerr(x, "too many arguments");
    for (size_t i = 0; i < nargs; i++)
        if (eval_arg(x, &c->args[i + 1], &av[i]) < 0)
            return -1;
    if (final)
        av[nargs++] = *final;
    if (a0->kind == A_FUNC)
        return call_func(x, a0->fn, av, nargs, out);
    if (a0->kind == A_FIELD)
        return eval_field(x, a0, av, nargs, out);
    if (nargs)
        return xerr(x, "can't give argument to non-function %s", a0->text ? a0->text : "");
    return eval_arg(x, a0, out);
}

static int eval_pipe(exec *x, const tpipe *p, val *out)
{
    val v = { 0 };
    for (size_t i = 0; i < p->ncmds; i++) {
        val nv;
        if (eval_cmd(x, &p->cmds[i], i ? &v : NULL, &nv) < 0)
            return -1;
        v = nv;
    }
    *out = v;
    return 0;
}

int tmpl_exec(const tmpl *t, const tmpl_data *d, char **out, char *err, size_t errlen)
{
    exec x = { .d = d, .err = err, .errlen = errlen };
    sbuf b = { 0 };
    sbuf_add(&b, "", 0);
    int rc = 0;
    for (size_t i = 0; i < t->n && rc == 0; i++) {
        if (t->nodes[i].text) {
            sbuf_add(&b, t->nodes[i].text, t->nodes[i].tlen);
            continue;
        }
        val v;
        rc = eval_pipe(&x, t->nodes[i].pipe, &v);
        if (rc == 0)
            print_val(&b, d, &v);
    }
    for (size_t i = 0; i < x.nowned; i++)
        free(x.owned[i]);
    free(x.owned);
    if (rc == 0 && b.oom)
        rc = xerr(&x, "out of memory");
    if (rc < 0) {
        free(b.p);
        *out = NULL;
        return -1;
    }
    *out = b.p;
    return 0;
}
