/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c — the log plugin: one INFO line per query, as CoreDNS's plugin/log.
 *
 *   log [NAMES...] [FORMAT] { class success|denial|error|all ... }
 *
 * Every occurrence adds one rule per name (default "."); all rules of an
 * occurrence share its format and classes. With one argument it is a name;
 * with more, the last one is the format when it contains '{'. A query is
 * logged by the first rule (in Corefile order) whose name is the qname or a
 * parent of it; the other rules are not consulted, as in CoreDNS.
 *
 * serve() only picks the rule and registers a req_on_done hook before passing
 * the query on; the hook runs once the reply is out (or the server answered
 * with a bare error because the chain returned SERVFAIL/REFUSED/... without
 * writing), classifies the reply, renders the format (replacer.c) and writes
 * "[INFO] <line>" with one write(2).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "wire/dname.h"
#include "common/log.h"
#include "server/plugin.h"
#include "plugin/log/replacer.h"
#include "common/vec.h"

#define LOG_MAX_ARGS 256
#define LOG_LINE_MAX 4000

typedef struct log_rule {
    uint8_t zone[DNAME_MAX];
    log_format *fmt;
    unsigned classes;            /* bit (1 << LOG_CLASS_*) */
} log_rule;

typedef struct log_inst {
    log_rule *rules;
    size_t n;
} log_inst;

static void log_destroy(void *p)
{
    log_inst *li = p;
    if (!li)
        return;
    for (size_t i = 0; i < li->n; i++)
        logfmt_free(li->rules[i].fmt);
    free(li->rules);
    free(li);
}

/* ---- setup ---------------------------------------------------------------- */

static int add_rule(cf_disp *d, log_inst *li, const char *name, const char *fmt)
{
    if (VEC_RESIZE(li->rules, li->n + 1) < 0)
        return cf_err(d, "plugin/log: out of memory");
    log_rule *r = &li->rules[li->n];
    memset(r, 0, sizeof *r);
    if (dname_from_str(r->zone, name) < 0)
        return cf_err(d, "plugin/log: invalid name '%s'", name);
    r->fmt = logfmt_compile(fmt);
    if (!r->fmt)
        return cf_err(d, "plugin/log: out of memory");
    li->n++;
    return 0;
}

/* The arguments of one occurrence: names and maybe a format. */
static int parse_args(cf_disp *d, log_inst *li)
{
    const char *args[LOG_MAX_ARGS];
    int n = cf_remaining_args(d, args, LOG_MAX_ARGS);
    if (n > LOG_MAX_ARGS)
        return cf_err(d, "plugin/log: too many arguments");
    if (n == 0)
        return add_rule(d, li, ".", LOG_COMMON_FORMAT);
    if (n == 1)                      /* a lone argument is always a name */
        return add_rule(d, li, args[0], LOG_COMMON_FORMAT);
    const char *fmt = LOG_COMMON_FORMAT;
    if (strchr(args[n - 1], '{'))
        fmt = args[--n];
    for (int i = 0; i < n; i++)
        if (add_rule(d, li, args[i], fmt) < 0)
            return -1;
    return 0;
}

/* class CLASSES... lines of the block; returns the class bits. */
static int parse_block(cf_disp *d, unsigned *classes)
{
    *classes = 0;
    while (cf_next_block(d)) {
        if (strcmp(cf_val(d), "class") != 0)
            return cf_err(d, "plugin/log: unknown property '%s'", cf_val(d));
        const char *args[LOG_MAX_ARGS];
        int n = cf_remaining_args(d, args, LOG_MAX_ARGS);
        if (n == 0)
            return cf_arg_err(d);
        for (int i = 0; i < n && i < LOG_MAX_ARGS; i++) {
            int c = log_class_from_str(args[i]);
            if (c < 0)
                return cf_err(d, "plugin/log: invalid Class: %s", args[i]);
            *classes |= 1u << c;
        }
    }
    if (*classes == 0)
        *classes = 1u << LOG_CLASS_ALL;
    return 0;
}

static int log_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    log_inst *li = calloc(1, sizeof *li);
    if (!li)
        return cf_err(d, "plugin/log: out of memory");
    while (cf_next(d)) {
        size_t first = li->n;
        unsigned classes;
        if (parse_args(d, li) < 0 || parse_block(d, &classes) < 0) {
            log_destroy(li);
            return -1;
        }
        for (size_t i = first; i < li->n; i++)
            li->rules[i].classes = classes;
    }
    *inst = li;
    return 0;
}

/* ---- serving --------------------------------------------------------------- */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The reply's type: OTHERERROR when nothing was written (CoreDNS types a
 * missing reply so). */
static int reply_type(const dns_req *r)
{
    return r->written ? log_typify(&r->resp, time(NULL)) : LOG_TYPE_OTHERERROR;
}

/* {/log/type} and {/log/class}: the metadata the log plugin provides. */
static const char *meta_type(const dns_req *r, const char *key, const void *data, char *buf,
                             size_t cap)
{
    (void)key, (void)data;
    snprintf(buf, cap, "%s", log_type_name(reply_type(r)));
    return buf;
}

static const char *meta_class(const dns_req *r, const char *key, const void *data, char *buf,
                              size_t cap)
{
    (void)key, (void)data;
    snprintf(buf, cap, "%s", log_class_name(log_class_of(reply_type(r))));
    return buf;
}

static void log_done(dns_req *r, int rcode, void *data)
{
    const log_rule *rule = data;
    (void)rcode;
    req_meta_set(r, "log/type", meta_type, NULL);      /* only with metadata on */
    req_meta_set(r, "log/class", meta_class, NULL);
    if (!(rule->classes & (1u << LOG_CLASS_ALL))) {
        int c = log_class_of(reply_type(r));
        if (!(rule->classes & (1u << c)))
            return;
    }
    char line[LOG_LINE_MAX];
    logfmt_render(rule->fmt, r, mono_ns(), line, sizeof line);
    log_msg("INFO", "%s", line);
}

static int log_serve(const handler *h, dns_req *r)
{
    const log_inst *li = h->inst;
    for (size_t i = 0; i < li->n; i++) {
        if (!dname_is_sub(r->q.qname, li->rules[i].zone))
            continue;
        req_on_done(r, log_done, &li->rules[i]);
        break;
    }
    return plugin_next(h, r);
}

const plugin_def plugin_log = {
    .name = "log",
    .setup = log_setup,
    .destroy = log_destroy,
    .serve = log_serve,
};
