/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tap.h — how a plugin that sends queries upstream reports them to a
 * message tap (CoreDNS's dnstap.Tapper), without knowing the tap plugin.
 *
 * The dnstap plugin publishes a msg_tap in its server block under TAP_KEY
 * from setup() (block_set_value; the block frees it with the instance). A
 * plugin later in the chain order (forward) reads it with block_value()
 * in its own setup(): setup runs in chain order, so the tap is there when
 * the block has one, else the value is NULL and nothing is reported.
 *
 * forwarded() runs on the worker serving r, once per upstream reply the
 * plugin takes (one FORWARDER_QUERY and one FORWARDER_RESPONSE message).
 * It never blocks: it encodes and queues, and drops (counting the drop)
 * when the tap's queue is full. The pointers are read during the call only.
 */
#ifndef TOPODNS_TAP_H
#define TOPODNS_TAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "server/request.h"

#define TAP_KEY "tap/dnstap"

typedef struct msg_tap {
    /* upstream, uplen: the upstream's address; tcp: 1 over TCP or TLS, 0
     * over UDP; query, qlen: the octets sent; rtt_ns: how long before now
     * they were sent; resp: the reply as parsed. */
    void (*forwarded)(const struct msg_tap *t, const dns_req *r, const struct sockaddr *upstream,
                      socklen_t uplen, int tcp, const uint8_t *query, size_t qlen,
                      uint64_t rtt_ns, const dns_msg *resp);
    void *data;                      /* the tap plugin's instance */
} msg_tap;

#endif
