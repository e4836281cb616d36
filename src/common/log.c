/*
 * log.c — see log.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/log.h"

int log_quiet;

static void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[4096];
    int n = snprintf(line, sizeof line, "[%s] ", level);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    /* one write(2): lines from different threads never mix */
    ssize_t w = write(STDOUT_FILENO, line, len);
    (void)w;
}

void log_msg(const char *level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void log_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("FATAL", fmt, ap);
    va_end(ap);
    exit(1);
}
