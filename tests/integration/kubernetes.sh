#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kubernetes.sh — the kubernetes plugin end to end: kubesim serves the
# acceptance fixture (tests/data/kubernetes/cluster.json), the real topodns
# watches it through the API client, and dig checks rows of the acceptance
# table (tests/data/kubernetes/acceptance.tsv, docs/compatibility.md). Then kubectl changes the cluster
# and the answers follow the watches; /ready reports the sync.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
FIXTURE=$KDATA/cluster.json
start_kubesim
# the fixture goes in through kubectl, as an operator would apply it
# (kube-system exists already in kubesim: that one AlreadyExists is fine)
K create --validate=false -f "$FIXTURE" > "$TMP/create.out"
if grep -v 'namespaces "kube-system" already exists' "$TMP/create.out" | grep -qi error; then
    cat "$TMP/create.out"; exit 1
fi
[ "$(K get pod foo -n podns -o jsonpath='{.status.podIP}')" = 10.240.0.1 ] ||
    K patch pod foo -n podns --subresource=status --type=merge \
        -p '{"status":{"phase":"Running","podIP":"10.240.0.1","podIPs":[{"ip":"10.240.0.1"}]}}' > /dev/null

export TOPODNS_SELF_IPS=10.244.0.20
READY_PORT=$(free_port)
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$READY_PORT
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
        pods insecure
    }
}" || exit 1
grep -q 'starting server with unsynced' "$LOG" && echo "note: started unsynced"

S=testns.svc.cluster.local
soa_ok() { authority_has "^cluster\.local\.[[:space:]]+5[[:space:]]+IN[[:space:]]+SOA[[:space:]]+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. [0-9]+ 7200 1800 86400 5$"; }
nodata() { rcode_is NOERROR && answer_count 0 && soa_ok; }
nx() { rcode_is NXDOMAIN && answer_count 0 && soa_ok; }

q svc1.$S A;                check "1 svc1 A"            eval 'rcode_is NOERROR && aa_set && answer_has "svc1\.$S\.[[:space:]]+5[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.1" && authority_count 0'
q svc1.$S AAAA;             check "2 svc1 AAAA NODATA"  nodata
q svc1.$S SRV;              check "3 svc1 SRV"          eval 'answer_has "SRV[[:space:]]+0 100 80 svc1\.$S\." && additional_has "^svc1\.$S\..*A[[:space:]]+10\.0\.0\.1"'
q _http._tcp.svc1.$S SRV;   check "4 _http._tcp SRV"    eval 'answer_has "^_http\._tcp\.svc1\.$S\..*SRV[[:space:]]+0 100 80 svc1\.$S\."'
q _https._tcp.svc1.$S SRV;  check "5 unknown port NX"   nx
q _http._tcp.svc1.$S A;     check "7 _http._tcp A"      answer_has "A[[:space:]]+10\.0\.0\.1"
q svc1.$S TXT;              check "8 svc1 TXT NODATA"   nodata
q svc0.$S A;                check "11 svc0 NX"          nx
q svc0.nsnoexist.svc.cluster.local A; check "13 nsnoexist NX" nx
q testns.svc.cluster.local A; check "15 ns NODATA"      nodata
q cluster.local SOA;        check "20 SOA"              answer_has "SOA[[:space:]]+ns\.dns\.cluster\.local\. hostmaster\.cluster\.local\. [0-9]+ 7200 1800 86400 5"
q cluster.local NS;         check "21 NS"               eval 'answer_has "NS[[:space:]]+kube-dns\.kube-system\.svc\.cluster\.local\." && additional_has "kube-dns\.kube-system\.svc\.cluster\.local\..*A[[:space:]]+10\.96\.0\.10"'
q cluster.local TXT;        check "23 apex TXT NX"      nx
q ns.dns.cluster.local A;   check "24 ns.dns A"         answer_has "^ns\.dns\.cluster\.local\..*A[[:space:]]+10\.96\.0\.10"
q dns-version.cluster.local TXT; check "25 dns-version" answer_has "28800[[:space:]]+IN[[:space:]]+TXT[[:space:]]+\"1\.1\.0\""
q hdls1.$S A;               check "27 headless A"       eval 'answer_count 4 && answer_has "172\.0\.0\.5"'
q hdls1.$S SRV;             check "29 headless SRV"     eval 'answer_count 5 && answer_has "SRV[[:space:]]+0 16 80 dup-name\.hdls1\.$S\." && [ "$(section ADDITIONAL | grep -c .)" -eq 6 ]'
q dup-name.hdls1.$S A;      check "32 dup-name A"       answer_count 2
q hdlsprtls.$S SRV;         check "38 portless SRV NODATA" nodata
q hdls-unready.$S A;        check "40 unready NX"       nx
q ep1a.svc1.$S A;           check "41 endpoint under ClusterIP" answer_has "A[[:space:]]+172\.0\.0\.1"
q 172-0-0-1.svc1.$S A;      check "42 dashed IP hidden by hostname" nx
q external.$S CNAME;        check "44 ExternalName"     answer_has "CNAME[[:space:]]+ext\.interwebs\.test\."
q external-to-service.$S A; check "48 in-zone chase"    eval 'answer_count 2 && section ANSWER | head -1 | grep -q CNAME && answer_has "^svc1\.$S\..*A[[:space:]]+10\.0\.0\.1"'
q svc-dual-stack.$S SRV;    check "53 dual-stack SRV"   eval 'answer_count 1 && answer_has "SRV[[:space:]]+0 50 80"'
q SvC1.TeStNs.SvC.cLuStEr.LoCaL A; check "54 case"      answer_has "^SvC1\.TeStNs\.SvC\.cLuStEr\.LoCaL\."
q 10-240-0-1.podns.pod.cluster.local A; check "62 pods insecure" answer_has "A[[:space:]]+10\.240\.0\.1"
q -x 10.0.0.1;              check "68 PTR ClusterIP"    answer_has "PTR[[:space:]]+svc1\.testns\.svc\.cluster\.local\."
q -x 172.0.0.4;             check "70 PTR endpoint"     answer_has "PTR[[:space:]]+dup-name\.hdls1\.testns\.svc\.cluster\.local\."
q -x 5678:abcd::1;          check "71 PTR v6"           answer_has "PTR[[:space:]]+5678-abcd--1\.hdls1\.testns\.svc\.cluster\.local\."
q -x 10.0.0.99;             check "74 PTR NX"           eval 'rcode_is NXDOMAIN && authority_has "^in-addr\.arpa\..*SOA[[:space:]]+ns\.dns\.in-addr\.arpa\."'
q cluster.local AXFR +tcp;  check "78 AXFR"             eval 'grep -q "Transfer failed\|REFUSED" <<<"$OUT"'

# /ready is 200 once the watches synced
check "ready 200" until_ok 5 eval '[ "$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:$READY_PORT/ready)" = 200 ]'

# the watches carry changes: a new service appears, a deleted one goes
cat > "$TMP/new.yaml" <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: svc-new, namespace: testns}
spec:
  clusterIP: 10.0.0.77
  clusterIPs: [10.0.0.77]
  ports: [{name: http, port: 80, protocol: TCP}]
EOF
K create --validate=false -f "$TMP/new.yaml" > /dev/null
new_ok() { q svc-new.$S A; answer_has "A[[:space:]]+10\.0\.0\.77"; }
check "watch: added service answers" until_ok 5 new_ok
K delete svc svc1 -n testns > /dev/null
gone() { q svc1.$S A; rcode_is NXDOMAIN; }
check "watch: deleted service is NXDOMAIN" until_ok 5 gone
K delete namespace podns > /dev/null
nsgone() { q 10-240-0-1.podns.pod.cluster.local A; rcode_is NXDOMAIN; }
check "watch: deleted namespace is NXDOMAIN" until_ok 5 nsgone

finish
