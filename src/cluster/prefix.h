/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefix.h — a published longest-prefix-match index: address ranges
 * (IPv4 and IPv6 CIDRs) → the node they belong to. The store keeps one per
 * range source of the client locator: Node spec.podCIDRs, CiliumNode
 * spec.ipam.podCIDRs, Calico BlockAffinity spec.cidr (locator.h).
 *
 * Owners: the ranges are set per owner (the object that declares them: a
 * Node, a CiliumNode, a BlockAffinity, by name), each owner with one node
 * name and any number of ranges; setting an owner replaces its ranges, so
 * a Node that gains or loses a podCIDR is followed.
 *
 * Published table: one immutable block, the ranges sorted by family,
 * prefix length (longest first) and network, with a group per (family,
 * length). A lookup masks the address to each group's length, longest
 * first, and binary-searches that group: O(lengths × log n), no scan over
 * the ranges (a cluster has one or two lengths per family). The table is
 * rebuilt (O(n log n)) only when an owner's ranges actually change, and
 * not at all while held (a relist: pfx_hold), so a full list of 5,000
 * Nodes builds it once.
 *
 * Threads and memory: one writer (the store's writer, the API thread)
 * calls every function but pfx_find; readers call pfx_find inside
 * store_read_begin/_end. A replaced table is freed after an RCU grace
 * period (pmap_defer). Node names are the caller's (interned in the
 * store's string table, which outlives the index). pfx_free runs when no
 * reader is left.
 */
#ifndef TOPODNS_PREFIX_H
#define TOPODNS_PREFIX_H

#include <stddef.h>
#include "cluster/store.h"

typedef struct pfx_index pfx_index;

pfx_index *pfx_new(void);
void pfx_free(pfx_index *x);

/* Writer: owner's ranges become c[0..n) on node (n 0: the owner has no
 * range any more). Host bits of each range are cleared; ranges of a bad
 * family or length are ignored. 1 when the ranges changed, 0 when they
 * were already so, -1 out of memory (the owner unchanged; or, when only
 * the new table could not be made, readers keep the old one until the
 * next change publishes). */
int pfx_set(pfx_index *x, const char *owner, const char *node, const cidr *c, size_t n);
/* Writer: the owner is gone (same as pfx_set with n 0). */
void pfx_del(pfx_index *x, const char *owner);
/* Writer: on 1, changes are kept and published only at pfx_hold(x, 0),
 * which returns 1 when it published a change (else 0). */
int pfx_hold(pfx_index *x, int on);

/* Reader (inside store_read_begin/_end), or the writer: the node whose
 * range holds ip with the longest prefix, NULL when none; *bits (may be
 * NULL) gets that prefix length. Two owners declaring the same range: the
 * node name first in byte order wins, whatever the order they came in. */
const char *pfx_find(pfx_index *x, const st_ip *ip, int *bits);
/* Ranges published (for /metrics and tests). */
size_t pfx_count(pfx_index *x);

#endif
