/*
 * goregex.h — Go (RE2) regular expressions as Corefiles write them, run
 * with the C library's POSIX extended regular expressions (regex.h).
 *
 * CoreDNS compiles `rewrite` and `template` patterns with Go's regexp
 * package. goregex_compile() translates such a pattern into a POSIX ERE:
 *
 *   translated   \d \D \w \W \s \S (in and out of brackets), \A \z, \Q...\E,
 *                \a \f \t \n \r \v, \x41 \x{41} and octal \101 escapes,
 *                escaped punctuation (\. \- \/ ...), bracket expressions with
 *                ranges, negation, [[:alpha:]] and [[:^alpha:]] classes,
 *                (?:...) non-capturing and (?P<name>...) / (?<name>...)
 *                named groups, a leading (?i), {n} {n,} {n,m} (a '{' that
 *                starts none of these is a literal, as in Go)
 *   refused      what POSIX cannot express: lazy quantifiers (*? +? ?? {n}?),
 *   (UNSUPPORTED) flags other than one leading (?i), \b \B \C \pN \p{..}
 *                \PN, bytes outside ASCII inside brackets, a NUL escape,
 *                more than 100 groups
 *   rejected     what Go itself rejects (GOREGEX_INVALID): unbalanced
 *                parentheses or brackets, a repetition without an argument
 *                or of a repetition, counts over 1000, unknown escapes,
 *                reversed ranges, duplicate or malformed group names,
 *                patterns over 10000 characters (CoreDNS's limit)
 *
 * Matching differs from Go in one way that a translation cannot remove:
 * POSIX reports the leftmost-longest match and POSIX submatches, Go the
 * leftmost-first (Perl) one. They agree on the patterns Corefiles use
 * (greedy groups, anchors, character classes); they can differ for an
 * alternation whose first branch is a prefix of a later one, `(a|ab)`.
 * Groups that did not take part in the match are reported unset (-1);
 * Go's FindStringSubmatch gives "" for them.
 *
 * Threads: a compiled goregex is immutable except for the busy flags of
 * its copies. The C library's regexec() locks the compiled pattern for the
 * whole match, so goregex keeps several compiled copies (two per CPU) and
 * goregex_match() takes a free one with an atomic flag: workers matching
 * the same pattern at once do not wait for each other; only when every
 * copy is busy does a match share the first copy (and the C library's
 * lock). Compile and free on the loading thread; match from any thread.
 */
#ifndef TOPODNS_GOREGEX_H
#define TOPODNS_GOREGEX_H

#include <stddef.h>

#define GOREGEX_MAX_LEN 10000
#define GOREGEX_MAX_GROUPS 100

enum { GOREGEX_OK = 0, GOREGEX_INVALID = -1, GOREGEX_UNSUPPORTED = -2 };

typedef struct goregex goregex;

/* Compile a Go pattern. GOREGEX_OK with *out set, or GOREGEX_INVALID /
 * GOREGEX_UNSUPPORTED with *out NULL and a message naming the construct in
 * err ("lazy quantifier `*?` is not supported"). */
int goregex_compile(const char *pattern, goregex **out, char *err, size_t errlen);
void goregex_free(goregex *g);
/* Capturing groups of the Go pattern (Go's NumSubexp). */
size_t goregex_ngroups(const goregex *g);
/* Name of group i (0..ngroups), "" for an unnamed one (Go's SubexpNames). */
const char *goregex_name(const goregex *g, size_t i);
/* The pattern as written. */
const char *goregex_source(const goregex *g);
/* Search s. m (NULL, or room for 2 * (ngroups + 1) values) receives the
 * start and end offset of the match and of every group, -1 for a group that
 * did not take part. 1 on a match, 0 otherwise. */
int goregex_match(goregex *g, const char *s, long *m);

#endif
