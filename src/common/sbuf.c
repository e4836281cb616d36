/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sbuf.c — the growing string buffer of sbuf.h.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/sbuf.h"
#include "common/vec.h"

/* Room for n more octets and the NUL; sets oom on failure. */
static int room(sbuf *b, size_t n)
{
    assert(b->len < b->cap || !b->p);       /* a buffer in use always holds its NUL */
    if (b->oom)
        return -1;
    if (n > (size_t)-1 - b->len - 1 || vec_reserve(&b->p, &b->cap, b->len + n + 1, 1, 256) < 0) {
        b->oom = 1;
        return -1;
    }
    return 0;
}

void sbuf_add(sbuf *b, const char *s, size_t n)
{
    assert(b && (s || n == 0));
    if (room(b, n) < 0)
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void sbuf_str(sbuf *b, const char *s)
{
    assert(b && s);
    sbuf_add(b, s, strlen(s));
}

void sbuf_fmt(sbuf *b, const char *fmt, ...)
{
    assert(b && fmt);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0 || room(b, (size_t)n) < 0)
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}
