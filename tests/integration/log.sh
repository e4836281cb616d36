#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# log.sh — the log plugin in the real binary, queried with dig: the default
# (Common Log) line for a positive answer over UDP and TCP, with and without
# EDNS/DO, the lower-cased name, a REFUSED reply returned by the chain (file
# refuses AXFR) still logged, nothing logged for a query outside every zone,
# several log rules per block with their own names, formats and classes
# (first matching rule wins), and setup errors.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

cat > "$TMP/net.zone" <<'EOF'
$ORIGIN net.
@    3600 IN SOA ns.net. host.net. 1 7200 3600 1209600 300
@    3600 IN NS  ns.net.
ns   3600 IN A   192.0.2.1
a    3600 IN A   192.0.2.2
b    3600 IN A   192.0.2.3
c    3600 IN A   192.0.2.4
d    3600 IN A   192.0.2.5
EOF

start_topodns "example.org:{\$PORT} {
    log
    file $top_srcdir/zones/example.org.zone example.org
}
net:{\$PORT} {
    log a.net {
        class denial
    }
    log b.net c.net \"{name} {rcode} {proto} {>rflags}\" {
        class error success
    }
    file $TMP/net.zone net
}" || exit 1

# logged LINE-REGEX: wait (1 s) for a line of the server's output to match.
logged() {
    local i
    for i in $(seq 1 20); do
        grep -qE "$1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}
not_logged() { sleep 0.3; ! grep -qE "$1" "$LOG"; }
qid() { grep -o 'id: [0-9]*' <<<"$OUT" | head -1 | cut -d' ' -f2; }
DUR='[0-9]+(\.[0-9]+)?s'

# --- the default format -------------------------------------------------------
q www.example.org A +noedns
ID=$(qid)
check "default line, no EDNS" logged "^\[INFO\] 127\.0\.0\.1:[0-9]+ - $ID \"A IN www\.example\.org\. udp 33 false 512\" NOERROR qr,aa,rd 144 $DUR\$"

q WWW.Example.ORG AAAA +dnssec +bufsize=1400 +nocookie
ID=$(qid)
check "EDNS: DO and buffer size, name lower-cased" logged "^\[INFO\] 127\.0\.0\.1:[0-9]+ - $ID \"AAAA IN www\.example\.org\. udp 44 true 1400\" NOERROR qr,aa,rd [0-9]+ $DUR\$"

q www.example.org TXT +tcp +noedns
ID=$(qid)
check "TCP: proto and 65535" logged "^\[INFO\] 127\.0\.0\.1:[0-9]+ - $ID \"TXT IN www\.example\.org\. tcp 33 false 65535\" NOERROR qr,aa,rd [0-9]+ $DUR\$"

q nope.example.org A +noedns
ID=$(qid)
check "NXDOMAIN logged with its size" logged "^\[INFO\] 127\.0\.0\.1:[0-9]+ - $ID \"A IN nope\.example\.org\. udp 34 false 512\" NXDOMAIN qr,aa,rd [0-9]+ $DUR\$"

# --- errors returned by the chain are logged; queries outside every zone not ----
q example.org AXFR +noedns      # dig sends AXFR without RD
check "REFUSED by the chain (AXFR) logged" logged "^\[INFO\] 127\.0\.0\.1:[0-9]+ - [0-9]+ \"AXFR IN example\.org\. tcp 29 false 65535\" REFUSED qr 29 $DUR\$"

q www.example.com A +noedns
ID=$(qid)
check "outside every zone: REFUSED" rcode_is REFUSED
check "outside every zone: not logged" not_logged " - $ID \"A IN www\.example\.com\."

# --- several rules: names, formats, classes -------------------------------------
q x.a.net A
check "a.net denial: NXDOMAIN logged" logged "\"A IN x\.a\.net\. udp [0-9]+ false [0-9]+\" NXDOMAIN qr,aa,rd"
q a.net TXT
check "a.net denial: NODATA logged" logged "\"TXT IN a\.net\. udp [0-9]+ false [0-9]+\" NOERROR qr,aa,rd"
q a.net A
check "a.net denial: success not logged" not_logged "\"A IN a\.net\. "
q b.net A
check "b.net custom format, success" logged '^\[INFO\] b\.net\. NOERROR udp qr,aa,rd$'
q c.net A +tcp
check "c.net shares the format" logged '^\[INFO\] c\.net\. NOERROR tcp qr,aa,rd$'
q nx.c.net A
check "c.net: denial not in its classes" not_logged '^\[INFO\] nx\.c\.net\.'
q d.net A
check "d.net: no rule matches" not_logged 'd\.net\.'
check "no other log line for net" not_logged '"A IN (b|c|d)\.net\.'

stop_topodns

# --- setup errors ----------------------------------------------------------------
bad() {
    printf '%s\n' "$1" > "$TMP/bad.conf"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad.conf" 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "bad class" bad ". {
    log {
        class nope
    }
}" "bad.conf:3: plugin/log: invalid Class: nope"
check "unknown property" bad ". {
    log . {
        format x
    }
}" "bad.conf:3: plugin/log: unknown property 'format'"

finish
