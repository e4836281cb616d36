#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# debug.sh — the debug plugin in the real binary: with `debug` the server
# logs a DEBUG line with a hex dump (text2pcap's form) of every packet it
# cannot take — answered FORMERR, dropped as unreadable, or a response —
# at most the first 1024 octets; good queries log nothing; without `debug`
# nothing is logged; an argument stops start-up.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
RAW="/usr/bin/python3 $top_srcdir/tests/integration/rawdns.py"

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
    whoami
}
example.org:{\$PORT} {
    whoami
}" || exit 1

OUT=$($RAW udp "$PORT" trailing-garbage)
check "trailing garbage still gets FORMERR" grep -q '^FORMERR id=1234' <<<"$OUT"
OUT=$(cat "$LOG")
check "FORMERR logged at DEBUG with the source and size" \
    logged '^\[DEBUG\] malformed packet answered FORMERR from 127\.0\.0\.1:[0-9]+ over udp, 39 octets:$'
check "hex dump, 16 octets a line, offsets in hex" \
    logged '^000000 12 34 01 00 00 01 00 00 00 00 00 00 06 77 68 6f$'
check "second line of the dump" logged '^000010 61 6d 69 07 65 78 61 6d 70 6c 65 00 00 01 00 01$'
check "last line of the dump" logged '^000020 67 61 72 62 61 67 65$'

OUT=$($RAW udp "$PORT" short)
check "short packet still dropped" grep -q noreply <<<"$OUT"
OUT=$(cat "$LOG")
check "unreadable packet logged as dropped" \
    logged '^\[DEBUG\] malformed packet dropped from 127\.0\.0\.1:[0-9]+ over udp, 3 octets:$'
check "its dump" logged '^000000 12 34 01$'
OUT=$($RAW udp "$PORT" response)
OUT=$(cat "$LOG")
check "a response sent to us is logged" logged '^\[DEBUG\] response packet dropped from 127\.0\.0\.1'

OUT=$($RAW udp "$PORT" big-garbage)
OUT=$(cat "$LOG")
check "a large packet: the first 1024 octets" \
    logged '^\[DEBUG\] malformed packet answered FORMERR .* 1132 octets \(the first 1024 shown\):$'
check "the dump ends at offset 0x3f0" logged '^0003f0( 78){16}$'
check "and goes no further" bash -c '! grep -q "^000400" "$0"' "$LOG"

n=$(grep -c '^\[DEBUG\]' "$LOG")
q example.org A
q whoami.example A
sleep 0.3
OUT=$(cat "$LOG")
check "good queries log nothing" [ "$(grep -c '^\[DEBUG\]' "$LOG")" -eq "$n" ]
OUT=$($RAW udp "$PORT" good)
check "serving goes on" grep -q '^NOERROR' <<<"$OUT"

# without debug: nothing
start_topodns ".:{\$PORT} {
    whoami
}" || exit 1
OUT=$($RAW udp "$PORT" trailing-garbage)
OUT=$($RAW udp "$PORT" short)
sleep 0.3
OUT=$(cat "$LOG")
check "without debug no DEBUG lines" bash -c '! grep -q "DEBUG" "$0"' "$LOG"

printf '.:%s {\n    debug on\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "an argument rejected with file:line" grep -q "bad:2: Wrong argument count or unexpected line ending" <<<"$OUT"
finish
