/* SPDX-License-Identifier: Apache-2.0 */
/*
 * autopath.h — the autopath plugin's search-path logic (search.c), apart
 * from the plugin glue (autopath.c) so the unit tests can reach it.
 * Private to src/plugin/autopath/ and its tests.
 *
 * Pure functions over caller-owned buffers, any thread.
 */
#ifndef TOPODNS_PLUGIN_AUTOPATH_H
#define TOPODNS_PLUGIN_AUTOPATH_H

#include <stdint.h>
#include "common/resolvconf.h"
#include "server/autopath.h"
#include "wire/msg.h"

extern const struct plugin_def plugin_autopath;

/* A RESOLV-CONF file's search domains as a search list, the root name
 * (the bare name) last. Returns out->n. */
int ap_list_from_resolv(const resolv_search *rs, autopath_list *out);

/* CoreDNS's firstInSearchPath and TrimZone: how many labels of the
 * (lower-cased) name lie in front of the list's first element — the
 * "base" that every element is appended to — or -1 when the name is not
 * below that element. 0 when the name is the element itself (CoreDNS
 * fails the query there; autopath passes it on). */
int ap_base_labels(const uint8_t *lname, const autopath_list *list);

/* The first base labels of qname (as spelled) followed by suffix: the
 * expansion tried for one element. 0, or -1 when it is too long. */
int ap_expand(const uint8_t *qname, int base, const uint8_t *suffix, uint8_t *out);

/* CoreDNS's cnamer: in front of the answer, a CNAME from orig to the
 * owner of the first answer record not owned by orig (its TTL), and the
 * question's name set to orig. 0, or -1 when out of memory. */
int ap_cnamer(dns_msg *m, const uint8_t *orig);

#endif
