#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# image_find.sh — scripts/image finds the build the README's commands made
# without --build: the current directory when it holds src/topodns, else the
# newest of build/default (./scripts/test, ./scripts/demo), the source tree
# (./configure && make) and build/; none: a clear error. Checked with
# --print-build on a copy of the script in a scratch tree (no podman needed).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
T=$TMP/tree
mkdir -p "$T/scripts" "$T/elsewhere"
cp "$top_srcdir/scripts/image" "$T/scripts/image"
prog() { mkdir -p "$1/src" && printf '#!/bin/sh\n' > "$1/src/topodns" && chmod +x "$1/src/topodns" && touch -d "$2" "$1/src/topodns"; }
run() { OUT=$(cd "$1" && "$T/scripts/image" --print-build 2>&1); RC=$?; }

run "$T/elsewhere"
check "no build: exit 1" [ "$RC" -eq 1 ]
check "no build: the places looked at are named" grep -q "no build found: none of $T/build/default, $T, $T/build holds src/topodns" <<<"$OUT"
prog "$T/build/default" "2026-01-01 10:00"
run "$T/elsewhere"
check "./scripts/test's build/default is found" test "$OUT" = "$T/build/default"
prog "$T" "2026-01-01 11:00"
run "$T/elsewhere"
check "a newer in-tree build (./configure && make) wins" test "$OUT" = "$T"
touch -d "2026-01-01 12:00" "$T/build/default/src/topodns"
run "$T/elsewhere"
check "…until build/default is newer again" test "$OUT" = "$T/build/default"
prog "$T/elsewhere" "2020-01-01 00:00"
run "$T/elsewhere"
check "the current directory holding src/topodns comes first" test "$OUT" = "$T/elsewhere"
OUT=$("$T/scripts/image" --build "$T/nowhere" --print-build 2>&1); RC=$?
check "--build without a program: exit 1, named" eval '[ "$RC" -eq 1 ] && grep -q "nowhere/src/topodns: no such program" <<<"$OUT"'
# the real tree after ./scripts/test: build/default
TOP=$(cd "$top_srcdir" && pwd)
if [ -x "$TOP/build/default/src/topodns" ] && [ ! -x "$TOP/src/topodns" ]; then
    OUT=$(cd "$TMP" && "$TOP/scripts/image" --print-build 2>&1)
    check "this tree: build/default" test "$OUT" = "$TOP/build/default"
fi
finish
