#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# any.sh — ANY gets the RFC 8482 HINFO; other types pass to the next plugin.
. "$top_srcdir/tests/integration/lib.sh"
start_topodns ".:{\$PORT} {
    any
    whoami
}"
q example.org ANY
check "NOERROR" rcode_is NOERROR
check "one HINFO RFC8482 with TTL 8482" answer_has '^example\.org\.[[:space:]]+8482[[:space:]]+IN[[:space:]]+HINFO[[:space:]]+"RFC8482" ""'
check "exactly one record" answer_count 1
check "not authoritative" bash -c '! grep -q "flags: qr aa" <<<"$0"' "$OUT"
q example.org A
check "A passes on to whoami" additional_has '_udp\.example\.org\.'
finish
