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

# A free TCP+UDP port on 127.0.0.1.
free_port() {
    /usr/bin/python3 - <<'PY'
import socket
while True:
    t = socket.socket(); t.bind(("127.0.0.1", 0)); p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p)); print(p); break
    except OSError:
        pass
    finally:
        u.close(); t.close()
PY
}

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
        echo "$OUT" | sed 's/^/    | /'
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

finish() {
    echo "$(basename "$0"): $PASS passed, $FAIL failed"
    [ "$FAIL" -eq 0 ]
}
