/* SPDX-License-Identifier: Apache-2.0 */
/*
 * request.c — the life of one query: from parsed packet to reply.
 *
 *   req_alloc/release    requests from and back to the worker's pool
 *   plugin_next          walk the chain (handlers call it to pass a query on)
 *   req_write            a handler answers: hooks, EDNS echo, size limit, send
 *   req_write_more       more messages for the same request (TCP: transfers)
 *   req_when_writable    ... each when the connection has room (the transport's)
 *   req_finish           the chain is done: bare error reply if nobody wrote,
 *                        done hooks (log, metrics), back to the pool
 *   req_reply_wire, req_free
 *                        an internal request's reply, and its end
 *
 * A packet reaches a chain through dispatch.c; requests without a socket
 * are made in internal.c. Replies and the end of a request go back to the
 * transport through f->ops (core.h), never by name.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <event2/event.h>
#include "server/core.h"
#include "common/log.h"

#define POOL_MAX 256

uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- allocation ------------------------------------------------------- */

req_full *req_alloc(worker *w)
{
    req_full *f;
    if (w && w->pool) {
        f = w->pool;
        assert(f->pooled && w->npool > 0);
        w->pool = f->next_free;
        w->npool--;
        f->pooled = 0;
        f->next_free = NULL;
    } else {
        f = calloc(1, sizeof *f);
        if (!f)
            return NULL;
        msg_init(&f->r.q);
        msg_init(&f->r.resp);
    }
    f->r.worker = w;
    f->r.transport = f;
    f->base = w ? w->base : NULL;
    return f;
}

void req_clear(req_full *f)
{
    dns_req *r = &f->r;
    msg_reset(&r->q);
    msg_reset(&r->resp);
    r->raw = NULL;
    r->rawlen = 0;
    r->rawlen_in = 0;
    r->block = NULL;
    r->zone = NULL;
    r->view = NULL;
    r->server = NULL;
    r->written = 0;
    r->noreply = 0;
    r->writer = NULL;
    r->resp_size = 0;
    r->nsent = 0;
    r->nwrite = r->ndone = 0;
    r->err[0] = '\0';
    r->err_plugin = NULL;
    r->topo_dep = 0;
    r->topo_ecs = 0;
    r->owners_own_case = 0;
    r->depth = 0;
    r->sub_max_size = 0;
    r->meta_on = 0;
    r->nmeta = 0;
    f->ops = NULL;                  /* the next transport sets its own */
    f->conn = NULL;
    f->fd = -1;
    f->ifindex = 0;
    f->has_local = 0;
    memset(&r->local, 0, sizeof r->local);
    f->grp = NULL;
    f->outlen = 0;
    f->finished = 0;
    f->result = 0;
    f->detached = 0;
    f->nfinish = 0;
    f->finish_ran = 0;
    f->held = 0;
    f->hold_at = 0;
    f->finish_pending = 0;
    f->pending_rc = 0;
    assert(!f->wait_fn);            /* no transport still holds a wait of f */
    f->wait_arg = NULL;
    f->wait_next = NULL;
}

void req_destroy(req_full *f)
{
    msg_free(&f->r.q);
    msg_free(&f->r.resp);
    free(f->raw);
    free(f->out);
    free(f);
}

void req_release(req_full *f)
{
    worker *w = f->r.worker;
    assert(!f->pooled);             /* released once (core.h) */
    req_clear(f);
    if (w && w->npool < POOL_MAX) {
        f->pooled = 1;
        f->next_free = w->pool;
        w->pool = f;
        w->npool++;
        return;
    }
    req_destroy(f);
}

/* ---- small accessors -------------------------------------------------- */

struct event_base *req_event_base(const dns_req *r)
{
    return ((const req_full *)r)->base;
}

int req_debug(const dns_req *r)
{
    assert(r);
    const req_full *f = (const req_full *)r;
    return f->ins && f->ins->debug;
}

int req_family(const dns_req *r)
{
    return r->peer.ss_family == AF_INET6 ? 2 : 1;
}

void req_peer_str(const dns_req *r, char *addr, size_t alen, int *port)
{
    if (r->peer.ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&r->peer;
        inet_ntop(AF_INET6, &s6->sin6_addr, addr, (socklen_t)alen);
        if (port)
            *port = ntohs(s6->sin6_port);
    } else {
        const struct sockaddr_in *s4 = (const struct sockaddr_in *)&r->peer;
        inet_ntop(AF_INET, &s4->sin_addr, addr, (socklen_t)alen);
        if (port)
            *port = ntohs(s4->sin_port);
    }
}

size_t req_max_size(const dns_req *r)
{
    if (r->proto != PROTO_UDP)
        return 65535;
    if (!r->q.edns.present || r->q.edns.udp_size < 512)
        return 512;
    return r->q.edns.udp_size;
}

void req_set_query_udp_size(dns_req *r, uint16_t size)
{
    req_full *f = (req_full *)r;
    if (!r->q.edns.present)
        return;
    r->q.edns.udp_size = size;
    if (f->raw && r->raw == f->raw)
        msg_wire_set_udp_size(f->raw, r->rawlen, size);
}

void req_set_query_flags(dns_req *r, uint16_t flags)
{
    req_full *f = (req_full *)r;
    const uint16_t bits = F_QR | F_AA | F_TC | F_RD | F_RA | 0x0040 | F_AD | F_CD;
    r->q.flags = (uint16_t)((r->q.flags & ~bits) | (flags & bits));
    if (f->raw && r->raw == f->raw && r->rawlen >= 4) {
        f->raw[2] = (uint8_t)((f->raw[2] & 0x78) | ((r->q.flags >> 8) & ~0x78));
        f->raw[3] = (uint8_t)((f->raw[3] & 0x0f) | (r->q.flags & 0xf0));
    }
}

int rcode_client_write(int rcode)
{
    switch (rcode) {
    case RC_SERVFAIL: case RC_REFUSED: case RC_FORMERR: case RC_NOTIMP:
        return 0;
    default:
        return 1;
    }
}

void req_error(dns_req *r, const char *plugin, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->err_plugin = plugin;
}

int req_on_write(dns_req *r, req_write_hook fn, void *data)
{
    if (r->nwrite >= REQ_MAX_HOOKS)
        return -1;
    r->write_hooks[r->nwrite].fn.w = fn;
    r->write_hooks[r->nwrite++].data = data;
    return 0;
}

int req_on_done(dns_req *r, req_done_hook fn, void *data)
{
    if (r->ndone >= REQ_MAX_HOOKS)
        return -1;
    r->done_hooks[r->ndone].fn.d = fn;
    r->done_hooks[r->ndone++].data = data;
    return 0;
}

/* ---- metadata ---------------------------------------------------------- */

void req_meta_enable(dns_req *r)
{
    r->meta_on = 1;
}

int req_meta_set(dns_req *r, const char *key, req_meta_fn fn, const void *data)
{
    if (!r->meta_on)
        return -1;
    unsigned i = 0;
    while (i < r->nmeta && strcmp(r->meta[i].key, key) != 0)
        i++;
    if (i == r->nmeta) {
        if (r->nmeta >= REQ_MAX_META)
            return -1;
        r->nmeta++;
    }
    r->meta[i] = (req_meta){ .key = key, .fn = fn, .data = data };
    return 0;
}

const char *req_meta_get(const dns_req *r, const char *label, char *buf, size_t cap)
{
    for (unsigned i = 0; i < r->nmeta; i++)
        if (!strcmp(r->meta[i].key, label))
            return r->meta[i].fn(r, label, r->meta[i].data, buf, cap);
    return NULL;
}

int req_on_finish(dns_req *r, req_done_hook fn, void *data)
{
    req_full *f = (req_full *)r;
    if (f->nfinish >= REQ_MAX_HOOKS)
        return -1;
    f->finish_hooks[f->nfinish].fn.d = fn;
    f->finish_hooks[f->nfinish++].data = data;
    return 0;
}

int req_set_query(dns_req *r, const uint8_t *wire, size_t len)
{
    req_full *f = (req_full *)r;
    dns_msg q;
    int hdr_ok;
    msg_init(&q);
    if (len > 65535 || msg_parse(&q, wire, len, &hdr_ok) != 0 || !q.has_question) {
        msg_free(&q);
        return -1;
    }
    if (f->rawcap < len) {
        uint8_t *p = realloc(f->raw, len);
        if (!p) {
            msg_free(&q);
            return -1;
        }
        f->raw = p;
        f->rawcap = len;
    }
    memmove(f->raw, wire, len);
    r->raw = f->raw;
    r->rawlen = len;
    dns_msg old = r->q;
    r->q = q;
    msg_free(&old);
    return 0;
}

/* ---- the chain -------------------------------------------------------- */

int plugin_next(const handler *h, dns_req *r)
{
    if (!h->next) {
        req_error(r, h->def->name, "plugin/%s: no next plugin found", h->def->name);
        return RC_SERVFAIL;
    }
    return h->next->def->serve(h->next, r);
}

/* ---- writing ---------------------------------------------------------- */

/* The query's options a reply without an OPT record of its own echoes
 * (CoreDNS's SizeAndDo reuses the query's OPT with these): NSID, EXPIRE,
 * COOKIE, TCP KEEPALIVE, PADDING. */
static void echo_query_options(dns_edns *re, const dns_edns *qe)
{
    for (size_t off = 0; off + 4 <= qe->opts_len;) {
        uint16_t code = (uint16_t)(qe->opts[off] << 8 | qe->opts[off + 1]);
        uint16_t len = (uint16_t)(qe->opts[off + 2] << 8 | qe->opts[off + 3]);
        if (code == EDNS_OPT_NSID || (code >= 9 && code <= 12))
            edns_opt_add(re, code, qe->opts + off + 4, len);
        off += 4 + (size_t)len;
    }
}

/* EDNS on the reply: echo an OPT only when the query had one (or when the
 * writer asked for its own with edns.keep), version 0, the client's UDP
 * size, DO copied; the options of a reply with an OPT record of its own
 * (an upstream's, nsid's, acl's) kept, else the query's NSID, EXPIRE,
 * COOKIE, TCP KEEPALIVE and PADDING options echoed, as CoreDNS does;
 * ECS echoed with the scope the answer set
 * (0 unless a plugin narrowed it; a full-length scope when the answer
 * depended on the client's topology and the client was located by this
 * ECS address, r->topo_dep and r->topo_ecs: an ECS option the answer did
 * not use keeps scope 0, RFC 7871 7.2.1). */
static void echo_edns(dns_req *r)
{
    dns_edns *qe = &r->q.edns, *re = &r->resp.edns;
    if (!qe->present) {
        if (!re->keep)
            re->present = 0;
        return;
    }
    int had_ecs = re->has_ecs;
    uint8_t scope = re->ecs.scope_prefix;
    if (!re->present) {
        re->opts_len = 0;
        echo_query_options(re, qe);
    }
    re->present = 1;
    re->version = 0;
    re->udp_size = qe->udp_size;
    re->do_bit = qe->do_bit;
    re->has_ecs = qe->has_ecs;
    if (qe->has_ecs) {
        re->ecs = qe->ecs;
        re->ecs.scope_prefix = had_ecs ? scope : 0;
        if (r->topo_dep && r->topo_ecs)  /* the answer depended on this subnet */
            re->ecs.scope_prefix = qe->ecs.family == 2 ? 128 : 32;
    }
}

static int ensure_out(req_full *f, size_t n)
{
    if (f->outcap >= n)
        return 0;
    uint8_t *p = realloc(f->out, n);
    if (!p)
        return -1;
    f->out = p;
    f->outcap = n;
    return 0;
}

/* Encode as CoreDNS's ScrubWriter does: uncompressed when it fits, else
 * compressed and truncated to the client's limit. Over UDP, replies above
 * 1480 (IPv4) / 1220 (IPv6) octets are compressed even when they fit. */
static int encode_reply(req_full *f)
{
    dns_req *r = &f->r;
    size_t max = req_max_size(r);
    if (ensure_out(f, 65535 + 2) < 0)
        return -1;
    int n = msg_encode(&r->resp, f->out, 65535, 65535, 0);
    size_t udp_cut = req_family(r) == 2 ? 1220 : 1480;
    if (n >= 0 && (size_t)n <= max && !(r->proto == PROTO_UDP && (size_t)n > udp_cut)) {
        f->outlen = (size_t)n;
        return 0;
    }
    n = msg_encode(&r->resp, f->out, 65535, max, 1);
    if (n < 0)
        return -1;
    f->outlen = (size_t)n;
    return 0;
}

/* Encode r->resp and hand it to the transport; r->resp_size counts the
 * octets of every message sent for the request. 0, or -1 when it could not
 * be sent (a TCP client that has gone). */
int req_send_reply(req_full *f)
{
    dns_req *r = &f->r;
    assert(f->ops && f->ops->send && !f->pooled);
    echo_edns(r);
    if (encode_reply(f) < 0) {
        /* cannot happen for a reply to a parsed query; answer SERVFAIL */
        msg_reply_to(&r->resp, &r->q);
        r->resp.rcode = RC_SERVFAIL;
        echo_edns(r);
        if (encode_reply(f) < 0)
            return -1;
    }
    r->resp_size += f->outlen;
    r->nsent++;
    assert(f->outlen >= 12 && (f->out[2] & 0x80));     /* a reply: QR (core.h) */
    return f->ops->send(f, f->out, f->outlen);
}

/* Run the write hooks below index i, innermost first, then send; stop
 * where a hook holds the reply (req_hold_write). */
static void write_from(req_full *f, unsigned i)
{
    dns_req *r = &f->r;
    while (i-- > 0) {
        r->write_hooks[i].fn.w(r, r->write_hooks[i].data);
        if (f->held) {
            f->hold_at = i;
            return;
        }
    }
    req_send_reply(f);
}

int req_write(dns_req *r, const handler *writer)
{
    req_full *f = (req_full *)r;
    if (r->written) {
        log_error("plugin/%s: second reply to the same query dropped",
                  writer ? writer->def->name : "server");
        return r->resp.rcode;
    }
    r->writer = writer ? writer->def->name : "";
    r->written = 1;
    write_from(f, r->nwrite);       /* a held reply is released later */
    return r->resp.rcode;
}

int req_raw_ok(const dns_req *r)
{
    return r->nwrite == 0 && !r->written && r->proto != PROTO_INTERNAL;
}

size_t req_reply_budget(const dns_req *r, size_t fixed)
{
    size_t max = req_raw_ok(r) ? req_max_size(r)
               : r->nwrite == 0 && !r->written ? r->sub_max_size : 0;
    if (!max)
        return SIZE_MAX;
    return max > fixed ? max - fixed : 0;
}

int req_worker_index(const dns_req *r)
{
    return r->worker ? r->worker->id : -1;
}

int req_write_raw(dns_req *r, const handler *writer, const uint8_t *wire, size_t len)
{
    req_full *f = (req_full *)r;
    if (!req_raw_ok(r) || len < 12 || len > 65535)
        return -1;
    uint16_t fl = (uint16_t)(wire[2] << 8 | wire[3]);
    msg_reply_to(&r->resp, &r->q);
    r->resp.flags = (uint16_t)(fl & 0xfff0);
    r->resp.rcode = (uint16_t)(fl & 0xf);
    echo_edns(r);
    if (ensure_out(f, 65535 + 2) < 0)
        return -1;
    size_t total = len;
    if (r->resp.edns.present) {
        /* the OPT record as msg_encode() writes it: encode the reply
         * without question or records right after the octets, then move
         * its OPT over that message's header */
        int has_q = r->resp.has_question;
        r->resp.has_question = 0;
        int n = msg_encode(&r->resp, f->out + len, 65535 - len, 65535 - len, 0);
        r->resp.has_question = has_q;
        if (n < 12)
            return -1;
        memmove(f->out + len, f->out + len + 12, (size_t)n - 12);
        total += (size_t)n - 12;
    }
    size_t udp_cut = req_family(r) == 2 ? 1220 : 1480;
    if (total > req_max_size(r) || (r->proto == PROTO_UDP && total > udp_cut))
        return -1;
    memcpy(f->out, wire, len);
    if (r->resp.edns.present) {
        uint16_t ar = (uint16_t)((f->out[10] << 8 | f->out[11]) + 1);
        f->out[10] = (uint8_t)(ar >> 8);
        f->out[11] = (uint8_t)ar;
    }
    f->outlen = total;
    r->writer = writer ? writer->def->name : "";
    r->written = 1;
    r->resp_size += total;
    r->nsent++;
    assert(f->ops && f->ops->send && !f->pooled);
    assert(f->out[2] & 0x80);       /* wire is a reply: QR (core.h) */
    f->ops->send(f, f->out, total);
    return r->resp.rcode;
}

int req_write_more(dns_req *r)
{
    req_full *f = (req_full *)r;
    if (!r->written || f->finished || r->proto != PROTO_TCP)
        return -1;
    return req_send_reply(f);
}

int req_when_writable(dns_req *r, req_writable_fn fn, void *arg)
{
    req_full *f = (req_full *)r;
    assert(fn && !f->pooled);
    if (f->finished || f->wait_fn || !f->ops || !f->ops->when_writable)
        return -1;
    return f->ops->when_writable(f, fn, arg);
}

void req_hold_write(dns_req *r)
{
    ((req_full *)r)->held = 1;
}

void req_release_write(dns_req *r)
{
    req_full *f = (req_full *)r;
    if (!f->held)
        return;
    f->held = 0;
    write_from(f, f->hold_at);
    if (!f->held && f->finish_pending) {
        f->finish_pending = 0;
        req_finish(r, f->pending_rc);
    }
}

/* A reply the server writes itself: header, question, rcode, OPT echoed. */
static void write_bare(req_full *f, int rcode)
{
    dns_req *r = &f->r;
    msg_reply_to(&r->resp, &r->q);
    r->resp.rcode = (uint16_t)rcode;
    r->written = 1;
    r->writer = "";
    req_send_reply(f);
}

int req_drop(dns_req *r)
{
    r->noreply = 1;
    return RC_NOERROR;
}

void req_finish(dns_req *r, int rcode)
{
    req_full *f = (req_full *)r;
    assert(!f->pooled);             /* finished before it went back */
    if (f->finished)
        return;
    if (!f->finish_ran) {
        f->finish_ran = 1;
        for (unsigned i = f->nfinish; i-- > 0;)
            f->finish_hooks[i].fn.d(r, rcode, f->finish_hooks[i].data);
    }
    if (f->held) {                  /* completed by req_release_write */
        f->finish_pending = 1;
        f->pending_rc = rcode;
        return;
    }
    f->finished = 1;
    if (!r->written && r->noreply) {
        rcode = RC_NOERROR;             /* req_drop: nothing goes out */
    } else if (!r->written) {
        if (rcode_client_write(rcode)) {
            /* A handler claimed to have answered but did not: CoreDNS would
             * leave the client waiting; we answer SERVFAIL and say so. */
            log_error("no reply written for %s rcode %d; answering SERVFAIL",
                      r->err_plugin ? r->err_plugin : "chain", rcode);
            rcode = RC_SERVFAIL;
        }
        write_bare(f, rcode);
    } else {
        rcode = r->resp.rcode;
    }
    f->result = rcode;
    /* queries that never entered a chain go to the instance's unrouted
     * observers (zone "dropped"; CoreDNS does not count unparsable
     * packets: their zone stays set but no block was matched and the
     * class/zone checks never ran) */
    if (!r->block && r->zone && strcmp(r->zone, "dropped") == 0 && r->q.has_question && f->ins)
        for (unsigned i = 0; i < f->ins->nunrouted; i++)
            f->ins->unrouted[i].fn.d(r, rcode, f->ins->unrouted[i].data);
    for (unsigned i = r->ndone; i-- > 0;)
        r->done_hooks[i].fn.d(r, rcode, r->done_hooks[i].data);
    assert(f->ops && f->ops->done);
    f->ops->done(f);
}
