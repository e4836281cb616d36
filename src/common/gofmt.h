/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gofmt.h — the few Go formatting rules that CoreDNS's log and errors
 * plugins show to users, reproduced so that topodns prints exactly the same
 * text:
 *
 *   go_seconds()        time.Duration.Seconds() printed with
 *                       strconv.AppendFloat(b, s, 'f', -1, 64): the shortest
 *                       decimal that reads back as the same float64
 *                       ("0.000123456", "2", "0.1").
 *   go_duration_str()   time.Duration.String(): "30s", "5m0s", "1h0m0s",
 *                       "1.5s", "250ms", "0s".
 *
 * Used by src/plugin/{log,errors}. Parsing durations is the Corefile's
 * business: cf_go_duration() in src/corefile/corefile.h.
 */
#ifndef TOPODNS_GOFMT_H
#define TOPODNS_GOFMT_H

#include <stddef.h>
#include <stdint.h>

/* Writes the seconds of a duration of ns nanoseconds (without the "s"
 * suffix) into out; returns the length (out is always NUL-terminated). */
size_t go_seconds(int64_t ns, char *out, size_t cap);

/* Go's Duration.String() of ns nanoseconds. out should hold 32 octets. */
size_t go_duration_str(int64_t ns, char *out, size_t cap);

#endif
