#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# errors.sh — the errors plugin in the real binary: a block whose chain has
# no answering plugin returns SERVFAIL with "plugin/log: no next plugin
# found" recorded, which errors logs as "[ERROR] plugin/errors: 2 <name>
# <type>: <error>"; consolidate folds matching errors into one summary per
# period (at its level), show_first logs the first one at once; blocks
# without errors log nothing; consolidate patterns are Go regexps (RE2:
# groups of every kind, \b, lazy repeats); setup errors stop startup.
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
}
example.edu:{\$PORT} {
    errors {
        consolidate 2s \"^plugin/(?:log|forward): no (?P<what>next|more)\\b.*?found\$\" warning
    }
    log . \"{name} {rcode}\"
}" || exit 1

# logged REGEX: a line matching REGEX appears in the log (waited for up to
# 10 s of wall clock: a loaded machine delays the timer and the writes)
logged() { wait_until 10 grep -qE "$1" "$LOG"; }
count_is() { [ "$(grep -cE "$1" "$LOG")" -eq "$2" ]; }
# summed REGEX: the sum of N over the lines "... plugin/errors: N errors like REGEX"
summed() {
    grep -E "plugin/errors: [0-9]+ errors like $1" "$LOG" |
        awk '{ for (i = 1; i < NF; i++) if ($i == "plugin/errors:") s += $(i + 1) } END { print s + 0 }'
}
sum_is() { [ "$(summed "$1")" -eq "$2" ]; }

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
# A period starts with its first error and lasts 2 s. The three errors fall
# into one period when the queries take less than that, which only a very
# loaded machine exceeds: then the summaries of the periods add up to 3.
t0=$(now)
for i in 1 2 3; do q n$i.example.net A; done
one_period=0; elapsed_below "$t0" 1.8 && one_period=1
check "consolidated: SERVFAIL still" rcode_is SERVFAIL
check "consolidated: errors not logged one by one" count_is 'example\.net\. A:' 0
NET_RE="'\^plugin/log: no next plugin found\\\$' occurred in last 2s\$"
OUT=""
check "consolidated: the summaries count all 3 errors" wait_until 10 sum_is "$NET_RE" 3
sum_is "$NET_RE" 3 || grep 'errors like' "$LOG" | sed 's/^/    | /'
if [ $one_period = 1 ]; then
    check "consolidated summary after the period" logged "^\[WARNING\] plugin/errors: 3 errors like $NET_RE"
else
    echo "the three queries took more than one period: not judged as one summary"
fi

# --- a Go regexp (RE2): non-capturing and named groups, \b, a lazy repeat
q e1.example.edu A
check "Go regexp: the error is consolidated, not logged" count_is 'e1\.example\.edu\. A:' 0
check "Go regexp: its summary" wait_until 10 grep -qF "[WARNING] plugin/errors: 1 errors like '^plugin/(?:log|forward): no (?P<what>next|more)\\b.*?found\$' occurred in last 2s" "$LOG"

# --- show_first --------------------------------------------------------------------
# c1 and c2 in one period (the queries took less than its 2 s, judged by
# the time measured): c1 logged at once, c2 folded into the summary. On a
# machine slow enough to let the period end between them, c2 opens a
# period of its own and is logged at once instead (no summary then).
t0=$(now)
q c1.example.com A
q c2.example.com AAAA
one_period=0; elapsed_below "$t0" 1.8 && one_period=1
check "show_first: first error logged at the pattern's level" logged '^\[INFO\] plugin/errors: 2 c1\.example\.com\. A: plugin/log: no next plugin found$'
if [ $one_period = 1 ]; then
    check "show_first: second one folded" count_is 'c2\.example\.com\. AAAA:' 0
    check "show_first: summary counts both" logged "^\[INFO\] plugin/errors: 2 errors like 'no next' occurred in last 2s\$"
else
    echo "c1 and c2 took more than one period: either folded with a summary of 2, or c2 logged at once"
    both() { grep -qE "^\[INFO\] plugin/errors: 2 errors like 'no next'" "$LOG" ||
             grep -qE '^\[INFO\] plugin/errors: 2 c2\.example\.com\. AAAA:' "$LOG"; }
    check "show_first: c2 folded or first of its period" wait_until 10 both
    sleep 2.5    # any period c2 opened is over
fi
s0=$(grep -c "errors like 'no next'" "$LOG")
q c3.example.com A
sleep 2.5
check "show_first: a lone error in a period has no summary" count_is "errors like 'no next'" "$s0"
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
}" "bad.conf:3: plugin/errors: error parsing regexp: missing closing ): \`a(\`"
check "repeat count over Go's 1000" bad ". {
    errors {
        consolidate 1m \"x{1001}\"
    }
}" "bad.conf:3: plugin/errors: error parsing regexp: invalid repeat count: \`{1001}\`"

finish
