# SPDX-License-Identifier: Apache-2.0
# tests/integration/lib.sh — shared helpers for integration tests.
#
# Source it from a test script (`. "$top_srcdir/tests/integration/lib.sh"`).
# It starts the real src/topodns on 127.0.0.1 with a Corefile, queries it
# with dig, and counts checks. Every script ends with `finish`, which prints
# "N passed, M failed" and exits non-zero on any failure.
#
#   start_topodns 'Corefile text'    # {$PORT} in the text is the DNS port
#   q [dig args...]                  # dig @127.0.0.1 -p $PORT, output in $OUT
#   check "what" test-expression...  # counts a pass or a failure
#   rcode_is NOERROR / aa_set / tc_set / answer_has 'regex' / answer_count N
#   skip "reason"                    # cannot run here: "SKIP: reason", exit 77
#   t0=$(now); elapsed_since "$t0"   # timing that holds on a loaded machine
#   wait_until SECONDS cmd...        # poll cmd until it succeeds (wall clock)
#   ttl_aged GOT ORIG SLEPT T0       # a cached TTL counted down by the time
#                                    #   measured since T0, not by a fixed window
#
# Servers listen on 127.0.0.1 only; ports are picked free per test.

set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
TOPODNS=${TOPODNS:-$top_builddir/src/topodns}
# Blocks without `bind`, and HTTP addresses written as ":PORT", listen on this
# address instead of every interface: tests never listen beyond loopback.
export TOPODNS_DEFAULT_BIND=127.0.0.1
TMP=$(mktemp -d "${TMPDIR:-/tmp}/topodns-test.XXXXXX")
PASS=0
FAIL=0
PIDS=()

cleanup() {
    local p
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT

# A free TCP+UDP port on 127.0.0.1 for a server, outside the kernel's
# ephemeral range: scripts/free-port says why.
free_port() { /usr/bin/python3 "$top_srcdir/scripts/free-port"; }

# start_topodns COREFILE_TEXT [extra topodns args...]
# Sets PORT, CONF, LOG, TOPO_PID. Waits until the server answers.
start_topodns() {
    local text=$1; shift
    PORT=${PORT_FIXED:-$(free_port)}
    export PORT
    CONF=$TMP/Corefile.$PORT
    LOG=$TMP/topodns.$PORT.log
    printf '%s\n' "$text" > "$CONF"
    "$TOPODNS" -conf "$CONF" "$@" > "$LOG" 2>&1 &
    TOPO_PID=$!
    PIDS+=("$TOPO_PID")
    wait_dns "$PORT" || { echo "topodns did not start:"; cat "$LOG"; return 1; }
}

# wait_dns PORT: until something answers on 127.0.0.1:PORT (5 s, or
# WAIT_DNS_SECONDS: slower builds such as ThreadSanitizer's need longer).
wait_dns() {
    local i
    for i in $(seq 1 $(( ${WAIT_DNS_SECONDS:-5} * 10 ))); do
        if dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short . SOA >/dev/null 2>&1; then
            return 0
        fi
        kill -0 "${TOPO_PID:-0}" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

stop_topodns() {
    kill "$TOPO_PID" 2>/dev/null
    wait "$TOPO_PID" 2>/dev/null
}

# q [dig args...]: query the running server; full dig output in OUT.
q() {
    OUT=$(dig @127.0.0.1 -p "$PORT" +time=2 +tries=1 "$@" 2>&1)
}

check() {
    local what=$1; shift
    if "$@"; then
        PASS=$((PASS + 1))
    else
        FAIL=$((FAIL + 1))
        echo "FAIL: $what"
        echo "${OUT:-}" | sed 's/^/    | /'
        # a datagram without QR: no reply of topodns has one (request.c
        # asserts it); dig read a query, most likely its own (free_port)
        ! grep -q "query response not set" <<<"${OUT:-}" ||
            echo "    note: dig got a datagram without QR; if it is the query itself, dig's source port was the server's (see free_port)"
    fi
}

rcode_is() { grep -q "status: $1," <<<"$OUT"; }
flags_line() { grep -o 'flags: [a-z ]*;' <<<"$OUT" | head -1; }
flag_set() { flags_line | grep -qw "$1"; }
aa_set() { flag_set aa; }
tc_set() { flag_set tc; }
# Records of one section as dig prints them (no comments, no blank lines).
section() {
    awk -v s="$1" '
        /^;; [A-Z]+ SECTION:/ { cur = $2; next }
        /^;;/ || /^$/ { if ($0 ~ /^$/) cur = ""; next }
        cur == s { print }' <<<"$OUT"
}
answer_has() { section ANSWER | grep -qE "$1"; }
authority_has() { section AUTHORITY | grep -qE "$1"; }
additional_has() { section ADDITIONAL | grep -qE "$1"; }
answer_count() { [ "$(section ANSWER | grep -c .)" -eq "$1" ]; }
authority_count() { [ "$(section AUTHORITY | grep -c .)" -eq "$1" ]; }
opt_present() { grep -q 'OPT PSEUDOSECTION' <<<"$OUT"; }

# skip REASON: the test cannot run on this machine (a tool is missing). Prints
# one line "SKIP: REASON", which scripts/test shows, and exits 77 (automake's
# SKIP). Under CI=true scripts/test fails on a skip unless the test is listed
# in tests/skip-allowed.
skip() {
    echo "SKIP: $*"
    exit 77
}

# ---- timing on a loaded machine -------------------------------------------------
# Tests run side by side (make check -j, CI's shared cores, sanitizer
# builds), so every step can take much longer than on an idle machine. A
# test never assumes how long a step took: it measures it and asserts
# what must hold for the time that really passed (a cached TTL at least
# ORIG minus the seconds elapsed), and waits for events by polling with a
# deadline rather than sleeping a fixed time.

# now: a timestamp in seconds with microseconds (for elapsed_since).
now() { echo "$EPOCHREALTIME"; }

# elapsed_since T0: whole seconds since T0, rounded up.
elapsed_since() {
    awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { d = b - a; n = int(d); if (n < d) n++; print n }'
}

# elapsed_below T0 SECONDS: less than SECONDS (a decimal) have passed since T0.
elapsed_below() {
    awk -v a="$1" -v b="$EPOCHREALTIME" -v s="$2" 'BEGIN { exit !(b - a < s) }'
}

# wait_until SECONDS CMD...: run CMD every 0.1 s until it succeeds (0) or
# SECONDS of wall clock have passed (1). The deadline is real time, not a
# count of tries, so a slow CMD does not stretch it.
wait_until() {
    local t0=$EPOCHREALTIME limit=$1; shift
    while :; do
        "$@" && return 0
        elapsed_below "$t0" "$limit" || return 1
        sleep 0.1
    done
}

# ttl_aged GOT ORIG SLEPT T0: GOT is a TTL that started at ORIG when the
# answer was stored, some time after T0, and was read at least SLEPT whole
# seconds later: ORIG - SLEPT >= GOT >= ORIG - (seconds since T0) - 1 (the
# cache truncates to whole seconds). On an idle machine that is the narrow
# window a fixed check would use; a loaded one only widens the lower bound.
ttl_aged() {
    local got=$1 orig=$2 slept=$3 el
    el=$(elapsed_since "$4")
    [[ $got =~ ^[0-9]+$ ]] || { echo "    TTL '$got' is not a number"; return 1; }
    [ "$got" -le $((orig - slept)) ] && [ "$got" -ge $((orig - el - 1)) ] && return 0
    echo "    TTL $got: want $((orig - el - 1))..$((orig - slept)) ($orig stored, slept $slept s, $el s elapsed)"
    return 1
}

finish() {
    echo "$(basename "$0"): $PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}
