#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dns64.sh — DNS64 (RFC 6147) with the file plugin behind it: AAAA
# synthesized from A for IPv6 clients (any client with allow_ipv4), names
# with AAAA records and NXDOMAIN left alone, CNAME chains kept, the TTL
# capped by the SOA's, custom prefixes laid out as RFC 6052 says,
# translate_all, the metric, and start-up errors.
. "$top_srcdir/tests/integration/lib.sh"
cat > "$TMP/d64.zone" <<'Z'
$ORIGIN d64.test.
@       60  IN SOA ns.d64.test. hostmaster.d64.test. 1 7200 1800 86400 30
@       300 IN NS  ns.d64.test.
ns      300 IN A   10.0.0.53
v4only  300 IN A   192.0.2.1
v4only  300 IN A   192.0.2.2
short   20  IN A   192.0.2.3
both    300 IN A   192.0.2.4
both    300 IN AAAA 2001:db8::4
alias   300 IN CNAME v4only.d64.test.
Z
ip -6 addr show lo 2>/dev/null | grep -q '::1/128' || skip "no IPv6 loopback"
MPORT=$(free_port)
start_topodns "d64.test:{\$PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:$MPORT
    dns64
    file $TMP/d64.zone
}" || exit 1
q6() { OUT=$(dig @::1 -p "$PORT" +time=2 +tries=1 "$@" 2>&1); }

q6 v4only.d64.test AAAA
check "IPv6 client: AAAA synthesized from each A (64:ff9b::/96)" eval 'answer_count 2 &&
    answer_has "^v4only\.d64\.test\..*IN[[:space:]]+AAAA[[:space:]]+64:ff9b::c000:201$" &&
    answer_has "AAAA[[:space:]]+64:ff9b::c000:202$"'
check "synthesized TTL: the A's 300 capped by the SOA's 60 (5.1.7)" answer_has '^v4only\.d64\.test\.[[:space:]]+60[[:space:]]'
check "synthesized reply: NOERROR" rcode_is NOERROR
q6 short.d64.test AAAA
check "an A TTL under the SOA's is kept" answer_has '^short\.d64\.test\.[[:space:]]+20[[:space:]]+IN[[:space:]]+AAAA[[:space:]]+64:ff9b::c000:203$'
q6 both.d64.test AAAA
check "a name with AAAA records keeps them, none synthesized" eval 'answer_count 1 && answer_has "AAAA[[:space:]]+2001:db8::4$"'
q6 nosuch.d64.test AAAA
check "NXDOMAIN stays NXDOMAIN (5.1.2)" eval 'rcode_is NXDOMAIN && answer_count 0'
q6 alias.d64.test AAAA
check "a CNAME is kept, its target's A become AAAA" eval 'answer_has "^alias\.d64\.test\..*CNAME[[:space:]]+v4only\.d64\.test\.$" &&
    answer_has "^v4only\.d64\.test\..*AAAA[[:space:]]+64:ff9b::c000:201$"'
q6 v4only.d64.test A
check "A questions untouched" eval 'answer_count 2 && answer_has "A[[:space:]]+192\.0\.2\.1$"'
q v4only.d64.test AAAA
check "IPv4 client without allow_ipv4: plain NODATA" eval 'rcode_is NOERROR && answer_count 0 && authority_has SOA'
OUT=$(curl -s "http://127.0.0.1:$MPORT/metrics")
check "coredns_dns64_requests_translated_total counts the translations" \
    grep -qE '^coredns_dns64_requests_translated_total\{server="dns://(127\.0\.0\.1|\[::1\]):[0-9]+"\} [1-9]' <<<"$OUT"
stop_topodns

# the block form: a /32 prefix (RFC 6052: the address right after it),
# translate_all (names with AAAA too), allow_ipv4 (IPv4 clients too)
start_topodns "d64.test:{\$PORT} {
    dns64 {
        prefix 2001:db8::/32
        translate_all
        allow_ipv4
    }
    file $TMP/d64.zone
}" || exit 1
q v4only.d64.test AAAA
check "allow_ipv4: IPv4 clients get the synthesis" answer_has 'AAAA[[:space:]]+2001:db8:c000:201::$'
q both.d64.test AAAA
check "translate_all: the AAAA record is replaced by the synthesis" eval 'answer_count 1 && answer_has "AAAA[[:space:]]+2001:db8:c000:204::$"'
stop_topodns
# a /40 prefix skips octet 8 (the u octet)
start_topodns "d64.test:{\$PORT} {
    dns64 2001:db8:100::/40 {
        allow_ipv4
    }
    file $TMP/d64.zone
}" || exit 1
q v4only.d64.test AAAA
check "/40: three octets, octet 8 zero, then the last" answer_has 'AAAA[[:space:]]+2001:db8:1c0:2:1::$'
stop_topodns

# an upstream reached by forward: the A question runs asynchronously and the
# reply is held until it is back
start_topodns "d64.test:{\$PORT} {
    file $TMP/d64.zone
}" || exit 1
UP_PORT=$PORT UP_PID=$TOPO_PID
start_topodns ".:{\$PORT} {
    dns64 {
        allow_ipv4
    }
    forward . 127.0.0.1:$UP_PORT
}" || exit 1
q v4only.d64.test AAAA
check "through forward: synthesized once the A reply is back" eval 'answer_count 2 &&
    answer_has "AAAA[[:space:]]+64:ff9b::c000:201$" && answer_has "AAAA[[:space:]]+64:ff9b::c000:202$"'
q both.d64.test AAAA
check "through forward: the upstream's AAAA kept" eval 'answer_count 1 && answer_has "AAAA[[:space:]]+2001:db8::4$"'
stop_topodns
kill "$UP_PID" 2>/dev/null; wait "$UP_PID" 2>/dev/null

# start-up errors name the Corefile's line
bad() {   # NAME DNS64-LINE EXPECTED
    printf 'd64.test:%s {\n    %s\n    file %s\n}\n' "$(free_port)" "$2" "$TMP/d64.zone" > "$TMP/C.$1"
    OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.$1" 2>&1); rc=$?
    check "dns64 $1: start-up stops" eval '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
    check "dns64 $1: C.$1:2 and the reason" grep -qF "C.$1:2: plugin/dns64: $3" <<<"$OUT"
}
bad v4 'dns64 10.0.0.0/8' 'invalid netmask 32 IPv6 address: "10.0.0.0/8"'
bad len 'dns64 64:ff9b::/95' 'invalid prefix length "64:ff9b::/95"'
bad short 'dns64 2001:db8::/24' 'invalid prefix length "2001:d00::/24"'
bad prop 'dns64 { nat64 }' "unknown property 'nat64'"
bad cidr 'dns64 nonsense' 'invalid CIDR address: nonsense'
finish
