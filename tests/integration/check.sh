#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check.sh — `topodns -check`: the migration check of docs/operations.md.
# It sets every plugin up and serves nothing: kubeadm's Corefile passes
# with no API server and no in-cluster configuration, while its `.:53`
# and :8080/:8181/:9153 are left alone; unsupported and unknown directives
# are each reported with file:line and the exit status is not 0; a setup
# error is reported as a start would report it.
. "$top_srcdir/tests/integration/lib.sh"

unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT

t0=$(now)
OUT=$(timeout 20 "$TOPODNS" -check -conf "$top_srcdir/conf/Corefile.kubeadm" 2>&1); rc=$?
check "kubeadm's Corefile passes -check with no API server (exit 0)" \
    bash -c '[ $1 -eq 0 ] && grep -q "Corefile.kubeadm: OK$" <<<"$0"' "$OUT" $rc
check "-check returns at once (no watch, no wait for an API server)" elapsed_below "$t0" 10

# a port taken by another process: -check binds nothing, so it passes
PORT=$(free_port)
python3 -c 'import socket,sys,time
s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.bind(("127.0.0.1",int(sys.argv[1])))
time.sleep(30)' "$PORT" &
HOLD=$!
PIDS+=("$HOLD")
sleep 0.3
printf '.:%s {\n    whoami\n    prometheus 127.0.0.1:%s\n}\n' "$PORT" "$PORT" > "$TMP/busy"
OUT=$("$TOPODNS" -check -conf "$TMP/busy" 2>&1); rc=$?
check "-check binds no DNS or HTTP listener (a taken port passes)" [ $rc -eq 0 ]
kill "$HOLD" 2>/dev/null

cat > "$TMP/Corefile" <<'COREFILE'
.:53 {
    errors
    dnssec
    kubernetes cluster.local
    route53 example.org.:Z1
    nosuchplugin
    forward . 127.0.0.1
}
example.org {
    dnssec
}
COREFILE
OUT=$("$TOPODNS" -check -conf "$TMP/Corefile" 2>&1); rc=$?
check "unsupported plugins: exit status not 0" [ $rc -ne 0 ]
check "each unsupported directive is named with file:line, in line order" \
    bash -c 'diff <(printf "%s\n" "$1:3: plugin '"'"'dnssec'"'"' is not supported by topodns" \
        "$1:5: plugin '"'"'route53'"'"' is not supported by topodns" \
        "$1:6: plugin '"'"'nosuchplugin'"'"' is an unknown directive" \
        "$1:10: plugin '"'"'dnssec'"'"' is not supported by topodns") - <<<"$0"' "$OUT" "$TMP/Corefile"

printf '.:53 {\n    whoami\n    cache -1\n}\n' > "$TMP/bad"
OUT=$("$TOPODNS" -check -conf "$TMP/bad" 2>&1); rc=$?
check "a setup error: exit status not 0, with file:line" \
    bash -c '[ $1 -ne 0 ] && grep -q "bad:3: plugin/cache: " <<<"$0"' "$OUT" $rc

OUT=$("$TOPODNS" -check -conf "$TMP/missing" 2>&1); rc=$?
check "a missing Corefile fails -check" [ $rc -ne 0 ]

finish
