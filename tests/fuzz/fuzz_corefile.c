/*
 * fuzz_corefile.c — libFuzzer harness for the Corefile lexer, parser and
 * dispenser: any input must parse or fail with an error, never crash or
 * leak, and walking every directive like a plugin must stay in bounds.
 *
 * The input is parsed under a name in a directory that does not exist, so
 * relative imports find nothing; absolute imports are limited to regular
 * files by the parser. The parser's limits are the product's code with
 * smaller values (20,000 tokens, 100 file imports instead of 5,000,000 and
 * 100,000): an input that imports every file of a library directory by a glob
 * then stops after a few hundred kilobytes instead of holding up to five
 * million tokens (with ASan, hundreds of megabytes for one input), and the
 * limits' own errors are reached more often.
 *
 * In the libFuzzer build its warnings (an import that matches nothing, ...)
 * go to /dev/null (quiet.h; FUZZ_LOG=1 keeps them).
 *
 * Built and run by scripts/fuzz (`make fuzz`); under `make check`
 * tests/fuzz/replay.c replays tests/fuzz/corpus_corefile/ and
 * tests/fuzz/regress_corefile/ through it.
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef FUZZING_LIBFUZZER
    static int quiet;
    if (!quiet) {
        fuzz_quiet_stdout();        /* the parser's warnings: quiet.h */
        quiet = 1;
    }
#endif
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char err[CF_ERR_MAX];
    static const cf_limits lim = { .max_file_imports = 100, .max_tokens = 20000 };
    cf_file *f = cf_parse_string_limited("/nonexistent-fuzz-dir/Corefile", text, &lim, err,
                                         sizeof err);
    if (f) {
        for (size_t b = 0; b < f->nblocks; b++)
            for (size_t i = 0; i < f->blocks[b].ndirs; i++)
                walk(&f->blocks[b].dirs[i]);
        cf_free(f);
    }
    free(text);
    return 0;
}
