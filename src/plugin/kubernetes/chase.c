/* SPDX-License-Identifier: Apache-2.0 */
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
 *      the heap and starts every sub-request (server/lookup.h, which keeps
 *      each reply). When the last one has finished, the write
 *      callback the caller passed (answer.c's kube_write_chased()) puts the upstream records in place of the
 *      placeholders and writes the reply; the original request is then
 *      finished with req_finish(). A sub-request answered at once (hosts,
 *      file, kubernetes) finishes inside req_start(): when all did,
 *      kube_chase_run() writes the reply itself and returns its rcode.
 *
 * Who owns what: the kq owns its lookup set q->chases (and each unstarted
 * sub-request) until kube_chase_run() or kube_chase_free(); the kwait owns
 * it, the arena and the records from then on, and is freed right after the
 * reply is written. A started sub-request belongs to the server, which
 * frees it after its reply was kept; the original request stays alive until
 * req_finish(), even if its client has gone (a TCP connection is kept until
 * its requests finished).
 *
 * Nesting: a sub-request carries the depth of the request that made it
 * plus one (dns_req.depth); at depth KUBE_CHASE_DEPTH no chase is made,
 * so names that CNAME back into a cluster zone cannot loop. Without an
 * event base (a test's req_run with none) handlers that would need one
 * fail at once, so every chase still finishes.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "plugin/kubernetes/kubernetes.h"
#include "plugin/kubernetes/lookup.h"
#include "plugin/kubernetes/chase.h"
#include "server/lookup.h"

/* A query waiting for its chases. */
typedef struct kwait {
    kq q;                           /* the query state, moved here */
    krrvec ans, extra;
    kube_chase_write_fn write;      /* answer.c's kube_write_chased */
} kwait;

int kube_chase_add(kq *q, const uint8_t *name, uint16_t qtype)
{
    /* RD set, the client's EDNS size and DO bit, as CoreDNS's upstream
     * Lookup does (state.SizeAndDo). CoreDNS also keeps the client's
     * transport, so a TCP client's chase goes to the upstream over TCP;
     * here a TCP client without EDNS advertises 65535 instead, so that the
     * upstream answer is not cut to 512 bytes. */
    if (!q->chases && !(q->chases = lookup_new(q->k->ins, q->r, KUBE_CHASE_DEPTH,
                                                LOOKUP_TCP_65535)))
        return -1;
    int i = lookup_add(q->chases, name, qtype);
    if (i >= 0)
        q->nchases++;
    return i;
}

const dns_msg *kube_chase_reply(const kq *q, int i)
{
    return q->chases ? lookup_reply(q->chases, i) : NULL;
}

void kube_chase_free(kq *q)
{
    lookup_free(q->chases);
    q->chases = NULL;
    q->nchases = 0;
}

static void kwait_free(kwait *w)
{
    kube_chase_free(&w->q);
    krr_free(&w->ans);
    krr_free(&w->extra);
    karena_free(&w->q.arena);
    free(w);
}

/* The last chase finished: answer and finish the original request. */
static void chase_done(lookup_set *ls, void *data)
{
    (void)ls;
    kwait *w = data;
    dns_req *r = w->q.r;
    int rc = w->write(&w->q, &w->ans, &w->extra);
    kwait_free(w);
    req_finish(r, rc);
}

int kube_chase_run(kq *q, krrvec *ans, krrvec *extra, kube_chase_write_fn write)
{
    assert(q && q->chases && q->nchases > 0 && write);
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
    w->write = write;
    if (lookup_run(w->q.chases, chase_done, w))
        return REQ_ASYNC;
    int rc = w->write(&w->q, &w->ans, &w->extra);
    kwait_free(w);
    return rc;
}
