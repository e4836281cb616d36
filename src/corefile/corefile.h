/* SPDX-License-Identifier: Apache-2.0 */
/*
 * corefile.h — the Corefile: lexer, parser and the token dispenser plugins
 * read their configuration with.
 *
 * The grammar is coredns/caddy's (docs/configuration.md, The file):
 * server blocks made of keys and a brace-enclosed list of directives, each
 * directive running to the end of its line with an optional nested block that
 * opens on the same line. Comments (#), quotes ("..." with \" as the only
 * escape), environment variables ({$NAME}, {%NAME%}), snippets ((name) {...}
 * with `import name`) and `import PATH|GLOB` are resolved by the parser, so a
 * plugin only ever sees plain tokens that remember their file and line.
 *
 * The parser groups each block's tokens per directive (in file order). A
 * plugin's setup is called once per server block with a dispenser over every
 * occurrence of its directive in that block, and walks it like CoreDNS's
 * Controller:
 *
 *     while (cf_next(d)) {                // the directive name, per occurrence
 *         while (cf_next_arg(d)) ...      // its arguments, to end of line
 *         while (cf_next_block(d)) {      // each line of its { } block
 *             const char *prop = cf_val(d);
 *             ...
 *         }
 *     }
 *
 * Errors carry "file:line: message near 'token'".
 *
 * Threads and memory: parsing and dispensing run on the thread loading a
 * configuration (the main thread, or a test). A cf_file is immutable once
 * parsed and owned by whoever parsed it (an instance keeps its own until it
 * is freed); tokens point into it. Nothing here is shared or global.
 */
#ifndef TOPODNS_COREFILE_H
#define TOPODNS_COREFILE_H

#include <stddef.h>
#include <stdint.h>

#define CF_ERR_MAX 512

typedef struct cf_token {
    char *text;
    const char *file;         /* interned; lives as long as the cf_file */
    int line;
} cf_token;

typedef struct cf_directive {
    const char *name;         /* the directive as written (after env expansion) */
    cf_token *tokens;         /* all tokens of every occurrence, name included */
    size_t ntokens;
    int noccur;               /* how many times it appears in the block */
} cf_directive;

typedef struct cf_block {
    cf_token *keys;           /* server keys as written ("dns://.:53") */
    size_t nkeys;
    cf_directive *dirs;       /* one entry per distinct directive, in order of first use */
    size_t ndirs;
} cf_block;

typedef struct cf_file {
    cf_block *blocks;
    size_t nblocks;
    char *path;               /* the file read, or the name given to cf_parse_string */
    /* private */
    char **files;             /* interned file names */
    size_t nfiles;
} cf_file;

/* Parse a Corefile from disk / from memory. On error returns NULL and writes
 * "file:line: message near 'token'" into err. */
cf_file *cf_parse_file(const char *path, char *err, size_t errlen);
cf_file *cf_parse_string(const char *name, const char *text, char *err, size_t errlen);
void cf_free(cf_file *f);

/* The directive of a block by name, or NULL. */
const cf_directive *cf_block_directive(const cf_block *b, const char *name);

typedef struct cf_disp {
    const cf_token *toks;
    size_t n;
    long cur;                 /* index of the current token, -1 before the first */
    int nesting;
    char err[CF_ERR_MAX];     /* set by cf_err() and friends */
} cf_disp;

void cf_disp_init(cf_disp *d, const cf_directive *dir);
/* Advance to the next token, wherever it is. 0 when there are no more. */
int cf_next(cf_disp *d);
/* Advance to the next token only if it is on the same line. */
int cf_next_arg(cf_disp *d);
/* Inside a directive's { } block: advance to the first token of the next
 * line; 0 at the closing brace (or when there is no block). */
int cf_next_block(cf_disp *d);
/* Current token text / line / file ("" / 0 before the first token). */
const char *cf_val(const cf_disp *d);
int cf_line(const cf_disp *d);
const char *cf_file_name(const cf_disp *d);
/* Collect the rest of the line's arguments into out (at most max); returns
 * how many there were (may exceed max, in which case extras are not stored). */
int cf_remaining_args(cf_disp *d, const char **out, int max);
/* Record an error at the current token: "file:line: <msg> near 'tok'".
 * Always returns -1 so setup code can `return cf_err(d, ...)`. */
int cf_err(cf_disp *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "Wrong argument count or unexpected line ending" at the current token. */
int cf_arg_err(cf_disp *d);
/* "unknown property '<tok>'" at the current token. */
int cf_prop_err(cf_disp *d);

/* Helpers shared by setup code. Each returns 0 or -1 (with d->err set). */
/* Go's time.ParseDuration ("5s", "1m30s", "250ms", "1h", "0"; a number
 * without a unit is an error, as in CoreDNS), the one duration parser of
 * topodns. 0 with *ns set, or -1 with Go's message in err
 * (`time: missing unit in duration "30"`). */
int cf_go_duration(const char *s, int64_t *ns, char *err, size_t errlen);
/* A duration option in seconds: cf_go_duration, negative refused; an error
 * carries the file:line and Go's message. */
int cf_parse_duration(cf_disp *d, const char *s, double *seconds);
int cf_parse_uint(cf_disp *d, const char *s, unsigned long min, unsigned long max, unsigned long *out);

#endif
