/*
 * client.c — the API thread: libcurl multi on libevent, and the reflectors.
 *
 * One thread, one event_base, one CURLM. libcurl tells us which sockets to
 * watch (sock_cb) and when to time out (timer_cb); libevent calls back into
 * curl_multi_socket_action. Finished transfers are handled in done().
 *
 * Reflector states (k8s.h has the protocol):
 *   LIST   paginated GET ?limit=500[&continue=]; the first page of a list
 *          starts a relist (relist_begin), the last page ends it
 *          (relist_end) and records the resourceVersion; 410 → list again
 *   WATCH  GET ?watch=1&resourceVersion=RV&allowWatchBookmarks=true&
 *          timeoutSeconds=300..600; the chunked body is split into lines as
 *          it arrives, each line one event; an ERROR event 410 (or HTTP 410)
 *          → LIST; a clean end → WATCH again from RV; errors → WAIT
 *   WAIT   backoff 0.8 s doubling to 30 s, with jitter, or Retry-After;
 *          the backoff resets after 2 minutes of healthy watching.
 * Lines over 1 MiB are skipped (logged); a malformed line restarts the watch
 * from the last good resourceVersion.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <event2/event.h>
#include "k8s.h"
#include "server/log.h"
#include "server/metrics.h"

#define MAX_LINE (1u << 20)
#define BACKOFF_MIN 0.8
#define BACKOFF_MAX 30.0
#define HEALTHY_RESET 120.0

enum { ST_LIST, ST_WATCH, ST_WAIT };
enum { X_REFLECT, X_POST };

typedef struct xfer {
    int kind;
    CURL *easy;
    struct curl_slist *hdrs;
    k8s_reflector *r;                   /* X_REFLECT */
    char *body;                         /* X_POST */
    double start;
    struct xfer *next;
} xfer;

struct k8s_reflector {
    k8s_client *c;
    char *path, *selector, *resource;
    k8s_handler h;
    int state;
    char rv[64];
    char *cont;                         /* continue token of the next page */
    int in_relist;
    atomic_int synced;
    xfer *x;
    char *buf;                          /* list body, or partial watch line */
    size_t len, cap;
    int skipping;                       /* inside an oversized watch line */
    int relist_needed, restart_needed;
    long status;
    double retry_after;
    double backoff;
    double healthy_since;
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
};

static metric_family *m_req, *m_dur, *m_restart, *m_last;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void metrics_init(void)
{
    static const char *const req_l[] = { "code", "method", "host", NULL };
    static const char *const dur_l[] = { "verb", "host", NULL };
    static const char *const rs_l[] = { "resource", "reason", NULL };
    static const char *const last_l[] = { "resource", NULL };
    static const double b[] = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };
    if (m_req)
        return;
    m_req = metrics_family("coredns_kubernetes_rest_client_requests_total",
                           "Number of HTTP requests, partitioned by status code, method, and host.",
                           METRIC_COUNTER, req_l, NULL, 0);
    m_dur = metrics_family("coredns_kubernetes_rest_client_request_duration_seconds",
                           "Request latency in seconds. Broken down by verb and host.",
                           METRIC_HISTOGRAM, dur_l, b, sizeof b / sizeof b[0]);
    m_restart = metrics_family("topodns_kubernetes_watch_restarts_total",
                               "Watches restarted, by resource and reason.", METRIC_COUNTER, rs_l, NULL, 0);
    m_last = metrics_family("topodns_kubernetes_last_event_timestamp_seconds",
                            "Unix time of the last watch event applied, by resource.",
                            METRIC_GAUGE, last_l, NULL, 0);
}

static void restart_metric(k8s_reflector *r, const char *reason)
{
    const char *v[] = { r->resource, reason };
    metrics_add(m_restart, v, 1);
}

/* ---- token ------------------------------------------------------------ */

static void load_token(k8s_client *c, int force)
{
    if (!c->cfg.token_file) {
        snprintf(c->token, sizeof c->token, "%s", c->cfg.token ? c->cfg.token : "");
        return;
    }
    if (!force && c->token_read > 0 && now() - c->token_read < 60)
        return;
    FILE *fp = fopen(c->cfg.token_file, "r");
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

static size_t header_cb(char *b, size_t size, size_t n, void *arg)
{
    k8s_reflector *r = arg;
    size_t len = size * n;
    if (r && len > 12 && strncasecmp(b, "Retry-After:", 12) == 0)
        r->retry_after = atof(b + 12);
    return len;
}

static void handle_line(k8s_reflector *r, char *line, size_t len);

static size_t write_cb(char *b, size_t size, size_t n, void *arg)
{
    k8s_reflector *r = arg;
    size_t len = size * n;
    if (r->state == ST_LIST) {
        if (r->len + len + 1 > r->cap) {
            size_t nc = r->cap ? r->cap : 65536;
            while (nc < r->len + len + 1)
                nc *= 2;
            char *nb = realloc(r->buf, nc);
            if (!nb)
                return 0;
            r->buf = nb;
            r->cap = nc;
        }
        memcpy(r->buf + r->len, b, len);
        r->len += len;
        return len;
    }
    if (r->relist_needed || r->restart_needed)
        return 0;                       /* abort: done() restarts or relists */
    for (size_t i = 0; i < len; i++) {
        if (b[i] == '\n') {
            if (!r->skipping && r->len > 0)
                handle_line(r, r->buf, r->len);
            r->len = 0;
            r->skipping = 0;
            if (r->relist_needed || r->restart_needed)
                return 0;
            continue;
        }
        if (r->skipping)
            continue;
        if (r->len + 1 >= MAX_LINE) {
            log_warning("plugin/kubernetes: %s: watch event over 1 MiB skipped", r->resource);
            r->skipping = 1;
            r->len = 0;
            continue;
        }
        if (r->len + 2 > r->cap) {
            size_t nc = r->cap ? r->cap * 2 : 65536;
            char *nb = realloc(r->buf, nc);
            if (!nb)
                return 0;
            r->buf = nb;
            r->cap = nc;
        }
        r->buf[r->len++] = b[i];
    }
    return len;
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
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "topodns/" TOPODNS_VERSION);
    curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
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
    if (r) {
        curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
        curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
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

/* ---- reflector -------------------------------------------------------- */

static void append_selector(k8s_reflector *r, char *url, size_t cap)
{
    if (!r->selector)
        return;
    char *esc = curl_easy_escape(NULL, r->selector, 0);
    size_t n = strlen(url);
    snprintf(url + n, cap - n, "&labelSelector=%s", esc ? esc : "");
    curl_free(esc);
}

static void start_list(k8s_reflector *r)
{
    char url[4096];
    snprintf(url, sizeof url, "%s%s?limit=500", r->c->cfg.server, r->path);
    if (r->cont) {
        char *esc = curl_easy_escape(NULL, r->cont, 0);
        size_t n = strlen(url);
        snprintf(url + n, sizeof url - n, "&continue=%s", esc ? esc : "");
        curl_free(esc);
    }
    append_selector(r, url, sizeof url);
    r->state = ST_LIST;
    r->len = 0;
    r->status = 0;
    r->retry_after = 0;
    r->x = xfer_new(r->c, X_REFLECT, url, r);
}

static void start_watch(k8s_reflector *r)
{
    char url[4096];
    snprintf(url, sizeof url,
             "%s%s?watch=1&resourceVersion=%s&allowWatchBookmarks=true&timeoutSeconds=%d",
             r->c->cfg.server, r->path, r->rv, 300 + rand() % 301);
    append_selector(r, url, sizeof url);
    r->state = ST_WATCH;
    r->len = 0;
    r->skipping = 0;
    r->relist_needed = r->restart_needed = 0;
    r->status = 0;
    r->retry_after = 0;
    r->healthy_since = now();
    r->x = xfer_new(r->c, X_REFLECT, url, r);
}

static void relist(k8s_reflector *r)
{
    free(r->cont);
    r->cont = NULL;
    r->rv[0] = '\0';
    start_list(r);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    k8s_reflector *r = arg;
    if (r->rv[0] && !r->relist_needed)
        start_watch(r);
    else
        relist(r);
}

static void wait_then(k8s_reflector *r)
{
    double d = r->retry_after > 0 ? r->retry_after
                                  : r->backoff * (1.0 + 0.5 * ((double)rand() / RAND_MAX));
    if (r->retry_after <= 0)
        r->backoff = r->backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : r->backoff * 2;
    r->state = ST_WAIT;
    struct timeval tv = { (time_t)d, (suseconds_t)((d - (double)(time_t)d) * 1e6) };
    evtimer_add(r->timer, &tv);
}

static void set_rv(k8s_reflector *r, const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    if (cJSON_IsString(rv) && strlen(rv->valuestring) < sizeof r->rv)
        snprintf(r->rv, sizeof r->rv, "%s", rv->valuestring);
}

static void handle_line(k8s_reflector *r, char *line, size_t len)
{
    cJSON *ev = cJSON_ParseWithLength(line, len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
        log_warning("plugin/kubernetes: %s: malformed watch event; restarting the watch", r->resource);
        r->restart_needed = 1;
        restart_metric(r, "malformed");
        cJSON_Delete(ev);
        return;
    }
    const char *t = type->valuestring;
    if (!strcmp(t, "ERROR")) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(obj, "code");
        if (cJSON_IsNumber(code) && code->valueint == 410) {
            r->relist_needed = 1;
            restart_metric(r, "expired");
        } else {
            r->restart_needed = 1;
            restart_metric(r, "error");
        }
    } else {
        if (!strcmp(t, "ADDED") || !strcmp(t, "MODIFIED"))
            r->h.upsert(r->h.ctx, obj);
        else if (!strcmp(t, "DELETED"))
            r->h.remove(r->h.ctx, obj);
        set_rv(r, obj);
        const char *v[] = { r->resource };
        metrics_set(m_last, v, (double)time(NULL));
    }
    cJSON_Delete(ev);
}

/* A list page arrived complete. */
static void list_done(k8s_reflector *r)
{
    cJSON *doc = cJSON_ParseWithLength(r->buf, r->len);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    if (!doc || (items && !cJSON_IsArray(items) && !cJSON_IsNull(items))) {
        log_warning("plugin/kubernetes: %s: malformed list; retrying", r->resource);
        cJSON_Delete(doc);
        r->relist_needed = 1;
        wait_then(r);
        return;
    }
    if (!r->cont) {
        r->h.relist_begin(r->h.ctx);
        r->in_relist = 1;
    }
    const cJSON *list = cJSON_IsArray(items) ? items : NULL, *it;
    cJSON_ArrayForEach(it, list)
        r->h.upsert(r->h.ctx, it);
    const cJSON *cont = cJSON_GetObjectItemCaseSensitive(md, "continue");
    free(r->cont);
    r->cont = NULL;
    if (cJSON_IsString(cont) && cont->valuestring[0]) {
        r->cont = strdup(cont->valuestring);
        cJSON_Delete(doc);
        start_list(r);
        return;
    }
    set_rv(r, doc);
    cJSON_Delete(doc);
    r->h.relist_end(r->h.ctx);
    r->in_relist = 0;
    atomic_store(&r->synced, 1);
    start_watch(r);
}

static void reflect_done(k8s_reflector *r, CURLcode res)
{
    r->x = NULL;
    k8s_client *c = r->c;
    if (r->status == 401)
        load_token(c, 1);
    if (r->state == ST_LIST) {
        if (res == CURLE_OK && r->status == 200) {
            r->backoff = BACKOFF_MIN;
            list_done(r);
        } else if (r->status == 410) {
            free(r->cont);
            r->cont = NULL;             /* continue token expired: from scratch */
            start_list(r);
        } else {
            log_warning("plugin/kubernetes: listing %s failed: %s (HTTP %ld)", r->resource,
                        curl_easy_strerror(res), r->status);
            wait_then(r);
        }
        return;
    }
    /* watch ended */
    if (now() - r->healthy_since >= HEALTHY_RESET)
        r->backoff = BACKOFF_MIN;
    if (r->relist_needed || r->status == 410) {
        if (r->status == 410)
            restart_metric(r, "expired");
        relist(r);
    } else if (res == CURLE_OK && r->status == 200 && !r->restart_needed) {
        restart_metric(r, "timeout");
        start_watch(r);
    } else {
        if (!r->restart_needed)
            restart_metric(r, "error");
        wait_then(r);
    }
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
        metrics_add(m_req, lv, 1);
        const char *dv[] = { x->kind == X_POST ? "POST" : x->r->state == ST_WATCH ? "WATCH" : "LIST", c->host };
        metrics_observe(m_dur, dv, now() - x->start);
        k8s_reflector *r = x->r;
        int kind = x->kind;
        xfer_free(c, x);
        if (kind == X_REFLECT) {
            r->status = status;
            reflect_done(r, res);
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
    event_base_dispatch(c->base);
    return NULL;
}

/* ---- public ----------------------------------------------------------- */

k8s_client *k8s_client_new(const k8s_config *cfg, char *err, size_t errlen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, metrics_init);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    k8s_client *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->cfg = *cfg;
    char **f[] = { &c->cfg.server, &c->cfg.ca_file, &c->cfg.ca_data, &c->cfg.cert_file,
                   &c->cfg.key_file, &c->cfg.cert_data, &c->cfg.key_data, &c->cfg.token,
                   &c->cfg.token_file };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        *f[i] = *f[i] ? strdup(*f[i]) : NULL;
    const char *h = strstr(c->cfg.server, "://");
    snprintf(c->host, sizeof c->host, "%s", h ? h + 3 : c->cfg.server);
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
    k8s_reflector *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->c = c;
    r->path = strdup(path);
    r->selector = label_selector && *label_selector ? strdup(label_selector) : NULL;
    const char *slash = strrchr(path, '/');
    r->resource = strdup(slash ? slash + 1 : path);
    r->h = *h;
    r->backoff = BACKOFF_MIN;
    r->timer = evtimer_new(c->base, on_timer, r);
    r->next = c->refls;
    c->refls = r;
    return r;
}

int k8s_client_start(k8s_client *c, char *err, size_t errlen)
{
    for (k8s_reflector *r = c->refls; r; r = r->next)
        start_list(r);
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
        if (!atomic_load(&r->synced))
            return 0;
    return 1;
}

void k8s_client_post(k8s_client *c, const char *path, const char *json)
{
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
        free(r->path);
        free(r->selector);
        free(r->resource);
        free(r->cont);
        free(r->buf);
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
