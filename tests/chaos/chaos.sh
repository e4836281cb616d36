#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# chaos.sh — chaos with an oracle: kubesim churns and fails in every way its
# fault API offers (closed watches, 410 after an expired history, 429/500/503
# with Retry-After, delays, malformed watch lines, split chunks, a rotated
# token, a restore to a saved state at a lower resourceVersion) while DNS
# clients in three zones query topodns all the time; then the faults stop and
# every Service and pod name, asked from each zone, must equal the answer
# computed from kubesim's /sim/v1/state within 2 s (tests/chaos/chaos.py has
# the oracle, the fault cycle and the criteria).
#
# Short form (make check): CHAOS_SECONDS=35 of faults, about 50 s in all.
# Long form: `make chaos` (CHAOS_SECONDS=300), or set CHAOS_SECONDS;
# CHAOS_CHURN changes the churn rate (20 changes/s).
# The cluster is small on purpose (6 nodes in 3 zones, 60 Services, 180
# pods, churn 20 changes/s): the machine running the suite is shared, and
# the 2 s convergence limit should measure topodns, not a starved CPU.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
[ -x "$KUBESIM" ] || skip "kubesim not built"
command -v curl >/dev/null || skip "curl not installed"
/usr/bin/python3 -c 'import dns.message' 2>/dev/null || skip "python3-dnspython not installed"

SECONDS_OF_FAULTS=${CHAOS_SECONDS:-35}
TOKEN=chaos-token-0
start_kubesim --token "$TOKEN" --bookmark-interval 5 \
    --generate nodes=6,pods=180,services=60,zones=3

api() {   # api METHOD PATH JSON: the HTTP status
    curl -s --noproxy '*' -o "$TMP/api.out" -w '%{http_code}' -X "$1" \
        -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d "$3" "$KS$2"
}
for ns in chaos chaos-clients; do
    [ "$(api POST /api/v1/namespaces "{\"metadata\":{\"name\":\"$ns\"}}")" = 201 ] ||
        { echo "cannot create namespace $ns: $(cat "$TMP/api.out")"; exit 1; }
done
# one client pod per zone: node-0000z is in zone region-1{a,b,c} (kubesim's
# generator spreads nodes round-robin); dig -b 127.0.1z.1 plays it
for z in 0 1 2; do
    ip=127.0.1$z.1
    [ "$(api POST /api/v1/namespaces/chaos-clients/pods "{\"metadata\":{\"name\":\"client-$z\"},
        \"spec\":{\"nodeName\":\"node-0000$z\",\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}]},
        \"status\":{\"phase\":\"Running\",\"podIP\":\"$ip\",\"podIPs\":[{\"ip\":\"$ip\"}]}}")" = 201 ] ||
        { echo "cannot create client-$z: $(cat "$TMP/api.out")"; exit 1; }
done

echo "$TOKEN" > "$TMP/token"
cat > "$TMP/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sim
  cluster:
    server: $KS
users:
- name: dns
  user:
    tokenFile: $TMP/token
contexts:
- name: sim
  context:
    cluster: sim
    user: dns
current-context: sim
EOF

start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        kubeconfig $TMP/kubeconfig
        pods verified
    }
    topology
}" || exit 1
# synced: the last client pod's own name answers
synced() { q -b 127.0.12.1 127-0-12-1.chaos-clients.pod.cluster.local A +short; [ "$OUT" = 127.0.12.1 ]; }
check "topodns synced with kubesim" until_ok 20 synced

# reflectors: services, endpointslices, namespaces, pods, nodes
/usr/bin/python3 "$top_srcdir/tests/chaos/chaos.py" --kubesim "$KS" --dns-port "$PORT" \
    --token "$TOKEN" --token-file "$TMP/token" --seconds "$SECONDS_OF_FAULTS" \
    --reflectors 5 --churn "${CHAOS_CHURN:-20}" > "$TMP/chaos.out" 2>&1
rc=$?
cat "$TMP/chaos.out"
OUT=$(tail -1 "$TMP/chaos.out")
check "chaos: converged within 2 s, no SERVFAIL/NXDOMAIN for stable names" [ "$rc" -eq 0 ]
check "topodns still running" kill -0 "$TOPO_PID"
if [ "$rc" -ne 0 ]; then
    echo "---- topodns log (last 40 lines)"
    tail -40 "$LOG"
fi
OUT=$(grep -c "token" "$LOG" | tr -d ' ')
check "the token never appears in the log" eval "! grep -q 'chaos-token' '$LOG'"
finish
