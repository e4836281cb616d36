#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_ready.sh — startup_timeout and readiness of the kubernetes plugin
# (docs/compatibility.md, 1.13 Ingestion and 2. Options;
# src/plugin/ready/README.md): with an API that does not answer, startup
# waits startup_timeout logging "waiting for Kubernetes API before starting
# server" every 500 ms, then "starting server with unsynced Kubernetes API";
# /ready is 503 with the body "kubernetes" and name errors are SERVFAIL+SOA
# until the watches sync; when the API comes up (kubesim started on that
# port) the plugin syncs, /ready turns 200 OK and answers are normal. With a
# working API, startup does not wait for the timeout.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

APIP=$(free_port)
RP=$(free_port)
t0=$(date +%s%N)
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        endpoint http://127.0.0.1:$APIP
        startup_timeout 2s
    }
}" || exit 1
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# at least the 2 s; the upper bound leaves room for a loaded machine (the
# message count below, from topodns's own 500 ms timer, tells 2 s from a
# longer wait)
check "unreachable API: startup waited about startup_timeout (${ms} ms)" eval '[ $ms -ge 1900 ] && [ $ms -lt 10000 ]'
nwait=$(grep -c 'waiting for Kubernetes API before starting server' "$LOG")
check "waiting message every 500 ms (${nwait}×)" eval '[ $nwait -ge 3 ] && [ $nwait -le 4 ]'
check "then: starting server with unsynced Kubernetes API" grep -q 'starting server with unsynced Kubernetes API' "$LOG"
ready() { curl -s -o "$TMP/ready.body" -w '%{http_code}' "http://127.0.0.1:$RP/ready"; }
check "/ready 503 while unsynced" eval '[ "$(ready)" = 503 ]'
check "/ready body names the plugin: kubernetes" eval '[ "$(tr -d "\n" < "$TMP/ready.body")" = kubernetes ]'
q svc1.testns.svc.cluster.local A
check "name error before sync: SERVFAIL with SOA, AA" eval \
    'rcode_is SERVFAIL && aa_set && authority_has "^cluster\.local\..*SOA[[:space:]]+ns\.dns\.cluster\.local\."'
q cluster.local SOA
check "apex SOA is served before sync" eval 'rcode_is NOERROR && answer_has SOA'

# the API comes up on that port with the acceptance fixture
"$KUBESIM" --listen 127.0.0.1:$APIP --load "$KDATA/cluster.json" > "$TMP/ks2.out" 2>&1 &
PIDS+=("$!")
check "API up: /ready 200 OK" until_ok 20 eval '[ "$(ready)" = 200 ] && [ "$(cat "$TMP/ready.body")" = OK ]'
q svc1.testns.svc.cluster.local A
check "after sync: svc1 answers" eval 'rcode_is NOERROR && answer_has "A[[:space:]]+10\.0\.0\.1$"'
q svc0.testns.svc.cluster.local A
check "after sync: name errors are NXDOMAIN" rcode_is NXDOMAIN
stop_topodns

# a reachable API: startup waits only for the first lists
start_kubesim --load "$KDATA/cluster.json"
t0=$(date +%s%N)
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        endpoint $KS
        startup_timeout 10s
    }
}" || exit 1
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# it did not wait for the timeout: no "unsynced" start, and before the 10 s
# (with room for a loaded machine; on an idle one well under a second)
check "reachable API: started in ${ms} ms, well before startup_timeout" eval \
    '[ $ms -lt 8000 ] && ! grep -q "starting server with unsynced Kubernetes API" "$LOG"'
check "reachable API: no unsynced message" eval '! grep -q "unsynced" "$LOG"'
check "reachable API: /ready 200 at once" eval '[ "$(ready)" = 200 ]'
q svc1.testns.svc.cluster.local A
check "reachable API: answers at once" answer_has "A[[:space:]]+10\.0\.0\.1$"
stop_topodns

# durations: Go syntax accepted, garbage is a config error with file:line
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
        startup_timeout 1m30s
    }
}"
check "startup_timeout 1m30s accepted" eval 'q svc1.testns.svc.cluster.local A; answer_has "10\.0\.0\.1$"'
stop_topodns
printf '.:{$PORT} {\n    kubernetes cluster.local {\n        endpoint %s\n        startup_timeout soon\n    }\n}\n' "$KS" > "$TMP/C2"
"$TOPODNS" -conf "$TMP/C2" > "$TMP/v2" 2>&1 & p=$!
for i in $(seq 1 30); do kill -0 $p 2>/dev/null || break; sleep 0.1; done
kill $p 2>/dev/null; wait $p 2>/dev/null
check "startup_timeout soon: config error at C2:4 near 'soon'" eval 'grep -q "C2:4" "$TMP/v2" && grep -q "soon" "$TMP/v2"'
finish
