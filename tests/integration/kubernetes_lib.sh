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
