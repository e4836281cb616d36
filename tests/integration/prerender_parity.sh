#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# prerender_parity.sh — the kubernetes plugin's pre-rendered answers
# (src/plugin/kubernetes/rendered.c) against its slow path, octet for octet.
#
# One kubesim holds the kubernetes acceptance fixture
# (tests/data/kubernetes/cluster.json) and the topology fixture
# (tests/data/topology/cluster.yaml). Two topodns run the same Corefile
# (kubernetes + topology with a trusted client_subnet + prometheus): one as
# built (fast path on), one with TOPODNS_NO_PRERENDER=1 (docs/testing.md).
# tests/data/kubernetes/prerender_parity.py sends every acceptance-table
# query and every topology Service's A/AAAA/SRV to both, from clients in
# every zone, on several nodes and unknown, without and with EDNS (options,
# DO, a 512 buffer, ECS trusted and not), over TCP and in mixed case, each
# query several times (the first fills the memo, the next hit it), and
# compares the replies without their ID. Then kubectl changes the cluster
# (a slice, a node's zone, a pod deleted, an annotation) and, once both
# servers saw the changes, the comparison runs again. Last, the
# topodns_topology_answers_total series of both servers must be equal:
# every answer is counted on the fast path too.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import dns.message, dns.edns' 2>/dev/null ||
    skip "python3-dnspython not installed"
export TOPODNS_SELF_IPS=10.244.0.20      # the acceptance fixture's own pod IP

start_kubesim
load_fixture "$top_srcdir/tests/data/kubernetes/cluster.json"
load_fixture "$top_srcdir/tests/data/topology/cluster.yaml"

corefile() {
    echo ".:{\$PORT} {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
    }
    topology {
        client_subnet 127.0.0.1/32
    }
    prometheus 127.0.0.1:$1
}"
}
M_FAST=$(free_port)
start_topodns "$(corefile "$M_FAST")" || exit 1
FAST=$PORT
M_SLOW=$(free_port)
TOPODNS_NO_PRERENDER=1 start_topodns "$(corefile "$M_SLOW")" || exit 1
SLOW=$PORT

NAMES=$TMP/names
for s in $(K get services -n prod -o jsonpath='{.items[*].metadata.name}'); do
    for t in A AAAA SRV TXT MX; do echo "$s.prod.svc.cluster.local. $t"; done
    echo "_http._tcp.$s.prod.svc.cluster.local. SRV"
    echo "x.$s.prod.svc.cluster.local. A"
done > "$NAMES"
OUT="$(cat "$NAMES" | wc -l) names"
check "topology fixture listed" test -s "$NAMES"

# both synced: a topology answer and an acceptance answer from each (every
# probe goes to both servers, so that their counters see the same queries)
synced() {
    local p ok=0
    for p in $FAST $SLOW; do
        [ -n "$(dig @127.0.0.1 -p "$p" -b 127.0.1.1 +short +time=1 +tries=1 hinted.prod.svc.cluster.local A)" ] || ok=1
        [ -n "$(dig @127.0.0.1 -p "$p" +short +time=1 +tries=1 svc1.testns.svc.cluster.local A)" ] || ok=1
    done
    return $ok
}
check "both servers synced" until_ok 10 synced

run() {
    OUT=$(/usr/bin/python3 "$top_srcdir/tests/data/kubernetes/prerender_parity.py" \
        "$FAST" "$SLOW" "$top_srcdir/tests/data/kubernetes/acceptance.tsv" "$NAMES" --rounds 2 2>&1)
    local rc=$?
    echo "$1: $(tail -1 <<<"$OUT")"
    check "$1: identical replies" test "$rc" = 0
}
run "before changes"

# changes through kubectl; then wait until both servers answer the changed
# names the same way (each server applies the events on its own)
K patch endpointslice require-x1 -n prod --type=merge -p '{"endpoints":[
  {"addresses":["10.20.5.1"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"},
  {"addresses":["10.20.5.3"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"}]}' > /dev/null
K label node b1 topology.kubernetes.io/zone=zone-c --overwrite > /dev/null
K delete pod ca2 -n clients > /dev/null
K annotate service plain -n prod endpointslice.kubernetes.io/same-zone=Require > /dev/null
seen() {
    local p ok=0
    for p in $FAST $SLOW; do
        [ "$(dig @127.0.0.1 -p "$p" -b 127.0.1.1 +short +time=1 +tries=1 plain.prod.svc.cluster.local A)" = 10.20.1.1 ] || ok=1
        [ -z "$(dig @127.0.0.1 -p "$p" -b 127.0.2.1 +short +time=1 +tries=1 require.prod.svc.cluster.local A)" ] || ok=1
        [ "$(dig @127.0.0.1 -p "$p" -b 127.0.1.1 +short +time=1 +tries=1 require.prod.svc.cluster.local A | sort | tr '\n' ' ')" = "10.20.5.1 10.20.5.3 " ] || ok=1
    done
    return $ok
}
OUT="changes not visible on both servers"
check "changes seen by both servers" until_ok 10 seen
sleep 1                                  # the pod deletion, seen by nothing above
run "after changes"

# every answer counted the same on both
series() { curl -s "http://127.0.0.1:$1/metrics" | grep '^topodns_topology_answers_total' | sort; }
A=$(series "$M_FAST"); B=$(series "$M_SLOW")
OUT="fast:
$A
slow:
$B"
check "topology answer counters equal" test -n "$A" -a "$A" = "$B"
finish
