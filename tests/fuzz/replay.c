/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — the main() of a fuzz harness in the ordinary build: every file
 * of the harness's seed corpus and of its regression inputs goes once
 * through LLVMFuzzerTestOneInput(), so `make check` (and the ASan and
 * valgrind runs of the suite) replays every input that ever crashed.
 *
 * A harness named tests/fuzz/fuzz_NAME reads, when run without arguments,
 * $top_srcdir/tests/fuzz/corpus_NAME/ and $top_srcdir/tests/fuzz/regress_NAME/
 * (the second may be missing); with arguments, those files or directories.
 * The harness's own checks abort() on a broken invariant and the sanitizers
 * abort on a memory error, so reaching the end means every input passed.
 * It prints "fuzz_NAME: N inputs replayed" and exits 0, or 1 when no input
 * was found at all (a corpus that went missing must not pass silently).
 *
 * Built with -DFUZZING_LIBFUZZER (scripts/fuzz) this file is empty and
 * libFuzzer's main() runs instead.
 */
#ifndef FUZZING_LIBFUZZER
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int main(int argc, char **argv);

/* One input file through the harness; 1 when it was read. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    size_t cap = 4096, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf)
        return 0;
    /* an exact-size copy, so that reading past the input is caught */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return 0;
    }
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 1;
}

/* Every regular file of dir (sorted), or dir itself when it is a file;
 * the number of inputs run, or -1 when it does not exist. */
static int run_path(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return run_file(dir);
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort), count = 0;
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (ents[i]->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
                count += run_file(path);
        }
        free(ents[i]);
    }
    free(ents);
    return count;
}

int main(int argc, char **argv)
{
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    if (!strncmp(base, "lt-", 3))
        base += 3;
    const char *name = !strncmp(base, "fuzz_", 5) ? base + 5 : base;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int total = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            int n = run_path(argv[i]);
            if (n < 0)
                fprintf(stderr, "%s: no such file or directory\n", argv[i]);
            else
                total += n;
        }
    } else {
        const char *top = getenv("top_srcdir");
        static const char *const kinds[] = { "corpus", "regress" };
        for (size_t k = 0; k < 2; k++) {
            char dir[4096];
            snprintf(dir, sizeof dir, "%s/tests/fuzz/%s_%s", top ? top : ".", kinds[k], name);
            int n = run_path(dir);
            if (n > 0)
                printf("%s: %d\n", dir, n);
            if (n > 0)
                total += n;
        }
    }
    printf("fuzz_%s: %d inputs replayed\n", name, total);
    return total > 0 ? 0 : 1;
}
#endif
