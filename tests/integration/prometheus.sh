#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# prometheus.sh — the prometheus plugin against the real topodns: /metrics
# content after real queries (exact counts, labels, sizes), sharing one
# listener between blocks, bind labels and IPv6 family, startup errors.
. "$top_srcdir/tests/integration/lib.sh"

MP=$(free_port)
URL="http://127.0.0.1:$MP/metrics"

scrape() { curl -s --noproxy '*' --max-time 5 "$URL"; }
# mval 'name{labels}' [text]: the value of one series (0 when absent)
mval() {
    local text=${2:-$(scrape)}
    awk -v k="$1" 'index($0, k " ") == 1 { v = $2 } END { print (v == "" ? 0 : v) }' <<<"$text"
}
# delta 'name{labels}': change between the $before and $after scrapes
delta() { echo $(( $(mval "$1" "$after") - $(mval "$1" "$before") )); }
# hold_port PORT: another program (no SO_REUSEPORT) listens on 127.0.0.1:PORT
hold_port() {
    /usr/bin/python3 -c "
import socket, time
s = socket.socket(); s.bind(('127.0.0.1', $1)); s.listen(1)
open('$TMP/held.$1', 'w').close(); time.sleep(30)" &
    HOLDER=$!
    PIDS+=("$HOLDER")
    local i
    for i in $(seq 1 50); do [ -e "$TMP/held.$1" ] && return 0; sleep 0.1; done
    return 1
}
eq() { [ "$1" = "$2" ] || { echo "    expected '$2', got '$1'"; return 1; }; }

start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MP
}
example.org:{\$PORT} {
    prometheus 127.0.0.1:$MP
}" || exit 1

S='server="dns://:'$PORT'"'
before=$(scrape)
check "metrics endpoint answers" grep -q '^# TYPE coredns_build_info gauge$' <<<"$before"

# 3 UDP A queries in ".", 2 AAAA with DO in example.org, 1 TCP MX in example.org.
rsum=0
for i in 1 2 3; do
    q +nocookie "name$i.example.com" A
    rsum=$((rsum + $(grep -o 'rcvd: [0-9]*' <<<"$OUT" | awk '{print $2}')))
done
for i in 1 2; do q +nocookie +dnssec "www$i.example.org" AAAA; done
q +nocookie +tcp x.example.org MX
after=$(scrape)

k='coredns_dns_requests_total{family="1",proto="udp",'$S',type="A",view="",zone="."}'
check "requests_total counts the 3 A queries" eq "$(delta "$k")" 3
k='coredns_dns_requests_total{family="1",proto="udp",'$S',type="AAAA",view="",zone="example.org."}'
check "requests_total counts the 2 AAAA queries in example.org." eq "$(mval "$k" "$after")" 2
k='coredns_dns_requests_total{family="1",proto="tcp",'$S',type="MX",view="",zone="example.org."}'
check "requests_total counts the TCP MX query" eq "$(mval "$k" "$after")" 1
sum_req() { grep '^coredns_dns_requests_total{' | awk '{s += $2} END {print s + 0}'; }
total=$(( $(sum_req <<<"$after") - $(sum_req <<<"$before") ))
check "requests_total grows by exactly the 6 queries" eq "$total" 6
k='coredns_dns_do_requests_total{'$S',view="",zone="example.org."}'
check "do_requests_total counts the DO queries" eq "$(mval "$k" "$after")" 2
check "no DO series for the root zone" eq "$(mval 'coredns_dns_do_requests_total{'$S',view="",zone="."}' "$after")" 0
# No plugin answers here: the server writes SERVFAIL ("no next plugin").
k='coredns_dns_responses_total{plugin="",rcode="SERVFAIL",'$S',view="",zone="."}'
check "responses_total by rcode and (empty) writer" eq "$(delta "$k")" 3
k='coredns_dns_request_duration_seconds_count{'$S',view="",zone="example.org."}'
check "duration histogram count" eq "$(mval "$k" "$after")" 3
k='coredns_dns_request_duration_seconds_bucket{'$S',view="",zone="example.org.",le="+Inf"}'
check "duration +Inf bucket equals count" eq "$(mval "$k" "$after")" 3
check "duration buckets from 0.00025 to 8.192" \
    grep -q 'coredns_dns_request_duration_seconds_bucket{'"$S"',view="",zone=".",le="0.00025"} .*' <<<"$after"
check "duration bucket 8.192" grep -q 'zone=".",le="8.192"}' <<<"$after"
k='coredns_dns_response_size_bytes_sum{proto="udp",'$S',view="",zone="."}'
check "response_size sum grows by the bytes dig received" eq "$(delta "$k")" "$rsum"
k='coredns_dns_request_size_bytes_bucket{proto="tcp",'$S',view="",zone="example.org.",le="100"}'
check "request_size bucket le=100 holds the small TCP query" eq "$(mval "$k" "$after")" 1
check "size bucket 64000 is present" grep -q 'coredns_dns_request_size_bytes_bucket{proto="tcp",.*le="64000"} 1$' <<<"$after"
k='coredns_plugin_enabled{name="prometheus",'$S',view="",zone="example.org."}'
check "plugin_enabled for the block's chain" eq "$(mval "$k" "$after")" 1
check "build_info is 1" grep -q '^coredns_build_info{goversion=".*",revision=".*",version=".*"} 1$' <<<"$after"
# the revision configure recorded (the source tree's git commit)
rev=$(sed -n 's/^TOPODNS_REVISION = //p' "$top_builddir/Makefile" 2>/dev/null)
if [ -n "$rev" ]; then
    check "build_info carries the revision" grep -q "^coredns_build_info{.*revision=\"$rev\"" <<<"$after"
fi
check "panics_total is exported as 0" eq "$(mval coredns_panics_total "$after")" 0
check "process_start_time_seconds is plausible" \
    awk -v now="$(date +%s)" '$1 == "process_start_time_seconds" { ok = ($2 > now - 600 && $2 <= now + 1) } END { exit !ok }' <<<"$after"
check "process_open_fds is counted" awk '$1 == "process_open_fds" { ok = ($2 > 3) } END { exit !ok }' <<<"$after"
check "process_resident_memory_bytes" grep -q '^process_resident_memory_bytes [0-9]' <<<"$after"
check "families sorted by name" bash -c 'grep "^# TYPE" | awk "{print \$3}" | sort -c' <<<"$after"
check "no family exported twice" bash -c '[ -z "$(grep "^# TYPE" | sort | uniq -d)" ]' <<<"$after"

hdr=$(curl -s --noproxy '*' -D - -o /dev/null "$URL")
check "content type is text format 0.0.4" grep -qi '^Content-Type: text/plain; version=0.0.4' <<<"$hdr"
code=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MP/other")
check "unknown path is 404" eq "$code" 404

# One more query moves the counter by exactly one.
q +nocookie name1.example.com A
k='coredns_dns_requests_total{family="1",proto="udp",'$S',type="A",view="",zone="."}'
check "a further query increments by one" eq "$(mval "$k")" 4
q +nocookie name1.example.com TYPE65534
k='coredns_dns_requests_total{family="1",proto="udp",'$S',type="other",view="",zone="."}'
check "unmonitored types are 'other'" eq "$(mval "$k")" 1
stop_topodns

# bind: the server label carries the address; IPv6 clients are family 2.
MP=$(free_port)
URL="http://127.0.0.1:$MP/metrics"
start_topodns ".:{\$PORT} {
    bind 127.0.0.1 ::1
    prometheus 127.0.0.1:$MP
}" || exit 1
OUT=$(dig @::1 -p "$PORT" +time=2 +tries=1 +nocookie v6.example. A 2>&1)
q +nocookie v4.example. A
after=$(scrape)
k='coredns_dns_requests_total{family="2",proto="udp",server="dns://[::1]:'$PORT'",type="A",view="",zone="."}'
check "IPv6 query: family 2 and [::1] server label" eq "$(mval "$k" "$after")" 1
k='coredns_dns_requests_total{family="1",proto="udp",server="dns://127.0.0.1:'$PORT'",type="A",view="",zone="."}'
check "IPv4 query with bind: server label has the address" eq "$(mval "$k" "$after")" 1
k='coredns_plugin_enabled{name="prometheus",server="dns://[::1]:'$PORT'",view="",zone="."}'
check "plugin_enabled per bound address" eq "$(mval "$k" "$after")" 1
stop_topodns

# A plugin that answers: the writer and rcode labels (runs once whoami is built).
if "$TOPODNS" -plugins | grep -q 'dns.whoami$'; then
    MP=$(free_port)
    URL="http://127.0.0.1:$MP/metrics"
    start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MP
    whoami
}" || exit 1
    S='server="dns://:'$PORT'"'
    before=$(scrape)
    for i in 1 2 3 4 5; do q +nocookie "w$i.example." A; done
    after=$(scrape)
    k='coredns_dns_responses_total{plugin="whoami",rcode="NOERROR",'$S',view="",zone="."}'
    check "whoami answers are NOERROR written by whoami" eq "$(delta "$k")" 5
    k='coredns_plugin_enabled{name="whoami",'$S',view="",zone="."}'
    check "plugin_enabled lists whoami" eq "$(mval "$k" "$after")" 1
    stop_topodns
else
    echo "note: whoami not built; writer-label checks skipped"
fi

# Startup errors: a port held by another program, a missing port.
HELD=$(free_port)
check "another program holds the port" hold_port "$HELD"
printf '.:%s {\n    prometheus 127.0.0.1:%s\n}\n' "$(free_port)" "$HELD" > "$TMP/Corefile.conflict"
out=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.conflict" 2>&1); rc=$?
OUT=$out
check "port conflict: startup fails" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
check "port conflict: clean error" grep -q "listen tcp 127.0.0.1:$HELD: bind: address already in use" <<<"$out"
kill "$HOLDER" 2>/dev/null

printf '.:%s {\n    prometheus localhost\n}\n' "$(free_port)" > "$TMP/Corefile.bad"
out=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1); rc=$?
OUT=$out
check "address without port: startup fails" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
check "address without port: file:line error" \
    grep -q "Corefile.bad:2: plugin/prometheus: address localhost: missing port in address" <<<"$out"

printf '.:%s {\n    prometheus :1\n    prometheus :2\n}\n' "$(free_port)" > "$TMP/Corefile.twice"
out=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.twice" 2>&1); rc=$?
OUT=$out
check "twice in a block is an error" grep -q "Corefile.twice:3: plugin/prometheus: this plugin can only be used once per Server Block" <<<"$out"

finish
