/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dnstap_internal.h — the message-building steps of dnstap.c, exposed for
 * its unit test (tests/unit/test_dnstap.c) and nothing else: no other
 * plugin or core file includes this header.
 *
 * All three are pure functions of their arguments, run on the worker
 * thread that serves the request; none keeps a pointer past its return
 * except as stated.
 */
#ifndef TOPODNS_DNSTAP_INTERNAL_H
#define TOPODNS_DNSTAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include "plugin/dnstap/dnstap.pb-c.h"
#include "server/request.h"
#include "wire/msg.h"

/* Socket family, address and port of sa into m's query (client) side, or
 * with response_side its response (upstream) side. The address octets are
 * copied into buf (16 octets, the caller's), which m then points at: buf
 * must live as long as m is used. A family other than IPv4/IPv6 leaves m
 * unchanged. */
void dnstap_set_addr(Dnstap__Message *m, const struct sockaddr *sa, int response_side,
                     uint8_t buf[16]);
/* The wire form of src (compressed, up to 65535 octets): malloc'd, the
 * caller frees it; its length in *len. NULL when it cannot be encoded or
 * on out of memory (then *len is untouched). */
uint8_t *dnstap_encode_msg(const dns_msg *src, size_t *len);
/* The client side of a CLIENT_QUERY / CLIENT_RESPONSE message: its type,
 * the client's address and port (dnstap_set_addr into abuf), the transport
 * (UDP or TCP) and the real time the query came in (now less the request's
 * age). */
void dnstap_client_msg(Dnstap__Message *m, Dnstap__Message__Type type, const dns_req *r,
                       uint8_t abuf[16]);

#endif
