#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# topology_locate.sh — topology without a pod watch (`topology { locate
# SOURCE... }`) end to end. kubesim serves the three-zone cluster of
# topology.sh (tests/data/topology/cluster.yaml: nodes a1 a2 | b1 b2 | c1
# c2, client pods on 127.0.<zone>.<n>); each node is given a podCIDR that
# holds its pods' addresses (a1 127.0.1.0/31, a2 127.0.1.2/31, ...), as
# kubenet or flannel would. Checked:
#   - `locate podcidr endpoints` answers every client of every Service the
#     same as the default pod watch (`locate pods`) — the fixture's clients
#     and a generated fleet of 64 nodes and 2,560 pods, each node's pods in
#     its /26 — and the API server
#     (kubesim's request log) never sees a pod list or watch;
#   - a client outside every range but with an EndpointSlice endpoint is
#     located by its slice (explain: located_by endpoints);
#   - an endpoint whose nodeName disagrees with the node of the range
#     holding its address is counted (topodns_locator_conflicts_total) and
#     logged once; the order of `locate` decides where it is located;
#   - a Node that gains a range is followed; lookups are counted by source;
#   - `cilium` and `calico` on an API server without their CRDs: the 404 is
#     logged once, the server still becomes ready and answers; then (when
#     kubesim serves CRDs) the CRDs of tests/data and CiliumNode /
#     BlockAffinity objects are applied with kubectl: picked up on the next
#     retry, clients located by them (confirmed blocks only), answers equal
#     to the pod watch's, range changes followed, no pod list or watch.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"
start_topology_cluster

# podCIDRs holding each node's pods (ca1 127.0.1.1 on a1, ca2 127.0.1.2 on a2, ...)
cidr() {
    K patch node "$1" --type merge -p "{\"spec\":{\"podCIDR\":\"$2\",\"podCIDRs\":[\"$2\"]}}" > /dev/null
}
cidr a1 127.0.1.0/31; cidr a2 127.0.1.2/31
cidr b1 127.0.2.0/31; cidr b2 127.0.2.2/31
cidr c1 127.0.3.0/31; cidr c2 127.0.3.2/31
OUT=$(K get node b2 -o jsonpath='{.spec.podCIDRs[0]}')
check "kubesim keeps a node's podCIDRs" test "$OUT" = "127.0.2.2/31"

# A larger fleet for the comparison: 64 nodes over the three zones, each
# with a /26 podCIDR (127.1.N.0/26) holding its 40 pods, and two headless
# Services answered per zone (trafficDistribution PreferClose) and per node
# (internalTrafficPolicy Local): 2,560 clients, asked by answers.py.
/usr/bin/python3 - > "$TMP/fleet.json" <<'PY'
import json
items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fleet"}}]
zones = ["zone-a", "zone-b", "zone-c"]
def node(n): return "g%02d" % n
for n in range(64):
    items.append({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node(n), "labels": {"topology.kubernetes.io/zone": zones[n % 3],
                                                 "kubernetes.io/hostname": node(n)}},
        "spec": {"podCIDR": "127.1.%d.0/26" % n, "podCIDRs": ["127.1.%d.0/26" % n]},
        "status": {"allocatable": {"cpu": "2"}, "addresses": [{"type": "InternalIP", "address": "127.0.11.%d" % (n + 1)}],
                   "conditions": [{"type": "Ready", "status": "True"}]}})
    for k in range(40):
        ip = "127.1.%d.%d" % (n, k + 1)
        items.append({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "c-%02d-%d" % (n, k), "namespace": "fleet"},
            "spec": {"nodeName": node(n), "containers": [{"name": "c", "image": "busybox"}]},
            "status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}})
def service(name, extra, eps):
    items.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "fleet"},
        "spec": dict({"clusterIP": "None", "ports": [{"port": 80}]}, **extra)})
    items.append({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": name + "-x1", "namespace": "fleet", "labels": {"kubernetes.io/service-name": name}},
        "addressType": "IPv4", "ports": [{"port": 80}],
        "endpoints": [{"addresses": [ip], "nodeName": node(n), "zone": zones[n % 3],
                       "conditions": {"ready": True}} for ip, n in eps]})
service("near", {"trafficDistribution": "PreferClose"}, [("10.30.0.%d" % (n + 1), n) for n in range(5)])
service("local", {"internalTrafficPolicy": "Local"}, [("10.31.0.%d" % (n + 1), n) for n in range(0, 64, 2)])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
PY
load_fixture "$TMP/fleet.json"
for n in $(seq 0 63); do for k in $(seq 1 40); do echo "127.1.$n.$k"; done; done > "$TMP/fleet.clients"

SERVICES="plain hinted itp keys require psn close auto autofew prefer"
CLIENTS="127.0.1.1 127.0.1.2 127.0.2.1 127.0.2.2 127.0.3.1 127.0.3.2 127.0.10.3 127.0.9.9"
# table FILE: every Service for every client, one line each, then the
# fleet's two Services for each of its clients
table() {
    local s c
    {
        for s in $SERVICES; do
            for c in $CLIENTS; do
                echo "$s $c: $(addrs "$s" "$c")"
            done
        done
        /usr/bin/python3 "$top_srcdir/tests/integration/answers.py" "$PORT" \
            fleet.svc.cluster.local "$TMP/fleet.clients" near local
    } > "$1"
}
# corefile LOCATE-LINE
corefile() {
    printf '.:{$PORT} {\n    kubernetes cluster.local {\n        endpoint %s\n    }\n    topology {\n        %s\n        explain 127.0.0.1:%s\n    }\n    prometheus 127.0.0.1:%s\n    ready 127.0.0.1:%s\n}\n' \
        "$KS" "$1" "$EXPLAIN" "$METRICS" "$READY"
}
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$READY/ready")" = 200 ]; }
# start_locate SOURCE...: a topodns with `locate SOURCE...` on fresh ports,
# kubesim's request log emptied first (what it asks for is checked after)
start_locate() {
    ks_requests_clear
    EXPLAIN=$(free_port) METRICS=$(free_port) READY=$(free_port)
    start_topodns "$(corefile "locate $*")"
}

# --- the reference: the pod watch (`locate pods`, the default) -------------------
start_locate pods || exit 1
until_ok 10 ready
addrs_within 3 "pods: synced" hinted 127.0.1.1 "10.20.2.1 10.20.2.2"
until_ok 10 eval '[ -n "$(dig @127.0.0.1 -p "$PORT" -b 127.1.62.40 +short local.fleet.svc.cluster.local A)" ]'
table "$TMP/pods.txt"
R=$(ks_requests); OUT=$R
check "pods: the pod watch is there (the reference really watches pods)" \
    grep -q '^/api/v1/pods?watch=1' <<<"$R"
stop_topodns

# --- locate podcidr endpoints: no pod watch, the same answers ----------------------
start_locate podcidr endpoints || exit 1
check "podcidr: ready" until_ok 10 ready
addrs_within 3 "podcidr: synced" hinted 127.0.1.1 "10.20.2.1 10.20.2.2"
until_ok 10 eval '[ -n "$(dig @127.0.0.1 -p "$PORT" -b 127.1.62.40 +short local.fleet.svc.cluster.local A)" ]'
table "$TMP/podcidr.txt"
OUT=$(diff "$TMP/pods.txt" "$TMP/podcidr.txt")
check "podcidr: every client's answer equals the pod watch's ($(wc -l < "$TMP/pods.txt") queries)" \
    cmp -s "$TMP/pods.txt" "$TMP/podcidr.txt"
# the table is not trivially equal: zones and nodes make a difference
OUT=$(grep -E '^(near|local) 127\.1\.' "$TMP/podcidr.txt" | sort -u -t: -k2 | wc -l)
check "podcidr: the fleet's clients get different answers (by zone and node)" test "$OUT" -ge 4
OUT=$(grep -cE '^(near|local) 127\.1\.' "$TMP/podcidr.txt")
check "podcidr: the fleet compared (5,120 queries)" test "$OUT" = 5120
OUT=$(grep -c TIMEOUT "$TMP/podcidr.txt")
check "podcidr: every fleet query answered" test "$OUT" = 0
OUT=$(grep '^require ' "$TMP/podcidr.txt")
check "podcidr: answers differ by zone" \
    eval 'grep -q "^require 127.0.1.1: 10.20.5.1 10.20.5.2$" <<<"$OUT" && grep -q "^require 127.0.2.2: 10.20.5.3$" <<<"$OUT"'
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=hinted.$S&type=A&client=127.0.2.2"); OUT=$J
check "podcidr: explain names the source" \
    eval 'jq -e ".client.located_by == \"podcidr\" and .client.node == \"b2\" and .client.zone == \"zone-b\"" <<<"$J" >/dev/null'

# --- a client outside every range, with an EndpointSlice endpoint ----------------
cat > "$TMP/stray.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata:
  name: stray
  namespace: clients
spec:
  clusterIP: None
  ports:
  - port: 80
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: stray-x1
  namespace: clients
  labels:
    kubernetes.io/service-name: stray
addressType: IPv4
endpoints:
- addresses: ["127.0.20.1"]
  nodeName: b1
  conditions: {ready: true}
- addresses: ["127.0.1.0"]
  nodeName: c1
  conditions: {ready: true}
ports:
- port: 80
EOF
load_fixture "$TMP/stray.yaml"
addrs_within 3 "endpoints: a client outside every range is located by its slice (zone-b)" \
    require 127.0.20.1 "10.20.5.3"
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=require.$S&type=A&client=127.0.20.1"); OUT=$J
check "endpoints: explain says endpoints, node b1" \
    eval 'jq -e ".client.located_by == \"endpoints\" and .client.node == \"b1\" and .client.zone == \"zone-b\"" <<<"$J" >/dev/null'

# --- a conflict: 127.0.1.0 is in a1's range, its endpoint says c1 ------------------
M=""
for i in $(seq 1 30); do
    M=$(curl -s "http://127.0.0.1:$METRICS/metrics")
    grep -q '^topodns_locator_conflicts_total{source="podcidr"} 1$' <<<"$M" && break
    sleep 0.1
done
OUT=$(grep locator_ <<<"$M")
check "conflict: counted once" grep -q '^topodns_locator_conflicts_total{source="podcidr"} 1$' <<<"$M"
OUT=$(grep -c 'locator conflict: endpoint 127.0.1.0 ' "$LOG")
check "conflict: logged once, with the address" test "$OUT" = 1
expect_addrs "conflict: locate's order decides (podcidr first: a1, zone-a)" require 127.0.1.0 "10.20.5.1 10.20.5.2"
# the slice written again: still one
K label endpointslice -n clients stray-x1 touched=yes > /dev/null
sleep 0.5
M=$(curl -s "http://127.0.0.1:$METRICS/metrics"); OUT=$(grep locator_conflicts <<<"$M")
check "conflict: not counted again when its slice changes" \
    grep -q '^topodns_locator_conflicts_total{source="podcidr"} 1$' <<<"$M"
check "metrics: lookups by source" \
    eval 'grep -qE "^topodns_locator_lookups_total\{source=\"podcidr\"\} [1-9]" <<<"$M" &&
          grep -qE "^topodns_locator_lookups_total\{source=\"endpoints\"\} [1-9]" <<<"$M" &&
          grep -qE "^topodns_locator_lookups_total\{source=\"node\"\} [1-9]" <<<"$M" &&
          grep -qE "^topodns_locator_lookups_total\{source=\"unknown\"\} [1-9]" <<<"$M" &&
          ! grep -q "^topodns_locator_lookups_total{source=\"pods\"}" <<<"$M"'

# --- a node gains a range ---------------------------------------------------------
expect_addrs "range: 127.0.30.5 unknown before" require 127.0.30.5 "10.20.5.1 10.20.5.2 10.20.5.3"
K patch node c2 --type merge -p '{"spec":{"podCIDRs":["127.0.3.2/31","127.0.30.0/24"]}}' > /dev/null
addrs_within 3 "range: c2 gained 127.0.30.0/24: its client is in zone-c" require 127.0.30.5 ""
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=require.$S&type=A&client=127.0.30.5"); OUT=$J
check "range: explain names c2" \
    eval 'jq -e ".client.located_by == \"podcidr\" and .client.node == \"c2\"" <<<"$J" >/dev/null'

# --- what was asked of the API server ----------------------------------------------
R=$(ks_requests); OUT=$R
check "requests: no pod list or watch, in any namespace" \
    eval '! grep -qE "^/api/v1/(namespaces/[^/]+/)?pods" <<<"$R"'
check "requests: nodes, services and endpointslices listed and watched" \
    eval 'grep -q "^/api/v1/nodes?watch=1" <<<"$R" && grep -q "^/api/v1/services?watch=1" <<<"$R" &&
          grep -q "^/apis/discovery.k8s.io/v1/endpointslices?watch=1" <<<"$R"'
check "requests: no CNI kind asked for" eval '! grep -qE "cilium|calico" <<<"$R"'
M=$(curl -s "http://127.0.0.1:$METRICS/metrics")
OUT=$(grep received_bytes <<<"$M")
check "metric: no byte received for pods" eval '! grep -q "received_bytes_total{resource=\"pods\"}" <<<"$M"'
stop_topodns

# --- cilium and calico: first without their CRDs, then with them ----------------
start_locate podcidr endpoints cilium calico || exit 1
check "no CRDs: ready all the same" until_ok 10 ready
addrs_within 3 "no CRDs: podcidr still locates" require 127.0.2.2 "10.20.5.3"
R=$(ks_requests); OUT=$R
check "no CRDs: the CNI kinds were asked for, cluster-wide" \
    eval 'grep -q "^/apis/cilium.io/v2/ciliumnodes?limit=" <<<"$R" &&
          grep -q "^/apis/crd.projectcalico.org/v1/blockaffinities?limit=" <<<"$R"'
sleep 2     # a few retries (0.8 s, then 1.6 s, ...)
OUT=$(grep 'is not served' "$LOG")
check "no CRDs: each kind logged once" eval \
    '[ "$(grep -c "ciliumnodes is not served" <<<"$OUT")" = 1 ] &&
     [ "$(grep -c "blockaffinities is not served" <<<"$OUT")" = 1 ]'

# kubesim serves CustomResourceDefinitions (apiextensions.k8s.io/v1): apply
# the CNIs' CRDs and objects while topodns runs; it lists them on its next
# retry (the backoff is at most 30 s) and locates by them
crd_code=$(curl -s -o /dev/null -w '%{http_code}' "$KS/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
CRDS=$(grep -rlE '^  name: (ciliumnodes\.cilium\.io|blockaffinities\.crd\.projectcalico\.org)$' \
       "$top_srcdir/tests/data" 2>/dev/null | sort)
if [ "$crd_code" = 200 ] && [ "$(wc -w <<<"$CRDS")" = 2 ]; then
    for f in $CRDS; do load_fixture "$f"; done
    until_ok 10 eval 'K get ciliumnodes >/dev/null 2>&1 && K get blockaffinities >/dev/null 2>&1'
    cat > "$TMP/cni.yaml" <<'EOF'
apiVersion: cilium.io/v2
kind: CiliumNode
metadata:
  name: b2
spec:
  ipam:
    podCIDRs: ["127.0.40.0/24", "fd00:40::/96"]
---
apiVersion: crd.projectcalico.org/v1
kind: BlockAffinity
metadata:
  name: c1-127-0-50-0-26
spec:
  cidr: 127.0.50.0/26
  node: c1
  state: confirmed
  deleted: "false"
---
apiVersion: crd.projectcalico.org/v1
kind: BlockAffinity
metadata:
  name: a1-127-0-51-0-26
spec:
  cidr: 127.0.51.0/26
  node: a1
  state: pending
  deleted: "false"
---
apiVersion: crd.projectcalico.org/v1
kind: BlockAffinity
metadata:
  name: a1-127-0-52-0-26
spec:
  cidr: 127.0.52.0/26
  node: a1
  state: confirmed
  deleted: "true"
EOF
    load_fixture "$TMP/cni.yaml"
    ALL="10.20.5.1 10.20.5.2 10.20.5.3"
    # located WHAT CLIENT SOURCE: explain's located_by becomes SOURCE within 40 s
    located() {
        local i got
        for i in $(seq 1 400); do
            got=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=require.$S&type=A&client=$2" | jq -r .client.located_by)
            [ "$got" = "$3" ] && break
            sleep 0.1
        done
        OUT="got '$got' want '$3'"; check "$1" test "$got" = "$3"
    }
    located "cilium: a CRD installed later is picked up, a CiliumNode's range locates" 127.0.40.5 cilium
    expect_addrs "cilium: 127.0.40.5 is on b2 (zone-b)" require 127.0.40.5 "10.20.5.3"
    located "calico: a confirmed BlockAffinity locates" 127.0.50.5 calico
    expect_addrs "calico: 127.0.50.5 is on c1 (zone-c)" require 127.0.50.5 ""
    expect_addrs "calico: a pending BlockAffinity locates nothing" require 127.0.51.5 "$ALL"
    expect_addrs "calico: one being deleted locates nothing" require 127.0.52.5 "$ALL"
    table "$TMP/cni.txt"
    OUT=$(diff "$TMP/pods.txt" "$TMP/cni.txt")
    check "cilium calico: every fixture client's answer equals the pod watch's" \
        cmp -s "$TMP/pods.txt" "$TMP/cni.txt"
    # changes are followed: the CiliumNode trades its range for another, the
    # BlockAffinity is released (deleted: "true")
    K patch ciliumnode b2 --type merge -p '{"spec":{"ipam":{"podCIDRs":["127.0.41.0/24"]}}}' > /dev/null
    addrs_within 3 "cilium: a range given up no longer locates" require 127.0.40.5 "$ALL"
    expect_addrs "cilium: the new range does" require 127.0.41.5 "10.20.5.3"
    K patch blockaffinity c1-127-0-50-0-26 --type merge -p '{"spec":{"deleted":"true"}}' > /dev/null
    addrs_within 3 "calico: a released block no longer locates" require 127.0.50.5 "$ALL"
    R=$(ks_requests); OUT=$R
    check "cilium calico: both kinds listed and watched, no pod list or watch" \
        eval 'grep -q "^/apis/cilium.io/v2/ciliumnodes?watch=1" <<<"$R" &&
              grep -q "^/apis/crd.projectcalico.org/v1/blockaffinities?watch=1" <<<"$R" &&
              ! grep -qE "^/api/v1/(namespaces/[^/]+/)?pods" <<<"$R"'
    OUT=$(grep -E 'is (not )?served' "$LOG")
    check "cilium calico: the log says when they are served" \
        eval 'grep -q "ciliumnodes is served now" <<<"$OUT" && grep -q "blockaffinities is served now" <<<"$OUT"'
else
    echo "# kubesim serves no CustomResourceDefinitions here (or tests/data has no CNI CRDs): cilium/calico with objects not tested"
fi
stop_topodns

finish
