/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cidr.h — the one parser of "address/length" networks (the acl plugin's
 * `net`, the topology plugin's `client_subnet`) and the test whether an
 * address lies inside one.
 *
 * cidr_parse reads text as Go's net.ParseCIDR does, which is what CoreDNS
 * configurations are written against:
 *   - one '/' separates the address from the length; no '/' is an error;
 *   - the address is a dotted IPv4 address without leading zeros in its
 *     octets (127.001.0.1 is refused), or an IPv6 address (an embedded IPv4
 *     tail allowed, ::ffff:a.b.c.d stays IPv6 with lengths up to 128); an
 *     IPv6 zone (fe80::1%eth0) is refused;
 *   - the length is decimal digits only: no sign (`/+8`, `/-0`), no
 *     spaces, not empty, at most 32 for IPv4 and 128 for IPv6. Leading
 *     zeros are accepted (`/08` is 8), as Go's decimal reader takes them;
 *   - the network keeps its host bits cleared ("10.1.2.3/8" is 10.0.0.0/8).
 * cidr_parse_host also takes a bare address as the host network (/32 or
 * /128), the way CoreDNS's acl reads `net 10.0.0.1`.
 *
 * A cidr is a plain value: the caller owns it (no heap, nothing to free).
 * The functions keep no state and may be called from any thread.
 */
#ifndef TOPODNS_CIDR_H
#define TOPODNS_CIDR_H

#include <stdint.h>

typedef struct cidr {
    int family;             /* AF_INET or AF_INET6 */
    unsigned bits;          /* prefix length: 0..32 (AF_INET) or 0..128 (AF_INET6) */
    uint8_t addr[16];       /* the network, host bits zero; IPv4 in addr[0..3], rest zero */
} cidr;

/* text as Go's net.ParseCIDR: 0 with *out set, or -1 with *out zeroed. */
int cidr_parse(const char *text, cidr *out);

/* As cidr_parse, and an address without '/' is the network of that one
 * host (/32 or /128). */
int cidr_parse_host(const char *text, cidr *out);

/* 1 when addr (4 octets for AF_INET, 16 for AF_INET6) of that family lies
 * inside c, else 0. The families must match: a caller that sees IPv4
 * clients as ::ffff:a.b.c.d maps them to AF_INET first (as Go's To4()). */
int cidr_contains(const cidr *c, int family, const uint8_t *addr);

#endif
