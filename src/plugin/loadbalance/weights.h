/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weights.h — the `weighted` policy's weight table (loadbalance.c).
 *
 * A weight file, as CoreDNS's loadbalance documents it:
 *
 *   # comment lines (a '#' first on the line) and empty lines are skipped
 *   www.example.com          a domain name on a line of its own
 *   100.64.1.1 3             then "ADDRESS WEIGHT" lines, WEIGHT in 1..255
 *   100.64.1.2 1
 *
 * lbw_parse() builds an immutable table from such text (the reload thread,
 * or setup); the table is read by the workers through an RCU-published
 * pointer (loadbalance.c) and freed by lbw_free() after a grace period.
 * lbw_top() is the weighted choice of the address record that goes first:
 * a record's weight is its owner's entry for its address, 1 without one;
 * record i is picked with probability weight_i / sum of weights.
 */
#ifndef TOPODNS_LB_WEIGHTS_H
#define TOPODNS_LB_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct lbw_table lbw_table;

/* NULL with err set ("wrong weight value:\"0\" in weight file F", ...) when
 * the text is not a weight file, or on out of memory. `path` only names the
 * file in messages. */
lbw_table *lbw_parse(const char *text, const char *path, char *err, size_t errlen);
void lbw_free(lbw_table *t);
/* Entries (address lines) in the table. */
size_t lbw_entries(const lbw_table *t);

/* The weight of an address (family 4: 4 octets, 6: 16) under the lower-cased
 * wire name `owner`: 1..255, 1 when the table names none. t may be NULL. */
unsigned lbw_weight(const lbw_table *t, const uint8_t *owner, int family, const uint8_t *addr);

/* Index in 0..n-1 of the record to put first, given each record's weight
 * (1..255) and a uniform random value r in [0, sum of weights). */
unsigned lbw_pick(const unsigned *weights, unsigned n, uint32_t r);

#endif
