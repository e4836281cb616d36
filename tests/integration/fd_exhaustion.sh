#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fd_exhaustion.sh — out of descriptors (src/server/accept.c): topodns runs
# under `ulimit -n 256` with health, ready and prometheus, and 400 slow
# HTTP clients (a header octet a second, reconnecting whenever closed) keep
# every descriptor taken for 8 s while DNS-over-TCP clients knock too. Every
# listener whose accept() fails pauses (5 ms doubling to 1 s) instead of
# retrying at once: the process uses little CPU (measured from /proc over
# 4 s), logs about a line a second per listener rather than millions, UDP
# is answered throughout, and once the clients are gone DNS over TCP and
# the endpoints answer again.
. "$top_srcdir/tests/integration/lib.sh"
H="/usr/bin/python3 $top_srcdir/tests/integration/httpslow.py"

HP=$(free_port)
RP=$(free_port)
MP=$(free_port)
cat > "$TMP/lowfd" <<EOS
#!/bin/bash
ulimit -n 256 || exit 1
exec "$TOPODNS" "\$@"
EOS
chmod +x "$TMP/lowfd"
TOPODNS=$TMP/lowfd start_topodns ".:{\$PORT} {
    whoami
    health 127.0.0.1:$HP
    ready 127.0.0.1:$RP
    prometheus 127.0.0.1:$MP
}" -workers 1 || exit 1
grep -q '^Max open files *256 ' "/proc/$TOPO_PID/limits" || skip "cannot lower the descriptor limit"

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$TOPO_PID/stat"; }
HZ=$(getconf CLK_TCK)
fds() { ls "/proc/$TOPO_PID/fd" | wc -l; }

$H hold --port "$HP" --port "$RP" --port "$MP" --conns 400 --interval 1 --seconds 8 > "$TMP/hold" &
HOLD=$!
PIDS+=("$HOLD")
exhausted() { [ "$(fds)" -ge 250 ]; }
check "400 slow clients take every descriptor" wait_until 4 exhausted
c0=$(cpu_ticks)
t0=$(now)
DIGS=()
for i in 1 2 3 4; do
    dig @127.0.0.1 -p "$PORT" +tcp +time=1 +tries=1 whoami.example A >/dev/null 2>&1 &
    DIGS+=($!)
done
q whoami.example A
check "UDP is answered while descriptors are exhausted" rcode_is NOERROR
sleep 3
wait "${DIGS[@]}" 2>/dev/null
c1=$(cpu_ticks)
el=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
cpu=$(awk -v t=$((c1 - c0)) -v hz="$HZ" -v el="$el" 'BEGIN { printf "%.2f", t / hz / el }')
check "no busy spin: ${cpu} CPU seconds per second while exhausted (spinning is 1 per listener thread)" \
    awk -v c="$cpu" 'BEGIN { exit !(c < 0.25) }'
wait "$HOLD"
sed 's/^/    /' "$TMP/hold"
echo "    cpu ${cpu} s/s over ${el} s; $(wc -l < "$LOG") log lines, $(grep -c 'accept:' "$LOG") about accept()"

lines=$(wc -l < "$LOG")
check "the log stays small ($lines lines)" test "$lines" -lt 120
check "HTTP listeners logged the accept failure" grep -q '^\[ERROR\] http 127.0.0.1:[0-9]*: accept: Too many open files' "$LOG"
check "the DNS TCP listener logged it too" grep -q '^\[ERROR\] dns://:[0-9]* (worker 0): accept: Too many open files' "$LOG"
check "later lines count what they stand for" grep -q 'failed accepts since the last report); pausing accepts for' "$LOG"
check "libevent's own unbounded message never appears" bash -c "! grep -q 'Error from accept' '$LOG'"
per_listener=$(grep -c '^\[ERROR\] http 127.0.0.1:'"$HP"': accept' "$LOG")
check "one listener logged at most ~1 line a second ($per_listener in ~8 s)" test "$per_listener" -le 14

tcp_ok() { q +tcp whoami.example A; rcode_is NOERROR; }
check "DNS over TCP answers again once the clients are gone" wait_until 8 tcp_ok
health_ok() { [ "$(curl -s --noproxy '*' --max-time 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/health")" = 200 ]; }
check "/health answers again" wait_until 5 health_ok
check "descriptors are given back" test "$(fds)" -lt 60
finish
