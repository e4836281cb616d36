/* SPDX-License-Identifier: Apache-2.0 */
/*
 * internal.c — requests without a socket.
 *
 *   req_new_internal, req_run, req_start
 *                        queries from inside topodns or tests: parsed from
 *                        wire, routed through the first listen group that
 *                        serves the name
 *   req_new_sub, req_start_next
 *                        a handler's question to the rest of its chain
 *   req_reply_wire, req_free
 *                        the reply as sent, and the end of the request
 *
 * Their transport (internal_ops) keeps the encoded reply in f->out and, when
 * the request finishes, marks it finished: req_run's caller reads it and
 * frees the request with req_free; a request req_start or req_start_next
 * detached goes back to the pool (or is freed) at once.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>
#include "server/core.h"
#include "common/addr.h"

static int internal_send(req_full *f, const uint8_t *wire, size_t len)
{
    (void)f, (void)wire, (void)len;
    return 0;                       /* the reply stays in f->out */
}

static void internal_done(req_full *f)
{
    f->finished = 1;
    if (f->detached)
        req_release(f);             /* req_start: nobody waits for it */
                                    /* else freed by req_free */
}

static const transport_ops internal_ops = { internal_send, internal_done, NULL };

dns_req *req_new_internal(struct instance *ins, struct event_base *base,
                          const uint8_t *wire, size_t len, const char *peer)
{
    req_full *f = req_alloc(NULL);
    if (!f)
        return NULL;
    req_clear(f);
    f->ops = &internal_ops;
    f->ins = ins;
    f->base = base;
    f->raw = malloc(len ? len : 1);
    if (!f->raw) {
        req_destroy(f);
        return NULL;
    }
    memcpy(f->raw, wire, len);
    f->rawcap = len;
    f->r.raw = f->raw;
    f->r.rawlen = len;
    f->r.proto = PROTO_INTERNAL;
    socklen_t plen;
    if (addr_parse_ip(peer ? peer : "127.0.0.1", 53535, &f->r.peer, &plen) != 0) {
        req_destroy(f);
        return NULL;
    }
    int hdr_ok;
    if (msg_parse(&f->r.q, f->raw, len, &hdr_ok) != 0 || !f->r.q.has_question) {
        req_destroy(f);
        return NULL;
    }
    /* route through the first group that serves the name */
    for (size_t i = 0; ins && i < ins->ngroups; i++) {
        if (core_match(&ins->groups[i], f->r.q.qname, f->r.q.qtype, &f->r)) {
            f->grp = &ins->groups[i];
            break;
        }
    }
    if (!f->grp && ins && ins->ngroups)
        f->grp = &ins->groups[0];
    return &f->r;
}

int req_run(dns_req *r)
{
    req_full *f = (req_full *)r;
    assert(f->ops == &internal_ops && !f->detached);
    core_dispatch(f);
    while (!f->finished && f->base)
        event_base_loop(f->base, EVLOOP_ONCE);
    return f->result;
}

void req_start(dns_req *r)
{
    req_full *f = (req_full *)r;
    f->detached = 1;
    core_dispatch(f);               /* f may be gone now */
}

dns_req *req_new_sub(const dns_req *parent, const uint8_t *wire, size_t len)
{
    const req_full *p = (const req_full *)parent;
    assert(parent && (wire || !len));
    req_full *f = req_alloc(parent->worker);
    if (!f)
        return NULL;
    req_clear(f);
    f->ops = &internal_ops;
    f->ins = p->ins;
    f->base = p->base;
    f->grp = p->grp;
    if (f->rawcap < len) {
        uint8_t *raw = realloc(f->raw, len ? len : 1);
        if (!raw) {
            req_release(f);
            return NULL;
        }
        f->raw = raw;
        f->rawcap = len;
    }
    memcpy(f->raw, wire, len);
    dns_req *r = &f->r;
    r->raw = f->raw;
    r->rawlen = len;
    r->proto = PROTO_INTERNAL;
    r->peer = parent->peer;
    r->local = parent->local;
    int hdr_ok;
    if (msg_parse(&r->q, f->raw, len, &hdr_ok) != 0 || !r->q.has_question) {
        req_release(f);
        return NULL;
    }
    r->block = parent->block;
    r->zone = parent->zone;
    r->server = parent->server;
    r->depth = parent->depth + 1;
    /* the parent's reply goes out as is to a UDP client: the sub's records
     * past that size could never be sent (a parent wrapped by a writer, or
     * over TCP, keeps every record) */
    if (req_raw_ok(parent) && parent->proto == PROTO_UDP)
        r->sub_max_size = req_max_size(parent);
    else
        r->sub_max_size = parent->nwrite == 0 && !parent->written ? parent->sub_max_size : 0;
    return r;
}

void req_start_next(dns_req *r, const handler *h)
{
    req_full *f = (req_full *)r;
    f->detached = 1;
    r->start_ns = now_ns();
    int rc = plugin_next(h, r);
    if (rc != REQ_ASYNC)
        req_finish(r, rc);
}

const uint8_t *req_reply_wire(const dns_req *r, size_t *len)
{
    const req_full *f = (const req_full *)r;
    *len = f->outlen;
    return f->out;
}

void req_free(dns_req *r)
{
    const req_full *f = (const req_full *)r;
    /* the caller's own request: never one the server frees (req_start,
     * req_start_next) nor a pooled one */
    assert(f->ops == &internal_ops && !f->detached && !f->pooled);
    req_destroy((req_full *)r);
}
