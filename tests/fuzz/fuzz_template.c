/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_template.c — fuzz harness for the template plugin's evaluator
 * (src/plugin/template/tmpl.h).
 *
 * Any text must either be refused by tmpl_compile() with a message, or
 * compile into a template whose printed tree is a string and which runs,
 * twice with the same result, either to an output or to an error with a
 * message. Never a crash, leak or read out of bounds.
 *
 * libFuzzer:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZING_LIBFUZZER \
 *       -D_GNU_SOURCE -Isrc tests/fuzz/fuzz_template.c src/plugin/template/tmpl.c \
 *       -o fuzz_template
 *   ./fuzz_template -max_len=512 -max_total_time=60
 *
 * Without FUZZING_LIBFUZZER a main() runs 200000 texts made of template
 * tokens from a fixed seed (the same texts every run) and prints
 * "N passed, M failed"; `make check` runs it that way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/template/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why, const char *text)
{
    fprintf(stderr, "fuzz_template: invariant broken: %s: %s\n", why, text);
    abort();
}

static const char *meta(const void *ctx, const char *label, char *buf, size_t cap)
{
    (void)ctx;
    snprintf(buf, cap, "m:%s", label);
    return buf;
}

static void one(const char *text)
{
    static const char *const match[] = { "ip-1-2.example.", "1", "", "2" };
    static const char *const names[] = { "", "a", "b", "" };
    const tmpl_data d = {
        .zone = "example.", .name = "ip-1-2.example.", .regex = "r", .cls = "IN", .type = "A",
        .remote = "192.0.2.1", .match = match, .gname = names, .nmatch = 4, .message = "msg",
        .question = "q", .qname = "IP-1-2.example.", .id = 1, .qtype = 1, .qclass = 1,
        .meta = meta,
    };
    tmpl *t = NULL;
    char err[256] = "", err2[256] = "";
    if (tmpl_compile(text, &t, err, sizeof err) < 0) {
        if (t || !err[0])
            fail("refused without a message", text);
        return;
    }
    if (!t || !tmpl_string(t))
        fail("no template", text);
    char *o1 = NULL, *o2 = NULL;
    int r1 = tmpl_exec(t, &d, &o1, err, sizeof err);
    int r2 = tmpl_exec(t, &d, &o2, err2, sizeof err2);
    if (r1 != r2)
        fail("two runs differ", text);
    if (r1 == 0 && (!o1 || !o2 || strcmp(o1, o2)))
        fail("two outputs differ", text);
    if (r1 < 0 && (o1 || !err[0] || strcmp(err, err2)))
        fail("an error without a message", text);
    free(o1);
    free(o2);
    tmpl_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    one(text);
    free(text);
    return 0;
}

#ifndef FUZZING_LIBFUZZER
int main(void)
{
    static const char *const toks[] = {
        "{{", "}}", "{{- ", " -}}", " ", ".Name", ".Group", ".Group.a", ".Group.b", ".Match",
        "index", "len", "print", "parseInt", "|", "(", ")", "\"", "\"x\\x41\\u00e9\"", "`r`",
        "1", "0x1f", "-3", "/*", "*/", "$x", "if", "\\", "\n", ".", "'a'", "1.5", ".Meta",
        "\"a\"", "16", "8", ".Question", ".Question.Name", ".Message", ".Message.Id", "{", "}",
        "-", "true", "nil", "printf", "\"ff\"", "_", "\"1_0\"", "0", "64", "99999999999999999999",
        ".Var", ":=", "\"\\q\"", "\"",
    };
    const size_t ntoks = sizeof toks / sizeof toks[0];
    uint64_t s = 0x9e3779b97f4a7c15u;
    unsigned n = 0;
    for (; n < 200000; n++) {
        char buf[600];
        size_t len = 0;
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        int wrap = (int)(s & 1), k = (int)((s >> 1) % 14) + 1;
        if (wrap)
            len += (size_t)snprintf(buf, sizeof buf, "{{ ");
        for (int i = 0; i < k; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            const char *t = toks[s % ntoks];
            size_t l = strlen(t);
            memcpy(buf + len, t, l);
            len += l;
            if (len < sizeof buf - 100 && (s >> 20) % 3 == 0)
                buf[len++] = ' ';
        }
        if (wrap)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " }}");
        buf[len] = '\0';
        LLVMFuzzerTestOneInput((const uint8_t *)buf, len);
    }
    printf("fuzz_template: %u passed, 0 failed\n", n);
    return 0;
}
#endif
