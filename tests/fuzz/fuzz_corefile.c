/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_corefile.c — libFuzzer harness for the Corefile lexer, parser and
 * dispenser: any input must parse or fail with an error, never crash or
 * leak, and walking every directive like a plugin must stay in bounds.
 *
 * The input is parsed as the Corefile of tests/fuzz/corefile_root/, whose
 * few small files (plain directives, a snippet, an import cycle, an empty
 * file, a subdirectory) are what its imports and globs find. An input
 * whose imports could leave that directory is skipped before it is
 * parsed: an import argument that starts with '/', or holds "..", '{' (an
 * environment placeholder) or '\\' (an escape). Earlier long runs, which
 * parsed under a directory that does not exist and let absolute imports
 * through, learnt to glob across this machine's directories
 * (`import ///..//x/.?/etc/hosts` with a star for the x, `{$HOME}/.?`):
 * each input then listed and stat'ed whole directories, the rate fell
 * from about 5,400 to 330 inputs a second, and an input's result depended
 * on the machine it ran on. The parser's limits are the product's code with
 * smaller values (2,000 tokens, 20 file imports instead of 5,000,000 and
 * 100,000), so that the limits' own errors are reached too, and by an
 * input's own text (4,096 octets at most) as well as by its imports. With
 * 20,000 tokens and 100 imports the corpus learnt inputs that import the
 * root's files up to the limit: each cost some 20,000 allocations, and
 * after 5M executions the rate had fallen to about 750 inputs per
 * CPU-second.
 *
 * In the libFuzzer build its warnings (an import that matches nothing, ...)
 * go to /dev/null (quiet.h; FUZZ_LOG=1 keeps them).
 *
 * Built and run by scripts/fuzz (`make fuzz`); under `make check`
 * tests/fuzz/replay.c replays tests/fuzz/corpus_corefile/ and
 * tests/fuzz/regress_corefile/ through it.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "corefile/corefile.h"
#include "corefile/cf_private.h"
#ifdef FUZZING_LIBFUZZER
#include "quiet.h"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk(const cf_directive *dir)
{
    cf_disp d;
    const char *args[4];
    double secs;
    unsigned long n;
    cf_disp_init(&d, dir);
    while (cf_next(&d)) {
        cf_remaining_args(&d, args, 4);
        while (cf_next_block(&d)) {
            if (cf_next_arg(&d)) {
                cf_parse_duration(&d, cf_val(&d), &secs);
                cf_parse_uint(&d, cf_val(&d), 0, 65535, &n);
            }
            cf_prop_err(&d);
        }
        cf_arg_err(&d);
    }
}

/* 1 when an import argument of the input could name a file outside the
 * root (see the top comment). Looks at the octets after every "import",
 * past blanks and quotes, up to the next white space. */
static int leaves_root(const uint8_t *d, size_t n)
{
    for (size_t i = 0; i + 6 <= n; i++) {
        if (memcmp(d + i, "import", 6) != 0)
            continue;
        size_t j = i + 6;
        while (j < n && (d[j] == ' ' || d[j] == '\t' || d[j] == '"' || d[j] == '`'))
            j++;
        if (j < n && d[j] == '/')
            return 1;
        for (; j < n && !isspace(d[j]); j++)
            if (d[j] == '{' || d[j] == '\\' || (d[j] == '.' && j + 1 < n && d[j + 1] == '.'))
                return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef FUZZING_LIBFUZZER
    static int quiet;
    if (!quiet) {
        fuzz_quiet_stdout();        /* the parser's warnings: quiet.h */
        quiet = 1;
    }
#endif
    if (leaves_root(data, size))
        return 0;
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[CF_ERR_MAX];
    static const cf_limits lim = { .max_file_imports = 20, .max_tokens = 2000 };
    cf_file *f = cf_parse_string_limited(SRCDIR "/tests/fuzz/corefile_root/Corefile", text, &lim,
                                         err, sizeof err);
    if (f) {
        for (size_t b = 0; b < f->nblocks; b++)
            for (size_t i = 0; i < f->blocks[b].ndirs; i++)
                walk(&f->blocks[b].dirs[i]);
        cf_free(f);
    }
    free(text);
    return 0;
}
