/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_http.c — fuzz harness for the HTTP endpoints (src/server/http.c and
 * the handlers of health, ready, prometheus and topology's explain) behind
 * libevent's request parser: request lines, methods, paths, query strings,
 * headers, bodies, pipelined requests, anything a client on those ports
 * can send.
 *
 * One instance with every endpoint on one loopback address (port 0: bound,
 * never listened on) and no HTTP thread: health, ready, prometheus,
 * kubernetes and `topology { explain }` over the fuzz fixture (fixture.h).
 * Every plugin is started as instance_prepare() would, but the kubernetes
 * plugin (no API client): its store is filled by hand and marked synced.
 * So /health, /ready, /metrics and /explain (whose queries run through this
 * instance's chain) share one evhttp and one connection per input, and
 * any other path gets libevent's 404. (Earlier two instances, the plain
 * endpoints and the explain one, got every input each: twice libevent's
 * connection setup and parsing for the same code.)
 *
 * The listener also accepts on a Unix socket of this process (in the
 * abstract namespace, http_accept_on). Every input is sent by a new client
 * connection, which then shuts its sending side, while the instance's HTTP
 * loop runs on this thread (http_run_once: one pass, no waiting) until the
 * server closed the connection; one more pass then, so that whatever the
 * connection held is freed within the input (libFuzzer's leak check counts
 * mallocs and frees per input). The instance's event loop uses epoll's
 * changelist (src/server/http.c), as in the product.
 *
 * With FUZZ_HTTP_SHOW set in the environment the start of each answer is
 * printed (to see what the seeds reach).
 *
 * Checks: whatever the server answers begins with a status line ("HTTP/"
 * and the version), and it closes the connection once the client's input
 * ended.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "plugin/topology/topo_plugin.h"
#include "server/http.h"
#include "runtime/metrics.h"
#include "server/server.h"
#include "fixture.h"
#include "plugins.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ADDR "127.0.0.1:0"

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_http: %s\n", why);
    abort();
}

/* An instance from a Corefile text (loaded, nothing started). */
static instance *load(server_env *env, const char *text)
{
    char path[] = "/tmp/fuzz_http.XXXXXX", err[1024] = "";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
    instance *ins = instance_load(env, path, err, sizeof err);
    unlink(path);
    if (!ins)
        fail(err);
    return ins;
}

static const handler *handler_of(instance *ins, const plugin_def *def)
{
    const handler *hs[64];
    size_t n = instance_handlers(ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (hs[i]->def == def)
            return hs[i];
    fail("plugin missing from the chain");
    return NULL;
}

/* A listening Unix socket (abstract namespace) handed to the listener of
 * ADDR in ins; its address into sun/len. */
static void listen_unix(instance *ins, struct sockaddr_un *sun, socklen_t *len)
{
    memset(sun, 0, sizeof *sun);
    sun->sun_family = AF_UNIX;
    int n = snprintf(sun->sun_path + 1, sizeof sun->sun_path - 1, "topodns-fuzz-http-%d",
                     (int)getpid());
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)sun, *len) < 0 || listen(l, 16) < 0 ||
        http_accept_on(ins, ADDR, l) < 0)
        fail("cannot listen on the Unix socket");
}

typedef struct harness {
    server_env env;
    instance *ins;
    struct sockaddr_un sun;
    socklen_t sunlen;
    int show;                               /* FUZZ_HTTP_SHOW is set */
} harness;

static harness *start(void)
{
    static const char text[] = ".:53 {\n    health " ADDR "\n    ready " ADDR "\n"
                               "    prometheus " ADDR "\n    whoami\n"
                               "    kubernetes cluster.local in-addr.arpa ip6.arpa\n"
                               "    topology {\n        explain " ADDR "\n    }\n}\n";
    char err[1024] = "";
    harness *h = calloc(1, sizeof *h);
    if (!h)
        abort();
    h->env.plugins = topodns_plugins;
    h->env.dns_port = 53;
    h->env.metrics = metrics_registry_new();
    store_reader_register();
    h->ins = load(&h->env, text);
    void *k = handler_of(h->ins, &plugin_kubernetes)->inst;
    fuzz_fixture_load(kubernetes_store(k));
    kubernetes_set_synced(k, 1);
    /* every plugin's start() in chain order, as instance_prepare() does,
     * but the kubernetes plugin's (it would start an API client) */
    const handler *hs[64];
    size_t n = instance_handlers(h->ins, hs, 64);
    for (size_t i = 0; i < n; i++)
        if (hs[i]->def != &plugin_kubernetes && hs[i]->def->start &&
            hs[i]->def->start(hs[i]->inst, h->ins, err, sizeof err) < 0)
            fail(err);
    listen_unix(h->ins, &h->sun, &h->sunlen);
    h->show = getenv("FUZZ_HTTP_SHOW") != NULL;
    return h;
}

/* One input to the instance's endpoints, as one client connection. */
static void send_to(const harness *h, const uint8_t *data, size_t size)
{
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    /* the backlog has room: a nonblocking connect completes at once */
    if (c < 0 || connect(c, (const struct sockaddr *)&h->sun, h->sunlen) < 0)
        fail("cannot connect");
    /* a Unix socket's buffer holds far more than the inputs (-max_len) */
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(c, data + off, size - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    shutdown(c, SHUT_WR);
    char head[15];
    size_t got = 0;
    int closed = 0;
    for (int round = 0; round < 10000 && !closed; round++) {
        http_run_once(h->ins);
        char buf[4096];
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
    if (h->show)                            /* to see what the seeds reach */
        printf("answer starts: %.*s\n", (int)got, head);
    close(c);
    http_run_once(h->ins);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static harness *h;
    if (!h)
        h = start();
    send_to(h, data, size);
    return 0;
}
