#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_strings.sh — strings the cluster store no longer uses do not pile up.
#
# The store interns label values, port names, node and zone names and a
# Service's topology annotations in a string table that only grows, so a
# user who rewrites an annotation with new values again and again would
# make topodns hold every value it ever saw. Once the table has grown past
# its size after the sync by more than TOPODNS_STRING_TABLE_SLACK (64 KiB
# here), the kubernetes plugin reloads and builds its store anew from a
# full list.
#
# 1. The same two annotation values, written 40 times: nothing new to hold,
#    no reload, no new list.
# 2. 60 writes of new values (about 2.8 KB of new strings each): the log
#    says the table has grown, a reload completes, the API server sees new
#    lists, and every query of a Service name asked meanwhile is answered
#    NOERROR with its address.
# 3. A bad value of the variable stops startup.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

start_kubesim --generate nodes=3,pods=30,services=5,zones=3 --seed 3
MP=$(free_port)
NAME=svc-00001.ns-0.svc.cluster.local
export TOPODNS_STRING_TABLE_SLACK=65536
start_topodns "$(printf '.:{$PORT} {\n    bind 127.0.0.1\n    kubernetes cluster.local {\n        endpoint %s\n    }\n    prometheus 127.0.0.1:%s\n}\n' "$KS" "$MP")" || exit 1

lists() { api_lists "$MP"; }
completed() { grep -c '^\[INFO\] Reloading complete$' "$LOG"; }
cat > "$TMP/annotate.py" <<'PY'
# annotate.py URL N SEEDS: N writes (merge patches) of the Service's
# topology-keys annotation, the i-th with 32 comma-separated keys of 30
# characters made from SEEDS[i % len(SEEDS)] (the same seed, the same
# value); prints the HTTP status of each write, one per line
import sys, urllib.request
url, n, seeds = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
for i in range(n):
    seed = seeds[i % len(seeds)]
    keys = ",".join(("k%s-%d-%s" % (seed, k, "x" * 30))[:30] for k in range(32))
    body = ('{"metadata":{"annotations":{"topodns.io/topology-keys":"%s"}}}' % keys).encode()
    req = urllib.request.Request(url, data=body, method="PATCH",
                                 headers={"Content-Type": "application/merge-patch+json"})
    with urllib.request.urlopen(req) as r:
        print(r.status)
PY
annotate() {  # annotate N SEED,...: the answers' status codes, counted
    /usr/bin/python3 "$TMP/annotate.py" "$KS/api/v1/namespaces/ns-0/services/svc-00001" "$@" |
        sort | uniq -c | tr -s ' '
}

q -b 127.0.1.1 "$NAME" A
check "served before" rcode_is NOERROR
until_ok 5 test -n "$(lists)"
L0=$(lists) R0=$(completed)

# --- 1. the same values again and again ---------------------------------------
codes=$(annotate 40 a,b)
OUT="PATCH answers: $codes"
check "40 writes accepted" [ "$codes" = " 40 200" ]
sleep 1
OUT="lists before $L0, after $(lists); reloads $(completed)"
check "two values written 40 times: no reload" [ "$(completed)" -eq "$R0" ]
check "two values written 40 times: no new list" [ "$(lists)" = "$L0" ]
check "no growth warning" bash -c "! grep -q 'string table has grown' '$LOG'"

# --- 2. new values every time ---------------------------------------------------
/usr/bin/python3 "$top_srcdir/tests/integration/asker.py" "$PORT" "$NAME" "$TMP/stop" > "$TMP/ask.out" 2>&1 &
ASK=$!
PIDS+=("$ASK")
codes=$(annotate 60 "$(seq -s, 1 60)")
OUT="PATCH answers: $codes"
check "60 writes accepted" [ "$codes" = " 60 200" ]
OUT=$(grep 'string table' "$LOG" | head -3)
check "the log says the string table has grown" until_ok 5 grep -q 'string table has grown' "$LOG"
reloaded() { [ "$(completed)" -gt "$R0" ]; }
check "a reload completes" until_ok 10 reloaded
OUT="lists before $L0, after $(lists)"
check "the new store was filled by a full list" [ "$(lists)" -gt "$L0" ]
sleep 0.5
touch "$TMP/stop"
wait "$ASK"
read -r sent lost bad < "$TMP/ask.out"
OUT="$(cat "$TMP/ask.out") (sent, unanswered, not NOERROR with an address)"
check "every query answered meanwhile" test "${sent:-0}" -gt 20 -a "${lost:-1}" -eq 0 -a "${bad:-1}" -eq 0
# the renewed store serves the object as last written
q -b 127.0.1.1 "$NAME" A
check "served after" rcode_is NOERROR
stop_topodns
check "exits 0" [ $? -eq 0 ]

# --- 3. a bad value --------------------------------------------------------------
for v in 100 abc 18446744073709551616; do
    OUT=$(TOPODNS_STRING_TABLE_SLACK=$v timeout 5 "$TOPODNS" -conf /dev/null -dns.port "$(free_port)" 2>&1)
    rc=$?
    check "TOPODNS_STRING_TABLE_SLACK=$v stops startup" [ "$rc" -ne 0 ]
    check "TOPODNS_STRING_TABLE_SLACK=$v: the message" \
        grep -q "FATAL.*TOPODNS_STRING_TABLE_SLACK: invalid value '$v' (a number from 4096 to" <<<"$OUT"
done
finish
