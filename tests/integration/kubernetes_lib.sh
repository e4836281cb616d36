# SPDX-License-Identifier: Apache-2.0
# tests/integration/kubernetes_lib.sh — kubesim helpers shared by the
# kubernetes plugin's integration tests (kubernetes.sh, k8s_*.sh).
# Source it after lib.sh. Not a test by itself.
#
#   need_kube                       skip (77) without kubectl or kubesim
#   start_kubesim [kubesim args]    sets KS (http://127.0.0.1:port), KS_PID
#   K kubectl-args...               kubectl against the last kubesim ($KS)
#   load_fixture FILE               kubectl create -f FILE (fails the test on error)
#   until_ok SECONDS CMD...         retry CMD every 0.1 s
#   has_plugin NAME                 the binary lists dns.NAME in -plugins
#   kdir                            tests/data/kubernetes
#   ks_requests / ks_requests_clear the URIs of the API requests kubesim
#                                   logged, one a line / empty that log
# The three-zone cluster of tests/data/topology/cluster.yaml (topology.sh,
# topology_locate.sh):
#   start_topology_cluster [kubesim args]   kubesim serving it; skips without
#                                   kubectl, kubesim, jq or curl; sets S
#   addrs NAME SOURCE               the sorted A addresses of NAME.$S from
#                                   topodns ($PORT), asked from SOURCE, one line
#   expect_addrs WHAT NAME SOURCE WANT      one check of that answer set
#   addrs_within SECONDS WHAT NAME SOURCE WANT  it becomes WANT in time

KUBESIM=${KUBESIM:-$top_builddir/tests/kubesim/kubesim}
KDATA=$top_srcdir/tests/data/kubernetes
export KUBECONFIG=/dev/null   # never a real cluster

need_kube() {
    command -v kubectl >/dev/null || skip "kubectl not installed"
    [ -x "$KUBESIM" ] || skip "kubesim not built"
}

start_kubesim() {
    local out=$TMP/kubesim.$RANDOM.out
    "$KUBESIM" --listen 127.0.0.1:0 "$@" > "$out" 2> "$out.err" &
    KS_PID=$!
    PIDS+=("$KS_PID")
    local i
    for i in $(seq 1 $((${KS_START_WAIT:-10} * 10))); do   # KS_START_WAIT seconds (a large --generate takes long on a loaded machine)
        [ -s "$out" ] && break
        sleep 0.1
    done
    KS_ADDR=$(head -1 "$out" | sed -n 's/^listening on //p')
    [ -n "$KS_ADDR" ] || { echo "kubesim did not start:"; cat "$out.err"; exit 1; }
    KS=http://$KS_ADDR
}

K() { kubectl --server "$KS" "$@" 2>&1; }

# load_fixture FILE: as an operator would apply it (kube-system exists
# already in kubesim: that AlreadyExists is fine). Pods keep the status of
# the file; if the server dropped it, it is set through the status subresource.
load_fixture() {
    local out=$TMP/create.$RANDOM.out
    K create --validate=false -f "$1" > "$out"
    if grep -v 'namespaces "kube-system" already exists' "$out" | grep -qi error; then
        cat "$out"; exit 1
    fi
}

until_ok() {
    local t=$1 i; shift
    for i in $(seq 1 $((t * 10))); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}

# api_lists PORT: the LIST requests topodns has made so far, from the
# prometheus plugin on 127.0.0.1:PORT (the count survives reloads)
api_lists() {
    curl -s "http://127.0.0.1:$1/metrics" |
        sed -n 's/^coredns_kubernetes_rest_client_request_duration_seconds_count{.*verb="LIST"} \([0-9]*\)$/\1/p'
}
has_plugin() { "$TOPODNS" -plugins 2>/dev/null | grep -qx "[[:space:]]*dns\.$1"; }

# ks_requests: the URIs kubesim's request log holds (GET /sim/v1/requests);
# ks_requests_clear empties it (DELETE), so the next ks_requests shows only
# what came after.
ks_requests() { curl -s "$KS/sim/v1/requests" | jq -r '.requests[].uri'; }
ks_requests_clear() { curl -s -X DELETE "$KS/sim/v1/requests" > /dev/null; }

# ---- the three-zone cluster ---------------------------------------------------
# tests/data/topology/cluster.yaml: nodes a1 a2 | b1 b2 | c1 c2 in zone-a |
# zone-b | zone-c, client pods on 127.0.<zone>.<n>, one headless Service per
# topology policy in namespace prod (S, the names addrs completes).
start_topology_cluster() {
    need_kube
    command -v jq >/dev/null || skip "jq not installed"
    command -v curl >/dev/null || skip "curl not installed"
    start_kubesim "$@"
    load_fixture "$top_srcdir/tests/data/topology/cluster.yaml"
    S=prod.svc.cluster.local
}

# addrs NAME SOURCE: the sorted A addresses topodns (127.0.0.1:$PORT)
# answers for NAME.$S to a client at SOURCE (dig -b), on one line ("" for
# none). S=OTHER.DOMAIN addrs NAME SOURCE asks under another domain.
addrs() {
    dig @127.0.0.1 -p "$PORT" -b "$2" +time=2 +tries=1 +short "$1.$S" A | sort | tr '\n' ' ' | sed 's/ $//'
}
# expect_addrs WHAT NAME SOURCE WANT: one check that the set is WANT
expect_addrs() {
    local got
    got=$(addrs "$2" "$3")
    OUT="got '$got' want '$4'"; check "$1" test "$got" = "$4"
}
# addrs_within SECONDS WHAT NAME SOURCE WANT: one check that the set becomes
# WANT, asked again every 0.05 s, SECONDS × 20 times at the most
addrs_within() {
    local secs=$1 got i; shift
    for i in $(seq 1 $((secs * 20))); do
        got=$(addrs "$2" "$3")
        [ "$got" = "$4" ] && break
        sleep 0.05
    done
    OUT="got '$got' want '$4' (after $secs s)"; check "$1" test "$got" = "$4"
}
