#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bigsvc_cost.sh — an answer for a large headless Service costs what is sent,
# not the square of the Service: instructions counted (callgrind), no timing.
#
# tests/unit/bigsvc_cost runs the real kubernetes plugin (store filled
# directly, queries through the server as a client's UDP or TCP query) for
# a headless Service of SMALL (50) and of BIG (5,000) endpoints; callgrind
# counts the instructions of COUNT answers of each kind (A and SRV over UDP,
# truncated at 512 octets, and over TCP, up to 64 KB; PTR of one endpoint's
# address over UDP, one record at both sizes; A over UDP through autopath
# from a pod of the Service's namespace). For every kind the
# instructions per answer at BIG over those at SMALL must stay within
# FACTOR (4) times the ratio of the octets sent (at least 1): the records
# that are not sent cost nothing but the walk to stop, and dedupe,
# compression and truncation cost per record sent. A per-record search over
# the records already built (the old dedupe) makes the UDP ratio several
# hundred; a PTR that passes over every endpoint of the Service makes the
# PTR ratio about BIG / SMALL.
#
# autopath_udp is bounded the same way: its search-path sub-request
# carries the UDP client's size (req_new_sub, sub_max_size), so the
# kubernetes plugin stops building there as for a direct question. Built
# without it, the whole 64 KB answer the client's 512 octets truncate cost
# x40 at 5,000 / 50; walking the kept answer record by record once x1,000.
. "$(dirname "$0")/lib.sh"
BIN=$top_builddir/tests/unit/bigsvc_cost
[ -x "$BIN" ] || skip "tests/unit/bigsvc_cost not built (make check builds it)"
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
    skip "valgrind (callgrind) not installed"
# valgrind cannot run a sanitizer build (the ASan and TSan stages of the suite)
ldd "$BIN" 2>/dev/null | grep -q 'libasan\|libtsan' && skip "sanitizer build: callgrind needs a plain one"
SMALL=${SMALL:-50}
BIG=${BIG:-5000}
COUNT=${COUNT:-20}
FACTOR=${FACTOR:-4}

# measure N → $TMP/out.N (kind answers octets records) and $TMP/ir.N (kind Ir)
measure() {
    valgrind --tool=callgrind --toggle-collect='run_*' --callgrind-out-file="$TMP/cg.$1" \
        "$BIN" "$1" "$COUNT" > "$TMP/out.$1" 2> "$TMP/vg.$1" || { cat "$TMP/vg.$1"; return 1; }
    callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg.$1" 2>/dev/null |
        sed -n 's/^ *\([0-9,]*\) .*:run_\([a-z_]*\) .*/\2 \1/p' | tr -d , > "$TMP/ir.$1"
}
measure "$SMALL" || { check "bigsvc_cost $SMALL ran" false; finish; }
measure "$BIG" || { check "bigsvc_cost $BIG ran" false; finish; }

for kind in a_udp srv_udp a_tcp srv_tcp ptr_udp autopath_udp; do
    read -r _ n1 b1 r1 < <(grep "^$kind " "$TMP/out.$SMALL")
    read -r _ n2 b2 r2 < <(grep "^$kind " "$TMP/out.$BIG")
    i1=$(awk -v k="$kind" '$1 == k { print $2 }' "$TMP/ir.$SMALL")
    i2=$(awk -v k="$kind" '$1 == k { print $2 }' "$TMP/ir.$BIG")
    if [ -z "$i1" ] || [ -z "$i2" ] || [ -z "$b1" ] || [ -z "$b2" ]; then
        check "$kind: counted at $SMALL and $BIG" false
        continue
    fi
    verdict=$(awk -v i1="$i1" -v i2="$i2" -v n1="$n1" -v n2="$n2" -v b1="$b1" -v b2="$b2" \
                  -v f="$FACTOR" 'BEGIN {
        p1 = i1 / n1; p2 = i2 / n2; ir = p2 / p1; br = b2 / b1; if (br < 1) br = 1
        printf "%s %.0f %.0f %.2f %.2f", (ir <= f * br ? "ok" : "over"), p1, p2, ir, br }')
    read -r ok p1 p2 ir br <<< "$verdict"
    echo "$kind: $p1 instructions/answer at $SMALL endpoints ($b1 octets, $r1 records)," \
         "$p2 at $BIG ($b2 octets, $r2 records): x$ir for x$br octets"
    check "$kind: per-answer cost at $BIG / $SMALL endpoints (x$ir) <= $FACTOR x octets sent (x$br)" \
        [ "$ok" = ok ]
done
finish
