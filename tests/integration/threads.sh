#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# threads.sh — topodns's threads carry names (top -H, ps -L, gdb) and the
# kubernetes API thread runs at a lower priority than the DNS workers, so a
# relist of a large cluster on a saturated CPU yields to serving
# (src/common/thread.h).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

start_kubesim
load_fixture "$KDATA/cluster.json"
HP=$(free_port)
start_topodns ".:{\$PORT} {
    health 127.0.0.1:$HP
    kubernetes cluster.local {
        endpoint $KS
    }
}" -workers 3

# name → nice value of each of topodns's threads ("comm nice" lines)
threads() {
    local t
    for t in /proc/"$TOPO_PID"/task/*; do
        # field 19 of stat is the nice value; comm may hold spaces, so cut after ')'
        printf '%s %s\n' "$(cat "$t/comm")" "$(sed 's/.*) //' "$t/stat" | awk '{ print $17 }')"
    done
}
T=$(threads)
main_nice=$(sed 's/.*) //' /proc/"$TOPO_PID"/stat | awk '{ print $17 }')
check "one named thread per worker (3)" eval '[ "$(grep -c "^topodns-w[0-2] " <<<"$T")" = 3 ]'
check "the API thread is named topodns-api" grep -q '^topodns-api ' <<<"$T"
check "the HTTP thread is named topodns-http" grep -q '^topodns-http ' <<<"$T"
api_nice=$(awk '$1 == "topodns-api" { print $2; exit }' <<<"$T")
w_nice=$(awk '$1 == "topodns-w0" { print $2; exit }' <<<"$T")
check "workers keep the process's priority ($w_nice = $main_nice)" [ "$w_nice" = "$main_nice" ]
want=$(( main_nice + 10 > 19 ? 19 : main_nice + 10 ))
check "the API thread runs at nice +10 ($api_nice, process $main_nice)" [ "$api_nice" = "$want" ]
check "and the instance serves: a Service answers" until_ok 5 eval \
    'q svc1.testns.svc.cluster.local A && rcode_is NOERROR && answer_has 10.0.0.1'
finish
