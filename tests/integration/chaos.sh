#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# chaos.sh — the chaos plugin and the server's class rule in the real
# binary: version.bind/version.server, authors.bind (shuffled per query),
# hostname.bind/id.server as CH TXT, TTL 0, not authoritative, owner as
# queried; other CH names and types go on; the defaults; classes other than
# IN reach the chain only on a listener with chaos or forward (then every
# block on it, every class), else REFUSED, and REFUSED before BADVERS as in
# CoreDNS; forward passes CH queries upstream; a second chaos is an error.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

VERSION=$("$TOPODNS" -version | head -1)
txt_of() { section ANSWER | awk '$3 == "CH" && $4 == "TXT"' | sed 's/.*TXT[[:space:]]*"\(.*\)"$/\1/'; }

start_topodns ".:{\$PORT} {
    chaos
}
example.org:{\$PORT} {
    whoami
}" || exit 1
P1=$PORT

q -c CH -t TXT version.bind
check "version.bind: topodns and its version" [ "$(txt_of)" = "$VERSION" ]
check "NOERROR, not authoritative" bash -c 'grep -q "status: NOERROR" <<<"$0" && ! grep -q "flags:.* aa" <<<"$0"' "$OUT"
check "class CH, TTL 0" answer_has '^version\.bind\.[[:space:]]+0[[:space:]]+CH[[:space:]]+TXT'
q -c CH -t TXT VERSION.Server
check "version.server, owner as queried" answer_has '^VERSION\.Server\.[[:space:]]+0[[:space:]]+CH[[:space:]]+TXT[[:space:]]+"topodns-'
q -c CH -t TXT hostname.bind
check "hostname.bind: the host name" [ "$(txt_of)" = "$(hostname)" ]
q -c CH -t TXT id.server
check "id.server: the host name" [ "$(txt_of)" = "$(hostname)" ]
q -c CH -t TXT authors.bind
check "authors.bind: the default" [ "$(txt_of)" = "The topodns authors" ]

q -c CH -t A version.bind
check "another type goes on (no next plugin: SERVFAIL)" rcode_is SERVFAIL
q -c CH -t TXT foo.bind
check "another name goes on" rcode_is SERVFAIL
q version.bind TXT
check "class IN goes on" rcode_is SERVFAIL
q -c CH -t TXT +edns=1 +noednsnegotiation version.bind
check "EDNS version 1 with chaos: BADVERS" rcode_is BADVERS
q -c CH -t A www.example.org
check "every block on the listener gets CH" rcode_is NOERROR
check "... answered by its plugin" additional_has '^www\.example\.org\.'
q -c ANY -t A www.example.org
check "and class ANY" rcode_is NOERROR
q -c HS -t A www.example.org
check "and class HS" rcode_is NOERROR

# configured version and authors
start_topodns ".:{\$PORT} {
    chaos MyDNS-1.0 carol alice bob alice
}
only.version:{\$PORT} {
    chaos OnlyVersion
}" || exit 1
q -c CH -t TXT version.bind
check "configured version" [ "$(txt_of)" = "MyDNS-1.0" ]
q -c CH -t TXT authors.bind
check "authors deduplicated" [ "$(txt_of | sort | tr '\n' ' ')" = "alice bob carol " ]
orders=$(for i in $(seq 1 20); do q -c CH -t TXT authors.bind; txt_of | tr '\n' ' '; echo; done | sort -u | wc -l)
OUT="distinct orders in 20 queries: $orders"
check "authors shuffled per query" [ "$orders" -gt 1 ]

# no chaos, no forward: only IN
start_topodns ".:{\$PORT} {
    whoami
}" || exit 1
P3=$PORT
q -c CH -t TXT version.bind
check "without chaos or forward: CH REFUSED" rcode_is REFUSED
q -c ANY -t A www.example.org
check "class ANY REFUSED" rcode_is REFUSED
q -c NONE -t A www.example.org
check "class NONE REFUSED" rcode_is REFUSED
q -c CH -t TXT +edns=1 +noednsnegotiation version.bind
check "class is checked before the EDNS version (REFUSED, not BADVERS)" rcode_is REFUSED
q www.example.org A
check "IN answered" rcode_is NOERROR

# forward opens every class and passes CH upstream
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$P1
}
only.local:{\$PORT} {
    whoami
}" || exit 1
q -c CH -t TXT version.bind
check "forward: CH forwarded to the upstream's chaos" [ "$(txt_of)" = "$VERSION" ]
q -c CH -t A x.only.local
check "forward's listener lets CH into the other block" rcode_is NOERROR

printf '.:%s {\n    chaos a {\n        authors b\n    }\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a block rejected" grep -q "bad:3: unknown property 'authors'" <<<"$OUT"
printf '.:%s {\n    chaos a\n    chaos b\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a second chaos rejected" grep -q "bad:3: plugin/chaos: this plugin can only be used once per Server Block" <<<"$OUT"
finish
