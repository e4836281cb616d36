#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# acl.sh — the acl plugin in the real binary, clients on distinct 127.x
# addresses: block (REFUSED, EDE 15), filter (NOERROR empty, EDE 17), drop
# (no reply, over UDP and TCP), allow; the first matching policy of a rule
# decides, allow ends the check, a rule without a match leaves the query to
# the next rule; zones; the blocked reply's OPT record even without EDNS;
# the four metrics; the log line of a dropped query; setup errors.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

MPORT=$(free_port)
scrape() { curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MPORT/metrics"; }
ede_is() { grep -qE "; EDE: $1" <<<"$OUT"; }
no_reply() { grep -qE 'timed out|no servers could be reached' <<<"$OUT"; }
logged() {
    local i
    for i in $(seq 1 20); do
        grep -qE "$1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}

start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    log . \"{remote} {type} {name} {rcode} {rsize}\"
    acl example.org {
        block type A net 127.0.0.2
        filter type AAAA net 127.0.0.3/32
        drop net 127.0.0.4
        allow net 127.0.0.0/8
        block
    }
    acl {
        block type TXT
        allow type A AAAA
    }
    acl sub.other.net other.net {
        filter net 127.0.0.6/31
    }
    whoami
}" || exit 1

q -b 127.0.0.2 www.example.org A
check "block: REFUSED" rcode_is REFUSED
check "block: EDE 15 Blocked" ede_is '15 \(Blocked\)'
check "block: not authoritative, empty" bash -c '! grep -q "flags:.* aa" <<<"$0" && ! grep -q "ANSWER SECTION" <<<"$0"' "$OUT"
check "block: the client's UDP size echoed" grep -q 'udp: 1232' <<<"$OUT"
check "block: DO not set for a query without it" bash -c '! grep -q "flags: do" <<<"$0"' "$OUT"
q -b 127.0.0.2 +noedns www.example.org A
check "block without EDNS: REFUSED" rcode_is REFUSED
check "block without EDNS: an OPT anyway (CoreDNS's), UDP 4096 and DO" \
    grep -qE 'EDNS: version: 0, flags: do; udp: 4096' <<<"$OUT"
check "block without EDNS: EDE 15" ede_is '15'
q -b 127.0.0.2 www.example.org AAAA
check "the first matching policy decides: AAAA from .2 allowed" rcode_is NOERROR
check "and answered by the next plugin" additional_has '127\.0\.0\.2'

q -b 127.0.0.3 www.example.org AAAA
check "filter: NOERROR" rcode_is NOERROR
check "filter: empty" bash -c '! grep -qE "ANSWER SECTION|ADDITIONAL SECTION" <<<"$0"' "$OUT"
check "filter: EDE 17 Filtered" ede_is '17 \(Filtered\)'
q -b 127.0.0.3 www.example.org A
check "filter only AAAA" bash -c 'grep -q "status: NOERROR" <<<"$0" && grep -q "ADDITIONAL SECTION" <<<"$0"' "$OUT"

q -b 127.0.0.4 www.example.org A
check "drop: no reply over UDP" no_reply
q -b 127.0.0.4 +tcp www.example.org A
check "drop: no reply over TCP" no_reply
check "drop: logged with no rcode" logged '^\[INFO\] 127\.0\.0\.4 A www\.example\.org\. - 0$'

q -b 127.0.0.5 www.example.org TXT
check "allow ends the check: TXT of example.org passes" rcode_is NOERROR
q -b 127.0.0.5 www.example.net TXT
check "the second rule (block zones) blocks TXT elsewhere" rcode_is REFUSED
q -b 127.0.0.5 www.example.net A
check "allow type A elsewhere" rcode_is NOERROR
q -b 127.0.0.5 www.example.net MX
check "no policy matched: on to the next plugin" rcode_is NOERROR
q -b 127.0.0.7 a.sub.other.net MX
check "a third rule: filter from .6/31" ede_is 17
q -b 127.0.0.8 a.sub.other.net MX
check "but not from .8" rcode_is NOERROR

# metrics (labels in the order /metrics prints them)
M=$(scrape)
OUT=$M
S="server=\"dns://:$PORT\""
check "blocked counted per zone" grep -qE "^coredns_acl_blocked_requests_total\{$S,view=\"\",zone=\"example\.org\.\"\} 2$" <<<"$M"
check "blocked in the second rule's zone" grep -qE "^coredns_acl_blocked_requests_total\{$S,view=\"\",zone=\"\.\"\} 1$" <<<"$M"
check "filtered counted" grep -qE "^coredns_acl_filtered_requests_total\{$S,view=\"\",zone=\"example\.org\.\"\} 1$" <<<"$M"
check "filtered: the longest zone of the rule" grep -qE "^coredns_acl_filtered_requests_total\{$S,view=\"\",zone=\"sub\.other\.net\.\"\} 1$" <<<"$M"
check "dropped counted (UDP and TCP)" grep -qE "^coredns_acl_dropped_requests_total\{$S,view=\"\",zone=\"example\.org\.\"\} 2$" <<<"$M"
check "allowed counted without a zone" grep -qE "^coredns_acl_allowed_requests_total\{$S,view=\"\"\} [0-9]+$" <<<"$M"
check "a dropped query is a response NOERROR written by nobody" \
    grep -qE "^coredns_dns_responses_total\{plugin=\"\",rcode=\"NOERROR\",$S,view=\"\",zone=\"\.\"\} 2$" <<<"$M"
check "blocked replies are the acl plugin's" \
    grep -qE "^coredns_dns_responses_total\{plugin=\"acl\",rcode=\"REFUSED\",$S,view=\"\",zone=\"\.\"\} 3$" <<<"$M"

# setup errors
bad() {  # bad "acl block" "expected message"
    printf '.:%s {\n    acl {\n        %s\n    }\n    whoami\n}\n' "$PORT" "$1" > "$TMP/bad"
    OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
    check "'$1' rejected" grep -qF "bad:3: $2" <<<"$OUT"
}
bad "permit" "unexpected token \"permit\"; expect 'allow', 'block', 'filter' or 'drop'"
bad "block type" "no token specified in \"type\" section"
bad "block net" "no token specified in \"net\" section"
bad "block type XYZ" "unexpected token \"XYZ\"; expect legal QTYPE"
bad "block type a" "unexpected token \"a\"; expect legal QTYPE"
bad "block net 300.0.0.1" "illegal CIDR notation \"300.0.0.1/32\""
bad "block net 10.0.0.0/33" "illegal CIDR notation \"10.0.0.0/33\""
bad "block host 10.0.0.1" "unexpected token \"host\"; expect 'type | net'"
finish
