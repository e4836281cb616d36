#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# health.sh — the health plugin against the real topodns: /health, 404 on
# other paths, the self-check metrics, lameduck at shutdown, sharing an
# address between blocks, and startup errors.
. "$top_srcdir/tests/integration/lib.sh"

HP=$(free_port)
MP=$(free_port)
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
mval() {
    curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MP/metrics" |
        awk -v k="$1" 'index($0, k " ") == 1 { v = $2 } END { print (v == "" ? 0 : v) }'
}

# ":PORT" listens on TOPODNS_DEFAULT_BIND (127.0.0.1) in tests; two blocks share it.
T0=$(now)      # the self-checks start after this
start_topodns ".:{\$PORT} {
    health :$HP
    prometheus 127.0.0.1:$MP
}
example.org:{\$PORT} {
    health :$HP {
        lameduck 2s
    }
}" || exit 1

OUT=""
check "/health answers 200" eq "$(get "http://127.0.0.1:$HP/health")" 200
check "/health body is OK" eq "$(cat "$TMP/body")" OK
check "other paths are 404" eq "$(get "http://127.0.0.1:$HP/ready")" 404
check "query strings are ignored" eq "$(get "http://127.0.0.1:$HP/health?x=1")" 200

# The plugin polls itself once a second, once per address even though two
# blocks enable it: after E seconds since before the start at most E + 1
# polls (one per block would be about 2 E). At least one is recorded (on a
# loaded machine the first may come late: waited for).
sleep 2.5
polls() { n=$(mval coredns_health_request_duration_seconds_count); [ "${n%%.*}" -ge 1 ]; }
wait_until 10 polls
el=$(elapsed_since "$T0")
check "self-check duration is recorded (1 to $((el + 1)) polls in $el s, got $n)" \
    [ "${n%%.*}" -ge 1 -a "${n%%.*}" -le $((el + 1)) ]
check "self-check failures are 0" eq "$(mval coredns_health_request_failures_total)" 0
check "duration bucket 0.0025 exists" \
    bash -c "curl -s --noproxy '*' http://127.0.0.1:$MP/metrics | grep -q '^coredns_health_request_duration_seconds_bucket{le=\"0.0025\"} '"

# lameduck: after SIGTERM DNS and /health keep answering for 2 s, then exit.
# t0 is taken before the signal: what completed within 1.8 s of it was
# surely asked during the lameduck (a loaded machine may take longer: such
# a step is not judged); the lameduck measured from t0 is at least 2 s.
t0=$(now)
kill -TERM "$TOPO_PID"
sleep 0.5
during() {  # during WHAT CMD...: check CMD if it completed within the lameduck
    local what=$1 ok=0; shift
    "$@" && ok=1
    if elapsed_below "$t0" 1.8; then
        check "$what" [ $ok = 1 ]
    else
        echo "not judged (the machine was slow, $(elapsed_since "$t0") s after SIGTERM): $what"
    fi
}
during "still running during lameduck" kill -0 "$TOPO_PID"
q +nocookie x.example.org A
during "DNS is still answered during lameduck" grep -q 'status: ' <<<"$OUT"
during "/health is 200 during lameduck" eq "$(get "http://127.0.0.1:$HP/health")" 200
wait "$TOPO_PID"
rc=$?
t1=$(now)
check "exits 0 after lameduck" eq "$rc" 0
# at least the 2 s (less would be no lameduck); the upper bound only
# catches a much longer wait, with room for a loaded machine
check "lameduck lasted about 2 s" awk -v a="$t0" -v b="$t1" 'BEGIN { d = b - a; exit !(d >= 1.8 && d < 10) }'
check "lameduck is logged" grep -q 'Going into lameduck mode for 2s' "$LOG"
check "listener closed after exit" [ "$(get "http://127.0.0.1:$HP/health")" = 000 ]

# Without lameduck the process exits at once.
start_topodns ".:{\$PORT} {
    health 127.0.0.1:$HP
}" || exit 1
check "explicit address answers" eq "$(get "http://127.0.0.1:$HP/health")" 200
t0=$(date +%s.%N)
stop_topodns
t1=$(date +%s.%N)
check "no lameduck: prompt exit" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 1.5) }'

# Startup errors.
HELD=$(free_port)
check "another program holds the port" hold_port "$HELD"
printf '.:%s {\n    health :%s\n}\n' "$(free_port)" "$HELD" > "$TMP/Corefile.conflict"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.conflict" 2>&1); rc=$?
check "port conflict: startup fails" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
check "port conflict: clean error" grep -q "listen tcp :$HELD: bind: address already in use" <<<"$OUT"
kill "$HOLDER" 2>/dev/null

printf '.:%s {\n    health 127.0.0.1\n}\n' "$(free_port)" > "$TMP/Corefile.bad"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1); rc=$?
check "address without port fails with file:line" \
    grep -q "Corefile.bad:2: plugin/health: address 127.0.0.1: missing port in address" <<<"$OUT"

printf '.:%s {\n    health {\n        lameduck soon\n    }\n}\n' "$(free_port)" > "$TMP/Corefile.dur"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.dur" 2>&1); rc=$?
check "bad lameduck duration fails at its line" [ "$rc" -ne 0 -a "$rc" -ne 124 ]
check "bad lameduck duration names the line" grep -q "Corefile.dur:3:" <<<"$OUT"

printf '.:%s {\n    health {\n        lameduck\n    }\n}\n' "$(free_port)" > "$TMP/Corefile.arg"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.arg" 2>&1); rc=$?
check "lameduck without a value fails" grep -q "Corefile.arg:3: Wrong argument count" <<<"$OUT"

printf '.:%s {\n    health {\n        slow 1s\n    }\n}\n' "$(free_port)" > "$TMP/Corefile.prop"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/Corefile.prop" 2>&1); rc=$?
check "unknown property fails" grep -q "Corefile.prop:3: unknown property 'slow'" <<<"$OUT"

finish
