#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# k8s_client.sh — the API client keeps the cluster store exactly in sync
# with kubesim: paginated first sync, kubectl changes, and every fault
# (closed watches, expired history → 410, failing requests, malformed lines,
# split chunks, token rotation read from a token file).
. "$top_srcdir/tests/integration/lib.sh"
KUBESIM=$top_builddir/tests/kubesim/kubesim
SYNC=$top_builddir/tests/k8s_sync_check

start_kubesim() {
    "$KUBESIM" "$@" > "$TMP/ks.out" 2> "$TMP/ks.err" &
    PIDS+=($!)
    for _ in $(seq 1 100); do [ -s "$TMP/ks.out" ] && break; sleep 0.1; done
    KS=http://$(head -1 "$TMP/ks.out" | sed -n 's/^listening on //p')
}
fault() { curl -s --noproxy '*' -X POST -d "$1" "$KS/sim/v1/faults" >/dev/null; }
K() { kubectl --server "$KS" --kubeconfig=/dev/null "$@" >/dev/null 2>&1; }
expected() {
    curl -s --noproxy '*' "$KS/sim/v1/state" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
print("counts synced=1 " + " ".join("%s=%d" % (k, len(s[k])) for k in
      ("services", "endpointslices", "pods", "nodes", "namespaces")))'
}
# converge WHAT: the client's last line equals kubesim's state within 15 s.
# (Each step needs a second or two at most; the margin is for a loaded CI
# machine running the sanitizer builds.) The log says how long each took,
# and a failure shows the client's last lines.
converge() {
    local want got t0 ms
    t0=$(date +%s%N)
    while :; do
        want=$(expected)
        got=$(grep "^counts" "$TMP/sync.log" | tail -1)
        ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        [ "$want" = "$got" ] && break
        [ "$ms" -gt 15000 ] && break
        sleep 0.1
    done
    echo "$1: $ms ms"
    OUT="want: $want
got:  $got
after $ms ms; the client's last lines:
$(grep -v "^counts" "$TMP/sync.log" | tail -15)"
    check "$1" [ "$want" = "$got" ]
}

start_kubesim --generate nodes=20,pods=1200,services=30,zones=3 --bookmark-interval 1 --history 200
# the client runs until killed below (300 s is only a bound: a loaded
# machine takes well over a minute for the steps below)
"$SYNC" "$KS" 300 > "$TMP/sync.log" 2>&1 &
SYNC_PID=$!
PIDS+=("$SYNC_PID")
converge "first sync, paginated (1200 pods in pages of 500)"

cat > "$TMP/svc.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: added, namespace: default}
spec: {clusterIP: None, ports: [{name: p, port: 80}]}
Y
K create -f "$TMP/svc.yaml" --validate=false
converge "kubectl create seen"

fault '{"closeWatches":true}'
K delete -f "$TMP/svc.yaml"
converge "watches closed, delete still seen"

fault '{"expireHistory":true}'
fault '{"closeWatches":true}'
K create -f "$TMP/svc.yaml" --validate=false
converge "history expired (410), relist converges"

fault '{"failNext":{"count":4,"code":500}}'
fault '{"closeWatches":true}'
K delete -f "$TMP/svc.yaml"
converge "failing requests, backoff, converges"

fault '{"failNext":{"count":2,"code":429,"retryAfter":1}}'
fault '{"closeWatches":true}'
K create -f "$TMP/svc.yaml" --validate=false
converge "429 with Retry-After, converges"

fault '{"splitChunks":true}'
K delete -f "$TMP/svc.yaml"
converge "events split across chunks"

fault '{"malformedWatchLine":true}'
K create -f "$TMP/svc.yaml" --validate=false
converge "malformed watch line, converges"

OUT=$(tail -15 "$TMP/sync.log")
check "never crashed" kill -0 "$SYNC_PID"
kill "$SYNC_PID" 2>/dev/null; wait "$SYNC_PID" 2>/dev/null

# bearer token from a file, rotated
start_kubesim --token s3cret --generate nodes=3,pods=20,services=2,zones=1
echo s3cret > "$TMP/token"
"$SYNC" "$KS" "$TMP/token" 300 > "$TMP/sync.log" 2>&1 &
PIDS+=($!)
expected() {
    curl -s --noproxy '*' -H "Authorization: Bearer $(cat "$TMP/token")" "$KS/sim/v1/state" | /usr/bin/python3 -c '
import json, sys
s = json.load(sys.stdin)
print("counts synced=1 " + " ".join("%s=%d" % (k, len(s[k])) for k in
      ("services", "endpointslices", "pods", "nodes", "namespaces")))'
}
converge "token from a file"
fault '{"rotateToken":"n3w"}'
echo n3w > "$TMP/token"
fault '{"closeWatches":true}'
victim=$(curl -s --noproxy '*' -H 'Authorization: Bearer n3w' "$KS/api/v1/services" | /usr/bin/python3 -c 'import json,sys; m=json.load(sys.stdin)["items"][0]["metadata"]; print(m["namespace"] + "/services/" + m["name"])')
curl -s --noproxy '*' -H 'Authorization: Bearer n3w' -X DELETE "$KS/api/v1/namespaces/$victim" >/dev/null
converge "token rotated: 401, file re-read, converges"
finish
