/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exchange.h — one DNS query and its reply through c-ares, for background
 * threads (health checks, the loop plugin's probe), never for the serving
 * workers: the call waits until the reply or the timeout.
 *
 * The caller writes the query (any ID: c-ares gives it one of its own and
 * matches the reply's ID and question to it) and reads the reply; the
 * helper keeps nothing between calls (a c-ares channel and a private
 * libevent base live for the call and are freed before it returns).
 * Any reply whose ID and question match counts, whatever its rcode or TC
 * bit (c-ares' NOCHECKRESP and IGNTC).
 *
 * Error convention: 0 on a reply, -1 on failure (timeout, refused, a
 * resource) with a reason in err.
 */
#ifndef TOPODNS_EXCHANGE_H
#define TOPODNS_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef struct dns_exchange_opts {
    const struct sockaddr *to;       /* server address and port (IPv4 or IPv6) */
    const struct sockaddr *src;      /* source address, or NULL; its port is ignored */
    int tcp;                         /* over TCP instead of UDP */
    int timeout_ms;                  /* > 0 */
} dns_exchange_opts;

/* Send q[0..qlen) to o->to, wait for the reply. 0 with the reply's length
 * in *rlen (copied into reply, truncated to cap; reply may be NULL with cap
 * 0), or -1 with err. */
int dns_exchange(const dns_exchange_opts *o, const uint8_t *q, size_t qlen, uint8_t *reply,
                 size_t cap, size_t *rlen, char *err, size_t errlen);

#endif
