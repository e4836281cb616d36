/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench/tcpq.c — queries per second over one DNS-over-TCP connection, for
 * answers up to 64 KB (dnsperf 2.x asserts on them). Keeps DEPTH queries
 * in flight on the connection, counts whole replies for SECS seconds and
 * prints "QPS <n> bytes/reply <m> tc <0|1>". Built and run by bench/bigsvc:
 *   cc -O2 -o tcpq bench/tcpq.c
 *   tcpq 127.0.0.1 PORT svc-00000.ns-0.svc.cluster.local 1 SECS DEPTH
 * (qtype as a number). 127.0.0.1 only; no EDNS.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int read_full(int fd, unsigned char *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: tcpq ADDR PORT QNAME QTYPE SECS DEPTH\n");
        return 2;
    }
    unsigned char q[2 + 12 + 256 + 4];
    size_t o = 2 + 12;
    memset(q, 0, sizeof q);
    q[2 + 5] = 1;                               /* QDCOUNT 1, RD off */
    for (char *s = argv[3], *dot; *s; s = dot + 1) {
        dot = strchr(s, '.');
        size_t l = dot ? (size_t)(dot - s) : strlen(s);
        if (l == 0 || l > 63 || o + l + 6 > sizeof q)
            return 2;
        q[o++] = (unsigned char)l;
        memcpy(q + o, s, l);
        o += l;
        if (!dot)
            break;
    }
    q[o++] = 0;
    int qtype = atoi(argv[4]);
    q[o++] = (unsigned char)(qtype >> 8), q[o++] = (unsigned char)qtype;
    q[o++] = 0, q[o++] = 1;
    q[0] = (unsigned char)((o - 2) >> 8), q[1] = (unsigned char)(o - 2);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2])) };
    inet_pton(AF_INET, argv[1], &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        perror("connect");
        return 1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    double secs = atof(argv[5]), end = now() + secs;
    int depth = atoi(argv[6]);
    static unsigned char buf[65536];
    long n = 0;
    size_t last = 0;
    int tc = 0;
    for (int i = 0; i < depth; i++)
        if (write(fd, q, o) != (ssize_t)o)
            return 1;
    double t0 = now();
    for (;;) {
        unsigned char lp[2];
        if (read_full(fd, lp, 2) < 0)
            break;
        size_t len = (size_t)(lp[0] << 8 | lp[1]);
        if (read_full(fd, buf, len) < 0)
            break;
        last = len;
        tc = len > 3 && (buf[2] & 0x02);
        n++;
        if (now() >= end)
            break;
        q[2] = (unsigned char)(n >> 8), q[3] = (unsigned char)n;
        if (write(fd, q, o) != (ssize_t)o)
            break;
    }
    double el = now() - t0;
    printf("QPS %.0f bytes/reply %zu tc %d\n", el > 0 ? (double)n / el : 0.0, last, tc);
    close(fd);
    return n > 0 ? 0 : 1;
}
