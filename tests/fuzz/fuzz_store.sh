#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# fuzz_store.sh — replay mode of tests/fuzz/fuzz_store.c: every object of the
# topology fixture, then every member of each damaged in turn (removed, or
# replaced by a value of another type), into the store; the store must
# accept the good objects, survive the damaged ones and keep serving. Then
# the regression inputs of tests/fuzz/regress_store/, if any.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$top_srcdir/tests/data/topology/cluster.yaml" > "$tmp/objects.jsonl" <<'PY'
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d: print(json.dumps(d))
PY
# the damaged objects are logged as skipped (or a field of them as dropped or
# ignored), thousands of lines: count them
"$top_builddir/tests/fuzz/fuzz_store" "$tmp/objects.jsonl" > "$tmp/out" 2>&1
rc=$?
echo "$(grep -c 'skipping' "$tmp/out") damaged objects were logged and skipped," \
    "$(grep -cE 'dropping|ignoring' "$tmp/out") damaged fields dropped"
grep -vE 'skipping|dropping|ignoring' "$tmp/out" | tail -30
# the regression inputs found by libFuzzer, if any
reg=("$top_srcdir"/tests/fuzz/regress_store/*)
if [ $rc -eq 0 ] && [ -f "${reg[0]}" ]; then
    "$top_builddir/tests/fuzz/fuzz_store" --replay "${reg[@]}" 2>&1 | grep -vE 'skipping|dropping|ignoring'
    rc=${PIPESTATUS[0]}
fi
exit $rc
