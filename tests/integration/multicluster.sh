#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# multicluster.sh — the kubernetes plugin's `multicluster` zones through the
# real binary against kubesim: names under a multicluster zone are answered
# from ServiceImports (multicluster.x-k8s.io/v1alpha1) and the
# EndpointSlices labelled multicluster.kubernetes.io/service-name, with
# <endpoint>.<cluster>.<svc>.<ns>.svc.<zone> for endpoints; the other zones
# keep answering from Services. Expected answers are those of CoreDNS's
# multicluster test cases (multicluster.yaml), plus changes and errors.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

c=$TMP/bad.Corefile
printf '. {\n    kubernetes cluster.local {\n        multicluster 1.2.3.4/99\n    }\n}\n' > "$c"
OUT=$(timeout 10 "$TOPODNS" -conf "$c" -dns.port "$(free_port)" 2>&1)
check "a bad multicluster zone stops start-up at its line" eval 'grep -qE ":3: .*invalid CIDR" <<<"$OUT"'

start_kubesim
load_fixture "$KDATA/multicluster.yaml"
start_topodns ".:{\$PORT} {
    kubernetes cluster.local clusterset.local {
        endpoint $KS
        multicluster clusterset.local
    }
}" || exit 1
Z=testns.svc.clusterset.local
until_ok 5 eval 'q svc1.$Z A; rcode_is NOERROR' || echo "note: not synced after 5 s"

recs() { section "$1" | awk '{ $3 = ""; print }' | tr -s ' \t' ' ' | tr '\n' '|'; }
sorted() { section "$1" | awk '{ $3 = ""; print }' | tr -s ' \t' ' ' | sort | tr '\n' '|'; }
is() { [ "$(recs "$1")" = "$2" ]; }
is_sorted() { [ "$(sorted "$1")" = "$2" ]; }

# ---- CoreDNS's multicluster cases -------------------------------------------
q svc1.$Z A
check "ClusterSetIP: the ServiceImport's ips" eval 'rcode_is NOERROR && aa_set && is ANSWER "svc1.$Z. 5 A 10.0.0.1|"'
q _http._tcp.svc1.$Z SRV
check "ClusterSetIP SRV" eval 'is ANSWER "_http._tcp.svc1.$Z. 5 SRV 0 100 80 svc1.$Z.|" && is ADDITIONAL "svc1.$Z. 5 A 10.0.0.1|"'
q ep1a.cluster1.svc1.$Z A
check "endpoint of a cluster: <endpoint>.<cluster>.<svc>" eval 'rcode_is NOERROR && is ANSWER "ep1a.cluster1.svc1.$Z. 5 A 172.0.0.1|"'
q svc-dual-stack.$Z A
check "dual-stack ServiceImport: A" eval 'is ANSWER "svc-dual-stack.$Z. 5 A 10.0.0.2|"'
q svc-dual-stack.$Z AAAA
check "dual-stack ServiceImport: AAAA" eval 'is ANSWER "svc-dual-stack.$Z. 5 AAAA 10::2|"'
q hdls1.$Z A
check "Headless ServiceImport: ready endpoints of every cluster" eval 'is_sorted ANSWER "hdls1.$Z. 5 A 172.0.0.2|hdls1.$Z. 5 A 172.0.1.2|"'
q hdls1.$Z SRV
check "Headless SRV: targets <endpoint>.<cluster>.<svc>" eval \
    'is_sorted ANSWER "hdls1.$Z. 5 SRV 0 50 80 172-0-0-2.cluster1.hdls1.$Z.|hdls1.$Z. 5 SRV 0 50 80 172-0-1-2.cluster2.hdls1.$Z.|" &&
     is_sorted ADDITIONAL "172-0-0-2.cluster1.hdls1.$Z. 5 A 172.0.0.2|172-0-1-2.cluster2.hdls1.$Z. 5 A 172.0.1.2|"'
q 172-0-0-2.cluster1.hdls1.$Z A
check "headless endpoint by cluster" eval 'is ANSWER "172-0-0-2.cluster1.hdls1.$Z. 5 A 172.0.0.2|"'

# ---- beyond them ----------------------------------------------------------------
q 172-0-0-2.cluster2.hdls1.$Z A
check "endpoint under the wrong cluster: NXDOMAIN" eval 'rcode_is NXDOMAIN && authority_has "SOA"'
q 172-0-1-3.cluster2.hdls1.$Z A
check "endpoint not ready: NXDOMAIN" rcode_is NXDOMAIN
q 172-0-0-2.hdls1.$Z A
check "endpoint without a cluster label: NXDOMAIN" rcode_is NXDOMAIN
q _http._tcp.hdls1.$Z SRV
check "SRV form with underscores is port and protocol, not endpoint.cluster" eval 'rcode_is NOERROR && answer_count 2'
q local-only.$Z A
check "a Service without a ServiceImport does not exist there" eval 'rcode_is NXDOMAIN && authority_has "SOA[[:space:]]+ns\.dns\.clusterset\.local\."'
q noports.$Z A
check "ServiceImport without ports: NXDOMAIN (as CoreDNS)" rcode_is NXDOMAIN
q testns.svc.clusterset.local A
check "namespace: NODATA" eval 'rcode_is NOERROR && answer_count 0'
q clusterset.local SOA
check "apex SOA of the multicluster zone" eval 'rcode_is NOERROR && answer_has "SOA[[:space:]]+ns\.dns\.clusterset\.local\. hostmaster\.clusterset\.local\."'
q svc1.testns.svc.cluster.local A
check "the cluster zone still answers from the Service" eval 'is ANSWER "svc1.testns.svc.cluster.local. 5 A 10.96.0.100|"'
q local-ep.svc1.testns.svc.cluster.local A
check "multicluster slices stay out of the Service's endpoints" eval 'is ANSWER "local-ep.svc1.testns.svc.cluster.local. 5 A 10.244.0.5|"'
q ep1a.svc1.testns.svc.cluster.local A
check "an imported endpoint is not the local Service's" rcode_is NXDOMAIN

# ---- changes -----------------------------------------------------------------------
K patch serviceimport svc1 -n testns --type=merge -p '{"spec":{"ips":["10.0.0.7"]}}' >/dev/null
until_ok 5 eval 'q svc1.$Z A; answer_has "10\.0\.0\.7"'
check "a changed ServiceImport is served" eval 'is ANSWER "svc1.$Z. 5 A 10.0.0.7|"'
K delete endpointslice hdls1-slice2 -n testns >/dev/null
until_ok 5 eval 'q hdls1.$Z A; answer_count 1'
check "a deleted multicluster slice leaves" eval 'is ANSWER "hdls1.$Z. 5 A 172.0.0.2|"'
K delete serviceimport svc1 -n testns >/dev/null
until_ok 5 eval 'q svc1.$Z A; rcode_is NXDOMAIN'
check "a deleted ServiceImport is gone" rcode_is NXDOMAIN
stop_topodns

# ---- without multicluster: the zone is an ordinary cluster zone ----------------
start_topodns ".:{\$PORT} {
    kubernetes cluster.local clusterset.local {
        endpoint $KS
    }
}" || exit 1
until_ok 5 eval 'q svc1.$Z A; rcode_is NOERROR'
check "without multicluster, clusterset.local answers from Services" eval 'is ANSWER "svc1.$Z. 5 A 10.96.0.100|"'
q hdls1.$Z A
check "without multicluster, ServiceImports are not read" rcode_is NXDOMAIN

finish
