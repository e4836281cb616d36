#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# timeouts.sh — the timeouts plugin in the real binary: CoreDNS's syntax
# (read, write, idle, maxtcpqueries; a bare number is seconds; several
# stanzas add up), what each value does to TCP connections (src/server/tcp.c),
# the blocks of one port merged (the later block's value wins), UDP left
# alone, and setup errors with file:line.
. "$top_srcdir/tests/integration/lib.sh"
SLOW="/usr/bin/python3 $top_srcdir/tests/integration/slowtcp.py"
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
field() { sed -n "s/^$1 //p" "$TMP/$2.out"; }

PORT2=$(free_port)
export PORT2
start_topodns "example.:{\$PORT} {
    timeouts {
        read 1s
        idle 2
    }
    timeouts {
        write 1s
    }
    whoami
}
example.:{\$PORT2} {
    timeouts {
        read 5s
        maxtcpqueries 3
    }
    whoami
}
other.:{\$PORT2} {
    timeouts {
        read 1
    }
    whoami
}" -workers 1 || exit 1

# every client at once, each from its own address; results in $TMP/NAME.out
clients=()
$SLOW lifetime "$PORT" 127.0.6.1 > "$TMP/read.out" & clients+=($!)
$SLOW lifetime "$PORT" 127.0.6.2 --queries 2 > "$TMP/idle.out" & clients+=($!)
$SLOW steady "$PORT" 127.0.6.3 6 0.6 > "$TMP/steady.out" & clients+=($!)
$SLOW noread "$PORT" 127.0.6.4 > "$TMP/write.out" & clients+=($!)
$SLOW pipeline "$PORT2" 127.0.6.5 5 > "$TMP/maxq.out" & clients+=($!)
$SLOW lifetime "$PORT2" 127.0.6.6 > "$TMP/merged.out" & clients+=($!)
wait "${clients[@]}"

OUT=$(cat "$TMP"/*.out)
check "read 1s: a trickling new connection closed after 1 s" \
    between "$(field closed_after read)" 0.9 1.8
check "idle 2: two queries answered" test "$(field answered idle)" = 2
check "idle 2: then a trickle closed 2 s after the last answer" \
    between "$(field closed_after idle)" 1.9 2.8
check "queries 0.6 s apart keep one connection open for 3.6 s" test "$(field answered steady)" = 6
check "write 1s: a client that never reads is closed" \
    between "$(field closed_after write)" 0.9 3
check "maxtcpqueries 3: three of five pipelined queries answered, then closed" \
    test "$(field answered maxq)" = "3 eof"
check "one port, two blocks: the later block's read (1 s) wins" \
    between "$(field closed_after merged)" 0.9 1.8
q whoami.example A
check "UDP answered" rcode_is NOERROR
stop_topodns

# --- setup errors ------------------------------------------------------------------
bad() {
    printf '%s\n' "$1" > "$TMP/bad.conf"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad.conf" 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "no block" bad ". {
    timeouts
}" "bad.conf:2: plugin/timeouts: timeouts block with no timeouts specified near 'timeouts'"
check "empty block" bad ". {
    timeouts {
    }
}" "bad.conf:3: plugin/timeouts: timeouts block with no timeouts specified near '}'"
check "argument on the directive" bad ". {
    timeouts 5s {
        read 5s
    }
}" "bad.conf:2: plugin/timeouts: Wrong argument count or unexpected line ending near '5s'"
check "unknown option" bad ". {
    timeouts {
        read 10s
        giraffe 30s
    }
}" "bad.conf:4: plugin/timeouts: unknown option: 'giraffe' near '30s'"
check "two values" bad ". {
    timeouts {
        read 10s 20s
    }
}" "bad.conf:3: plugin/timeouts: Wrong argument count or unexpected line ending near '20s'"
check "not a duration" bad ". {
    timeouts {
        write snake
    }
}" "bad.conf:3: plugin/timeouts: failed to parse duration 'snake' near 'snake'"
check "under 1 second" bad ". {
    timeouts {
        idle 0s
    }
}" "bad.conf:3: plugin/timeouts: timeout provided '0s' needs to be between 1 second and 24 hours near '0s'"
check "over 24 hours" bad ". {
    timeouts {
        read 48h
    }
}" "bad.conf:3: plugin/timeouts: timeout provided '48h0m0s' needs to be between 1 second and 24 hours near '48h'"
check "maxtcpqueries 0" bad ". {
    timeouts {
        maxtcpqueries 0
    }
}" "bad.conf:3: plugin/timeouts: maxtcpqueries provided '0' needs to be -1 (unlimited) or a positive integer near '0'"
check "maxtcpqueries not a number" bad ". {
    timeouts {
        maxtcpqueries ten
    }
}" "bad.conf:3: plugin/timeouts: invalid value for maxtcpqueries 'ten': strconv.Atoi: parsing \"ten\": invalid syntax near 'ten'"
start_topodns ".:{\$PORT} {
    timeouts {
        read 10
        write 20s
        idle 1h
        maxtcpqueries -1
    }
    whoami
}" || exit 1
q +tcp whoami.example A
check "every option at once, a bare number and -1 accepted" rcode_is NOERROR

finish
