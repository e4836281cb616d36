/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dname.h — domain names in uncompressed wire form.
 *
 * Every name inside topodns is kept as a sequence of length-prefixed labels
 * ending in the root label (0), at most DNAME_MAX (255) octets, exactly as it
 * is on the wire without compression. Comparisons are ASCII case-insensitive
 * (RFC 4343); the original case is kept so answers echo the question's case.
 *
 * Pure functions over caller-owned buffers: no state, any thread.
 */
#ifndef TOPODNS_DNAME_H
#define TOPODNS_DNAME_H

#include <stddef.h>
#include <stdint.h>

#define DNAME_MAX 255
/* Longest presentation form: every octet escaped as \DDD plus dots. */
#define DNAME_STR_MAX 1024

/* Length of a well-formed wire name, root label included. */
size_t dname_len(const uint8_t *dn);
/* Number of labels, the root not counted ("." has 0). */
int dname_labels(const uint8_t *dn);
/* Parse presentation form ("a.b.", "a.b" or "."; \X and \DDD escapes) into
 * out. Returns the wire length, or -1 when the text is not a valid name. */
int dname_from_str(uint8_t *out, const char *s);
/* Presentation form with a trailing dot; returns its length. */
size_t dname_to_str(char *out, size_t cap, const uint8_t *dn);
/* ASCII lower-case in place. */
void dname_lower(uint8_t *dn);
/* Case-insensitive equality. */
int dname_equal(const uint8_t *a, const uint8_t *b);
/* 1 when name equals zone or lies below it (case-insensitive). */
int dname_is_sub(const uint8_t *name, const uint8_t *zone);
/* Pointer to the suffix of dn that has `labels` labels (0 → the root). */
const uint8_t *dname_suffix(const uint8_t *dn, int labels);
/* Every suffix of a well-formed dn at once, for matching it against many
 * zones: at[j] is the suffix after j labels, so the suffix with k labels is
 * at[n - k] and at[n] the root. at holds DNAME_SUFFIXES pointers. Returns
 * n, the labels of dn. */
#define DNAME_SUFFIXES (DNAME_MAX / 2 + 1)
int dname_suffixes(const uint8_t *dn, const uint8_t **at);
/* Canonical ordering (RFC 4034 6.1): <0, 0, >0. */
int dname_compare(const uint8_t *a, const uint8_t *b);
/* Case-insensitive hash of a wire name. */
uint32_t dname_hash(const uint8_t *dn);

#endif
