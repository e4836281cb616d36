/* SPDX-License-Identifier: Apache-2.0 */
/*
 * health — process liveness endpoint (CoreDNS's health plugin).
 *
 *   health [ADDRESS] { lameduck DURATION }
 *
 * start() routes /health on ADDRESS (default ":8080") through http.c, which
 * answers 200 "OK" for as long as the process runs; several blocks naming
 * the same address share one listener. `lameduck` asks the server core to
 * keep serving that long after SIGTERM (instance_set_lameduck), during which
 * /health still answers 200. The plugin is not in the query chain.
 *
 * Like CoreDNS, it polls its own endpoint once a second from a small thread
 * and records how long that took in coredns_health_request_duration_seconds
 * (buckets 0.25 ms .. 2.5 s) and failures in
 * coredns_health_request_failures_total; a slow answer means the process is
 * struggling to keep up.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include "server/plugin.h"
#include "server/http.h"
#include "common/addr.h"
#include "common/log.h"
#include "runtime/metrics.h"
#include "runtime/periodic.h"
#include "server/server.h"

#define DEFAULT_ADDR ":8080"
#define POLL_TIMEOUT_S 3

typedef struct health {
    char addr[256];
    double lameduck;
    struct sockaddr_storage poll_to;     /* where the self-check connects */
    socklen_t poll_len;
    char poll_url[300];
    struct instance *ins;
    periodic *poller;                    /* the self-check, NULL when not running */
    metric_family *duration, *failures;  /* the instance registry's */
} health;

static void register_metrics(health *h, metrics_registry *reg)
{
    double b[5];
    metrics_exponential_buckets(b, 5, 0.00025, 10);
    h->duration = metrics_family(reg, "coredns_health_request_duration_seconds",
                                 "Histogram of the time (in seconds) each request took.",
                                 METRIC_HISTOGRAM, NULL, b, 5);
    h->failures = metrics_family(reg, "coredns_health_request_failures_total",
                                 "The number of times the health check failed.",
                                 METRIC_COUNTER, NULL, NULL, 0);
}

/* ---- the endpoint ----------------------------------------------------- */

static void health_http(struct evhttp_request *req, void *data)
{
    (void)data;
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 500, "Internal Server Error");
        return;
    }
    evbuffer_add(b, "OK", 2);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; charset=utf-8");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* ---- the self-check --------------------------------------------------- */

/* Address to poll: the listen address, with "" and localhost as loopback. */
static int poll_target(health *h)
{
    char host[256];
    const char *colon = strrchr(h->addr, ':');
    int port = atoi(colon + 1);
    size_t hl = (size_t)(colon - h->addr);
    if (h->addr[0] == '[')
        snprintf(host, sizeof host, "%.*s", (int)hl - 2, h->addr + 1);
    else
        snprintf(host, sizeof host, "%.*s", (int)hl, h->addr);
    if (!host[0]) {
        const char *def = addr_default_bind();
        snprintf(host, sizeof host, "%s", def ? def : "127.0.0.1");
    } else if (strcmp(host, "localhost") == 0) {
        snprintf(host, sizeof host, "127.0.0.1");
    }
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res;
    char ps[8];
    snprintf(ps, sizeof ps, "%d", port);
    if (getaddrinfo(host, ps, &hints, &res) != 0)
        return -1;
    memcpy(&h->poll_to, res->ai_addr, res->ai_addrlen);
    h->poll_len = res->ai_addrlen;
    freeaddrinfo(res);
    snprintf(h->poll_url, sizeof h->poll_url, "http://%s%s%s:%d/health",
             strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", port);
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One GET /health. 0 on an HTTP answer, -1 (errno-ish text in why). */
static int poll_once(health *h, char *why, size_t whylen)
{
    int fd = socket(h->poll_to.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = { POLL_TIMEOUT_S, 0 };
    char buf[512];
    int rc = -1;
    if (fd < 0) {
        snprintf(why, whylen, "%s", strerror(errno));
        return -1;
    }
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int n = snprintf(buf, sizeof buf, "GET /health HTTP/1.1\r\nHost: health\r\n"
                     "Connection: close\r\n\r\n");
    if (connect(fd, (struct sockaddr *)&h->poll_to, h->poll_len) < 0 ||
        write(fd, buf, (size_t)n) != n) {
        snprintf(why, whylen, "%s", strerror(errno));
    } else {
        ssize_t got = read(fd, buf, sizeof buf - 1);
        if (got >= 12 && memcmp(buf, "HTTP/1.", 7) == 0)
            rc = 0;
        else
            snprintf(why, whylen, "%s", got < 0 ? strerror(errno) : "no HTTP response");
    }
    close(fd);
    return rc;
}

static void check(health *h)
{
    char why[128];
    double t0 = now_s();
    int rc = poll_once(h, why, sizeof why);
    double el = now_s() - t0;
    metrics_observe(h->duration, NULL, el);
    if (rc < 0) {
        metrics_add(h->failures, NULL, 1);
        log_warning("plugin/health: Local health request to \"%s\" failed: %s", h->poll_url, why);
    } else if (el > 1) {
        log_warning("plugin/health: Local health request to \"%s\" took more than 1s: %gs",
                    h->poll_url, el);
    }
}

static double poll_task(void *arg)
{
    check(arg);
    return 1;
}

/* ---- plugin ----------------------------------------------------------- */

static int parse_block(cf_disp *d, double *lameduck)
{
    while (cf_next_block(d)) {
        if (strcmp(cf_val(d), "lameduck") != 0)
            return cf_prop_err(d);
        const char *args[2];
        if (cf_remaining_args(d, args, 2) != 1)
            return cf_arg_err(d);
        if (cf_parse_duration(d, args[0], lameduck) < 0)
            return -1;
    }
    return 0;
}

/* Every occurrence is read; the last address and lameduck win (CoreDNS). */
static int health_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    char addr[256];
    double lameduck = 0;
    snprintf(addr, sizeof addr, "%s", DEFAULT_ADDR);
    while (cf_next(d)) {
        if (http_addr_arg(d, "health", addr, sizeof addr) < 0)
            return -1;
        if (parse_block(d, &lameduck) < 0)
            return -1;
    }
    health *h = calloc(1, sizeof *h);
    if (!h)
        return cf_err(d, "plugin/health: out of memory");
    snprintf(h->addr, sizeof h->addr, "%s", addr);
    h->lameduck = lameduck;
    *inst = h;
    return 0;
}

/* One self-check per (configuration, address), however many blocks of the
 * instance enable health on it: the first instance to start on an address
 * claims it in the instance's named values. */
static int health_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    health *h = inst;
    register_metrics(h, instance_metrics(ins));
    if (http_register(ins, h->addr, "/health", health_http, NULL, err, errlen) < 0)
        return -1;
    if (h->lameduck > 0)
        instance_set_lameduck(ins, h->lameduck);
    h->ins = ins;
    char key[300];
    snprintf(key, sizeof key, "health.poll %s", h->addr);
    if (instance_value(ins, key))
        return 0;                                 /* already polled */
    if (poll_target(h) == 0)
        h->poller = periodic_start(poll_task, h, 1, 0);
    if (h->poller && instance_set_value(ins, key, h, NULL) < 0) {
        snprintf(err, errlen, "plugin/health: out of memory");
        return -1;
    }
    return 0;
}

static void health_stop(void *inst)
{
    health *h = inst;
    if (!h->poller)
        return;
    periodic_stop(h->poller);
    h->poller = NULL;
}

static void health_destroy(void *inst)
{
    health *h = inst;
    if (!h)
        return;
    health_stop(h);
    free(h);
}

const plugin_def plugin_health = {
    .name = "health",
    .setup = health_setup,
    .start = health_start,
    .stop = health_stop,
    .destroy = health_destroy,
};
