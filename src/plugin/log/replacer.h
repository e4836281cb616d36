/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replacer.h — query-log formats and response classes (CoreDNS's
 * plugin/pkg/replacer and plugin/pkg/response, as the log plugin uses them).
 *
 * A format string is compiled once, at setup, into a list of nodes: literal
 * text, a known placeholder ({type} {name} {class} {proto} {size} {remote}
 * {port} {local} {>id} {>opcode} {>do} {>bufsize} {rcode} {rsize}
 * {duration} {>rflags}) or a metadata label ({/NAME}). Scanning follows
 * CoreDNS: find the next '}', take the last '{' before it; an unknown
 * placeholder is kept as literal text together with what precedes it.
 * A metadata label renders as the request's value (req_meta_get: the
 * metadata plugin collected it from a provider such as kubernetes), or "-"
 * when there is none, as CoreDNS prints when metadata is not enabled.
 *
 * Rendering reads only the finished request (query, reply, addresses,
 * timings), so it runs from a req_on_done hook on the worker thread without
 * taking locks.
 */
#ifndef TOPODNS_LOG_REPLACER_H
#define TOPODNS_LOG_REPLACER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "server/request.h"

#define LOG_COMMON_FORMAT "{remote}:{port} - {>id} \"{type} {class} {name} {proto} {size} " \
                          "{>do} {>bufsize}\" {rcode} {>rflags} {rsize} {duration}"
#define LOG_COMBINED_FORMAT LOG_COMMON_FORMAT " \"{>opcode}\""

typedef struct log_format log_format;

/* Compile a format; {common} and {combined} are expanded first, as CoreDNS's
 * setup does. NULL only when out of memory. */
log_format *logfmt_compile(const char *fmt);
void logfmt_free(log_format *f);
/* Render a finished request. now_ns is the monotonic clock (for
 * {duration}). The line is NUL-terminated and cut at cap-1 octets; returns
 * its length. */
size_t logfmt_render(const log_format *f, const dns_req *r, uint64_t now_ns, char *out,
                     size_t cap);
/* Number of nodes, and whether node i is a placeholder (for tests). */
size_t logfmt_nodes(const log_format *f);

/* Response classes (plugin/pkg/response/classify.go). */
enum { LOG_CLASS_ALL = 0, LOG_CLASS_SUCCESS = 1, LOG_CLASS_DENIAL = 2, LOG_CLASS_ERROR = 3 };
/* "all", "success", "denial", "error" → class; -1 otherwise. */
int log_class_from_str(const char *s);
/* Response types (plugin/pkg/response/typify.go). */
enum { LOG_TYPE_NOERROR, LOG_TYPE_NXDOMAIN, LOG_TYPE_SERVERERROR, LOG_TYPE_NODATA,
       LOG_TYPE_DELEGATION, LOG_TYPE_META, LOG_TYPE_UPDATE, LOG_TYPE_OTHERERROR };
/* Type of a reply as CoreDNS's Typify decides it; now is the wall clock,
 * for RRSIG validity. */
int log_typify(const dns_msg *resp, time_t now);
/* "NOERROR", "NXDOMAIN", "SERVERERROR", "NODATA", "DELEGATION", "META",
 * "UPDATE", "OTHERERROR" (the {/log/type} metadata). */
const char *log_type_name(int type);
/* Classify: success for a positive answer or delegation, denial for
 * NXDOMAIN and NODATA, error for everything else. */
int log_class_of(int type);
/* "all", "success", "denial", "error" (the {/log/class} metadata). */
const char *log_class_name(int cls);
/* log_class_of(log_typify(resp, now)). */
int log_classify(const dns_msg *resp, time_t now);

/* The uncompressed size of a reply as CoreDNS's recorder counts it: header,
 * question and records, without the OPT record the server echoes. */
size_t log_reply_len(const dns_msg *m);

#endif
