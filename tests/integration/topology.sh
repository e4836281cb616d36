#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# topology.sh — topology-aware answers end to end: kubesim serves a
# three-zone cluster (tests/data/topology/cluster.yaml, applied with
# kubectl), topodns watches it with `topology` on, and dig plays client pods
# in different zones and on different nodes with distinct 127.0.z.n source
# addresses (-b). One headless Service per policy; then kubectl changes the
# cluster and the answers follow within a second. Also: ECS from a trusted
# and an untrusted source, SRV, unknown clients, explain, Events, metrics.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"
start_topology_cluster

EXPLAIN=$(free_port)
METRICS=$(free_port)
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
    topology {
        client_subnet 127.0.0.1/32
        explain 127.0.0.1:$EXPLAIN
        events
    }
    prometheus 127.0.0.1:$METRICS
}" || exit 1

wait_synced() {
    for i in $(seq 1 50); do
        [ -n "$(addrs hinted 127.0.1.1)" ] && [ -n "$(addrs auto 127.0.9.9)" ] && return 0
        sleep 0.1
    done
}
wait_synced

# no policy: everyone gets everything
expect_addrs "plain: zone-a"            plain 127.0.1.1 "10.20.1.1 10.20.1.2 10.20.1.3"
expect_addrs "plain: unknown client"    plain 127.0.9.9 "10.20.1.1 10.20.1.2 10.20.1.3"
# hints written by a controller (forZones)
expect_addrs "hints: zone-a client"     hinted 127.0.1.1 "10.20.2.1 10.20.2.2"
expect_addrs "hints: other zone-a node" hinted 127.0.1.2 "10.20.2.1 10.20.2.2"
expect_addrs "hints: zone-b client"     hinted 127.0.2.2 "10.20.2.3"
expect_addrs "hints: zone-c client"     hinted 127.0.3.2 "10.20.2.4"
expect_addrs "hints: unknown client"    hinted 127.0.9.9 "10.20.2.1 10.20.2.2 10.20.2.3 10.20.2.4"
expect_addrs "hints: hostNetwork client (node address of b1)" hinted 127.0.10.3 "10.20.2.3"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +time=2 +tries=1 _http._tcp.hinted.$S SRV)
check "hints: SRV filtered the same way" eval 'answer_count 2 && answer_has "SRV.*10-20-2-1\.hinted" && answer_has "SRV.*10-20-2-2\.hinted" && rcode_is NOERROR'
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.2.1 +time=2 +tries=1 _http._tcp.hinted.$S SRV)
check "hints: SRV from zone-b" eval 'answer_count 1 && answer_has "SRV.*10-20-2-3\.hinted" && additional_has "10\.20\.2\.3"'
# internalTrafficPolicy Local
expect_addrs "itp: on a1"               itp 127.0.1.1 "10.20.3.1"
expect_addrs "itp: on b1"               itp 127.0.2.1 "10.20.3.2"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.3.1 +time=2 +tries=1 itp.$S A)
check "itp: node without endpoint is NODATA, not NXDOMAIN" eval 'rcode_is NOERROR && answer_count 0 && authority_has SOA'
# topologyKeys (annotation): hostname, then zone, else nothing
expect_addrs "keys: own node"           keys 127.0.1.1 "10.20.4.1"
expect_addrs "keys: same zone"          keys 127.0.1.2 "10.20.4.1"
expect_addrs "keys: zone-b"             keys 127.0.2.1 "10.20.4.2"
expect_addrs "keys: no match → NODATA"  keys 127.0.3.1 ""
# same-zone Require
expect_addrs "require: zone-a"          require 127.0.1.2 "10.20.5.1 10.20.5.2"
expect_addrs "require: zone-b"          require 127.0.2.2 "10.20.5.3"
expect_addrs "require: zone-c empty"    require 127.0.3.1 ""
# trafficDistribution, computed (no hints in the slices)
expect_addrs "PreferSameNode: own node" psn 127.0.1.2 "10.20.6.2"
expect_addrs "PreferSameNode: zone"     psn 127.0.2.2 "10.20.6.3"
expect_addrs "PreferSameNode: all"      psn 127.0.3.1 "10.20.6.1 10.20.6.2 10.20.6.3"
expect_addrs "PreferClose: zone-b"      close 127.0.2.1 "10.20.7.2 10.20.7.3"
expect_addrs "PreferClose: zone-c all"  close 127.0.3.1 "10.20.7.1 10.20.7.2 10.20.7.3"
# topology-mode Auto, computed by the CPU allocator (equal zones: 2 each)
expect_addrs "Auto: zone-a"             auto 127.0.1.1 "10.20.8.1 10.20.8.2"
expect_addrs "Auto: zone-c"             auto 127.0.3.2 "10.20.8.5 10.20.8.6"
expect_addrs "Auto: too few endpoints → all" autofew 127.0.1.1 "10.20.9.1 10.20.9.2"
# same-zone Prefer (Local algorithm): 15 endpoints, 5 per zone
expect_addrs "Prefer: zone-b"           prefer 127.0.2.1 "10.20.10.10 10.20.10.6 10.20.10.7 10.20.10.8 10.20.10.9"

# ECS: trusted from 127.0.0.1 only; the reply scope says the answer is per client
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.0.1 +subnet=127.0.2.1/32 +time=2 +tries=1 hinted.$S A)
check "ECS trusted: located as the zone-b pod" eval 'answer_count 1 && answer_has "10\.20\.2\.3"'
check "ECS trusted: scope /32 in the reply" grep -q "CLIENT-SUBNET: 127.0.2.1/32/32" <<<"$OUT"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +subnet=127.0.2.1/32 +time=2 +tries=1 hinted.$S A)
check "ECS untrusted: the source address counts" eval 'answer_count 2 && answer_has "10\.20\.2\.1"'
check "ECS untrusted: ignored, so the reply scope is 0" grep -q "CLIENT-SUBNET: 127.0.2.1/32/0" <<<"$OUT"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.0.1 +subnet=127.0.2.1/32 +time=2 +tries=1 plain.$S A)
check "ECS: client-independent answer has scope 0" grep -q "CLIENT-SUBNET: 127.0.2.1/32/0" <<<"$OUT"

# explain
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=hinted.$S&type=A&client=127.0.1.1")
OUT=$J
check "explain: client located" eval 'jq -e ".client.pod == \"clients/ca1\" and .client.node == \"a1\" and .client.zone == \"zone-a\"" <<<"$J" >/dev/null'
check "explain: policy and source" eval 'jq -e ".service.policy == \"hints\" and .service.source == \"EndpointSlice hints\"" <<<"$J" >/dev/null'
check "explain: endpoints before/after and the answer" eval 'jq -e "(.endpoints.before|length) == 4 and (.endpoints.after|length) == 2 and (.answer.records|length) == 2 and .answer.rcode == \"NOERROR\" and .depends_on == \"zone\"" <<<"$J" >/dev/null'
J=$(curl -s "http://127.0.0.1:$EXPLAIN/explain?name=keys.$S&type=A&client=127.0.3.1"); OUT=$J
check "explain: rules tried" eval 'jq -e "[.rules[].result] == [\"no match\",\"no match\"] and .outcome == \"empty\"" <<<"$J" >/dev/null'
OUT=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$EXPLAIN/explain?name=x")
check "explain: bad request is 400" test "$OUT" = 400

# Events: autofew cannot be honoured (2 endpoints, 3 zones)
ev() { K get events -n prod -o json | jq -r ".items[] | select(.involvedObject.name == \"$1\") | .reason + \": \" + .message"; }
has_event() { ev "$1" | grep -q "$2"; }
OUT=$(ev autofew)
check "event: TopologyAwareDNSDisabled for autofew" until_ok 3 has_event autofew "TopologyAwareDNSDisabled: Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4$"
check "event: TopologyAwareDNSEnabled for auto" until_ok 3 has_event auto "TopologyAwareDNSEnabled"

# metrics
M=$(curl -s "http://127.0.0.1:$METRICS/metrics"); OUT=$M
# (labels print sorted by name, as Prometheus' Go client prints them)
check "metric: answers by policy and outcome" grep -qE '^topodns_topology_answers_total\{outcome="local",policy="hints"\} [1-9]' <<<"$M"
check "metric: unknown clients counted" grep -qE '^topodns_topology_answers_total\{outcome="unknown_client",policy="hints"\} [1-9]' <<<"$M"
check "metric: services by state" grep -qE '^topodns_topology_services\{policy="auto",state="disabled"\} 1' <<<"$M"
check "metric: coredns_plugin_enabled lists topology" \
    grep -qE '^coredns_plugin_enabled\{name="topology",server="dns://:[0-9]+",view="",zone="\."\} 1' <<<"$M"

# changes through kubectl, visible within one second
K patch endpointslice autofew-x1 -n prod --type=merge -p '{"endpoints":[
  {"addresses":["10.20.9.1"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"},
  {"addresses":["10.20.9.2"],"conditions":{"ready":true},"nodeName":"b1","zone":"zone-b"},
  {"addresses":["10.20.9.3"],"conditions":{"ready":true},"nodeName":"c1","zone":"zone-c"}]}' > /dev/null
addrs_within 1 "Auto: enough endpoints now" autofew 127.0.3.1 "10.20.9.3"
check "event: TopologyAwareDNSEnabled for autofew after the change" until_ok 3 has_event autofew "TopologyAwareDNSEnabled"

K label node b1 topology.kubernetes.io/zone=zone-c --overwrite > /dev/null
addrs_within 1 "node relabelled: b1 is now zone-c" require 127.0.2.1 ""
addrs_within 1 "node relabelled: hints follow the client's new zone" hinted 127.0.2.1 "10.20.2.4"
K delete pod ca2 -n clients > /dev/null
addrs_within 1 "pod deleted: its address is an unknown client" hinted 127.0.1.2 "10.20.2.1 10.20.2.2 10.20.2.3 10.20.2.4"
K patch endpointslice require-x1 -n prod --type=merge -p '{"endpoints":[
  {"addresses":["10.20.5.1"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"},
  {"addresses":["10.20.5.2"],"conditions":{"ready":true},"nodeName":"a2","zone":"zone-a"},
  {"addresses":["10.20.5.3"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"}]}' > /dev/null
addrs_within 1 "endpoint moved zone" require 127.0.1.1 "10.20.5.1 10.20.5.2 10.20.5.3"
K patch endpointslice hinted-x1 -n prod --type=merge -p '{"endpoints":[
  {"addresses":["10.20.2.1"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a"},
  {"addresses":["10.20.2.2"],"conditions":{"ready":true},"nodeName":"a2","zone":"zone-a"},
  {"addresses":["10.20.2.3"],"conditions":{"ready":true},"nodeName":"b1","zone":"zone-b"},
  {"addresses":["10.20.2.4"],"conditions":{"ready":true},"nodeName":"c1","zone":"zone-c"}]}' > /dev/null
addrs_within 1 "hints removed: everyone gets all" hinted 127.0.1.1 "10.20.2.1 10.20.2.2 10.20.2.3 10.20.2.4"
K patch endpointslice hinted-x1 -n prod --type=merge -p '{"endpoints":[
  {"addresses":["10.20.2.1"],"conditions":{"ready":true},"nodeName":"a1","zone":"zone-a","hints":{"forZones":[{"name":"zone-a"}]}},
  {"addresses":["10.20.2.4"],"conditions":{"ready":true},"nodeName":"c1","zone":"zone-c","hints":{"forZones":[{"name":"zone-c"}]}}]}' > /dev/null
addrs_within 1 "hints added back" hinted 127.0.1.1 "10.20.2.1"
K annotate service plain -n prod endpointslice.kubernetes.io/same-zone=Require > /dev/null
addrs_within 1 "annotation added: plain now zone-local" plain 127.0.1.1 "10.20.1.1"
K annotate service plain -n prod endpointslice.kubernetes.io/same-zone- > /dev/null
addrs_within 1 "annotation removed" plain 127.0.1.1 "10.20.1.1 10.20.1.2 10.20.1.3"

# A headless Service whose policy is computed (topology-mode Auto) and
# that has no EndpointSlice at all: the observer (a pass every 0.5 s) asks
# about it too, and the server keeps answering.
K apply -f - > /dev/null <<'EOY'
apiVersion: v1
kind: Service
metadata:
  name: autoempty
  namespace: prod
  annotations:
    service.kubernetes.io/topology-mode: Auto
spec:
  clusterIP: None
  ports: [{name: http, port: 80}]
EOY
sleep 1.5
check "Auto Service without endpoints: server alive after observer passes" kill -0 "$TOPO_PID"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +time=2 +tries=1 autoempty.$S A)
check "Auto Service without endpoints: NXDOMAIN (no endpoints)" grep -q 'status: NXDOMAIN' <<<"$OUT"
finish
