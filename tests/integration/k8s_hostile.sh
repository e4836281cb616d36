#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_hostile.sh — the real topodns against an API server that misbehaves
# for the Services collection (kube_hostile.py, a proxy in front of kubesim):
# 1. bad objects: a list page holds a Service with a lone \udcff escape in an
#    annotation and one nested 1100 levels deep, and every watch starts with
#    an ADDED event of such a Service. Those objects are skipped and logged;
#    the rest of the list is used: topodns gets ready, svc1 answers, and a
#    Service created afterwards answers (the watch went on).
# 2. every watch answers 410: the relists back off (0.8, 1.6, 3.2 s ...)
#    instead of ~11 LISTs a second; the Services still answer.
# 3. the continue token never ends (the same one again): the list is given
#    up and started again after the backoff, a few LISTs in 5 s instead of
#    ~1,100 a second, and the log says why.
# 4. (kubesim alone) a Service with 10,000 named ports: every one answers
#    _pN._tcp SRV (the first 1,000 did before, the rest were NXDOMAIN).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
/usr/bin/python3 -c 'import http.server, http.client' 2>/dev/null || skip "python3 not usable"
HERE=$top_srcdir/tests/integration

start_kubesim --load "$KDATA/cluster.json"
RP=$(free_port)

# proxy MODE: kube_hostile.py for services in MODE; its address in HP, log HLOG
proxy() {
    local p
    p=$(free_port)
    HLOG=$TMP/hostile.$1.log
    "$HERE/kube_hostile.py" "$p" "$KS" "$1" services > "$HLOG" 2>&1 &
    PIDS+=($!)
    HOSTILE_PID=$!
    wait_until 5 grep -q ready "$HLOG" || { echo "kube_hostile.py did not start"; cat "$HLOG"; exit 1; }
    HP=http://127.0.0.1:$p
}
stop_proxy() { kill "$HOSTILE_PID" 2>/dev/null; wait "$HOSTILE_PID" 2>/dev/null; }
lists() { grep -c '^REQ LIST' "$HLOG"; }
ready() { [ "$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready")" = 200 ]; }
corefile() {  # ENDPOINT
    echo ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        endpoint $1
        startup_timeout 1s
    }
}"
}

# ---- 1. bad objects ------------------------------------------------------------------
proxy bad
start_topodns "$(corefile "$HP")" || exit 1
check "bad objects: ready all the same" wait_until 10 ready
q svc1.testns.svc.cluster.local A
check "bad objects: svc1 answers" answer_has 'A[[:space:]]+10\.0\.0\.1$'
OUT=$(grep 'skipped' "$LOG")
check "bad objects: the list's two are skipped and logged" \
    grep -q 'services: 2 objects of a list page skipped: not JSON the parser accepts' "$LOG"
check "bad objects: the watch event is skipped and logged" \
    grep -q 'services: ADDED event for default/bad-event skipped' "$LOG"
check "bad objects: no 'malformed list'" eval '! grep -q "malformed list" "$LOG"'
check "bad objects: no 'malformed watch event'" eval '! grep -q "malformed watch event" "$LOG"'
OUT=$(curl -s --noproxy '*' -X POST -H 'Content-Type: application/json' \
    -d '{"metadata":{"name":"late"},"spec":{"clusterIP":"10.96.200.9","ports":[{"port":80}]}}' \
    "$KS/api/v1/namespaces/testns/services")
check "bad objects: a Service created in kubesim" grep -q '"name":"late"' <<<"$OUT"
late() { q late.testns.svc.cluster.local A; answer_has 'A[[:space:]]+10\.96\.200\.9$'; }
check "bad objects: a Service created later answers (the watch goes on)" wait_until 10 late
stop_topodns
stop_proxy

# ---- 2. every watch 410 --------------------------------------------------------------
proxy gone
start_topodns "$(corefile "$HP")" || exit 1
check "410 loop: ready (the lists work)" wait_until 10 ready
n0=$(lists)
sleep 5
n1=$(lists)
OUT="LISTs of services in 5 s: $((n1 - n0)) ($n1 in all)"
echo "$OUT"
# backoff 0.8, 1.6, 3.2 s (+ up to 50 %): at most 3 in any 5 s from the start
check "410 loop: the relists back off (at most 4 LISTs in 5 s, not ~55)" [ $((n1 - n0)) -le 4 ]
check "410 loop: but they go on" [ "$n1" -ge 2 ]
q svc1.testns.svc.cluster.local A
check "410 loop: svc1 answers" answer_has 'A[[:space:]]+10\.0\.0\.1$'
stop_topodns
stop_proxy

# ---- 3. a continue token that repeats ------------------------------------------------
proxy samecont
start_topodns "$(corefile "$HP")" || exit 1
sleep 5
n=$(lists)
OUT="LISTs of services in ~6 s: $n"
echo "$OUT"
check "repeated continue token: a few LISTs (at most 12), not thousands" [ "$n" -le 12 ]
check "repeated continue token: the list starts again" [ "$n" -ge 4 ]
check "repeated continue token: logged" \
    grep -q 'services: the API server repeated the continue token; listing from the start after a backoff' "$LOG"
check "topodns still running" kill -0 "$TOPO_PID"
stop_topodns
stop_proxy

# ---- 4. a Service with 10,000 named ports ------------------------------------------------
/usr/bin/python3 - "$TMP/big.json" <<'PY'
import json, sys
ports = [{"name": "p%d" % i, "port": 1 + i, "protocol": "TCP"} for i in range(10000)]
json.dump({"metadata": {"name": "big"}, "spec": {"clusterIP": "10.96.200.10", "ports": ports}},
          open(sys.argv[1], "w"))
PY
OUT=$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' --data-binary "@$TMP/big.json" \
    "$KS/api/v1/namespaces/testns/services")
check "many ports: the Service is created ($OUT)" [ "$OUT" = 201 ]
start_topodns "$(corefile "$KS")" || exit 1
check "many ports: ready" wait_until 10 ready
for p in 0 256 999 1000 5000 9999; do
    q "_p$p._tcp.big.testns.svc.cluster.local" SRV
    check "many ports: _p$p._tcp answers port $((p + 1))" \
        answer_has "SRV[[:space:]]+0 100 $((p + 1)) big\.testns\.svc\.cluster\.local\.$"
done
q _p10000._tcp.big.testns.svc.cluster.local SRV
check "many ports: _p10000._tcp (no such port) is NXDOMAIN" rcode_is NXDOMAIN
stop_topodns
finish
