#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# abuse.sh — topodns at saturation and reloaded under load (the slow and
# greedy TCP clients are tests/integration/slowloris.sh's).
#
# The server: example.org from a file with cache, gen.test from inline hosts,
# cluster.local from kubesim (a small generated cluster), prometheus.
#
# 1. Saturation: dnsperf floods from three source addresses at once (two over
#    UDP, one over TCP, no rate limit) with names that exist, names that do not
#    (20,000 distinct, so the cache fills and evicts) and Services, for
#    ABUSE_SECONDS (20 by default, the CI form; ABUSE_SECONDS=60 is the long
#    form). After a warm-up of the same (8 s), RSS (VmRSS) is sampled every 0.5 s: the
#    largest sample stays within 5 % of the first, and the open file
#    descriptors (/proc/PID/fd) counted at rest after the flood are no more
#    than at rest before it (RSS is not judged in an AddressSanitizer build,
#    whose quarantine keeps freed memory). Every reply dnsperf got is NOERROR or NXDOMAIN
#    (no SERVFAIL or REFUSED), and topodns keeps answering. Meanwhile 400
#    TCP connections that send a length and nothing more (slowloris.sh's
#    tests/integration/slowtcp.py) are each closed at the read deadline.
# 2. Reloads: 50 times (ABUSE_RELOADS) the Corefile changes (gen.test's
#    address) and SIGUSR1 reloads it while dnsperf keeps UDP at saturation and
#    four checking clients query: www.example.org, a missing name, a Service
#    and gen.test are never answered wrongly (gen.test: the old or the new
#    address while a reload is under way, the new one once it completed), and
#    every reload completes.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
PY=/usr/bin/python3
ABUSE=$top_srcdir/tests/integration/abuse.py
[ -x "$KUBESIM" ] || skip "kubesim not built"
command -v dnsperf >/dev/null || skip "dnsperf not installed"
"$PY" -c 'import dns.message' 2>/dev/null || skip "python3-dnspython not installed"
SECS=${ABUSE_SECONDS:-20}
RELOADS=${ABUSE_RELOADS:-50}

start_kubesim --generate nodes=3,pods=40,services=10,zones=3
MPORT=$(free_port)
corefile() {   # corefile GEN_TEST_ADDRESS
    cat <<EOF
example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
    cache 30
}
gen.test:{\$PORT} {
    hosts {
        $1 gen.test
    }
}
cluster.local:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
    cache 5
    prometheus 127.0.0.1:$MPORT
}
EOF
}
start_topodns "$(corefile 10.77.0.0)" || exit 1
PID=$TOPO_PID
svc_ok() { q svc-00001.ns-0.svc.cluster.local A +short; [ -n "$OUT" ]; }
check "synced with kubesim" until_ok 10 svc_ok

# the query mix: 40 % names that exist, 60 % of 20,000 distinct missing ones
"$PY" - "$TMP/queries" <<'PY'
import random, sys
r = random.Random(1)
with open(sys.argv[1], "w") as f:
    for i in range(50000):
        k = r.randrange(10)
        if k < 2:
            f.write("www.example.org A\n")
        elif k < 3:
            f.write("svc-%05d.ns-0.svc.cluster.local A\n" % r.randrange(10))
        elif k < 4:
            f.write("gen.test A\n")
        else:
            f.write("miss-%d.example.org A\n" % r.randrange(20000))
PY
# flood SECONDS TAG: three dnsperf from three sources; their reports in $TMP/TAG.*
# (niced: topodns is saturated all the same, tests running beside this one
# are disturbed less)
flood() {
    local p=()
    nice -n 10 dnsperf -s 127.0.0.1 -p "$PORT" -a 127.0.5.1 -d "$TMP/queries" -l "$1" -c 4 -q 200 -t 2 \
        > "$TMP/$2.udp1" 2>&1 & p+=($!)
    nice -n 10 dnsperf -s 127.0.0.1 -p "$PORT" -a 127.0.5.2 -d "$TMP/queries" -l "$1" -c 4 -q 200 -t 2 \
        > "$TMP/$2.udp2" 2>&1 & p+=($!)
    nice -n 10 dnsperf -s 127.0.0.1 -p "$PORT" -a 127.0.5.3 -m tcp -d "$TMP/queries" -l "$1" -c 8 -q 64 -t 2 \
        > "$TMP/$2.tcp" 2>&1 & p+=($!)
    FLOOD_PIDS=("${p[@]}")
}
# rcodes TAG: every response code dnsperf reported, "NAME COUNT" per line
rcodes() {
    cat "$TMP/$1".* | awk '/Response codes:/ { s = $0; sub(/.*Response codes: */, "", s);
        n = split(s, a, /, */); for (i = 1; i <= n; i++) { split(a[i], b, " "); c[b[1]] += b[2] } }
        END { for (k in c) print k, c[k] }'
}
completed_queries() { cat "$TMP/$1".* | awk '/Queries completed:/ { n += $3 } END { print n + 0 }'; }
fds() { ls "/proc/$PID/fd" | wc -l; }

# ---- 1. saturation --------------------------------------------------------------
# warm-up: the same flood and idle TCP connections as below, so that the
# allocator has seen the peak once before RSS is measured
flood 8 warm
/usr/bin/python3 "$top_srcdir/tests/integration/slowtcp.py" flood "$PORT" \
    --step 127.0.7.1:200 --step 127.0.7.2:200 --trickle 60 --wait 8 > /dev/null
wait "${FLOOD_PIDS[@]}"
sleep 1
FD0=$(fds)
flood "$SECS" main
sleep 1   # the flood is on: sample from here
"$PY" "$ABUSE" sample "$PID" "$((SECS - 2))" "$TMP/samples" &
SAMPLER=$!
# meanwhile, 400 TCP connections from two addresses that send a length and
# then (almost) nothing: slowloris.sh's flood, reused; each must be closed
# at its read deadline although the server is saturated
sleep 2
IDLE=$(/usr/bin/python3 "$top_srcdir/tests/integration/slowtcp.py" flood "$PORT" \
       --step 127.0.7.1:200 --step 127.0.7.2:200 --trickle 60 --wait 8)
wait "$SAMPLER"
wait "${FLOOD_PIDS[@]}"
sleep 2
FD1=$(fds)
OUT=$(rcodes main; echo "completed $(completed_queries main)")
echo "$OUT"
N=$(completed_queries main)
check "saturation: dnsperf completed queries" [ "$N" -gt 1000 ]
check "saturation: only NOERROR and NXDOMAIN replies" \
    eval "! rcodes main | grep -vE '^(NOERROR|NXDOMAIN) '"
check "saturation: NXDOMAIN for the missing names" eval "rcodes main | grep -qE '^NXDOMAIN [1-9]'"
RSS=$(awk 'NR == 1 { f = $2 } $2 > m { m = $2 } END { printf "first %d kB, max %d kB, %.2f %%", f, m, (m - f) * 100 / f }' "$TMP/samples")
OUT="RSS over $(wc -l < "$TMP/samples") samples: $RSS; fds at rest $FD0 before, $FD1 after"
echo "$OUT"
echo "RSS (kB) every 2 s: $(awk 'NR % 4 == 1 { printf "%d ", $2 }' "$TMP/samples")"
echo "idle TCP flood: $(tr '\n' ' ' <<<"$IDLE")"
if ldd "$TOPODNS" 2>/dev/null | grep -q libasan; then
    # AddressSanitizer keeps freed memory in its quarantine (up to 256 MB):
    # RSS grows under any load, so it says nothing about topodns here
    echo "RSS not judged: an AddressSanitizer build"
else
    check "saturation: RSS flat within 5 % after warm-up" \
        awk 'NR == 1 { f = $2 } $2 > m { m = $2 } END { exit !(NR >= 10 && m <= f * 1.05) }' "$TMP/samples"
fi
check "saturation: no file descriptor growth" [ "$FD1" -le "$FD0" ]
OUT=$IDLE
check "saturation: 400 idle TCP connections all closed by their deadline" \
    eval 'grep -q "^survivors 0$" <<<"$IDLE" &&
          awk "/^lifetime_max/ { exit !(\$2 >= 2.5 && \$2 <= 6) }" <<<"$IDLE"'
q www.example.org A +short
check "saturation: still answering" [ "$OUT" = 192.0.2.10 ]

# ---- 2. reloads under load ------------------------------------------------------------
corefile '{N}' > "$TMP/template"
flood 600 reload
"$PY" "$ABUSE" reload "$PID" "$CONF" "$LOG" "$PORT" "$TMP/template" "$RELOADS" > "$TMP/reload.out" 2>&1
rc=$?
kill "${FLOOD_PIDS[@]}" 2>/dev/null
wait "${FLOOD_PIDS[@]}" 2>/dev/null
OUT=$(cat "$TMP/reload.out")
echo "$OUT"
check "reloads: every one completed, no wrong answer" [ "$rc" -eq 0 ]
check "reloads: the checking clients were answered" \
    awk '/^queries/ { q = $2 } /^no_reply/ { n = $2 } END { exit !(q > 100 && n * 100 <= q) }' <<<"$OUT"
check "topodns still running" kill -0 "$PID"
q gen.test A +short
check "after the reloads: the last Corefile serves" [ "$OUT" = "10.77.0.$RELOADS" ]
finish
