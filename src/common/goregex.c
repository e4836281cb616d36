/*
 * goregex.c — Go (RE2) patterns translated to POSIX EREs; see goregex.h.
 *
 * The translator walks the Go pattern once and writes the ERE: literals
 * that are special to an ERE become one-character bracket expressions, Go's
 * bracket expressions are read into a set of bytes and written back in the
 * order POSIX needs (']' first, '[' and '^' late, '-' last), every group
 * becomes a POSIX group and a table maps Go's capturing groups onto them.
 * The compiled copies belong to the goregex and are freed with it.
 */
#include <ctype.h>
#include <regex.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/goregex.h"

typedef struct slot {
    atomic_flag busy;
    regex_t re;
    int ok;
} slot;

struct goregex {
    char *src;                      /* the Go pattern */
    char *ere;                      /* its translation */
    int icase;
    size_t ngo;                     /* Go capturing groups */
    size_t nposix;                  /* POSIX groups (every group) */
    int map[GOREGEX_MAX_GROUPS + 1];    /* Go group → POSIX group */
    char *names[GOREGEX_MAX_GROUPS + 1];
    slot *slots;
    size_t nslots;
};

/* ---- output buffer ------------------------------------------------------ */

typedef struct tr {
    const char *p;                  /* the Go pattern, at the cursor */
    char *out;
    size_t len, cap;
    int oom;
    goregex *g;
    int depth;                      /* open groups */
    int prev;                       /* what precedes: P_NONE, P_ATOM, P_REP */
    int rc;
    char *err;
    size_t errlen;
} tr;

enum { P_NONE, P_ATOM, P_REP };

static void put(tr *t, const char *s, size_t n)
{
    if (t->oom)
        return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *p = realloc(t->out, cap);
        if (!p) {
            t->oom = 1;
            return;
        }
        t->out = p;
        t->cap = cap;
    }
    memcpy(t->out + t->len, s, n);
    t->len += n;
    t->out[t->len] = '\0';
}

static void putc_(tr *t, char c) { put(t, &c, 1); }
static void puts_(tr *t, const char *s) { put(t, s, strlen(s)); }

static int fail(tr *t, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int fail(tr *t, int rc, const char *fmt, ...)
{
    if (t->rc == GOREGEX_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(t->err, t->errlen, fmt, ap);
        va_end(ap);
        t->rc = rc;
    }
    return -1;
}

/* ---- byte sets and literals -------------------------------------------- */

typedef struct cset { unsigned char in[256]; } cset;

static void set_range(cset *s, int lo, int hi)
{
    for (int c = lo; c <= hi; c++)
        s->in[c] = 1;
}

static void set_word(cset *s)
{
    set_range(s, '0', '9');
    set_range(s, 'A', 'Z');
    set_range(s, 'a', 'z');
    s->in['_'] = 1;
}

static void set_space(cset *s)      /* Go's \s: [\t\n\f\r ] */
{
    s->in['\t'] = s->in['\n'] = s->in['\f'] = s->in['\r'] = s->in[' '] = 1;
}

static void set_add(cset *dst, const cset *src, int negate)
{
    for (int c = 1; c < 128; c++)
        if (src->in[c] != negate)
            dst->in[c] = 1;
    if (negate)
        set_range(dst, 128, 255);
}

static int special_in_set(int c)
{
    return c == ']' || c == '-' || c == '^' || c == '[';
}

/* Write a bracket expression for the bytes in s (negated: all others). */
static void put_set(tr *t, const cset *s, int negate)
{
    int n = 0, only = -1;
    for (int c = 1; c < 256; c++)
        if (s->in[c])
            n++, only = c;
    if (!negate && n == 1 && only == '^') {
        puts_(t, "\\^");
        return;
    }
    putc_(t, '[');
    if (negate)
        putc_(t, '^');
    int first = 1;
    if (s->in[']'])
        putc_(t, ']'), first = 0;
    for (int c = 1; c < 256;) {
        if (!s->in[c] || special_in_set(c)) {
            c++;
            continue;
        }
        int e = c;
        while (e + 1 < 256 && s->in[e + 1] && !special_in_set(e + 1))
            e++;
        if (e - c >= 2) {
            putc_(t, (char)c), putc_(t, '-'), putc_(t, (char)e);
        } else {
            for (int k = c; k <= e; k++)
                putc_(t, (char)k);
        }
        first = 0;
        c = e + 1;
    }
    if (s->in['['])
        putc_(t, '['), first = 0;
    if (s->in['^']) {
        if (first && !negate)
            putc_(t, '-');          /* only '^' and '-': "[-^]" */
        putc_(t, '^');
    }
    if (s->in['-'] && !(first && !negate && s->in['^']))
        putc_(t, '-');
    putc_(t, ']');
}

/* A literal byte outside brackets. */
static void put_lit(tr *t, unsigned char c)
{
    switch (c) {
    case '^': puts_(t, "\\^"); return;
    case '\\': puts_(t, "[\\]"); return;
    case ']': puts_(t, "[]]"); return;
    case '.': case '[': case '$': case '(': case ')': case '|': case '*': case '+':
    case '?': case '{': case '}':
        putc_(t, '['), putc_(t, (char)c), putc_(t, ']');
        return;
    default:
        putc_(t, (char)c);
    }
}

/* A code point outside brackets, UTF-8 encoded. */
static void put_rune(tr *t, unsigned long r)
{
    if (r < 0x80) {
        put_lit(t, (unsigned char)r);
        return;
    }
    char b[4];
    int n;
    if (r < 0x800)
        b[0] = (char)(0xc0 | r >> 6), n = 2;
    else if (r < 0x10000)
        b[0] = (char)(0xe0 | r >> 12), n = 3;
    else
        b[0] = (char)(0xf0 | r >> 18), n = 4;
    for (int i = 1; i < n; i++)
        b[i] = (char)(0x80 | ((r >> (6 * (n - 1 - i))) & 0x3f));
    put(t, b, (size_t)n);
}

/* ---- escapes ------------------------------------------------------------ */

/* Class escapes \d \s \w and their negations into s. 1 when c is one. */
static int class_escape(int c, cset *s)
{
    cset k;
    memset(&k, 0, sizeof k);
    switch (tolower(c)) {
    case 'd': set_range(&k, '0', '9'); break;
    case 's': set_space(&k); break;
    case 'w': set_word(&k); break;
    default: return 0;
    }
    set_add(s, &k, isupper(c) != 0);
    return 1;
}

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* The code point of a character escape after the backslash at t->p (t->p
 * moved past it); -1 after fail(); -2 when it is not a character escape. */
static long char_escape(tr *t)
{
    const char *p = t->p;
    int c = (unsigned char)*p;
    static const char ctl[] = "a\af\ft\tn\nr\rv\v";
    const char *k = c ? strchr("aftnrv", c) : NULL;
    if (k) {
        t->p = p + 1;
        return (unsigned char)ctl[2 * (k - "aftnrv") + 1];
    }
    if (c >= '0' && c <= '7') {
        if (c != '0' && (p[1] < '0' || p[1] > '7'))
            return fail(t, GOREGEX_INVALID, "invalid escape sequence: `\\%c`", c);
        long v = c - '0';
        int n = 1;
        while (n < 3 && p[n] >= '0' && p[n] <= '7')
            v = v * 8 + (p[n++] - '0');
        t->p = p + n;
        return v == 0 ? fail(t, GOREGEX_UNSUPPORTED, "a NUL escape is not supported") : v;
    }
    if (c == 'x') {
        long v = 0;
        if (p[1] == '{') {
            int n = 2;
            while (hexval((unsigned char)p[n]) >= 0 && v <= 0x10ffff)
                v = v * 16 + hexval((unsigned char)p[n++]);
            if (n == 2 || p[n] != '}' || v > 0x10ffff)
                return fail(t, GOREGEX_INVALID, "invalid escape sequence: `\\x`");
            t->p = p + n + 1;
        } else {
            if (hexval((unsigned char)p[1]) < 0 || hexval((unsigned char)p[2]) < 0)
                return fail(t, GOREGEX_INVALID, "invalid escape sequence: `\\x`");
            v = hexval((unsigned char)p[1]) * 16 + hexval((unsigned char)p[2]);
            t->p = p + 3;
        }
        return v == 0 ? fail(t, GOREGEX_UNSUPPORTED, "a NUL escape is not supported") : v;
    }
    if (c && c < 0x80 && !isalnum(c)) {
        t->p = p + 1;
        return c;
    }
    return -2;
}

static int unsupported_escape(tr *t, int c)
{
    if (c && strchr("bBCpP", c))
        return fail(t, GOREGEX_UNSUPPORTED, "`\\%c` is not supported", c);
    return fail(t, GOREGEX_INVALID, "invalid escape sequence: `\\%c`", c ? c : ' ');
}

/* An escape outside brackets, t->p after the backslash. */
static int escape(tr *t)
{
    int c = (unsigned char)*t->p;
    cset s;
    memset(&s, 0, sizeof s);
    if (class_escape(c, &s)) {
        t->p++;
        put_set(t, &s, 0);
        return 0;
    }
    if (c == 'A' || c == 'z') {
        t->p++;
        putc_(t, c == 'A' ? '^' : '$');
        return 0;
    }
    if (c == 'Q') {                 /* literal text up to \E or the end */
        const char *e = strstr(t->p + 1, "\\E");
        const char *end = e ? e : t->p + strlen(t->p);
        for (const char *q = t->p + 1; q < end; q++)
            put_lit(t, (unsigned char)*q);
        t->p = e ? e + 2 : end;
        return 0;
    }
    long r = char_escape(t);
    if (r == -1)
        return -1;
    if (r == -2)
        return unsupported_escape(t, c);
    put_rune(t, (unsigned long)r);
    return 0;
}

/* ---- bracket expressions ------------------------------------------------ */

static const struct { const char *name; int (*fn)(int); } posix_classes[] = {
    { "alnum", isalnum }, { "alpha", isalpha }, { "blank", isblank },
    { "cntrl", iscntrl }, { "digit", isdigit }, { "graph", isgraph },
    { "lower", islower }, { "print", isprint }, { "punct", ispunct },
    { "space", isspace }, { "upper", isupper }, { "xdigit", isxdigit },
};

/* "[:name:]" or "[:^name:]" at p into s; returns its length, 0 if p does
 * not start one, -1 after fail(). */
static int posix_class(tr *t, const char *p, cset *s)
{
    if (p[0] != '[' || p[1] != ':')
        return 0;
    const char *e = strstr(p + 2, ":]");
    if (!e)
        return 0;
    int neg = p[2] == '^';
    const char *name = p + 2 + neg;
    size_t n = (size_t)(e - name);
    cset k;
    memset(&k, 0, sizeof k);
    if (n == 5 && !strncmp(name, "ascii", 5))
        set_range(&k, 1, 127);
    else if (n == 4 && !strncmp(name, "word", 4))
        set_word(&k);
    else {
        size_t i;
        for (i = 0; i < sizeof posix_classes / sizeof posix_classes[0]; i++)
            if (strlen(posix_classes[i].name) == n && !strncmp(name, posix_classes[i].name, n))
                break;
        if (i == sizeof posix_classes / sizeof posix_classes[0])
            return fail(t, GOREGEX_INVALID, "invalid character class range: `%.*s`",
                        (int)(e + 2 - p), p);
        for (int c = 1; c < 128; c++)
            if (posix_classes[i].fn(c))
                k.in[c] = 1;
    }
    set_add(s, &k, neg);
    return (int)(e + 2 - p);
}

/* One character of a class at t->p (escapes included): its byte, or -1
 * after fail(), or -3 when it was a class escape already added to s. */
static int class_char(tr *t, cset *s)
{
    int c = (unsigned char)*t->p;
    if (c == '\\') {
        t->p++;
        int e = (unsigned char)*t->p;
        if (class_escape(e, s)) {
            t->p++;
            return -3;
        }
        long r = char_escape(t);
        if (r == -1)
            return -1;
        if (r == -2)
            return unsupported_escape(t, e);
        if (r > 0x7f)
            return fail(t, GOREGEX_UNSUPPORTED, "characters outside ASCII in brackets are not supported");
        return (int)r;
    }
    if (c >= 0x80)
        return fail(t, GOREGEX_UNSUPPORTED, "characters outside ASCII in brackets are not supported");
    t->p++;
    return c;
}

static int bracket(tr *t)
{
    const char *start = t->p;
    cset s;
    memset(&s, 0, sizeof s);
    t->p++;                         /* '[' */
    int neg = *t->p == '^';
    if (neg)
        t->p++;
    int first = 1;
    for (;;) {
        if (!*t->p)
            return fail(t, GOREGEX_INVALID, "missing closing ]: `%s`", start);
        if (*t->p == ']' && !first)
            break;
        first = 0;
        int n = posix_class(t, t->p, &s);
        if (n < 0)
            return -1;
        if (n > 0) {
            t->p += n;
            continue;
        }
        int lo = class_char(t, &s);
        if (lo == -1)
            return -1;
        if (lo == -3)
            continue;
        if (t->p[0] == '-' && t->p[1] && t->p[1] != ']') {
            t->p++;
            int hi = class_char(t, &s);
            if (hi == -1)
                return -1;
            if (hi == -3 || hi < lo)
                return fail(t, GOREGEX_INVALID, "invalid character class range: `%.*s`",
                            (int)(t->p - start), start);
            set_range(&s, lo, hi);
        } else {
            s.in[lo] = 1;
        }
    }
    t->p++;                         /* ']' */
    put_set(t, &s, neg);
    return 0;
}

/* ---- groups and repetition ---------------------------------------------- */

static int group_name_ok(const char *p, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)p[i]) && p[i] != '_')
            return 0;
    return 1;
}

static int open_group(tr *t)
{
    goregex *g = t->g;
    const char *p = t->p + 1;
    const char *name = NULL;
    size_t nlen = 0;
    int capture = 1;
    if (*p == '?') {
        if (p[1] == ':') {
            capture = 0;
            p += 2;
        } else if ((p[1] == 'P' && p[2] == '<') || p[1] == '<') {
            name = p + (p[1] == 'P' ? 3 : 2);
            const char *e = strchr(name, '>');
            if (!e || !group_name_ok(name, (size_t)(e - name)))
                return fail(t, GOREGEX_INVALID, "invalid named capture: `%s`", t->p);
            nlen = (size_t)(e - name);
            for (size_t i = 1; i <= g->ngo; i++)
                if (g->names[i] && strlen(g->names[i]) == nlen && !strncmp(g->names[i], name, nlen))
                    return fail(t, GOREGEX_INVALID, "duplicate capture group name: `%.*s`",
                                (int)nlen, name);
            p = e + 1;
        } else {
            size_t n = strspn(p + 1, "imsU-");
            if (p[1 + n] == ')' || p[1 + n] == ':')
                return fail(t, GOREGEX_UNSUPPORTED, "flags `(?%.*s` are not supported (only a leading (?i))",
                            (int)n + 1, p + 1);
            return fail(t, GOREGEX_INVALID, "invalid or unsupported Perl syntax: `(?%c`", p[1] ? p[1] : ' ');
        }
    }
    if (g->nposix >= GOREGEX_MAX_GROUPS)
        return fail(t, GOREGEX_UNSUPPORTED, "more than %d groups are not supported", GOREGEX_MAX_GROUPS);
    g->nposix++;
    if (capture) {
        g->ngo++;
        g->map[g->ngo] = (int)g->nposix;
        if (name && !(g->names[g->ngo] = strndup(name, nlen)))
            return fail(t, GOREGEX_UNSUPPORTED, "out of memory");
    }
    t->p = p;
    t->depth++;
    t->prev = P_NONE;
    putc_(t, '(');
    return 0;
}

/* "{n}", "{n,}" or "{n,m}" at p: its length, 0 when it is none (a literal
 * '{' in Go), -1 after fail(). */
static int repeat_len(tr *t, const char *p)
{
    const char *q = p + 1;
    long lo = -1, hi = -1;
    if (!isdigit((unsigned char)*q))
        return 0;
    for (lo = 0; isdigit((unsigned char)*q); q++)
        lo = lo < 100000 ? lo * 10 + (*q - '0') : lo;
    if (*q == ',') {
        q++;
        if (isdigit((unsigned char)*q))
            for (hi = 0; isdigit((unsigned char)*q); q++)
                hi = hi < 100000 ? hi * 10 + (*q - '0') : hi;
        else
            hi = -2;                /* open */
    } else {
        hi = lo;
    }
    if (*q != '}')
        return 0;
    if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
        return fail(t, GOREGEX_INVALID, "invalid repeat count: `%.*s`", (int)(q + 1 - p), p);
    return (int)(q + 1 - p);
}

static int repetition(tr *t, int len)
{
    const char *op = t->p;
    if (t->prev == P_NONE)
        return fail(t, GOREGEX_INVALID, "missing argument to repetition operator: `%.*s`", len, op);
    if (t->prev == P_REP)
        return fail(t, GOREGEX_INVALID, "invalid nested repetition operator: `%.*s`", len, op);
    if (op[len] == '?')
        return fail(t, GOREGEX_UNSUPPORTED, "lazy quantifier `%.*s?` is not supported", len, op);
    put(t, op, (size_t)len);
    t->p += len;
    t->prev = P_REP;
    return 0;
}

/* ---- the walk ----------------------------------------------------------- */

static int step(tr *t)
{
    int c = (unsigned char)*t->p;
    switch (c) {
    case '(':
        return open_group(t);
    case ')':
        if (t->depth == 0)
            return fail(t, GOREGEX_INVALID, "unexpected ): `%s`", t->g->src);
        t->depth--;
        t->p++;
        putc_(t, ')');
        t->prev = P_ATOM;
        return 0;
    case '|':
        t->p++;
        putc_(t, '|');
        t->prev = P_NONE;
        return 0;
    case '*': case '+': case '?':
        return repetition(t, 1);
    case '{': {
        int n = repeat_len(t, t->p);
        if (n < 0)
            return -1;
        if (n > 0)
            return repetition(t, n);
        break;
    }
    case '[':
        t->prev = P_ATOM;
        return bracket(t);
    case '\\':
        t->p++;
        t->prev = P_ATOM;
        return escape(t);
    case '.': case '^': case '$':
        t->p++;
        putc_(t, (char)c);
        t->prev = P_ATOM;
        return 0;
    default:
        break;
    }
    t->p++;
    put_lit(t, (unsigned char)c);
    t->prev = P_ATOM;
    return 0;
}

static int translate(tr *t)
{
    if (!strncmp(t->p, "(?i)", 4)) {
        t->g->icase = 1;
        t->p += 4;
    }
    if (!*t->p) {                   /* the empty pattern matches everywhere */
        t->g->nposix++;
        puts_(t, "()");
    }
    while (*t->p)
        if (step(t) < 0)
            return -1;
    if (t->depth > 0)
        return fail(t, GOREGEX_INVALID, "missing closing ): `%s`", t->g->src);
    if (t->oom)
        return fail(t, GOREGEX_UNSUPPORTED, "out of memory");
    return 0;
}

/* ---- compile, match, free ----------------------------------------------- */

static size_t slot_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return (size_t)(n > 32 ? 64 : 2 * n);
}

static int compile_slots(goregex *g, char *err, size_t errlen)
{
    g->nslots = slot_count();
    if (!(g->slots = calloc(g->nslots, sizeof *g->slots))) {
        snprintf(err, errlen, "out of memory");
        return GOREGEX_UNSUPPORTED;
    }
    int flags = REG_EXTENDED | (g->icase ? REG_ICASE : 0);
    for (size_t i = 0; i < g->nslots; i++) {
        atomic_flag_clear(&g->slots[i].busy);
        int rc = regcomp(&g->slots[i].re, g->ere, flags);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &g->slots[i].re, msg, sizeof msg);
            snprintf(err, errlen, "%s: `%s`", msg, g->src);
            return GOREGEX_INVALID;
        }
        g->slots[i].ok = 1;
    }
    return GOREGEX_OK;
}

int goregex_compile(const char *pattern, goregex **out, char *err, size_t errlen)
{
    *out = NULL;
    size_t plen = strlen(pattern);
    if (plen > GOREGEX_MAX_LEN) {
        snprintf(err, errlen, "regex pattern too long: %zu > %d", plen, GOREGEX_MAX_LEN);
        return GOREGEX_INVALID;
    }
    goregex *g = calloc(1, sizeof *g);
    if (!g || !(g->src = strdup(pattern))) {
        free(g);
        snprintf(err, errlen, "out of memory");
        return GOREGEX_UNSUPPORTED;
    }
    tr t = { .p = g->src, .g = g, .err = err, .errlen = errlen, .rc = GOREGEX_OK };
    int rc = GOREGEX_OK;
    if (translate(&t) < 0)
        rc = t.rc;
    g->ere = t.out;
    if (rc == GOREGEX_OK)
        rc = compile_slots(g, err, errlen);
    if (rc != GOREGEX_OK) {
        goregex_free(g);
        return rc;
    }
    *out = g;
    return GOREGEX_OK;
}

void goregex_free(goregex *g)
{
    if (!g)
        return;
    for (size_t i = 0; g->slots && i < g->nslots; i++)
        if (g->slots[i].ok)
            regfree(&g->slots[i].re);
    for (size_t i = 0; i <= g->ngo; i++)
        free(g->names[i]);
    free(g->slots);
    free(g->ere);
    free(g->src);
    free(g);
}

size_t goregex_ngroups(const goregex *g) { return g->ngo; }
const char *goregex_source(const goregex *g) { return g->src; }

const char *goregex_name(const goregex *g, size_t i)
{
    return i <= g->ngo && g->names[i] ? g->names[i] : "";
}

int goregex_match(goregex *g, const char *s, long *m)
{
    regmatch_t pm[GOREGEX_MAX_GROUPS + 2];
    slot *sl = NULL;
    for (size_t i = 0; i < g->nslots && !sl; i++)
        if (!atomic_flag_test_and_set_explicit(&g->slots[i].busy, memory_order_acquire))
            sl = &g->slots[i];
    int rc = regexec(sl ? &sl->re : &g->slots[0].re, s, g->nposix + 1, pm, 0);
    if (sl)
        atomic_flag_clear_explicit(&sl->busy, memory_order_release);
    if (rc != 0)
        return 0;
    if (m) {
        m[0] = (long)pm[0].rm_so;
        m[1] = (long)pm[0].rm_eo;
        for (size_t i = 1; i <= g->ngo; i++) {
            const regmatch_t *p = &pm[g->map[i]];
            m[2 * i] = p->rm_so < 0 ? -1 : (long)p->rm_so;
            m[2 * i + 1] = p->rm_so < 0 ? -1 : (long)p->rm_eo;
        }
    }
    return 1;
}
