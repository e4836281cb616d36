#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tests/valgrind.sh BUILD_DIR — the memory check of the suite (run by
# scripts/test on the default build): every unit test, the replays of the
# fuzz harnesses (seed and regression inputs), then topodns itself
# serving a kubesim cluster with kubernetes, topology, forward, file and
# prometheus, under valgrind memcheck. Any invalid access, use of
# uninitialised memory or definite/indirect leak fails. Prints one line per
# check ("   PASS: NAME", "   FAIL: NAME (rc N)", "   SKIP: NAME: REASON"),
# then "valgrind: N passed, M failed, K skipped" (scripts/test adds these up).
# Exits 1 on a failure, else 77 when something was skipped, else 0.
build=${1:?usage: tests/valgrind.sh BUILD_DIR}
build=$(cd "$build" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v valgrind >/dev/null; then
    echo "   SKIP: tests/valgrind.sh: valgrind not installed"
    echo "valgrind: 0 passed, 0 failed, 1 skipped"
    exit 77
fi
VG=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect
    --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --track-fds=no
    --suppressions="$top/tests/valgrind.supp")
pass=0 fail=0 skipped=0
result() {  # result NAME RC LOG
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "   PASS: $1"
    else fail=$((fail + 1)); echo "   FAIL: $1 (rc $2)"; tail -40 "$3" | sed 's/^/    | /'; fi
}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT

nunit=0
for t in "$build"/tests/unit/test_*; do
    [ -x "$t" ] || continue
    nunit=$((nunit + 1))
    "${VG[@]}" "$t" > "$tmp/$(basename "$t").log" 2>&1
    result "$(basename "$t")" $? "$tmp/$(basename "$t").log"
done
if [ $nunit -eq 0 ]; then
    skipped=$((skipped + 1))
    echo "   SKIP: tests/valgrind.sh:unit: no unit test built in $build/tests/unit (make check builds them)"
fi

# the fuzz harnesses' replays: every seed and regression input once
# (tests/fuzz/replay.c; fuzz_store's damage sweep is left to the ASan build)
for t in "$build"/tests/fuzz/fuzz_*; do
    [ -x "$t" ] && [ "$(basename "$t")" != fuzz_store ] || continue
    top_srcdir=$top "${VG[@]}" "$t" > "$tmp/$(basename "$t").log" 2>&1
    result "$(basename "$t")" $? "$tmp/$(basename "$t").log"
done

# the server: a zone upstream for forward, kubesim, and topodns under valgrind
# (outside the ephemeral range, so that no dig can get a server's port as
# its source port: scripts/free-port)
free_port() { /usr/bin/python3 "$top/scripts/free-port"; }
UP=$(free_port); DNS=$(free_port); MP=$(free_port); EX=$(free_port)
"$build/tests/kubesim/kubesim" --listen 127.0.0.1:0 --load "$top/tests/data/topology/cluster.yaml" \
    > "$tmp/ks.out" 2>&1 &
"$build/src/topodns" -conf /dev/stdin > "$tmp/up.log" 2>&1 <<EOF2 &
example.org:$UP {
    bind 127.0.0.1
    file $top/zones/example.org.zone
}
EOF2
uppid=$!
# the upstream must answer before the server under valgrind forwards to it
# (on a cold machine its first query could otherwise meet "connection
# refused"): dig's exit status and an address in the answer, never its text
up_ok=0
for _ in $(seq 100); do
    kill -0 $uppid 2>/dev/null || break
    if dig @127.0.0.1 -p "$UP" -b 127.0.0.1 +short +time=1 +tries=1 www.example.org A \
            > "$tmp/up.dig" 2>&1 && grep -qx '192.0.2.10' "$tmp/up.dig"; then
        up_ok=1
        break
    fi
    sleep 0.1
done
for _ in $(seq 50); do grep -q '^listening on' "$tmp/ks.out" && break; sleep 0.1; done
KS=http://$(sed -n 's/^listening on //p' "$tmp/ks.out" | head -1)
cat > "$tmp/Corefile" <<EOF2
.:$DNS {
    bind 127.0.0.1
    kubernetes cluster.local {
        endpoint $KS
    }
    topology {
        explain 127.0.0.1:$EX
        events
    }
    forward . 127.0.0.1:$UP
    prometheus 127.0.0.1:$MP
    errors
    log
}
EOF2
"${VG[@]}" "$build/src/topodns" -conf "$tmp/Corefile" > "$tmp/topodns.log" 2>&1 &
vgpid=$!
ok=0
for _ in $(seq 100); do
    # dig prints "communications error" on stdout while nothing listens:
    # only an address counts as an answer
    dig @127.0.0.1 -p "$DNS" -b 127.0.1.1 +short +time=1 +tries=1 hinted.prod.svc.cluster.local A \
        | grep -qE '^[0-9]+(\.[0-9]+){3}$' && { ok=1; break; }
    sleep 0.2
done
for c in 127.0.1.1 127.0.2.1 127.0.9.9; do
    for n in hinted auto prefer keys psn plain; do
        dig @127.0.0.1 -p "$DNS" -b $c +time=2 +tries=1 $n.prod.svc.cluster.local A > /dev/null
        dig @127.0.0.1 -p "$DNS" -b $c +tcp +time=2 +tries=1 _http._tcp.$n.prod.svc.cluster.local SRV > /dev/null
    done
done
dig @127.0.0.1 -p "$DNS" +time=3 +tries=1 www.example.org A > "$tmp/fwd.out"
grep -q 192.0.2.10 "$tmp/fwd.out" || ok=0
curl -s "http://127.0.0.1:$EX/explain?name=hinted.prod.svc.cluster.local&type=A&client=127.0.1.1" > /dev/null
curl -s "http://127.0.0.1:$MP/metrics" > /dev/null
sleep 1
kill -TERM $vgpid
wait $vgpid
rc=$?
[ $ok -eq 1 ] || { echo "   (the server under valgrind did not answer as expected)"; rc=1; }
[ $up_ok -eq 1 ] || { echo "   (the upstream topodns on 127.0.0.1:$UP never answered)"; rc=1; }
result "topodns serving kubernetes+topology+forward" $rc "$tmp/topodns.log"
if [ $rc -ne 0 ]; then
    echo "    upstream (file zone server for forward) log:"
    tail -40 "$tmp/up.log" | sed 's/^/    | /'
fi

echo "valgrind: $pass passed, $fail failed, $skipped skipped"
[ $fail -eq 0 ] || exit 1
[ $skipped -eq 0 ] || exit 77
exit 0
