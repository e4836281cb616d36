#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# reply_source.sh — the address a query was sent to, on loopback: with
# listeners on 127.0.0.1, 127.0.0.5 and ::1 (where the machine has it), the
# log plugin's {local} names the address each query came to, over UDP (from
# IP_PKTINFO) as over TCP, and never a previous query's (requests are
# reused). The wildcard listener, whose replies must leave from the address
# queried, is tested in a network namespace: reply_source_netns.sh.
. "$top_srcdir/tests/integration/lib.sh"

v6=0
/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind(("::1", 0))' \
    2>/dev/null && v6=1
binds="127.0.0.1 127.0.0.5"
[ $v6 = 1 ] && binds="$binds ::1"

start_topodns "example.:{\$PORT} {
    bind $binds
    log . \"{local} {proto} {name}\"
    whoami
}" || exit 1

# logged LINE: wait (1 s) for that exact line in the server's output
logged() {
    local i
    for i in $(seq 1 20); do
        grep -qxF "[INFO] $1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}
at() { local a=$1; shift; OUT=$(dig @"$a" -p "$PORT" +time=2 +tries=1 "$@" 2>&1); }

at 127.0.0.5 +tcp t1.example A
check "TCP to 127.0.0.5 answered" rcode_is NOERROR
check "TCP to 127.0.0.5: {local} 127.0.0.5" logged "127.0.0.5 tcp t1.example."
at 127.0.0.1 u1.example A
check "UDP to 127.0.0.1 answered" rcode_is NOERROR
check "UDP to 127.0.0.1: {local} 127.0.0.1, not the last TCP query's" \
    logged "127.0.0.1 udp u1.example."
at 127.0.0.5 u2.example A
check "UDP to 127.0.0.5 answered" rcode_is NOERROR
check "UDP to 127.0.0.5: {local} 127.0.0.5" logged "127.0.0.5 udp u2.example."
at 127.0.0.1 -b 127.0.0.9 u3.example A
check "UDP from 127.0.0.9 to 127.0.0.1: {local} 127.0.0.1" logged "127.0.0.1 udp u3.example."
if [ $v6 = 1 ]; then
    at ::1 u4.example A
    check "UDP to ::1 answered" rcode_is NOERROR
    check "UDP to ::1: {local} [::1]" logged "[::1] udp u4.example."
    at ::1 +tcp t2.example A
    check "TCP to ::1: {local} [::1]" logged "[::1] tcp t2.example."
fi

finish
