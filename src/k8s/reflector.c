/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reflector.c — one resource kept in sync with the API server, as
 * client-go's reflector does; pure protocol logic, no I/O (reflector.h).
 *
 * States:
 *   LIST   GET PATH?limit=N[&continue=T][&labelSelector=S]: N is 100 for a
 *          list's first page, then REFL_PAGE_BYTES over the bytes of text
 *          and parsed tree per object of the page before (20..500
 *          objects), so a page's text and tree stay small whatever the kind. The first page
 *          of a list calls relist_begin, the last one (no continue token)
 *          relist_end and records metadata.resourceVersion, then WATCH.
 *          The next page is requested as soon as a page is parsed, before
 *          its objects are applied.
 *          HTTP 410 on a continued page (token expired), a Status saying the
 *          resourceVersion is too large (HTTP 504, cause ResourceVersionTooLarge:
 *          the token's version is newer than the server's), a continued
 *          page whose resourceVersion is lower than the first page's, or a
 *          continue token the server already gave in this list (a server
 *          looping on one page), or more than REFL_MAX_PAGES pages, list
 *          again from the first page after the backoff (WAIT); other
 *          failures → WAIT, then list again. An item the parser refuses
 *          (a lone UTF-16 surrogate escape, nesting deeper than cJSON's
 *          limit) but whose brackets balance is left out of the page and
 *          logged (jsel_parse_lenient); the rest is applied.
 *   WATCH  GET PATH?watch=1&resourceVersion=RV&allowWatchBookmarks=true&
 *          timeoutSeconds=300..600[&labelSelector=S]. The body is framed into
 *          lines whatever the chunking; each line is one event:
 *          ADDED/MODIFIED → upsert, DELETED → remove, BOOKMARK → version
 *          only; every event advances RV and resets the backoff. These relist (LIST from
 *          resourceVersion "", reconciled by the handler's begin/end) after
 *          the backoff: ERROR with code 410 (or reason Expired/Gone)
 *          or HTTP 410; the resourceVersion too large (HTTP 504 or an ERROR
 *          event whose Status has the cause ResourceVersionTooLarge: the
 *          server went back in time, e.g. etcd restored from a backup); an
 *          event or BOOKMARK whose resourceVersion is lower than the last one
 *          (refl_rv_less). A line refused for its object is read again by
 *          the salvage rule (type, name, namespace, resourceVersion): such
 *          an event is logged, its object removed, RV advanced, the watch
 *          goes on (watch_salvage). A malformed line, another ERROR, a failed
 *          transfer or a very short empty watch (< 1 s, no event) → WAIT,
 *          then WATCH from the last good RV. A clean end → WATCH again.
 *   WAIT   Retry-After when the response had one (seconds, ≤ 600), else
 *          backoff: 0.8 s doubling to 30 s, each delay + up to 50 % jitter.
 *          As client-go's reflector runs list-and-watch under one backoff
 *          manager (0.8 s to 30 s, reset after 2 minutes), the backoff is
 *          shared by every wait (a failed list or watch, a relist) and
 *          resets to 0.8 s when 2 minutes passed since the last wait
 *          began, and also on a watch event (client-go does not: a watch
 *          that delivers shows the server works, and after faults end the
 *          store must follow within seconds, not after a 30 s wait). A
 *          complete list does not reset it: a server that lists fine and
 *          answers every watch with 410 is listed at most once per 30-45 s
 *          once the backoff has grown. A 401 re-reads the credentials
 *          first.
 *
 * Parsing: list pages and watch lines are parsed selectively (jsonsel.h)
 * by the resource's rules (fields.c): metadata.managedFields (~40 % of a
 * pod) is skipped for every resource, and pods and nodes get only the
 * members the cluster store decodes, so a page of 500 pods costs a few
 * hundred nodes per pod less. The trees live in the thread's arena
 * (jsonarena.h), released as soon as the handlers have seen the objects. The body of a non-200 response (a Status, up to 64 KiB) is
 * kept in the same buffer and read only to tell a too large resourceVersion
 * from other failures.
 *
 * Memory: everything a reflector holds (URLs, the continue token, the body
 * buffer) is its own, written and read only on the thread that drives it,
 * and freed by refl_free(); only `synced` is read from other threads.
 */
#include <assert.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "k8s/jsonarena.h"
#include "k8s/jsonsel.h"
#include "k8s/reflector.h"
#include "common/log.h"
#include "common/sbuf.h"
#include "common/vec.h"

enum { RS_IDLE, RS_LIST, RS_WATCH, RS_WAIT };

#define RV_LEN 64                       /* longer resourceVersions are ignored */

struct refl {
    char *base, *path, *selector, *fields, *resource;
    k8s_handler h;
    const jsel *page_rule, *line_rule;  /* what to build of pages and events */
    const refl_ops *ops;
    void *ctx;
    int state;
    char rv[RV_LEN];            /* the version to watch from; "" = list */
    char list_rv[RV_LEN];       /* the first page's version of this list */
    char prev_rv[RV_LEN];       /* rv when the current list began (logs) */
    char *cont;                 /* continue token of the next page */
    int limit;                  /* objects the next page asks for */
    atomic_int synced;
    long status;
    double retry_after;         /* < 0: none */
    char *buf;                  /* list body, or the partial watch line */
    size_t len, cap;
    int skipping;               /* inside an oversized watch line */
    const char *relist_why;     /* a watch must end in a relist: the reason */
    int restart_needed;
    unsigned events;            /* events in the current watch */
    unsigned pages;             /* pages of the current list so far */
    double watch_start;
    double backoff, last_fail;  /* last_fail < 0: never failed */
    int missing;                /* the last list was a 404 (logged once) */
};
/* ---- small helpers ------------------------------------------------------------------ */


/* Append s percent-encoded (RFC 3986 unreserved characters kept). */
static void sb_escaped(sbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            sbuf_add(b, (const char *)&c, 1);
        } else {
            char e[3] = { '%', hex[c >> 4], hex[c & 15] };
            sbuf_add(b, e, 3);
        }
    }
}

static double parse_retry_after(const char *v)
{
    if (!v)
        return -1;
    while (*v == ' ' || *v == '\t')
        v++;
    char *end;
    long n = strtol(v, &end, 10);
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
        end++;
    if (end == v || *end || n < 0)
        return -1;                          /* an HTTP-date: use the backoff */
    return n > REFL_RETRY_AFTER_MAX ? REFL_RETRY_AFTER_MAX : (double)n;
}

static void restarted(refl *r, const char *reason)
{
    if (r->ops->restarted)
        r->ops->restarted(r->ctx, reason);
}

/* metadata.resourceVersion of obj, or NULL when absent or empty. */
static const char *rv_of(const cJSON *obj)
{
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    return cJSON_IsString(rv) && rv->valuestring[0] ? rv->valuestring : NULL;
}

static void set_rv(char dst[RV_LEN], const char *rv)
{
    if (rv && strlen(rv) < RV_LEN)
        snprintf(dst, RV_LEN, "%s", rv);
}

/* A resourceVersion Kubernetes compares (1.35+): a positive decimal integer
 * without leading zeros. */
static int rv_comparable(const char *s)
{
    if (!s || *s < '1' || *s > '9')
        return 0;
    while (*s >= '0' && *s <= '9')
        s++;
    return *s == '\0';
}

int refl_rv_less(const char *a, const char *b)
{
    if (!rv_comparable(a) || !rv_comparable(b))
        return 0;
    size_t la = strlen(a), lb = strlen(b);
    return la != lb ? la < lb : strcmp(a, b) < 0;
}

/* A watch delivered an event: the server streams real data, the next
 * failure waits 0.8 s again. */
static void healthy(refl *r) { r->backoff = REFL_BACKOFF_MIN; }

/* ---- Status objects ----------------------------------------------------------------- */

static int has_cause(const cJSON *status, const char *field, const char *value)
{
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(status, "details");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(details, "causes")) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, field);
        if (cJSON_IsString(v) && !strcmp(v->valuestring, value))
            return 1;
    }
    return 0;
}

/* The requested resourceVersion is newer than the server's (the apiserver's
 * NewTooLargeResourceVersionError: a Timeout with the cause
 * ResourceVersionTooLarge; servers before 1.19 said it in the messages). */
static int is_too_large(const cJSON *status)
{
    static const char msg[] = "Too large resource version";
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(status, "message");
    if (has_cause(status, "reason", "ResourceVersionTooLarge"))
        return 1;
    if (!cJSON_IsString(reason) || strcmp(reason->valuestring, "Timeout"))
        return 0;
    return has_cause(status, "message", msg) || (cJSON_IsString(m) && strstr(m->valuestring, msg));
}

/* The kept body of a non-200 response is a too-large Status. */
static int body_too_large(refl *r)
{
    if (r->status == 200 || r->len == 0 || r->skipping)
        return 0;
    cJSON *doc = jarena_parse(r->buf, r->len);
    int yes = cJSON_IsObject(doc) && is_too_large(doc);
    jarena_delete(doc);
    jarena_release();
    return yes;
}

static int buf_reserve(refl *r, size_t need)
{
    return VEC_RESERVE_FROM(r->buf, r->cap, need, 65536);
}

/* A list page of 500 pods needs a few MB; watch lines are small. Give the
 * page buffer and the parse arena's chunks back once a list is complete. */
static void buf_trim(refl *r)
{
    if (r->cap > (256u << 10)) {
        free(r->buf);
        r->buf = NULL;
        r->cap = r->len = 0;
    }
    jarena_trim();
}

/* ---- requests ----------------------------------------------------------------------- */

static void fail(refl *r);

static void request(refl *r, int state, sbuf *url)
{
    if (r->selector) {
        sbuf_str(url, "&labelSelector=");
        sb_escaped(url, r->selector);
    }
    if (r->fields) {
        sbuf_str(url, "&fieldSelector=");
        sb_escaped(url, r->fields);
    }
    r->state = state;
    r->len = 0;
    r->skipping = 0;
    r->status = 0;
    r->retry_after = -1;
    int rc = url->p && !url->oom ? r->ops->start(r->ctx, url->p) : -1;
    free(url->p);
    if (rc < 0) {
        log_warning("plugin/kubernetes: %s: cannot start a request", r->resource);
        fail(r);
    }
}

static void start_list(refl *r)
{
    sbuf url = { 0 };
    char lim[32];
    if (!r->cont || r->limit < REFL_PAGE_MIN || r->limit > REFL_PAGE_SIZE)
        r->limit = REFL_PAGE_FIRST;
    snprintf(lim, sizeof lim, "?limit=%d", r->limit);
    sbuf_str(&url, r->base);
    sbuf_str(&url, r->path);
    sbuf_str(&url, lim);
    if (r->cont) {
        sbuf_str(&url, "&continue=");
        sb_escaped(&url, r->cont);
    }
    request(r, RS_LIST, &url);
}

static void start_watch(refl *r)
{
    sbuf url = { 0 };
    char tail[96];
    int span = REFL_TIMEOUT_MAX - REFL_TIMEOUT_MIN + 1;
    int t = REFL_TIMEOUT_MIN + (int)(r->ops->random(r->ctx) * span);
    if (t > REFL_TIMEOUT_MAX)
        t = REFL_TIMEOUT_MAX;
    sbuf_str(&url, r->base);
    sbuf_str(&url, r->path);
    sbuf_str(&url, "?watch=1&resourceVersion=");
    sb_escaped(&url, r->rv);
    snprintf(tail, sizeof tail, "&allowWatchBookmarks=true&timeoutSeconds=%d", t);
    sbuf_str(&url, tail);
    r->relist_why = NULL;
    r->restart_needed = 0;
    r->events = 0;
    r->watch_start = r->ops->now(r->ctx);
    request(r, RS_WATCH, &url);
}

/* Forget the version and the paging: the next list starts from the first
 * page, from resourceVersion "". */
static void forget(refl *r)
{
    free(r->cont);
    r->cont = NULL;
    if (r->rv[0])
        set_rv(r->prev_rv, r->rv);
    r->rv[0] = '\0';
}

static void relist(refl *r)
{
    forget(r);
    start_list(r);
}

/* Something failed: wait (Retry-After, else backoff), then go on. The
 * backoff resets when the previous wait began 2 minutes ago or more. */
static void fail(refl *r)
{
    double t = r->ops->now(r->ctx), d;
    if (r->last_fail >= 0 && t - r->last_fail >= REFL_HEALTHY_RESET)
        r->backoff = REFL_BACKOFF_MIN;
    r->last_fail = t;
    if (r->retry_after >= 0) {
        d = r->retry_after;
    } else {
        d = r->backoff * (1.0 + 0.5 * r->ops->random(r->ctx));
        r->backoff = r->backoff * 2 > REFL_BACKOFF_MAX ? REFL_BACKOFF_MAX : r->backoff * 2;
    }
    r->state = RS_WAIT;
    r->ops->schedule(r->ctx, d);
}

/* The list or watch must start again from the first page: after the
 * backoff (a server that answers every watch with 410, or loops on a page,
 * must not be listed as fast as it answers). */
static void relist_later(refl *r)
{
    forget(r);
    r->retry_after = -1;        /* a Retry-After was for the request refused */
    fail(r);
}

void refl_on_timer(refl *r)
{
    assert(r);
    if (r->state != RS_WAIT)
        return;
    if (r->rv[0])
        start_watch(r);
    else
        relist(r);
}

/* ---- lists -------------------------------------------------------------------------- */

/* A list is complete: say so when its version is lower than the one
 * watched before (storage restored). */
static void listed(refl *r)
{
    if (refl_rv_less(r->rv, r->prev_rv))
        log_warning("plugin/kubernetes: %s: resourceVersion went back from %s to %s (API "
                    "storage restored?); the list replaced every object", r->resource,
                    r->prev_rv, r->rv);
    r->prev_rv[0] = '\0';
}

/* A complete list page is in buf. */
static void list_page(refl *r)
{
    unsigned bad = 0;
    cJSON *doc = jarena_parse_lenient(r->buf, r->len, r->page_rule, &bad);
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(doc, "items");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(doc, "metadata");
    const cJSON *cont = cJSON_GetObjectItemCaseSensitive(md, "continue");
    const cJSON *rv = cJSON_GetObjectItemCaseSensitive(md, "resourceVersion");
    int more = cJSON_IsString(cont) && cont->valuestring[0];
    int nitems = cJSON_GetArraySize(items);
    if (nitems > 0) {           /* the next page: about REFL_PAGE_BYTES */
        size_t want = REFL_PAGE_BYTES / ((r->len + jarena_used()) / (size_t)nitems + 1);
        r->limit = want < REFL_PAGE_MIN ? REFL_PAGE_MIN : want > REFL_PAGE_SIZE ? REFL_PAGE_SIZE
                                                                                : (int)want;
    }
    r->len = 0;
    if (!cJSON_IsObject(doc) || (items && !cJSON_IsArray(items) && !cJSON_IsNull(items)) ||
        (!more && !(cJSON_IsString(rv) && rv->valuestring[0]))) {
        log_warning("plugin/kubernetes: %s: malformed list; listing again", r->resource);
        jarena_delete(doc);
        jarena_release();
        r->rv[0] = '\0';
        fail(r);
        return;
    }
    if (r->cont && refl_rv_less(rv_of(doc), r->list_rv)) {
        log_warning("plugin/kubernetes: %s: list page at resourceVersion %s, older than the "
                    "list's %s (API storage restored?); listing from the start", r->resource,
                    rv_of(doc), r->list_rv);
        jarena_delete(doc);
        jarena_release();
        restarted(r, "rolled_back");
        relist_later(r);
        return;
    }
    if (bad)
        log_warning("plugin/kubernetes: %s: %u object%s of a list page skipped: not JSON the "
                    "parser accepts (a lone UTF-16 surrogate escape, nesting deeper than %d, "
                    "...); the rest of the page is used", r->resource, bad, bad > 1 ? "s" : "",
                    CJSON_NESTING_LIMIT);
    if (!r->cont)
        r->pages = 0;
    if (more && ((r->cont && !strcmp(r->cont, cont->valuestring)) ||
                 ++r->pages >= REFL_MAX_PAGES)) {
        log_warning("plugin/kubernetes: %s: %s; listing from the start after a backoff",
                    r->resource, r->pages >= REFL_MAX_PAGES
                                     ? "list longer than " REFL_MAX_PAGES_TEXT " pages"
                                     : "the API server repeated the continue token");
        jarena_delete(doc);
        jarena_release();
        restarted(r, "paging");
        relist_later(r);
        return;
    }
    if (!r->cont) {
        r->list_rv[0] = '\0';
        set_rv(r->list_rv, rv_of(doc));
        r->h.relist_begin(r->h.ctx);
    }
    free(r->cont);
    r->cont = more ? strdup(cont->valuestring) : NULL;
    if (more) {
        /* ask for the next page first: the server produces it while the
         * handlers apply this one */
        start_list(r);
        if (r->ops->flush)
            r->ops->flush(r->ctx);
    }
    const cJSON *list = cJSON_IsArray(items) ? items : NULL, *it;
    cJSON_ArrayForEach(it, list)
        r->h.upsert(r->h.ctx, it);
    if (more) {
        jarena_delete(doc);
        jarena_release();
        return;
    }
    set_rv(r->rv, rv_of(doc));
    jarena_delete(doc);
    jarena_release();
    buf_trim(r);
    if (r->missing)
        log_info("plugin/kubernetes: %s is served now", r->path);
    r->missing = 0;
    r->h.relist_end(r->h.ctx);
    atomic_store(&r->synced, 1);
    listed(r);
    start_watch(r);
}

static void list_done(refl *r, int ok)
{
    if (ok && r->status == 200) {
        list_page(r);
    } else if (r->status == 410 && r->cont) {
        log_warning("plugin/kubernetes: %s: continue token expired; listing from the start",
                    r->resource);
        restarted(r, "expired");
        relist_later(r);
    } else if (body_too_large(r)) {
        log_warning("plugin/kubernetes: %s: the list's resourceVersion is newer than the API "
                    "server's (storage restored?); listing from the start", r->resource);
        restarted(r, "too_large");
        relist_later(r);
    } else if (ok && r->status == 404 && !r->cont) {
        /* The API server does not serve the resource (a CRD not installed):
         * it is listed as empty, so readiness is not held back, and listed
         * again with the backoff until it is served. */
        if (!r->missing)
            log_warning("plugin/kubernetes: %s is not served by the API server (HTTP 404: its "
                        "CustomResourceDefinition is not installed?); treating it as empty and "
                        "retrying", r->path);
        r->missing = 1;
        r->rv[0] = '\0';
        r->h.relist_begin(r->h.ctx);
        r->h.relist_end(r->h.ctx);
        atomic_store(&r->synced, 1);
        fail(r);
    } else {
        log_warning("plugin/kubernetes: listing %s failed (HTTP %ld%s)", r->resource, r->status,
                    ok ? "" : ", transfer failed");
        r->rv[0] = '\0';
        fail(r);
    }
}

/* ---- watches ------------------------------------------------------------------------ */

static int is_expired(const cJSON *status)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
    if (cJSON_IsNumber(code) && code->valueint == 410)
        return 1;
    return cJSON_IsString(reason) &&
           (!strcmp(reason->valuestring, "Expired") || !strcmp(reason->valuestring, "Gone"));
}

static void malformed(refl *r)
{
    log_warning("plugin/kubernetes: %s: malformed watch event; watching again from %s",
                r->resource, r->rv);
    r->restart_needed = 1;
    restarted(r, "malformed");
}

/* An event or BOOKMARK older than the version watched from: the server's
 * history is not the one the store follows. */
static void rolled_back(refl *r, const char *rv)
{
    log_warning("plugin/kubernetes: %s: watch event at resourceVersion %s, older than %s (API "
                "storage restored?); relisting", r->resource, rv, r->rv);
    r->relist_why = "rolled_back";
}

static void watch_event(refl *r, const char *t, const cJSON *obj)
{
    const char *rv = rv_of(obj);
    if (refl_rv_less(rv, r->rv)) {
        rolled_back(r, rv);
        return;
    }
    if (t[0] == 'A' || t[0] == 'M')
        r->h.upsert(r->h.ctx, obj);
    else if (t[0] == 'D')
        r->h.remove(r->h.ctx, obj);
    set_rv(r->rv, rv);
    r->events++;
    healthy(r);
    if (r->ops->applied)
        r->ops->applied(r->ctx);
}

static void watch_error(refl *r, const cJSON *status)
{
    if (is_expired(status)) {
        r->relist_why = "expired";
    } else if (is_too_large(status)) {
        r->relist_why = "too_large";
    } else {
        log_warning("plugin/kubernetes: %s: watch error event", r->resource);
        r->restart_needed = 1;
        restarted(r, "error");
    }
}

/* A watch line the parser refuses (a lone UTF-16 surrogate escape, nesting
 * too deep, in the object): when its type and the object's name can still
 * be read, the object is skipped as a list skips it — dropped from the
 * store (it is no longer what the server has) — and the watch goes on from
 * its resourceVersion; otherwise the line is malformed. */
static void watch_salvage(refl *r, const char *line, size_t len)
{
    cJSON *ev = jarena_parse_sel(line, len, jsel_salvage_rule());
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(md, "name");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(md, "namespace");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    if ((strcmp(t, "ADDED") && strcmp(t, "MODIFIED") && strcmp(t, "DELETED")) ||
        !cJSON_IsString(name) || !name->valuestring[0]) {
        malformed(r);
    } else {
        if (!refl_rv_less(rv_of(obj), r->rv))
            log_warning("plugin/kubernetes: %s: %s event for %.63s%s%.253s skipped: the object "
                        "is not JSON the parser accepts (a lone UTF-16 surrogate escape, nesting "
                        "deeper than %d, ...); treated as deleted", r->resource, t,
                        cJSON_IsString(ns) ? ns->valuestring : "", cJSON_IsString(ns) ? "/" : "",
                        name->valuestring, CJSON_NESTING_LIMIT);
        watch_event(r, "DELETED", obj);     /* removed, version advanced (or rolled back) */
    }
    jarena_delete(ev);
    jarena_release();
}

static void watch_line(refl *r, const char *line, size_t len)
{
    cJSON *ev = jarena_parse_sel(line, len, r->line_rule);
    if (!ev) {
        jarena_release();
        watch_salvage(r, line, len);
        return;
    }
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
    const char *t = cJSON_IsString(type) ? type->valuestring : "";
    if (!cJSON_IsObject(obj))
        malformed(r);
    else if (!strcmp(t, "ERROR"))
        watch_error(r, obj);
    else if (!strcmp(t, "ADDED") || !strcmp(t, "MODIFIED") || !strcmp(t, "DELETED") ||
             !strcmp(t, "BOOKMARK"))
        watch_event(r, t, obj);
    else
        malformed(r);
    jarena_delete(ev);
    jarena_release();
}

/* One complete line (without its newline) is in buf[0..len). */
static void watch_flush(refl *r)
{
    size_t n = r->len;
    while (n > 0 && (r->buf[n - 1] == '\r' || r->buf[n - 1] == ' ' || r->buf[n - 1] == '\t'))
        n--;
    if (n > 0 && !r->skipping)
        watch_line(r, r->buf, n);
    r->len = 0;
    r->skipping = 0;
}

static int watch_bytes(refl *r, const char *b, size_t len)
{
    while (len > 0) {
        if (r->relist_why || r->restart_needed)
            return -1;                      /* abort: refl_on_done goes on */
        const char *nl = memchr(b, '\n', len);
        size_t n = nl ? (size_t)(nl - b) : len;
        if (!r->skipping && r->len + n >= REFL_MAX_LINE) {
            log_warning("plugin/kubernetes: %s: watch event over 1 MiB skipped", r->resource);
            r->skipping = 1;
            r->len = 0;
        }
        if (!r->skipping) {
            if (buf_reserve(r, r->len + n + 1) < 0)
                return -1;
            memcpy(r->buf + r->len, b, n);
            r->len += n;
        }
        if (nl) {
            watch_flush(r);
            n++;
        }
        b += n;
        len -= n;
    }
    return (r->relist_why || r->restart_needed) ? -1 : 0;
}

static void watch_done(refl *r, int ok)
{
    double lasted = r->ops->now(r->ctx) - r->watch_start;
    if (r->status == 401 && r->ops->reauth)
        r->ops->reauth(r->ctx);
    if (!r->relist_why && r->status == 410)
        r->relist_why = "expired";
    else if (!r->relist_why && body_too_large(r))
        r->relist_why = "too_large";
    if (r->relist_why) {
        if (!strcmp(r->relist_why, "expired"))
            log_info("plugin/kubernetes: %s: resourceVersion %s expired; relisting", r->resource,
                     r->rv);
        else if (!strcmp(r->relist_why, "too_large"))
            log_warning("plugin/kubernetes: %s: resourceVersion %s is newer than the API "
                        "server's (storage restored?); relisting", r->resource, r->rv);
        restarted(r, r->relist_why);
        relist_later(r);
    } else if (r->restart_needed) {
        fail(r);
    } else if (ok && r->status == 200 && (r->events > 0 || lasted >= 1.0)) {
        restarted(r, "timeout");
        start_watch(r);
    } else {
        if (r->status == 200 && ok)
            log_warning("plugin/kubernetes: %s: very short watch (no event)", r->resource);
        else
            log_warning("plugin/kubernetes: watching %s failed (HTTP %ld%s)", r->resource,
                        r->status, ok ? "" : ", transfer failed");
        restarted(r, r->status == 401 ? "unauthorized" : "error");
        fail(r);
    }
}

/* ---- transport events --------------------------------------------------------------- */

void refl_on_headers(refl *r, long status, const char *retry_after)
{
    r->status = status;
    r->retry_after = parse_retry_after(retry_after);
}

/* Keep the start of a non-200 body (a Status object). */
static int status_bytes(refl *r, const char *b, size_t len)
{
    if (r->skipping || r->len + len > REFL_MAX_STATUS || buf_reserve(r, r->len + len + 1) < 0) {
        r->skipping = 1;                    /* the code alone says it is a failure */
        return 0;
    }
    memcpy(r->buf + r->len, b, len);
    r->len += len;
    return 0;
}

int refl_on_body(refl *r, const char *b, size_t len)
{
    assert(r && (b || len == 0));
    if (r->status != 200)
        return status_bytes(r, b, len);
    if (r->state == RS_WATCH)
        return watch_bytes(r, b, len);
    if (r->state != RS_LIST || buf_reserve(r, r->len + len + 1) < 0)
        return -1;
    memcpy(r->buf + r->len, b, len);
    r->len += len;
    return 0;
}

void refl_on_done(refl *r, int ok)
{
    assert(r);
    if (r->state == RS_LIST) {
        if (r->status == 401 && r->ops->reauth)
            r->ops->reauth(r->ctx);
        list_done(r, ok);
    } else if (r->state == RS_WATCH) {
        watch_done(r, ok);
    }
}

/* ---- lifecycle ---------------------------------------------------------------------- */

refl *refl_new(const char *base, const char *path, const char *selector,
               const k8s_handler *h, const refl_ops *ops, void *ctx)
{
    assert(base && path && h && ops);
    assert(h->upsert && h->remove && h->relist_begin && h->relist_end);
    assert(ops->start && ops->schedule && ops->now && ops->random);
    jarena_init();
    refl *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    const char *slash = strrchr(path, '/');
    r->base = strdup(base);
    r->path = strdup(path);
    r->resource = strdup(slash ? slash + 1 : path);
    r->selector = selector && *selector ? strdup(selector) : NULL;
    if (!r->base || !r->path || !r->resource || (selector && *selector && !r->selector)) {
        refl_free(r);
        return NULL;
    }
    r->h = *h;
    r->page_rule = jsel_page_rule(r->resource);
    r->line_rule = jsel_line_rule(r->resource);
    r->ops = ops;
    r->ctx = ctx;
    r->backoff = REFL_BACKOFF_MIN;
    r->last_fail = -1;
    r->retry_after = -1;
    atomic_init(&r->synced, 0);
    return r;
}

int refl_set_fields(refl *r, const char *field_selector)
{
    assert(r);
    free(r->fields);
    r->fields = field_selector && *field_selector ? strdup(field_selector) : NULL;
    return field_selector && *field_selector && !r->fields ? -1 : 0;
}

void refl_start(refl *r) { relist(r); }

void refl_free(refl *r)
{
    if (!r)
        return;
    free(r->base);
    free(r->path);
    free(r->resource);
    free(r->selector);
    free(r->fields);
    free(r->cont);
    free(r->buf);
    free(r);
}

int refl_synced(const refl *r) { return atomic_load(&((refl *)r)->synced); }
const char *refl_resource(const refl *r) { return r->resource; }
const char *refl_version(const refl *r) { return r->rv; }
int refl_is_watching(const refl *r) { return r->state == RS_WATCH; }
double refl_backoff(const refl *r) { return r->backoff; }
