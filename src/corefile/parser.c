/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parser.c — turns the lexer's tokens into server blocks (coredns/caddy's
 * caddyfile/parse.go semantics; docs/configuration.md, The file).
 *
 * The whole input is lexed first into one token stream; `import` is handled
 * by splicing: the two tokens `import ARG` are replaced in the stream by the
 * tokens of the snippet or file(s) named, and parsing continues at the first
 * spliced token. So an import can appear wherever a line can start: between
 * server blocks (its tokens then form keys and blocks), among a block's
 * directives, or inside a directive's nested block.
 *
 *   file      := block*
 *   block     := keys ( '{' line* '}' | line* EOF )     braces optional
 *   keys      := key+ on one line; a key ending in ',' continues the list
 *                (onto the next line if needed); "a,b" is split into keys
 *   snippet   := '(' NAME ')' '{' tokens '}'            stored, not a server
 *   line      := NAME ARG* ( '{' ... '}' ARG* )*        to end of line; a
 *                nested block opens on the directive's line and may nest
 *
 * Tokens come from "instances": each reading of a file and each snippet
 * expansion gets its own instance and its own copy of the file name string,
 * so tokens of two instances are never taken as being on the same line (two
 * consecutive `import snip` lines stay two directives) and the dispenser can
 * compare file pointers. Instances remember who imported them; importing a
 * file that is already on the chain is reported as a cycle.
 *
 * Environment references {$NAME} and {%NAME%} are expanded (empty when
 * unset) in keys, directive names, arguments and import arguments, at the
 * moment the token is used. Values are not scanned again for references.
 *
 * Differences from caddy, all stricter or safer: a '}' where a key or a
 * brace-less block's directive is expected, a '{' starting a line inside a
 * block, and a block without keys are errors (caddy accepts or silently drops
 * them); importing a file already being imported is an error at once (caddy
 * loops until its 100000 cap); commas inside a key token split it.
 * Directive names are not checked here: the server does that.
 */
#include <assert.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "corefile/corefile.h"
#include "corefile/cf_private.h"
#include "common/file.h"
#include "common/log.h"
#include "common/vec.h"

#define MAX_SNIPPET_EXPANSIONS 10000

const cf_limits cf_default_limits = { .max_file_imports = 100000, .max_tokens = 5000000 };

#define MSG_UNMATCHED "Unexpected '}' because no matching opening brace"
#define MSG_UNCLOSED "unexpected EOF: unclosed block"

typedef struct instance {
    const char *name;       /* owned by cf_file.files */
    char *real;             /* realpath of the file, NULL if unknown */
    int parent;             /* instance holding the import, -1 for the root */
} instance;

typedef struct snippet {
    char *name;
    cf_tokvec toks;
} snippet;

typedef struct parser {
    cf_tokvec ts;           /* the token stream, imports spliced in */
    size_t pos;             /* next token to use */
    instance *insts;
    size_t ninsts, instcap;
    snippet *snips;
    size_t nsnips, snipcap;
    unsigned long snip_exp, file_exp;
    cf_file *f;
    size_t filecap;
    const cf_limits *lim;
    char *err;
    size_t errlen;
} parser;

/* Grow an array whose capacity is implied by its length (powers of two). */
static void push_room(void **v, size_t n, size_t elsz)
{
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        size_t cap = n;                     /* full: double it (4 from empty) */
        if (vec_reserve(v, &cap, n + 1, elsz, 4) < 0)
            log_fatal("corefile: out of memory");
    }
}

/* ---- errors ------------------------------------------------------------ */

static int perr_loc(parser *p, const char *file, int line, const char *near, const char *fmt,
                    va_list ap) __attribute__((format(printf, 5, 0)));

static int perr_loc(parser *p, const char *file, int line, const char *near, const char *fmt,
                    va_list ap)
{
    char msg[CF_ERR_MAX];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (p->err && p->errlen)
        snprintf(p->err, p->errlen, "%s:%d: %s near '%s'", file, line, msg, near);
    return -1;
}

/* Error at a stream token. */
static int perr(parser *p, const cf_rawtok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(parser *p, const cf_rawtok *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    perr_loc(p, p->insts[t->inst].name, t->line, t->text, fmt, ap);
    va_end(ap);
    return -1;
}

/* Error at a token already stored in the result. */
static int perr_tok(parser *p, const cf_token *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr_tok(parser *p, const cf_token *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    perr_loc(p, t->file, t->line, t->text, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- instances and small helpers --------------------------------------- */

static int new_inst(parser *p, const char *name, const char *real, int parent)
{
    cf_file *f = p->f;
    cf_grow((void **)&f->files, &p->filecap, f->nfiles + 1, sizeof *f->files);
    f->files[f->nfiles] = cf_xstrdup(name);
    cf_grow((void **)&p->insts, &p->instcap, p->ninsts + 1, sizeof *p->insts);
    instance *in = &p->insts[p->ninsts];
    in->name = f->files[f->nfiles++];
    in->real = real ? cf_xstrdup(real) : NULL;
    in->parent = parent;
    return (int)p->ninsts++;
}

static cf_rawtok *tok_at(parser *p, size_t i)
{
    return i < p->ts.n ? &p->ts.v[i] : NULL;
}

static int is(const cf_rawtok *t, const char *s)
{
    return t && strcmp(t->text, s) == 0;
}

/* Whether token i starts a line (other instance, or a later line). */
static int newline_before(parser *p, size_t i)
{
    if (i == 0)
        return 1;
    const cf_rawtok *a = &p->ts.v[i - 1], *b = &p->ts.v[i];
    return a->inst != b->inst || a->line + cf_newlines(a->text) < b->line;
}

/* Replace {$NAME} and {%NAME%} by the environment (empty when unset). */
static char *expand_env(const char *s)
{
    char *out = NULL;
    size_t n = 0, cap = 0;
    while (*s) {
        const char *close = s[0] == '{' && s[1] == '$' ? "}"
                          : s[0] == '{' && s[1] == '%' ? "%}" : NULL;
        const char *end = close ? strstr(s + 2, close) : NULL;
        const char *add = s;
        size_t addlen = 1, skip = 1;
        if (end && end > s + 2) {
            char *name = cf_xstrndup(s + 2, (size_t)(end - s - 2));
            add = getenv(name);
            free(name);
            if (!add)
                add = "";
            addlen = strlen(add);
            skip = (size_t)(end - s) + strlen(close);
        }
        cf_grow((void **)&out, &cap, n + addlen + 1, 1);
        memcpy(out + n, add, addlen);
        n += addlen;
        s += skip;
    }
    cf_grow((void **)&out, &cap, n + 1, 1);
    out[n] = '\0';
    return out;
}

/* Replace ts[at, at+del) by the tokens of ins (moved; ins is emptied). */
static void splice(parser *p, size_t at, size_t del, cf_tokvec *ins)
{
    cf_tokvec *ts = &p->ts;
    for (size_t i = at; i < at + del; i++)
        free(ts->v[i].text);
    size_t newn = ts->n - del + ins->n;
    cf_grow((void **)&ts->v, &ts->cap, newn, sizeof *ts->v);
    memmove(&ts->v[at + ins->n], &ts->v[at + del], (ts->n - at - del) * sizeof *ts->v);
    if (ins->n)
        memcpy(&ts->v[at], ins->v, ins->n * sizeof *ts->v);
    ts->n = newn;
    free(ins->v);
    ins->v = NULL;
    ins->n = ins->cap = 0;
}

/* ---- paths --------------------------------------------------------------- */

/* Directory part of a file name ("." when there is none). */
static char *dir_of(const char *name)
{
    const char *slash = strrchr(name, '/');
    if (!slash)
        return cf_xstrdup(".");
    if (slash == name)
        return cf_xstrdup("/");
    return cf_xstrndup(name, (size_t)(slash - name));
}

static char *join_path(const char *dir, const char *rel)
{
    size_t a = strlen(dir), b = strlen(rel);
    char *s = cf_xrealloc(NULL, a + b + 2);
    memcpy(s, dir, a);
    s[a] = '/';
    memcpy(s + a + 1, rel, b + 1);
    return s;
}

/* Absolute, lexically cleaned form of path (no symlink resolution), the
 * name imported tokens carry, as caddy does. */
static char *abs_clean(const char *path)
{
    char *full;
    if (path[0] == '/') {
        full = cf_xstrdup(path);
    } else {
        char *cwd = getcwd(NULL, 0);
        full = join_path(cwd ? cwd : ".", path);
        free(cwd);
    }
    char *out = cf_xrealloc(NULL, strlen(full) + 2);
    size_t n = 0;
    for (char *seg = full; *seg;) {
        char *next = strchr(seg, '/');
        size_t len = next ? (size_t)(next - seg) : strlen(seg);
        if (len == 2 && seg[0] == '.' && seg[1] == '.') {
            while (n > 0 && out[--n] != '/')
                ;
        } else if (len > 0 && !(len == 1 && seg[0] == '.')) {
            out[n++] = '/';
            memcpy(out + n, seg, len);
            n += len;
        }
        seg += len + (next != NULL);
    }
    if (n == 0)
        out[n++] = '/';
    out[n] = '\0';
    free(full);
    return out;
}

/* caddy refuses patterns that could take long to expand (issue #2096). */
static int glob_too_wide(const char *pat)
{
    int stars = 0, qs = 0;
    for (const char *c = pat; *c; c++) {
        stars += *c == '*';
        qs += *c == '?';
    }
    return stars > 1 || qs > 1 || (strchr(pat, '[') && strchr(pat, ']'));
}

/* ---- import ------------------------------------------------------------ */

static snippet *find_snippet(parser *p, const char *name)
{
    for (size_t i = 0; i < p->nsnips; i++)
        if (strcmp(p->snips[i].name, name) == 0)
            return &p->snips[i];
    return NULL;
}

/* Copy a snippet's tokens; each source instance gets a fresh instance whose
 * parent is the instance of the import. */
static int import_snippet(parser *p, const snippet *sn, size_t argi, cf_tokvec *out)
{
    if (p->snip_exp >= MAX_SNIPPET_EXPANSIONS)
        return perr(p, &p->ts.v[argi], "maximum snippet import depth (%d) exceeded",
                    MAX_SNIPPET_EXPANSIONS);
    p->snip_exp++;
    int parent = p->ts.v[argi].inst;
    int *from = NULL, *to = NULL;
    size_t nmap = 0, mapcap = 0, tocap = 0;
    for (size_t i = 0; i < sn->toks.n; i++) {
        const cf_rawtok *t = &sn->toks.v[i];
        size_t m = 0;
        while (m < nmap && from[m] != t->inst)
            m++;
        if (m == nmap) {
            cf_grow((void **)&from, &mapcap, nmap + 1, sizeof *from);
            cf_grow((void **)&to, &tocap, nmap + 1, sizeof *to);
            from[m] = t->inst;
            to[m] = new_inst(p, p->insts[t->inst].name, p->insts[t->inst].real, parent);
            nmap++;
        }
        cf_tokvec_push(out, cf_xstrdup(t->text), t->line, to[m]);
    }
    free(from);
    free(to);
    return 0;
}

/* Read one matched file and lex it into out. */
/* Append the tokens of the file at path to out, at most a few past
 * budget (cf_lex). */
static int import_one(parser *p, const char *path, size_t argi, cf_tokvec *out, size_t budget)
{
    const cf_rawtok *arg = &p->ts.v[argi];
    char *real = realpath(path, NULL);
    for (int k = arg->inst; real && k >= 0; k = p->insts[k].parent)
        if (p->insts[k].real && strcmp(p->insts[k].real, real) == 0) {
            free(real);
            return perr(p, arg, "Import cycle: %s imports itself", path);
        }
    /* stat first: opening a FIFO would block; a device could never end */
    struct stat st;
    char *buf = NULL;
    const char *why = NULL;
    size_t n = 0;
    int rc = -1;
    if (stat(path, &st) < 0) {
        perr(p, arg, "Could not import %s: %s", path, strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        perr(p, arg, "Could not import %s: is a directory", path);
    } else if (!S_ISREG(st.st_mode)) {
        perr(p, arg, "Could not import %s: not a regular file", path);
    } else if (!(buf = file_read(path, &n, FILE_REGULAR, &why))) {
        perr(p, arg, "Could not import %s: %s", path, why);
    } else {
        char *name = abs_clean(path);
        int in = new_inst(p, name, real, arg->inst);
        free(name);
        cf_lex(buf, n, in, out, budget);
        free(buf);
        rc = 0;
    }
    free(real);
    return rc;
}

static int import_files(parser *p, const char *pat, size_t argi, cf_tokvec *out)
{
    const cf_rawtok *arg = &p->ts.v[argi];
    if (p->file_exp >= p->lim->max_file_imports)
        return perr(p, arg, "maximum file import depth (%lu) exceeded", p->lim->max_file_imports);
    p->file_exp++;
    if (glob_too_wide(pat))
        return perr(p, arg, "Glob pattern may only contain one wildcard (*), but has others: %s",
                    pat);
    char *full;
    if (pat[0] == '/') {
        full = cf_xstrdup(pat);
    } else {
        char *dir = dir_of(p->insts[arg->inst].name);
        full = join_path(dir, pat);
        free(dir);
    }
    /* Like Go's filepath.Glob, unreadable directories just match nothing
     * (no GLOB_ERR), so the only outcomes are matches or none. */
    glob_t g;
    int r = glob(full, 0, NULL, &g);
    free(full);
    if (r == GLOB_NOSPACE)
        log_fatal("corefile: out of memory");
    int rc = 0;
    if (r != 0) {
        if (strpbrk(pat, "*?[]"))
            log_warning("No files matching import glob pattern: %s", pat);
        else
            rc = perr(p, arg, "File to import not found: %s", pat);
    } else {
        /* the tokens the Corefile may still take (import and its argument
         * are replaced): no more files are read once they are used up, and
         * do_import() reports the limit */
        size_t have = p->ts.n - 2;
        size_t budget = have < p->lim->max_tokens ? p->lim->max_tokens - have : 0;
        for (size_t i = 0; i < g.gl_pathc && rc == 0 && out->n <= budget; i++)
            rc = import_one(p, g.gl_pathv[i], argi, out, budget);
    }
    globfree(&g);
    return rc;
}

/* Token i is `import`: replace it and its argument by what they name. */
static int do_import(parser *p, size_t i)
{
    size_t j = i + 1;
    while (j < p->ts.n && !newline_before(p, j))
        j++;
    if (j - i != 2)
        return perr(p, &p->ts.v[j - i > 2 ? i + 2 : i],
                    "Import takes exactly one argument (a snippet name, file or glob pattern)");
    char *pat = expand_env(p->ts.v[i + 1].text);
    cf_tokvec got = { 0 };
    int rc;
    if (!*pat) {
        rc = perr(p, &p->ts.v[i + 1], "Import requires a non-empty filepath");
    } else {
        const snippet *sn = find_snippet(p, pat);
        rc = sn ? import_snippet(p, sn, i + 1, &got) : import_files(p, pat, i + 1, &got);
    }
    if (rc == 0 && p->ts.n - 2 + got.n > p->lim->max_tokens)
        rc = perr(p, &p->ts.v[i + 1], "too many tokens after imports (limit %zu)", p->lim->max_tokens);
    free(pat);
    if (rc < 0) {
        cf_tokvec_free(&got);
        return -1;
    }
    splice(p, i, 2, &got);
    return 0;
}

/* ---- blocks ------------------------------------------------------------ */

static void add_token(cf_token **v, size_t *n, char *text, const char *file, int line)
{
    push_room((void **)v, *n, sizeof **v);
    (*v)[*n].text = text;
    (*v)[*n].file = file;
    (*v)[*n].line = line;
    (*n)++;
}

/* Add the comma-separated keys of one token; returns whether it ends in a
 * comma (or `was` if the token is empty, like caddy's skipped ""). */
static int add_keys(parser *p, cf_block *b, const cf_rawtok *t, int was)
{
    char *x = expand_env(t->text);
    size_t len = strlen(x);
    int trailing = len ? x[len - 1] == ',' : was;
    for (char *s = x; *s;) {
        size_t k = strcspn(s, ",");
        if (k)
            add_token(&b->keys, &b->nkeys, cf_xstrndup(s, k), p->insts[t->inst].name, t->line);
        s += k + (s[k] == ',');
    }
    free(x);
    return trailing;
}

/* Read the keys line(s). *eof is set when input ends after the keys. */
static int parse_keys(parser *p, cf_block *b, int *eof)
{
    int expecting = 0;
    for (;;) {
        cf_rawtok *t = &p->ts.v[p->pos];
        int imported = is(t, "import") && newline_before(p, p->pos);
        if (imported) {
            if (do_import(p, p->pos) < 0)
                return -1;
        } else {
            if (is(t, "{")) {
                if (expecting)
                    return perr(p, t, "Expected another key but had '{' - check for extra comma");
                return 0;
            }
            if (is(t, "}"))
                return perr(p, t, MSG_UNMATCHED);
            expecting = add_keys(p, b, t, expecting);
            p->pos++;
        }
        if (p->pos >= p->ts.n) {
            if (expecting)
                return perr(p, &p->ts.v[p->pos - 1],
                            "unexpected EOF: expected another key after ','");
            *eof = 1;
            return 0;
        }
        /* after an import, its first token is read as a key */
        if (!imported && !expecting && newline_before(p, p->pos))
            return 0;
    }
}

static int find_dir(cf_block *b, const char *name)
{
    for (size_t i = 0; i < b->ndirs; i++)
        if (strcmp(b->dirs[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void add_dtok(parser *p, cf_directive *d, const cf_rawtok *t, char *text)
{
    add_token(&d->tokens, &d->ntokens, text, p->insts[t->inst].name, t->line);
}

/* One directive: its name and everything up to the end of its line,
 * nested blocks included. */
static int parse_directive(parser *p, cf_block *b)
{
    cf_rawtok *t = &p->ts.v[p->pos];
    char *name = expand_env(t->text);
    int di = find_dir(b, name);
    if (di < 0) {
        push_room((void **)&b->dirs, b->ndirs, sizeof *b->dirs);
        di = (int)b->ndirs++;
        memset(&b->dirs[di], 0, sizeof b->dirs[di]);
        b->dirs[di].name = name;
    }
    cf_directive *d = &b->dirs[di];
    d->noccur++;
    add_dtok(p, d, t, name);
    p->pos++;
    int nesting = 0;
    size_t open = 0;
    while (p->pos < p->ts.n) {
        t = &p->ts.v[p->pos];
        int nl = newline_before(p, p->pos);
        if (is(t, "{")) {
            if (nl)
                return perr(p, t, "Unexpected '{' at the start of a line: a block must open "
                                  "on the same line as its directive");
            if (nesting++ == 0)
                open = p->pos;
        } else if (nl && nesting == 0) {
            return 0;
        } else if (is(t, "}")) {
            if (nesting == 0)
                return perr(p, t, MSG_UNMATCHED);
            nesting--;
        } else if (nl && is(t, "import")) {
            if (do_import(p, p->pos) < 0)
                return -1;
            continue;
        }
        add_dtok(p, d, t, expand_env(t->text));
        p->pos++;
    }
    if (nesting > 0)
        return perr(p, &p->ts.v[open], MSG_UNCLOSED);
    return 0;
}

/* The lines of a server block, with or without braces. */
static int parse_body(parser *p, cf_block *b)
{
    size_t open = (size_t)-1;
    if (is(tok_at(p, p->pos), "{"))
        open = p->pos++;
    while (p->pos < p->ts.n) {
        cf_rawtok *t = &p->ts.v[p->pos];
        if (is(t, "}")) {
            if (open == (size_t)-1)
                return perr(p, t, MSG_UNMATCHED);
            p->pos++;
            return 0;
        }
        if (is(t, "import")) {
            if (do_import(p, p->pos) < 0)
                return -1;
            continue;
        }
        if (is(t, "{"))
            return perr(p, t, "Unexpected '{' at the start of a line: a block must open "
                              "on the same line as its directive");
        if (parse_directive(p, b) < 0)
            return -1;
    }
    /* CoreDNS's parser checks for the closing brace by looking at the last
     * token it read: a file that ends with the '}' of the last directive's
     * own block leaves the server block's '}' out and is still accepted. */
    if (open != (size_t)-1 && !(p->ts.n > open + 1 && is(&p->ts.v[p->ts.n - 1], "}")))
        return perr(p, &p->ts.v[open], MSG_UNCLOSED);
    return 0;
}

/* Whether the block's keys make it a snippet definition "(name)". */
static int is_snippet(const cf_block *b)
{
    if (b->nkeys != 1)
        return 0;
    size_t len = strlen(b->keys[0].text);
    return len >= 2 && b->keys[0].text[0] == '(' && b->keys[0].text[len - 1] == ')';
}

/* Whether a snippet's own lines import it. */
static int snippet_imports_itself(const snippet *sn)
{
    for (size_t i = 0; i + 1 < sn->toks.n; i++) {
        const cf_rawtok *a = &sn->toks.v[i];
        int line_start = i == 0 || sn->toks.v[i - 1].inst != a->inst ||
                         sn->toks.v[i - 1].line + cf_newlines(sn->toks.v[i - 1].text) < a->line;
        if (!line_start || strcmp(a->text, "import") != 0)
            continue;
        char *x = expand_env(sn->toks.v[i + 1].text);
        int self = strcmp(x, sn->name) == 0;
        free(x);
        if (self)
            return 1;
    }
    return 0;
}

static int parse_snippet(parser *p, const cf_block *b, int eof)
{
    const cf_token *key = &b->keys[0];
    char *name = cf_xstrndup(key->text + 1, strlen(key->text) - 2);
    int rc = -1;
    if (find_snippet(p, name)) {
        perr_tok(p, key, "redeclaration of previously declared snippet '%s'", name);
    } else if (eof || !is(tok_at(p, p->pos), "{")) {
        if (eof)
            perr_tok(p, key, "Expected '{' to open snippet '%s'", name);
        else
            perr(p, &p->ts.v[p->pos], "Expected '{' to open snippet '%s'", name);
    } else {
        size_t open = p->pos++;
        int depth = 1;
        cf_tokvec body = { 0 };
        for (; p->pos < p->ts.n; p->pos++) {
            const cf_rawtok *t = &p->ts.v[p->pos];
            depth += is(t, "{") - is(t, "}");
            if (depth == 0)
                break;
            cf_tokvec_push(&body, cf_xstrdup(t->text), t->line, t->inst);
        }
        snippet sn = { name, body };
        if (depth != 0) {
            perr(p, &p->ts.v[open], MSG_UNCLOSED);
        } else if (snippet_imports_itself(&sn)) {
            perr(p, &p->ts.v[open], "snippet '%s' imports itself", name);
        } else {
            p->pos++;
            cf_grow((void **)&p->snips, &p->snipcap, p->nsnips + 1, sizeof *p->snips);
            p->snips[p->nsnips++] = sn;
            return 0;
        }
        cf_tokvec_free(&body);
    }
    free(name);
    return rc;
}

static void free_block(cf_block *b)
{
    for (size_t i = 0; i < b->nkeys; i++)
        free(b->keys[i].text);
    free(b->keys);
    for (size_t i = 0; i < b->ndirs; i++) {
        for (size_t j = 0; j < b->dirs[i].ntokens; j++)
            free(b->dirs[i].tokens[j].text);
        free(b->dirs[i].tokens);
    }
    free(b->dirs);
}

static int parse_block(parser *p)
{
    cf_block b = { 0 };
    int eof = 0, rc = parse_keys(p, &b, &eof);
    if (rc == 0 && b.nkeys == 0 && !eof) {
        const cf_rawtok *t = &p->ts.v[p->pos];
        rc = perr(p, t, "Expected server block keys before '%s'", t->text);
    }
    if (rc == 0 && b.nkeys > 0) {
        if (is_snippet(&b)) {
            rc = parse_snippet(p, &b, eof);
            free_block(&b);
            return rc;
        }
        if (!eof)
            rc = parse_body(p, &b);
    }
    if (rc < 0 || b.nkeys == 0) {
        free_block(&b);
        return rc;
    }
    cf_file *f = p->f;
    push_room((void **)&f->blocks, f->nblocks, sizeof *f->blocks);
    f->blocks[f->nblocks++] = b;
    return 0;
}

/* ---- entry points ------------------------------------------------------ */

static void parser_free(parser *p)
{
    cf_tokvec_free(&p->ts);
    for (size_t i = 0; i < p->ninsts; i++)
        free(p->insts[i].real);
    free(p->insts);
    for (size_t i = 0; i < p->nsnips; i++) {
        free(p->snips[i].name);
        cf_tokvec_free(&p->snips[i].toks);
    }
    free(p->snips);
}

static cf_file *parse_text(const char *name, const char *text, size_t len,
                           const cf_limits *lim, char *err, size_t errlen)
{
    parser p = { 0 };
    p.lim = lim;
    p.err = err;
    p.errlen = errlen;
    p.f = cf_xrealloc(NULL, sizeof *p.f);
    memset(p.f, 0, sizeof *p.f);
    p.f->path = cf_xstrdup(name);
    char *real = realpath(name, NULL);
    int root = new_inst(&p, name, real, -1);
    free(real);
    cf_lex(text, len, root, &p.ts, lim->max_tokens);
    int rc = 0;
    if (p.ts.n > lim->max_tokens)
        rc = perr(&p, &p.ts.v[p.ts.n - 1], "too many tokens (limit %zu)", lim->max_tokens);
    while (rc == 0 && p.pos < p.ts.n)
        rc = parse_block(&p);
    parser_free(&p);
    if (rc < 0) {
        cf_free(p.f);
        return NULL;
    }
    if (err && errlen)
        err[0] = '\0';
    return p.f;
}

cf_file *cf_parse_string_limited(const char *name, const char *text, const cf_limits *lim,
                                 char *err, size_t errlen)
{
    assert(lim);
    if (!name)
        name = "Corefile";
    if (!text)
        text = "";
    return parse_text(name, text, strlen(text), lim, err, errlen);
}

cf_file *cf_parse_string(const char *name, const char *text, char *err, size_t errlen)
{
    return cf_parse_string_limited(name, text, &cf_default_limits, err, errlen);
}

cf_file *cf_parse_file(const char *path, char *err, size_t errlen)
{
    return cf_parse_file_limited(path, &cf_default_limits, err, errlen);
}

cf_file *cf_parse_file_limited(const char *path, const cf_limits *lim, char *err, size_t errlen)
{
    assert(path && lim);
    size_t n = 0;
    const char *why = NULL;
    char *buf = file_read(path, &n, FILE_PIPE_OK, &why);
    if (!buf) {
        if (err && errlen)
            snprintf(err, errlen, "%s: %s", path, why);
        return NULL;
    }
    cf_file *f = parse_text(path, buf, n, lim, err, errlen);
    free(buf);
    return f;
}

void cf_free(cf_file *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nblocks; i++)
        free_block(&f->blocks[i]);
    free(f->blocks);
    for (size_t i = 0; i < f->nfiles; i++)
        free(f->files[i]);
    free(f->files);
    free(f->path);
    free(f);
}

const cf_directive *cf_block_directive(const cf_block *b, const char *name)
{
    if (!b || !name)
        return NULL;
    for (size_t i = 0; i < b->ndirs; i++)
        if (strcmp(b->dirs[i].name, name) == 0)
            return &b->dirs[i];
    return NULL;
}
