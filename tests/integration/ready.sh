#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ready.sh — the ready plugin against the real topodns: /ready with nothing
# to wait for, sharing an address between blocks, co-existing with health on
# one address, and startup errors.
#
# Not covered here yet: a 503 answer needs a plugin that reports not ready
# (the kubernetes plugin before its watches sync); add it with that plugin.
. "$top_srcdir/tests/integration/lib.sh"

RP=$(free_port)
get() { curl -s --noproxy '*' --max-time 5 -o "$TMP/body" -w '%{http_code}' "$1"; }
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
OUT=""

start_topodns ".:{\$PORT} {
    ready :$RP
    health :$RP
}
example.org:{\$PORT} {
    ready :$RP {
        monitor continuously
    }
}" || exit 1
check "/ready answers 200 with nothing to wait for" eq "$(get "http://127.0.0.1:$RP/ready")" 200
check "/ready body is OK" eq "$(cat "$TMP/body")" OK
check "health shares the address" eq "$(get "http://127.0.0.1:$RP/health")" 200
check "other paths are 404" eq "$(get "http://127.0.0.1:$RP/metrics")" 404
check "a second request is still 200" eq "$(get "http://127.0.0.1:$RP/ready")" 200
stop_topodns
check "listener closed at shutdown" eq "$(get "http://127.0.0.1:$RP/ready")" 000

# The default address is :8181; an explicit one works too.
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$RP
}" || exit 1
check "explicit address answers" eq "$(get "http://127.0.0.1:$RP/ready")" 200
stop_topodns

# Startup errors.
printf '.:%s {\n    ready :1\n    ready :2\n}\n' "$(free_port)" > "$TMP/Corefile.twice"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.twice" 2>&1)
check "twice in a block is an error" \
    grep -q "Corefile.twice:3: plugin/ready: this plugin can only be used once per Server Block" <<<"$OUT"

printf '.:%s {\n    ready {\n        monitor sometimes\n    }\n}\n' "$(free_port)" > "$TMP/Corefile.mon"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.mon" 2>&1)
check "bad monitor type" grep -q "Corefile.mon:3: plugin/ready: monitor type 'sometimes' not supported" <<<"$OUT"

printf '.:%s {\n    ready 8181\n}\n' "$(free_port)" > "$TMP/Corefile.addr"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.addr" 2>&1)
check "address without port" grep -q "Corefile.addr:2: plugin/ready: address 8181: missing port in address" <<<"$OUT"

printf '.:%s {\n    ready :1 :2\n}\n' "$(free_port)" > "$TMP/Corefile.args"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.args" 2>&1)
check "two addresses is an argument error" grep -q "Corefile.args:2: Wrong argument count" <<<"$OUT"

HELD=$(free_port)
check "another program holds the port" hold_port "$HELD"
printf '.:%s {\n    ready 127.0.0.1:%s\n}\n' "$(free_port)" "$HELD" > "$TMP/Corefile.conflict"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.conflict" 2>&1); rc=$?
check "port conflict: startup fails" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
check "port conflict: clean error" grep -q "listen tcp 127.0.0.1:$HELD: bind: address already in use" <<<"$OUT"
kill "$HOLDER" 2>/dev/null

finish
