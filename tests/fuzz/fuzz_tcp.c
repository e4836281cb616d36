/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_tcp.c — fuzz harness for DNS-over-TCP framing (tcp_frame() in
 * src/server/tcp.c, what every TCP connection reads its queries with).
 *
 * Input: the first octet seeds how the rest, a client's byte stream, is cut
 * into reads (1 to 64 octets, or everything at once); the reads are
 * appended to a libevent buffer as the socket would fill it, and after each
 * one every complete message is taken out exactly as the connection does.
 *
 * Checks, against a plain walk of the whole stream: the same messages come
 * out, in order, with the same octets, however the stream was cut; a length
 * under 12 stops the connection exactly where the walk finds it, and never
 * earlier; an incomplete last message never comes out. Each message then
 * goes through the query parser, as the request path does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>
#include "server/core.h"
#include "wire/msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_tcp: %s\n", why);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned seed = data[0];
    const uint8_t *s = data + 1;
    size_t n = size - 1;
    /* the walk: where each message starts, and where a bad length is */
    size_t pos = 0, expect_bad_at = (size_t)-1;
    struct evbuffer *in = evbuffer_new();
    uint8_t *msg = malloc(65536);
    if (!in || !msg)
        abort();
    size_t fed = 0, taken = 0;          /* octets appended / drained */
    int closed = 0;
    while (fed < n && !closed) {
        size_t chunk = seed == 0 ? n - fed : 1 + (seed = seed * 1103515245u + 12345u) % 64;
        if (chunk > n - fed)
            chunk = n - fed;
        evbuffer_add(in, s + fed, chunk);
        fed += chunk;
        for (;;) {
            size_t len;
            int rc = tcp_frame(in, &len);
            /* the walk's verdict at the same place */
            size_t wlen = pos + 2 <= n ? (size_t)s[pos] << 8 | s[pos + 1] : 0;
            if (pos + 2 <= n && wlen < 12)
                expect_bad_at = pos;
            if (rc < 0) {
                if (expect_bad_at != pos || pos + 2 > fed)
                    fail("closed without a bad length");
                closed = 1;
                break;
            }
            if (rc == 0) {
                if (pos + 2 <= fed && wlen < 12)
                    fail("a bad length not seen");
                if (pos + 2 <= fed && pos + 2 + wlen <= fed)
                    fail("a complete message not taken");
                break;
            }
            if (len != wlen || pos + 2 + len > fed)
                fail("a message of the wrong length");
            evbuffer_drain(in, 2);
            if (evbuffer_remove(in, msg, len) != (int)len || memcmp(msg, s + pos + 2, len))
                fail("a message with other octets");
            pos += 2 + len;
            taken += 2 + len;
            dns_msg m;
            int hdr_ok;
            msg_init(&m);
            msg_parse(&m, msg, len, &hdr_ok);
            if (!hdr_ok)
                fail("a framed message without a header");
            msg_free(&m);
        }
    }
    if (!closed && evbuffer_get_length(in) != fed - taken)
        fail("octets lost");
    evbuffer_free(in);
    free(msg);
    return 0;
}
