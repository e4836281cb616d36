#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# reload_handover.sh — a reload never serves cluster names from a store that
# has not synced.
#
# 1. The kubernetes stanza is unchanged (only another plugin changed): the
#    new instance adopts the running cluster context. The API server sees
#    no new list and no new watch, and names answer throughout.
# 2. The kubernetes stanza changed while the API server fails every request:
#    the new instance cannot sync, so the running one keeps serving what it
#    knows (no SERVFAIL, its TTL) and the log says the reload waits; once the
#    API answers again the new configuration takes over (its TTL).
# 3. Nothing is lost while instances swap: during 20 reloads clients keep
#    asking over UDP and TCP and every query gets its answer (the new
#    instance takes over the very sockets, and the old one stops accepting
#    and finishes its open connections before it goes).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

start_kubesim --generate nodes=3,pods=30,services=5,zones=3 --seed 3
MP=$(free_port)
NAME=svc-00001.ns-0.svc.cluster.local
corefile() {  # corefile TTL EXTRA-LINE
    printf '.:{$PORT} {\n    bind 127.0.0.1\n    kubernetes cluster.local {\n        endpoint %s\n        ttl %s\n        startup_timeout 1s\n    }\n    prometheus 127.0.0.1:%s\n%s\n}\n' \
        "$KS" "$1" "$MP" "$2"
}
start_topodns "$(corefile 5 '')" || exit 1
printf '%s\n' "$(corefile 5 '')" | sed "s/{\$PORT}/$PORT/" > "$CONF"

completed() { grep -c '^\[INFO\] Reloading complete$' "$LOG"; }
reload_done() { [ "$(completed)" -gt "$1" ]; }
lists() { api_lists "$MP"; }
watches() { curl -s "$KS/sim/v1/faults" | sed -n 's/.*"watches": *\([0-9]*\).*/\1/p'; }
answers_ttl() {  # answers_ttl TTL: NOERROR with an A record of that TTL
    q -b 127.0.1.1 "$NAME" A
    rcode_is NOERROR && grep -qE "^$NAME\.[[:space:]]+$1[[:space:]]+IN[[:space:]]+A[[:space:]]" <<<"$OUT"
}

check "served before any reload" answers_ttl 5
until_ok 5 test -n "$(lists)"
L0=$(lists) W0=$(watches)

# --- 1. unchanged kubernetes stanza: the context is handed over ----------------
printf '%s\n' "$(corefile 5 '    errors')" | sed "s/{\$PORT}/$PORT/" > "$CONF"
n=$(completed)
kill -USR1 "$TOPO_PID"
check "reload with the same kubernetes stanza completes" until_ok 10 reload_done "$n"
check "answers after the handover" answers_ttl 5
OUT="lists before $L0, after $(lists)"
check "no new list: the synced store was handed over" [ "$(lists)" = "$L0" ]
OUT="watches before $W0, after $(watches)"
check "no new watch on the API server" [ "$(watches)" = "$W0" ]

# --- 2. changed stanza, API failing: the old instance keeps serving -------------
curl -s -o /dev/null -X POST "$KS/sim/v1/faults" \
    -d '{"failNext":{"count":1000000,"code":503,"retryAfter":1},"closeWatches":true}'
printf '%s\n' "$(corefile 7 '    errors')" | sed "s/{\$PORT}/$PORT/" > "$CONF"
n=$(completed)
kill -USR1 "$TOPO_PID"
bad=0
for _ in $(seq 1 30); do        # 3 s: three times the new startup_timeout
    answers_ttl 5 || { bad=$((bad + 1)); echo "$OUT" | head -5; }
    sleep 0.1
done
OUT="$bad of 30 queries not answered by the running configuration"
check "while the new configuration cannot sync, the running one answers" [ "$bad" -eq 0 ]
check "the reload has not completed meanwhile" [ "$(completed)" -eq "$n" ]
OUT=$(tail -5 "$LOG")
check "the log says the reload waits" grep -q 'Reload waiting for the new configuration' "$LOG"
curl -s -o /dev/null -X POST "$KS/sim/v1/faults" -d '{"reset":true}'
check "once the API answers, the reload completes" until_ok 15 reload_done "$n"
check "the new configuration serves (ttl 7)" until_ok 5 answers_ttl 7

# --- 3. no query lost across reloads -------------------------------------------
/usr/bin/python3 "$top_srcdir/tests/integration/asker.py" "$PORT" "$NAME" "$TMP/stop" 127.0.3.1 4 \
    > "$TMP/ask.out" 2>&1 &
ASK=$!
PIDS+=("$ASK")
sleep 0.3
done_reloads=0
for i in $(seq 1 20); do
    n=$(completed)
    kill -USR1 "$TOPO_PID"
    until_ok 10 reload_done "$n" || break
    done_reloads=$i
done
sleep 0.3
touch "$TMP/stop"
wait "$ASK"
read -r sent lost bad < "$TMP/ask.out"
OUT="$done_reloads reloads; $(cat "$TMP/ask.out") (sent, lost, not NOERROR with an address)"
check "20 reloads under queries" [ "$done_reloads" -eq 20 ]
check "no query lost while the instances swap" test "${sent:-0}" -gt 50 -a "${lost:-1}" -eq 0
check "every reply NOERROR with the address" [ "${bad:-1}" -eq 0 ]

stop_topodns
check "exits 0" [ $? -eq 0 ]
finish
