# SPDX-License-Identifier: Apache-2.0
# bench/lib.sh — helpers shared by the hand-run benchmarks in bench/.
#
# Sourced by bench/sync, bench/churn and bench/qps. Finds the built binaries
# (BUILD=/path/to/build-dir, default: the current directory if it holds
# src/topodns, else the source tree holding bench/), makes a throwaway temp
# dir, picks free 127.0.0.1 ports, starts kubesim and topodns and cleans up
# on exit.
# Everything listens on 127.0.0.1 only.

set -u
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC_DIR=$(dirname "$BENCH_DIR")
if [ -z "${BUILD:-}" ]; then
    if [ -x ./src/topodns ]; then BUILD=$PWD; else BUILD=$SRC_DIR; fi
fi
TOPODNS=${TOPODNS:-$BUILD/src/topodns}
KUBESIM=${KUBESIM:-$BUILD/tests/kubesim/kubesim}
for b in "$TOPODNS" "$KUBESIM"; do
    [ -x "$b" ] || { echo "missing $b (set BUILD=build dir; make src/topodns tests/kubesim/kubesim)" >&2; exit 2; }
done
BT=$(mktemp -d "${TMPDIR:-/tmp}/topodns-bench.XXXXXX")
BENCH_PIDS=()

bench_cleanup() {
    local p
    for p in "${BENCH_PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${BENCH_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    [ -n "${KEEP:-}" ] || rm -rf "$BT"
}
trap bench_cleanup EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }

free_port() { /usr/bin/python3 "$SRC_DIR/scripts/free-port"; }   # outside the ephemeral range

# start_kubesim ARGS... → sets KS_PID, KS_ADDR
start_kubesim() {
    local log=$BT/kubesim.log i
    "$KUBESIM" --listen 127.0.0.1:0 "$@" > "$log" 2>&1 &
    KS_PID=$!; BENCH_PIDS+=("$KS_PID")
    for i in $(seq 1 600); do
        KS_ADDR=$(sed -n 's/^listening on //p' "$log" | head -1)
        [ -n "$KS_ADDR" ] && return 0
        kill -0 "$KS_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "kubesim did not start:" >&2; cat "$log" >&2; exit 1
}

# kubesim's current global resourceVersion (cheap: GET /sim/v1/faults)
ks_rv() { curl -s "http://$KS_ADDR/sim/v1/faults" | sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/'; }

# k8s_corefile EXTRA_PLUGIN_LINES → Corefile on $DNS_PORT/$READY_PORT/$METRICS_PORT
k8s_corefile() {
    cat <<EOC
cluster.local:${DNS_PORT:=$(free_port)} {
    bind 127.0.0.1
    kubernetes cluster.local {
        endpoint http://$KS_ADDR
        ${K8S_EXTRA:-}
    }
$1
    ready 127.0.0.1:$READY_PORT
    prometheus 127.0.0.1:$METRICS_PORT
}
EOC
}

# start_topodns COREFILE_TEXT → TD_PID, TD_START (epoch seconds, float)
start_topodns() {
    DNS_PORT=${DNS_PORT:-$(free_port)}
    printf '%s\n' "$1" > "$BT/Corefile"
    TD_START=$(now)
    "$TOPODNS" -conf "$BT/Corefile" ${TOPODNS_ARGS:-} > "$BT/topodns.log" 2>&1 &
    TD_PID=$!; BENCH_PIDS+=("$TD_PID")
}

# wait_ready TIMEOUT_S → sets READY_S (seconds from TD_START to /ready 200)
wait_ready() {
    local deadline code
    deadline=$(echo "$(now) + $1" | bc)
    while :; do
        code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$READY_PORT/ready" 2>/dev/null)
        if [ "$code" = 200 ]; then READY_S=$(echo "$(now) - $TD_START" | bc); return 0; fi
        kill -0 "$TD_PID" 2>/dev/null || { echo "topodns exited:" >&2; tail -20 "$BT/topodns.log" >&2; exit 1; }
        [ "$(echo "$(now) > $deadline" | bc)" = 1 ] && { READY_S=timeout; return 1; }
        sleep 0.02
    done
}

# proc_kb PID FIELD → VmRSS / VmHWM in kB
proc_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# cpu_ticks PID → utime+stime in clock ticks for the whole process
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# row NAME MEASURED TARGET VERDICT
row() { printf '%-34s %16s %16s   %s\n' "$1" "$2" "$3" "$4"; }
header() { row "metric" "measured" "target" "verdict"; row "------" "--------" "------" "-------"; }
