#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# nsid.sh — the nsid plugin in the real binary: a query with the NSID option
# gets the configured identifier (default the host name, several words
# joined), a query without it or without EDNS gets none, a forwarded reply
# carries ours instead of the upstream's, a cache hit carries it too, a bare
# error the server writes does not, and a second nsid stops start-up.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

nsid_lines() { grep -c '; NSID:' <<<"$OUT"; }
nsid_text() { grep '; NSID:' <<<"$OUT" | head -1 | sed 's/.*("\(.*\)").*/\1/'; }

start_topodns ".:{\$PORT} {
    nsid upstream
    whoami
}" || exit 1
UP=$PORT

start_topodns ".:{\$PORT} {
    nsid topodns  test
    whoami
}
host.example:{\$PORT} {
    nsid
    whoami
}
fwd.example:{\$PORT} {
    nsid front
    cache 30
    forward . 127.0.0.1:$UP
}
bare.example:{\$PORT} {
    nsid bare
}" || exit 1

q +nsid example.org A
check "NSID answered, the words joined by one space" [ "$(nsid_text)" = "topodns test" ]
check "the answer is the plugin's after nsid" rcode_is NOERROR
q +cookie=0102030405060708 +nsid example.org A
check "with NSID the reply has an OPT of its own: no COOKIE echoed (as CoreDNS)" \
    bash -c '! grep -q COOKIE <<<"$0"' "$OUT"
q example.org A
check "no NSID without the option" [ "$(nsid_lines)" -eq 0 ]
check "EDNS still echoed" opt_present
q +noedns example.org A
check "no OPT without EDNS" bash -c '! grep -q "OPT PSEUDOSECTION" <<<"$0"' "$OUT"
q +tcp +nsid example.org A
check "over TCP too" [ "$(nsid_text)" = "topodns test" ]

q +nsid a.host.example A
check "default: the host name" [ "$(nsid_text)" = "$(hostname)" ]

q +nsid a.fwd.example A
check "forwarded: one NSID" [ "$(nsid_lines)" -eq 1 ]
check "ours, not the upstream's" [ "$(nsid_text)" = front ]
q +nsid a.fwd.example A
check "a cache hit carries it too" [ "$(nsid_text)" = front ]
q +nsid -p "$UP" a.fwd.example A
check "the upstream alone answers with its own" [ "$(nsid_text)" = upstream ]

q +nsid a.bare.example A
check "no plugin answered: SERVFAIL" rcode_is SERVFAIL
check "the server's bare reply echoes the query's empty NSID, no data" \
    bash -c 'grep -q "^; NSID:\$" <<<"$0" && ! grep -q "(\"bare\")" <<<"$0"' "$OUT"

printf '.:%s {\n    nsid a {\n        data b\n    }\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a block rejected" grep -q "bad:3: unknown property 'data'" <<<"$OUT"
printf '.:%s {\n    nsid a\n    nsid b\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a second nsid rejected" grep -q "bad:3: plugin/nsid: this plugin can only be used once per Server Block" <<<"$OUT"
finish
