/* SPDX-License-Identifier: Apache-2.0 */
/*
 * goregex.h — Go regular expressions (Go's regexp package, as CoreDNS's
 * rewrite, template and errors plugins compile them), run by RE2.
 *
 * Go's regexp is a port of RE2: the same syntax, leftmost-first matching
 * (`(a|ab)(c|bcd)(d*)` on "abcd" gives "a", "bcd", ""), lazy quantifiers,
 * \b, named groups, flags, Unicode classes, and time linear in the text.
 * goregex.cc is a small C shim over the C++ library (Debian libre2-dev).
 * RE2 runs with Go's defaults: UTF-8, leftmost-first (not longest), Perl
 * classes and \b, ^ and $ at the ends of the text unless (?m), `.` not
 * matching \n unless (?s), case-sensitive unless (?i).
 *
 * Where the RE2 we link (2022) and Go differ, the shim does as Go does:
 *   - `(?<name>re)` (Go 1.22) is read as `(?P<name>re)`;
 *   - `\C` (any byte) is refused;
 *   - capturing groups nested 1000 deep are refused ("expression nests too
 *     deeply": Go limits the height of the parsed pattern to 1000, and
 *     such a pattern is at least 1001 high).
 * Bounds, all checked by goregex_compile() at startup:
 *   - a pattern is at most GOREGEX_MAX_LEN characters (CoreDNS's limit);
 *   - a repeat count is at most 1000, alone or multiplied by the repeats
 *     around it (`(a{100}){100}` is refused), as Go;
 *   - the compiled program and the DFA caches of one pattern together stay
 *     within about GOREGEX_MAX_MEM (RE2's max_mem: its own accounting of
 *     program and DFA states; a full DFA cache is flushed, and RE2 falls
 *     back to its NFA, still linear); a pattern whose program would not fit
 *     is refused ("expression too large"). That caps RE2's byte-level
 *     program near half a million instructions where Go's own limit is 3.3
 *     million of its instructions: what Go accepts and topodns refuses is a
 *     pattern that large, an 800-character literal repeated 1000 times, or
 *     a Unicode class (hundreds of byte ranges) repeated hundreds of times,
 *     `\pL{1000}`.
 * Errors read as Go's: "error parsing regexp: CODE: `EXPR`".
 *
 * Memory and threads: goregex_compile() allocates the goregex (the loading
 * thread); goregex_free() frees it once no thread matches with it any more.
 * One compiled object serves every worker: goregex_match() may run on any
 * number of threads at once (RE2's matching is const and thread-safe; its
 * DFA cache belongs to the object, is shared, and stays within the budget).
 */
#ifndef TOPODNS_GOREGEX_H
#define TOPODNS_GOREGEX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GOREGEX_MAX_LEN 10000
#define GOREGEX_MAX_MEM (8 << 20)       /* bytes: program + DFA caches */
#define GOREGEX_MAX_NEST 1000          /* capturing groups nested this deep */

enum { GOREGEX_OK = 0, GOREGEX_INVALID = -1 };

typedef struct goregex goregex;

/* Compile a Go pattern. GOREGEX_OK with *out set, or GOREGEX_INVALID with
 * *out NULL and Go's message in err ("error parsing regexp: invalid repeat
 * count: `{1001}`", "out of memory"). */
int goregex_compile(const char *pattern, goregex **out, char *err, size_t errlen);
void goregex_free(goregex *g);
/* Capturing groups of the pattern (Go's NumSubexp). */
size_t goregex_ngroups(const goregex *g);
/* Name of group i (0..ngroups), "" for an unnamed one (Go's SubexpNames). */
const char *goregex_name(const goregex *g, size_t i);
/* The pattern as written. */
const char *goregex_source(const goregex *g);
/* Search s for the leftmost-first match (Go's FindStringSubmatchIndex).
 * m receives, for the first nm groups (group 0 is the whole match), the
 * start and end offsets, -1 for a group that did not take part or does not
 * exist; m may be NULL when nm is 0 (a yes/no answer, the cheapest). 1 on a
 * match, 0 otherwise (or when memory runs out). */
int goregex_match(const goregex *g, const char *s, long *m, size_t nm);

#ifdef __cplusplus
}
#endif

#endif
