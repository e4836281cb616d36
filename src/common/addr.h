/* SPDX-License-Identifier: Apache-2.0 */
/*
 * addr.h — the one parser of written socket addresses, the server's default
 * bind address, and IPv4-mapped addresses made plain IPv4.
 *
 * addr_parse_ip reads a numeric address only: a dotted IPv4 address
 * (inet_pton's form: four decimal octets) or an IPv6 address, which may
 * carry a zone ("fe80::1%eth0" or "fe80::1%2"; getaddrinfo with
 * AI_NUMERICHOST reads it and sets sin6_scope_id). Host names are never
 * looked up. addr_parse also takes a port in the text: "1.2.3.4:53",
 * "[::1]:53", "[fe80::1%eth0]"; a bare IPv6 address ("::1") has no port.
 * A port in the text is 1..65535 in decimal; the default port the caller
 * gives is 0..65535.
 *
 * Both return 0 with *ss filled (the rest of it zeroed) and *len the size of
 * the sockaddr_in or sockaddr_in6, or -1 on anything else (*ss then
 * unspecified; the caller writes its own error message). The caller owns
 * ss; nothing is allocated and nothing is kept, so any thread may call
 * them.
 */
#ifndef TOPODNS_ADDR_H
#define TOPODNS_ADDR_H

#include <sys/socket.h>

int addr_parse_ip(const char *ip, int port, struct sockaddr_storage *ss, socklen_t *len);
int addr_parse(const char *text, int defport, struct sockaddr_storage *ss, socklen_t *len);

/* An IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a dual-stack socket
 * reports for an IPv4 peer) becomes the plain IPv4 address with the same
 * port; any other address is left as it is. */
void sockaddr_unmap(struct sockaddr_storage *ss);

/* The address a listener without one binds (a server block without bind,
 * an HTTP address ":PORT"): the environment variable TOPODNS_DEFAULT_BIND
 * when set and not empty (the test suite sets 127.0.0.1), else NULL meaning
 * the wildcard address. The string belongs to the environment: read it at
 * once, never free it. */
const char *addr_default_bind(void);

#endif
