/* SPDX-License-Identifier: Apache-2.0 */
/* kubesim watch — chunked watch streams.
 *
 * A watch is an HTTP 200 chunked response whose body is one JSON event per
 * line: {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}\n.
 * It starts with synthetic ADDED events for the current state (RV "" or
 * "0", or sendInitialEvents, which ends them with a BOOKMARK annotated
 * k8s.io/initial-events-end) or with a replay of the history after the
 * requested resourceVersion; a version older than the history gets a single
 * ERROR event carrying a 410 Expired Status and the stream ends, as the
 * apiserver's watch cache does. Live events come from store_commit() through
 * watch_dispatch(). Selector transitions are translated like the apiserver:
 * an object that stops matching is DELETED (previous content, new RV), one
 * that starts matching is ADDED. With allowWatchBookmarks a BOOKMARK carrying
 * only the current resourceVersion goes out every ks_bookmark_interval
 * seconds and 2 s before timeoutSeconds ends the stream cleanly.
 * A watch never starts at a resourceVersion newer than the current one:
 * http.c makes it wait for it or answers 504 TooLarge (watch_send_error for
 * a watch-list). Object JSON is sent by reference (no copy) from the shared
 * versions.
 */
#include "kubesim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

typedef struct ks_watch {
    struct evhttp_request *req;
    struct evhttp_connection *evcon;
    ks_watch_opts o;
    struct event *end_ev, *bm_ev, *final_bm_ev;
    struct ks_watch *next, *prev;
} ks_watch;

int ks_bookmark_interval = 60;
static ks_watch *watches;
static int nwatches;

int watch_count(void)
{
    return nwatches;
}

/* ---------- output ---------- */

static void unref_cb(const void *data, size_t len, void *arg)
{
    (void)data;
    (void)len;
    ver_unref(arg);
}

static void send_chunk(ks_watch *w, struct evbuffer *b)
{
    if (ks_fault.split_chunks && evbuffer_get_length(b) > 1) {
        struct evbuffer *a = evbuffer_new();
        size_t half = evbuffer_get_length(b) / 2;
        evbuffer_remove_buffer(b, a, half);
        evhttp_send_reply_chunk(w->req, a);
        evbuffer_free(a);
    }
    evhttp_send_reply_chunk(w->req, b);
    evbuffer_free(b);
}

static void send_event(ks_watch *w, const char *type, ks_ver *v, const char *raw)
{
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "{\"type\":\"%s\",\"object\":", type);
    if (v) {
        ver_ref(v);
        evbuffer_add_reference(b, v->json, v->len, unref_cb, v);
    } else {
        evbuffer_add(b, raw, strlen(raw));
    }
    evbuffer_add(b, "}\n", 2);
    send_chunk(w, b);
}

static void send_bookmark(ks_watch *w, int initial_end)
{
    char obj[400];
    const ks_kind *k = &ks_kinds[w->o.kind];
    snprintf(obj, sizeof obj, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
             "{\"resourceVersion\":\"%llu\"%s}}", k->kind, k->api_version,
             (unsigned long long)store_rv(),
             initial_end ? ",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}" : "");
    send_event(w, "BOOKMARK", NULL, obj);
}

/* ---------- lifecycle ---------- */

static void unlink_watch(ks_watch *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        watches = w->next;
    if (w->next)
        w->next->prev = w->prev;
    nwatches--;
    if (w->end_ev)
        event_free(w->end_ev);
    if (w->bm_ev)
        event_free(w->bm_ev);
    if (w->final_bm_ev)
        event_free(w->final_bm_ev);
    free(w->o.ns);
    sel_free(&w->o.lsel);
    sel_free(&w->o.fsel);
}

/* clean end: terminal chunk, connection stays usable */
static void watch_end(ks_watch *w)
{
    unlink_watch(w);
    if (evhttp_request_get_connection(w->req))
        evhttp_connection_set_closecb(w->evcon, NULL, NULL);
    evhttp_send_reply_end(w->req); /* frees req when it lost its connection */
    free(w);
}

/* the client went away: libevent detached the request from the connection */
static void on_close(struct evhttp_connection *evcon, void *arg)
{
    ks_watch *w = arg;
    (void)evcon;
    unlink_watch(w);
    if (!evhttp_request_get_connection(w->req))
        evhttp_request_free(w->req);
    free(w);
}

static void on_end(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    watch_end(arg);
}

static void on_bookmark(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    send_bookmark(arg, 0);
}

void watch_close_all(void)
{
    while (watches)
        watch_end(watches);
}

void watch_close_kind(int kind)
{
    ks_watch *w = watches, *next;
    for (; w; w = next) {
        next = w->next;
        if (w->o.kind == kind)
            watch_end(w);
    }
}

void watch_malformed_all(void)
{
    ks_watch *w;
    for (w = watches; w; w = w->next) {
        struct evbuffer *b = evbuffer_new();
        evbuffer_add_printf(b, "{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"%s\",\"metadata\":{\"name\":\n",
                            ks_kinds[w->o.kind].kind);
        send_chunk(w, b);
    }
}

/* ---------- filtering ---------- */

static int matches(const ks_watch *w, const ks_ver *v)
{
    return sel_match(&w->o.lsel, ver_label, v) && sel_match(&w->o.fsel, ver_field, v);
}

static void deliver(ks_watch *w, const ks_event *ev)
{
    int now, before;
    if (ev->obj->kind != w->o.kind || (w->o.ns && strcmp(ev->obj->ns, w->o.ns)))
        return;
    now = matches(w, ev->obj);
    before = ev->type == EV_MODIFIED && ev->prev && matches(w, ev->prev);
    if (ev->type == EV_ADDED) {
        if (now)
            send_event(w, "ADDED", ev->obj, NULL);
    } else if (ev->type == EV_DELETED) {
        if (now)
            send_event(w, "DELETED", ev->obj, NULL);
    } else if (now) {
        send_event(w, before ? "MODIFIED" : "ADDED", ev->obj, NULL);
    } else if (before) {
        ks_ver *gone = ver_with_rv(ev->prev, ev->rv);
        if (gone)
            send_event(w, "DELETED", gone, NULL);
        ver_unref(gone);
    }
}

void watch_dispatch(const ks_event *ev)
{
    ks_watch *w;
    for (w = watches; w; w = w->next)
        deliver(w, ev);
}

static void replay_one(const ks_event *ev, void *arg)
{
    deliver(arg, ev);
}

static int initial_one(ks_ver *v, void *arg)
{
    if (matches(arg, v))
        send_event(arg, "ADDED", v, NULL);
    return 0;
}

/* ---------- start ---------- */

static void start_timers(ks_watch *w)
{
    struct timeval tv = {w->o.timeout_s, 0};
    w->end_ev = evtimer_new(ks_base, on_end, w);
    evtimer_add(w->end_ev, &tv);
    if (!w->o.bookmarks)
        return;
    if (ks_bookmark_interval > 0) {
        struct timeval bi = {ks_bookmark_interval, 0};
        w->bm_ev = event_new(ks_base, -1, EV_PERSIST, on_bookmark, w);
        evtimer_add(w->bm_ev, &bi);
    }
    if (w->o.timeout_s > 2) {
        struct timeval fb = {w->o.timeout_s - 2, 0};
        w->final_bm_ev = evtimer_new(ks_base, on_bookmark, w);
        evtimer_add(w->final_bm_ev, &fb);
    }
}

void watch_send_error(struct evhttp_request *req, const ks_err *e)
{
    char *st = ks_status_json(e);
    struct evbuffer *b = evbuffer_new();
    evbuffer_add_printf(b, "{\"type\":\"ERROR\",\"object\":%s}\n", st ? st : "{}");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_send_reply(req, 200, "OK", b);
    evbuffer_free(b);
    free(st);
}

static void send_expired(struct evhttp_request *req, ks_watch_opts *o)
{
    ks_err e;
    ks_seterr(&e, 410, "Expired", "too old resource version: %llu (%llu)",
              (unsigned long long)o->from_rv, (unsigned long long)store_compact_rv());
    watch_send_error(req, &e);
    free(o->ns);
    sel_free(&o->lsel);
    sel_free(&o->fsel);
}

void watch_start(struct evhttp_request *req, ks_watch_opts *o)
{
    ks_watch *w;
    if (!o->initial && o->from_rv < store_compact_rv()) {
        send_expired(req, o);
        return;
    }
    w = calloc(1, sizeof(*w));
    w->req = req;
    w->evcon = evhttp_request_get_connection(req);
    w->o = *o;
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", "application/json");
    evhttp_add_header(evhttp_request_get_output_headers(req), "Cache-Control", "no-cache, private");
    evhttp_send_reply_start(req, 200, "OK");
    evhttp_connection_set_closecb(w->evcon, on_close, w);
    w->next = watches;
    if (watches)
        watches->prev = w;
    watches = w;
    nwatches++;
    if (o->initial) {
        store_scan(o->kind, o->ns, 0, NULL, initial_one, w);
        if (o->initial_end)
            send_bookmark(w, 1);
    } else {
        store_history_each(o->from_rv, replay_one, w);
    }
    start_timers(w);
}
