#!/usr/bin/env bash
# xfr_stall.sh — an AXFR of a large cluster zone does not stall the other
# queries of its worker: the transfer plugin sends the kubernetes zone one
# message per event-loop turn (src/server/transfer.h, resumable sources).
#
# kubesim serves a generated cluster (GEN, default 150,000 pods in 10,000
# Services); topodns runs with one worker (-workers 1). tests/integration/
# xfrprobe.py starts `dig cluster.local AXFR` over TCP and, while it
# streams, asks an A question over UDP one after the other, each timed.
# Checks: the transfer completes (more than MIN_RECORDS records), every UDP
# question is answered, and the worst UDP latency stays below a tenth of
# the transfer's time (WORST, default 3: a third). A transfer made in one call (the whole zone before
# the worker reads its next query: about half a second for 150,000 pods)
# makes the worst latency a large part of the transfer's time.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
[ -x "$KUBESIM" ] || skip "kubesim not built"
command -v dig >/dev/null || skip "dig not installed"
ldd "$TOPODNS" 2>/dev/null | grep -q 'libasan\|libtsan' && skip "sanitizer build: timing is meaningless there"
GEN=${GEN:-nodes=5000,pods=150000,services=10000,zones=3}
MIN_RECORDS=${MIN_RECORDS:-100000}
start_kubesim --generate "$GEN" --seed 7
start_topodns ".:{\$PORT} {
    transfer cluster.local {
        to *
    }
    kubernetes cluster.local {
        endpoint $KS
    }
}" -workers 1 || exit 1
# synced: the zone's records stop growing (the first AXFR sizes it)
size() { dig @127.0.0.1 -p "$PORT" +time=20 +tries=1 cluster.local AXFR 2>/dev/null |
         sed -n 's/.*XFR size: \([0-9]*\) records.*/\1/p'; }
prev=-1
for _ in $(seq 1 60); do
    cur=$(size); cur=${cur:-0}
    [ "$cur" -ge "$MIN_RECORDS" ] && [ "$cur" = "$prev" ] && break
    prev=$cur
    sleep 1
done
echo "zone: $cur records"
check "the generated zone is transferred whole (>= $MIN_RECORDS records)" [ "${cur:-0}" -ge "$MIN_RECORDS" ]
PROBE=cluster.local
q "$PROBE" A
check "the probe name answers" rcode_is NOERROR
line=$(/usr/bin/python3 "$top_srcdir/tests/integration/xfrprobe.py" "$PORT" cluster.local "$PROBE" ${ROUNDS:-1} | tail -1)
echo "$line"
get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" $line"; }
records=$(get records); probes=$(get probes); lost=$(get lost); mx=$(get max_ms); total=$(get axfr_s)
check "the AXFR under probing is whole ($records records)" [ "${records:-0}" -ge "$MIN_RECORDS" ]
check "UDP questions were asked during the transfer ($probes)" [ "${probes:-0}" -ge 10 ]
check "every UDP question answered ($lost lost)" [ "${lost:-1}" = 0 ]
check "worst UDP latency ${mx} ms < 1/${WORST:-3} of the transfer's ${total} s" \
    awk -v m="${mx:-1e9}" -v t="${total:-0}" -v w="${WORST:-3}" 'BEGIN { exit !(m * w < t * 1000) }'
finish
