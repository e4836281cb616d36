/* SPDX-License-Identifier: Apache-2.0 */
/*
 * chase.h — out-of-zone ExternalName targets of the kubernetes plugin
 * (chase.c), the layer below answer.c: answer.c notes and runs chases and
 * passes kube_write_chased as the callback that answers once they
 * finished; chase.c calls nothing above itself. Ownership: below and at the
 * top of chase.c.
 */
#ifndef TOPODNS_KUBERNETES_CHASE_H
#define TOPODNS_KUBERNETES_CHASE_H

#include <stdint.h>
#include "plugin/kubernetes/lookup.h"
#include "wire/msg.h"

/* chase.c: out-of-zone ExternalName targets resolved through the server's
 * chain from the top, without blocking (see the top of chase.c). */
#define KUBE_CHASE_DEPTH 4          /* nested chases at most */
/* Note a query for name/qtype that the answer being built needs: its
 * index in q->chases, or -1 when none can be made (nesting limit, no
 * instance, out of memory: the caller drops the CNAME). */
int kube_chase_add(kq *q, const uint8_t *name, uint16_t qtype);
/* The reply to chase i once it finished, or NULL (not kept). */
const dns_msg *kube_chase_reply(const kq *q, int i);
/* How a query whose chases finished is answered: the caller of
 * kube_chase_run() says (answer.c passes kube_write_chased), so that chase.c
 * reports back through it and calls nothing above itself. Returns the
 * rcode, as kube_write_chased(). */
typedef int (*kube_chase_write_fn)(kq *q, const krrvec *ans, const krrvec *extra);
/* Run q's chases, then answer with write (never NULL). Takes over q's
 * chases and arena, ans and extra (the caller frees none of them). Returns
 * the rcode when every chase finished at once, else REQ_ASYNC: the request
 * is finished later with req_finish(), from its event base. */
int kube_chase_run(kq *q, krrvec *ans, krrvec *extra, kube_chase_write_fn write);
/* Free the chases of a query that will not run them. */
void kube_chase_free(kq *q);
/* answer.c: write the answer whose chases finished, each placeholder
 * replaced by its upstream's answer records. The rcode, or SERVFAIL
 * without writing when a reply could not be copied. */
int kube_write_chased(kq *q, const krrvec *ans, const krrvec *extra);

#endif
