/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim http — request routing, verbs, lists and discovery.
 *
 * One evhttp server (optionally TLS through bufferevent_openssl) on the
 * shared event loop. Every request not under /sim/ first passes the
 * injected faults (bearer token, failNext, delayMs), then is routed:
 *   /version /healthz /livez /readyz /api /apis /api/v1 /apis/GROUP[/VERSION]
 *   /openapi/v3[/GROUP-VERSION] (openapi.c)
 *   (each also with a trailing slash)
 *   /api/v1/{resource}[/{name}[/status]]
 *   /api/v1/namespaces/{ns}/{resource}[/{name}[/status]]
 *   /apis/GROUP/VERSION/... likewise (the groups of ks_groups), and the legacy
 *   /watch/ prefix.
 * Lists implement limit/continue over a consistent revision (continue token
 * = unpadded base64url JSON {"v","rv","start"} (b64url.c), 400 BadRequest
 * when it does not decode, 410 Expired once the history no longer covers
 * that revision), resourceVersion + resourceVersionMatch
 * (NotOlderThan/Exact) and selectors; items are written by reference from
 * the stored versions. A list, continue token or watch at a resourceVersion
 * newer than the current one waits up to 3 s for it (rv_wait: the request
 * is served again as soon as store_commit reaches it), then gets the
 * apiserver's NewTooLargeResourceVersionError: 504 Timeout, cause
 * ResourceVersionTooLarge, Retry-After: 1 (a watch-list request gets it as an
 * ERROR event). A waiting request is owned by its rv_wait until it is served
 * again or answered; http_stop() answers the ones left (the connections then
 * close, so the answer may not get out). Discovery answers
 * plain JSON (APIVersions, APIGroupList, APIResourceList) whatever Accept
 * asks for, so kubectl falls back from aggregated discovery and protobuf to
 * JSON. Errors are Status objects. Boolean query parameters are read as
 * the apiserver reads them (bool_value: only "0" and "false" in any case
 * are false). PATCH picks merge or JSON patch by Content-Type; DeleteOptions
 * come from the body or else the query and are validated (objects.c).
 */
#include "kubesim.h"
#include "b64url.h"
#include "yamljson.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

struct event_base *ks_base;
static struct evhttp *http;
static SSL_CTX *ssl_ctx;
static char bound_addr[80];
const char *http_client_ca;

#define SCAN_EXTRA 10000 /* a filtered page examines at most limit + this many keys */
#define RV_WAIT_S 3      /* the apiserver's blockTimeout for a too large resourceVersion */
#define RV_RETRY_S 1     /* and the Retry-After it asks for */

/* ---------- replies ---------- */

static const char *phrase(int code)
{
    switch (code) {
    case 200: return "OK";
    case 201: return "Created";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Error";
    }
}

void http_reply_json(struct evhttp_request *req, int code, const char *json, size_t len)
{
    struct evbuffer *b = evbuffer_new();
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evbuffer_add(b, json, len);
    evhttp_send_reply(req, code, phrase(code), b);
    evbuffer_free(b);
}

void http_reply_err(struct evhttp_request *req, const ks_err *e)
{
    char *s = ks_status_json(e);
    if (e->retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", e->retry_after);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", ra);
    }
    http_reply_json(req, e->code, s, strlen(s));
    free(s);
}

static void reply_simple(struct evhttp_request *req, int code, const char *reason,
                         const char *msg)
{
    ks_err e;
    ks_seterr(&e, code, reason, "%s", msg);
    http_reply_err(req, &e);
}

static void unref_cb(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    ver_unref(arg);
}

/* reply with a stored object (full form), by reference */
static void reply_ver(struct evhttp_request *req, int code, ks_ver *v)
{
    struct evbuffer *b = evbuffer_new();
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    ver_ref(v);
    evbuffer_add_reference(b, v->json, v->len, unref_cb, v);
    evhttp_send_reply(req, code, phrase(code), b);
    evbuffer_free(b);
}

char *http_body(struct evhttp_request *req, size_t *len)
{
    struct evbuffer *in = evhttp_request_get_input_buffer(req);
    size_t n = evbuffer_get_length(in);
    char *s = malloc(n + 1);
    if (!s)
        return NULL;
    evbuffer_copyout(in, s, n);
    s[n] = '\0';
    *len = n;
    return s;
}

/* Parse the request body (JSON, or YAML when the Content-Type says so). */
static cJSON *parse_body(struct evhttp_request *req, ks_err *e)
{
    const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
    size_t len;
    char *s = http_body(req, &len);
    cJSON *j = NULL;
    char err[200] = "";
    if (!s) {
        ks_seterr(e, 500, "InternalError", "out of memory");
        return NULL;
    }
    if (ct && strstr(ct, "yaml")) {
        cJSON *docs = yj_parse_yaml(s, len, err, sizeof err);
        if (docs && cJSON_GetArraySize(docs) == 1)
            j = cJSON_DetachItemFromArray(docs, 0);
        cJSON_Delete(docs);
    } else {
        j = cJSON_ParseWithLength(s, len);
    }
    free(s);
    if (!j)
        ks_seterr(e, 400, "BadRequest", "the body of the request could not be decoded: %s",
                  err[0] ? err : "invalid JSON");
    return j;
}

/* ---------- continue tokens ---------- */

static char *make_continue(uint64_t rv, const char *key)
{
    cJSON *t = cJSON_CreateObject();
    char *s, *tok, *start = malloc(strlen(key) + 2);
    sprintf(start, "%s", key);
    cJSON_AddStringToObject(t, "v", "meta.k8s.io/v1");
    cJSON_AddNumberToObject(t, "rv", (double)rv);
    cJSON_AddStringToObject(t, "start", start);
    s = cJSON_PrintUnformatted(t);
    tok = b64url_encode(s, strlen(s));
    cJSON_Delete(t);
    free(s);
    free(start);
    return tok;
}

/* 0 ok; -1 malformed */
static int parse_continue(const char *tok, uint64_t *rv, char **key)
{
    size_t n;
    char *s = b64url_decode(tok, &n);
    cJSON *t = s ? cJSON_ParseWithLength(s, n) : NULL;
    const cJSON *jrv = cJSON_GetObjectItemCaseSensitive(t, "rv");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(t, "start");
    int ok = cJSON_IsNumber(jrv) && jrv->valuedouble >= 1 && cJSON_IsString(js);
    if (ok) {
        *rv = (uint64_t)jrv->valuedouble;
        *key = strdup(js->valuestring);
    }
    cJSON_Delete(t);
    free(s);
    return ok ? 0 : -1;
}

/* ---------- request context ---------- */

typedef struct route {
    int kind;
    char ns[256], name[256];
    int has_ns, has_name, watch_prefix, status;
    struct evkeyvalq q;
} route;

static const char *qp(route *r, const char *k)
{
    return evhttp_find_header(&r->q, k);
}

/* A boolean query parameter as the apiserver reads one (its query-to-options
 * conversion, not strconv.ParseBool): absent, "0" or "false" in any case is
 * false, every other value ("1", "true", "True", "yes", "" ...) is true, and
 * nothing is an error. */
static int bool_value(const char *v)
{
    return v && strcmp(v, "0") && strcasecmp(v, "false");
}

static int qbool(route *r, const char *k)
{
    return bool_value(qp(r, k));
}

static int parse_selectors(route *r, selector *ls, selector *fs, ks_err *e)
{
    char err[300] = "";
    int i;
    memset(ls, 0, sizeof(*ls));
    memset(fs, 0, sizeof(*fs));
    if (sel_parse_labels(qp(r, "labelSelector"), ls, err, sizeof err) < 0) {
        ks_seterr(e, 400, "BadRequest", "unable to parse requirement: %s", err);
        return -1;
    }
    if (sel_parse_fields(qp(r, "fieldSelector"), fs, err, sizeof err) < 0) {
        sel_free(ls);
        ks_seterr(e, 400, "BadRequest", "%s", err);
        return -1;
    }
    for (i = 0; i < fs->n; i++) {
        if (!ks_field_supported(r->kind, fs->reqs[i].key)) {
            ks_seterr(e, 400, "BadRequest", "field label not supported: %s", fs->reqs[i].key);
            sel_free(ls);
            sel_free(fs);
            return -1;
        }
    }
    return 0;
}

static int parse_rv(const char *s, uint64_t *rv, ks_err *e)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || s[0] == '-' || s[0] == '+') {
        ks_seterr(e, 400, "BadRequest", "invalid resource version: %s", s);
        return -1;
    }
    *rv = v;
    return 0;
}

/* The apiserver's NewTooLargeResourceVersionError (a Timeout error). */
static void too_large(ks_err *e, uint64_t rv)
{
    ks_seterr(e, 504, "Timeout", "Timeout: Too large resource version: %llu, current: %llu",
              (unsigned long long)rv, (unsigned long long)store_rv());
    e->cause = "ResourceVersionTooLarge";
    e->cause_msg = "Too large resource version";
    e->retry_after = RV_RETRY_S;
}

/* ---------- waiting for a resourceVersion ---------- */

typedef struct rv_wait {
    struct evhttp_request *req;
    uint64_t rv;
    struct event *ev;
    struct rv_wait *next;
} rv_wait;

static rv_wait *waits;
static int rv_waited; /* serving a request again after its wait */

static void serve(struct evhttp_request *req);

static void unlink_wait(rv_wait *w)
{
    rv_wait **p;
    for (p = &waits; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    event_free(w->ev);
}

/* The version appeared, or the time is up: serve the request again; still
 * too large, it is answered so (rv_waited). */
static void on_rv_wait(evutil_socket_t fd, short what, void *arg)
{
    rv_wait *w = arg;
    struct evhttp_request *req = w->req;
    (void)fd;
    (void)what;
    unlink_wait(w);
    free(w);
    if (!evhttp_request_get_connection(req)) { /* the client left meanwhile */
        evhttp_request_free(req);
        return;
    }
    rv_waited = 1;
    serve(req);
    rv_waited = 0;
}

/* Too large: 0 when the request now waits for rv (up to RV_WAIT_S), 1 when
 * it has waited already and must be answered. */
static int wait_for_rv(struct evhttp_request *req, uint64_t rv)
{
    struct timeval tv = {RV_WAIT_S, 0};
    rv_wait *w;
    if (rv_waited || !(w = calloc(1, sizeof(*w))))
        return 1;
    w->req = req;
    w->rv = rv;
    w->ev = evtimer_new(ks_base, on_rv_wait, w);
    evtimer_add(w->ev, &tv);
    w->next = waits;
    waits = w;
    return 0;
}

void http_rv_advanced(void)
{
    rv_wait *w;
    for (w = waits; w; w = w->next)
        if (w->rv <= store_rv())
            event_active(w->ev, EV_TIMEOUT, 1);
}

/* At exit: every waiting request gets its answer now. */
static void answer_waits(void)
{
    while (waits) {
        rv_wait *w = waits;
        ks_err e;
        unlink_wait(w);
        if (evhttp_request_get_connection(w->req)) {
            too_large(&e, w->rv);
            http_reply_err(w->req, &e);
        } else {
            evhttp_request_free(w->req);
        }
        free(w);
    }
}

/* ---------- list ---------- */

typedef struct list_ctx {
    struct evbuffer *items;
    selector ls, fs;
    long limit;
    long count, examined;
    const char *last_key;
    char *last_copy;
} list_ctx;

static int list_visit(ks_ver *v, void *arg)
{
    list_ctx *c = arg;
    c->examined++;
    c->last_key = v->key;
    if (sel_match(&c->ls, ver_label, v) && sel_match(&c->fs, ver_field, v)) {
        if (c->count)
            evbuffer_add(c->items, ",", 1);
        ver_ref(v);
        if (v->body_off) {
            evbuffer_add(c->items, "{", 1);
            evbuffer_add_reference(c->items, v->json + v->body_off, v->len - v->body_off,
                                   unref_cb, v);
        } else {
            evbuffer_add_reference(c->items, v->json, v->len, unref_cb, v);
        }
        c->count++;
    }
    if (c->limit > 0 && (c->count >= c->limit || c->examined >= c->limit + SCAN_EXTRA)) {
        free(c->last_copy);
        c->last_copy = strdup(c->last_key);
        return 1;
    }
    return 0;
}

/* Decide the revision to list at. 0 ok, -1 error in *e. */
static int list_revision(route *r, long limit, uint64_t *at, char **after, ks_err *e)
{
    const char *cont = qp(r, "continue"), *rvs = qp(r, "resourceVersion");
    const char *match = qp(r, "resourceVersionMatch");
    uint64_t rv = 0;

    if (cont && *cont) {
        if (rvs && *rvs && strcmp(rvs, "0")) {
            ks_seterr(e, 400, "BadRequest", "specifying resource version is not allowed when using continue");
            return -1;
        }
        if (parse_continue(cont, at, after) < 0) {
            ks_seterr(e, 400, "BadRequest", "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)");
            return -1;
        }
        if (*at > store_rv()) {
            too_large(e, *at);
            return -1;
        }
        if (*at < store_compact_rv()) {
            ks_seterr(e, 410, "Expired", "The provided continue parameter is too old to display a "
                      "consistent list result. You can start a new list without the continue "
                      "parameter, or use the continue token in this response to retrieve the "
                      "remainder of the results. Continuing with the provided token results in an "
                      "inconsistent list - objects that were created, modified, or deleted between "
                      "the time the first chunk was returned and now may show up in the list.");
            return -1;
        }
        return 0;
    }
    if (match && *match && (!rvs || !*rvs)) {
        ks_seterr(e, 422, "Invalid", "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided");
        return -1;
    }
    if (match && *match && strcmp(match, "NotOlderThan") && strcmp(match, "Exact")) {
        ks_seterr(e, 422, "Invalid", "resourceVersionMatch: Unsupported value: \"%s\": supported values: \"Exact\", \"NotOlderThan\"", match);
        return -1;
    }
    *at = store_rv();
    if (!rvs || !*rvs || !strcmp(rvs, "0")) {
        if (rvs && match && !strcmp(rvs, "0") && !strcmp(match, "Exact")) {
            ks_seterr(e, 422, "Invalid", "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"");
            return -1;
        }
        return 0;
    }
    if (parse_rv(rvs, &rv, e) < 0)
        return -1;
    if (rv > store_rv()) {
        too_large(e, rv);
        *at = rv;
        return -1;
    }
    if ((match && !strcmp(match, "Exact")) || (!(match && *match) && limit > 0)) {
        if (rv < store_compact_rv()) {
            ks_seterr(e, 410, "Expired", "too old resource version: %llu (%llu)",
                      (unsigned long long)rv, (unsigned long long)store_compact_rv());
            return -1;
        }
        *at = rv;
    }
    return 0;
}

static void reply_expired_continue(struct evhttp_request *req, ks_err *e, const char *after)
{
    char *st = ks_status_json(e);
    cJSON *j = cJSON_Parse(st);
    char *tok = make_continue(store_rv(), after ? after : ""), *out;
    cJSON_AddStringToObject(cJSON_GetObjectItemCaseSensitive(j, "metadata"), "continue", tok);
    out = cJSON_PrintUnformatted(j);
    http_reply_json(req, 410, out, strlen(out));
    free(out);
    free(tok);
    free(st);
    cJSON_Delete(j);
}

static void do_list(struct evhttp_request *req, route *r)
{
    list_ctx c = {0};
    ks_err e;
    uint64_t at = 0;
    char *after = NULL;
    const char *ls = qp(r, "limit");
    struct evbuffer *out;
    int more;

    c.limit = ls ? strtol(ls, NULL, 10) : 0;
    if (parse_selectors(r, &c.ls, &c.fs, &e) < 0) {
        http_reply_err(req, &e);
        return;
    }
    if (list_revision(r, c.limit, &at, &after, &e) < 0) {
        if (e.code == 504 && !wait_for_rv(req, at))
            goto out;
        if (e.code == 410 && qp(r, "continue"))
            reply_expired_continue(req, &e, after);
        else
            http_reply_err(req, &e);
        goto out;
    }
    c.items = evbuffer_new();
    more = store_scan(r->kind, r->has_ns ? r->ns : NULL, at, after, list_visit, &c);
    if (more < 0) {
        ks_seterr(&e, 410, "Expired", "too old resource version: %llu (%llu)",
                  (unsigned long long)at, (unsigned long long)store_compact_rv());
        http_reply_err(req, &e);
        evbuffer_free(c.items);
        goto out;
    }
    out = evbuffer_new();
    evbuffer_add_printf(out, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"",
                        ks_kinds[r->kind].list_kind, ks_kinds[r->kind].api_version,
                        (unsigned long long)at);
    if (more > 0) {
        char *tok = make_continue(at, c.last_copy);
        evbuffer_add_printf(out, ",\"continue\":\"%s\"", tok);
        free(tok);
        if (!c.ls.n && !c.fs.n && at == store_rv())
            evbuffer_add_printf(out, ",\"remainingItemCount\":%zu",
                                store_count_after(r->kind, r->has_ns ? r->ns : NULL, c.last_copy));
    }
    evbuffer_add_printf(out, "},\"items\":[");
    evbuffer_add_buffer(out, c.items);
    evbuffer_add(out, "]}", 2);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
    evbuffer_free(c.items);
out:
    sel_free(&c.ls);
    sel_free(&c.fs);
    free(c.last_copy);
    free(after);
}

/* ---------- watch ---------- */

/* A watch at a resourceVersion newer than the current one: wait, then 504
 * (a watch-list request gets the Status as an ERROR event, as from the
 * apiserver's watch cache). */
static void watch_too_large(struct evhttp_request *req, uint64_t rv, int as_event)
{
    ks_err e;
    if (!wait_for_rv(req, rv))
        return;
    too_large(&e, rv);
    if (as_event)
        watch_send_error(req, &e);
    else
        http_reply_err(req, &e);
}

static void do_watch(struct evhttp_request *req, route *r)
{
    ks_watch_opts o;
    ks_err e;
    uint64_t need = 0; /* the events must not be older than this */
    const char *rvs = qp(r, "resourceVersion"), *ts = qp(r, "timeoutSeconds");
    const char *sie = qp(r, "sendInitialEvents"), *match = qp(r, "resourceVersionMatch");

    memset(&o, 0, sizeof o);
    o.kind = r->kind;
    o.bookmarks = qbool(r, "allowWatchBookmarks");
    if (bool_value(sie)) {
        if (!match || strcmp(match, "NotOlderThan")) {
            reply_simple(req, 422, "Invalid", "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan");
            return;
        }
        if (!o.bookmarks) {
            reply_simple(req, 422, "Invalid", "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true");
            return;
        }
        o.initial = o.initial_end = 1;
        if (rvs && *rvs && strcmp(rvs, "0") && parse_rv(rvs, &need, &e) < 0) {
            http_reply_err(req, &e);
            return;
        }
    } else if (!rvs || !*rvs || !strcmp(rvs, "0")) {
        o.initial = !sie; /* sendInitialEvents=false: no synthetic ADDEDs */
        o.from_rv = store_rv();
    } else if (parse_rv(rvs, &o.from_rv, &e) < 0) {
        http_reply_err(req, &e);
        return;
    } else {
        need = o.from_rv;
    }
    if (need > store_rv()) {
        watch_too_large(req, need, o.initial_end);
        return;
    }
    if (ts && *ts) {
        o.timeout_s = atoi(ts);
        if (o.timeout_s < 0) {
            reply_simple(req, 400, "BadRequest", "timeoutSeconds must not be negative");
            return;
        }
    } else {
        o.timeout_s = 1800 + (int)(ks_rand() % 1800);
    }
    if (parse_selectors(r, &o.lsel, &o.fsel, &e) < 0) {
        http_reply_err(req, &e);
        return;
    }
    if (r->has_ns)
        o.ns = strdup(r->ns);
    watch_start(req, &o);
}

/* dryRun values (query parameters, or DeleteOptions.dryRun): only "All" is
 * supported; anything else is the apiserver's 422 for OPTS (CreateOptions,
 * ...). 1 dry run, 0 not, -1 with *e. */
static int dry_run_value(const char *v, const char *opts, ks_err *e)
{
    if (!strcmp(v, "All"))
        return 1;
    ks_seterr(e, 422, "Invalid", "%s.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
              "[\"%s\"]: supported values: \"All\"", opts, v);
    snprintf(e->field, sizeof e->field, "dryRun");
    e->cause = "FieldValueNotSupported";
    e->cause_msg = strstr(e->msg, "Unsupported value:");
    e->group = "meta.k8s.io";
    e->dkind = opts;
    return -1;
}

static int dry_run_query(route *r, const char *opts, ks_err *e)
{
    struct evkeyval *kv;
    int dry = 0;
    TAILQ_FOREACH(kv, &r->q, next) {
        if (strcmp(kv->key, "dryRun"))
            continue;
        if (dry_run_value(kv->value, opts, e) < 0)
            return -1;
        dry = 1;
    }
    return dry;
}

/* ---------- writes ---------- */

static void reply_result(struct evhttp_request *req, int code, ks_ver *v, ks_err *e)
{
    if (v)
        reply_ver(req, code, v);
    else
        http_reply_err(req, e);
    ver_unref(v);
}

static void do_create(struct evhttp_request *req, route *r)
{
    ks_err e;
    cJSON *b = parse_body(req, &e);
    if (!b) {
        http_reply_err(req, &e);
        return;
    }
    reply_result(req, 201, obj_create(r->kind, r->has_ns ? r->ns : NULL, b, 1, &e), &e);
    cJSON_Delete(b);
}

static void do_update(struct evhttp_request *req, route *r)
{
    ks_err e;
    cJSON *b = parse_body(req, &e);
    if (!b) {
        http_reply_err(req, &e);
        return;
    }
    reply_result(req, 200, obj_update(r->kind, r->ns, r->name, b, r->status, &e), &e);
    cJSON_Delete(b);
}

/* The Content-Type without parameters is one of the patch types: the
 * apiserver compares it exactly. */
static int patch_type_is(const char *ct, const char *type)
{
    size_t n = strcspn(ct, ";");
    while (n && ct[n - 1] == ' ')
        n--;
    return n == strlen(type) && !strncmp(ct, type, n);
}

static void do_patch(struct evhttp_request *req, route *r)
{
    const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
    ks_err e;
    cJSON *b;
    int type;
    size_t len;
    char *s;
    if (ct && patch_type_is(ct, "application/json-patch+json")) {
        type = KS_PATCH_JSON;
    } else if (ct && (patch_type_is(ct, "application/merge-patch+json") ||
                      (r->kind < K_COUNT &&
                       patch_type_is(ct, "application/strategic-merge-patch+json")))) {
        type = KS_PATCH_MERGE;
    } else if (r->kind >= K_COUNT) {
        /* custom resources have no Go types: no strategic merge patch */
        ks_seterr(&e, 415, "UnsupportedMediaType", "the body of the request was in an unknown "
                  "format - accepted media types include: application/json-patch+json, "
                  "application/merge-patch+json, application/apply-patch+yaml");
        http_reply_err(req, &e);
        return;
    } else {
        ks_seterr(&e, 415, "UnsupportedMediaType", "the body of the request was in an unknown "
                  "format - accepted media types include: application/json-patch+json, "
                  "application/merge-patch+json, application/strategic-merge-patch+json");
        http_reply_err(req, &e);
        return;
    }
    s = http_body(req, &len);
    b = s ? cJSON_ParseWithLength(s, len) : NULL;
    free(s);
    if (!b) {
        reply_simple(req, 400, "BadRequest", "invalid JSON patch");
        return;
    }
    reply_result(req, 200, obj_patch(r->kind, r->ns, r->name, b, type, r->status, &e), &e);
    cJSON_Delete(b);
}

/* DeleteOptions: the body when there is one, else the query parameters
 * (gracePeriodSeconds, propagationPolicy, orphanDependents), as the
 * apiserver reads them; then validated like the apiserver does (422). */
static cJSON *delete_options(struct evhttp_request *req, route *r, ks_err *e, int *bad)
{
    size_t len;
    char *s = http_body(req, &len);
    cJSON *j = NULL;
    const char *v;
    *bad = 0;
    if (s && len) {
        j = cJSON_ParseWithLength(s, len);
        if (!j || !cJSON_IsObject(j)) {
            ks_seterr(e, 400, "BadRequest", "invalid DeleteOptions body");
            *bad = 1;
        }
    } else {
        j = cJSON_CreateObject();
        if ((v = qp(r, "gracePeriodSeconds"))) {
            char *end;
            long long g = strtoll(v, &end, 10);
            if (!*v || *end) {
                ks_seterr(e, 400, "BadRequest", "strconv.ParseInt: parsing \"%s\": invalid syntax", v);
                *bad = 1;
            }
            cJSON_AddNumberToObject(j, "gracePeriodSeconds", (double)g);
        }
        if ((v = qp(r, "propagationPolicy")))
            cJSON_AddStringToObject(j, "propagationPolicy", v);
        if ((v = qp(r, "orphanDependents")))
            cJSON_AddBoolToObject(j, "orphanDependents", bool_value(v));
        if (!*bad) {
            int dry = dry_run_query(r, "DeleteOptions", e);
            if (dry > 0)
                cJSON_AddItemToArray(cJSON_AddArrayToObject(j, "dryRun"),
                                     cJSON_CreateString("All"));
            *bad = dry < 0;
        }
    }
    free(s);
    if (!*bad && obj_check_delete_options(j, e) < 0)
        *bad = 1;
    if (!*bad) { /* DeleteOptions.dryRun */
        const cJSON *d, *dr = cJSON_GetObjectItemCaseSensitive(j, "dryRun");
        int dry = 0;
        cJSON_ArrayForEach(d, (cJSON_IsArray(dr) ? dr : NULL)) {
            if (!cJSON_IsString(d) || dry_run_value(d->valuestring, "DeleteOptions", e) < 0) {
                if (!cJSON_IsString(d))
                    ks_seterr(e, 400, "BadRequest", "invalid DeleteOptions body");
                *bad = 1;
                break;
            }
            dry = 1;
        }
        obj_set_dry_run(dry);
    }
    if (*bad) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static void do_delete(struct evhttp_request *req, route *r)
{
    ks_err e;
    int bad;
    cJSON *opts = delete_options(req, r, &e, &bad);
    if (bad) {
        http_reply_err(req, &e);
        return;
    }
    reply_result(req, 200, obj_delete(r->kind, r->ns, r->name, opts, &e), &e);
    cJSON_Delete(opts);
}

typedef struct dc_ctx {
    selector ls, fs;
    ks_ver **v;
    size_t n, cap;
} dc_ctx;

static int dc_visit(ks_ver *v, void *arg)
{
    dc_ctx *c = arg;
    if (!sel_match(&c->ls, ver_label, v) || !sel_match(&c->fs, ver_field, v))
        return 0;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 64;
        c->v = realloc(c->v, c->cap * sizeof(*c->v));
    }
    ver_ref(v);
    c->v[c->n++] = v;
    return 0;
}

static void do_delete_collection(struct evhttp_request *req, route *r)
{
    dc_ctx c = {0};
    ks_err e;
    struct evbuffer *out;
    size_t i, n = 0;
    int bad;
    cJSON *opts = delete_options(req, r, &e, &bad);
    cJSON_Delete(opts); /* validated; preconditions are not applied per item */
    if (bad || parse_selectors(r, &c.ls, &c.fs, &e) < 0) {
        http_reply_err(req, &e);
        return;
    }
    store_scan(r->kind, r->has_ns ? r->ns : NULL, 0, NULL, dc_visit, &c);
    out = evbuffer_new();
    evbuffer_add_printf(out, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{},\"items\":[",
                        ks_kinds[r->kind].list_kind, ks_kinds[r->kind].api_version);
    for (i = 0; i < c.n; i++) {
        ks_ver *dv = obj_delete(r->kind, c.v[i]->ns, c.v[i]->name, NULL, &e);
        if (dv) {
            evbuffer_add_printf(out, "%s", n++ ? "," : "");
            evbuffer_add(out, dv->json, dv->len);
            ver_unref(dv);
        }
        ver_unref(c.v[i]);
    }
    evbuffer_add_printf(out, "]}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", out);
    evbuffer_free(out);
    free(c.v);
    sel_free(&c.ls);
    sel_free(&c.fs);
}

static void do_get(struct evhttp_request *req, route *r)
{
    ks_ver *v = store_get(r->kind, r->ns, r->name);
    ks_err e;
    char gr[300];
    if (!v) {
        ks_seterr(&e, 404, "NotFound", "%s \"%s\" not found",
                  ks_kind_gr(r->kind, gr, sizeof gr), r->name);
        snprintf(e.name, sizeof e.name, "%s", r->name);
        e.dkind = ks_kinds[r->kind].resource;
        if (*ks_kinds[r->kind].group)
            e.group = ks_kinds[r->kind].group;
        http_reply_err(req, &e);
        return;
    }
    reply_ver(req, 200, v);
}

/* ---------- discovery ---------- */

/* ,"key":["a","b"] (nothing for an empty list); JSON-escaped */
static void add_strings(struct evbuffer *b, const char *key, char **v)
{
    cJSON *a;
    char *s;
    if (!v || !*v)
        return;
    a = cJSON_CreateArray();
    for (; *v; v++)
        cJSON_AddItemToArray(a, cJSON_CreateString(*v));
    s = cJSON_PrintUnformatted(a);
    evbuffer_add_printf(b, ",\"%s\":%s", key, s ? s : "[]");
    free(s);
    cJSON_Delete(a);
}

static void add_resource(struct evbuffer *b, int k, int first)
{
    const ks_kind *kd = &ks_kinds[k];
    evbuffer_add_printf(b, "%s{\"name\":\"%s\",\"singularName\":\"%s\",\"namespaced\":%s,"
                        "\"kind\":\"%s\",\"verbs\":[\"create\",\"delete\",\"deletecollection\","
                        "\"get\",\"list\",\"patch\",\"update\",\"watch\"]",
                        first ? "" : ",", kd->resource, kd->singular,
                        kd->namespaced ? "true" : "false", kd->kind);
    if (k >= K_COUNT) { /* a CRD's kind: its names */
        add_strings(b, "shortNames", kd->short_names);
        add_strings(b, "categories", kd->categories);
    } else if (kd->short_name) {
        evbuffer_add_printf(b, ",\"shortNames\":[\"%s\"]", kd->short_name);
    }
    if (k == K_POD || k == K_SERVICE)
        evbuffer_add_printf(b, ",\"categories\":[\"all\"]");
    evbuffer_add_printf(b, "}");
    if (k == K_POD || k == K_SERVICE || k == K_NODE || k == K_NAMESPACE || k == K_CRD)
        evbuffer_add_printf(b, ",{\"name\":\"%s/status\",\"singularName\":\"\",\"namespaced\":%s,"
                            "\"kind\":\"%s\",\"verbs\":[\"get\",\"patch\",\"update\"]}",
                            kd->resource, kd->namespaced ? "true" : "false", kd->kind);
}

static void reply_resources(struct evhttp_request *req, const char *group, const char *version)
{
    struct evbuffer *b = evbuffer_new();
    int k, first = 1;
    evbuffer_add_printf(b, "{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\","
                        "\"groupVersion\":\"%s%s%s\",\"resources\":[", group,
                        *group ? "/" : "", version);
    for (k = 0; k < KS_KIND_MAX; k++) {
        if (!ks_kind_live(k) || strcmp(ks_kinds[k].group, group) || !ks_kind_serves(k, version))
            continue;
        add_resource(b, k, first);
        first = 0;
    }
    evbuffer_add_printf(b, "]}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

static void add_group(struct evbuffer *b, int g)
{
    const char *gv = ks_groups[g].group_version;
    const char *v = ks_groups[g].version;
    evbuffer_add_printf(b, "\"name\":\"%s\",\"versions\":[{\"groupVersion\":\"%s\","
                        "\"version\":\"%s\"}],\"preferredVersion\":{\"groupVersion\":\"%s\","
                        "\"version\":\"%s\"}", ks_groups[g].name, gv, v, gv, v);
}

static void reply_buffer(struct evhttp_request *req, struct evbuffer *b)
{
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

/* ---------- discovery of the groups of CRDs ---------- */

static int version_cmp(const void *a, const void *b)
{
    return ks_version_cmp(*(const char *const *)a, *(const char *const *)b);
}

/* The versions the live CRD slots serve in group, in Kubernetes' order
 * (borrowed strings, NULL-terminated); NULL when none (or a built-in group). */
static const char **crd_group_versions(const char *group)
{
    const char **vs = NULL;
    size_t n = 0, i;
    int k;
    if (ks_group_by_name(group) >= 0)
        return NULL;
    for (k = K_COUNT; k < KS_KIND_MAX; k++) {
        char **v;
        if (!ks_kind_live(k) || strcmp(ks_kinds[k].group, group))
            continue;
        for (v = ks_kinds[k].served; v && *v; v++) {
            for (i = 0; i < n && strcmp(vs[i], *v); i++)
                ;
            if (i < n)
                continue;
            vs = realloc(vs, (n + 2) * sizeof(*vs));
            vs[n++] = *v;
            vs[n] = NULL;
        }
    }
    if (vs)
        qsort(vs, n, sizeof(*vs), version_cmp);
    return vs;
}

static void add_crd_group(struct evbuffer *b, const char *group, const char **vs)
{
    size_t i;
    evbuffer_add_printf(b, "\"name\":\"%s\",\"versions\":[", group);
    for (i = 0; vs[i]; i++)
        evbuffer_add_printf(b, "%s{\"groupVersion\":\"%s/%s\",\"version\":\"%s\"}",
                            i ? "," : "", group, vs[i], vs[i]);
    evbuffer_add_printf(b, "],\"preferredVersion\":{\"groupVersion\":\"%s/%s\","
                        "\"version\":\"%s\"}", group, vs[0], vs[0]);
}

/* the groups of the CRDs, after the built-in ones in /apis */
static void add_crd_groups(struct evbuffer *b)
{
    int k, j;
    for (k = K_COUNT; k < KS_KIND_MAX; k++) {
        const char **vs;
        if (!ks_kind_live(k))
            continue;
        for (j = K_COUNT; j < k && !(ks_kind_live(j) && !strcmp(ks_kinds[j].group,
                                                               ks_kinds[k].group)); j++)
            ;
        if (j < k || !(vs = crd_group_versions(ks_kinds[k].group)))
            continue; /* listed already, or a built-in group */
        evbuffer_add_printf(b, ",{");
        add_crd_group(b, ks_kinds[k].group, vs);
        evbuffer_add_printf(b, "}");
        free(vs);
    }
}

/* /apis/GROUP and /apis/GROUP/VERSION of a CRD's group; 0 when neither. */
static int crd_group_discovery(struct evhttp_request *req, const char *path)
{
    char group[256];
    const char *slash, **vs;
    size_t n, i;
    if (strncmp(path, "/apis/", 6))
        return 0;
    slash = strchr(path + 6, '/');
    n = slash ? (size_t)(slash - path - 6) : strlen(path + 6);
    if (!n || n >= sizeof group)
        return 0;
    memcpy(group, path + 6, n);
    group[n] = '\0';
    if (!(vs = crd_group_versions(group)))
        return 0;
    if (!slash) {
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",");
        add_crd_group(b, group, vs);
        evbuffer_add_printf(b, "}");
        reply_buffer(req, b);
        free(vs);
        return 1;
    }
    for (i = 0; vs[i] && strcmp(vs[i], slash + 1); i++)
        ;
    n = vs[i] != NULL;
    if (n)
        reply_resources(req, group, vs[i]);
    free(vs);
    return (int)n;
}

/* /apis/GROUP → the APIGroup, /apis/GROUP/v1 → its resources; 0 when path
 * is neither. */
static int group_discovery(struct evhttp_request *req, const char *path)
{
    int g;
    for (g = 1; g < KS_NGROUPS; g++) {
        const char *name = ks_groups[g].name;
        size_t n = strlen(name);
        if (strncmp(path, "/apis/", 6) || strncmp(path + 6, name, n))
            continue;
        if (!path[6 + n]) {
            struct evbuffer *b = evbuffer_new();
            evbuffer_add_printf(b, "{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",");
            add_group(b, g);
            evbuffer_add_printf(b, "}");
            reply_buffer(req, b);
            return 1;
        }
        if (path[6 + n] == '/' && !strcmp(path + 7 + n, ks_groups[g].version)) {
            reply_resources(req, name, ks_groups[g].version);
            return 1;
        }
    }
    return crd_group_discovery(req, path);
}

static int discovery(struct evhttp_request *req, const char *path)
{
    char buf[600];
    int n;
    if (!strcmp(path, "/version")) {
        n = snprintf(buf, sizeof buf, "{\"major\":\"1\",\"minor\":\"32\",\"gitVersion\":"
                     "\"v1.32.0-kubesim\",\"gitCommit\":\"0000000000000000000000000000000000000000\","
                     "\"gitTreeState\":\"clean\",\"buildDate\":\"2024-12-11T00:00:00Z\","
                     "\"goVersion\":\"go1.23.3\",\"compiler\":\"gc\",\"platform\":\"linux/amd64\"}");
    } else if (!strcmp(path, "/api")) {
        n = snprintf(buf, sizeof buf, "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                     "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
                     "\"serverAddress\":\"%s\"}]}", bound_addr);
    } else if (!strcmp(path, "/apis")) {
        struct evbuffer *b = evbuffer_new();
        int g;
        evbuffer_add_printf(b, "{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[");
        for (g = 1; g < KS_NGROUPS; g++) {
            evbuffer_add_printf(b, "%s{", g > 1 ? "," : "");
            add_group(b, g);
            evbuffer_add_printf(b, "}");
        }
        add_crd_groups(b);
        evbuffer_add_printf(b, "]}");
        reply_buffer(req, b);
        return 1;
    } else if (!strcmp(path, "/api/v1")) {
        reply_resources(req, "", "v1");
        return 1;
    } else if (group_discovery(req, path)) {
        return 1;
    } else if (!strncmp(path, "/openapi/v3", 11)) {
        char *doc = openapi_v3(path);
        if (!doc)
            return 0;
        http_reply_json(req, 200, doc, strlen(doc));
        free(doc);
        return 1;
    } else if (!strcmp(path, "/healthz") || !strcmp(path, "/livez") || !strcmp(path, "/readyz")) {
        struct evbuffer *b = evbuffer_new();
        evbuffer_add(b, "ok", 2);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "text/plain");
        evhttp_send_reply(req, 200, "OK", b);
        evbuffer_free(b);
        return 1;
    } else {
        return 0;
    }
    http_reply_json(req, 200, buf, (size_t)n);
    return 1;
}

/* Discovery paths are served with one trailing slash too ("/version/",
 * "/api/v1/"), as the apiserver does; clients generated from its OpenAPI
 * document ask for those. */
static int discovery_path(struct evhttp_request *req, const char *path)
{
    char buf[300];
    size_t n = strlen(path);
    if (n < 2 || path[n - 1] != '/' || path[n - 2] == '/' || n >= sizeof buf)
        return discovery(req, path);
    memcpy(buf, path, n - 1);
    buf[n - 1] = '\0';
    return discovery(req, buf);
}

/* ---------- routing ---------- */

static int split_path(const char *path, char seg[][256], int max)
{
    int n = 0;
    const char *p = path;
    while (*p) {
        const char *q;
        char *dec;
        while (*p == '/')
            p++;
        if (!*p)
            break;
        q = strchr(p, '/');
        if (!q)
            q = p + strlen(p);
        if (n == max || q - p >= 255)
            return -1;
        memcpy(seg[n], p, (size_t)(q - p));
        seg[n][q - p] = '\0';
        dec = evhttp_uridecode(seg[n], 0, NULL);
        if (!dec || strlen(dec) >= 256) {
            free(dec);
            return -1;
        }
        strcpy(seg[n], dec);
        free(dec);
        n++;
        p = q;
    }
    return n;
}

/* fill r from the path; 0 ok, -1 not found */
static int route_path(const char *path, route *r)
{
    char seg[8][256];
    int n = split_path(path, seg, 8), i = 0, k;
    const char *group, *version;
    if (n < 3)
        return -1;
    if (!strcmp(seg[0], "api") && !strcmp(seg[1], "v1")) {
        group = "";
        version = "v1";
        i = 2;
    } else if (n >= 4 && !strcmp(seg[0], "apis") && *seg[1]) {
        /* a built-in group at its version, or a version a CRD serves */
        group = seg[1];
        version = seg[2];
        i = 3;
    } else {
        return -1;
    }
    if (i < n && !strcmp(seg[i], "watch")) {
        r->watch_prefix = 1;
        i++;
    }
    if (n - i >= 3 && !strcmp(seg[i], "namespaces") &&
        (k = ks_kind_by_route(group, version, seg[i + 2])) >= 0 && ks_kinds[k].namespaced) {
        snprintf(r->ns, sizeof r->ns, "%s", seg[i + 1]);
        r->has_ns = 1;
        i += 2;
    }
    if (i >= n || (r->kind = ks_kind_by_route(group, version, seg[i])) < 0)
        return -1;
    i++;
    if (i < n) {
        snprintf(r->name, sizeof r->name, "%s", seg[i++]);
        r->has_name = 1;
    }
    if (i < n && r->has_name && !strcmp(seg[i], "status")) {
        r->status = 1;
        i++;
    }
    return i == n ? 0 : -1;
}

static void serve_resource(struct evhttp_request *req, route *r)
{
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    int namespaced = ks_kinds[r->kind].namespaced, dry = 0;
    const char *opts = cmd == EVHTTP_REQ_POST ? "CreateOptions" : cmd == EVHTTP_REQ_PUT
                       ? "UpdateOptions" : cmd == EVHTTP_REQ_PATCH ? "PatchOptions" : NULL;

    if (!namespaced)
        r->ns[0] = '\0';
    if (r->status && cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_PUT && cmd != EVHTTP_REQ_PATCH) {
        reply_simple(req, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
        return;
    }
    if (namespaced && !r->has_ns && (r->has_name || cmd != EVHTTP_REQ_GET)) {
        reply_simple(req, 404, "NotFound", "the server could not find the requested resource");
        return;
    }
    if (opts) {
        ks_err e;
        if ((dry = dry_run_query(r, opts, &e)) < 0) {
            http_reply_err(req, &e);
            return;
        }
    }
    obj_set_dry_run(dry); /* a DELETE's comes with its DeleteOptions */
    if (cmd == EVHTTP_REQ_GET) {
        if (r->has_name)
            do_get(req, r);
        else if (r->watch_prefix || qbool(r, "watch"))
            do_watch(req, r);
        else
            do_list(req, r);
    } else if (cmd == EVHTTP_REQ_POST && !r->has_name) {
        do_create(req, r);
    } else if (cmd == EVHTTP_REQ_PUT && r->has_name) {
        do_update(req, r);
    } else if (cmd == EVHTTP_REQ_PATCH && r->has_name) {
        do_patch(req, r);
    } else if (cmd == EVHTTP_REQ_DELETE) {
        if (r->has_name)
            do_delete(req, r);
        else
            do_delete_collection(req, r);
    } else {
        reply_simple(req, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource");
    }
    obj_set_dry_run(0);
}

/* The query as Go's url.ParseQuery reads it: empty parts are skipped and
 * "watch" without "=" is watch="" (so true), which evhttp alone refuses. */
static int parse_query(const char *query, struct evkeyvalq *q)
{
    size_t n = strlen(query);
    char *buf = malloc(2 * n + 1), *o = buf;
    const char *p = query;
    int rc;
    if (!buf)
        return -1;
    while (*p) {
        size_t len = strcspn(p, "&");
        if (len) {
            if (o != buf)
                *o++ = '&';
            memcpy(o, p, len);
            o += len;
            if (!memchr(p, '=', len))
                *o++ = '=';
        }
        p += len;
        if (*p)
            p++;
    }
    *o = '\0';
    rc = evhttp_parse_query_str(buf, q);
    free(buf);
    return rc;
}

static void serve(struct evhttp_request *req)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    const char *query = u ? evhttp_uri_get_query(u) : NULL;
    route r;

    if (!path) {
        reply_simple(req, 400, "BadRequest", "bad request URI");
        return;
    }
    if (discovery_path(req, path))
        return;
    memset(&r, 0, sizeof r);
    TAILQ_INIT(&r.q);
    if ((query && parse_query(query, &r.q) < 0) || route_path(path, &r) < 0) {
        reply_simple(req, 404, "NotFound", "the server could not find the requested resource");
    } else {
        serve_resource(req, &r);
    }
    evhttp_clear_headers(&r.q);
}

/* ---------- faults before serving ---------- */

static void on_delayed(evutil_socket_t fd, short what, void *arg)
{
    struct evhttp_request *req = arg;
    (void)fd;
    (void)what;
    if (!evhttp_request_get_connection(req)) { /* the client left meanwhile */
        evhttp_request_free(req);
        return;
    }
    serve(req);
}

static int auth_ok(struct evhttp_request *req)
{
    const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    return h && !strncmp(h, "Bearer ", 7) && !strcmp(h + 7, ks_fault.token);
}

static void fail_injected(struct evhttp_request *req)
{
    ks_err e;
    int code = ks_fault.fail_code;
    ks_fault.fail_count--;
    if (code == 429) {
        char ra[16];
        ks_seterr(&e, 429, "TooManyRequests", "Too many requests, please try again later.");
        snprintf(ra, sizeof ra, "%d", ks_fault.retry_after);
        evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", ra);
    } else if (code == 503) {
        ks_seterr(&e, 503, "ServiceUnavailable", "the server is currently unable to handle the request");
        if (ks_fault.retry_after > 0) {
            char ra[16];
            snprintf(ra, sizeof ra, "%d", ks_fault.retry_after);
            evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", ra);
        }
    } else if (code == 500) {
        ks_seterr(&e, 500, "InternalError", "Internal error occurred: injected by kubesim");
    } else {
        ks_seterr(&e, code, "", "injected failure %d", code);
    }
    http_reply_err(req, &e);
}

static const char *method_name(enum evhttp_cmd_type cmd)
{
    switch (cmd) {
    case EVHTTP_REQ_GET: return "GET";
    case EVHTTP_REQ_POST: return "POST";
    case EVHTTP_REQ_PUT: return "PUT";
    case EVHTTP_REQ_PATCH: return "PATCH";
    case EVHTTP_REQ_DELETE: return "DELETE";
    case EVHTTP_REQ_HEAD: return "HEAD";
    case EVHTTP_REQ_OPTIONS: return "OPTIONS";
    default: return "OTHER";
    }
}

static void on_request(struct evhttp_request *req, void *arg)
{
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    (void)arg;
    if (!evhttp_request_get_uri(req) || !path) {
        reply_simple(req, 400, "BadRequest", "bad request");
        return;
    }
    if (!strncmp(path, "/sim/", 5)) {
        faults_handle(req, path);
        return;
    }
    reqlog_add(method_name(evhttp_request_get_command(req)), evhttp_request_get_uri(req));
    if (ks_fault.token && !auth_ok(req)) {
        reply_simple(req, 401, "Unauthorized", "Unauthorized");
        return;
    }
    if (ks_fault.fail_count > 0) {
        fail_injected(req);
        return;
    }
    if (ks_fault.delay_ms > 0) {
        struct timeval tv = {ks_fault.delay_ms / 1000, (ks_fault.delay_ms % 1000) * 1000};
        event_base_once(ks_base, -1, EV_TIMEOUT, on_delayed, req, &tv);
        return;
    }
    serve(req);
}

/* ---------- listening ---------- */

/* Every connection's bufferevent: plain or TLS, with large single writes
 * (libevent's default of 16 KiB per loop iteration caps big lists at a few
 * hundred MB/s). */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
    struct bufferevent *bev;
    (void)arg;
    if (ssl_ctx)
        bev = bufferevent_openssl_socket_new(base, -1, SSL_new(ssl_ctx),
                                             BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
    else
        bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (bev)
        bufferevent_set_max_single_write(bev, 4 << 20);
    return bev;
}

static int tls_setup(const char *cert, const char *key)
{
    ssl_ctx = SSL_CTX_new(TLS_server_method());
    if (!ssl_ctx || SSL_CTX_use_certificate_chain_file(ssl_ctx, cert) != 1 ||
        SSL_CTX_use_PrivateKey_file(ssl_ctx, key, SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ssl_ctx) != 1 ||
        (http_client_ca && SSL_CTX_load_verify_locations(ssl_ctx, http_client_ca, NULL) != 1)) {
        unsigned long err = ERR_get_error();
        fprintf(stderr, "kubesim: TLS setup failed: %s\n",
                err ? ERR_error_string(err, NULL) : "cannot create context");
        return -1;
    }
    if (http_client_ca) {
        /* like kube-apiserver's --client-ca-file, but a certificate is
         * required: a handshake without a valid one fails */
        STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(http_client_ca);
        if (names)
            SSL_CTX_set_client_CA_list(ssl_ctx, names);
        SSL_CTX_set_verify(ssl_ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return 0;
}

static int split_addr(const char *addr, char *host, size_t hlen, int *port)
{
    const char *colon = strrchr(addr, ':');
    size_t n;
    if (!colon)
        return -1;
    n = (size_t)(colon - addr);
    if (addr[0] == '[' && n >= 2 && addr[n - 1] == ']') {
        addr++;
        n -= 2;
    }
    if (n >= hlen)
        return -1;
    memcpy(host, addr, n);
    host[n] = '\0';
    *port = atoi(colon + 1);
    return (*port < 0 || *port > 65535) ? -1 : 0;
}

int http_start(const char *addr, const char *cert, const char *key, char *bound,
               size_t boundlen)
{
    char host[128];
    int port;
    struct evhttp_bound_socket *h;
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;

    if (split_addr(addr, host, sizeof host, &port) < 0) {
        fprintf(stderr, "kubesim: bad --listen address %s\n", addr);
        return -1;
    }
    http = evhttp_new(ks_base);
    evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
                                     EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE | EVHTTP_REQ_HEAD |
                                     EVHTTP_REQ_OPTIONS);
    evhttp_set_max_body_size(http, 64 << 20);
    evhttp_set_timeout(http, 3600);
    evhttp_set_gencb(http, on_request, NULL);
    if (cert && key && tls_setup(cert, key) < 0)
        return -1;
    evhttp_set_bevcb(http, make_bev, NULL);
    h = evhttp_bind_socket_with_handle(http, host, (ev_uint16_t)port);
    if (!h) {
        fprintf(stderr, "kubesim: cannot listen on %s\n", addr);
        return -1;
    }
    if (getsockname(evhttp_bound_socket_get_fd(h), (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                              : ((struct sockaddr_in *)&ss)->sin_port);
    snprintf(bound_addr, sizeof bound_addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
    snprintf(bound, boundlen, "%s", bound_addr);
    return 0;
}

void http_stop(void)
{
    answer_waits();
    watch_close_all();
    if (http)
        evhttp_free(http);
    http = NULL;
    if (ssl_ctx)
        SSL_CTX_free(ssl_ctx);
    ssl_ctx = NULL;
}
