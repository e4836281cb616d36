/*
 * chase.c — resolve an ExternalName target outside the plugin's zones by a
 * new query from the top of the server (CoreDNS's upstream Lookup): cache,
 * forward, hosts, file… whatever the Corefile routes that name to.
 *
 * Asynchronous, in two steps, so that no worker ever waits for an upstream:
 *
 *   1. While answer.c builds the answer (inside the store's read-side
 *      section), an out-of-zone CNAME target is noted with kube_chase_add():
 *      it makes the sub-request now (an internal request on the event base
 *      of the request being answered, req_event_base(), with RD and the
 *      client's EDNS size and DO bit, see sub_size) and answer.c leaves a
 *      placeholder record where the upstream's records will go.
 *   2. kube_serve() leaves the read-side section and calls kube_chase_run(),
 *      which takes the query state (kq, answer, additional) into a kwait on
 *      the heap and starts every sub-request with req_start(). Each one's
 *      done hook copies its reply into its kchase. When the last one has
 *      finished, answer.c's kube_write_chased() puts the upstream records in
 *      place of the placeholders and writes the reply; the original request
 *      is then finished with req_finish(). A sub-request answered at once
 *      (hosts, file, kubernetes) finishes inside req_start(): when all did,
 *      kube_chase_run() writes the reply itself and returns its rcode.
 *
 * Who owns what: the kq owns q->chases (and each unstarted sub-request)
 * until kube_chase_run() or kube_chase_free(); the kwait owns them, the
 * arena and the records from then on, and is freed right after the reply
 * is written. A started sub-request belongs to the server, which frees it
 * after its done hook (req_start); the original request stays alive until
 * req_finish(), even if its client has gone (a TCP connection is kept until
 * its requests finished).
 *
 * Nesting: a sub-request carries the depth of the request that made it
 * plus one (dns_req.depth); at depth KUBE_CHASE_DEPTH no chase is made,
 * so names that CNAME back into a cluster zone cannot loop. Without an
 * event base (a test's req_run with none) handlers that would need one
 * fail at once, so every chase still finishes.
 */
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "server/server.h"

/* A query waiting for its chases. */
typedef struct kwait {
    kq q;                           /* the query state, moved here */
    krrvec ans, extra;
    size_t left;                    /* chases not finished yet */
    int starting;                   /* inside kube_chase_run's start loop */
} kwait;

/* The sub-query carries the client's EDNS size and DO bit, as CoreDNS's
 * upstream Lookup does (state.SizeAndDo). CoreDNS also keeps the client's
 * transport, so a TCP client's chase goes to the upstream over TCP; here a
 * TCP client without EDNS advertises 65535 instead, so that the upstream
 * answer is not cut to 512 bytes. 0: no OPT. */
static uint16_t sub_size(const dns_req *r)
{
    if (r->q.edns.present)
        return r->q.edns.udp_size < 512 ? 512 : r->q.edns.udp_size;
    return req_max_size(r) > 512 ? 65535 : 0;
}

static int chases_grow(kq *q)
{
    if (q->nchases < q->capchases)
        return 0;
    size_t cap = q->capchases ? q->capchases * 2 : 2;
    kchase *nv = realloc(q->chases, cap * sizeof *nv);
    if (!nv)
        return -1;
    q->chases = nv;
    q->capchases = cap;
    return 0;
}

int kube_chase_add(kq *q, const uint8_t *name, uint16_t qtype)
{
    dns_req *r = q->r;
    if (!q->k->ins || r->depth >= KUBE_CHASE_DEPTH || chases_grow(q) < 0)
        return -1;
    uint8_t wire[12 + DNAME_MAX + 4 + 11];
    dns_query sq = { .id = (uint16_t)rand(), .flags = F_RD, .qname = name, .qtype = qtype,
                     .qclass = C_IN, .edns_size = sub_size(r), .do_bit = r->q.edns.do_bit };
    int len = msg_query(&sq, wire, sizeof wire);
    dns_req *sub = len < 0 ? NULL : req_new_internal(q->k->ins, req_event_base(r), wire,
                                                     (size_t)len, NULL);
    if (!sub)
        return -1;
    sub->depth = r->depth + 1;
    kchase *c = &q->chases[q->nchases];
    memset(c, 0, sizeof *c);
    c->sub = sub;
    msg_init(&c->reply);
    return (int)q->nchases++;
}

void kube_chase_free(kq *q)
{
    for (size_t i = 0; i < q->nchases; i++) {
        if (q->chases[i].sub)
            req_free(q->chases[i].sub);
        msg_free(&q->chases[i].reply);
    }
    free(q->chases);
    q->chases = NULL;
    q->nchases = q->capchases = 0;
}

static void kwait_free(kwait *w)
{
    kube_chase_free(&w->q);
    krr_free(&w->ans);
    krr_free(&w->extra);
    karena_free(&w->q.arena);
    free(w);
}

/* The sub-request finished: keep its reply as sent; after the last one,
 * answer and finish the original request. */
static void chase_done(dns_req *sub, int rcode, void *data)
{
    (void)rcode;
    kchase *c = data;
    kwait *w = c->w;
    c->ok = msg_copy(&c->reply, &sub->resp) == 0;
    if (--w->left > 0 || w->starting)
        return;
    dns_req *r = w->q.r;
    int rc = kube_write_chased(&w->q, &w->ans, &w->extra);
    kwait_free(w);
    req_finish(r, rc);
}

int kube_chase_run(kq *q, krrvec *ans, krrvec *extra)
{
    kwait *w = calloc(1, sizeof *w);
    if (!w) {
        kube_chase_free(q);
        krr_free(ans);
        krr_free(extra);
        karena_free(&q->arena);
        return RC_SERVFAIL;
    }
    w->q = *q;
    w->ans = *ans;
    w->extra = *extra;
    w->left = q->nchases;
    w->starting = 1;
    for (size_t i = 0; i < w->q.nchases; i++) {
        kchase *c = &w->q.chases[i];
        dns_req *sub = c->sub;
        c->sub = NULL;
        c->w = w;
        req_on_done(sub, chase_done, c);    /* a new request has room */
        req_start(sub);
    }
    w->starting = 0;
    if (w->left > 0)
        return REQ_ASYNC;
    int rc = kube_write_chased(&w->q, &w->ans, &w->extra);
    kwait_free(w);
    return rc;
}
