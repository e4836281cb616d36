#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# reload.sh — the reload plugin in the real binary: it logs the running
# configuration's SHA512 at start, notices an edited Corefile within its
# period (reload 2s: 1.5–2.5 s), the server reloads ("Reloading complete")
# and serves the new configuration; an edit that only touches a comment does
# not reload (the fingerprint is of the parsed tokens, as in CoreDNS); a
# broken Corefile is tried once (error logged, coredns_reload_failed_total
# counted, old answers kept) and not retried every period; a Corefile that
# does not parse logs "Corefile parse failed"; fixing it reloads again.
# coredns_reload_version_info carries the last fingerprint tried.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

zone() {
    cat > "$TMP/$1.zone" <<EOF
\$ORIGIN example.org.
@    3600 IN SOA ns.example.org. host.example.org. 1 7200 3600 1209600 300
@    3600 IN NS  ns
ns   3600 IN A   192.0.2.1
www  3600 IN A   $2
EOF
}
zone one 192.0.2.10
zone two 192.0.2.99
MPORT=$(free_port)

corefile() {   # corefile ZONE [EXTRA-LINE]
    printf '%s\n' "example.org:{\$PORT} {
    reload 2s
    prometheus 127.0.0.1:$MPORT
    ${2:-}
    file $TMP/$1.zone example.org
}"
}

start_topodns "$(corefile one)" || exit 1

count() { grep -cE "$1" "$LOG"; }
# wait_for REGEX N SECONDS: until REGEX has matched N lines of the log.
wait_for() {
    local i
    for i in $(seq 1 $(( $3 * 10 ))); do
        [ "$(count "$1")" -ge "$2" ] && return 0
        sleep 0.1
    done
    return 1
}
www_is() { q www.example.org A +short; [ "$OUT" = "$1" ]; }
metrics() { OUT=$(curl -s "http://127.0.0.1:$MPORT/metrics"); }
hash_n() { grep -oE 'Running configuration SHA512 = [0-9a-f]+' "$LOG" | sed -n "${1}p" | awk '{print $5}'; }

check "running hash logged at start" wait_for '^\[INFO\] plugin/reload: Running configuration SHA512 = [0-9a-f]{128}$' 1 2
check "first answer" www_is 192.0.2.10
H1=$(hash_n 1)
metrics
check "failed counter exposed at 0" grep -q '^coredns_reload_failed_total 0$' <<<"$OUT"

# --- a real edit reloads ------------------------------------------------------------
printf '%s\n' "$(corefile two)" > "$CONF"
check "edit: Reloading complete" wait_for '^\[INFO\] Reloading complete$' 1 6
check "edit: new answer" www_is 192.0.2.99
check "edit: new running hash logged" wait_for 'Running configuration SHA512' 2 2
H2=$(hash_n 2)
check "edit: hash changed" test -n "$H2" -a "$H1" != "$H2"
metrics
check "version_info carries the new hash" grep -q "^coredns_reload_version_info{hash=\"sha512\",value=\"$H2\"} 1$" <<<"$OUT"
check "version_info: one series" [ "$(grep -c '^coredns_reload_version_info{' <<<"$OUT")" -eq 1 ]

# --- comments only: no reload ------------------------------------------------------------
printf '%s   # only a comment\n' "$(corefile two)" > "$CONF"
sleep 4
check "comment edit: no reload" [ "$(count '^\[INFO\] Reloading$')" -eq 1 ]

# --- a broken Corefile: tried once, old config kept -------------------------------------------
printf '%s\n' "$(corefile one nosuchplugin)" > "$CONF"
check "broken: error logged" wait_for '^\[ERROR\] Restart failed: .*nosuchplugin' 1 6
check "broken: old answers kept" www_is 192.0.2.99
sleep 5
check "broken: not retried every period" [ "$(count '^\[ERROR\] Restart failed')" -eq 1 ]
metrics
check "broken: failed counter" grep -q '^coredns_reload_failed_total 1$' <<<"$OUT"
check "broken: still serving" www_is 192.0.2.99

# --- a Corefile that does not parse: warned each period, never tried ----------------------------
printf 'example.org:{$PORT} {\n    reload 2s\n    file %s/one.zone example.org {\n' "$TMP" > "$CONF"
check "unparsable: warning" wait_for '^\[WARNING\] plugin/reload: Corefile parse failed: ' 1 6
check "unparsable: no reload attempt" [ "$(count '^\[INFO\] Reloading$')" -eq 2 ]
check "unparsable: still serving" www_is 192.0.2.99

# --- fixed: reloads again ---------------------------------------------------------------------
printf '%s\n' "$(corefile one)" > "$CONF"
check "fixed: Reloading complete" wait_for '^\[INFO\] Reloading complete$' 2 6
check "fixed: answers from the fixed file" www_is 192.0.2.10
check "fixed: the first hash again" wait_for "Running configuration SHA512 = $H1\$" 2 2

stop_topodns

# --- setup errors ----------------------------------------------------------------------------
bad() {
    printf '%s\n' "$1" > "$TMP/bad.conf"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad.conf" 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "interval below 2s" bad ". {
    reload 1s
}" "bad.conf:2: plugin/reload: interval value must be greater or equal to 2s"
check "jitter below 1s" bad ". {
    reload 4s 100ms
}" "plugin/reload: jitter value must be 0 or greater or equal to 1s"
check "three arguments" bad ". {
    reload 4s 1s 1s
}" "Wrong argument count"

finish
