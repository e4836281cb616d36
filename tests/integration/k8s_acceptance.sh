#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_acceptance.sh — every row (1–79) of the kubernetes plugin's acceptance
# table (tests/data/kubernetes/acceptance.tsv, described in docs/compatibility.md),
# with the real binary, through the real API client.
#
# Two kubesims are filled with kubectl as an operator would: one with the
# acceptance fixture (tests/data/kubernetes/cluster.json), one with the zonal
# vectors' fixture (zonal.json). One topodns per Corefile profile watches
# them; tests/data/kubernetes/acceptance.py sends every line of
# acceptance.tsv that belongs to the profile and compares rcode, AA/TC and
# the three sections as sets (CNAME before its target). Profiles: the
# defaults, each non-default configuration of the table (ignore empty_service,
# unsynced, ttl 30 / 3600, namespaces, pods insecure / verified,
# fallthrough, zonal on/off), and kubeadm's default Corefile.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import dns.message' 2>/dev/null ||
    skip "python3-dnspython not installed"

TABLE=$KDATA/acceptance.tsv
RUNNER=$KDATA/acceptance.py
export TOPODNS_SELF_IPS=10.244.0.20      # "our own pod IP" of the fixture (row 21)

start_kubesim
load_fixture "$KDATA/cluster.json"
[ "$(K get pod foo -n podns -o jsonpath='{.status.podIP}')" = 10.240.0.1 ] ||
    K patch pod foo -n podns --subresource=status --type=merge \
        -p '{"status":{"phase":"Running","podIP":"10.240.0.1","podIPs":[{"ip":"10.240.0.1"}]}}' > /dev/null
KS_MAIN=$KS
start_kubesim
load_fixture "$KDATA/zonal.json"
KS_ZONAL=$KS
DEAD=$(free_port)                        # nothing listens here: never synced

# The ExternalName "upstream" (row 45): a server block in the same
# Corefile serving interwebs.test from a zone file; the plugin's chase
# reaches it through the server's own chain.
UPSTREAM_BLOCK="interwebs.test:{\$PORT} {
    file $KDATA/interwebs.test.db
}"

declare -A PORTS TTLS
# start PROFILE TTL STANZA-BODY [EXTRA-PLUGIN-LINES [KUBESIM-URL]]
start() {
    local prof=$1 ttl=$2 body=$3 extra=${4:-} ks=${5:-$KS_MAIN}
    start_topodns ".:{\$PORT} {
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $ks
        $body
    }
    $extra
}
$UPSTREAM_BLOCK" || { echo "profile $prof: topodns did not start"; FAIL=$((FAIL + 1)); return 1; }
    PORTS[$prof]=$PORT
    TTLS[$prof]=$ttl
}

start default 5 ""
start ignore_empty 5 "ignore empty_service"
start unsynced 5 "startup_timeout 1s" "" "http://127.0.0.1:$DEAD"
start ttl30 30 "ttl 30"
start ttl3600 3600 "ttl 3600"
start ns_testns 5 "namespaces testns"
start insecure 5 "pods insecure"
start verified 5 "pods verified"
start fallthrough 5 "fallthrough in-addr.arpa ip6.arpa" "file $KDATA/10.in-addr.arpa.db 10.in-addr.arpa"
start zonal 5 "zonal" "" "$KS_ZONAL"
start zonal_off 5 "" "" "$KS_ZONAL"

# kubeadm's default Corefile: conf/Corefile.kubeadm, with only these edits
# (sed below), so that it runs on loopback against kubesim:
# - `.:53` → a free port; health/ready/prometheus on free ports instead of
#   :8080/:8181/:9153; the kubernetes stanza gets `endpoint` (kubesim instead
#   of the in-cluster configuration);
# - forward goes to a second topodns on loopback serving interwebs.test and
#   10.in-addr.arpa from zone files, never to /etc/resolv.conf's resolver.
# forward, cache and loop are kept when `topodns -plugins` lists them; until
# then their lines are removed (profile kubeadm_min instead of kubeadm_full)
# and the ExternalName upstream is an interwebs.test block in the same file.
HP=$(free_port); RP=$(free_port); PP=$(free_port)
SED=(-e 's/^\.:53 {/.:{$PORT} {/' -e "s/^    health {/    health :$HP {/"
     -e "s/^    ready\$/    ready :$RP/" -e "s/^    prometheus :9153/    prometheus :$PP/"
     -e "s|^\(    kubernetes cluster.local.*{\)\$|\1\\n        endpoint $KS_MAIN|")
KUP=""
if has_plugin forward; then
    start_topodns "interwebs.test:{\$PORT} {
    file $KDATA/interwebs.test.db
}
10.in-addr.arpa:{\$PORT} {
    file $KDATA/10.in-addr.arpa.db
}" || exit 1
    KPROF=kubeadm_full
    SED+=(-e "s|^    forward . /etc/resolv.conf|    forward . 127.0.0.1:$PORT|")
else
    echo "note: no forward plugin yet: kubeadm Corefile without forward (profile kubeadm_min)"
    KPROF=kubeadm_min
    SED+=(-e '/^    forward /d')
    KUP=$UPSTREAM_BLOCK
fi
CAP=()
if has_plugin cache; then CAP=(--cache-cap 30)
else echo "note: no cache plugin yet: kubeadm Corefile without cache"; SED+=(-e '/^    cache 30/d'); fi
has_plugin loop || { echo "note: no loop plugin yet: kubeadm Corefile without loop"; SED+=(-e '/^    loop$/d'); }
KCONF=$(sed "${SED[@]}" "$top_srcdir/conf/Corefile.kubeadm")
check "kubeadm Corefile edited as intended" eval 'grep -q "endpoint $KS_MAIN" <<<"$KCONF" && ! grep -q "resolv.conf\|:53 \|:9153" <<<"$KCONF"'
start_topodns "$KCONF
$KUP" || exit 1
PORTS[$KPROF]=$PORT
TTLS[$KPROF]=30

# run_profile PROFILE [runner args]: adds the runner's counts to PASS/FAIL
run_profile() {
    local prof=$1; shift
    [ -n "${PORTS[$prof]:-}" ] || return
    local out
    out=$(/usr/bin/python3 "$RUNNER" "$TABLE" "$prof" "${PORTS[$prof]}" "${TTLS[$prof]}" "$@" 2>&1)
    echo "$out"
    local p f
    read -r p f < <(sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<<"$out" | tail -1)
    [ -n "$p" ] || { p=0; f=1; }
    PASS=$((PASS + p)); FAIL=$((FAIL + f))
}

# the watches must have synced (except for `unsynced`) before asking
for prof in default ignore_empty ttl30 ttl3600 ns_testns insecure verified fallthrough zonal zonal_off; do
    PORT=${PORTS[$prof]:-} && [ -n "$PORT" ] || continue
    until_ok 5 eval 'q svc1.testns.svc.cluster.local A; rcode_is NOERROR || { q hdls.testns.svc.cluster.local A; rcode_is NOERROR; }' ||
        echo "note: profile $prof not answering svc1 yet"
done

run_profile default --coverage
for prof in ignore_empty unsynced ttl30 ttl3600 ns_testns insecure verified fallthrough zonal zonal_off; do
    run_profile "$prof"
done
run_profile "$KPROF" "${CAP[@]}"

# the unsynced server said so at startup, as CoreDNS does
check "unsynced: waiting/started-unsynced logged" eval \
    'grep -q "waiting for Kubernetes API before starting server" "$TMP"/topodns.${PORTS[unsynced]}.log &&
     grep -q "starting server with unsynced Kubernetes API" "$TMP"/topodns.${PORTS[unsynced]}.log'
# kubeadm: /health and /ready
check "kubeadm /health 200 OK" eval '[ "$(curl -s http://127.0.0.1:$HP/health)" = OK ]'
check "kubeadm /ready 200 OK" eval '[ "$(curl -s http://127.0.0.1:$RP/ready)" = OK ]'
check "kubeadm /metrics has coredns_dns_requests_total" eval \
    'curl -s http://127.0.0.1:$PP/metrics | grep -q "^coredns_dns_requests_total{"'
finish
