#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# loop.sh — the loop plugin in the real binary: two topodns forwarding to
# each other on loopback make the one with `loop` exit with CoreDNS's FATAL
# message; without a loop the probe comes back once, the plugin switches
# itself off and the server keeps serving.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# --- a forwarding loop --------------------------------------------------------
PA=$(free_port)
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$PA
}" || exit 1
PB=$PORT
printf '.:%s {\n    loop\n    forward . 127.0.0.1:%s\n}\n' "$PA" "$PB" > "$TMP/Corefile.loop"
"$TOPODNS" -conf "$TMP/Corefile.loop" > "$TMP/loop.log" 2>&1 &
LPID=$!
PIDS+=("$LPID")
for i in $(seq 1 100); do kill -0 "$LPID" 2>/dev/null || break; sleep 0.1; done
wait "$LPID"; rc=$?
OUT=$(cat "$TMP/loop.log")
check "loop detected: exit status 1" [ "$rc" -eq 1 ]
check "loop detected: CoreDNS's FATAL message" grep -Eq "^\[FATAL\] plugin/loop: Loop \(127\.0\.0\.1:[0-9]+ -> :$PA\) detected for zone \"\.\", see https://coredns\.io/plugins/loop#troubleshooting\. Query: \"HINFO [0-9]+\.[0-9]+\.\"$" <<<"$OUT"
stop_topodns

# --- no loop: probe answered, plugin off, server keeps serving -------------
start_topodns "example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
}" || exit 1
PF=$PORT
start_topodns "example.org:{\$PORT} {
    loop
    forward . 127.0.0.1:$PF
}" || exit 1
sleep 3
check "no loop: server still running" kill -0 "$TOPO_PID"
q www.example.org A
check "no loop: queries forwarded" answer_has '192\.0\.2\.10$'
q x.y.example.org HINFO
check "no loop: HINFO passes through" rcode_is NXDOMAIN
OUT=$(cat "$LOG")
check "no loop: nothing fatal logged" bash -c '! grep -q FATAL <<<"$0"' "$OUT"

# --- setup ----------------------------------------------------------------------
printf '.:1053 {\n    loop extra\n}\n' > "$TMP/Corefile.bad"
OUT=$("$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1)
check "loop takes no arguments: file:line" grep -q 'Corefile.bad:2: ' <<<"$OUT"

finish
