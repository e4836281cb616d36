#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# whoami.sh — whoami reports the client's address, port and transport.
. "$top_srcdir/tests/integration/lib.sh"

start_topodns ".:{\$PORT} {
    whoami
}"
q -b 127.0.0.2 example.org A
check "NOERROR" rcode_is NOERROR
check "authoritative" aa_set
check "empty answer" answer_count 0
check "client address follows the source" additional_has '^example\.org\.[[:space:]]+0[[:space:]]+IN[[:space:]]+A[[:space:]]+127\.0\.0\.2'
check "udp SRV with a port and root target" additional_has '^_udp\.example\.org\.[[:space:]]+0[[:space:]]+IN[[:space:]]+SRV[[:space:]]+0 0 [0-9]+ \.$'
q +tcp ExAmPle.org A
check "tcp SRV, question case kept" additional_has '^_tcp\.ExAmPle\.org\.'
printf '.:%s {\n    whoami extra\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "argument rejected with file:line" grep -q "bad:2: Wrong argument count" <<<"$OUT"
finish
