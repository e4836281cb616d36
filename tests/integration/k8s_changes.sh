#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_changes.sh — changes made with kubectl reach the answers within one
# second (a target in docs/benchmarks.md): after each kubectl command
# returns, dig is polled for at most 1 s. Covered: a new EndpointSlice, an
# endpoint marked not ready and ready again, a hostname change (A and PTR),
# a deleted slice, a new and a deleted Service, a Service turned into an
# ExternalName.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

start_kubesim
load_fixture "$KDATA/cluster.json"
start_topodns ".:{\$PORT} {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
    }
}" || exit 1
S=testns.svc.cluster.local
until_ok 5 eval 'q hdls1.$S A; rcode_is NOERROR' || echo "note: not synced after 5 s"

# within_1s CMD...: CMD succeeds within one second (polled every 20 ms)
within_1s() {
    local t0 now
    t0=$(date +%s%N)
    while :; do
        "$@" && return 0
        now=$(date +%s%N)
        [ $(((now - t0) / 1000000)) -ge 1000 ] && return 1
        sleep 0.02
    done
}
a_set() { q "$1" A +short; [ "$(sort <<<"$OUT" | tr '\n' ' ')" = "$2" ]; }
rc_of() { q "$1" "$2"; rcode_is "$3"; }
ptr_is() { q -x "$1" +short; [ "$OUT" = "$2" ]; }

check "before: hdls1 A" a_set hdls1.$S "172.0.0.2 172.0.0.3 172.0.0.4 172.0.0.5 "

# 1. add a slice
K apply --validate=false -f - > "$TMP/k.out" <<'YAML'
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: hdls1-extra
  namespace: testns
  labels: {kubernetes.io/service-name: hdls1, service.kubernetes.io/headless: ""}
addressType: IPv4
endpoints:
- addresses: [172.0.0.9]
  hostname: extra
  conditions: {ready: true}
ports: [{name: http, protocol: TCP, port: 80}]
YAML
check "kubectl created a slice" grep -q created "$TMP/k.out"
check "new slice: hdls1 A within 1 s" within_1s a_set hdls1.$S "172.0.0.2 172.0.0.3 172.0.0.4 172.0.0.5 172.0.0.9 "
check "new slice: extra.hdls1 A" a_set extra.hdls1.$S "172.0.0.9 "

# 2. mark an endpoint not ready (merge patch replaces the endpoint list)
K patch endpointslice hdls1-v4 -n testns --type=merge -p '{"endpoints":[
  {"addresses":["172.0.0.2"],"conditions":{"ready":false}},
  {"addresses":["172.0.0.3"],"conditions":{"ready":true}},
  {"addresses":["172.0.0.4"],"conditions":{"ready":true},"hostname":"dup-name"},
  {"addresses":["172.0.0.5"],"conditions":{"ready":true},"hostname":"dup-name"}]}' > /dev/null
check "not ready: hdls1 A within 1 s" within_1s a_set hdls1.$S "172.0.0.3 172.0.0.4 172.0.0.5 172.0.0.9 "
check "not ready: 172-0-0-2.hdls1 NXDOMAIN" rc_of 172-0-0-2.hdls1.$S A NXDOMAIN
check "not ready: PTR 172.0.0.2 NXDOMAIN" rc_of 2.0.0.172.in-addr.arpa PTR NXDOMAIN
# ... and ready again (conditions.ready absent counts as ready)
K patch endpointslice hdls1-v4 -n testns --type=merge -p '{"endpoints":[
  {"addresses":["172.0.0.2"],"conditions":{}},
  {"addresses":["172.0.0.3"],"conditions":{"ready":true}},
  {"addresses":["172.0.0.4"],"conditions":{"ready":true},"hostname":"dup-name"},
  {"addresses":["172.0.0.5"],"conditions":{"ready":true},"hostname":"dup-name"}]}' > /dev/null
check "ready again: hdls1 A within 1 s" within_1s a_set hdls1.$S "172.0.0.2 172.0.0.3 172.0.0.4 172.0.0.5 172.0.0.9 "

# 3. change a hostname
K patch endpointslice svc1-abcde -n testns --type=merge -p '{"endpoints":[
  {"addresses":["172.0.0.1"],"conditions":{"ready":true},"hostname":"ep1b"}]}' > /dev/null
check "hostname: ep1b.svc1 A within 1 s" within_1s a_set ep1b.svc1.$S "172.0.0.1 "
check "hostname: ep1a.svc1 NXDOMAIN" rc_of ep1a.svc1.$S A NXDOMAIN
check "hostname: PTR follows" ptr_is 172.0.0.1 ep1b.svc1.testns.svc.cluster.local.

# 4. delete a slice
K delete endpointslice hdls1-extra -n testns > /dev/null
check "deleted slice: hdls1 A within 1 s" within_1s a_set hdls1.$S "172.0.0.2 172.0.0.3 172.0.0.4 172.0.0.5 "
check "deleted slice: extra.hdls1 NXDOMAIN" rc_of extra.hdls1.$S A NXDOMAIN

# 5. delete a service; create one
K delete service svc6 -n testns > /dev/null
check "deleted service: svc6 AAAA NXDOMAIN within 1 s" within_1s rc_of svc6.$S AAAA NXDOMAIN
# (kubectl apply of a manifest: kubesim does not decode the protobuf body
# that `kubectl create service` sends)
K apply --validate=false -f - > /dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: newsvc, namespace: testns}
spec:
  clusterIP: 10.0.0.88
  ports: [{name: 8080-8080, protocol: TCP, port: 8080}]
YAML
check "new service: newsvc A within 1 s" within_1s a_set newsvc.$S "10.0.0.88 "
check "new service: SRV port 8080" eval 'q _8080-8080._tcp.newsvc.$S SRV; rcode_is NOERROR && answer_has "SRV[[:space:]]+0 100 8080 newsvc\.$S\."'

# 6. a Service replaced by an ExternalName
K delete service svc-dual-stack -n testns > /dev/null
K apply --validate=false -f - > /dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: svc-dual-stack, namespace: testns}
spec: {type: ExternalName, externalName: svc1.testns.svc.cluster.local}
YAML
cname_now() { q svc-dual-stack.$S A; answer_has "CNAME[[:space:]]+svc1\.testns\.svc\.cluster\.local\." && answer_has "A[[:space:]]+10\.0\.0\.1$"; }
check "ExternalName replaces ClusterIP within 1 s" within_1s cname_now

finish
