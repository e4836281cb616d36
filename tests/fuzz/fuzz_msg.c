/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_msg.c — fuzz harness for the message parser and encoder.
 *
 * Any input must either be rejected by msg_parse() or parse into a message
 * that encodes (with and without compression, with and without a tight size
 * limit), re-parses, and keeps its question, records and EDNS state across
 * the round trip when nothing was truncated. Never a crash, leak or read out
 * of bounds.
 *
 * libFuzzer: scripts/fuzz (`make fuzz`) builds and runs it, starting from
 * tests/fuzz/corpus_msg/.
 *
 * Without FUZZING_LIBFUZZER a main() replays files (arguments, or every file
 * in $top_srcdir/tests/fuzz/corpus_msg and regress_msg) and prints "N passed, M failed";
 * `make check` runs it that way. Corpus files whose name starts with "ok-"
 * must parse; "bad-" ones must be rejected.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out1[65536], out2[65536];

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_msg: invariant broken: %s\n", why);
    abort();
}

/* The records and question of a and b are the same. */
static void same(const dns_msg *a, const dns_msg *b)
{
    if (a->has_question != b->has_question || a->qtype != b->qtype || a->qclass != b->qclass ||
        (a->has_question && !dname_equal(a->qname, b->qname)))
        fail("question changed");
    for (int s = 0; s < SEC_COUNT; s++) {
        if (msg_count(a, s) != msg_count(b, s))
            fail("record count changed");
        for (unsigned i = 0; i < msg_count(a, s); i++) {
            dns_rr x = msg_rr(a, s, i), y = msg_rr(b, s, i);
            if (x.type != y.type || x.rclass != y.rclass || x.ttl != y.ttl || x.rdlen != y.rdlen ||
                dname_len(x.owner) != dname_len(y.owner) ||
                memcmp(x.owner, y.owner, dname_len(x.owner)) != 0 ||
                (x.rdlen && memcmp(x.rdata, y.rdata, x.rdlen) != 0))
                fail("record changed");
        }
    }
    if (a->edns.present != b->edns.present || a->edns.has_ecs != b->edns.has_ecs ||
        a->edns.udp_size != b->edns.udp_size || a->edns.do_bit != b->edns.do_bit)
        fail("edns changed");
}

static void round_trip(dns_msg *m, dns_msg *again, dns_msg *copy, int compress, size_t max)
{
    int hdr_ok;
    if (msg_copy(copy, m) < 0)
        fail("copy");
    int n = msg_encode(copy, out1, sizeof out1, max, compress);
    if (n < 0)
        return;                     /* question + OPT larger than the limit */
    if ((size_t)n > (max < 512 ? 512 : max))
        fail("encoded past the limit");
    /* the same octets again, into a buffer that holds the previous output */
    memcpy(out2, out1, (size_t)n);
    if (msg_encode(copy, out2, sizeof out2, max, compress) != n || memcmp(out1, out2, (size_t)n))
        fail("encoding depends on what the buffer held");
    if (msg_parse(again, out1, (size_t)n, &hdr_ok) != 0)
        fail("own output does not parse");
    if (!(copy->flags & F_TC))
        same(m, again);
    if (msg_encode(again, out2, sizeof out2, 65535, compress) < 0)
        fail("re-encode");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dns_msg m, again, copy;
    int hdr_ok;
    msg_init(&m);
    msg_init(&again);
    msg_init(&copy);
    if (msg_parse(&m, data, size, &hdr_ok) == 0) {
        /* an rcode kept only in the OPT would be lost without EDNS */
        if (!m.edns.present)
            m.rcode &= 0xf;
        round_trip(&m, &again, &copy, 0, 65535);
        round_trip(&m, &again, &copy, 1, 65535);
        round_trip(&m, &again, &copy, 1, 512);
        for (unsigned i = 0; i < msg_count(&m, SEC_ANSWER); i++) {
            dns_rr rr = msg_rr(&m, SEC_ANSWER, i);
            char s[512];
            rr_to_str(&rr, s, sizeof s);
        }
    } else if (hdr_ok != (size >= 12)) {
        fail("hdr_ok");
    }
    msg_free(&m);
    msg_free(&again);
    msg_free(&copy);
    return 0;
}

#ifndef FUZZING_LIBFUZZER
static int run_file(const char *path, const char *base)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAIL %s: cannot open\n", path);
        return 0;
    }
    static uint8_t buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    dns_msg m;
    int hdr_ok, rc;
    msg_init(&m);
    rc = msg_parse(&m, buf, n, &hdr_ok);
    msg_free(&m);
    if ((strncmp(base, "ok-", 3) == 0 && rc != 0) || (strncmp(base, "bad-", 4) == 0 && rc == 0)) {
        printf("FAIL %s: parse returned %d\n", base, rc);
        return 0;
    }
    printf("ok %s\n", base);
    return 1;
}

int main(int argc, char **argv)
{
    int pass = 0, failed = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            const char *b = strrchr(argv[i], '/');
            run_file(argv[i], b ? b + 1 : argv[i]) ? pass++ : failed++;
        }
    } else {
        const char *top = getenv("top_srcdir");
        static const char *const dirs[] = { "corpus_msg", "regress_msg" };
        for (size_t d = 0; d < 2; d++) {
            char dir[4096], path[8192];
            snprintf(dir, sizeof dir, "%s/tests/fuzz/%s", top ? top : ".", dirs[d]);
            struct dirent **ents;
            int n = scandir(dir, &ents, NULL, alphasort);
            if (n < 0) {
                if (d == 1)
                    continue;               /* no regression input yet */
                printf("FAIL cannot read %s\n", dir);
                return 1;
            }
            for (int i = 0; i < n; i++) {
                if (ents[i]->d_name[0] != '.') {
                    snprintf(path, sizeof path, "%s/%s", dir, ents[i]->d_name);
                    run_file(path, ents[i]->d_name) ? pass++ : failed++;
                }
                free(ents[i]);
            }
            free(ents);
        }
    }
    printf("%d passed, %d failed\n", pass, failed);
    return failed || pass == 0 ? 1 : 0;
}
#endif
