/* SPDX-License-Identifier: Apache-2.0 */
/*
 * errors.c — the errors plugin, as CoreDNS's plugin/errors.
 *
 *   errors [stdout] {
 *       stacktrace
 *       consolidate DURATION REGEXP [warning|error|info|debug] [show_first]
 *   }
 *
 * For every query in which a plugin recorded an error (req_error(), e.g.
 * "plugin/log: no next plugin found" from plugin_next), a done hook logs
 *   [ERROR] plugin/errors: <rcode> <qname> <qtype>: <error>
 * unless the error text matches a consolidate pattern (the first matching
 * one wins). A matched error is counted; the first count of a period starts
 * the period, and when DURATION has passed a background task logs, at the
 * pattern's level, "plugin/errors: N errors like '<re>' occurred in last
 * <dur>". show_first logs the first error of a period right away (at the
 * pattern's level) and prints the summary only when more than one occurred.
 * The debug level prints nothing, as in CoreDNS without the debug plugin.
 * Stopping the instance flushes pending summaries.
 *
 * REGEXP is a Go regular expression (common/goregex: RE2, as CoreDNS's
 * regexp.Compile). `stacktrace` is accepted: topodns has no panics to
 * recover, so there is nothing to add.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wire/dname.h"
#include "common/goregex.h"
#include "common/log.h"
#include "wire/msg.h"
#include "runtime/periodic.h"
#include "common/gofmt.h"
#include "server/plugin.h"
#include "plugin/errors/errors.h"
#include "common/vec.h"

typedef struct err_pattern {
    goregex *re;
    char *src;                   /* as written, for the summary */
    int64_t period_ns;
    const char *level;           /* "WARNING", "ERROR", "INFO", NULL = debug (silent) */
    int show_first;
    _Atomic uint32_t count;
    _Atomic uint64_t deadline;   /* monotonic ns; 0 = no period running */
} err_pattern;

struct errors_inst {
    err_pattern *pats;
    size_t n;
    atomic_int stopped;
    periodic *timer;             /* logs the summaries when periods end */
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *level_of(const char *s, int *ok)
{
    *ok = 1;
    if (!s || strcmp(s, "error") == 0)
        return "ERROR";
    if (strcmp(s, "warning") == 0)
        return "WARNING";
    if (strcmp(s, "info") == 0)
        return "INFO";
    if (strcmp(s, "debug") == 0)
        return NULL;
    *ok = 0;
    return NULL;
}

errors_inst *errors_new(void)
{
    errors_inst *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    return e;
}

int errors_add_pattern(errors_inst *e, const char *re, int64_t period_ns, const char *level,
                       int show_first, char *err, size_t errlen)
{
    int ok;
    const char *lv = level_of(level, &ok);
    if (!ok) {
        snprintf(err, errlen, "unknown option in consolidate: %s", level);
        return -1;
    }
    if (VEC_RESIZE(e->pats, e->n + 1) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    err_pattern *p = &e->pats[e->n];
    memset(p, 0, sizeof *p);
    if (goregex_compile(re, &p->re, err, errlen) != GOREGEX_OK)
        return -1;
    if (!(p->src = strdup(re))) {
        goregex_free(p->re);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->period_ns = period_ns;
    p->level = lv;
    p->show_first = show_first;
    atomic_init(&p->count, 0);
    atomic_init(&p->deadline, 0);
    e->n++;
    return 0;
}

/* ---- consolidation ------------------------------------------------------------ */

static void log_summary(err_pattern *p)
{
    uint32_t cnt = atomic_exchange(&p->count, 0);
    if (cnt == 0 || (cnt == 1 && p->show_first))
        return;
    char dur[32], n[16];
    go_duration_str(p->period_ns, dur, sizeof dur);
    snprintf(n, sizeof n, "%u", cnt);
    if (p->level)
        log_msg(p->level, "plugin/errors: %s errors like '%s' occurred in last %s", n, p->src, dur);
}

/* 1 when the error was counted and must not be logged now. */
static int consolidate(errors_inst *e, err_pattern *p)
{
    if (atomic_load(&e->stopped))
        return 0;
    uint32_t cnt = atomic_fetch_add(&p->count, 1) + 1;
    if (cnt != 1)
        return 1;
    uint64_t when = mono_ns() + (uint64_t)(p->period_ns > 0 ? p->period_ns : 0);
    atomic_store(&p->deadline, when ? when : 1);
    if (e->timer)
        periodic_kick(e->timer);
    return !p->show_first;
}

void errors_report(errors_inst *e, int rcode, const char *qname, const char *qtype,
                   const char *text)
{
    const char *level = "ERROR";
    for (size_t i = 0; i < e->n; i++) {
        err_pattern *p = &e->pats[i];
        if (!goregex_match(p->re, text, NULL, 0))
            continue;
        if (consolidate(e, p))
            return;
        level = p->level;
        break;
    }
    if (level)
        log_msg(level, "plugin/errors: %d %s %s: %s", rcode, qname, qtype, text);
}

uint32_t errors_pattern_count(errors_inst *e, size_t i)
{
    return i < e->n ? atomic_load(&e->pats[i].count) : 0;
}

/* Log every pattern whose period has ended; returns the next deadline. */
static uint64_t fire_due(errors_inst *e, uint64_t now)
{
    uint64_t next = 0;
    for (size_t i = 0; i < e->n; i++) {
        err_pattern *p = &e->pats[i];
        uint64_t d = atomic_load(&p->deadline);
        if (d && d <= now && atomic_compare_exchange_strong(&p->deadline, &d, 0)) {
            log_summary(p);
            continue;
        }
        if (d && (next == 0 || d < next))
            next = d;
    }
    return next;
}

/* The timer task: log the summaries that are due, sleep until the next
 * deadline (or until a new period starts and kicks it). */
static double timer_run(void *arg)
{
    uint64_t now = mono_ns(), next = fire_due(arg, now);
    return next == 0 ? -1 : (double)(next > now ? next - now : 0) / 1e9;
}

int errors_start_timer(errors_inst *e)
{
    if (e->n == 0 || e->timer)
        return 0;
    e->timer = periodic_start(timer_run, e, 0, 0);
    return e->timer ? 0 : -1;
}

void errors_stop(errors_inst *e)
{
    if (!e)
        return;
    atomic_store(&e->stopped, 1);
    periodic_stop(e->timer);
    e->timer = NULL;
    for (size_t i = 0; i < e->n; i++)         /* flush what is pending */
        if (atomic_exchange(&e->pats[i].deadline, 0))
            log_summary(&e->pats[i]);
}

void errors_free(errors_inst *e)
{
    if (!e)
        return;
    errors_stop(e);
    for (size_t i = 0; i < e->n; i++) {
        goregex_free(e->pats[i].re);
        free(e->pats[i].src);
    }
    free(e->pats);
    free(e);
}

/* ---- setup -------------------------------------------------------------------- */

/* consolidate DURATION REGEXP [LEVEL] [show_first] */
static int parse_consolidate(cf_disp *d, errors_inst *e)
{
    const char *a[5];
    int n = cf_remaining_args(d, a, 5);
    if (n < 2 || n > 4)
        return cf_arg_err(d);
    char err[512];
    int64_t ns;
    if (cf_go_duration(a[0], &ns, err, sizeof err) < 0)
        return cf_err(d, "plugin/errors: %s", err);
    if (strlen(a[1]) > GOREGEX_MAX_LEN)
        return cf_err(d, "plugin/errors: regex pattern too long: %zu > %d", strlen(a[1]),
                      GOREGEX_MAX_LEN);
    const char *level = NULL;
    int show_first = 0;
    for (int i = 2; i < n; i++) {
        int ok;
        level_of(a[i], &ok);
        if (ok && level)
            return cf_err(d, "plugin/errors: multiple log levels specified in consolidate");
        if (ok && show_first)
            return cf_err(d, "plugin/errors: log level must come before show_first in consolidate");
        if (ok)
            level = a[i];
        else if (strcmp(a[i], "show_first") == 0)
            show_first = 1;
        else
            return cf_err(d, "plugin/errors: unknown option in consolidate: %s", a[i]);
    }
    if (errors_add_pattern(e, a[1], ns, level, show_first, err, sizeof err) < 0)
        return cf_err(d, "plugin/errors: %s", err);
    return 0;
}

static int parse_occurrence(cf_disp *d, errors_inst *e)
{
    const char *a[2];
    int n = cf_remaining_args(d, a, 2);
    if (n == 1 && strcmp(a[0], "stdout") != 0)
        return cf_err(d, "plugin/errors: invalid log file: %s", a[0]);
    if (n > 1)
        return cf_arg_err(d);
    while (cf_next_block(d)) {
        const char *v = cf_val(d);
        if (strcmp(v, "stacktrace") == 0)
            continue;
        if (strcmp(v, "consolidate") == 0) {
            if (parse_consolidate(d, e) < 0)
                return -1;
            continue;
        }
        return cf_err(d, "plugin/errors: Syntax error: Unexpected token '%s', expecting "
                      "'Unknown field %s'", v, v);
    }
    return 0;
}

static void errors_destroy(void *p) { errors_free(p); }

static int errors_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    errors_inst *e = errors_new();
    if (!e)
        return cf_err(d, "plugin/errors: out of memory");
    while (cf_next(d)) {
        if (parse_occurrence(d, e) < 0) {
            errors_free(e);
            return -1;
        }
    }
    *inst = e;
    return 0;
}

static int errors_plugin_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    if (errors_start_timer(inst) < 0) {
        snprintf(err, errlen, "plugin/errors: cannot start the consolidation timer");
        return -1;
    }
    return 0;
}

static void errors_plugin_stop(void *inst) { errors_stop(inst); }

/* ---- serving ------------------------------------------------------------------- */

static void errors_done(dns_req *r, int rcode, void *data)
{
    if (!r->err[0])
        return;
    char name[DNAME_STR_MAX] = ".", type[16] = "";
    if (r->q.has_question) {
        dname_to_str(name, sizeof name, r->q.qname);
        for (char *p = name; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        rr_type_name(r->q.qtype, type);
    }
    errors_report(data, rcode, name, type, r->err);
}

static int errors_serve(const handler *h, dns_req *r)
{
    req_on_done(r, errors_done, h->inst);
    return plugin_next(h, r);
}

const plugin_def plugin_errors = {
    .name = "errors",
    .flags = PLUGIN_ONCE,
    .setup = errors_setup,
    .start = errors_plugin_start,
    .stop = errors_plugin_stop,
    .destroy = errors_destroy,
    .serve = errors_serve,
};
