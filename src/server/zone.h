/*
 * zone.h — zone names as written in Corefiles.
 *
 * zone_from_key() normalizes a zone written by a user (server keys, plugin
 * arguments) to a lower-case FQDN; a CIDR becomes the reverse zone(s) that
 * cover it: on an octet (IPv4) or nibble (IPv6) boundary one zone, otherwise
 * the zones of the next boundary that together cover it, as CoreDNS does
 * ("10.0.0.0/23" → 0.0.10.in-addr.arpa. and 1.0.10.in-addr.arpa.).
 * A pure function (setup time, any thread).
 */
#ifndef TOPODNS_ZONE_H
#define TOPODNS_ZONE_H

#include "wire/dname.h"

#define ZONE_MAX_SPLIT 16

/* Returns how many zones were written (1..ZONE_MAX_SPLIT), or -1. */
int zone_from_key(const char *text, char out[][DNAME_STR_MAX], int max);

#endif
