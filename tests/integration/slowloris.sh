#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# slowloris.sh — DNS over TCP against slow and greedy clients
# (src/server/tcp.c). One worker with the default limits (1024 connections,
# 256 per client address, `read` 3 s): 1,100 slowloris connections from five
# 127.0.2.x addresses, each announcing a 65535-octet message and trickling
# one octet a second. Fresh TCP queries from another address are still
# answered, one address never holds more than 256 connections, and every
# slow connection is closed at its read deadline (about 3 s after it was
# opened) however many octets it trickles; UDP is answered throughout. Then
# the same at a small scale with the limits from TOPODNS_TCP_MAX_CONNS and
# TOPODNS_TCP_MAX_CONNS_PER_SOURCE, and a bad value of them stops startup.
. "$top_srcdir/tests/integration/lib.sh"
SLOW="/usr/bin/python3 $top_srcdir/tests/integration/slowtcp.py"

# value KEY: the field after KEY in the flood's output ("step 1 A opened=N
# open=M" → value 'step 1' gives M; "fresh 20/20" → value fresh gives 20/20)
step_open() { sed -n "s/^step $1 .* open=\([0-9]*\)\$/\1/p" <<<"$OUT"; }
value() { sed -n "s/^$1 //p" <<<"$OUT"; }
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }

start_topodns "example.:{\$PORT} {
    whoami
}" -workers 1 || exit 1

# --- the default limits: 1,100 slow connections, more than the 1024 slots ---
OUT=$($SLOW flood "$PORT" --step 127.0.2.5:300 --step 127.0.2.1:200 --step 127.0.2.2:200 \
      --step 127.0.2.3:200 --step 127.0.2.4:200 --fresh 127.0.3.1 --fresh-count 20 \
      --trickle 1 --wait 6)
check "one address keeps at most 256 of its 300 connections" between "$(step_open 1)" 1 256
check "other addresses get their connections" between "$(step_open 5)" 200 200
check "fresh TCP queries answered while 1,100 slow connections trickle" \
    test "$(value fresh)" = 20/20
check "every slow connection closed by its read deadline" test "$(value survivors)" = 0
check "none lived much past the 3 s read deadline" between "$(value lifetime_max)" 2.9 4.5
q whoami.example A
check "UDP answered after the flood" rcode_is NOERROR
q +tcp whoami.example A
check "TCP answered after the flood" rcode_is NOERROR
stop_topodns

# --- the limits from the environment, at a small scale ---------------------------
export TOPODNS_TCP_MAX_CONNS=24 TOPODNS_TCP_MAX_CONNS_PER_SOURCE=8
start_topodns "example.:{\$PORT} {
    whoami
}" -workers 1 || exit 1
unset TOPODNS_TCP_MAX_CONNS TOPODNS_TCP_MAX_CONNS_PER_SOURCE
OUT=$($SLOW flood "$PORT" --step 127.0.4.1:12 --step 127.0.4.2:8 --step 127.0.4.3:8 \
      --step 127.0.4.4:8 --fresh 127.0.4.9 --fresh-count 5 --trickle 0.5 --wait 5)
check "TOPODNS_TCP_MAX_CONNS_PER_SOURCE=8: 8 of 12 kept" between "$(step_open 1)" 8 8
check "TOPODNS_TCP_MAX_CONNS=24: fresh queries answered over 36 slow connections" \
    test "$(value fresh)" = 5/5
check "small scale: every slow connection closed" test "$(value survivors)" = 0
stop_topodns

# --- bad values stop startup -------------------------------------------------------
bad_env() {
    OUT=$(env "$1" timeout 5 "$TOPODNS" -conf /dev/null 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "TOPODNS_TCP_MAX_CONNS=0 refused" bad_env TOPODNS_TCP_MAX_CONNS=0 \
    "[FATAL] TOPODNS_TCP_MAX_CONNS: invalid value '0' (a number from 1 to 1000000)"
check "TOPODNS_TCP_MAX_CONNS_PER_SOURCE=ten refused" bad_env TOPODNS_TCP_MAX_CONNS_PER_SOURCE=ten \
    "[FATAL] TOPODNS_TCP_MAX_CONNS_PER_SOURCE: invalid value 'ten'"

finish
