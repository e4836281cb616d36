/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_metrics.c — unit tests of the metrics registry (src/runtime/metrics.c)
 * and the HTTP endpoint layer (src/server/http.c).
 *
 * Every test reports into one registry made by main(), so every test uses
 * its own family names. HTTP tests bind 127.0.0.1 on a free high port and
 * talk to it with a plain socket; the HTTP state belongs to an instance, so
 * they load real (empty) instances.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/thread.h>
#include "corefile/corefile.h"
#include "server/plugin.h"
#include "plugin/prometheus/prometheus.h"
#include "server/http.h"
#include "runtime/metrics.h"
#include "server/server.h"

extern const plugin_def plugin_prometheus;

static metrics_registry *R;            /* made by main() */
static const plugin_def *const plugins[] = { &plugin_prometheus, NULL };
static server_env env = { .plugins = plugins };

/* An instance of Corefile text (NULL with the error in err). */
static struct instance *load_text(const char *text, char *err, size_t errlen)
{
    char path[] = "/tmp/test_metrics_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct instance *ins = instance_load(&env, path, err, errlen);
    unlink(path);
    return ins;
}

static struct instance *empty_instance(void)
{
    char err[256];
    struct instance *ins = load_text(".:53 {\n}\n", err, sizeof err);
    assert_non_null(ins);
    return ins;
}

static char *render(void)
{
    size_t len = 0;
    char *s = metrics_render(R, &len);
    assert_non_null(s);
    assert_int_equal(strlen(s), len);
    return s;
}

/* The rendered text contains line (a whole line). */
static int has_line(const char *text, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
        if ((p == text || p[-1] == '\n') && p[n] == '\n')
            return 1;
    return 0;
}

static void assert_line(const char *text, const char *line)
{
    if (!has_line(text, line))
        fail_msg("missing line: %s\n--- got:\n%s", line, text);
}

static void test_counter(void **state)
{
    (void)state;
    static const char *const labels[] = { "zone", "proto", NULL };
    metric_family *f = metrics_family(R, "t_counter_total", "A counter.", METRIC_COUNTER,
                                      labels, NULL, 0);
    assert_non_null(f);
    assert_ptr_equal(f, metrics_family(R, "t_counter_total", "other", METRIC_COUNTER,
                                       labels, NULL, 0));
    const char *const v1[] = { ".", "udp" }, *const v2[] = { ".", "tcp" };
    metrics_add(f, v1, 1);
    metrics_add(f, v1, 2);
    metrics_add(f, v2, 0.5);
    metrics_add(f, v2, -3);                    /* ignored: counters never go down */
    assert_true(metrics_value(R, "t_counter_total", v1) == 3);
    assert_true(metrics_value(R, "t_counter_total", v2) == 0.5);
    const char *const v3[] = { "x.", "udp" };
    assert_true(metrics_value(R, "t_counter_total", v3) == 0);
    assert_true(metrics_value(R, "t_nosuch", v1) == 0);
    char *s = render();
    assert_line(s, "# HELP t_counter_total A counter.");
    assert_line(s, "# TYPE t_counter_total counter");
    /* label pairs sorted by name; series sorted by value (tcp < udp) */
    const char *tcp = strstr(s, "t_counter_total{proto=\"tcp\",zone=\".\"} 0.5\n");
    const char *udp = strstr(s, "t_counter_total{proto=\"udp\",zone=\".\"} 3\n");
    assert_non_null(tcp);
    assert_non_null(udp);
    assert_true(tcp < udp);
    free(s);
}

static void test_gauge(void **state)
{
    (void)state;
    static const char *const labels[] = { "name", NULL };
    metric_family *f = metrics_family(R, "t_gauge", "A gauge.", METRIC_GAUGE, labels, NULL, 0);
    const char *const a[] = { "a" };
    metrics_set(f, a, 5);
    metrics_add(f, a, -7);
    assert_true(metrics_value(R, "t_gauge", a) == -2);
    metrics_set(f, a, 42);
    assert_true(metrics_value(R, "t_gauge", a) == 42);
    char *s = render();
    assert_line(s, "# TYPE t_gauge gauge");
    assert_line(s, "t_gauge{name=\"a\"} 42");
    free(s);
}

static void test_no_labels_and_empty(void **state)
{
    (void)state;
    metrics_family(R, "t_plain_total", "Plain.", METRIC_COUNTER, NULL, NULL, 0);
    static const char *const labels[] = { "x", NULL };
    metrics_family(R, "t_unused_total", "Unused.", METRIC_COUNTER, labels, NULL, 0);
    char *s = render();
    assert_line(s, "t_plain_total 0");              /* exported from the start */
    assert_null(strstr(s, "t_unused_total"));        /* no series: not exported */
    free(s);
    metrics_add(metrics_family(R, "t_plain_total", "", METRIC_COUNTER, NULL, NULL, 0), NULL, 1);
    assert_true(metrics_value(R, "t_plain_total", NULL) == 1);
}

static void test_histogram(void **state)
{
    (void)state;
    static const char *const labels[] = { "server", NULL };
    static const double b[] = { 0.00025, 0.0005, 1, 100 };
    metric_family *f = metrics_family(R, "t_hist_seconds", "A histogram.", METRIC_HISTOGRAM,
                                      labels, b, 4);
    const char *const v[] = { "dns://:53" };
    metrics_observe(f, v, 0.0001);                 /* <= 0.00025 */
    metrics_observe(f, v, 0.00025);                /* on the bound: same bucket */
    metrics_observe(f, v, 0.5);                    /* <= 1 */
    metrics_observe(f, v, 1000);                   /* +Inf only */
    assert_true(metrics_value(R, "t_hist_seconds", v) == 4);
    char *s = render();
    assert_line(s, "# TYPE t_hist_seconds histogram");
    assert_line(s, "t_hist_seconds_bucket{server=\"dns://:53\",le=\"0.00025\"} 2");
    assert_line(s, "t_hist_seconds_bucket{server=\"dns://:53\",le=\"0.0005\"} 2");
    assert_line(s, "t_hist_seconds_bucket{server=\"dns://:53\",le=\"1\"} 3");
    assert_line(s, "t_hist_seconds_bucket{server=\"dns://:53\",le=\"100\"} 3");
    assert_line(s, "t_hist_seconds_bucket{server=\"dns://:53\",le=\"+Inf\"} 4");
    assert_line(s, "t_hist_seconds_sum{server=\"dns://:53\"} 1000.50035");
    assert_line(s, "t_hist_seconds_count{server=\"dns://:53\"} 4");
    /* order: buckets ascending, then _sum, then _count */
    assert_true(strstr(s, "le=\"0.00025\"") < strstr(s, "le=\"+Inf\""));
    assert_true(strstr(s, "t_hist_seconds_sum") < strstr(s, "t_hist_seconds_count"));
    free(s);
    /* a histogram without labels */
    metric_family *g = metrics_family(R, "t_hist2", "H2.", METRIC_HISTOGRAM, NULL, b, 2);
    metrics_observe(g, NULL, 0.0003);
    s = render();
    assert_line(s, "t_hist2_bucket{le=\"0.00025\"} 0");
    assert_line(s, "t_hist2_bucket{le=\"0.0005\"} 1");
    assert_line(s, "t_hist2_bucket{le=\"+Inf\"} 1");
    assert_line(s, "t_hist2_sum 0.0003");
    assert_line(s, "t_hist2_count 1");
    free(s);
}

static void test_exponential_buckets(void **state)
{
    (void)state;
    double b[4];
    metrics_exponential_buckets(b, 4, 0.00025, 2);
    assert_true(b[0] == 0.00025 && b[1] == 0.0005 && b[2] == 0.001 && b[3] == 0.002);
    metrics_exponential_buckets(b, 3, 0.001, 10);
    assert_true(b[0] == 0.001 && b[1] == 0.01 && b[2] > 0.0999 && b[2] < 0.1001);
}

static void test_escaping(void **state)
{
    (void)state;
    static const char *const labels[] = { "v", NULL };
    metric_family *f = metrics_family(R, "t_esc", "Help with \\ and\nnewline \"q\".",
                                      METRIC_GAUGE, labels, NULL, 0);
    const char *const v[] = { "a\\b\"c\nd" };
    metrics_set(f, v, 1);
    char *s = render();
    assert_line(s, "# HELP t_esc Help with \\\\ and\\nnewline \"q\".");
    assert_line(s, "t_esc{v=\"a\\\\b\\\"c\\nd\"} 1");
    free(s);
}

/* Numbers as Go's strconv.FormatFloat(v, 'g', -1, 64). */
static void test_float_format(void **state)
{
    (void)state;
    static const char *const labels[] = { "k", NULL };
    metric_family *f = metrics_family(R, "t_fmt", "Formats.", METRIC_GAUGE, labels, NULL, 0);
    static const struct { const char *k; double v; const char *want; } c[] = {
        { "a", 1, "1" }, { "b", 0, "0" }, { "c", -1, "-1" }, { "d", 0.00025, "0.00025" },
        { "e", 1e6, "1e+06" }, { "f", 123456, "123456" }, { "g", 1234567, "1.234567e+06" },
        { "h", 0.1, "0.1" }, { "i", 1.5e-05, "1.5e-05" }, { "j", -2.5, "-2.5" },
        { "k", 64000, "64000" }, { "l", 1.7e9, "1.7e+09" }, { "m", 100000.5, "100000.5" },
        { "n", 0.0001, "0.0001" }, { "o", 1e21, "1e+21" }, { "p", 3.0e-300, "3e-300" },
        { "q", 1.0 / 3, "0.3333333333333333" }, { "r", 8.192, "8.192" },
    };
    size_t n = sizeof c / sizeof c[0];
    for (size_t i = 0; i < n; i++) {
        const char *const v[] = { c[i].k };
        metrics_set(f, v, c[i].v);
    }
    const char *const nan[] = { "s" }, *const inf[] = { "t" }, *const ninf[] = { "u" };
    metrics_set(f, nan, NAN);
    metrics_set(f, inf, INFINITY);
    metrics_set(f, ninf, -INFINITY);
    char *s = render();
    char line[128];
    for (size_t i = 0; i < n; i++) {
        snprintf(line, sizeof line, "t_fmt{k=\"%s\"} %s", c[i].k, c[i].want);
        assert_line(s, line);
    }
    assert_line(s, "t_fmt{k=\"s\"} NaN");
    assert_line(s, "t_fmt{k=\"t\"} +Inf");
    assert_line(s, "t_fmt{k=\"u\"} -Inf");
    free(s);
}

static void test_sorting(void **state)
{
    (void)state;
    static const char *const labels[] = { "zz", "aa", NULL };
    metric_family *f = metrics_family(R, "t_sort", "Sort.", METRIC_COUNTER, labels, NULL, 0);
    const char *const v1[] = { "1", "b" }, *const v2[] = { "2", "a" }, *const v3[] = { "0", "b" };
    metrics_add(f, v1, 1);
    metrics_add(f, v2, 1);
    metrics_add(f, v3, 1);
    char *s = render();
    const char *p2 = strstr(s, "t_sort{aa=\"a\",zz=\"2\"} 1\n");
    const char *p3 = strstr(s, "t_sort{aa=\"b\",zz=\"0\"} 1\n");
    const char *p1 = strstr(s, "t_sort{aa=\"b\",zz=\"1\"} 1\n");
    assert_true(p1 && p2 && p3);
    assert_true(p2 < p3 && p3 < p1);
    /* families sorted by name */
    assert_true(strstr(s, "# HELP t_counter_total") < strstr(s, "# HELP t_sort "));
    free(s);
}

static void test_remove(void **state)
{
    (void)state;
    static const char *const labels[] = { "server", "name", NULL };
    metric_family *f = metrics_family(R, "t_enabled", "Enabled.", METRIC_GAUGE, labels, NULL, 0);
    const char *const a[] = { "s1", "log" }, *const b[] = { "s1", "errors" },
                      *const c[] = { "s2", "log" };
    metrics_set(f, a, 1);
    metrics_set(f, b, 1);
    metrics_set(f, c, 1);
    const char *const s1_any[] = { "s1", NULL };
    metrics_remove(f, s1_any);
    assert_true(metrics_value(R, "t_enabled", a) == 0);
    assert_true(metrics_value(R, "t_enabled", b) == 0);
    assert_true(metrics_value(R, "t_enabled", c) == 1);
    char *s = render();
    assert_null(strstr(s, "server=\"s1\""));
    assert_line(s, "t_enabled{name=\"log\",server=\"s2\"} 1");
    free(s);
    metrics_set(f, a, 1);                          /* comes back as a new series */
    assert_true(metrics_value(R, "t_enabled", a) == 1);
    metrics_remove(f, NULL);
    s = render();
    assert_null(strstr(s, "t_enabled"));
    free(s);
}

#define NADD 100000

static void *adder(void *arg)
{
    metric_family *f = arg;
    const char *const v[] = { "x" };
    for (int i = 0; i < NADD; i++) {
        metrics_add(f, v, 1);
        if (i % 1000 == 0) {                       /* new series under contention */
            char lbl[16];
            snprintf(lbl, sizeof lbl, "n%d", i / 1000);
            const char *const w[] = { lbl };
            metrics_add(f, w, 1);
        }
    }
    return NULL;
}

static void *observer(void *arg)
{
    metric_family *f = arg;
    for (int i = 0; i < NADD; i++)
        metrics_observe(f, NULL, 0.5);
    return NULL;
}

static void test_concurrency(void **state)
{
    (void)state;
    static const char *const labels[] = { "k", NULL };
    static const double b[] = { 1 };
    metric_family *f = metrics_family(R, "t_conc_total", "C.", METRIC_COUNTER, labels, NULL, 0);
    metric_family *h = metrics_family(R, "t_conc_hist", "H.", METRIC_HISTOGRAM, NULL, b, 1);
    pthread_t t[4];
    pthread_create(&t[0], NULL, adder, f);
    pthread_create(&t[1], NULL, adder, f);
    pthread_create(&t[2], NULL, observer, h);
    pthread_create(&t[3], NULL, observer, h);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    const char *const v[] = { "x" };
    assert_true(metrics_value(R, "t_conc_total", v) == 2.0 * NADD);
    for (int i = 0; i < NADD / 1000; i++) {
        char lbl[16];
        snprintf(lbl, sizeof lbl, "n%d", i);
        const char *const w[] = { lbl };
        assert_true(metrics_value(R, "t_conc_total", w) == 2);
    }
    assert_true(metrics_value(R, "t_conc_hist", NULL) == 2.0 * NADD);
    char *s = render();
    assert_line(s, "t_conc_total{k=\"x\"} 200000");
    assert_line(s, "t_conc_hist_sum 100000");
    assert_line(s, "t_conc_hist_bucket{le=\"1\"} 200000");
    free(s);
}

/* ---- http ------------------------------------------------------------- */

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    close(fd);
    return ntohs(a.sin_port);
}

/* GET path from 127.0.0.1:port; returns the whole response or NULL. */
static char *http_get(int port, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return NULL;
    }
    char req[256];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
    assert_int_equal(write(fd, req, (size_t)n), n);
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    ssize_t r;
    while ((r = read(fd, buf + len, cap - len - 1)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
    close(fd);
    return buf;
}

static void hello(struct evhttp_request *req, void *data)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "hello %s", (const char *)data);
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void test_http(void **state)
{
    (void)state;
    struct instance *i1 = empty_instance(), *i2 = empty_instance();
    int port = free_port();
    char addr[64], err[256];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    assert_int_equal(http_register(i1, addr, "/a", hello, "a", err, sizeof err), 0);
    assert_int_equal(http_register(i1, addr, "/b", hello, "b", err, sizeof err), 0);
    assert_int_equal(http_start(i1, err, sizeof err), 0);
    char *r = http_get(port, "/a");
    assert_non_null(r);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "\r\n\r\nhello a"));
    free(r);
    r = http_get(port, "/b?x=1");
    assert_non_null(strstr(r, "\r\n\r\nhello b"));
    free(r);
    r = http_get(port, "/nothing");
    assert_non_null(strstr(r, "HTTP/1.1 404"));
    free(r);
    /* a second instance binds the same address beside the first (reload) */
    assert_int_equal(http_register(i2, addr, "/a", hello, "a2", err, sizeof err), 0);
    assert_int_equal(http_start(i2, err, sizeof err), 0);
    http_stop(i1);
    r = http_get(port, "/a");
    assert_non_null(r);
    assert_non_null(strstr(r, "hello a2"));
    free(r);
    http_stop(i2);
    assert_null(http_get(port, "/a"));             /* closed */
    /* "localhost:PORT" listens on 127.0.0.1 */
    port = free_port();
    snprintf(addr, sizeof addr, "localhost:%d", port);
    assert_int_equal(http_register(i2, addr, "/l", hello, "l", err, sizeof err), 0);
    assert_int_equal(http_start(i2, err, sizeof err), 0);
    r = http_get(port, "/l");
    assert_non_null(r);
    assert_non_null(strstr(r, "hello l"));
    free(r);
    http_stop(i2);
    http_stop(i2);                                 /* twice: harmless */
    instance_free(i1);
    instance_free(i2);
}

static void test_http_conflict(void **state)
{
    (void)state;
    struct instance *ins = empty_instance();
    /* something else (without SO_REUSEPORT) holds the port */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1), 0);
    getsockname(fd, (struct sockaddr *)&a, &len);
    char addr[64], err[256], want[128];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", ntohs(a.sin_port));
    assert_int_equal(http_register(ins, addr, "/x", hello, "x", err, sizeof err), -1);
    snprintf(want, sizeof want, "listen tcp %s: bind: address already in use", addr);
    assert_string_equal(err, want);
    close(fd);
    http_stop(ins);
    instance_free(ins);
}

static void test_addr_check(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(http_addr_check(":8080", err, sizeof err), 0);
    assert_int_equal(http_addr_check("localhost:9153", err, sizeof err), 0);
    assert_int_equal(http_addr_check("[::1]:8181", err, sizeof err), 0);
    assert_int_equal(http_addr_check("127.0.0.1:0", err, sizeof err), 0);
    assert_int_equal(http_addr_check("localhost", err, sizeof err), -1);
    assert_string_equal(err, "address localhost: missing port in address");
    assert_int_equal(http_addr_check("::1:80", err, sizeof err), -1);
    assert_string_equal(err, "address ::1:80: too many colons in address");
    assert_int_equal(http_addr_check("a:99999", err, sizeof err), -1);
    assert_int_equal(http_addr_check("a:", err, sizeof err), -1);
    assert_int_equal(http_addr_check("[::1]", err, sizeof err), -1);
}

/* ---- the prometheus plugin's recording ------------------------------ */

/* Load Corefile text holding prometheus and start the plugin (setup errors
 * carry the Corefile line); *inst gets the plugin instance. */
static struct instance *prom_from(const char *text, void **inst, char *err, size_t errlen)
{
    struct instance *ins = load_text(text, err, errlen);
    if (!ins)
        return NULL;
    const handler *hs[4];
    size_t n = instance_handlers(ins, hs, 4);
    assert_int_equal(n, 1);
    *inst = hs[0]->inst;
    if (hs[0]->def->start(*inst, ins, err, errlen) < 0) {
        instance_free(ins);
        return NULL;
    }
    return ins;
}

static void report(void *inst, const char *zone, int family, enum req_proto proto,
                   uint16_t qtype, int do_bit, int rcode, const char *writer)
{
    dns_req r;
    memset(&r, 0, sizeof r);
    r.server = "dns://:53";
    r.zone = zone;
    r.peer.ss_family = family == 2 ? AF_INET6 : AF_INET;
    r.proto = proto;
    r.q.qtype = qtype;
    r.q.edns.present = do_bit;
    r.q.edns.do_bit = do_bit;
    r.writer = writer;
    r.rawlen = r.rawlen_in = 40;
    r.resp_size = 120;
    prom_report(inst, &r, rcode);
}

static void test_prometheus_report(void **state)
{
    (void)state;
    char text[128], err[512];
    void *inst;
    int port = free_port();

    /* setup errors carry the Corefile line */
    assert_null(prom_from(".:53 {\n  prometheus localhost\n}\n", &inst, err, sizeof err));
    assert_non_null(strstr(err, ":2: plugin/prometheus: address localhost: missing port"));
    assert_null(prom_from(".:53 {\n  prometheus {\n    tls x\n  }\n}\n", &inst, err,
                          sizeof err));
    assert_non_null(strstr(err, ":3: plugin/prometheus: unknown option: tls"));

    snprintf(text, sizeof text, ".:53 {\n  prometheus 127.0.0.1:%d {\n    runtime_metrics\n  }\n}\n",
             port);
    struct instance *ins = prom_from(text, &inst, err, sizeof err);
    assert_non_null(ins);
    assert_int_equal(http_start(ins, err, sizeof err), 0);

    report(inst, "t.", 1, PROTO_UDP, 1, 0, 0, "whoami");
    report(inst, "t.", 1, PROTO_UDP, 1, 1, 3, "file");
    report(inst, "t.", 2, PROTO_TCP, 28, 0, 16, "");
    report(inst, "t.", 1, PROTO_UDP, 64, 0, 4095, "");
    report(inst, "t.", 1, PROTO_UDP, 99, 0, 2, "");
    report(inst, "dropped", 1, PROTO_UDP, 1, 0, 5, "");
    const char *const a[] = { "dns://:53", "t.", "", "udp", "1", "A" };
    const char *const aaaa[] = { "dns://:53", "t.", "", "tcp", "2", "AAAA" };
    const char *const svcb[] = { "dns://:53", "t.", "", "udp", "1", "SVCB" };
    const char *const other[] = { "dns://:53", "t.", "", "udp", "1", "other" };
    assert_true(metrics_value(R, "coredns_dns_requests_total", a) == 2);
    assert_true(metrics_value(R, "coredns_dns_requests_total", aaaa) == 1);
    assert_true(metrics_value(R, "coredns_dns_requests_total", svcb) == 1);
    assert_true(metrics_value(R, "coredns_dns_requests_total", other) == 1);
    const char *const noerror[] = { "dns://:53", "t.", "", "NOERROR", "whoami" };
    const char *const nx[] = { "dns://:53", "t.", "", "NXDOMAIN", "file" };
    const char *const badsig[] = { "dns://:53", "t.", "", "BADSIG", "" };
    const char *const unk[] = { "dns://:53", "t.", "", "RCODE4095", "" };
    const char *const refused[] = { "dns://:53", "dropped", "", "REFUSED", "" };
    assert_true(metrics_value(R, "coredns_dns_responses_total", noerror) == 1);
    assert_true(metrics_value(R, "coredns_dns_responses_total", nx) == 1);
    assert_true(metrics_value(R, "coredns_dns_responses_total", badsig) == 1);
    assert_true(metrics_value(R, "coredns_dns_responses_total", unk) == 1);
    assert_true(metrics_value(R, "coredns_dns_responses_total", refused) == 1);
    const char *const szv[] = { "dns://:53", "t.", "" };
    assert_true(metrics_value(R, "coredns_dns_do_requests_total", szv) == 1);
    assert_true(metrics_value(R, "coredns_dns_request_duration_seconds", szv) == 5);
    const char *const sz[] = { "dns://:53", "t.", "", "udp" };
    assert_true(metrics_value(R, "coredns_dns_request_size_bytes", sz) == 4);
    assert_true(metrics_value(R, "coredns_dns_response_size_bytes", sz) == 4);

    char *body = http_get(port, "/metrics");
    assert_non_null(body);
    assert_non_null(strstr(body, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    assert_non_null(strstr(body, "\ncoredns_dns_responses_total{plugin=\"whoami\",rcode=\"NOERROR\","
                                 "server=\"dns://:53\",view=\"\",zone=\"t.\"} 1\n"));
    assert_non_null(strstr(body, "\ncoredns_dns_response_size_bytes_bucket{proto=\"udp\","
                                 "server=\"dns://:53\",view=\"\",zone=\"t.\",le=\"100\"} 0\n"));
    assert_non_null(strstr(body, "\ncoredns_dns_response_size_bytes_bucket{proto=\"udp\","
                                 "server=\"dns://:53\",view=\"\",zone=\"t.\",le=\"200\"} 4\n"));
    assert_non_null(strstr(body, "\ncoredns_dns_request_size_bytes_sum{proto=\"udp\","
                                 "server=\"dns://:53\",view=\"\",zone=\"t.\"} 160\n"));
    assert_non_null(strstr(body, "\nprocess_max_fds "));
    free(body);
    http_stop(ins);
    instance_free(ins);
}

/* Two registries are independent: a family in one is not in the other
 * (a test's registry, or a second process, sees nothing of the first). */
static void test_registries_apart(void **state)
{
    (void)state;
    metrics_registry *other = metrics_registry_new();
    assert_non_null(other);
    metric_family *f = metrics_family(other, "t_apart_total", "Apart.", METRIC_COUNTER, NULL,
                                      NULL, 0);
    metrics_add(f, NULL, 2);
    assert_true(metrics_value(other, "t_apart_total", NULL) == 2);
    assert_true(metrics_value(R, "t_apart_total", NULL) == 0);
    char *s = render();
    assert_null(strstr(s, "t_apart_total"));
    free(s);
    metrics_registry_free(other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter),
        cmocka_unit_test(test_gauge),
        cmocka_unit_test(test_no_labels_and_empty),
        cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_exponential_buckets),
        cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_float_format),
        cmocka_unit_test(test_sorting),
        cmocka_unit_test(test_remove),
        cmocka_unit_test(test_concurrency),
        cmocka_unit_test(test_http),
        cmocka_unit_test(test_http_conflict),
        cmocka_unit_test(test_addr_check),
        cmocka_unit_test(test_prometheus_report),
        cmocka_unit_test(test_registries_apart),
    };
    evthread_use_pthreads();
    R = metrics_registry_new();
    env.metrics = R;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    metrics_registry_free(R);
    return rc;
}
