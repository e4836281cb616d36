/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cf_private.h — internals shared by the Corefile lexer (lexer.c) and
 * parser (parser.c). Nothing outside src/corefile includes this file.
 *
 * The lexer turns a buffer into raw tokens: text exactly as written (quotes
 * removed, \" unescaped, environment references still unexpanded), the line
 * where the token starts and the "instance" it came from. An instance is one
 * reading of one file (the Corefile, each imported file, each snippet
 * expansion); the parser uses it both to tell lines of different files apart
 * and to detect import cycles.
 */
#ifndef TOPODNS_CF_PRIVATE_H
#define TOPODNS_CF_PRIVATE_H

#include <stddef.h>
#include "corefile/corefile.h"

typedef struct cf_rawtok {
    char *text;
    int line;
    int inst;
} cf_rawtok;

typedef struct cf_tokvec {
    cf_rawtok *v;
    size_t n, cap;
} cf_tokvec;

/* Append the tokens of buf[0..len) to out, all tagged with inst; stops
 * early, once out holds more than max tokens (the caller's limit: a
 * Corefile that imports a large file fails without lexing all of it). */
void cf_lex(const char *buf, size_t len, int inst, cf_tokvec *out, size_t max);
/* Append one token (takes ownership of text). */
void cf_tokvec_push(cf_tokvec *tv, char *text, int line, int inst);
/* Free every token text and the vector itself. */
void cf_tokvec_free(cf_tokvec *tv);

/* Allocation helpers: out of memory is fatal (logged, exit 1). */
void *cf_xrealloc(void *p, size_t n);
char *cf_xstrndup(const char *s, size_t n);
char *cf_xstrdup(const char *s);
/* Grow *vec (elements of size elsz) so that it holds at least need elements. */
void cf_grow(void **vec, size_t *cap, size_t need, size_t elsz);

/* Caps on file imports and on the token count after all imports (the
 * latter guards memory). cf_parse_file/cf_parse_string use
 * cf_default_limits; the _limited variants take others (unit tests lower
 * them). The caller keeps *lim alive for the call. */
typedef struct cf_limits {
    unsigned long max_file_imports;
    size_t max_tokens;
} cf_limits;
extern const cf_limits cf_default_limits;
cf_file *cf_parse_file_limited(const char *path, const cf_limits *lim, char *err, size_t errlen);
cf_file *cf_parse_string_limited(const char *name, const char *text, const cf_limits *lim,
                                 char *err, size_t errlen);

/* How many '\n' a token text holds (a quoted token may span lines). */
int cf_newlines(const char *s);

#endif
