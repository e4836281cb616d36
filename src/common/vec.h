/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vec.h — growing an array by doubling, with the size arithmetic checked.
 *
 * An array is three fields of its owner: a pointer `T *v`, a count and a
 * capacity (both size_t, counted in elements). Start them at NULL/0/0.
 * Before writing element n, make room with
 *
 *     if (VEC_RESERVE(s->v, s->cap, s->n + 1) < 0) return -1;
 *     s->v[s->n++] = x;
 *
 * vec_reserve() leaves the array untouched when it already holds `need`
 * elements; otherwise it doubles the capacity (starting at `first`, or 8
 * through VEC_RESERVE) until it holds `need`, and realloc()s once. It
 * returns 0 on success and -1 when need * elsz would overflow size_t or the
 * allocation fails; on -1 the pointer, the capacity and the elements are as
 * they were, so the caller still owns (and frees) the old array.
 *
 * An array kept with a count only (no capacity field; configuration lists
 * that grow by a few elements at parse time) is resized to an exact length
 * with VEC_RESIZE(s->v, s->n + k): the same checks and the same "-1 leaves
 * it as it was" contract, without doubling.
 *
 * Ownership: the array belongs to whoever holds the pointer; free(v) frees
 * it (it is plain malloc memory). The function keeps no state and may be
 * called from any thread on an array that thread owns.
 *
 * Why not a library: uthash's utarray keeps its elements in a UT_array of
 * its own and calls exit() when an allocation fails (a server must answer
 * SERVFAIL and keep running); libevent's evbuffer is a byte chain, not a
 * typed array, and the lowest layer does not link libevent. For text built
 * piece by piece see sbuf.h, which grows through this.
 */
#ifndef TOPODNS_VEC_H
#define TOPODNS_VEC_H

#include <stddef.h>

/* Make room for `need` elements of `elsz` octets in the array *vp points to
 * (vp is the address of the owner's `T *`), whose capacity is *cap; the
 * first allocation holds max(first, need) elements (first 0 means 8).
 * 0 on success, -1 on overflow or out of memory (nothing changed). */
int vec_reserve(void *vp, size_t *cap, size_t need, size_t elsz, size_t first);

/* Resize the array *vp points to to exactly n elements of elsz octets
 * (n 0 keeps a 1-octet allocation, so the pointer stays set). 0 on success,
 * -1 on overflow or out of memory (nothing changed). */
int vec_resize(void *vp, size_t n, size_t elsz);

#define VEC_RESIZE(v, n) vec_resize(&(v), (n), sizeof *(v))
#define VEC_RESERVE(v, cap, need) vec_reserve(&(v), &(cap), (need), sizeof *(v), 0)
#define VEC_RESERVE_FROM(v, cap, need, first) \
    vec_reserve(&(v), &(cap), (need), sizeof *(v), (first))

#endif
