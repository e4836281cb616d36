/* SPDX-License-Identifier: Apache-2.0 */
/*
 * client.c — the API thread: libcurl multi on libevent, glue for the
 * reflectors (whose protocol logic lives in reflector.c) and fire-and-forget
 * POSTs.
 *
 * One thread, one event_base, one CURLM. libcurl tells us which sockets to
 * watch (sock_cb) and when to time out (timer_cb); libevent calls back into
 * curl_multi_socket_action. Finished transfers are handled in check_done().
 *
 * Each k8s_reflector wraps a refl (reflector.h) and implements its transport:
 * start() creates an easy handle for the URL the reflector asks for;
 * header_cb hands over the final status and Retry-After, write_cb the body
 * bytes (returning 0 aborts the transfer when the reflector says so), and
 * check_done() reports the end. schedule() arms a libevent timer that calls
 * refl_on_timer(). Every request asks for HTTP/2 over TLS
 * (CURL_HTTP_VERSION_2TLS) and falls back to HTTP/1.1; transfers share
 * connections (CURLPIPE_MULTIPLEX), and a new transfer waits for a
 * connection being set up rather than opening its own (CURLOPT_PIPEWAIT),
 * so on HTTP/2 every list and watch is a stream of one TLS connection, as
 * with client-go. Transport failures (refused, TLS
 * verification, reset) are logged here with curl's own reason. A client
 * with a bearer token for a plain http:// server warns once, when made.
 */
#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <curl/curl.h>
#include <event2/event.h>
#include "common/file.h"
#include "k8s/jsonarena.h"
#include "k8s/k8s.h"
#include "common/thread.h"
#include "k8s/reflector.h"
#include "common/log.h"
#include "runtime/metrics.h"

enum { X_REFLECT, X_POST };

/* libcurl's receive buffer for list pages (its default is 16 KiB: a
 * 150,000-pod list was ~45,000 reads, each a trip through the event loop,
 * curl's state machine and the reflector). */
#define LIST_READ_SIZE (256L << 10)

typedef struct xfer {
    int kind;
    int watch;                          /* X_REFLECT: a watch, not a list page */
    CURL *easy;
    struct curl_slist *hdrs;
    k8s_reflector *r;                   /* X_REFLECT */
    char *body;                         /* X_POST */
    char retry_after[64];               /* of the header block being read */
    char errbuf[CURL_ERROR_SIZE];
    double start;
    struct xfer *next;
} xfer;

struct k8s_reflector {
    k8s_client *c;
    refl *p;
    xfer *x;                            /* the request in flight, if any */
    struct event *timer;
    k8s_reflector *next;
};

typedef struct post {
    char *path, *json;
    struct post *next;
} post;

struct k8s_client {
    k8s_config cfg;
    char host[256];
    pthread_t thread;
    int started;
    struct event_base *base;
    CURLM *multi;
    struct event *timer;
    struct event *wake;
    k8s_reflector *refls;
    xfer *xfers;
    pthread_mutex_t mu;
    post *posts;
    int stopping;
    char token[8192];
    double token_read;
    uint64_t rng;
    metric_family *m_req, *m_dur, *m_restart, *m_last, *m_bytes;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void metrics_init(k8s_client *c, metrics_registry *reg)
{
    static const char *const req_l[] = { "code", "method", "host", NULL };
    static const char *const dur_l[] = { "verb", "host", NULL };
    static const char *const rs_l[] = { "resource", "reason", NULL };
    static const char *const last_l[] = { "resource", NULL };
    static const double b[] = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };
    c->m_req = metrics_family(reg, "coredns_kubernetes_rest_client_requests_total",
                           "Number of HTTP requests, partitioned by status code, method, and host.",
                           METRIC_COUNTER, req_l, NULL, 0);
    c->m_dur = metrics_family(reg, "coredns_kubernetes_rest_client_request_duration_seconds",
                           "Request latency in seconds. Broken down by verb and host.",
                           METRIC_HISTOGRAM, dur_l, b, sizeof b / sizeof b[0]);
    c->m_restart = metrics_family(reg, "topodns_kubernetes_watch_restarts_total",
                               "Watches restarted, by resource and reason.", METRIC_COUNTER, rs_l, NULL, 0);
    c->m_last = metrics_family(reg, "topodns_kubernetes_last_event_timestamp_seconds",
                            "Unix time of the last watch event applied, by resource.",
                            METRIC_GAUGE, last_l, NULL, 0);
    c->m_bytes = metrics_family(reg, "topodns_kubernetes_received_bytes_total",
                             "Response body bytes received from the API server (lists and watches), "
                             "by resource.", METRIC_COUNTER, last_l, NULL, 0);
}

/* ---- token ------------------------------------------------------------ */

/* A token (or token file) for a plain http:// server goes out unencrypted
 * with every request: said once, when the client is made. */
static void warn_plain_token(const k8s_config *c)
{
    if (strncmp(c->server, "http://", 7) != 0 || (!c->token_file && !(c->token && *c->token)))
        return;
    log_warning("plugin/kubernetes: a bearer token is configured for %s, which is plain http://: "
                "the bearer token is sent unencrypted with every request (use https://)",
                c->server);
}

static void load_token(k8s_client *c, int force)
{
    if (!c->cfg.token_file) {
        snprintf(c->token, sizeof c->token, "%s", c->cfg.token ? c->cfg.token : "");
        return;
    }
    if (!force && c->token_read > 0 && now() - c->token_read < 60)
        return;
    FILE *fp = file_open(c->cfg.token_file, FILE_REGULAR, NULL);    /* a FIFO would block */
    c->token_read = now();
    if (!fp)
        return;
    size_t n = fread(c->token, 1, sizeof c->token - 1, fp);
    fclose(fp);
    while (n > 0 && (c->token[n - 1] == '\n' || c->token[n - 1] == '\r' || c->token[n - 1] == ' '))
        n--;
    c->token[n] = '\0';
}

/* ---- transfers -------------------------------------------------------- */

/* Header lines one by one; the blank line ends a block (the last block is
 * the final response, after any 1xx). */
static size_t header_cb(char *b, size_t size, size_t n, void *arg)
{
    xfer *x = arg;
    size_t len = size * n;
    if (len > 12 && strncasecmp(b, "Retry-After:", 12) == 0) {
        size_t v = len - 12 < sizeof x->retry_after ? len - 12 : sizeof x->retry_after - 1;
        memcpy(x->retry_after, b + 12, v);
        x->retry_after[v] = '\0';
    } else if ((len == 2 && b[0] == '\r') || (len == 1 && b[0] == '\n')) {
        long status = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200)
            refl_on_headers(x->r->p, status, x->retry_after[0] ? x->retry_after : NULL);
        x->retry_after[0] = '\0';
    }
    return len;
}

static size_t write_cb(char *b, size_t size, size_t n, void *arg)
{
    xfer *x = arg;
    size_t len = size * n;
    const char *v[] = { refl_resource(x->r->p) };
    metrics_add(x->r->c->m_bytes, v, (double)len);
    return refl_on_body(x->r->p, b, len) < 0 ? 0 : len;
}

static void set_tls(k8s_client *c, CURL *e)
{
    if (c->cfg.ca_file)
        curl_easy_setopt(e, CURLOPT_CAINFO, c->cfg.ca_file);
    if (c->cfg.ca_data) {
        struct curl_blob blob = { c->cfg.ca_data, strlen(c->cfg.ca_data), CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (c->cfg.cert_file)
        curl_easy_setopt(e, CURLOPT_SSLCERT, c->cfg.cert_file);
    if (c->cfg.key_file)
        curl_easy_setopt(e, CURLOPT_SSLKEY, c->cfg.key_file);
    if (c->cfg.cert_data) {
        struct curl_blob blob = { c->cfg.cert_data, strlen(c->cfg.cert_data), CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
    }
    if (c->cfg.key_data) {
        struct curl_blob blob = { c->cfg.key_data, strlen(c->cfg.key_data), CURL_BLOB_COPY };
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
    }
    if (c->cfg.insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
}

static xfer *xfer_new(k8s_client *c, int kind, const char *url, k8s_reflector *r)
{
    xfer *x = calloc(1, sizeof *x);
    if (!x || !(x->easy = curl_easy_init())) {
        free(x);
        return NULL;
    }
    x->kind = kind;
    x->r = r;
    x->start = now();
    load_token(c, 0);
    x->hdrs = curl_slist_append(NULL, "Accept: application/json");
    if (c->token[0]) {
        char h[8300];
        snprintf(h, sizeof h, "Authorization: Bearer %s", c->token);
        x->hdrs = curl_slist_append(x->hdrs, h);
    }
    CURL *e = x->easy;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
    curl_easy_setopt(e, CURLOPT_PRIVATE, x);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);   /* one h2 connection for all */
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "topodns/" TOPODNS_VERSION);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
    set_tls(c, e);
    if (r) {
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
    }
    x->next = c->xfers;
    c->xfers = x;
    curl_multi_add_handle(c->multi, e);
    return x;
}

static void xfer_free(k8s_client *c, xfer *x)
{
    for (xfer **p = &c->xfers; *p; p = &(*p)->next)
        if (*p == x) {
            *p = x->next;
            break;
        }
    curl_multi_remove_handle(c->multi, x->easy);
    curl_easy_cleanup(x->easy);
    curl_slist_free_all(x->hdrs);
    free(x->body);
    free(x);
}

/* ---- the reflectors' environment (refl_ops) ---------------------------- */

static int op_start(void *ctx, const char *url)
{
    k8s_reflector *r = ctx;
    r->x = xfer_new(r->c, X_REFLECT, url, r);
    if (!r->x)
        return -1;
    r->x->watch = refl_is_watching(r->p);
    if (!r->x->watch)                   /* list pages are megabytes: fewer, larger reads */
        curl_easy_setopt(r->x->easy, CURLOPT_BUFFERSIZE, (long)LIST_READ_SIZE);
    return 0;
}

static void op_schedule(void *ctx, double d)
{
    k8s_reflector *r = ctx;
    struct timeval tv = { (time_t)d, (suseconds_t)((d - (double)(time_t)d) * 1e6) };
    evtimer_add(r->timer, &tv);
}

static double op_now(void *ctx)
{
    (void)ctx;
    return now();
}

/* xorshift64*: the API thread's own generator (rand() is not ours). */
static double op_random(void *ctx)
{
    k8s_client *c = ((k8s_reflector *)ctx)->c;
    c->rng ^= c->rng >> 12;
    c->rng ^= c->rng << 25;
    c->rng ^= c->rng >> 27;
    return (double)((c->rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void op_reauth(void *ctx)
{
    load_token(((k8s_reflector *)ctx)->c, 1);
}

static void op_restarted(void *ctx, const char *reason)
{
    k8s_reflector *r = ctx;
    const char *v[] = { refl_resource(r->p), reason };
    metrics_add(r->c->m_restart, v, 1);
}

static void op_applied(void *ctx)
{
    k8s_reflector *r = ctx;
    const char *v[] = { refl_resource(r->p) };
    metrics_set(r->c->m_last, v, (double)time(NULL));
}

/* Let curl send what was just added (only ever called on the API thread,
 * from check_done, so not from inside a curl callback). */
static void op_flush(void *ctx)
{
    int running;
    curl_multi_socket_action(((k8s_reflector *)ctx)->c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
}

static const refl_ops ops = {
    op_start, op_schedule, op_now, op_random, op_reauth, op_restarted, op_applied, op_flush,
};

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    refl_on_timer(((k8s_reflector *)arg)->p);
}

/* ---- curl ↔ libevent -------------------------------------------------- */

static void check_done(k8s_client *c)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(c->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        xfer *x = NULL;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
        CURLcode res = m->data.result;
        long status = 0;
        curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &status);
        char code[16];
        snprintf(code, sizeof code, "%ld", status);
        const char *lv[] = { status ? code : "<error>", x->kind == X_POST ? "POST" : "GET", c->host };
        metrics_add(c->m_req, lv, 1);
        const char *dv[] = { x->kind == X_POST ? "POST" : x->watch ? "WATCH" : "LIST", c->host };
        metrics_observe(c->m_dur, dv, now() - x->start);
        if (res != CURLE_OK && res != CURLE_WRITE_ERROR) {
            char *url = NULL;
            curl_easy_getinfo(x->easy, CURLINFO_EFFECTIVE_URL, &url);
            log_warning("plugin/kubernetes: %s %s: %s%s%s", x->kind == X_POST ? "POST" : "GET",
                        url ? url : c->host, curl_easy_strerror(res), x->errbuf[0] ? ": " : "",
                        x->errbuf);
        }
        k8s_reflector *r = x->r;
        int kind = x->kind;
        xfer_free(c, x);
        if (kind == X_REFLECT) {
            r->x = NULL;
            refl_on_done(r->p, res == CURLE_OK);
        }
    }
}

static void ev_cb(evutil_socket_t fd, short what, void *arg)
{
    k8s_client *c = arg;
    int action = (what & EV_READ ? CURL_CSELECT_IN : 0) | (what & EV_WRITE ? CURL_CSELECT_OUT : 0);
    int running;
    curl_multi_socket_action(c->multi, fd, action, &running);
    check_done(c);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
    k8s_client *c = arg;
    int running;
    curl_multi_socket_action(c->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_done(c);
}

static int sock_cb(CURL *e, curl_socket_t s, int what, void *userp, void *sockp)
{
    k8s_client *c = userp;
    struct event *ev = sockp;
    if (what == CURL_POLL_REMOVE) {
        if (ev)
            event_free(ev);
        curl_multi_assign(c->multi, s, NULL);
        return 0;
    }
    short kind = (short)((what & CURL_POLL_IN ? EV_READ : 0) | (what & CURL_POLL_OUT ? EV_WRITE : 0) | EV_PERSIST);
    if (ev) {
        event_del(ev);
        event_assign(ev, c->base, s, kind, ev_cb, c);
    } else {
        ev = event_new(c->base, s, kind, ev_cb, c);
        curl_multi_assign(c->multi, s, ev);
    }
    event_add(ev, NULL);
    return 0;
}

static int timer_cb(CURLM *m, long ms, void *userp)
{
    k8s_client *c = userp;
    if (ms < 0) {
        evtimer_del(c->timer);
    } else {
        struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
        evtimer_add(c->timer, &tv);
    }
    return 0;
}

/* Work handed over from other threads: posts, and stopping. */
static void wake_cb(evutil_socket_t fd, short what, void *arg)
{
    k8s_client *c = arg;
    pthread_mutex_lock(&c->mu);
    post *p = c->posts;
    c->posts = NULL;
    int stop = c->stopping;
    pthread_mutex_unlock(&c->mu);
    while (p) {
        post *n = p->next;
        char url[4096];
        snprintf(url, sizeof url, "%s%s", c->cfg.server, p->path);
        xfer *x = stop ? NULL : xfer_new(c, X_POST, url, NULL);
        if (x) {
            x->body = p->json;
            p->json = NULL;
            x->hdrs = curl_slist_append(x->hdrs, "Content-Type: application/json");
            curl_easy_setopt(x->easy, CURLOPT_HTTPHEADER, x->hdrs);
            curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, x->body);
        }
        free(p->path);
        free(p->json);
        free(p);
        p = n;
    }
    if (stop)
        event_base_loopbreak(c->base);
}

static void *api_main(void *arg)
{
    k8s_client *c = arg;
    thread_set_name("topodns-api");
    thread_lower_priority(THREAD_API_NICE);   /* DNS workers first (thread.h) */
    event_base_dispatch(c->base);
    jarena_thread_done();
    return NULL;
}

/* ---- public ----------------------------------------------------------- */

k8s_client *k8s_client_new(const k8s_config *cfg, metrics_registry *reg, char *err,
                           size_t errlen)
{
    assert(cfg && err && errlen > 0);
    k8s_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    metrics_init(c, reg);
    c->cfg = *cfg;
    char **f[] = { &c->cfg.server, &c->cfg.ca_file, &c->cfg.ca_data, &c->cfg.cert_file,
                   &c->cfg.key_file, &c->cfg.cert_data, &c->cfg.key_data, &c->cfg.token,
                   &c->cfg.token_file };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        *f[i] = *f[i] ? strdup(*f[i]) : NULL;
    const char *h = strstr(c->cfg.server, "://");
    snprintf(c->host, sizeof c->host, "%s", h ? h + 3 : c->cfg.server);
    warn_plain_token(&c->cfg);
    c->rng = (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid() ^ (uint64_t)(uintptr_t)c;
    if (!c->rng)
        c->rng = 1;
    pthread_mutex_init(&c->mu, NULL);
    c->base = event_base_new();
    c->multi = curl_multi_init();
    if (!c->base || !c->multi) {
        snprintf(err, errlen, "cannot create the API client");
        k8s_client_free(c);
        return NULL;
    }
    c->timer = evtimer_new(c->base, timeout_cb, c);
    c->wake = event_new(c->base, -1, EV_PERSIST, wake_cb, c);
    event_add(c->wake, NULL);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETFUNCTION, sock_cb);
    curl_multi_setopt(c->multi, CURLMOPT_SOCKETDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
    curl_multi_setopt(c->multi, CURLMOPT_TIMERDATA, c);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    return c;
}

k8s_reflector *k8s_reflect(k8s_client *c, const char *path, const char *label_selector,
                           const k8s_handler *h)
{
    return k8s_reflect_fields(c, path, label_selector, NULL, h);
}

k8s_reflector *k8s_reflect_fields(k8s_client *c, const char *path, const char *label_selector,
                                  const char *field_selector, const k8s_handler *h)
{
    assert(c && path && h);
    assert(!c->started);                /* every k8s_reflect before k8s_client_start */
    k8s_reflector *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->c = c;
    r->p = refl_new(c->cfg.server, path, label_selector, h, &ops, r);
    r->timer = evtimer_new(c->base, on_timer, r);
    if (!r->p || !r->timer || refl_set_fields(r->p, field_selector) < 0) {
        refl_free(r->p);
        if (r->timer)
            event_free(r->timer);
        free(r);
        return NULL;
    }
    r->next = c->refls;
    c->refls = r;
    return r;
}

int k8s_client_start(k8s_client *c, char *err, size_t errlen)
{
    assert(c && !c->started);
    for (k8s_reflector *r = c->refls; r; r = r->next)
        refl_start(r->p);
    if (pthread_create(&c->thread, NULL, api_main, c) != 0) {
        snprintf(err, errlen, "cannot start the API thread");
        return -1;
    }
    c->started = 1;
    return 0;
}

int k8s_client_synced(const k8s_client *c)
{
    for (k8s_reflector *r = c->refls; r; r = r->next)
        if (!refl_synced(r->p))
            return 0;
    return 1;
}

void k8s_client_post(k8s_client *c, const char *path, const char *json)
{
    assert(c && path && json);
    post *p = calloc(1, sizeof *p);
    if (!p)
        return;
    p->path = strdup(path);
    p->json = strdup(json);
    pthread_mutex_lock(&c->mu);
    p->next = c->posts;
    c->posts = p;
    pthread_mutex_unlock(&c->mu);
    event_active(c->wake, EV_READ, 0);
}

void k8s_client_free(k8s_client *c)
{
    if (!c)
        return;
    if (c->started) {
        pthread_mutex_lock(&c->mu);
        c->stopping = 1;
        pthread_mutex_unlock(&c->mu);
        event_active(c->wake, EV_READ, 0);
        pthread_join(c->thread, NULL);
    }
    while (c->xfers)
        xfer_free(c, c->xfers);
    while (c->refls) {
        k8s_reflector *r = c->refls;
        c->refls = r->next;
        if (r->timer)
            event_free(r->timer);
        refl_free(r->p);
        free(r);
    }
    while (c->posts) {
        post *p = c->posts;
        c->posts = p->next;
        free(p->path);
        free(p->json);
        free(p);
    }
    if (c->timer)
        event_free(c->timer);
    if (c->wake)
        event_free(c->wake);
    if (c->multi)
        curl_multi_cleanup(c->multi);
    if (c->base)
        event_base_free(c->base);
    pthread_mutex_destroy(&c->mu);
    k8s_config_free(&c->cfg);
    free(c);
}
