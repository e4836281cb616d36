#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# autopath.sh — server-side search path completion (src/plugin/autopath/)
# in the real binary against kubesim: `autopath @kubernetes` with
# `pods verified`, client pods played by 127.0.0.x source addresses (dig -b):
# a name a resolver with ndots:5 builds from the pod's first search domain
# answered with a CNAME to the name found; <svc>.<ns> from another
# namespace; the bare name through forward to a second topodns (an
# asynchronous try); NXDOMAIN everywhere → the query's own reply; clients
# that are no pod untouched; a pod replaced in another namespace;
# coredns_autopath_success_total; `pods insecure` (a warning, no
# autopath); `autopath ZONE RESOLV-CONF`.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
OUT=""

start_kubesim --load "$KDATA/cluster.json"
pod() {   # pod NAME NAMESPACE IP
    K apply --validate=false -f - > /dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: $2}
spec: {containers: [{name: c, image: busybox}]}
status: {phase: Running, podIP: $3, podIPs: [{ip: $3}]}
YAML
}
pod client testns 127.0.0.5
pod client2 otherns 127.0.0.6

# the upstream of the bare names: a second topodns with a root zone
cat > "$TMP/root.zone" <<'EOF'
$ORIGIN .
$TTL 60
@ IN SOA ns.root. hostmaster.root. 1 7200 1800 86400 30
bare. IN A 192.0.2.8
EOF
start_topodns ".:{\$PORT} {
    file $TMP/root.zone .
}" || exit 1
UP=$PORT
PP=$(free_port)
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$PP
    autopath @kubernetes
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
        pods verified
    }
    forward . 127.0.0.1:$UP
    log
}" || exit 1
S=testns.svc.cluster.local
until_ok 5 eval 'q -b 127.0.0.5 svc1.$S.$S A; answer_count 2' || echo "note: no autopath after 5 s"

# records of the answer section in order, as "owner ttl type rdata"
ans() { section ANSWER | awk '{ $3 = ""; print }' | tr -s ' ' | tr '\n' '|'; }
is_ans() { [ "$(ans)" = "$1" ]; }
metric() {
    local v
    v=$(curl -s "http://127.0.0.1:$PP/metrics" |
        awk -v s="coredns_autopath_success_total{server=\"dns://:$PORT\"}" '$1 == s { print $2 }')
    echo "${v:-0}"
}

n0=$(metric)
q -b 127.0.0.5 svc1.$S.$S A
check "pod in testns, svc1.$S + its first search domain: CNAME to the name found, then its A" eval \
    'rcode_is NOERROR && aa_set && is_ans "svc1.$S.$S. 5 CNAME svc1.$S.|svc1.$S. 5 A 10.0.0.1|"'
check "…the question as asked" grep -q "^;svc1\.$S\.$S\.[[:space:]]" <<<"$OUT"
check "…counted in coredns_autopath_success_total{server}" [ "$(metric)" = $((n0 + 1)) ]
q -b 127.0.0.5 svc1.$S.$S A +tcp
check "…over TCP too" eval 'rcode_is NOERROR && is_ans "svc1.$S.$S. 5 CNAME svc1.$S.|svc1.$S. 5 A 10.0.0.1|"'

# a large headless Service through autopath over UDP (512 octets): the
# reply is truncated where the direct question's is, with the CNAME in
# front: the same A records in the same order as the start of the whole
# answer over TCP, as many as fit (the sub-request stops building records
# at the client's size, which must not cut what fits)
python3 - "$TMP/big.yaml" <<'PY'
import sys
eps = "".join("- addresses: [10.7.%d.%d]\n  conditions: {ready: true}\n" % (i // 250, i % 250 + 1)
              for i in range(300))
open(sys.argv[1], "w").write("""apiVersion: v1
kind: Service
metadata: {name: big, namespace: testns}
spec: {clusterIP: None, ports: [{name: http, port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: big-1, namespace: testns, labels: {kubernetes.io/service-name: big}}
addressType: IPv4
ports: [{name: http, port: 80, protocol: TCP}]
endpoints:
""" + eps)
PY
K apply --validate=false -f "$TMP/big.yaml" > /dev/null
until_ok 5 eval 'q -b 127.0.0.5 big.$S A +tcp; [ "$(section ANSWER | wc -l)" = 300 ]'
q -b 127.0.0.5 big.$S.$S A +tcp
WHOLE=$(section ANSWER | awk '$4 == "A" { print $5 }')
q -b 127.0.0.5 big.$S.$S A +ignore +noedns
UDP_A=$(section ANSWER | awk '$4 == "A" { print $5 }')
nu=$(grep -c . <<<"$UDP_A")
check "large Service through autopath over TCP: CNAME and all 300 A" eval \
    '[ "$(grep -c . <<<"$WHOLE")" = 300 ]'
check "…over UDP: truncated (TC), the CNAME first" eval \
    'tc_set && [ "$(section ANSWER | head -1 | awk "{ print \$4 }")" = CNAME ]'
check "…its $nu A records are the first $nu of the whole answer, in order" eval \
    '[ "$nu" -gt 20 ] && [ "$UDP_A" = "$(head -n "$nu" <<<"$WHOLE")" ]'
check "…as many as fit: the reply is within 512 octets and one more A would not fit" eval \
    'sz=$(sed -n "s/.*MSG SIZE  rcvd: \([0-9]*\).*/\1/p" <<<"$OUT"); [ "$sz" -le 512 ] && [ $((sz + 16)) -gt 512 ]'
q -b 127.0.0.5 svc1.testns.svc.$S SRV
check "…SRV through svc.<zone>" eval \
    'rcode_is NOERROR && is_ans "svc1.testns.svc.$S. 5 CNAME svc1.$S.|svc1.$S. 5 SRV 0 100 80 svc1.$S.|"'

q -b 127.0.0.6 svc1.testns.otherns.svc.cluster.local A
check "pod in otherns, <svc>.<ns> relative: found through svc.<zone>" eval \
    'rcode_is NOERROR && is_ans "svc1.testns.otherns.svc.cluster.local. 5 CNAME svc1.$S.|svc1.$S. 5 A 10.0.0.1|"'
q -b 127.0.0.6 svc1.$S A
check "pod in otherns, a full name: not below its search path, answered as is" eval \
    'rcode_is NOERROR && is_ans "svc1.$S. 5 A 10.0.0.1|"'

n0=$(metric)
q -b 127.0.0.5 bare.$S A
check "bare name through forward (an asynchronous try): CNAME to the upstream's answer" eval \
    'rcode_is NOERROR && is_ans "bare.$S. 60 CNAME bare.|bare. 60 A 192.0.2.8|"'
check "…counted" [ "$(metric)" = $((n0 + 1)) ]
n0=$(metric)
q -b 127.0.0.6 svc1.otherns.svc.cluster.local A
check "NXDOMAIN everywhere (upstream too): the query's own NXDOMAIN with the cluster SOA" eval \
    'rcode_is NXDOMAIN && aa_set && answer_count 0 && authority_has "SOA[[:space:]]+ns\.dns\.cluster\.local\."'
check "…not counted" [ "$(metric)" = "$n0" ]
q -b 127.0.0.5 $S A
check "the first search domain itself: NODATA as without autopath" eval \
    'rcode_is NOERROR && answer_count 0 && authority_has "SOA"'
q -b 127.0.0.9 svc1.$S.$S A
check "a client that is no pod: no autopath (NXDOMAIN)" eval 'rcode_is NXDOMAIN && answer_count 0'
q svc1.$S.$S A
check "…nor from 127.0.0.1" rcode_is NXDOMAIN
check "log: the original name, answered NOERROR" \
    grep -q '127.0.0.5:[0-9]* - [0-9]* "A IN svc1.testns.svc.cluster.local.testns.svc.cluster.local. udp' "$LOG"

# the pod at 127.0.0.5 is replaced by one in otherns: its search path follows
K delete pod client -n testns > /dev/null
pod client3 otherns 127.0.0.5
check "a pod's IP reused in another namespace: the new namespace's search path" until_ok 5 eval \
    'q -b 127.0.0.5 svc1.testns.otherns.svc.cluster.local A; is_ans "svc1.testns.otherns.svc.cluster.local. 5 CNAME svc1.$S.|svc1.$S. 5 A 10.0.0.1|"'
q -b 127.0.0.5 svc1.$S.$S A
check "…and no longer testns's" rcode_is NXDOMAIN
stop_topodns

# pods insecure: accepted (as CoreDNS), a warning, no autopath
start_topodns ".:{\$PORT} {
    autopath @kubernetes
    kubernetes cluster.local {
        endpoint $KS
        pods insecure
    }
}" || exit 1
check "pods insecure: a warning at start" grep -q '\[WARNING\] plugin/autopath: .*pods verified' "$LOG"
q -b 127.0.0.6 svc1.testns.otherns.svc.cluster.local A
check "…and no autopath" rcode_is NXDOMAIN
stop_topodns

# autopath ZONE RESOLV-CONF: the file's search list, for every client
printf 'nameserver 10.0.0.10\nsearch testns.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n' \
    > "$TMP/resolv.conf"
start_topodns ".:{\$PORT} {
    autopath cluster.local $TMP/resolv.conf
    kubernetes cluster.local {
        endpoint $KS
    }
    forward . 127.0.0.1:$UP
}" || exit 1
until_ok 5 eval 'q -b 127.0.0.9 svc1.$S.$S A; answer_count 2' || true
check "RESOLV-CONF: any client gets the file's search path" eval \
    'rcode_is NOERROR && is_ans "svc1.$S.$S. 5 CNAME svc1.$S.|svc1.$S. 5 A 10.0.0.1|"'
q bare.$S A
check "…down to the bare name" eval 'rcode_is NOERROR && is_ans "bare.$S. 60 CNAME bare.|bare. 60 A 192.0.2.8|"'
q bare.example.com A
check "…only in its zones" eval 'rcode_is NXDOMAIN && answer_count 0'
stop_topodns

# setup errors
bad_conf() {   # bad_conf 'autopath line' 'message regex'
    local f=$TMP/Bad.$RANDOM
    printf '.:{$PORT} {\n    %s\n    whoami\n}\n' "$1" > "$f"
    timeout 10 "$TOPODNS" -conf "$f" > "$f.out" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qE "$2" "$f.out" ||
        { echo "  got (rc $rc):"; cat "$f.out"; return 1; }
}
check "no RESOLV-CONF" bad_conf "autopath" ':2: plugin/autopath: no resolv-conf specified'
check "missing RESOLV-CONF file" bad_conf "autopath /nonexistent/resolv.conf" \
    'plugin/autopath: failed to parse "/nonexistent/resolv.conf"'
check "@PLUGIN without a search path" bad_conf "autopath @whoami" \
    'plugin/autopath: whoami does not implement the AutoPather interface'
finish
