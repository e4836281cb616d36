/* SPDX-License-Identifier: Apache-2.0 */
/*
 * log.h — process log lines as CoreDNS prints them: "[LEVEL] message" on
 * standard output, one write per line so threads never interleave. A line
 * is at most 4096 bytes. Control characters in the message are escaped
 * (\n \r \t, the others \xNN), so nothing a message carries (a URL, a
 * name, an API object's field) can end a line early or forge another.
 * Backslashes are written as they are.
 */
#ifndef TOPODNS_LOG_H
#define TOPODNS_LOG_H

void log_msg(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_info(...) log_msg("INFO", __VA_ARGS__)
#define log_warning(...) log_msg("WARNING", __VA_ARGS__)
#define log_error(...) log_msg("ERROR", __VA_ARGS__)
#define log_debug(...) log_msg("DEBUG", __VA_ARGS__)
/* A "[LEVEL] head" line followed by the lines of body as they are (a hex
 * dump), in one write; control characters within lines are escaped as in
 * log_msg, so body's newlines only ever separate its own lines. */
void log_block(const char *level, const char *head, const char *body);
/* Logs at FATAL and exits with status 1. */
void log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
