/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ready — readiness endpoint (CoreDNS's ready plugin).
 *
 *   ready [ADDRESS] { monitor until-ready|continuously }
 *
 * start() routes /ready on ADDRESS (default ":8181") through http.c. A
 * request asks every plugin instance of every server block that enables
 * ready, and whose plugin_def has a ready() callback, whether it is ready:
 * 200 "OK" when all are, else 503 with the names of those that are not,
 * sorted, without duplicates and comma-separated ("kubernetes"). With
 * `monitor until-ready` (the default) an instance that answered ready once is
 * not asked again; `continuously` asks every time. Once shutdown has begun
 * (lameduck, http_set_draining) the answer is 503 "Shutting down".
 *
 * Blocks that enable ready on the same address share one listener; the
 * handler of the first registration serves them all, walking the whole
 * instance. Handlers run on the HTTP thread only, so the "was ready" memory
 * needs no lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include "server/plugin.h"
#include "server/http.h"
#include "common/log.h"
#include "server/server.h"
#include "common/vec.h"

#define DEFAULT_ADDR ":8181"
#define MAX_HANDLERS 1024

extern const plugin_def plugin_ready;

typedef struct ready {
    char addr[256];
    int continuously;
    struct instance *ins;
    const handler **seen;           /* instances that were ready once */
    size_t nseen, capseen;
} ready;

static int was_ready(const ready *rd, const handler *h)
{
    for (size_t i = 0; i < rd->nseen; i++)
        if (rd->seen[i] == h)
            return 1;
    return 0;
}

static void remember(ready *rd, const handler *h)
{
    if (VEC_RESERVE_FROM(rd->seen, rd->capseen, rd->nseen + 1, 16) < 0)
        return;
    rd->seen[rd->nseen++] = h;
}

static int block_has_ready(const server_block *b)
{
    for (size_t i = 0; i < b->nhandlers; i++)
        if (b->handlers[i].def == &plugin_ready)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Names of the instances that are not ready, sorted and unique. */
static size_t not_ready(ready *rd, const char **names, size_t max)
{
    size_t n = 0;
    for (size_t bi = 0; bi < instance_nblocks(rd->ins); bi++) {
        server_block *b = instance_block(rd->ins, bi);
        if (!block_has_ready(b))
            continue;
        for (size_t i = 0; i < b->nhandlers; i++) {
            const handler *h = &b->handlers[i];
            if (!h->def->ready || (!rd->continuously && was_ready(rd, h)))
                continue;
            if (h->def->ready(h->inst)) {
                if (!rd->continuously)
                    remember(rd, h);
            } else if (n < max) {
                names[n++] = h->def->name;
            }
        }
    }
    qsort(names, n, sizeof *names, cmp_str);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || strcmp(names[u - 1], names[i]) != 0)
            names[u++] = names[i];
    return u;
}

static void reply(struct evhttp_request *req, int code, const char *reason, const char *body)
{
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 500, "Internal Server Error");
        return;
    }
    evbuffer_add(b, body, strlen(body));
    evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type",
                      "text/plain; charset=utf-8");
    evhttp_send_reply(req, code, reason, b);
    evbuffer_free(b);
}

static void ready_http(struct evhttp_request *req, void *data)
{
    ready *rd = data;
    if (http_draining(rd->ins)) {
        reply(req, 503, "Service Unavailable", "Shutting down");
        return;
    }
    const char *names[MAX_HANDLERS];
    size_t n = not_ready(rd, names, MAX_HANDLERS);
    if (n == 0) {
        reply(req, 200, "OK", "OK");
        return;
    }
    char list[4096];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? "," : "", names[i]);
    log_info("plugin/ready: Plugins not ready: \"%s\"", list);
    reply(req, 503, "Service Unavailable", list);
}

static int parse_block(cf_disp *d, int *continuously)
{
    while (cf_next_block(d)) {
        if (strcmp(cf_val(d), "monitor") != 0)
            return cf_prop_err(d);
        const char *args[2];
        if (cf_remaining_args(d, args, 2) != 1)
            return cf_arg_err(d);
        if (strcmp(args[0], "until-ready") == 0)
            *continuously = 0;
        else if (strcmp(args[0], "continuously") == 0)
            *continuously = 1;
        else
            return cf_err(d, "plugin/ready: monitor type '%s' not supported", args[0]);
    }
    return 0;
}

static int ready_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    (void)ctx;
    char addr[256];
    int continuously = 0;
    snprintf(addr, sizeof addr, "%s", DEFAULT_ADDR);
    while (cf_next(d)) {
        if (http_addr_arg(d, "ready", addr, sizeof addr) < 0)
            return -1;
        if (parse_block(d, &continuously) < 0)
            return -1;
    }
    ready *rd = calloc(1, sizeof *rd);
    if (!rd)
        return cf_err(d, "plugin/ready: out of memory");
    snprintf(rd->addr, sizeof rd->addr, "%s", addr);
    rd->continuously = continuously;
    *inst = rd;
    return 0;
}

static int ready_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    ready *rd = inst;
    rd->ins = ins;
    rd->nseen = 0;
    return http_register(ins, rd->addr, "/ready", ready_http, rd, err, errlen);
}

static void ready_destroy(void *inst)
{
    ready *rd = inst;
    if (!rd)
        return;
    free(rd->seen);
    free(rd);
}

const plugin_def plugin_ready = {
    .name = "ready",
    .flags = PLUGIN_ONCE,
    .setup = ready_setup,
    .start = ready_start,
    .destroy = ready_destroy,
};
