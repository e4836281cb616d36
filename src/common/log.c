/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.c — see log.h.
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/log.h"

#define LINE_MAX_BYTES 4096


/* The escape of control character c into e (at most 4 bytes + NUL); its
 * length. */
static size_t escape_one(unsigned char c, char e[5])
{
    static const char hex[] = "0123456789abcdef";
    char named = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : 0;
    e[0] = '\\';
    if (named) {
        e[1] = named;
        return 2;
    }
    e[1] = 'x';
    e[2] = hex[c >> 4];
    e[3] = hex[c & 15];
    return 4;
}

/* s with its control characters escaped into out (at most cap bytes, never
 * half an escape); the length written. */
static size_t escape_controls(const char *s, char *out, size_t cap)
{
    size_t o = 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char e[5];
        size_t n = c < 0x20 || c == 0x7f ? escape_one(c, e) : (e[0] = (char)c, 1);
        if (o + n > cap)
            break;
        for (size_t i = 0; i < n; i++)
            out[o++] = e[i];
    }
    return o;
}

/* One write(2) per line, so lines from different threads never mix; no
 * byte of the message can end the line early or start another. */
static void vlog(const char *level, const char *fmt, va_list ap)
{
    char msg[LINE_MAX_BYTES], line[LINE_MAX_BYTES];
    vsnprintf(msg, sizeof msg, fmt, ap);
    int n = snprintf(line, sizeof line, "[%s] ", level);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof line - 1 ? (size_t)n : sizeof line - 1;
    len += escape_controls(msg, line + len, sizeof line - 1 - len);
    line[len++] = '\n';
    ssize_t w = write(STDOUT_FILENO, line, len);
    (void)w;
}

void log_msg(const char *level, const char *fmt, ...)
{
    assert(level && fmt);
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void log_block(const char *level, const char *head, const char *body)
{
    assert(level && head && body);
    char buf[LINE_MAX_BYTES * 4];
    int n = snprintf(buf, sizeof buf, "[%s] ", level);
    size_t len = n < 0 ? 0 : (size_t)n;
    len += escape_controls(head, buf + len, LINE_MAX_BYTES - 1 - len);
    buf[len++] = '\n';
    for (const char *s = body; *s && len < sizeof buf - 1;) {
        size_t l = strcspn(s, "\n");
        char one[LINE_MAX_BYTES];
        size_t k = l < sizeof one - 1 ? l : sizeof one - 1;
        memcpy(one, s, k);
        one[k] = '\0';
        size_t room = sizeof buf - 1 - len;
        len += escape_controls(one, buf + len, room);
        if (len < sizeof buf)
            buf[len++] = '\n';
        s += l + (s[l] == '\n');
    }
    ssize_t w = write(STDOUT_FILENO, buf, len);
    (void)w;
}

void log_fatal(const char *fmt, ...)
{
    assert(fmt);
    va_list ap;
    va_start(ap, fmt);
    vlog("FATAL", fmt, ap);
    va_end(ap);
    exit(1);
}
