#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_recovery.sh — the real topodns follows the API server through two kinds
# of trouble, checked with dig (clients 127.0.1.x) against kubesim:
#
# 1. The API goes back in time (an etcd restore): kubesim saves its state,
#    Services change (one deleted, one created, an endpoint moved), then the
#    saved state comes back at a lower resourceVersion and one more Service is
#    created. topodns's re-watches get 504 ResourceVersionTooLarge and relist:
#    within a few seconds the Service created after the save is NXDOMAIN, the
#    one deleted after it answers again, the new one answers, the endpoint is
#    back.
# 2. Faults stop: for a while every burst of faults drops the watches and
#    fails the next requests (500, or 429 with Retry-After: 2), with working
#    watches (bookmarks every second) in between. Then the faults are cleared
#    and a Service and an EndpointSlice change: both answer within 2 s (plus
#    what the same changes took with healthy watches on this machine), since
#    the backoff restarts at 0.8 s after each success instead of keeping the
#    delay that earlier failures built up. The 429 bursts also show that
#    Retry-After is still waited for.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
[ -x "$KUBESIM" ] || skip "kubesim not built"
command -v curl >/dev/null || skip "curl not installed"

REFLECTORS=3   # services, endpointslices, namespaces
CLIENT=127.0.1.10
S=rs.svc.cluster.local

api() {   # api METHOD PATH [JSON]: the HTTP status
    local ct=application/json
    [ "$1" = PATCH ] && ct=application/merge-patch+json
    curl -s --noproxy '*' -o /dev/null -w '%{http_code}' -X "$1" -H "Content-Type: $ct" \
        ${3:+-d "$3"} "$KS$2"
}
fault() { curl -s --noproxy '*' -X POST -d "$1" "$KS/sim/v1/faults" > "$TMP/fault.out"; }
sim_rv() { curl -s --noproxy '*' "$KS/sim/v1/faults" | sed -n 's/.*"resourceVersion":"\([0-9]*\)".*/\1/p'; }
watches() { curl -s --noproxy '*' "$KS/sim/v1/faults" | sed -n 's/.*"watches":\([0-9]*\).*/\1/p'; }
all_watching() { [ "$(watches)" = "$REFLECTORS" ]; }
service() {   # service NAME CLUSTERIP
    api POST /api/v1/namespaces/rs/services "{\"metadata\":{\"name\":\"$1\"},\"spec\":{\"clusterIP\":\"$2\",\"ports\":[{\"name\":\"p\",\"port\":80}]}}"
}
endpoint() {  # endpoint IP: the only endpoint of the headless Service hl
    api PATCH /apis/discovery.k8s.io/v1/namespaces/rs/endpointslices/hl-1 "{\"endpoints\":[{\"addresses\":[\"$1\"],\"conditions\":{\"ready\":true}}]}"
}
a_is() { q -b "$CLIENT" "$1.$S" A +short; [ "$OUT" = "$2" ]; }
nx() { q -b "$CLIENT" "$1.$S" A; rcode_is NXDOMAIN; }
now_ms() { date +%s%3N; }
# within SECONDS CMD...: CMD succeeds within SECONDS (polled every 50 ms);
# ELAPSED is the time it took in ms
within() {
    local t0 limit=$(($1 * 1000)); shift
    t0=$(now_ms)
    while :; do
        ELAPSED=$(($(now_ms) - t0))
        "$@" && return 0
        [ "$ELAPSED" -ge "$limit" ] && return 1
        sleep 0.05
    done
}

start_kubesim --bookmark-interval 1
[ "$(api POST /api/v1/namespaces '{"metadata":{"name":"rs"}}')" = 201 ] || { echo "cannot create namespace rs"; exit 1; }
service keep 10.96.100.1 > /dev/null
service gone 10.96.100.2 > /dev/null
api POST /api/v1/namespaces/rs/services '{"metadata":{"name":"hl"},"spec":{"clusterIP":"None","ports":[{"name":"p","port":80}]}}' > /dev/null
api POST /apis/discovery.k8s.io/v1/namespaces/rs/endpointslices '{"metadata":{"name":"hl-1","labels":{"kubernetes.io/service-name":"hl"}},"addressType":"IPv4","endpoints":[{"addresses":["10.1.0.1"],"conditions":{"ready":true}}],"ports":[{"name":"p","port":80,"protocol":"TCP"}]}' > /dev/null
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
}" || exit 1
check "synced: keep answers" within 10 a_is keep 10.96.100.1
check "synced: hl answers its endpoint" a_is hl 10.1.0.1

# ---- 1. back in time -----------------------------------------------------------------
fault '{"saveState":"before"}'
RV_SAVED=$(sim_rv)
T_CHANGE=$(now_ms)
api DELETE /api/v1/namespaces/rs/services/gone > /dev/null
service later 10.96.100.3 > /dev/null
endpoint 10.1.0.2 > /dev/null
check "after the save: gone is NXDOMAIN" within 3 nx gone
check "after the save: later answers" within 3 a_is later 10.96.100.3
check "after the save: hl moved to 10.1.0.2" within 3 a_is hl 10.1.0.2
# what three changes take from the API to the answers on this machine now,
# with healthy watches: the slack a loaded machine gets in part 2
BASE=$(($(now_ms) - T_CHANGE))
echo "three changes answered ${BASE} ms after they were made (healthy watches)"
until_ok 5 all_watching
sleep 1.2   # bookmarks carry every reflector's resourceVersion past the saved one
RV_BEFORE=$(sim_rv)

fault '{"restoreState":"before"}'
service fresh 10.96.100.4 > /dev/null
OUT="kubesim at $(sim_rv) after the restore, $RV_BEFORE before it, $RV_SAVED saved"
check "restored: the resourceVersion went back" [ "$(sim_rv)" -lt "$RV_BEFORE" ]
check "restored: later (created after the save) is NXDOMAIN within 8 s" within 8 nx later
echo "restore followed in ${ELAPSED} ms"
check "restored: gone (deleted after the save) answers again" within 2 a_is gone 10.96.100.2
check "restored: fresh (created after the restore) answers" within 2 a_is fresh 10.96.100.4
check "restored: hl is back at 10.1.0.1" within 2 a_is hl 10.1.0.1
check "restored: keep still answers" a_is keep 10.96.100.1
OUT=$(grep -i "resourceVersion" "$LOG" | tail -5)
check "restored: the log says the version was too large" grep -q "is newer than the API server's" "$LOG"

# ---- 2. convergence once the faults stop ---------------------------------------------
# burst CODE [RETRY_AFTER]: once every watch is open and has had a bookmark,
# drop the watches and fail the next REFLECTORS requests (the re-watches)
burst() {
    until_ok 60 all_watching || true
    sleep 1.3
    # from before the faults are sent: the 429 cannot come earlier, so a
    # Retry-After waited for shows as at least its 2 s however slow the
    # machine is
    BURST_AT=$(now_ms)
    if [ $# -gt 1 ]; then
        fault "{\"failNext\":{\"count\":$REFLECTORS,\"code\":$1,\"retryAfter\":$2},\"closeWatches\":true}"
    else
        fault "{\"failNext\":{\"count\":$REFLECTORS,\"code\":$1},\"closeWatches\":true}"
    fi
}
for i in 1 2 3; do
    burst 500
    burst 429 2
    until_ok 10 all_watching
    REOPEN=$(($(now_ms) - BURST_AT))
    OUT="watches open again ${REOPEN} ms after a 429 with Retry-After: 2"
    check "faults round $i: Retry-After: 2 waited for" [ "$REOPEN" -ge 1900 ]
done
burst 500
sleep 0.2
fault '{"reset":true}'
HEALTHY=$(now_ms)
service conv 10.96.100.5 > /dev/null
endpoint 10.1.0.9 > /dev/null
converged() { a_is conv 10.96.100.5 && a_is hl 10.1.0.9; }
within 10 converged
TOOK=$(($(now_ms) - HEALTHY))
OUT="the changes answered ${TOOK} ms after the API was healthy again"
echo "$OUT"
# 2 s, plus what the same changes took with healthy watches (BASE): a
# backoff kept from the earlier failures would be several seconds more
check "faults cleared: a new Service and a moved endpoint answer within 2 s (+${BASE} ms)" \
    [ "$TOOK" -le $((2000 + BASE)) ]
check "topodns still running" kill -0 "$TOPO_PID"
finish
