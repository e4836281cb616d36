#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bufsize.sh — the bufsize plugin in the real binary: the EDNS UDP size a
# query advertises is capped before the chain sees it (the reply's OPT, the
# UDP truncation limit, the log's {>bufsize} and the query forward sends
# upstream all carry the cap), smaller sizes and queries without EDNS pass
# untouched, the default is 1232, and bad arguments stop start-up.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

# zone ORIGIN: 60 A records for many.ORIGIN (about 1000 octets compressed)
zone() {
    echo "\$ORIGIN $1."
    echo "@ 300 IN SOA ns.$1. hostmaster.$1. 1 7200 1800 86400 30"
    echo "@ 300 IN NS ns.$1."
    for i in $(seq 1 60); do echo "many 300 IN A 10.1.0.$i"; done
}
zone big > "$TMP/big.zone"
zone small.example > "$TMP/small.zone"

logged() {
    local i
    for i in $(seq 1 20); do
        grep -qE "$1" "$2" && return 0
        sleep 0.05
    done
    return 1
}
udp_size() { grep -oE 'udp: [0-9]+' <<<"$OUT" | head -1 | cut -d' ' -f2; }

# the upstream: logs the size it was asked with
start_topodns ".:{\$PORT} {
    log . \"{name} bufsize={>bufsize}\"
    file $TMP/big.zone big
    whoami
}" || exit 1
UP=$PORT UPLOG=$LOG

start_topodns "big:{\$PORT} {
    bufsize
    log . \"{name} bufsize={>bufsize}\"
    file $TMP/big.zone big
}
fwd.example:{\$PORT} {
    bufsize 700
    forward . 127.0.0.1:$UP
}
small.example:{\$PORT} {
    bufsize 700
    file $TMP/small.zone small.example
}" || exit 1

q +bufsize=4096 many.big A
check "default cap 1232 in the reply's OPT" [ "$(udp_size)" = 1232 ]
check "an answer that fits is whole" answer_count 60
check "the chain sees the capped size" logged '^\[INFO\] many\.big\. bufsize=1232$' "$LOG"
q +bufsize=1000 many.big A
check "a smaller size is kept" [ "$(udp_size)" = 1000 ]
q +noedns +ignore many.big A
check "no OPT without EDNS" bash -c '! grep -q "OPT PSEUDOSECTION" <<<"$0"' "$OUT"

q +bufsize=4096 whoami.fwd.example A
check "forwarded reply carries the cap" [ "$(udp_size)" = 700 ]
check "upstream is asked with the cap" logged '^\[INFO\] whoami\.fwd\.example\. bufsize=700$' "$UPLOG"
q +bufsize=600 other.fwd.example A
check "upstream is asked with a smaller size as sent" logged '^\[INFO\] other\.fwd\.example\. bufsize=600$' "$UPLOG"

# truncation at the cap: 60 A records fit 1232 octets, not 700
q +bufsize=4096 +ignore many.small.example A
check "TC at the capped size" tc_set
N700=$(section ANSWER | grep -c .)
q +bufsize=4096 +ignore many.big A
N1232=$(section ANSWER | grep -c .)
OUT="700: $N700, 1232: $N1232"
check "a reply is cut at the capped size" [ "$N700" -lt "$N1232" ]

# setup errors
for bad in "bufsize 511" "bufsize 4097" "bufsize 1232 1232" "bufsize abc"; do
    printf '.:%s {\n    %s\n    whoami\n}\n' "$PORT" "$bad" > "$TMP/bad"
    OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
    check "'$bad' rejected with file:line" grep -q "bad:2: Wrong argument count or unexpected line ending" <<<"$OUT"
done
printf '.:%s {\n    bufsize 1232 {\n        size 512\n    }\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a block rejected" grep -q "bad:3: unknown property 'size'" <<<"$OUT"
printf '.:%s {\n    bufsize 512\n    bufsize 4096\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a second bufsize rejected" grep -q "bad:3: plugin/bufsize: this plugin can only be used once" <<<"$OUT"
finish
