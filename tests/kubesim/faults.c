/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim faults — the test-control API under /sim/v1/ (never authenticated,
 * never delayed or failed).
 *
 *   POST /sim/v1/faults  JSON object, any combination of:
 *     {"closeWatches":true}        end every open watch cleanly now
 *     {"expireHistory":true}       drop the event history and bump the
 *                                  resourceVersion: every earlier RV (watch
 *                                  or continue token) now gets 410 Expired
 *     {"failNext":{"count":3,"code":429,"retryAfter":1}}
 *                                  the next N API requests fail with code
 *                                  (429 and 503 carry Retry-After)
 *     {"delayMs":200}              delay every API response (0 = off)
 *     {"malformedWatchLine":true}  write one broken JSON line on every watch
 *     {"splitChunks":true|false}   send each watch event in two HTTP chunks
 *     {"rotateToken":"new"}        accept only this bearer token from now on
 *     {"saveState":"NAME"}         keep the current objects and resourceVersion
 *                                  under NAME (an etcd snapshot)
 *     {"restoreState":"NAME"}      go back to them, as after an etcd restore:
 *                                  the objects of then, the resourceVersion of
 *                                  then (lower), no history; every open watch
 *                                  ends (the apiserver restarts); 400 when NAME
 *                                  was never saved. saveState goes first.
 *     {"churn":N}                  N changes per second from now on, as
 *                                  --churn N (0 stops the churn)
 *     {"reset":true}               clear failNext, delayMs and splitChunks
 *   GET  /sim/v1/faults  the current settings
 *   GET  /sim/v1/state   {"resourceVersion":"N","compactedResourceVersion":"M",
 *                         "watches":W,"namespaces":[...],"nodes":[...],
 *                         "services":[...],"pods":[...],"events":[...],
 *                         "endpointslices":[...],...} (full objects; one array
 *                         per resource, "events.events.k8s.io" for the
 *                         events.k8s.io/v1 ones)
 *   GET  /sim/v1/requests {"total":N,"requests":[{"method":"GET","uri":"..."},...]}:
 *                         the last KS_REQLOG_MAX API requests (not /sim/), oldest
 *                         first, the URI as received; total counts them all
 *   DELETE /sim/v1/requests  empty the log (total back to 0)
 */
#include "kubesim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>

ks_faults ks_fault;

/* ---------- the request log ---------- */

typedef struct reqlog_entry {
    char method[8];
    char *uri;
} reqlog_entry;

static reqlog_entry reqlog[KS_REQLOG_MAX];
static unsigned long long reqlog_total;   /* requests ever logged since the last clear */

void reqlog_add(const char *method, const char *uri)
{
    reqlog_entry *e = &reqlog[reqlog_total % KS_REQLOG_MAX];
    free(e->uri);
    snprintf(e->method, sizeof e->method, "%s", method);
    e->uri = strdup(uri ? uri : "");
    reqlog_total++;
}

void reqlog_free(void)
{
    size_t i;
    for (i = 0; i < KS_REQLOG_MAX; i++) {
        free(reqlog[i].uri);
        reqlog[i].uri = NULL;
    }
    reqlog_total = 0;
}

static void reply_requests(struct evhttp_request *req)
{
    cJSON *o = cJSON_CreateObject(), *a;
    unsigned long long i, first = reqlog_total > KS_REQLOG_MAX ? reqlog_total - KS_REQLOG_MAX : 0;
    char *text;
    cJSON_AddNumberToObject(o, "total", (double)reqlog_total);
    a = cJSON_AddArrayToObject(o, "requests");
    for (i = first; i < reqlog_total; i++) {
        const reqlog_entry *e = &reqlog[i % KS_REQLOG_MAX];
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "method", e->method);
        cJSON_AddStringToObject(r, "uri", e->uri ? e->uri : "");
        cJSON_AddItemToArray(a, r);
    }
    text = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    http_reply_json(req, 200, text ? text : "{}", text ? strlen(text) : 2);
    free(text);
}

static void reply_settings(struct evhttp_request *req)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "{\"failNext\":{\"count\":%d,\"code\":%d,\"retryAfter\":%d},"
                     "\"delayMs\":%d,\"splitChunks\":%s,\"tokenRequired\":%s,"
                     "\"churn\":%d,\"watches\":%d,\"resourceVersion\":\"%llu\"}",
                     ks_fault.fail_count, ks_fault.fail_code, ks_fault.retry_after,
                     ks_fault.delay_ms, ks_fault.split_chunks ? "true" : "false",
                     ks_fault.token ? "true" : "false", churn_rate_now(), watch_count(),
                     (unsigned long long)store_rv());
    http_reply_json(req, 200, buf, (size_t)n);
}

static int get_int(const cJSON *o, const char *k, int def)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(c) ? c->valueint : def;
}

static int bad(struct evhttp_request *req, const char *msg)
{
    ks_err e;
    ks_seterr(&e, 400, "BadRequest", "%s", msg);
    http_reply_err(req, &e);
    return -1;
}

static int is_name(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring[0];
}

/* saveState/restoreState: names; a restored one exists (or is saved by the
 * same request). */
static int validate_states(struct evhttp_request *req, const cJSON *j)
{
    const cJSON *sv = cJSON_GetObjectItemCaseSensitive(j, "saveState");
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(j, "restoreState");
    if ((sv && !is_name(sv)) || (rs && !is_name(rs)))
        return bad(req, "saveState and restoreState take a non-empty name");
    if (rs && !store_saved(rs->valuestring) && !(sv && !strcmp(sv->valuestring, rs->valuestring)))
        return bad(req, "restoreState: no state saved under that name");
    return 0;
}

/* Validate first so a bad request changes nothing. */
static int validate(struct evhttp_request *req, const cJSON *j)
{
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(j, "failNext");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "rotateToken");
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "delayMs");
    const cJSON *ch = cJSON_GetObjectItemCaseSensitive(j, "churn");
    if (!cJSON_IsObject(j))
        return bad(req, "body must be a JSON object");
    if (fn && (!cJSON_IsObject(fn) || get_int(fn, "code", 0) < 400 ||
               get_int(fn, "code", 0) > 599 || get_int(fn, "count", 1) < 0))
        return bad(req, "failNext needs {\"count\":N,\"code\":400..599[,\"retryAfter\":S]}");
    if (rt && (!cJSON_IsString(rt) || !rt->valuestring[0]))
        return bad(req, "rotateToken must be a non-empty string");
    if (d && (!cJSON_IsNumber(d) || d->valueint < 0 || d->valueint > 600000))
        return bad(req, "delayMs must be a number of milliseconds (0..600000)");
    if (ch && (!cJSON_IsNumber(ch) || ch->valuedouble < 0 || ch->valuedouble > 100000))
        return bad(req, "churn must be a number of changes per second (0..100000)");
    return validate_states(req, j);
}

static void apply(const cJSON *j)
{
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(j, "failNext");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(j, "rotateToken");
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "splitChunks");
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "reset"))) {
        ks_fault.fail_count = ks_fault.delay_ms = ks_fault.split_chunks = 0;
    }
    if (fn) {
        ks_fault.fail_count = get_int(fn, "count", 1);
        ks_fault.fail_code = get_int(fn, "code", 500);
        ks_fault.retry_after = get_int(fn, "retryAfter", 1);
    }
    if (cJSON_GetObjectItemCaseSensitive(j, "delayMs"))
        ks_fault.delay_ms = get_int(j, "delayMs", 0);
    if (sc)
        ks_fault.split_chunks = cJSON_IsTrue(sc);
    if (cJSON_GetObjectItemCaseSensitive(j, "churn"))
        churn_start(get_int(j, "churn", 0));
    if (rt) {
        free(ks_fault.token);
        ks_fault.token = strdup(rt->valuestring);
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "expireHistory")))
        store_expire_history();
    if (is_name(cJSON_GetObjectItemCaseSensitive(j, "saveState")))
        store_save(cJSON_GetObjectItemCaseSensitive(j, "saveState")->valuestring);
    if (is_name(cJSON_GetObjectItemCaseSensitive(j, "restoreState"))) {
        store_restore(cJSON_GetObjectItemCaseSensitive(j, "restoreState")->valuestring);
        watch_close_all();
        crd_sync(); /* the kinds of the CRDs restored are served again */
    }
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "malformedWatchLine")))
        watch_malformed_all();
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "closeWatches")))
        watch_close_all();
}

static void post_faults(struct evhttp_request *req)
{
    size_t len;
    char *s = http_body(req, &len);
    cJSON *j = s ? cJSON_ParseWithLength(s, len) : NULL;
    free(s);
    if (validate(req, j) == 0) {
        apply(j);
        reply_settings(req);
    }
    cJSON_Delete(j);
}

static void unref_cb(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    ver_unref(arg);
}

static void reply_state(struct evhttp_request *req)
{
    struct evbuffer *b = evbuffer_new();
    int k;
    evbuffer_add_printf(b, "{\"resourceVersion\":\"%llu\",\"compactedResourceVersion\":\"%llu\","
                        "\"watches\":%d", (unsigned long long)store_rv(),
                        (unsigned long long)store_compact_rv(), watch_count());
    for (k = 0; k < KS_KIND_MAX; k++) {
        size_t i, n = store_count(k);
        if (!ks_kind_live(k))
            continue;
        /* a resource name the core group has too gets its group:
         * "events.events.k8s.io"; so do the kinds of CRDs:
         * "ciliumnodes.cilium.io" */
        if (*ks_kinds[k].group && (k >= K_COUNT || ks_kind_by_resource("", ks_kinds[k].resource) >= 0))
            evbuffer_add_printf(b, ",\"%s.%s\":[", ks_kinds[k].resource, ks_kinds[k].group);
        else
            evbuffer_add_printf(b, ",\"%s\":[", ks_kinds[k].resource);
        for (i = 0; i < n; i++) {
            ks_ver *v = store_at(k, i);
            if (i)
                evbuffer_add(b, ",", 1);
            ver_ref(v);
            evbuffer_add_reference(b, v->json, v->len, unref_cb, v);
        }
        evbuffer_add(b, "]", 1);
    }
    evbuffer_add(b, "}", 1);
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
}

void faults_handle(struct evhttp_request *req, const char *path)
{
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    ks_err e;
    if (!strcmp(path, "/sim/v1/faults") && cmd == EVHTTP_REQ_POST)
        post_faults(req);
    else if (!strcmp(path, "/sim/v1/faults") && cmd == EVHTTP_REQ_GET)
        reply_settings(req);
    else if (!strcmp(path, "/sim/v1/state") && cmd == EVHTTP_REQ_GET)
        reply_state(req);
    else if (!strcmp(path, "/sim/v1/requests") && cmd == EVHTTP_REQ_GET)
        reply_requests(req);
    else if (!strcmp(path, "/sim/v1/requests") && cmd == EVHTTP_REQ_DELETE) {
        static const char empty[] = "{\"total\":0,\"requests\":[]}";
        reqlog_free();
        http_reply_json(req, 200, empty, sizeof empty - 1);
    }
    else {
        ks_seterr(&e, 404, "NotFound", "unknown kubesim control path %s", path);
        http_reply_err(req, &e);
    }
}
