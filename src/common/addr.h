/* SPDX-License-Identifier: Apache-2.0 */
/*
 * addr.h — the one parser of written addresses: as address bytes
 * (addr_parse_bytes) or as socket addresses (addr_parse_ip, addr_parse);
 * the server's default bind address, and IPv4-mapped addresses made plain
 * IPv4.
 *
 * addr_parse_ip reads a numeric address only: a dotted IPv4 address
 * (addr_parse_bytes's rules, below) or an IPv6 address, which may carry a
 * zone naming an existing interface or a number ("fe80::1%eth0" or
 * "fe80::1%2"; getaddrinfo with AI_NUMERICHOST reads it and sets
 * sin6_scope_id). Host names are never looked up. addr_parse, the one
 * host:port splitter (forward's upstreams), also takes a port in the text:
 * "1.2.3.4:53", "[::1]:53", "[fe80::1%eth0]"; brackets may hold an IPv4
 * address too ("[1.2.3.4]:53", as Go's net.SplitHostPort reads it); a bare
 * IPv6 address ("::1") has no port. A port in the text is 1..65535 in
 * decimal digits only; the default port the caller gives is 0..65535.
 *
 * Both return 0 with *ss filled (the rest of it zeroed) and *len the size of
 * the sockaddr_in or sockaddr_in6, or -1 on anything else (*ss then
 * unspecified; the caller writes its own error message). The caller owns
 * ss; nothing is allocated and nothing is kept, so any thread may call
 * them.
 */
#ifndef TOPODNS_ADDR_H
#define TOPODNS_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* ---- address text to family and bytes ---------------------------------
 *
 * addr_parse_bytes is the one place where an address written as text (a
 * Corefile argument, a hosts-file column, an address field of an API
 * object) becomes a family and its bytes. Its callers: common/cidr (the
 * address of a network), cluster/decode (st_parse_ip), and the bind, hosts,
 * loadbalance, transfer and view plugins; addr_parse_ip below reads its
 * IPv4 addresses through it.
 *
 * It reads the len octets at text (no terminating NUL needed; a NUL in the
 * address is refused) and accepts exactly:
 *   - IPv4: four decimal octets 0..255 joined by '.', without leading zeros
 *     ("01.2.3.4" is refused), sign, spaces or inet_aton's short and hex
 *     forms ("127.1", "0x7f.0.0.1");
 *   - IPv6: RFC 4291 text, hex digits of either case, at most four per
 *     group ("0001::1" is taken, "00001::1" is not), an embedded IPv4 tail
 *     by the rules above ("::ffff:1.2.3.4"); no brackets, no port;
 *   - with ADDR_ZONE, a zone after the address of either family: the first
 *     '%' ends the address and what follows it (any text, nothing too) is
 *     dropped unread, never checked against the interfaces ("fe80::1%eth0",
 *     "1.2.3.4%x", "::1%"), as CoreDNS strips zones before net.ParseIP.
 *     Without ADDR_ZONE a '%' is refused.
 * Nothing else: not an empty text, not one longer than an IPv6 address can
 * be written (INET6_ADDRSTRLEN - 1 octets before any zone).
 *
 * An IPv4-mapped address (::ffff:a.b.c.d) stays IPv6 unless ADDR_UNMAP is
 * given; then it is the IPv4 address a.b.c.d (Go's net.IP.To4 view, under
 * which the two spellings are one address).
 *
 * Returns 0 with *family AF_INET (the address in addr[0..3], addr[4..15]
 * zero) or AF_INET6 (addr[0..15]); -1 on anything else, with *family
 * AF_UNSPEC and addr zeroed. There is no error text: the only failure is
 * "not an address of this form", and each caller words its own message
 * (CoreDNS's, with the text it read). A caller that takes one family only
 * checks *family. The caller owns every argument; nothing is allocated or
 * kept, so any thread may call it. */
#define ADDR_ZONE  0x1u     /* a "%zone" suffix is allowed and dropped */
#define ADDR_UNMAP 0x2u     /* ::ffff:a.b.c.d is returned as IPv4 a.b.c.d */

int addr_parse_bytes(const char *text, size_t len, unsigned flags, int *family,
                     uint8_t addr[16]);

/* ---- address text to socket addresses -------------------------------- */

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
