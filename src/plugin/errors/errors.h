/* SPDX-License-Identifier: Apache-2.0 */
/*
 * errors.h — the errors plugin's pieces that tests drive directly:
 * consolidation counting and the periodic summary.
 *
 * An errors instance holds the `consolidate` patterns of its block. A
 * worker that sees a plugin error calls errors_report(): when the text
 * matches a pattern the error is counted (atomically) instead of logged; the
 * first count of a period arms the pattern's deadline, and a background
 * thread (one per instance with patterns, never a DNS worker) logs
 * "N errors like '<re>' occurred in last <dur>" when the deadline passes.
 */
#ifndef TOPODNS_ERRORS_H
#define TOPODNS_ERRORS_H

#include <stddef.h>
#include <stdint.h>

typedef struct errors_inst errors_inst;

/* Test hooks: an instance without a Corefile, patterns added by hand. */
errors_inst *errors_new(void);
/* re: a Go regular expression (common/goregex.h). level: "warning", "error",
 * "info", "debug"; NULL = error. 0 or -1 with err (Go's "error parsing
 * regexp: ..." for a bad pattern). */
int errors_add_pattern(errors_inst *e, const char *re, int64_t period_ns, const char *level,
                       int show_first, char *err, size_t errlen);
int errors_start_timer(errors_inst *e);
/* Report one error (what the done hook does): logs it or counts it. */
void errors_report(errors_inst *e, int rcode, const char *qname, const char *qtype,
                   const char *text);
/* Current count of pattern i (for tests). */
uint32_t errors_pattern_count(errors_inst *e, size_t i);
void errors_stop(errors_inst *e);
void errors_free(errors_inst *e);

#endif
