/* SPDX-License-Identifier: Apache-2.0 */
/*
 * zone.h — zone names as written in Corefiles.
 *
 * zone_from_key() normalizes a zone written by a user (server keys, plugin
 * arguments) to a lower-case FQDN; a CIDR becomes the reverse zone(s) that
 * cover it: on an octet (IPv4) or nibble (IPv6) boundary one zone, otherwise
 * the zones of the next boundary that together cover it, as CoreDNS does
 * ("10.0.0.0/23" → 0.0.10.in-addr.arpa. and 1.0.10.in-addr.arpa.).
 * There is no cap on the prefix length: the split reaches at most the next
 * boundary, so an IPv4 CIDR gives at most 2^7 = 128 zones (a /17 gives the
 * 128 /24 zones 0..127.X.Y.in-addr.arpa.) and an IPv6 one at most 2^3 = 8.
 * A name then matches one of these zones by suffix, exactly as CoreDNS
 * matches the zones its cidr.Split gives; nothing else filters it. The
 * matchers keep that cheap: the server's (core_match) locates the query's
 * suffixes once and compares each zone with one short comparison; the
 * kubernetes plugin's compares a run of sibling zones' common parent once.
 * Pure functions (setup time, any thread).
 */
#ifndef TOPODNS_ZONE_H
#define TOPODNS_ZONE_H

#include "wire/dname.h"

#define ZONE_MAX_SPLIT 128       /* the most zones one key gives (IPv4 /9, /17, /25) */

/* The zones of `text`: returns how many (1..ZONE_MAX_SPLIT) and sets *out
 * to a malloc'd array of them that the caller frees; or -1 with *out NULL
 * when text is no zone (see zone_key_error). */
int zone_from_key(const char *text, char (**out)[DNAME_STR_MAX]);

/* What a refused `text` is, for an error message: "invalid CIDR" when it is
 * written as a CIDR (it holds a '/'), else "invalid zone". */
const char *zone_key_error(const char *text);

#endif
