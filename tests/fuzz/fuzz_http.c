/*
 * fuzz_http.c — fuzz harness for the HTTP endpoints (src/server/http.c and
 * the handlers of health, ready and prometheus) behind libevent's request
 * parser: request lines, methods, paths, query strings, headers, bodies,
 * pipelined requests, anything a client on the metrics port can send.
 *
 * An instance is loaded from a Corefile with health, ready and prometheus
 * on one loopback address (port 0: bound, never listened on) and its
 * plugins started (instance_prepare), but not its HTTP thread. The
 * endpoints' listener also accepts on a Unix socket of this process (in the
 * abstract namespace, http_accept_on); each input is sent there by a new
 * client connection, which then shuts its sending side, and the HTTP loop
 * runs on this thread until the server closed the connection.
 *
 * Checks: whatever the server answers begins with a status line ("HTTP/" and the version),
 * and it closes the connection once the client's input ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "server/http.h"
#include "server/server.h"
#include "server/metrics.h"
#include "plugins.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ADDR "127.0.0.1:0"

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_http: %s\n", why);
    abort();
}

/* The instance, and the Unix socket its endpoints accept on. */
static instance *start(struct sockaddr_un *sun, socklen_t *len)
{
    static server_env env;
    char path[] = "/tmp/fuzz_http.XXXXXX", err[1024] = "";
    static const char text[] = ".:53 {\n    health " ADDR "\n    ready " ADDR "\n"
                               "    prometheus " ADDR "\n    whoami\n}\n";
    env.plugins = topodns_plugins;
    env.dns_port = 53;
    env.metrics = metrics_registry_new();
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, sizeof text - 1) != (ssize_t)(sizeof text - 1))
        abort();
    close(fd);
    instance *ins = instance_load(&env, path, err, sizeof err);
    unlink(path);
    if (!ins || instance_prepare(ins, NULL, err, sizeof err) < 0)
        fail(err);
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    int n = snprintf(sun->sun_path + 1, sizeof sun->sun_path - 1, "topodns-fuzz-http-%d",
                     (int)getpid());
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)sun, *len) < 0 || listen(l, 16) < 0 ||
        http_accept_on(ins, ADDR, l) < 0)
        fail("cannot listen on the Unix socket");
    return ins;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static instance *ins;
    static struct sockaddr_un sun;
    static socklen_t sunlen;
    if (!ins)
        ins = start(&sun, &sunlen);
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sun, sunlen) < 0)
        fail("cannot connect");
    /* a Unix socket's buffer holds far more than the inputs */
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(c, data + off, size - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(c, SHUT_WR);
    fcntl(c, F_SETFL, O_NONBLOCK);
    char head[16];
    size_t got = 0;
    int closed = 0;
    for (int round = 0; round < 10000 && !closed; round++) {
        http_run_once(ins);
        char buf[65536];
        ssize_t n;
        while ((n = read(c, buf, sizeof buf)) > 0) {
            if (got < sizeof head) {
                size_t k = (size_t)n < sizeof head - got ? (size_t)n : sizeof head - got;
                memcpy(head + got, buf, k);
                got += k;
            }
        }
        if (n == 0 || (n < 0 && errno != EAGAIN))
            closed = 1;
    }
    if (!closed)
        fail("the server kept the connection open after the input ended");
    if (got && (got < 9 || memcmp(head, "HTTP/", 5)))
        fail("an answer without a status line");
    close(c);
    http_run_once(ins);
    return 0;
}
