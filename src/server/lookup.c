/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lookup.c — asynchronous questions through the server. See lookup.h.
 *
 * Each question's sub-request is made by lookup_add() and started by
 * lookup_run() with a done hook that copies its reply into the set. A
 * sub-request answered at once (hosts, file, kubernetes) finishes inside
 * req_start(); `starting` keeps the done callback from running before
 * lookup_run() has started them all, and lookup_run() then reports that
 * everything finished.
 */
#include <stdlib.h>
#include <string.h>
#include "server/lookup.h"
#include "wire/dname.h"
#include "common/vec.h"

typedef struct lookup_item {
    uint8_t name[DNAME_MAX];
    uint16_t qtype;
    dns_req *sub;                   /* made, not started (owned until run) */
    lookup_set *s;
    dns_msg reply;
    int ok;                         /* reply holds the answer */
} lookup_item;

struct lookup_set {
    struct instance *ins;
    dns_req *r;
    unsigned max_depth;
    int flags;
    lookup_item *v;
    size_t n, cap;
    size_t left;                    /* started, not finished */
    int starting;                   /* inside lookup_run's start loop */
    lookup_done_fn done;
    void *data;
};

lookup_set *lookup_new(struct instance *ins, dns_req *r, unsigned max_depth, int flags)
{
    lookup_set *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->ins = ins;
    s->r = r;
    s->max_depth = max_depth;
    s->flags = flags;
    return s;
}

/* The EDNS size the question carries: the client's (at least 512), or with
 * LOOKUP_TCP_65535 65535 for a TCP client without EDNS; 0: no OPT. */
static uint16_t sub_size(const lookup_set *s)
{
    const dns_req *r = s->r;
    if (r->q.edns.present)
        return r->q.edns.udp_size < 512 ? 512 : r->q.edns.udp_size;
    if ((s->flags & LOOKUP_TCP_65535) && req_max_size(r) > 512)
        return 65535;
    return 0;
}

int lookup_add(lookup_set *s, const uint8_t *name, uint16_t qtype)
{
    dns_req *r = s->r;
    if (!s->ins || r->depth >= s->max_depth)
        return -1;
    if (VEC_RESERVE_FROM(s->v, s->cap, s->n + 1, 2) < 0)
        return -1;
    uint8_t wire[12 + DNAME_MAX + 4 + 11];
    dns_query sq = {
        .id = (uint16_t)(r->q.id + s->n + 1),
        .flags = (s->flags & LOOKUP_CLIENT_RD) ? (uint16_t)(r->q.flags & F_RD) : F_RD,
        .qname = name, .qtype = qtype, .qclass = C_IN,
        .edns_size = sub_size(s), .do_bit = r->q.edns.present && r->q.edns.do_bit,
    };
    int len = msg_query(&sq, wire, sizeof wire);
    if (len < 0)
        return -1;
    char peer[64] = "";
    if (s->flags & LOOKUP_CLIENT_PEER) {
        int port;
        req_peer_str(r, peer, sizeof peer, &port);
    }
    dns_req *sub = req_new_internal(s->ins, req_event_base(r), wire, (size_t)len,
                                    peer[0] ? peer : NULL);
    if (!sub)
        return -1;
    sub->depth = r->depth + 1;
    lookup_item *it = &s->v[s->n];
    memset(it, 0, sizeof *it);
    memcpy(it->name, name, dname_len(name));
    it->qtype = qtype;
    it->sub = sub;
    it->s = s;
    msg_init(&it->reply);
    return (int)s->n++;
}

int lookup_find(const lookup_set *s, const uint8_t *name, uint16_t qtype)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].qtype == qtype && dname_equal(s->v[i].name, name))
            return (int)i;
    return -1;
}

size_t lookup_count(const lookup_set *s)
{
    return s->n;
}

const dns_msg *lookup_reply(const lookup_set *s, int i)
{
    if (i < 0 || (size_t)i >= s->n || !s->v[i].ok)
        return NULL;
    return &s->v[i].reply;
}

/* A question finished: keep its reply as sent; after the last one (and
 * once lookup_run has started them all) tell the caller, and touch the set
 * no more: the callback may free it. */
static void item_done(dns_req *sub, int rcode, void *data)
{
    (void)rcode;
    lookup_item *it = data;
    lookup_set *s = it->s;
    it->ok = msg_copy(&it->reply, &sub->resp) == 0;
    if (--s->left > 0 || s->starting)
        return;
    s->done(s, s->data);
}

int lookup_run(lookup_set *s, lookup_done_fn done, void *data)
{
    s->done = done;
    s->data = data;
    s->starting = 1;
    for (size_t i = 0; i < s->n; i++) {
        dns_req *sub = s->v[i].sub;
        if (!sub)
            continue;
        s->v[i].sub = NULL;
        s->left++;
        req_on_done(sub, item_done, &s->v[i]);     /* a new request has room */
        req_start(sub);
    }
    s->starting = 0;
    return s->left > 0;
}

void lookup_free(lookup_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i].sub)
            req_free(s->v[i].sub);
        msg_free(&s->v[i].reply);
    }
    free(s->v);
    free(s);
}
