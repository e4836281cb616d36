#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# http_limits.sh — the bounds of the HTTP endpoints (src/server/http.c)
# against the real topodns, with health, ready and prometheus each on its
# own address:
#  - a request's header block may be 8,192 octets and no more: one octet
#    over gets 431 and the connection is closed; a body over 8,192 gets 413;
#  - 100 connections each sending 4 MB of a header that never ends grow the
#    process by at most 20 MB (not judged in an AddressSanitizer build, whose
#    quarantine keeps freed memory), are all answered 431, and /health,
#    /ready and /metrics answer throughout and after;
#  - a client trickling a header octet a second is closed at the 5 s read
#    deadline, not kept;
#  - 300 slow connections to one listener: at most 256 stay open (the cap),
#    a fresh /health is answered at once, and every slow one is closed by
#    its deadline.
. "$top_srcdir/tests/integration/lib.sh"
H="/usr/bin/python3 $top_srcdir/tests/integration/httpslow.py"

HP=$(free_port)
RP=$(free_port)
MP=$(free_port)
start_topodns ".:{\$PORT} {
    whoami
    health 127.0.0.1:$HP
    ready 127.0.0.1:$RP
    prometheus 127.0.0.1:$MP
}" -workers 1 || exit 1

value() { sed -n "s/^$1 //p" <<<"$OUT"; }
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
code() { curl -s --noproxy '*' --max-time 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1$2"; }

# --- sizes: the request line (22) + Host (9) + "X-Pad: " and its end (9) +
# the blank line (2) is 42 octets besides the padding.
OUT=$($H status "$HP" /health --pad 8150)
check "a header block of exactly 8,192 octets is served" test "$(value status)" = 200
OUT=$($H status "$HP" /health --pad 8151)
check "8,193 octets get 431" test "$(value status)" = 431
check "... and the connection is closed" test "$(value closed)" = yes
OUT=$($H status "$MP" /metrics --pad 2000000)
check "a 2 MB header field gets 431 (it was read and answered 200)" test "$(value status)" = 431
OUT=$($H status "$HP" /health --body 9000)
check "a 9,000-octet body gets 413" test "$(value status)" = 413
OUT=$($H status "$HP" /health --body 100)
check "a small body is served" test "$(value status)" = 200

# --- 100 x 4 MB of a header that never ends --------------------------------------
OUT=$($H flood "$MP" --conns 100 --bytes 4194304 --pid "$TOPO_PID" \
      --probe "$HP/health" --probe "$RP/ready" --probe "$MP/metrics")
echo "$OUT" | sed 's/^/    /'
check "all 100 answered 431" test "$(value answers_431)" = 100
check "none left hanging" test "$(value unfinished)" = 0
g=$(value rss_growth_kb)
if ldd "$TOPODNS" 2>/dev/null | grep -q libasan; then
    # AddressSanitizer keeps freed memory in its quarantine (up to 256 MB):
    # the read-and-dropped octets show as growth there (as in abuse.sh)
    echo "RSS not judged: an AddressSanitizer build (${g} kB)"
else
    check "RSS grew by at most 20 MB (${g} kB)" between "$g" 0 20480
fi
p=$(value probes)
check "/health, /ready and /metrics answered during the flood ($p)" test "${p%%/*}" = "${p##*/}" -a "${p##*/}" -gt 0
check "/health answers after" test "$(code "$HP" /health)" = 200
check "/ready answers after" test "$(code "$RP" /ready)" = 200
check "/metrics answers after" test "$(code "$MP" /metrics)" = 200

# --- the read deadline and the cap, together ------------------------------------
$H slow "$RP" --interval 1 --max 12 > "$TMP/slow" &
SLOW=$!
OUT=$($H hold --port "$HP" --conns 300 --interval 1 --seconds 7.5 --no-reconnect \
      --snap 2 --probe "$HP/health")
echo "$OUT" | sed 's/^/    /'
wait "$SLOW"
c=$(sed -n 's/^closed_after //p' "$TMP/slow")
check "a header trickled an octet a second is cut at the 5 s deadline (${c} s)" between "$c" 4.5 6.9
check "at most 256 of 300 slow connections stay open" between "$(value open_at_snap)" 200 256
ps=$(value probe_seconds)
check "a fresh /health is answered while the slow ones hold the cap (${ps} s, not after a 5 s deadline)" between "$ps" 0 2
check "every slow connection closed by its deadline" test "$(value open)" = 0
check "/health answers after" test "$(code "$HP" /health)" = 200

echo "    slow header closed after ${c} s; probe ${ps} s; RSS now $(awk '/^VmRSS/ { print $2 }' "/proc/$TOPO_PID/status") kB"

# --- nothing logged per connection --------------------------------------------------
check "no accept errors logged" bash -c "! grep -q 'accept' '$LOG'"
finish
