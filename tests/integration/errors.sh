#!/usr/bin/env bash
# errors.sh — the errors plugin in the real binary: a block whose chain has
# no answering plugin returns SERVFAIL with "plugin/log: no next plugin
# found" recorded, which errors logs as "[ERROR] plugin/errors: 2 <name>
# <type>: <error>"; consolidate folds matching errors into one summary per
# period (at its level), show_first logs the first one at once; blocks
# without errors log nothing; setup errors stop startup.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

start_topodns "example.org:{\$PORT} {
    errors
    log . \"{name} {rcode}\"
}
example.net:{\$PORT} {
    errors {
        consolidate 2s \"^plugin/log: no next plugin found\$\" warning
    }
    log . \"{name} {rcode}\"
}
example.com:{\$PORT} {
    errors stdout {
        stacktrace
        consolidate 2s \"no next\" info show_first
    }
    log . \"{name} {rcode}\"
}
example.info:{\$PORT} {
    log . \"{name} {rcode}\"
}" || exit 1

logged() {
    local i
    for i in $(seq 1 ${2:-20}); do
        grep -qE "$1" "$LOG" && return 0
        sleep 0.1
    done
    return 1
}
count_is() { [ "$(grep -cE "$1" "$LOG")" -eq "$2" ]; }

# --- plain errors ---------------------------------------------------------------
q Www.Example.ORG MX
check "no answering plugin: SERVFAIL" rcode_is SERVFAIL
check "log line first" logged '^\[INFO\] www\.example\.org\. SERVFAIL$'
check "error line" logged '^\[ERROR\] plugin/errors: 2 www\.example\.org\. MX: plugin/log: no next plugin found$'
check "error after the log line" bash -c "grep -A1 '^\[INFO\] www\.example\.org\. SERVFAIL' '$LOG' | tail -1 | grep -q '^\[ERROR\] plugin/errors: 2 www'"

q a.example.info A
check "no errors plugin: SERVFAIL" rcode_is SERVFAIL
check "no errors plugin: logged by log" logged '^\[INFO\] a\.example\.info\. SERVFAIL$'
check "no errors plugin: no error line" count_is 'a\.example\.info\. A:' 0

# --- consolidate ----------------------------------------------------------------
for i in 1 2 3; do q n$i.example.net A; done
check "consolidated: SERVFAIL still" rcode_is SERVFAIL
check "consolidated: errors not logged one by one" count_is 'example\.net\. A:' 0
check "consolidated summary after the period" logged "^\[WARNING\] plugin/errors: 3 errors like '\^plugin/log: no next plugin found\\\$' occurred in last 2s\$" 40

# --- show_first --------------------------------------------------------------------
q c1.example.com A
q c2.example.com AAAA
check "show_first: first error logged at the pattern's level" logged '^\[INFO\] plugin/errors: 2 c1\.example\.com\. A: plugin/log: no next plugin found$'
check "show_first: second one folded" count_is 'c2\.example\.com\. AAAA:' 0
check "show_first: summary counts both" logged "^\[INFO\] plugin/errors: 2 errors like 'no next' occurred in last 2s\$" 40
q c3.example.com A
sleep 2.5
check "show_first: a lone error in a period has no summary" count_is "errors like 'no next'" 1
check "show_first: new period logs its first error" count_is 'c3\.example\.com\. A:' 1

stop_topodns

# --- setup errors -------------------------------------------------------------------
bad() {
    printf '%s\n' "$1" > "$TMP/bad.conf"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad.conf" 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "errors twice in a block" bad ". {
    errors
    errors
}" "plugin/errors: this plugin can only be used once per Server Block"
check "consolidate needs a unit" bad ". {
    errors {
        consolidate 30 foo
    }
}" 'bad.conf:3: plugin/errors: time: missing unit in duration "30"'
check "unknown field" bad ". {
    errors {
        verbose
    }
}" "bad.conf:3: plugin/errors: Syntax error: Unexpected token 'verbose'"
check "bad regexp" bad ". {
    errors {
        consolidate 1m \"a(\"
    }
}" "bad.conf:3: plugin/errors: error parsing regexp"

finish
