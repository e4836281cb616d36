/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer — outgoing zone transfers (CoreDNS's transfer plugin): AXFR, and
 * IXFR answered as AXFR (no journal) or with the SOA alone when the client
 * is up to date.
 *
 *   transfer [ZONE...] {
 *       to ADDRESS...              # "*" or IP[:port], several times
 *       source ADDRESS             # accepted, see README (no NOTIFY)
 *   }
 *
 * Several `transfer` lines may share a block; a query takes the one whose
 * zone is the longest match of its name (the first on a tie).
 *
 * Serving, in CoreDNS's order: a question other than AXFR/IXFR goes to the
 * next plugin; over UDP (or an internal request) REFUSED; a name in no
 * transfer zone goes on; a client not listed in `to` gets a REFUSED reply
 * written here; an IXFR without exactly one SOA in its authority section
 * gets SERVFAIL. Otherwise the block's zone sources (src/server/transfer.h:
 * the kubernetes and file plugins publish theirs at setup; start() collects
 * them in chain order) are asked in turn for the zone named by the
 * question; the first that has it streams its records into sink_emit(),
 * which fills one message at a time (AA, the records in the answer
 * section) and sends it when the next record would take it past
 * XFR_BATCH octets (CoreDNS's 63000, counted as uncompressed records):
 * the first with req_write(), the others with req_write_more() on the
 * same TCP connection. No source has the zone: the next plugin answers
 * (kubernetes and file refuse AXFR themselves).
 *
 * A resumable source (open/next/close: kubernetes, file) is driven a
 * message at a time, at the pace the client reads: serve() runs next()
 * once; when the zone did not fit in the messages sent by then, the
 * request goes REQ_ASYNC and waits for room on its connection
 * (req_when_writable: at most REQ_OUTPUT_LOW octets queued); each time
 * there is, run_turn() runs next() again, for one more message, until the
 * closing SOA went out; then req_finish(). So the worker produces one
 * message per loop turn at most, serving whatever else is ready in
 * between, and a client that reads slowly or not at all holds about
 * REQ_OUTPUT_LOW octets plus one message of queued output, not the zone.
 * A source without open() (k8s_external) is walked whole in serve(), its
 * messages all queued at once. Everything is produced on the worker from
 * memory (the cluster store or a loaded zone): it never waits. A source
 * stops early when a message cannot be queued or the connection closed
 * (the client has gone, or stopped reading for `timeouts write`, or the
 * worker stops).
 *
 * Memory: the instance (rules, the source pointers, which point into the
 * block's named values) is made at setup and freed at destroy; a transfer
 * uses the request's reply message, and a resumed one an xrun (its cursor
 * and sink), owned by the wait of its request: freed, with the cursor
 * closed, by the turn that ends it — the last message, or the wait's
 * callback with ok 0 when the connection closed, which the server makes
 * for every wait, also when the worker stops.
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "common/addr.h"
#include "common/log.h"
#include "server/plugin.h"
#include "server/server.h"
#include "server/transfer.h"
#include "server/zone.h"
#include "wire/dname.h"
#include "common/vec.h"

#define XFR_BATCH 63000
#define MAX_ARGS 64

typedef struct xaddr {
    int family;                      /* AF_INET, AF_INET6 */
    uint8_t addr[16];
} xaddr;

typedef struct xrule {
    uint8_t (*zones)[DNAME_MAX];
    size_t nzones;
    int any;                         /* to * */
    xaddr *to;
    size_t nto;
    int has_source;
} xrule;

typedef struct xfr_inst {
    xrule *rules;
    size_t nrules;
    server_block *blk;
    const xfr_source **sources;      /* chain order, found at start */
    size_t nsources;
} xfr_inst;

/* ---- addresses ----------------------------------------------------------- */

/* An IP, optionally with a zone ("fe80::1%eth0", the zone ignored, as
 * CoreDNS strips it). */
static int parse_ip(const char *s, size_t len, xaddr *out)
{
    return addr_parse_bytes(s, len, ADDR_ZONE, &out->family, out->addr);
}

/* What CoreDNS's parse.HostPort accepts: an IP, IPv4:port or [IPv6]:port
 * (the port is not used to decide who may transfer). */
static int xfr_parse_to(const char *s, xaddr *out)
{
    if (parse_ip(s, strlen(s), out) == 0)
        return 0;
    if (s[0] == '[') {
        const char *end = strstr(s, "]:");
        return end ? parse_ip(s + 1, (size_t)(end - s - 1), out) : -1;
    }
    const char *colon = strchr(s, ':');
    if (!colon || strchr(colon + 1, ':'))
        return -1;
    return parse_ip(s, (size_t)(colon - s), out) == 0 && out->family == AF_INET ? 0 : -1;
}

static int client_allowed(const xrule *x, const dns_req *r)
{
    if (x->any)
        return 1;
    xaddr c = { 0 };
    if (r->peer.ss_family == AF_INET6) {
        c.family = AF_INET6;
        memcpy(c.addr, &((const struct sockaddr_in6 *)&r->peer)->sin6_addr, 16);
    } else {
        c.family = AF_INET;
        memcpy(c.addr, &((const struct sockaddr_in *)&r->peer)->sin_addr, 4);
    }
    size_t n = c.family == AF_INET ? 4 : 16;
    for (size_t i = 0; i < x->nto; i++)
        if (x->to[i].family == c.family && !memcmp(x->to[i].addr, c.addr, n))
            return 1;
    return 0;
}

/* The rule whose zone is the longest match of name (first on a tie). */
static const xrule *longest_match(const xfr_inst *x, const uint8_t *name)
{
    const xrule *best = NULL;
    int bestl = -1;
    for (size_t i = 0; i < x->nrules; i++)
        for (size_t j = 0; j < x->rules[i].nzones; j++) {
            int l = dname_labels(x->rules[i].zones[j]);
            if (l > bestl && dname_is_sub(name, x->rules[i].zones[j])) {
                best = &x->rules[i];
                bestl = l;
            }
        }
    return best;
}

/* ---- the sink: records into messages ------------------------------------------ */

typedef struct xsink {
    dns_req *r;
    const handler *h;
    size_t batch;                    /* octets of the records in the message */
    unsigned inmsg;                  /* records in the message being filled */
    size_t total;                    /* records emitted */
    int sent;                        /* a message went out */
    int have_soa;
    uint32_t serial;                 /* of the first SOA */
} xsink;

/* Send the message filled so far. It stays in r->resp until the next
 * record starts a new one, so that the last message is what the log and
 * metrics plugins see, as CoreDNS's recorder keeps the last message. */
static int sink_flush(xsink *s)
{
    dns_req *r = s->r;
    r->resp.flags |= F_AA;
    int rc = 0;
    if (s->sent)
        rc = req_write_more(r);
    else
        req_write(r, s->h);
    s->sent = 1;
    s->batch = 0;
    s->inmsg = 0;
    return rc;
}

static int sink_emit(void *arg, const dns_rr *rr)
{
    xsink *s = arg;
    size_t len = dname_len(rr->owner) + 10 + rr->rdlen;
    int sent = s->inmsg > 0 && s->batch + len > XFR_BATCH;
    if (sent && sink_flush(s) < 0)
        return -1;
    if (s->inmsg == 0)
        msg_reply_to(&s->r->resp, &s->r->q);
    if (msg_add_rr(&s->r->resp, SEC_ANSWER, rr->owner, rr->type, rr->rclass, rr->ttl,
                   rr->rdata, rr->rdlen) < 0)
        return -1;
    if (!s->have_soa && rr->type == T_SOA && rr->rdlen >= 20) {
        const uint8_t *p = rr->rdata + rr->rdlen - 20;
        s->serial = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        s->have_soa = 1;
    }
    s->batch += len;
    s->inmsg++;
    s->total++;
    return sent ? XFR_YIELD : 0;   /* a message went out: a resumable source pauses */
}

/* ---- serving ---------------------------------------------------------------- */

/* The serial of an IXFR's authority SOA; -1 when the query has not exactly
 * one record there, or it is no SOA. */
static int64_t ixfr_serial(const dns_req *r)
{
    if (msg_count(&r->q, SEC_AUTHORITY) != 1)
        return -1;
    dns_rr rr = msg_rr(&r->q, SEC_AUTHORITY, 0);
    if (rr.type != T_SOA || rr.rdlen < 20)
        return -1;
    const uint8_t *p = rr.rdata + rr.rdlen - 20;
    return (int64_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

static void log_transfer(const dns_req *r, const xsink *s, int noop)
{
    char zone[DNAME_STR_MAX], ip[64];
    dname_to_str(zone, sizeof zone, r->q.qname);
    req_peer_str(r, ip, sizeof ip, NULL);
    if (noop)
        log_info("plugin/transfer: Outgoing noop, incremental transfer for up to date zone "
                 "\"%s\" to %s for %u SOA serial", zone, ip, s->serial);
    else
        log_info("plugin/transfer: Outgoing transfer of %zu records of zone \"%s\" to %s "
                 "for %u SOA serial", s->total, zone, ip, s->serial);
}

/* Send what the source produced: the SOA alone (an up-to-date IXFR) as one
 * message without AA, as CoreDNS does; else the last message. */
static int finish_transfer(xsink *s, int rc)
{
    dns_req *r = s->r;
    if ((rc == XFR_FAIL || s->total == 0) && !s->sent) {
        req_error(r, "transfer", "plugin/transfer: zone could not be read");
        return RC_SERVFAIL;
    }
    if (rc == XFR_FAIL) {           /* the client went away: for the errors plugin */
        req_error(r, "transfer", "plugin/transfer: transfer stopped after %zu records",
                  s->total);
        return RC_SERVFAIL;
    }
    if (!s->sent && s->total == 1 && s->have_soa) {
        log_transfer(r, s, 1);
        return req_write(r, s->h);
    }
    if (s->inmsg > 0)
        sink_flush(s);
    log_transfer(r, s, 0);
    return RC_NOERROR;
}

/* ---- resumed transfers ---------------------------------------------------------- */

typedef struct xrun {
    const xfr_source *src;
    void *cur;
    xsink s;
} xrun;

/* One message (or the end) of a resumed transfer: its connection has room
 * (ok), or has closed. */
static void run_turn(dns_req *r, int ok, void *arg)
{
    xrun *t = arg;
    assert(t->s.r == r);
    int rc = ok ? t->src->next(t->cur, sink_emit, &t->s) : XFR_FAIL;
    if (rc == XFR_MORE && req_when_writable(r, run_turn, t) == 0)
        return;
    t->src->close(t->cur);
    int rcode = finish_transfer(&t->s, rc == XFR_MORE ? XFR_FAIL : rc);
    free(t);
    req_finish(r, rcode);
}

/* A resumable source: the first message now; the rest, if any, as the
 * client makes room for them (REQ_ASYNC). Else what the source's walk()
 * would return. */
static int resumable(const xfr_source *src, const uint8_t *zone, uint32_t serial, xsink *s)
{
    void *cur = NULL;
    int rc = src->open(src->data, zone, serial, &cur);
    if (rc != XFR_OK)
        return rc;
    assert(cur);
    rc = src->next(cur, sink_emit, s);
    xrun *t = rc == XFR_MORE ? malloc(sizeof *t) : NULL;
    if (t) {
        *t = (xrun){ .src = src, .cur = cur, .s = *s };
        if (req_when_writable(s->r, run_turn, t) == 0)
            return REQ_ASYNC;
        free(t);
    }
    src->close(cur);
    return rc == XFR_MORE ? XFR_FAIL : rc;
}

static int xfr_serve(const handler *h, dns_req *r)
{
    xfr_inst *x = h->inst;
    if (r->q.qtype != T_AXFR && r->q.qtype != T_IXFR)
        return plugin_next(h, r);
    if (r->proto != PROTO_TCP)
        return RC_REFUSED;
    const xrule *rule = longest_match(x, r->q.qname);
    if (!rule)
        return plugin_next(h, r);
    msg_reply_to(&r->resp, &r->q);
    if (!client_allowed(rule, r)) {
        r->resp.rcode = RC_REFUSED;
        return req_write(r, h);
    }
    int64_t serial = 0;
    if (r->q.qtype == T_IXFR && (serial = ixfr_serial(r)) < 0)
        return RC_SERVFAIL;
    uint8_t zone[DNAME_MAX];
    memcpy(zone, r->q.qname, dname_len(r->q.qname));
    dname_lower(zone);
    for (size_t i = 0; i < x->nsources; i++) {
        const xfr_source *src = x->sources[i];
        xsink s = { .r = r, .h = h };
        int rc = src->open ? resumable(src, zone, (uint32_t)serial, &s)
                           : src->walk(src->data, zone, (uint32_t)serial, sink_emit, &s);
        if (rc == REQ_ASYNC)
            return REQ_ASYNC;
        if (rc != XFR_NOTAUTH)
            return finish_transfer(&s, rc);
        msg_reply_to(&r->resp, &r->q);
    }
    return plugin_next(h, r);
}

/* ---- setup --------------------------------------------------------------------- */

static void rule_free(xrule *x)
{
    free(x->zones);
    free(x->to);
}

static void xfr_destroy(void *inst)
{
    xfr_inst *x = inst;
    if (!x)
        return;
    for (size_t i = 0; i < x->nrules; i++)
        rule_free(&x->rules[i]);
    free(x->rules);
    free(x->sources);
    free(x);
}

static int add_zone(cf_disp *d, xrule *x, const char *text)
{
    char (*z)[DNAME_STR_MAX];
    int m = zone_from_key(text, &z);
    if (m < 0)
        return cf_err(d, "plugin/transfer: %s '%s'", zone_key_error(text), text);
    if (VEC_RESIZE(x->zones, x->nzones + (size_t)m) < 0) {
        free(z);
        return cf_err(d, "plugin/transfer: out of memory");
    }
    for (int i = 0; i < m; i++)
        if (dname_from_str(x->zones[x->nzones], z[i]) > 0)
            dname_lower(x->zones[x->nzones++]);
    free(z);
    return 0;
}

/* The zones of one occurrence: its arguments, else the block's keys. */
static int rule_zones(cf_disp *d, setup_ctx *ctx, xrule *x)
{
    const char *args[MAX_ARGS];
    int n = cf_remaining_args(d, args, MAX_ARGS);
    if (n > MAX_ARGS)
        return cf_arg_err(d);
    for (int i = 0; i < n; i++)
        if (add_zone(d, x, args[i]) < 0)
            return -1;
    for (size_t i = 0; n == 0 && ctx->blk && i < ctx->blk->nkeys; i++)
        if (add_zone(d, x, ctx->blk->keys[i].zone) < 0)
            return -1;
    return 0;
}

static int rule_to(cf_disp *d, xrule *x)
{
    const char *args[MAX_ARGS];
    int n = cf_remaining_args(d, args, MAX_ARGS);
    if (n == 0 || n > MAX_ARGS)
        return cf_arg_err(d);
    if (VEC_RESIZE(x->to, x->nto + (size_t)n) < 0)
        return cf_err(d, "plugin/transfer: out of memory");
    for (int i = 0; i < n; i++) {
        if (strcmp(args[i], "*") == 0)
            x->any = 1;
        else if (xfr_parse_to(args[i], &x->to[x->nto]) == 0)
            x->nto++;
        else
            return cf_err(d, "plugin/transfer: must specify an IP address: `%s'", args[i]);
    }
    return 0;
}

static int rule_source(cf_disp *d, xrule *x)
{
    const char *args[2];
    xaddr a;
    if (cf_remaining_args(d, args, 2) != 1)
        return cf_arg_err(d);
    if (x->has_source)
        return cf_err(d, "plugin/transfer: source already specified");
    if (parse_ip(args[0], strlen(args[0]), &a) < 0)
        return cf_err(d, "plugin/transfer: invalid source address \"%s\"", args[0]);
    x->has_source = 1;
    return 0;
}

static int one_rule(cf_disp *d, setup_ctx *ctx, xrule *x)
{
    if (rule_zones(d, ctx, x) < 0)
        return -1;
    while (cf_next_block(d)) {
        const char *p = cf_val(d);
        int rc = !strcmp(p, "to") ? rule_to(d, x) :
                 !strcmp(p, "source") ? rule_source(d, x) :
                 cf_err(d, "plugin/transfer: unknown property \"%s\"", p);
        if (rc < 0)
            return -1;
    }
    if (!x->any && x->nto == 0)
        return cf_err(d, "plugin/transfer: 'to' is required");
    return 0;
}

static int xfr_setup(cf_disp *d, setup_ctx *ctx, void **inst)
{
    xfr_inst *x = calloc(1, sizeof *x);
    if (!x)
        return cf_err(d, "plugin/transfer: out of memory");
    x->blk = ctx->blk;
    while (cf_next(d)) {
        if (VEC_RESIZE(x->rules, x->nrules + 1) < 0) {
            xfr_destroy(x);
            return cf_err(d, "plugin/transfer: out of memory");
        }
        memset(&x->rules[x->nrules], 0, sizeof *x->rules);
        if (one_rule(d, ctx, &x->rules[x->nrules++]) < 0) {
            xfr_destroy(x);
            return -1;
        }
    }
    *inst = x;
    return 0;
}

/* Every plugin of the block that published a zone source, in chain order
 * (the sources were published at setup, which ran for the whole block). */
static int xfr_start(void *inst, struct instance *ins, char *err, size_t errlen)
{
    (void)ins;
    xfr_inst *x = inst;
    server_block *b = x->blk;
    free(x->sources);
    x->sources = NULL;
    x->nsources = 0;
    if (!b || b->nhandlers == 0)
        return 0;
    if (!(x->sources = calloc(b->nhandlers, sizeof *x->sources))) {
        snprintf(err, errlen, "plugin/transfer: out of memory");
        return -1;
    }
    for (size_t i = 0; i < b->nhandlers; i++) {
        const xfr_source *s = xfr_source_find(b, b->handlers[i].def->name);
        if (s)
            x->sources[x->nsources++] = s;
    }
    return 0;
}

const plugin_def plugin_transfer = {
    .name = "transfer",
    .flags = 0,
    .setup = xfr_setup,
    .start = xfr_start,
    .destroy = xfr_destroy,
    .serve = xfr_serve,
};
