/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_transport.c — the transports of the server (src/server/listener.c:
 * sockets, workers, UDP; tcp.c: TCP connections and RFC 7766 framing) with
 * a real instance serving whoami on 127.0.0.1 and this test as the client
 * over real sockets: a UDP query answered from the address and port it was
 * sent to, a response packet never answered (and the socket still serving
 * after it), a packet with a readable header and a broken question
 * answered FORMERR, two queries pipelined in one TCP write both answered
 * on the connection, a TCP message shorter than a header closing the
 * connection, and tcp_frame's three outcomes on an evbuffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/thread.h>
#include "server/core.h"
#include "wire/dname.h"
#include "testenv.h"

typedef struct fixture {
    instance *ins;
    int port;
} fixture;

/* A port free for both UDP and TCP on 127.0.0.1 (closed again; the race
 * with another program is accepted). */
static int free_port(void)
{
    for (int tries = 0; tries < 20; tries++) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
        socklen_t sl = sizeof sa;
        int t = socket(AF_INET, SOCK_STREAM, 0);
        assert_true(t >= 0);
        if (bind(t, (struct sockaddr *)&sa, sizeof sa) < 0 ||
            getsockname(t, (struct sockaddr *)&sa, &sl) < 0) {
            close(t);
            continue;
        }
        int u = socket(AF_INET, SOCK_DGRAM, 0);
        int ok = u >= 0 && bind(u, (struct sockaddr *)&sa, sizeof sa) == 0;
        if (u >= 0)
            close(u);
        close(t);
        if (ok)
            return ntohs(sa.sin_port);
    }
    fail_msg("no free port on 127.0.0.1");
    return -1;
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    assert_non_null(fx);
    char text[256], err[512] = "";
    for (int tries = 0; tries < 5 && !fx->ins; tries++) {
        fx->port = free_port();
        snprintf(text, sizeof text, ".:%d {\n    bind 127.0.0.1\n    whoami\n}\n", fx->port);
        fx->ins = test_load(text, err, sizeof err);
        if (!fx->ins)
            fail_msg("%s", err);
        if (instance_start(fx->ins, err, sizeof err) < 0) {
            instance_free(fx->ins);
            fx->ins = NULL;
        }
    }
    if (!fx->ins)
        fail_msg("cannot start: %s", err);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    instance_stop(fx->ins);
    instance_free(fx->ins);
    free(fx);
    return 0;
}

static int query(uint8_t *wire, size_t cap, uint16_t id, const char *name)
{
    uint8_t dn[DNAME_MAX];
    assert_true(dname_from_str(dn, name) > 0);
    dns_query q = { .id = id, .flags = F_RD, .qname = dn, .qtype = T_A, .qclass = C_IN };
    int len = msg_query(&q, wire, cap);
    assert_true(len > 12);
    return len;
}

static int client(int type, int port)
{
    int fd = socket(AF_INET, type, 0);
    assert_true(fd >= 0);
    struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
    assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof src), 0);
    struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                               .sin_addr.s_addr = htonl(0x7f000001) };
    assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof dst), 0);
    return fd;
}

/* Octets read within ms milliseconds (0 at EOF, -1 when nothing came). */
static ssize_t recv_wait(int fd, uint8_t *buf, size_t cap, int ms)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    if (poll(&p, 1, ms) != 1)
        return -1;
    return recv(fd, buf, cap, 0);
}

/* Exactly n octets from a TCP socket, 2 s at most. */
static void recv_all(int fd, uint8_t *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t k = recv_wait(fd, buf + got, n - got, 2000);
        if (k <= 0)
            fail_msg("TCP reply cut after %zu of %zu octets", got, n);
        got += (size_t)k;
    }
}

static void parse_reply(const uint8_t *buf, size_t len, uint16_t id, uint16_t rcode)
{
    dns_msg m;
    int hdr_ok = 0;
    msg_init(&m);
    msg_parse(&m, buf, len, &hdr_ok);
    assert_true(hdr_ok);
    assert_int_equal(m.id, id);
    assert_true(m.flags & F_QR);
    assert_int_equal(m.rcode, rcode);
    msg_free(&m);
}

static void test_udp(void **state)
{
    fixture *fx = *state;
    int fd = client(SOCK_DGRAM, fx->port);
    uint8_t q[512], buf[4096];
    int len = query(q, sizeof q, 7, "udp.example.org.");
    /* a response (QR set) is never answered */
    q[2] |= 0x80;
    assert_int_equal(send(fd, q, (size_t)len, 0), len);
    assert_int_equal(recv_wait(fd, buf, sizeof buf, 300), -1);
    q[2] &= 0x7f;
    /* a readable header, a broken question: FORMERR with the same id */
    uint8_t bad[14];
    memcpy(bad, q, 12);
    bad[12] = 40;                           /* a label longer than what follows */
    bad[13] = 'x';
    assert_int_equal(send(fd, bad, sizeof bad, 0), (ssize_t)sizeof bad);
    ssize_t n = recv_wait(fd, buf, sizeof buf, 2000);
    assert_true(n >= 12);
    parse_reply(buf, (size_t)n, 7, RC_FORMERR);
    /* and the socket still answers */
    assert_int_equal(send(fd, q, (size_t)len, 0), len);
    n = recv_wait(fd, buf, sizeof buf, 2000);   /* connected: from 127.0.0.1:port only */
    assert_true(n > 12);
    parse_reply(buf, (size_t)n, 7, RC_NOERROR);
    close(fd);
}

static void test_tcp_pipelined(void **state)
{
    fixture *fx = *state;
    int fd = client(SOCK_STREAM, fx->port);
    uint8_t out[1024], buf[4096];
    size_t o = 0;
    for (uint16_t id = 1; id <= 2; id++) {
        int len = query(out + o + 2, sizeof out - o - 2, id, "tcp.example.org.");
        out[o] = (uint8_t)(len >> 8);
        out[o + 1] = (uint8_t)len;
        o += 2 + (size_t)len;
    }
    assert_int_equal(send(fd, out, o, 0), (ssize_t)o);
    int seen = 0;
    for (int i = 0; i < 2; i++) {
        recv_all(fd, buf, 2);
        size_t mlen = (size_t)(buf[0] << 8 | buf[1]);
        assert_true(mlen >= 12 && mlen <= sizeof buf);
        recv_all(fd, buf, mlen);
        uint16_t id = (uint16_t)(buf[0] << 8 | buf[1]);
        assert_true(id == 1 || id == 2);
        parse_reply(buf, mlen, id, RC_NOERROR);
        seen |= 1 << id;
    }
    assert_int_equal(seen, 6);
    close(fd);
}

static void test_tcp_short_message_closes(void **state)
{
    fixture *fx = *state;
    int fd = client(SOCK_STREAM, fx->port);
    uint8_t out[7] = { 0, 5, 1, 2, 3, 4, 5 }, buf[64];
    assert_int_equal(send(fd, out, sizeof out, 0), (ssize_t)sizeof out);
    assert_int_equal(recv_wait(fd, buf, sizeof buf, 2000), 0);     /* EOF */
    close(fd);
}

static void test_tcp_frame(void **state)
{
    (void)state;
    struct evbuffer *in = evbuffer_new();
    assert_non_null(in);
    size_t len = 0;
    assert_int_equal(tcp_frame(in, &len), 0);           /* empty */
    uint8_t b[40] = { 0, 20 };
    evbuffer_add(in, b, 1);
    assert_int_equal(tcp_frame(in, &len), 0);           /* half a length */
    evbuffer_add(in, b + 1, 15);
    assert_int_equal(tcp_frame(in, &len), 0);           /* 14 of 20 octets */
    evbuffer_add(in, b + 16, 6);
    assert_int_equal(tcp_frame(in, &len), 1);
    assert_int_equal(len, 20);
    assert_int_equal(evbuffer_get_length(in), 22);      /* nothing drained */
    evbuffer_drain(in, 22);
    uint8_t shortlen[2] = { 0, 11 };
    evbuffer_add(in, shortlen, 2);
    assert_int_equal(tcp_frame(in, &len), -1);
    evbuffer_free(in);
}

int main(void)
{
    /* as main() does: the stop reaches the workers' loops from this thread */
    evthread_use_pthreads();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_udp),
        cmocka_unit_test(test_tcp_pipelined),
        cmocka_unit_test(test_tcp_short_message_closes),
        cmocka_unit_test(test_tcp_frame),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
