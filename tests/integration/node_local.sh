#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# node_local.sh — node-local mode (`topology { node NAME }`, the DaemonSet
# shape) end to end. kubesim serves the three-zone cluster of topology.sh
# (tests/data/topology/cluster.yaml: nodes a1 a2 | b1 b2 | c1 c2, client
# pods on 127.0.<zone>.<n>, node addresses 127.0.10.n); topodns runs as the
# instance of node a1. Checked:
#   - every client, whatever its address (a pod of a1, a pod of b1, b1's
#     node address, an address nobody has), is answered as a client on a1;
#   - the API requests (kubesim's request log): no pod list or watch, and
#     nodes only with fieldSelector metadata.name=a1, lists and watches;
#   - relabelling a1's zone changes the answers; relabelling another node
#     changes nothing (its events are never sent);
#   - with `pods verified` (autopath's need) pods are watched again, and a
#     known pod of another node is located there, not on a1;
#   - a reload naming another node watches that node instead;
#   - kubesim's field selectors on nodes behave as the API server's
#     (metadata.name = and !=, 400 for metadata.namespace, a watch by name
#     gets no other node's events).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
command -v jq >/dev/null || skip "jq not installed"
command -v curl >/dev/null || skip "curl not installed"
start_kubesim
load_fixture "$top_srcdir/tests/data/topology/cluster.yaml"

# --- kubesim: field selectors on nodes, as the API server has them ---------
nodes_named() { curl -s "$KS/api/v1/nodes?fieldSelector=$1" | jq -r '[.items[].metadata.name] | join(" ")'; }
OUT=$(nodes_named 'metadata.name%3Da1')
check "kubesim: nodes metadata.name=a1 lists a1 only" test "$OUT" = "a1"
OUT=$(nodes_named 'metadata.name%21%3Da1')
check "kubesim: nodes metadata.name!=a1 lists the others" test "$OUT" = "a2 b1 b2 c1 c2"
OUT=$(curl -s -o /dev/null -w '%{http_code}' "$KS/api/v1/nodes?fieldSelector=metadata.namespace%3Dx")
check "kubesim: nodes have no metadata.namespace field label (400)" test "$OUT" = 400
OUT=$(curl -s -o /dev/null -w '%{http_code}' "$KS/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse")
check "kubesim: nodes spec.unschedulable is supported" test "$OUT" = 200
# a watch by name gets that node's events only
RV=$(curl -s "$KS/api/v1/nodes" | jq -r .metadata.resourceVersion)
curl -sN --max-time 30 "$KS/api/v1/nodes?watch=1&resourceVersion=$RV&fieldSelector=metadata.name%3Da2" \
    > "$TMP/watch.out" 2>/dev/null &
WATCH=$!
label() {
    curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' \
        -d "{\"metadata\":{\"labels\":{\"watched\":\"$2\"}}}" "$KS/api/v1/nodes/$1" > /dev/null
}
label b2 no     # first: the watch must skip it
label a2 yes
until_ok 10 grep -q '"watched":"yes"' "$TMP/watch.out"
kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null
OUT=$(jq -r '.type + " " + .object.metadata.name + " " + (.object.metadata.labels.watched // "-")' "$TMP/watch.out")
check "kubesim: a watch by name sends that node's event, not another's" test "$OUT" = "MODIFIED a2 yes"
curl -s -X DELETE "$KS/sim/v1/requests" > /dev/null

# --- topodns as node a1's instance -------------------------------------------
EXPLAIN=$(free_port)
METRICS=$(free_port)
export NODE_NAME=a1
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
    topology {
        node {\$NODE_NAME}
        explain 127.0.0.1:$EXPLAIN
    }
    prometheus 127.0.0.1:$METRICS
}" || exit 1

S=prod.svc.cluster.local
# addrs PORT NAME SOURCE: the sorted answer addresses, one line
addrs() {
    dig @127.0.0.1 -p "$1" -b "$3" +time=2 +tries=1 +short "$2.$S" A | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect WHAT NAME SOURCE WANT [PORT]
expect() { local got; got=$(addrs "${5:-$PORT}" "$2" "$3"); OUT="got '$got' want '$4'"; check "$1" test "$got" = "$4"; }
# within WHAT NAME SOURCE WANT [PORT]: the answer becomes WANT within 3 s
within() {
    local got i
    for i in $(seq 1 60); do
        got=$(addrs "${5:-$PORT}" "$2" "$3")
        [ "$got" = "$4" ] && break
        sleep 0.05
    done
    OUT="got '$got' want '$4' (after 3 s)"; check "$1" test "$got" = "$4"
}
within "synced: a1 is in zone-a" hinted 127.0.1.1 "10.20.2.1 10.20.2.2"

# hints (forZones): zone-a's endpoints for everyone, the node's zone
expect "hints: a pod of a1"             hinted 127.0.1.1  "10.20.2.1 10.20.2.2"
expect "hints: a pod of b1 (zone-b)"    hinted 127.0.2.1  "10.20.2.1 10.20.2.2"
expect "hints: a pod of c2 (zone-c)"    hinted 127.0.3.2  "10.20.2.1 10.20.2.2"
expect "hints: b1's node address"       hinted 127.0.10.3 "10.20.2.1 10.20.2.2"
expect "hints: an address nobody has"   hinted 127.0.9.9  "10.20.2.1 10.20.2.2"
# internalTrafficPolicy Local: a1's own endpoint for everyone
expect "itp: a pod of b1 gets a1's endpoint" itp 127.0.2.1 "10.20.3.1"
expect "itp: unknown address gets a1's endpoint" itp 127.0.9.9 "10.20.3.1"
# topologyKeys hostname first: a1's endpoint
expect "keys: own node for a pod of c1" keys 127.0.3.1 "10.20.4.1"
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=hinted.$S&type=A&client=127.0.2.1"); OUT=$J
check "explain: located on a1 by node-local mode" \
    eval 'jq -e ".client.located_by == \"node-local\" and .client.node == \"a1\" and .client.zone == \"zone-a\"" <<<"$J" >/dev/null'
M=$(curl -s "http://127.0.0.1:$METRICS/metrics"); OUT=$(grep topology_answers <<<"$M")
check "metric: no client counted unknown" eval '! grep -q "outcome=\"unknown_client\"" <<<"$M"'
check "metric: hints answered locally" grep -qE '^topodns_topology_answers_total\{outcome="local",policy="hints"\} [1-9]' <<<"$M"
OUT=$(grep received_bytes <<<"$M")
check "metric: bytes received for nodes, none for pods" \
    eval 'grep -qE "^topodns_kubernetes_received_bytes_total\{resource=\"nodes\"\} [1-9]" <<<"$M" &&
          ! grep -q "received_bytes_total{resource=\"pods\"}" <<<"$M"'

# --- what was asked of the API server ----------------------------------------
R=$(curl -s "$KS/sim/v1/requests" | jq -r '.requests[].uri')
OUT=$R
check "requests: no pod list or watch" eval '! grep -q "^/api/v1/pods" <<<"$R"'
check "requests: a node list by name" grep -qE '^/api/v1/nodes\?limit=[0-9]+&fieldSelector=metadata\.name%3Da1$' <<<"$R"
check "requests: a node watch by name" \
    grep -qE '^/api/v1/nodes\?watch=1&.*fieldSelector=metadata\.name%3Da1' <<<"$R"
check "requests: no node request without that selector" \
    eval '! grep "^/api/v1/nodes" <<<"$R" | grep -qv "fieldSelector=metadata\.name%3Da1"'
check "requests: services and endpointslices watched" \
    eval 'grep -q "^/api/v1/services?watch=1" <<<"$R" && grep -q "^/apis/discovery.k8s.io/v1/endpointslices?watch=1" <<<"$R"'

# --- node changes ---------------------------------------------------------------
K label node b1 topology.kubernetes.io/zone=zone-c --overwrite > /dev/null
sleep 0.5
expect "another node relabelled: nothing changes" hinted 127.0.2.1 "10.20.2.1 10.20.2.2"
K label node a1 topology.kubernetes.io/zone=zone-b --overwrite > /dev/null
within "a1 moved to zone-b: zone-b's endpoints for a pod of a1" hinted 127.0.1.1 "10.20.2.3"
expect "a1 moved to zone-b: and for an unknown address" hinted 127.0.9.9 "10.20.2.3"
expect "a1 moved to zone-b: require follows" require 127.0.2.1 "10.20.5.3"

# --- pods verified: pods come back, a known pod of another node is there ------
curl -s -X DELETE "$KS/sim/v1/requests" > /dev/null
P1=$PORT C1=$CONF T1=$TOPO_PID
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
        pods verified
    }
    topology {
        node a1
    }
}" || exit 1
within "pods verified: a pod of a1 still on a1" itp 127.0.1.1 "10.20.3.1"
expect "pods verified: a known pod of b1 is located on b1" itp 127.0.2.1 "10.20.3.2"
expect "pods verified: an unknown address is on a1" itp 127.0.9.9 "10.20.3.1"
R=$(curl -s "$KS/sim/v1/requests" | jq -r '.requests[].uri'); OUT=$R
check "pods verified: pods listed and watched" grep -q '^/api/v1/pods?watch=1' <<<"$R"
check "pods verified: nodes still by name only" \
    eval '! grep "^/api/v1/nodes" <<<"$R" | grep -qv "fieldSelector=metadata\.name%3Da1"'
expect "first instance unaffected" hinted 127.0.1.1 "10.20.2.3" "$P1"

# --- a reload to another node: a new watch of that node ----------------------
stop_topodns        # the pods verified instance: its requests would mix in
curl -s -X DELETE "$KS/sim/v1/requests" > /dev/null
sed -i 's/node {\$NODE_NAME}/node b1/' "$C1"
kill -USR1 "$T1"
within "reloaded as b1's instance (b1 is in zone-c now)" hinted 127.0.1.1 "10.20.2.4" "$P1"
R=$(curl -s "$KS/sim/v1/requests" | jq -r '.requests[].uri'); OUT=$R
check "reloaded: b1 listed and watched by name" \
    eval 'grep "^/api/v1/nodes" <<<"$R" | grep -q "fieldSelector=metadata.name%3Db1" &&
          ! grep "^/api/v1/nodes" <<<"$R" | grep -q "fieldSelector=metadata.name%3Da1$"'

finish
