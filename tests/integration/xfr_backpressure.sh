#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# xfr_backpressure.sh — a zone transfer goes at the pace the client reads:
# the transfer plugin queues its next message only when the connection's
# output is down to 64 KiB (req_when_writable, src/server/request.h), so a
# client that does not read holds about that much of the server's memory,
# not the zone.
#
# A file zone of about 24 MB on the wire (24,000 TXT records of ~1 KB) is
# served with `transfer` by one worker (-workers 1), on three listeners:
# plain TCP (`timeouts write 30s`), TLS (the same), and plain TCP with
# `timeouts write 2s` (XFR_RECORDS sets the zone's size: 24,000 records).
# tests/integration/xfr_reader.py is the client
# (8 KiB receive buffer: the kernel holds little of the transfer for it).
# Checks:
#   - a client that sends AXFR and reads nothing for 4 s: the server's
#     resident memory grows by less than 8 MiB meanwhile (queued whole, the
#     zone would take ~20 MB more; sampled every 0.1 s), UDP questions to
#     the same worker are all answered meanwhile, and once it reads, the
#     client gets the whole transfer: every record, SOA first and last,
#     in the order `dig AXFR` gets them; the same over TLS;
#   - a client that stops reading on the `write 2s` listener is
#     disconnected (it gets part of the zone, then the end of the
#     connection), and the server goes on serving;
#   - 20 clients that leave after the first message (half of them with a
#     reset): the server goes on serving and transferring;
#   - a reload while a client's transfer waits for it to read ends that
#     transfer (the old workers close their connections), and the new
#     configuration transfers the zone;
#   - stopped while a client's transfer waits for it to read, the server
#     exits with status 0 (under ASan: nothing leaked, no transfer left
#     open).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
command -v dig >/dev/null || skip "dig not installed"
command -v openssl >/dev/null || skip "openssl not installed"
[ -r /proc/self/status ] || skip "no /proc to read the server's memory from"
READER=$top_srcdir/tests/integration/xfr_reader.py
N=${XFR_RECORDS:-24000}
Z=$TMP/big.test.zone
awk -v n="$N" 'BEGIN {
    s = sprintf("%250s", ""); gsub(/ /, "x", s)
    print "$ORIGIN big.test.\n$TTL 300"
    print "@ IN SOA ns1 hostmaster 2024010101 7200 3600 1209600 300"
    print "@ IN NS ns1\nns1 IN A 192.0.2.53"
    for (i = 0; i < n; i++)
        printf "r%06d IN TXT \"%s\" \"%s\" \"%s\" \"%s%d\"\n", i, s, s, s, s, i
}' > "$Z"
TOTAL=$((N + 4))    # SOA, NS, A, the TXT records, SOA
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$TMP/srv.key" -out "$TMP/srv.pem" -subj /CN=dns.test >/dev/null 2>&1 ||
    { echo "openssl could not make a certificate"; exit 1; }
P2=$(free_port)
P3=$(free_port)
WAIT_DNS_SECONDS=${WAIT_DNS_SECONDS:-30} start_topodns "big.test:{\$PORT} {
    errors
    timeouts {
        write 30s
    }
    transfer {
        to *
    }
    file $Z
}
example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
}
big.test:$P2 {
    timeouts {
        write 2s
    }
    transfer {
        to *
    }
    file $Z
}
tls://big.test:$P3 {
    tls $TMP/srv.pem $TMP/srv.key
    timeouts {
        write 30s
    }
    transfer {
        to *
    }
    file $Z
}" -workers 1 || exit 1
asan=0
ldd "$TOPODNS" 2>/dev/null | grep -q libasan && asan=1

dig @127.0.0.1 -p "$PORT" +time=20 +tries=1 +noall +answer big.test AXFR |
    awk '{ print $1, $4 }' > "$TMP/dig.rr"
check "dig gets the whole zone ($TOTAL records)" [ "$(wc -l < "$TMP/dig.rr")" -eq "$TOTAL" ]

get() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<" $2"; }
stalled() {     # stalled WHAT PORT TLS
    local line g
    line=$(/usr/bin/python3 "$READER" stall "$2" big.test "$TOPO_PID" "$PORT" www.example.org 4 \
           "$3" "$TMP/$1.rr")
    echo "$1: $line"
    g=$(( $(get rss_max_kb "$line") - $(get rss0_kb "$line") ))
    if [ "$asan" = 1 ]; then
        echo "$1: RSS not judged: an AddressSanitizer build (${g} kB)"
    else
        check "$1: a client that reads nothing for 4 s costs under 8 MiB (${g} kB)" \
            [ "$g" -lt 8192 ]
    fi
    check "$1: UDP questions to the same worker answered meanwhile ($(get answered "$line") of $(get probes "$line"))" \
        eval "[ $(get probes "$line") -ge 5 ] && [ $(get answered "$line") = $(get probes "$line") ]"
    check "$1: then the whole transfer: $TOTAL records in $(get messages "$line") messages, SOA first and last" \
        eval "[ $(get records "$line") = $TOTAL ] && [ $(get messages "$line") -ge $((N / 100)) ] &&
              [ $(get soa_first "$line") = 1 ] && [ $(get soa_last "$line") = 1 ] &&
              [ $(get rcode_ok "$line") = 1 ]"
    check "$1: the records in dig's order" cmp -s "$TMP/dig.rr" "$TMP/$1.rr"
}
stalled tcp "$PORT" 0
stalled tls "$P3" 1

line=$(/usr/bin/python3 "$READER" late "$P2" big.test 6)
echo "write 2s: $line"
check "a client that stops reading is disconnected after \`timeouts write\` (got $(get records "$line") of $TOTAL records)" \
    eval "[ $(get eof "$line") = 1 ] && [ $(get records "$line") -lt $TOTAL ]"
q www.example.org A
check "...and the server answers on" rcode_is NOERROR

stopped() { grep -c 'transfer stopped after' "$LOG"; }
line=$(/usr/bin/python3 "$READER" drop "$PORT" big.test 20)
check "20 clients leave mid-transfer ($line)" [ "$line" = dropped=20 ]
wait_until 10 eval '[ "$(stopped)" -ge 20 ]'
n1=$(stopped)
check "...and each of their transfers ends, as the errors plugin reports ($n1)" [ "$n1" -ge 20 ]
q www.example.org A
check "...and the server answers on" rcode_is NOERROR
n=$(dig @127.0.0.1 -p "$PORT" +time=20 +tries=1 +noall +answer big.test AXFR | grep -c .)
check "...and transfers the whole zone ($n records)" [ "$n" -eq "$TOTAL" ]
# a reload (SIGUSR1) while a transfer waits for its client: the old
# instance's workers end it with their connections; the new one serves
/usr/bin/python3 "$READER" late "$PORT" big.test 120 > "$TMP/reload.out" 2>&1 &
LATE=$!
sleep 1
kill -USR1 "$TOPO_PID"
# logged once the old instance has stopped: its connections are closed
wait_until 60 grep -q 'Reloading complete' "$LOG"
kill -USR1 "$LATE"      # the client reads now
wait "$LATE"
line=$(cat "$TMP/reload.out")
check "a reload ends a transfer waiting for its client ($line)" \
    eval "[ $(get eof "$line") = 1 ] && [ $(get records "$line") -lt $TOTAL ]"
n=$(dig @127.0.0.1 -p "$PORT" +time=20 +tries=1 +noall +answer big.test AXFR | grep -c .)
check "...and the reloaded server transfers the whole zone ($n records)" [ "$n" -eq "$TOTAL" ]
n1=$(stopped)

# stopped while a transfer waits for its client: the worker's end finishes it
/usr/bin/python3 "$READER" late "$PORT" big.test 30 > /dev/null 2>&1 &
LATE=$!
PIDS+=("$LATE")
sleep 1
stop_topodns
rc=$?
kill "$LATE" 2>/dev/null
n2=$(stopped)
check "the waiting transfer is ended by the stop ($n1 ended before, $n2 after)" [ "$n2" -gt "$n1" ]
check "stopped with a transfer waiting, the server exits cleanly (status $rc; under ASan: nothing leaked)" \
    [ "$rc" -eq 0 ]
finish
