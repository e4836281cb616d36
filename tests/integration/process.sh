#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# process.sh — the command line and signals: -version, -plugins, -pidfile,
# the built-in Corefile, SIGUSR1 reload (good and broken file), SIGTERM,
# and a kdig client over UDP and TCP.
. "$top_srcdir/tests/integration/lib.sh"

OUT=$("$TOPODNS" -version)
check "-version" grep -q '^topodns-' <<<"$OUT"
OUT=$("$TOPODNS" -plugins)
check "-plugins lists dns.whoami and dns.file" bash -c 'grep -q "dns.whoami" <<<"$0" && grep -q "dns.file" <<<"$0"' "$OUT"
OUT=$("$TOPODNS" -nosuchflag 2>&1); rc=$?
check "unknown flag is an error (2) naming the flag, with the usage" \
    bash -c '[ $1 -eq 2 ] && grep -q "^flag provided but not defined: -nosuchflag$" <<<"$0" &&
             grep -q "^Usage of topodns:" <<<"$0"' "$OUT" $rc
for h in -h -help --help; do
    OUT=$("$TOPODNS" $h 2>&1); rc=$?
    check "$h prints the usage and exits 0" bash -c '[ $1 -eq 0 ] && grep -q "^Usage of topodns:" <<<"$0" &&
        grep -q -- "-workers int" <<<"$0"' "$OUT" $rc
done
OUT=$("$TOPODNS" -workers abc 2>&1); rc=$?
check "-workers abc is an error (2)" bash -c '[ $1 -eq 2 ] &&
    grep -q "^invalid value \"abc\" for flag -workers: parse error$" <<<"$0"' "$OUT" $rc
OUT=$("$TOPODNS" -dns.port 99999 2>&1); rc=$?
check "-dns.port 99999 is an error (2)" [ $rc -eq 2 ]
OUT=$("$TOPODNS" -conf 2>&1); rc=$?
check "-conf without a value is an error (2)" bash -c '[ $1 -eq 2 ] &&
    grep -q "^flag needs an argument: -conf$" <<<"$0"' "$OUT" $rc
OUT=$("$TOPODNS" -conf "$TMP/missing" 2>&1); rc=$?
check "missing -conf file is an error" bash -c '[ $1 -ne 0 ] && grep -q "missing" <<<"$0"' "$OUT" $rc
# a device is refused, never read (/dev/zero would never end; /dev/null
# here, which cannot hurt the machine should this regress)
OUT=$(timeout 10 "$TOPODNS" -conf /dev/null 2>&1); rc=$?
check "-conf /dev/null (a device) is an error at once" \
    bash -c '[ $1 -ne 0 ] && [ $1 -ne 124 ] && grep -q "/dev/null: not a regular file" <<<"$0"' "$OUT" $rc
# ... while a pipe is read to its end: -conf /dev/stdin
PORT=$(free_port)
printf '.:%s {\n    whoami\n}\n' "$PORT" | "$TOPODNS" -conf /dev/stdin > "$TMP/stdin.log" 2>&1 &
TOPO_PID=$!
PIDS+=("$TOPO_PID")
wait_dns "$PORT"
q example.org A
check "-conf /dev/stdin from a pipe" additional_has '_udp\.example\.org\.'
stop_topodns
# -workers out of range or not a number: an error, not atoi's undefined
# result (the Corefile binds loopback, should this regress and start)
printf '.:%s {\n    bind 127.0.0.1\n    whoami\n}\n' "$(free_port)" > "$TMP/Corefile.workers"
for w in 99999999999999999999 -3 0 x 4k; do
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/Corefile.workers" -workers "$w" 2>&1); rc=$?
    check "-workers $w is an error" \
        bash -c '[ $1 -eq 2 ] && grep -q "^invalid value \".*\" for flag -workers: parse error$" <<<"$0"' "$OUT" $rc
done

# built-in Corefile (. { whoami log }) when there is no ./Corefile
PORT=$(free_port)
(cd "$TMP" && exec "$TOPODNS" -dns.port "$PORT" -pidfile "$TMP/pid" > "$TMP/default.log" 2>&1) &
TOPO_PID=$!
PIDS+=("$TOPO_PID")
wait_dns "$PORT"
q example.org A
check "built-in Corefile answers with whoami" additional_has '_udp\.example\.org\.'
sleep 0.2
check "built-in Corefile logs the query" grep -q '"A IN example.org. udp' "$TMP/default.log"
check "pidfile written" [ "$(cat "$TMP/pid" 2>/dev/null)" = "$TOPO_PID" ]
kill -TERM "$TOPO_PID"; wait "$TOPO_PID"; rc=$?
check "SIGTERM exits 0" [ $rc -eq 0 ]
check "pidfile removed" [ ! -e "$TMP/pid" ]

# SIGUSR1 reload
start_topodns ".:{\$PORT} {
    whoami
}"
printf 'reload.test:%s {\n    hosts {\n        10.1.2.3 new.reload.test\n    }\n}\n' "$PORT" > "$CONF"
kill -USR1 "$TOPO_PID"
ok=0
for _ in $(seq 1 30); do
    q new.reload.test A
    answer_has '10\.1\.2\.3$' && { ok=1; break; }
    sleep 0.1
done
check "SIGUSR1 loads the new Corefile" [ $ok -eq 1 ]
check "reload logged" grep -q 'Reloading complete' "$LOG"
printf 'reload.test:%s {\n    nosuchplugin\n}\n' "$PORT" > "$CONF"
kill -USR1 "$TOPO_PID"
sleep 0.5
check "broken Corefile is reported with file:line" grep -q "Restart failed: .*:2: Unknown directive 'nosuchplugin'" "$LOG"
q new.reload.test A
check "old configuration keeps serving" answer_has '10\.1\.2\.3$'

# kdig, another client implementation
OUT=$(kdig @127.0.0.1 -p "$PORT" new.reload.test A +tcp 2>&1)
check "kdig over TCP" grep -q '10.1.2.3' <<<"$OUT"
OUT=$(kdig @127.0.0.1 -p "$PORT" new.reload.test A +edns=0 +bufsize=1400 2>&1)
check "kdig with EDNS" bash -c 'grep -q "10.1.2.3" <<<"$0" && grep -q "UDP size: 1400" <<<"$0"' "$OUT"
finish
