/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_reflector.c — the reflector's list/watch state machine
 * (src/k8s/reflector.c) over a scripted transport and clock: the exact URLs
 * it asks for (path, limit, continue, resourceVersion, allowWatchBookmarks,
 * timeoutSeconds, labelSelector), the handler calls it makes (upsert, remove,
 * relist begin/end), and the delays it picks (backoff sequence with jitter,
 * one backoff for lists, watches and relists, reset 2 minutes after the last
 * wait and by a watch event but not by a complete list, a 410 loop and a
 * repeated continue token slowed, Retry-After; objects the parser refuses
 * skipped in a list page and in a watch event),
 * plus the watch-line framer (events split anywhere, several per read,
 * malformed, oversized), 410 handling, a server gone back in time (504 with
 * a ResourceVersionTooLarge Status, a list page, event or BOOKMARK at a lower
 * resourceVersion → relist from "") and the resourceVersion order; and the
 * parse arena the reflector parses into (src/k8s/jsonarena.c): trees stay
 * valid until released, nodes added by handlers are freed normally, invalid
 * and very large input, other threads' cJSON untouched.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include "k8s/jsonarena.h"
#include "k8s/reflector.h"

/* ---- the scripted environment ------------------------------------------------------ */

typedef struct env {
    char *urls[64];
    int nurls;
    double delays[64];
    int ndelays;
    double t, rnd;
    int reauths, start_fails;
    char calls[8192];               /* "begin up:a up:b end rm:c " */
    char reasons[1024];             /* "timeout expired " */
} env;

static env E;

static int e_start(void *ctx, const char *url)
{
    (void)ctx;
    if (E.start_fails > 0) {
        E.start_fails--;
        return -1;
    }
    assert_true(E.nurls < 64);
    E.urls[E.nurls++] = strdup(url);
    return 0;
}

static void e_schedule(void *ctx, double d)
{
    (void)ctx;
    assert_true(E.ndelays < 64);
    E.delays[E.ndelays++] = d;
}

static double e_now(void *ctx) { (void)ctx; return E.t; }
static double e_random(void *ctx) { (void)ctx; return E.rnd; }
static void e_reauth(void *ctx) { (void)ctx; E.reauths++; }

static void e_restarted(void *ctx, const char *reason)
{
    (void)ctx;
    strcat(E.reasons, reason);
    strcat(E.reasons, " ");
}

/* flush: the request just started is sent now; logged with the number of
 * requests so far, so tests see that page N+1 was asked for before page N's
 * objects were applied */
static void e_flush(void *ctx)
{
    (void)ctx;
    char b[32];
    snprintf(b, sizeof b, "flush%d ", E.nurls);
    strcat(E.calls, b);
}

static const refl_ops OPS = { e_start, e_schedule, e_now, e_random, e_reauth, e_restarted, NULL,
                              e_flush };

static void log_call(const char *what, const cJSON *obj)
{
    strcat(E.calls, what);
    if (obj) {
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(md, "name");
        strcat(E.calls, ":");
        strcat(E.calls, cJSON_IsString(n) ? n->valuestring : "?");
        if (cJSON_GetObjectItemCaseSensitive(md, "managedFields"))
            strcat(E.calls, "+managedFields");
    }
    strcat(E.calls, " ");
}

static void h_up(void *c, const cJSON *o) { (void)c; log_call("up", o); }
static void h_rm(void *c, const cJSON *o) { (void)c; log_call("rm", o); }
static void h_begin(void *c) { (void)c; log_call("begin", NULL); }
static void h_end(void *c) { (void)c; log_call("end", NULL); }
static const k8s_handler H = { NULL, h_up, h_rm, h_begin, h_end };

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < E.nurls; i++)
        free(E.urls[i]);
    memset(&E, 0, sizeof E);
    E.t = 1000;
    return 0;
}

static int teardown(void **state)
{
    jarena_thread_done();
    return setup(state);
}

static const char *last_url(void) { return E.nurls ? E.urls[E.nurls - 1] : ""; }

/* What a pods reflector asks for first: a LIST from the start, no
 * resourceVersion, the first page's size. */
#define FIRST_PAGE "http://k:1/api/v1/pods?limit=100"

/* The value of query parameter key in url (first match), or NULL. */
static const char *param(const char *url, const char *key)
{
    static char v[1024];
    const char *q = strchr(url, '?');
    size_t kl = strlen(key);
    while (q) {
        q++;
        if (!strncmp(q, key, kl) && q[kl] == '=') {
            size_t n = strcspn(q + kl + 1, "&");
            snprintf(v, sizeof v, "%.*s", (int)n, q + kl + 1);
            return v;
        }
        q = strchr(q, '&');
    }
    return NULL;
}

static void calls_are(const char *want)
{
    assert_string_equal(E.calls, want);
    E.calls[0] = '\0';
}

static int respond_full(refl *r, long status, const char *ra, const char *body, int ok)
{
    refl_on_headers(r, status, ra);
    int rc = body ? refl_on_body(r, body, strlen(body)) : 0;
    refl_on_done(r, ok);
    return rc;
}

static void respond(refl *r, long status, const char *ra, const char *body)
{
    respond_full(r, status, ra, body, 1);
}

/* A watch answers 200 and body arrives in one read: refl_on_body's result
 * (-1: the reflector ends the transfer). The caller ends it (refl_on_done)
 * after looking at what body did. */
static int watch_reads(refl *r, const char *body)
{
    refl_on_headers(r, 200, NULL);
    return refl_on_body(r, body, strlen(body));
}

static char *list_body(const char *rv, const char *cont, const char *const *names)
{
    static char b[4096];
    size_t n = (size_t)snprintf(b, sizeof b, "{\"kind\":\"PodList\",\"metadata\":{");
    if (rv)
        n += (size_t)snprintf(b + n, sizeof b - n, "\"resourceVersion\":\"%s\"%s", rv, cont ? "," : "");
    if (cont)
        n += (size_t)snprintf(b + n, sizeof b - n, "\"continue\":\"%s\"", cont);
    n += (size_t)snprintf(b + n, sizeof b - n, "},\"items\":[");
    for (int i = 0; names && names[i]; i++)
        n += (size_t)snprintf(b + n, sizeof b - n, "%s{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%d\"}}",
                              i ? "," : "", names[i], 10 + i);
    snprintf(b + n, sizeof b - n, "]}");
    return b;
}

static char *event(const char *type, const char *name, const char *rv)
{
    static char b[512];
    snprintf(b, sizeof b, "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"%s\",\"resourceVersion\":\"%s\"}}}\n",
             type, name, rv);
    return b;
}

static void assert_watch_url(const char *url, const char *rv)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, "http://k:1/api/v1/pods?watch=1&");
    assert_true(!strncmp(url, prefix, strlen(prefix)));
    assert_string_equal(param(url, "resourceVersion"), rv);
    assert_string_equal(param(url, "allowWatchBookmarks"), "true");
    int t = atoi(param(url, "timeoutSeconds"));
    assert_true(t >= 300 && t <= 600);
    assert_null(param(url, "limit"));
    assert_null(param(url, "continue"));
}

/* New reflector of pods (no selector), started: its first LIST asked for. */
static refl *started_refl(void)
{
    refl *r = refl_new("http://k:1", "/api/v1/pods", NULL, &H, &OPS, NULL);
    assert_non_null(r);
    refl_start(r);
    return r;
}

/* New reflector, listed (one page: a, b at RV 100) and watching from 100. */
static refl *synced_refl(void)
{
    static const char *const ab[] = { "a", "b", NULL };
    refl *r = started_refl();
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("100", NULL, ab));
    calls_are("begin up:a up:b end ");
    assert_true(refl_synced(r));
    assert_true(refl_is_watching(r));
    assert_watch_url(last_url(), "100");
    return r;
}

/* n watches in a row answer 500, a second apart, each wait ended by its
 * timer: the backoff doubles n times. */
static void fail_watches(refl *r, int n)
{
    for (int i = 0; i < n; i++) {
        respond(r, 500, NULL, NULL);
        E.t += 1;
        refl_on_timer(r);
    }
}

/* ---- lists -------------------------------------------------------------------------- */

/* A later page asks for REFL_PAGE_BYTES over the bytes of text and parsed
 * tree per object of the page before (at least REFL_PAGE_MIN objects, at most
 * REFL_PAGE_SIZE); the first page of the next list asks for REFL_PAGE_FIRST
 * again. */
static char *big_page(const char *cont, int n, size_t name_len)
{
    size_t cap = 256 + (size_t)n * (name_len + 64);
    char *b = malloc(cap), *name = malloc(name_len + 1);
    assert_non_null(b);
    assert_non_null(name);
    memset(name, 'x', name_len);
    name[name_len] = '\0';
    size_t o = (size_t)snprintf(b, cap, "{\"kind\":\"PodList\",\"metadata\":{\"resourceVersion\":\"9\"%s%s%s},\"items\":[",
                                cont ? ",\"continue\":\"" : "", cont ? cont : "", cont ? "\"" : "");
    for (int i = 0; i < n; i++)        /* the bulk in a field the handler does not log */
        o += (size_t)snprintf(b + o, cap - o, "%s{\"metadata\":{\"name\":\"%c\",\"resourceVersion\":\"9\","
                              "\"annotations\":{\"x\":\"%s\"}}}", i ? "," : "", 'a' + i, name);
    snprintf(b + o, cap - o, "]}");
    free(name);
    return b;
}

static void test_page_size_follows_object_size(void **state)
{
    (void)state;
    refl *r = started_refl();
    assert_string_equal(last_url(), FIRST_PAGE);
    char *b = big_page("t1", 4, 20000);            /* 20 KB of text an object */
    respond(r, 200, NULL, b);
    free(b);
    int lim = atoi(param(last_url(), "limit"));
    assert_true(lim > REFL_PAGE_MIN && lim <= (int)(REFL_PAGE_BYTES / 20000) + 1);
    b = big_page("t2", 2, 400000);                 /* 400 KB: the floor */
    respond(r, 200, NULL, b);
    free(b);
    assert_int_equal(atoi(param(last_url(), "limit")), REFL_PAGE_MIN);
    b = big_page("t3", 3, 10);                     /* small objects: the ceiling */
    respond(r, 200, NULL, b);
    free(b);
    assert_int_equal(atoi(param(last_url(), "limit")), REFL_PAGE_SIZE);
    b = big_page(NULL, 1, 10);                      /* the last page: then a watch */
    respond(r, 200, NULL, b);
    free(b);
    assert_true(refl_synced(r));
    assert_non_null(strstr(last_url(), "watch=1"));
    refl_free(r);
}

static void test_paginated_list_then_watch(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", "b", NULL }, *const p2[] = { NULL },
                             *const p3[] = { "c", NULL };
    refl *r = refl_new("http://k:1", "/api/v1/pods", "app in (x,y),tier!=db", &H, &OPS, NULL);
    refl_start(r);
    assert_int_equal(E.nurls, 1);
    assert_string_equal(last_url(),
                        "http://k:1/api/v1/pods?limit=100&labelSelector=app%20in%20%28x%2Cy%29%2Ctier%21%3Ddb");
    assert_false(refl_synced(r));
    respond(r, 200, NULL, list_body(NULL, "tok/1=+", p1));
    calls_are("begin flush2 up:a up:b ");           /* page 2 asked for first */
    assert_string_equal(last_url(), "http://k:1/api/v1/pods?limit=500&continue=tok%2F1%3D%2B"
                                    "&labelSelector=app%20in%20%28x%2Cy%29%2Ctier%21%3Ddb");
    assert_false(refl_synced(r));
    /* an empty page with a continue token still means "more" */
    respond(r, 200, NULL, list_body("77", "tok2", p2));
    calls_are("flush3 ");
    assert_string_equal(param(last_url(), "continue"), "tok2");
    respond(r, 200, NULL, list_body("77", NULL, p3));
    calls_are("up:c end ");
    assert_true(refl_synced(r));
    assert_string_equal(refl_version(r), "77");
    assert_int_equal(E.nurls, 4);
    assert_watch_url(last_url(), "77");
    assert_string_equal(param(last_url(), "labelSelector"), "app%20in%20%28x%2Cy%29%2Ctier%21%3Ddb");
    assert_int_equal(E.ndelays, 0);
    refl_free(r);
}

/* One object by name (node-local mode's own Node): the field selector
 * goes on the list and on every watch, next to a label selector. */
static void test_field_selector_on_list_and_watch(void **state)
{
    (void)state;
    static const char *const p1[] = { "node-a", NULL };
    refl *r = refl_new("http://k:1", "/api/v1/nodes", "tier=x", &H, &OPS, NULL);
    assert_int_equal(refl_set_fields(r, "metadata.name=node-a"), 0);
    refl_start(r);
    assert_string_equal(last_url(), "http://k:1/api/v1/nodes?limit=100&labelSelector=tier%3Dx"
                                    "&fieldSelector=metadata.name%3Dnode-a");
    respond(r, 200, NULL, list_body("9", NULL, p1));
    calls_are("begin up:node-a end ");
    assert_true(!strncmp(last_url(), "http://k:1/api/v1/nodes?watch=1&", 32));
    assert_string_equal(param(last_url(), "resourceVersion"), "9");
    assert_string_equal(param(last_url(), "fieldSelector"), "metadata.name%3Dnode-a");
    assert_string_equal(param(last_url(), "labelSelector"), "tier%3Dx");
    /* a re-watch keeps it */
    E.t += 400;
    respond(r, 200, NULL, "");
    assert_true(!strncmp(last_url(), "http://k:1/api/v1/nodes?watch=1&", 32));
    assert_string_equal(param(last_url(), "resourceVersion"), "9");
    assert_string_equal(param(last_url(), "fieldSelector"), "metadata.name%3Dnode-a");
    /* cleared: neither list nor watch carries one */
    assert_int_equal(refl_set_fields(r, ""), 0);
    E.t += 400;
    respond(r, 200, NULL, "");
    assert_null(strstr(last_url(), "fieldSelector"));
    refl_free(r);
}

static void test_watch_timeout_range(void **state)
{
    (void)state;
    E.rnd = 0.0;
    refl *r = synced_refl();
    assert_string_equal(param(last_url(), "timeoutSeconds"), "300");
    E.rnd = 0.999999;
    E.t += 400;
    respond(r, 200, NULL, "");                          /* server ended it cleanly */
    assert_string_equal(param(last_url(), "timeoutSeconds"), "600");
    E.rnd = 0.5;
    E.t += 400;
    respond(r, 200, NULL, "");
    assert_string_equal(param(last_url(), "timeoutSeconds"), "450");
    assert_int_equal(E.ndelays, 0);                      /* clean ends: no wait */
    assert_string_equal(E.reasons, "timeout timeout ");
    refl_free(r);
}

static void test_expired_continue_restarts_list(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL }, *const p2[] = { "a", "b", NULL };
    refl *r = started_refl();
    respond(r, 200, NULL, list_body(NULL, "old", p1));
    calls_are("begin flush2 up:a ");
    respond(r, 410, NULL, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}");
    /* after the backoff, from the first page: a new relist (begin again) */
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("9", NULL, p2));
    calls_are("begin up:a up:b end ");
    assert_watch_url(last_url(), "9");
    refl_free(r);
}

static void test_list_failures_back_off_then_list_again(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL }, *const p2[] = { "b", NULL };
    refl *r = started_refl();
    respond(r, 200, NULL, list_body(NULL, "c1", p1));
    calls_are("begin flush2 up:a ");
    /* transport failure on page 2: wait, then list from page 1 again */
    respond_full(r, 0, NULL, NULL, 0);
    assert_int_equal(E.ndelays, 1);
    assert_true(E.delays[0] >= 0.8 && E.delays[0] <= 1.2);
    assert_false(refl_synced(r));
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    /* a malformed list: wait again (doubled), list again */
    respond(r, 200, NULL, "{\"items\": [ {\"metadata\"");
    assert_int_equal(E.ndelays, 2);
    assert_true(E.delays[1] >= 1.6 && E.delays[1] <= 2.4);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    /* a last page without a resourceVersion is malformed too */
    respond(r, 200, NULL, list_body(NULL, NULL, p1));
    assert_int_equal(E.ndelays, 3);
    refl_on_timer(r);
    respond(r, 200, NULL, list_body("5", NULL, p2));
    calls_are("begin up:b end ");
    assert_true(refl_synced(r));
    assert_watch_url(last_url(), "5");
    refl_free(r);
}

/* A 404 on a list (a CRD not installed): listed as empty (relist begin
 * and end, so what was kept goes, and synced: readiness is not held
 * back), then listed again with the backoff until it is served; a 404 on a
 * continued page is a plain failure. */
static void test_list_404_counts_as_empty(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL };
    refl *r = refl_new("http://k:1", "/apis/cilium.io/v2/ciliumnodes", NULL, &H, &OPS, NULL);
    refl_start(r);
    respond(r, 404, NULL, "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    calls_are("begin end ");
    assert_true(refl_synced(r));
    assert_false(refl_is_watching(r));
    assert_int_equal(E.ndelays, 1);
    assert_true(E.delays[0] >= 0.8 && E.delays[0] <= 1.2);
    refl_on_timer(r);
    assert_string_equal(last_url(), "http://k:1/apis/cilium.io/v2/ciliumnodes?limit=100");
    respond(r, 404, NULL, NULL);
    calls_are("begin end ");
    assert_int_equal(E.ndelays, 2);
    assert_true(E.delays[1] >= 1.6 && E.delays[1] <= 2.4);     /* backing off */
    refl_on_timer(r);
    /* installed: listed and watched */
    respond(r, 200, NULL, list_body("9", "c1", p1));
    calls_are("begin flush4 up:a ");
    respond(r, 404, NULL, NULL);                /* a continued page: a failure */
    calls_are("");
    assert_int_equal(E.ndelays, 3);
    refl_on_timer(r);
    respond(r, 200, NULL, list_body("9", NULL, p1));
    calls_are("begin up:a end ");
    assert_true(refl_is_watching(r));
    refl_free(r);
}

static void test_list_null_items(void **state)
{
    (void)state;
    refl *r = started_refl();
    respond(r, 200, NULL, "{\"metadata\":{\"resourceVersion\":\"3\"},\"items\":null}");
    calls_are("begin end ");
    assert_true(refl_synced(r));
    refl_free(r);
}

/* ---- watch framing and events ------------------------------------------------------- */

static void test_events_split_anywhere(void **state)
{
    (void)state;
    refl *r = synced_refl();
    char body[2048] = "";
    strcat(body, event("ADDED", "c", "101"));
    strcat(body, event("MODIFIED", "a", "102"));
    strcat(body, "\r\n");                                /* blank lines are ignored */
    strcat(body, event("DELETED", "b", "103"));
    strcat(body, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"150\"}}}\r\n");
    refl_on_headers(r, 200, NULL);
    /* one byte per read */
    for (size_t i = 0; i < strlen(body); i++)
        assert_int_equal(refl_on_body(r, body + i, 1), 0);
    calls_are("up:c up:a rm:b ");
    assert_string_equal(refl_version(r), "150");       /* the bookmark advanced it */
    /* several per read, and a line split across two reads */
    char two[1024] = "";
    strcat(two, event("ADDED", "d", "151"));
    strcat(two, event("ADDED", "e", "152"));
    const char *third = event("DELETED", "d", "153");
    size_t tl = strlen(two);
    memcpy(two + tl, third, 20);
    two[tl + 20] = '\0';
    assert_int_equal(refl_on_body(r, two, strlen(two)), 0);
    calls_are("up:d up:e ");
    assert_string_equal(refl_version(r), "152");
    assert_int_equal(refl_on_body(r, third + 20, strlen(third + 20)), 0);
    calls_are("rm:d ");
    assert_string_equal(refl_version(r), "153");
    /* a clean end: watch again from the last version, without waiting */
    refl_on_done(r, 1);
    assert_int_equal(E.ndelays, 0);
    assert_watch_url(last_url(), "153");
    assert_string_equal(E.reasons, "timeout ");
    refl_free(r);
}

static void test_malformed_line_rewatches_from_last_good(void **state)
{
    (void)state;
    refl *r = synced_refl();
    char body[1024] = "";
    strcat(body, event("ADDED", "c", "101"));
    strcat(body, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"na\n");
    strcat(body, event("ADDED", "never", "102"));
    assert_int_equal(watch_reads(r, body), -1);         /* abort the transfer */
    calls_are("up:c ");
    refl_on_done(r, 0);                                  /* curl: write error */
    assert_int_equal(E.ndelays, 1);
    assert_true(E.delays[0] >= 0.8 && E.delays[0] <= 1.2);
    assert_string_equal(E.reasons, "malformed ");
    refl_on_timer(r);
    assert_watch_url(last_url(), "101");
    calls_are("");                                       /* no relist */
    /* an event of an unknown type, or without an object, is malformed too */
    assert_int_equal(watch_reads(r, "{\"type\":\"WHAT\",\"object\":{}}\n"), -1);
    refl_on_done(r, 0);
    refl_on_timer(r);
    assert_int_equal(watch_reads(r, "{\"type\":\"ADDED\"}\n"), -1);
    refl_on_done(r, 0);
    assert_string_equal(E.reasons, "malformed malformed malformed ");
    refl_free(r);
}

static void test_oversized_line_skipped(void **state)
{
    (void)state;
    refl *r = synced_refl();
    size_t big = REFL_MAX_LINE + 1000;
    char *b = malloc(big + 1);
    memset(b, 'x', big);
    b[big - 1] = '\n';
    b[big] = '\0';
    refl_on_headers(r, 200, NULL);
    /* in pieces of 64 KiB, then a good event */
    for (size_t off = 0; off < big; off += 65536) {
        size_t n = big - off < 65536 ? big - off : 65536;
        assert_int_equal(refl_on_body(r, b + off, n), 0);
    }
    const char *ev = event("ADDED", "ok", "120");
    assert_int_equal(refl_on_body(r, ev, strlen(ev)), 0);
    calls_are("up:ok ");
    assert_string_equal(refl_version(r), "120");
    free(b);
    refl_free(r);
}

static void test_error_410_event_relists_by_diff(void **state)
{
    (void)state;
    static const char *const bc[] = { "b", "c", NULL };
    refl *r = synced_refl();
    char body[1024] = "";
    strcat(body, event("ADDED", "x", "101"));
    strcat(body, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\","
                 "\"message\":\"too old resource version: 100 (105)\"}}\n");
    strcat(body, event("ADDED", "never", "102"));
    assert_int_equal(watch_reads(r, body), -1);
    calls_are("up:x ");
    refl_on_done(r, 0);
    /* relist after the backoff, no resourceVersion */
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    assert_string_equal(E.reasons, "expired ");
    respond(r, 200, NULL, list_body("200", NULL, bc));
    /* the handler drops what was not listed only at end */
    calls_are("begin up:b up:c end ");
    assert_watch_url(last_url(), "200");
    refl_free(r);
}

static void test_http_410_and_reason_gone_relist(void **state)
{
    (void)state;
    refl *r = synced_refl();
    respond(r, 410, NULL, "{\"kind\":\"Status\",\"code\":410}");
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("300", NULL, NULL));
    calls_are("begin end ");
    /* ERROR with reason Gone (old servers) */
    assert_int_equal(watch_reads(r, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
                                    "\"reason\":\"Gone\"}}\n"), -1);
    refl_on_done(r, 0);
    assert_int_equal(E.ndelays, 2);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    refl_free(r);
}

static void test_other_error_event_rewatches(void **state)
{
    (void)state;
    refl *r = synced_refl();
    assert_int_equal(watch_reads(r, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":500,"
                                    "\"reason\":\"InternalError\"}}\n"), -1);
    refl_on_done(r, 0);
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    calls_are("");
    refl_free(r);
}

static void test_very_short_empty_watch_backs_off(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.t += 0.2;
    respond(r, 200, NULL, "");
    assert_int_equal(E.ndelays, 1);
    assert_string_equal(E.reasons, "error ");
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    /* short but with an event: a normal end */
    watch_reads(r, event("BOOKMARK", "", "130"));
    refl_on_done(r, 1);
    assert_int_equal(E.ndelays, 1);
    assert_watch_url(last_url(), "130");
    refl_free(r);
}

static void test_non_200_body_not_parsed(void **state)
{
    (void)state;
    refl *r = synced_refl();
    const char *st = event("DELETED", "a", "999");
    respond(r, 500, NULL, st);
    calls_are("");
    assert_string_equal(refl_version(r), "100");
    assert_int_equal(E.ndelays, 1);
    refl_free(r);
}

/* ---- a server gone back in time (storage restored from a backup) ------------------- */

/* The apiserver's NewTooLargeResourceVersionError as it is written on the wire. */
static const char *too_large_status(const char *rv, const char *cur)
{
    static char b[600];
    snprintf(b, sizeof b, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
             "\"status\":\"Failure\",\"message\":\"Timeout: Too large resource version: %s, "
             "current: %s\",\"reason\":\"Timeout\",\"details\":{\"causes\":[{\"reason\":"
             "\"ResourceVersionTooLarge\",\"message\":\"Too large resource version\"}],"
             "\"retryAfterSeconds\":1},\"code\":504}", rv, cur);
    return b;
}

static void test_rv_order(void **state)
{
    (void)state;
    assert_true(refl_rv_less("9", "10"));                /* longer is larger */
    assert_false(refl_rv_less("10", "9"));
    assert_false(refl_rv_less("10", "10"));
    assert_true(refl_rv_less("123", "124"));             /* same length: lexical */
    assert_false(refl_rv_less("124", "123"));
    assert_true(refl_rv_less("99999999999999999999", "100000000000000000000")); /* > 2^64 */
    /* not positive decimal integers without leading zeros: never lower */
    assert_false(refl_rv_less("099", "100"));
    assert_false(refl_rv_less("0", "1"));
    assert_false(refl_rv_less("", "1"));
    assert_false(refl_rv_less(NULL, "1"));
    assert_false(refl_rv_less("1", NULL));
    assert_false(refl_rv_less("1", "abc"));
    assert_false(refl_rv_less("12a", "13"));
    assert_false(refl_rv_less("-1", "3"));
    assert_false(refl_rv_less("+1", "3"));
    assert_false(refl_rv_less(" 1", "3"));
}

static void test_too_large_on_watch_relists_from_scratch(void **state)
{
    (void)state;
    static const char *const restored[] = { "a", "x", NULL };
    refl *r = synced_refl();                            /* a, b at 100 */
    /* the server came back from a backup at 40: the watch from 100 gets 504 */
    E.rnd = 0;
    respond(r, 504, "1", too_large_status("100", "40"));
    assert_int_equal(E.ndelays, 1);                     /* the backoff, */
    assert_float_equal(E.delays[0], 0.8, 1e-9);         /* not Retry-After */
    assert_string_equal(refl_version(r), "");
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);        /* no resourceVersion */
    assert_string_equal(refl_version(r), "");
    assert_string_equal(E.reasons, "too_large ");
    respond(r, 200, NULL, list_body("40", NULL, restored));
    calls_are("begin up:a up:x end ");                  /* b goes at end */
    assert_watch_url(last_url(), "40");
    /* as an ERROR event on an open watch */
    char ev[800];
    snprintf(ev, sizeof ev, "{\"type\":\"ERROR\",\"object\":%s}\n", too_large_status("40", "7"));
    assert_int_equal(watch_reads(r, ev), -1);
    refl_on_done(r, 0);
    assert_int_equal(E.ndelays, 2);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("7", NULL, NULL));
    calls_are("begin end ");
    /* servers before 1.19 set no cause: the message says it */
    respond(r, 504, NULL, "{\"kind\":\"Status\",\"code\":504,\"reason\":\"Timeout\","
                          "\"message\":\"Too large resource version: 7, current: 5\"}");
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("5", NULL, NULL));
    calls_are("begin end ");
    assert_string_equal(E.reasons, "too_large too_large too_large ");
    assert_int_equal(E.ndelays, 3);
    assert_float_equal(E.delays[2], 3.2, 1e-9);         /* not reset by the lists */
    refl_free(r);
}

static void test_other_504_waits_and_rewatches(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0;
    /* a proxy's gateway timeout, or another Timeout Status: a failure */
    respond(r, 504, NULL, "<html><body>504 Gateway Time-out</body></html>");
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    respond(r, 504, "3", "{\"kind\":\"Status\",\"code\":504,\"reason\":\"Timeout\","
                         "\"message\":\"Timeout: request did not complete within 60s\"}");
    assert_int_equal(E.ndelays, 2);
    assert_float_equal(E.delays[1], 3, 1e-9);
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    /* a Status too big to keep is only its code */
    size_t big = REFL_MAX_STATUS + 10;
    char *b = malloc(big + 1);
    memset(b, ' ', big);
    memcpy(b, too_large_status("100", "40"), strlen(too_large_status("100", "40")));
    b[big] = '\0';
    respond(r, 504, NULL, b);
    free(b);
    assert_int_equal(E.ndelays, 3);
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    calls_are("");
    assert_string_equal(E.reasons, "error error error ");
    refl_free(r);
}

static void test_too_large_on_continued_page_relists(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL }, *const p2[] = { "b", NULL };
    refl *r = started_refl();
    respond(r, 200, NULL, list_body("1000", "c1", p1));
    calls_are("begin flush2 up:a ");
    /* the token's version is newer than the restored server's */
    respond(r, 504, "1", too_large_status("1000", "40"));
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    assert_string_equal(E.reasons, "too_large ");
    respond(r, 200, NULL, list_body("40", NULL, p2));
    calls_are("begin up:b end ");
    assert_watch_url(last_url(), "40");
    refl_free(r);
}

static void test_lower_rv_on_list_page_relists(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL }, *const p2[] = { "old", NULL },
                             *const p3[] = { "x", NULL }, *const ab[] = { "a", "b", NULL };
    refl *r = started_refl();
    respond(r, 200, NULL, list_body("1000", "c1", p1));
    calls_are("begin flush2 up:a ");
    /* page 2 comes from a server restored to 40: not applied, list again */
    respond(r, 200, NULL, list_body("40", "c2", p2));
    calls_are("");
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    assert_string_equal(E.reasons, "rolled_back ");
    respond(r, 200, NULL, list_body("40", "c3", p3));
    calls_are("begin flush4 up:x ");
    respond(r, 200, NULL, list_body("40", NULL, p1));   /* the same version: fine */
    calls_are("up:a end ");
    assert_watch_url(last_url(), "40");
    /* a complete list from "" at a version lower than the one watched is
     * the server's whole state: taken as it is, no second list */
    respond(r, 410, NULL, NULL);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    int n = E.nurls;
    respond(r, 200, NULL, list_body("7", NULL, ab));
    calls_are("begin up:a up:b end ");
    assert_int_equal(E.nurls, n + 1);
    assert_watch_url(last_url(), "7");
    /* versions that do not compare never count as lower */
    respond(r, 410, NULL, NULL);
    refl_on_timer(r);
    respond(r, 200, NULL, list_body("9", "c4", p1));
    respond(r, 200, NULL, list_body("x1", "c5", p2));
    respond(r, 200, NULL, list_body("08", NULL, p3));
    calls_are("begin flush9 up:a flush10 up:old up:x end ");
    assert_watch_url(last_url(), "08");
    assert_string_equal(E.reasons, "rolled_back expired expired ");
    refl_free(r);
}

static void test_lower_rv_event_or_bookmark_relists(void **state)
{
    (void)state;
    static const char *const restored[] = { "a", NULL };
    refl *r = synced_refl();                            /* a, b at 100 */
    char body[2048] = "";
    strcat(body, event("ADDED", "c", "101"));
    strcat(body, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"150\"}}}\n");
    strcat(body, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"99\"}}}\n");
    strcat(body, event("ADDED", "never", "160"));
    assert_int_equal(watch_reads(r, body), -1);
    calls_are("up:c ");
    assert_string_equal(refl_version(r), "150");
    refl_on_done(r, 0);
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    assert_string_equal(E.reasons, "rolled_back ");
    respond(r, 200, NULL, list_body("99", NULL, restored));
    calls_are("begin up:a end ");
    assert_watch_url(last_url(), "99");
    /* an event below the version: not applied, relist */
    assert_int_equal(watch_reads(r, event("MODIFIED", "a", "98")), -1);
    refl_on_done(r, 0);
    calls_are("");
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    respond(r, 200, NULL, list_body("99", NULL, restored));
    calls_are("begin up:a end ");
    /* equal, higher, and versions that do not compare go on */
    body[0] = '\0';
    strcat(body, "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"99\"}}}\n");
    strcat(body, event("ADDED", "d", "1000"));
    strcat(body, event("ADDED", "e", "opaque-7"));
    strcat(body, event("ADDED", "f", "5"));
    assert_int_equal(watch_reads(r, body), 0);
    calls_are("up:d up:e up:f ");
    assert_string_equal(refl_version(r), "5");
    assert_string_equal(E.reasons, "rolled_back rolled_back ");
    refl_free(r);
}

/* One object the parser refuses (a lone \udcff escape in an annotation, or
 * nesting deeper than the limit) is skipped, not the whole list: the rest
 * is applied, the list completes, the reflector is synced and watches; the
 * same object in a watch event is dropped (removed) and the watch goes on
 * from its resourceVersion. */
static void test_bad_object_skipped_not_the_list(void **state)
{
    (void)state;
    refl *r = refl_new("http://k:1", "/api/v1/services", NULL, &H, &OPS, NULL);
    refl_start(r);
    const char *page =
        "{\"kind\":\"ServiceList\",\"metadata\":{\"resourceVersion\":\"50\"},\"items\":["
        "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"10\"}},"
        "{\"metadata\":{\"name\":\"bad\",\"annotations\":{\"x\":\"\\udcff\"}}},"
        "{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"12\"}}]}";
    respond(r, 200, NULL, page);
    calls_are("begin up:a up:c end ");
    assert_true(refl_synced(r));
    assert_int_equal(E.ndelays, 0);
    assert_true(refl_is_watching(r));
    assert_string_equal(param(last_url(), "resourceVersion"), "50");
    /* a watch event with such an object, then a good one */
    char deep[4096];
    size_t n = (size_t)snprintf(deep, sizeof deep, "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":"
                                "{\"name\":\"c\",\"namespace\":\"ns\",\"resourceVersion\":\"51\"},\"x\":");
    for (int i = 0; i < 1100; i++)
        deep[n++] = '[';
    for (int i = 0; i < 1100; i++)
        deep[n++] = ']';
    snprintf(deep + n, sizeof deep - n, "}}\n");
    assert_int_equal(watch_reads(r, deep), 0);
    const char *lone = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"d\",\"resourceVersion\":"
                       "\"52\",\"annotations\":{\"x\":\"\\udcff\"}}}}\n";
    assert_int_equal(refl_on_body(r, lone, strlen(lone)), 0);
    const char *ev = event("ADDED", "e", "53");
    assert_int_equal(refl_on_body(r, ev, strlen(ev)), 0);
    calls_are("rm:c rm:d up:e ");
    assert_string_equal(refl_version(r), "53");
    assert_string_equal(E.reasons, "");
    E.t += 5;
    refl_on_done(r, 1);
    assert_int_equal(E.ndelays, 0);
    assert_string_equal(param(last_url(), "resourceVersion"), "53");
    /* a refused line whose object has no name is malformed, as before */
    assert_int_equal(watch_reads(r, "{\"type\":\"ADDED\",\"object\":{\"x\":\"\\udcff\"}}\n"), -1);
    refl_on_done(r, 0);
    assert_string_equal(E.reasons, "timeout malformed ");
    assert_int_equal(E.ndelays, 1);
    refl_free(r);
}


/* ---- delays ------------------------------------------------------------------------- */

static void test_backoff_sequence_and_cap(void **state)
{
    (void)state;
    refl *r = synced_refl();
    static const double want[] = { 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30 };
    E.rnd = 0;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        respond_full(r, 0, NULL, NULL, 0);              /* connection refused */
        assert_int_equal(E.ndelays, (int)i + 1);
        assert_float_equal(E.delays[i], want[i], 1e-9);
        E.t += E.delays[i];
        refl_on_timer(r);
        assert_watch_url(last_url(), "100");            /* watch again, no relist */
    }
    calls_are("");
    /* jitter: up to +50 % */
    E.rnd = 0.999;
    respond_full(r, 503, NULL, NULL, 1);
    assert_float_equal(E.delays[E.ndelays - 1], 30 * 1.4995, 1e-9);
    refl_free(r);
}

static void test_backoff_resets_after_two_healthy_minutes(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0;
    fail_watches(r, 4);
    assert_float_equal(E.delays[3], 6.4, 1e-9);
    /* 119 s since the last failure: no reset */
    E.t += 118;
    respond(r, 500, NULL, NULL);
    assert_float_equal(E.delays[4], 12.8, 1e-9);
    refl_on_timer(r);
    /* a watch that lasts 2 minutes, then fails: back to 0.8 s */
    E.t += 120;
    respond_full(r, 0, NULL, NULL, 0);
    assert_float_equal(E.delays[5], 0.8, 1e-9);
    refl_on_timer(r);
    E.t += 1;
    respond_full(r, 0, NULL, NULL, 0);
    assert_float_equal(E.delays[6], 1.6, 1e-9);
    refl_free(r);
}

static void test_retry_after_honoured(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0;
    respond(r, 429, " 7\r\n", "{\"kind\":\"Status\",\"code\":429}");
    assert_float_equal(E.delays[0], 7, 1e-9);
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    /* Retry-After does not advance the backoff */
    respond(r, 500, NULL, NULL);
    assert_float_equal(E.delays[1], 0.8, 1e-9);
    refl_on_timer(r);
    /* an HTTP-date is not understood: the backoff applies */
    respond(r, 503, "Wed, 21 Oct 2015 07:28:00 GMT", NULL);
    assert_float_equal(E.delays[2], 1.6, 1e-9);
    refl_on_timer(r);
    /* huge values are capped at 600 s */
    respond(r, 503, "86400", NULL);
    assert_float_equal(E.delays[3], 600, 1e-9);
    refl_on_timer(r);
    /* on a list too */
    respond(r, 410, NULL, NULL);
    assert_float_equal(E.delays[4], 3.2, 1e-9);        /* the relist's backoff */
    refl_on_timer(r);
    respond(r, 429, "0", NULL);
    assert_float_equal(E.delays[5], 0, 1e-9);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    refl_free(r);
}

static void test_backoff_reset_by_events_not_lists(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0;
    /* consecutive failures double the delay */
    fail_watches(r, 4);
    assert_int_equal(E.ndelays, 4);
    assert_float_equal(E.delays[3], 6.4, 1e-9);
    /* a complete list does not reset it (a 410 relist waits its turn) */
    respond(r, 410, NULL, NULL);
    assert_float_equal(E.delays[4], 12.8, 1e-9);
    refl_on_timer(r);
    respond(r, 200, NULL, list_body("300", NULL, NULL));
    assert_watch_url(last_url(), "300");
    respond_full(r, 0, NULL, NULL, 0);
    assert_float_equal(E.delays[5], 25.6, 1e-9);
    refl_on_timer(r);
    /* the watch delivers an event, then breaks: 0.8 s again */
    assert_int_equal(watch_reads(r, event("MODIFIED", "a", "301")), 0);
    refl_on_done(r, 0);                                 /* connection reset */
    assert_float_equal(E.delays[6], 0.8, 1e-9);
    refl_on_timer(r);
    assert_watch_url(last_url(), "301");
    respond(r, 500, NULL, NULL);                        /* consecutive again */
    assert_float_equal(E.delays[7], 1.6, 1e-9);
    refl_on_timer(r);
    /* a BOOKMARK is an event too */
    assert_int_equal(watch_reads(r, event("BOOKMARK", "", "302")), 0);
    refl_on_done(r, 0);
    assert_float_equal(E.delays[8], 0.8, 1e-9);
    refl_on_timer(r);
    respond(r, 500, NULL, NULL);
    assert_float_equal(E.delays[9], 1.6, 1e-9);
    refl_on_timer(r);
    /* 2 minutes after the last wait began: 0.8 s again */
    E.t += 120;
    respond_full(r, 0, NULL, NULL, 0);
    assert_float_equal(E.delays[10], 0.8, 1e-9);
    assert_float_equal(refl_backoff(r), 1.6, 1e-9);
    refl_free(r);
}

/* Every watch answers 410 at once, every list succeeds: the relists back
 * off to one per 30 s instead of one per round trip. */
static void test_410_loop_backs_off(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0;
    static const double want[] = { 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30, 30, 30, 30 };
    double start = E.t;
    int first = E.nurls;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        respond(r, 410, NULL, "{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}");
        assert_int_equal(E.ndelays, (int)i + 1);
        assert_float_equal(E.delays[i], want[i], 1e-9);
        assert_false(refl_is_watching(r));
        E.t += E.delays[i];
        refl_on_timer(r);
        assert_string_equal(last_url(), FIRST_PAGE);
        respond(r, 200, NULL, list_body("100", NULL, NULL));
        assert_watch_url(last_url(), "100");
    }
    /* 20 requests in ~200 s, not 11 lists a second */
    int requests = E.nurls - first;
    assert_int_equal(requests, 20);
    assert_true(requests / (E.t - start) < 0.2);
    refl_free(r);
}

/* A server that hands the same continue token again, or pages without end. */
static void test_repeated_continue_token_restarts_after_backoff(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL }, *const p2[] = { "b", NULL };
    E.rnd = 0;
    refl *r = started_refl();
    respond(r, 200, NULL, list_body("10", "t1", p1));
    assert_string_equal(param(last_url(), "continue"), "t1");
    respond(r, 200, NULL, list_body("10", "t1", p2));   /* t1 again */
    assert_int_equal(E.nurls, 2);                       /* no third LIST now */
    assert_int_equal(E.ndelays, 1);
    assert_float_equal(E.delays[0], 0.8, 1e-9);
    assert_string_equal(E.reasons, "paging ");
    assert_false(refl_synced(r));
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    /* the next time the server pages properly: synced */
    respond(r, 200, NULL, list_body("10", "t1", p1));
    respond(r, 200, NULL, list_body("10", NULL, p2));
    assert_true(refl_synced(r));
    assert_watch_url(last_url(), "10");
    refl_free(r);
    /* tokens that differ but never end: stopped at REFL_MAX_PAGES */
    setup(NULL);
    E.rnd = 0;
    r = started_refl();
    char tok[32];
    int lists = 0;
    for (int i = 0; i < REFL_MAX_PAGES + 5 && E.ndelays == 0; i++) {
        snprintf(tok, sizeof tok, "t%d", i);
        respond(r, 200, NULL, list_body("10", tok, p1));
        free(E.urls[0]);                                /* keep E.urls small */
        memmove(E.urls, E.urls + 1, (size_t)(E.nurls - 1) * sizeof E.urls[0]);
        E.nurls--;
        E.calls[0] = '\0';
        lists++;
    }
    assert_int_equal(E.ndelays, 1);
    assert_int_equal(lists, REFL_MAX_PAGES);
    assert_string_equal(E.reasons, "paging ");
    E.calls[0] = '\0';
    refl_free(r);
}

static void test_backoff_not_reset_by_a_partial_list(void **state)
{
    (void)state;
    static const char *const p1[] = { "a", NULL };
    E.rnd = 0;
    refl *r = started_refl();
    /* page 1 answers, page 2 fails, every time: the delays still grow */
    static const double want[] = { 0.8, 1.6, 3.2, 6.4 };
    for (int i = 0; i < 4; i++) {
        respond(r, 200, NULL, list_body("10", "c", p1));
        respond(r, 500, NULL, NULL);
        assert_int_equal(E.ndelays, i + 1);
        assert_float_equal(E.delays[i], want[i], 1e-9);
        refl_on_timer(r);
        assert_string_equal(last_url(), FIRST_PAGE);
    }
    refl_free(r);
}

static void test_retry_after_honoured_after_reset(void **state)
{
    (void)state;
    refl *r = synced_refl();
    E.rnd = 0.5;
    for (int i = 0; i < 3; i++) {
        respond(r, 500, NULL, NULL);
        refl_on_timer(r);
    }
    assert_float_equal(E.delays[2], 3.2 * 1.25, 1e-9);
    assert_int_equal(watch_reads(r, event("ADDED", "z", "101")), 0);
    refl_on_done(r, 1);                                 /* clean end: no wait */
    assert_int_equal(E.ndelays, 3);
    /* after the reset, Retry-After still decides, exactly */
    respond(r, 429, "5", "{\"kind\":\"Status\",\"code\":429,\"reason\":\"TooManyRequests\"}");
    assert_float_equal(E.delays[3], 5, 1e-9);
    refl_on_timer(r);
    respond(r, 503, "2", NULL);
    assert_float_equal(E.delays[4], 2, 1e-9);
    refl_on_timer(r);
    /* and it did not advance the backoff: 0.8 s (+ jitter) */
    respond(r, 500, NULL, NULL);
    assert_float_equal(E.delays[5], 0.8 * 1.25, 1e-9);
    refl_on_timer(r);
    assert_watch_url(last_url(), "101");
    refl_free(r);
}

static void test_401_rereads_token(void **state)
{
    (void)state;
    refl *r = synced_refl();
    respond(r, 401, NULL, "{\"kind\":\"Status\",\"code\":401}");
    assert_int_equal(E.reauths, 1);
    assert_int_equal(E.ndelays, 1);
    assert_string_equal(E.reasons, "unauthorized ");
    refl_on_timer(r);
    assert_watch_url(last_url(), "100");
    /* on a list */
    respond(r, 410, NULL, NULL);
    assert_int_equal(E.ndelays, 2);
    refl_on_timer(r);
    respond(r, 401, NULL, NULL);
    assert_int_equal(E.reauths, 2);
    assert_int_equal(E.ndelays, 3);
    assert_false(E.delays[2] < 3.2);
    refl_free(r);
}

static void test_start_failure_waits(void **state)
{
    (void)state;
    E.start_fails = 1;
    refl *r = started_refl();
    assert_int_equal(E.nurls, 0);
    assert_int_equal(E.ndelays, 1);
    refl_on_timer(r);
    assert_string_equal(last_url(), FIRST_PAGE);
    /* a stray timer while a request is in flight does nothing */
    refl_on_timer(r);
    assert_int_equal(E.nurls, 1);
    assert_string_equal(refl_resource(r), "pods");
    refl_free(r);
}

/* A pod's managedFields and unread fields are skipped (what is kept:
 * test_jsonsel.c); the object still reaches the handler. */
static void test_managed_fields_skipped(void **state)
{
    (void)state;
    refl *r = started_refl();
    respond(r, 200, NULL, "{\"metadata\":{\"resourceVersion\":\"5\"},\"items\":[{\"metadata\":"
                          "{\"name\":\"m\",\"managedFields\":[{\"manager\":\"kubectl\"}]}}]}");
    calls_are("begin up:m end ");
    refl_free(r);
}

/* ---- the parse arena (jsonarena.c) -------------------------------------------------- */

static void test_arena_tree_and_foreign_nodes(void **state)
{
    (void)state;
    const char *t = "{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"7\"},\"items\":[1,2,3]}";
    cJSON *doc = jarena_parse(t, strlen(t));
    assert_non_null(doc);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(md, "name")->valuestring, "a");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "items")), 3);
    /* outside the parse, allocations are ordinary: a node added by a
     * handler is freed by cJSON_Delete (valgrind/ASan see a leak otherwise) */
    assert_non_null(cJSON_AddStringToObject(doc, "added", "by a handler"));
    cJSON *plain = cJSON_Parse("{\"x\":[\"y\"]}");
    assert_non_null(plain);
    cJSON_Delete(doc);
    jarena_release();
    /* a tree parsed normally lives on after the arena is gone */
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(plain, "x"), 0)->valuestring, "y");
    cJSON_Delete(plain);
}

static void test_arena_invalid_and_large(void **state)
{
    (void)state;
    assert_null(jarena_parse("{\"a\": [1, 2", 11));
    jarena_release();
    /* ~200,000 nodes: many chunks, up to the 4 MiB size */
    size_t n = 200000, cap = n * 24 + 16, len = 0;
    char *b = malloc(cap);
    b[len++] = '[';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(b + len, cap - len, "%s\"v%zu\"", i ? "," : "", i);
    b[len++] = ']';
    cJSON *doc = jarena_parse(b, len);
    free(b);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetArraySize(doc), (int)n);
    assert_string_equal(cJSON_GetArrayItem(doc, (int)n - 1)->valuestring, "v199999");
    cJSON_Delete(doc);
    jarena_release();
    jarena_thread_done();
}

static void test_arena_reuse_and_delete(void **state)
{
    (void)state;
    /* pages parsed one after the other reuse the rewound chunks */
    char b[256];
    const char *first = NULL;
    for (int i = 0; i < 3; i++) {
        int n = snprintf(b, sizeof b, "{\"metadata\":{\"name\":\"p%d\"}}", i);
        cJSON *d = jarena_parse(b, (size_t)n);
        assert_non_null(d);
        if (!first)
            first = (const char *)d;
        assert_ptr_equal((const char *)d, first);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "metadata"),
                                                             "name")->valuestring, i == 0 ? "p0" : i == 1 ? "p1" : "p2");
        if (i == 1)      /* a handler adds a node: jarena_delete must free it */
            assert_non_null(cJSON_AddNumberToObject(d, "n", 1));
        jarena_delete(d);
        jarena_release();
    }
    jarena_trim();
}

static void test_arena_nested_trees(void **state)
{
    (void)state;
    /* a list page's tree stays intact while watch events are parsed and
     * released on the same thread (what flush can cause) */
    const char *outer = "{\"items\":[{\"metadata\":{\"name\":\"outer\"}}]}";
    cJSON *o = jarena_parse(outer, strlen(outer));
    for (int i = 0; i < 50; i++) {
        char ev[128];
        int n = snprintf(ev, sizeof ev, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"w%d\"}}}", i);
        cJSON *w = jarena_parse(ev, (size_t)n);
        assert_non_null(w);
        jarena_delete(w);
        jarena_release();
    }
    const cJSON *it = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "items"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "metadata"),
                                                         "name")->valuestring, "outer");
    jarena_trim();                      /* refused while a tree is held */
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(it, "metadata"),
                                                         "name")->valuestring, "outer");
    jarena_delete(o);
    jarena_release();
    jarena_trim();
}

static void *plain_parse_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        cJSON *d = cJSON_Parse("{\"k\":\"v\",\"n\":[1,2,3]}");
        if (!d || strcmp(cJSON_GetObjectItemCaseSensitive(d, "k")->valuestring, "v"))
            return (void *)1;
        cJSON_Delete(d);
    }
    return NULL;
}

static void test_arena_other_threads_unaffected(void **state)
{
    (void)state;
    const char *t = "[\"held\", {\"while\": \"others parse\"}]";
    cJSON *doc = jarena_parse(t, strlen(t));
    pthread_t th;
    void *rc = (void *)1;
    assert_int_equal(pthread_create(&th, NULL, plain_parse_thread, NULL), 0);
    pthread_join(th, &rc);
    assert_null(rc);
    assert_string_equal(cJSON_GetArrayItem(doc, 0)->valuestring, "held");
    cJSON_Delete(doc);
    jarena_release();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_paginated_list_then_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_page_size_follows_object_size, setup, teardown),
        cmocka_unit_test_setup_teardown(test_field_selector_on_list_and_watch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watch_timeout_range, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_continue_restarts_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_failures_back_off_then_list_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_404_counts_as_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_null_items, setup, teardown),
        cmocka_unit_test_setup_teardown(test_events_split_anywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_line_rewatches_from_last_good, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_line_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_410_event_relists_by_diff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_410_and_reason_gone_relist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_error_event_rewatches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_very_short_empty_watch_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_non_200_body_not_parsed, setup, teardown),
        cmocka_unit_test(test_rv_order),
        cmocka_unit_test_setup_teardown(test_too_large_on_watch_relists_from_scratch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_504_waits_and_rewatches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_large_on_continued_page_relists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lower_rv_on_list_page_relists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lower_rv_event_or_bookmark_relists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_sequence_and_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_resets_after_two_healthy_minutes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_after_honoured, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_reset_by_events_not_lists, setup, teardown),
        cmocka_unit_test_setup_teardown(test_410_loop_backs_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_object_skipped_not_the_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repeated_continue_token_restarts_after_backoff, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backoff_not_reset_by_a_partial_list, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_after_honoured_after_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_rereads_token, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_failure_waits, setup, teardown),
        cmocka_unit_test(test_arena_tree_and_foreign_nodes),
        cmocka_unit_test(test_arena_invalid_and_large),
        cmocka_unit_test(test_arena_other_threads_unaffected),
        cmocka_unit_test(test_arena_reuse_and_delete),
        cmocka_unit_test(test_arena_nested_trees),
        cmocka_unit_test_setup_teardown(test_managed_fields_skipped, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
