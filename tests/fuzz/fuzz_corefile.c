/*
 * fuzz_corefile.c — libFuzzer harness for the Corefile lexer, parser and
 * dispenser: any input must parse or fail with an error, never crash or
 * leak, and walking every directive like a plugin must stay in bounds.
 *
 * The input is parsed under a name in a directory that does not exist, so
 * relative imports find nothing; absolute imports are limited to regular
 * files by the parser.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Isrc \
 *       tests/fuzz/fuzz_corefile.c src/corefile/lexer.c src/corefile/parser.c \
 *       src/corefile/dispenser.c src/server/log.c -o fuzz_corefile
 *   ./fuzz_corefile -max_len=4096 -max_total_time=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "corefile/corefile.h"
#include "common/log.h"

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
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    log_quiet = 1;
    char err[CF_ERR_MAX];
    cf_file *f = cf_parse_string("/nonexistent-fuzz-dir/Corefile", text, err, sizeof err);
    if (f) {
        for (size_t b = 0; b < f->nblocks; b++)
            for (size_t i = 0; i < f->blocks[b].ndirs; i++)
                walk(&f->blocks[b].dirs[i]);
        cf_free(f);
    }
    free(text);
    return 0;
}
