#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_options.sh — every option example of src/plugin/kubernetes/README.md
# ("Every option by example") is accepted by the real binary, and the
# options CoreDNS rejects stop startup
# with file:line and the message.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
start_kubesim --load "$KDATA/cluster.json"
README=$top_srcdir/src/plugin/kubernetes/README.md

# the example column of the README table, for options that need no files
# or remote servers (endpoint, tls, kubeconfig and ZONES are exercised by
# every test and by the k8s client tests)
examples=$(awk -F'|' '/^### Every option by example/ { on = 1; next } /^##/ { on = 0 } on && /^\| `/ {
    ex = $3; gsub(/^ *`|` *$/, "", ex); print ex }' "$README" |
    grep -Ev '^(kubernetes |endpoint |tls |kubeconfig )')
n=$(grep -c . <<<"$examples")
check "README has the option examples ($n)" [ "$n" -ge 14 ]
while IFS= read -r ex; do
    start_topodns ".:{\$PORT} {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
        $ex
    }
}" > /dev/null 2>&1
    check "README example accepted: $ex" eval 'q cluster.local SOA; rcode_is NOERROR'
    stop_topodns
done <<<"$examples"

# bad_conf 'stanza line' 'message regex' [LINE]: startup fails with Corefile:LINE (4)
bad_conf() {
    local f=$TMP/Bad.$RANDOM
    printf '.:{$PORT} {\n    kubernetes cluster.local {\n        endpoint %s\n        %s\n    }\n}\n' "$KS" "$1" > "$f"
    timeout 10 "$TOPODNS" -conf "$f" > "$f.out" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$(basename "$f"):${3:-4}:" "$f.out" && grep -qE "$2" "$f.out" ||
        { echo "  got (rc $rc):"; cat "$f.out"; return 1; }
}
check "ttl 3601 rejected" bad_conf "ttl 3601" 'ttl must be in range \[0, 3600\]'
check "ttl -1 rejected" bad_conf "ttl -1" 'ttl must be in range'
check "pods bogus rejected" bad_conf "pods bogus" 'bogus'
check "unknown property rejected" bad_conf "resyncperiod 30s" "unknown property 'resyncperiod'"
check "upstream (removed keyword) rejected" bad_conf "upstream" "unknown property 'upstream'"
check "multicluster with a bad zone rejected" bad_conf "multicluster 10.0.0.0/99" 'invalid CIDR'
check "zonal with noendpoints rejected" bad_conf "noendpoints
        zonal" 'zonal requires the endpoint cache; remove noendpoints' 6
check "bad label selector rejected" bad_conf "labels a in (b" 'label|selector|\('
check "ignore bogus rejected" bad_conf "ignore bogus" 'bogus'
check "apiserver_qps needs a number" bad_conf "apiserver_qps fast" 'fast'
finish
