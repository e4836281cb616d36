#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bind.sh — the bind plugin restricts listen addresses; `except` removes one;
# bad arguments stop startup with file:line.
. "$top_srcdir/tests/integration/lib.sh"

PORT=$(free_port)
printf '.:%s {\n    bind 127.0.0.2 127.0.0.3 {\n        except 127.0.0.3\n    }\n    whoami\n}\n' "$PORT" > "$TMP/Corefile"
"$TOPODNS" -conf "$TMP/Corefile" > "$TMP/log" 2>&1 &
TOPO_PID=$!
PIDS+=("$TOPO_PID")
for _ in $(seq 50); do
    dig @127.0.0.2 -p "$PORT" +short +time=1 +tries=1 x A >/dev/null 2>&1 && break
    sleep 0.1
done
OUT=$(dig @127.0.0.2 -p "$PORT" +time=1 +tries=1 x A 2>&1)
check "answers on the bound address" rcode_is NOERROR
OUT=$(dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 x A 2>&1)
check "silent on an address not bound" grep -q 'timed out\|no servers could be reached\|connection refused' <<<"$OUT"
OUT=$(dig @127.0.0.3 -p "$PORT" +time=1 +tries=1 x A 2>&1)
check "silent on the excepted address" grep -q 'timed out\|no servers could be reached\|connection refused' <<<"$OUT"
stop_topodns

printf '.:%s {\n    bind not-an-interface\n    whoami\n}\n' "$PORT" > "$TMP/Corefile.bad"
OUT=$("$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1); rc=$?
check "bad bind address stops startup" [ $rc -ne 0 ]
check "error names file:line and token" grep -q "Corefile.bad:2: .*near 'not-an-interface'" <<<"$OUT"

finish
