/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbuf.h — a growing, NUL-terminated string buffer.
 *
 * Start with `sbuf b = { 0 };`, append, then take b.p (NULL when nothing
 * was added) and free() it. An allocation failure sets b.oom and makes the
 * later appends do nothing, so callers check once at the end.
 *
 * A buffer belongs to its caller's thread; the functions keep no state.
 * While b.p is set, b.p[b.len] is the NUL and b.len < b.cap (asserted).
 * It grows by doubling through vec_reserve() (vec.h), from 256 octets.
 *
 * Why not libevent's evbuffer: the callers want one NUL-terminated string
 * at the end (evbuffer would need a pullup and a copy), and this lowest
 * layer does not link libevent; uthash's utstring exit()s when out of
 * memory.
 */
#ifndef TOPODNS_SBUF_H
#define TOPODNS_SBUF_H

#include <stddef.h>

typedef struct sbuf {
    char *p;
    size_t len, cap;
    int oom;
} sbuf;

void sbuf_add(sbuf *b, const char *s, size_t n);
void sbuf_str(sbuf *b, const char *s);
/* printf-style, any length. */
void sbuf_fmt(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
