#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# local.sh — the local plugin in the real binary: localhost. A/AAAA/SOA/NS,
# NODATA and NXDOMAIN in the local zones with their SOA, the loopback PTR,
# names under localhost. and localhost.<domain> answered with loopback
# addresses and counted (with `localhost_prefix off` only the former), the
# DEBUG line with `debug`, other names passed on, setup errors.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

MPORT=$(free_port)
scrape() { curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MPORT/metrics"; }
TTL=604800
SOA_RDATA='localhost\. root\.localhost\. 1 0 0 0 604800'
not_aa() { ! flag_set aa; }
soa_of() { authority_has "^$1[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+SOA[[:space:]]+$SOA_RDATA$"; }
logged() {
    local i
    for i in $(seq 1 20); do
        grep -qE "$1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}

start_topodns ".:{\$PORT} {
    debug
    prometheus 127.0.0.1:$MPORT
    local
    whoami
}
off.example:{\$PORT} {
    local {
        localhost_prefix off
    }
    whoami
}" || exit 1

q localhost A
check "localhost. A 127.0.0.1" answer_has "^localhost\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+A[[:space:]]+127\.0\.0\.1$"
check "not authoritative" not_aa
q LocalHost AAAA
check "AAAA ::1, owner as queried" answer_has "^LocalHost\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+AAAA[[:space:]]+::1$"
q localhost SOA
check "apex SOA" answer_has "^localhost\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+SOA[[:space:]]+$SOA_RDATA$"
q localhost NS
check "apex NS" answer_has "^localhost\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+NS[[:space:]]+localhost\.$"
q localhost MX
check "apex MX: NODATA" bash -c 'grep -q "status: NOERROR" <<<"$0" && ! grep -q "ANSWER SECTION" <<<"$0"' "$OUT"
check "... with the SOA" soa_of 'localhost\.'
q 127.in-addr.arpa A
check "reverse apex A: NODATA" soa_of '127\.in-addr\.arpa\.'
q 0.in-addr.arpa NS
check "0.in-addr.arpa NS" answer_has 'NS[[:space:]]+localhost\.$'
q 255.in-addr.arpa SOA
check "255.in-addr.arpa SOA" answer_has 'SOA'
q -x 127.0.0.1
check "1.0.0.127.in-addr.arpa PTR localhost." answer_has "^1\.0\.0\.127\.in-addr\.arpa\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+PTR[[:space:]]+localhost\.$"
q 1.0.0.127.in-addr.arpa A
check "its A: NODATA with the zone's SOA" bash -c 'grep -q "status: NOERROR" <<<"$0"' "$OUT"
check "... SOA of 127.in-addr.arpa" soa_of '127\.in-addr\.arpa\.'
q -x 127.0.0.2
check "another 127 name: NXDOMAIN" rcode_is NXDOMAIN
check "... with the zone's SOA" soa_of '127\.in-addr\.arpa\.'
q 5.0.0.0.IN-ADDR.arpa PTR
check "the zone as queried owns the SOA" soa_of '0\.IN-ADDR\.arpa\.'

q foo.localhost A
check "a name under localhost.: 127.0.0.1" answer_has "^foo\.localhost\.[[:space:]]+$TTL[[:space:]]+IN[[:space:]]+A[[:space:]]+127\.0\.0\.1$"
q a.b.localhost AAAA
check "deeper: ::1" answer_has 'AAAA[[:space:]]+::1$'
q localhost.example.org A
check "localhost.<domain>: 127.0.0.1" answer_has '^localhost\.example\.org\..*A[[:space:]]+127\.0\.0\.1$'
check "logged at DEBUG with debug on" logged '^\[DEBUG\] plugin/local: Intercepting localhost query for "localhost\.example\.org\." A, from 127\.0\.0\.1$'
q localhost.example.org TXT
check "other types: NODATA" bash -c 'grep -q "status: NOERROR" <<<"$0" && ! grep -q "ANSWER SECTION" <<<"$0"' "$OUT"
check "... with an SOA owned by the name" soa_of 'localhost\.example\.org\.'

q www.example.org A
check "other names go on" additional_has '^www\.example\.org\..*A[[:space:]]+127\.0\.0\.1'
q localhostx.example.org A
check "a first label that only starts with localhost goes on" additional_has '^localhostx\.example\.org\.'
q -x 10.0.0.1
check "other reverse names go on" rcode_is NOERROR

q localhost.off.example A
check "localhost_prefix off: localhost.<domain> goes on" additional_has '^localhost\.off\.example\.'

M=$(scrape)
OUT=$M
check "coredns_local_localhost_requests_total counts localhost.<domain> and *.localhost (4)" \
    grep -qE '^coredns_local_localhost_requests_total 4$' <<<"$M"

bad() {  # bad "directive text" "message"
    printf '.:%s {\n    %b\n    whoami\n}\n' "$PORT" "$1" > "$TMP/bad"
    OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
    check "'$1' rejected" grep -qF "$2" <<<"$OUT"
}
bad "local example.org" "bad:2: Wrong argument count or unexpected line ending"
bad "local {\\n        localhost_prefix maybe\\n    }" "bad:3: localhost_prefix expects 'on' or 'off', got \"maybe\""
bad "local {\\n        localhost_prefix\\n    }" "bad:3: Wrong argument count or unexpected line ending"
bad "local {\\n        zones x\\n    }" "bad:3: unknown property 'zones'"
finish
