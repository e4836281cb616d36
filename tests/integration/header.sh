#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# header.sh — the header plugin in the real binary: response rules set and
# clear aa/ra/rd on whatever a later plugin writes, the last rule for a flag
# wins, the server's own bare errors are untouched; query rules change the
# query for the plugins after header and for the upstream forward asks;
# setup errors in CoreDNS's words.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

flags() { grep -o 'flags: [a-z ]*;' <<<"$OUT" | head -1 | sed 's/flags: //; s/;//'; }

start_topodns ".:{\$PORT} {
    whoami
}" || exit 1
UP=$PORT

start_topodns "resp.example:{\$PORT} {
    header {
        response set ra
        response clear rd aa
    }
    whoami
}
last.example:{\$PORT} {
    header {
        response set ra
        response clear ra
        response set aa
    }
    whoami
}
q.example:{\$PORT} {
    header {
        query set rd
    }
    whoami
}
fwd.example:{\$PORT} {
    header {
        query clear rd
    }
    forward . 127.0.0.1:$UP
}
bare.example:{\$PORT} {
    header {
        response set ra
    }
}" || exit 1

q a.resp.example A
check "response: ra set, rd and aa cleared" [ "$(flags)" = "qr ra" ]
check "the answer itself unchanged" additional_has '^a\.resp\.example\..*A[[:space:]]+127\.0\.0\.1'
q +tcp a.resp.example A
check "over TCP too" [ "$(flags)" = "qr ra" ]
q a.last.example A
check "the last rule for a flag wins" [ "$(flags)" = "qr aa rd" ]
q +nord a.q.example A
check "query set rd: the next plugin sees RD (whoami copies it)" [ "$(flags)" = "qr aa rd" ]
q a.fwd.example A
check "query clear rd: the upstream is asked without RD" [ "$(flags)" = "qr aa" ]
q a.bare.example A
check "no plugin answered: SERVFAIL" rcode_is SERVFAIL
check "the server's bare reply keeps its flags" [ "$(flags)" = "qr rd" ]

bad() {  # bad "block line" "message" [line]
    printf '.:%s {\n    header {\n        %s\n    }\n    whoami\n}\n' "$PORT" "$1" > "$TMP/bad"
    OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
    check "'$1' rejected" grep -qF "bad:3: plugin/header: setting up rule: $2" <<<"$OUT"
}
bad "answer set aa" "invalid selector=answer should be query or response"
bad "response" "no flag action provided"
bad "response set" "invalid length for flags, at least one should be provided"
bad "response toggle aa" "unknown flag action=toggle, should be set or clear"
bad "query set cd" "unknown/unsupported flag=cd"
printf '.:%s {\n    header\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "no rule at all rejected" grep -q "bad:2: Wrong argument count or unexpected line ending" <<<"$OUT"
finish
