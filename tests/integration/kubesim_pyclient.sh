#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kubesim_pyclient.sh — tests/kubesim/kubesim against the official Kubernetes
# Python client (Debian's python3-kubernetes), so that kubesim serves more
# than kubectl: the checks are in kubesim_pyclient.py (version and discovery
# with trailing slashes, paginated lists, selectors, create/replace, strategic
# merge, JSON merge and JSON patch, status subresources, delete options and
# delete-collection, kubernetes.watch.Watch, boolean query parameters,
# events.k8s.io/v1). Each of its "PASS"/"FAIL" lines counts as one check.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

KUBESIM=${KUBESIM:-$top_builddir/tests/kubesim/kubesim}
PY=/usr/bin/python3
[ -x "$PY" ] || skip "$PY not installed"
"$PY" -c 'import kubernetes.client, kubernetes.watch' 2>/dev/null ||
    skip "python3-kubernetes not installed (the official Kubernetes Python client)"

out=$TMP/kubesim.out
"$KUBESIM" > "$out" 2> "$out.err" &
PIDS+=("$!")
for _ in $(seq 1 100); do
    [ -s "$out" ] && break
    sleep 0.1
done
KS_ADDR=$(head -1 "$out" | sed -n 's/^listening on //p')
[ -n "$KS_ADDR" ] || { echo "kubesim did not start:"; cat "$out.err"; exit 1; }

# no kubeconfig, no proxy: only the address given
env -u KUBECONFIG -u http_proxy -u HTTP_PROXY -u https_proxy -u HTTPS_PROXY HOME="$TMP" \
    "$PY" "$top_srcdir/tests/integration/kubesim_pyclient.py" "http://$KS_ADDR" \
    > "$TMP/py.out" 2>&1
rc=$?
cat "$TMP/py.out"
PASS=$(grep -c '^PASS ' "$TMP/py.out")
FAIL=$(grep -c '^FAIL ' "$TMP/py.out")
if [ "$rc" -ne 0 ] && [ "$FAIL" -eq 0 ]; then
    echo "FAIL: kubesim_pyclient.py exited $rc without a failed check (it broke)"
    FAIL=1
fi
[ "$PASS" -gt 0 ] || { echo "FAIL: no check ran"; FAIL=$((FAIL + 1)); }
kill -0 "${PIDS[0]}" 2>/dev/null || { echo "FAIL: kubesim died"; cat "$out.err"; FAIL=$((FAIL + 1)); }
finish
