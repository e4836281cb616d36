#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dnstap.sh — the dnstap plugin against the real Frame Streams reader:
# fstrm_capture (fstrm-bin) takes the stream on a unix socket and writes it
# to a file, dnstap-ldns decodes it. Asserts the CLIENT_QUERY/CLIENT_RESPONSE
# pairs of answered queries (names, types, UDP and TCP), the
# FORWARDER_QUERY/FORWARDER_RESPONSE of a forwarded one (the upstream is a
# second topodns), identity/version/extra, and the wire form only with
# `full`; then, with no collector listening, that queries are still
# answered at full speed and the dropped messages are counted in
# coredns_dnstap_dropped_total; a tcp:// collector named by a host name
# (localhost, resolved at setup: its first address may refuse, the next is
# tried); a tls:// collector with skipverify (a TLS terminator of our own in
# front of fstrm_capture's TCP listener, a self-signed certificate), and the
# same collector refused without skipverify (nothing arrives); and setup
# errors with file:line.
. "$top_srcdir/tests/integration/lib.sh"

command -v fstrm_capture >/dev/null || skip "fstrm_capture (fstrm-bin) not installed"
command -v dnstap-ldns >/dev/null || skip "dnstap-ldns not installed"

# the upstream forward talks to: another topodns
UPORT=$(free_port)
printf '.:%s {\n    hosts {\n        198.51.100.9 up.example\n    }\n}\n' "$UPORT" > "$TMP/up.conf"
"$TOPODNS" -conf "$TMP/up.conf" > "$TMP/up.log" 2>&1 &
PIDS+=("$!")
wait_dns "$UPORT" || { cat "$TMP/up.log"; exit 1; }

capture() {     # capture SOCKET FILE: fstrm_capture's pid in CAP
    fstrm_capture -t protobuf:dnstap.Dnstap -u "$1" -w "$2" > "$TMP/cap.log" 2>&1 &
    CAP=$!
    PIDS+=("$CAP")
    wait_until 5 test -S "$1"
}
end_capture() { # after topodns stopped (it flushes on stop)
    kill -INT "$CAP" 2>/dev/null
    wait "$CAP" 2>/dev/null
}

SOCK=$TMP/tap.sock
capture "$SOCK" "$TMP/tap.fstrm"
MPORT=$(free_port)
start_topodns '
.:{$PORT} {
    prometheus 127.0.0.1:'"$MPORT"'
    dnstap unix://'"$SOCK"' full {
        identity test-identity
        version test-version
        extra test-extra
    }
    hosts {
        192.0.2.7 local.example
        fallthrough
    }
    forward . 127.0.0.1:'"$UPORT"'
}'
q -b 127.0.0.1 local.example A
check "a hosts answer with dnstap on" answer_has '192\.0\.2\.7'
q -b 127.0.0.1 up.example A
check "a forwarded answer with dnstap on" answer_has '198\.51\.100\.9'
q -b 127.0.0.1 +tcp local.example AAAA
check "a TCP query with dnstap on" rcode_is NOERROR
stop_topodns
end_capture
OUT=$(dnstap-ldns -q -r "$TMP/tap.fstrm" 2>&1)
echo "$OUT" | sed 's/^/    dnstap: /'
check "CLIENT_QUERY and CLIENT_RESPONSE of local.example. A over UDP" \
    bash -c 'grep -q " CQ 127\.0\.0\.1 UDP [0-9]*b \"local\.example\.\" IN A$" <<<"$0" &&
             grep -q " CR 127\.0\.0\.1 UDP [0-9]*b \"local\.example\.\" IN A$" <<<"$0"' "$OUT"
check "CLIENT_QUERY and CLIENT_RESPONSE of local.example. AAAA over TCP" \
    bash -c 'grep -q " CQ 127\.0\.0\.1 TCP [0-9]*b \"local\.example\.\" IN AAAA$" <<<"$0" &&
             grep -q " CR 127\.0\.0\.1 TCP [0-9]*b \"local\.example\.\" IN AAAA$" <<<"$0"' "$OUT"
check "FORWARDER_QUERY and FORWARDER_RESPONSE of up.example. A to the upstream" \
    bash -c 'grep -q " FQ 127\.0\.0\.1 UDP [0-9]*b \"up\.example\.\" IN A$" <<<"$0" &&
             grep -q " FR 127\.0\.0\.1 UDP [0-9]*b \"up\.example\.\" IN A$" <<<"$0"' "$OUT"
check "the forwarded query's messages in order: CQ, FQ, FR, CR" \
    bash -c '[ "$(grep "up\.example" <<<"$0" | awk "{print \$3}" | tr "\n" " ")" = "CQ FQ FR CR " ]' "$OUT"
check "nothing else was tapped (the readiness probe SOA is the only other query)" \
    bash -c '[ "$(grep -vc -e "local\.example" -e "up\.example" -e "IN SOA" <<<"$0")" -eq 0 ]' "$OUT"
Y=$(dnstap-ldns -y -r "$TMP/tap.fstrm" 2>&1)
check "identity and version as configured, in every message" \
    bash -c '[ "$(grep -c "^identity: \"test-identity\"$" <<<"$0")" -eq "$1" ] &&
             [ "$(grep -c "^version: \"test-version\"$" <<<"$0")" -eq "$1" ]' "$Y" "$(grep -c . <<<"$OUT")"
# dnstap-ldns does not print the extra field: look for its octets in the frames
check "extra as configured, in every frame" \
    [ "$(grep -a -o test-extra "$TMP/tap.fstrm" | grep -c .)" -eq "$(grep -c . <<<"$OUT")" ]
check "full: the client response carries the answer record" \
    bash -c 'grep -q "local\.example\.[[:space:]]*3600[[:space:]]*IN[[:space:]]*A[[:space:]]*192\.0\.2\.7" <<<"$0"' "$Y"

# without full: the message types and addresses, no DNS messages
SOCK2=$TMP/tap2.sock
capture "$SOCK2" "$TMP/tap2.fstrm"
start_topodns '
.:{$PORT} {
    dnstap '"$SOCK2"'
    hosts {
        192.0.2.7 local.example
    }
}'
q -b 127.0.0.1 local.example A
stop_topodns
end_capture
Y=$(dnstap-ldns -y -r "$TMP/tap2.fstrm" 2>&1)
check "without full: CLIENT_QUERY and CLIENT_RESPONSE, with no message octets" \
    bash -c 'grep -q "type: CLIENT_QUERY" <<<"$0" && grep -q "type: CLIENT_RESPONSE" <<<"$0" &&
             ! grep -q "query_message:" <<<"$0" && ! grep -q "response_message:" <<<"$0" &&
             grep -q "query_address: \"127\.0\.0\.1\"" <<<"$0"' "$Y"
check "without identity: the host name; without version: topodns-VERSION" \
    bash -c 'grep -q "^identity: \"$1\"" <<<"$0" && grep -q "^version: \"topodns-" <<<"$0"' \
    "$Y" "$(hostname)"

# no collector: the socket path does not exist. Queries are answered as
# fast as by the same server without dnstap, and what cannot be queued or
# written is counted as dropped.
N=20000
printf 'local.example A\n' > "$TMP/qf"
burst() {   # burst: dnsperf's report; elapsed seconds in SECS
    local t0=$EPOCHREALTIME
    P=$(timeout 60 dnsperf -s 127.0.0.1 -p "$PORT" -d "$TMP/qf" -n "$N" -c 2 -q 20 -t 2 -l 30 2>&1)
    SECS=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { print b - a }')
}
completed() { grep -Eq "Queries completed:[[:space:]]*$N " <<<"$P"; }
# UDP on a loaded machine (the sanitizer stages run four tests at a time)
# may lose a datagram: a burst that lost one is run once more, and the
# second must be whole (a server that blocks loses thousands, every time)
burst_whole() {
    burst
    completed && return 0
    echo "    first burst incomplete: $(grep -E 'Queries (completed|lost)' <<<"$P" | tr -s ' ' | tr '\n' ' ')"
    burst
}
start_topodns '
.:{$PORT} {
    hosts {
        192.0.2.7 local.example
    }
}'
burst_whole
BASE=$SECS
check "baseline without dnstap: $N queries answered (${BASE}s)" completed
stop_topodns
MPORT=$(free_port)
start_topodns '
.:{$PORT} {
    prometheus 127.0.0.1:'"$MPORT"'
    dnstap unix://'"$TMP"'/nobody.sock full
    hosts {
        192.0.2.7 local.example
    }
}'
burst_whole
check "no collector: $N queries all answered" completed
check "no collector: as fast as without dnstap (${SECS}s against ${BASE}s)" \
    awk -v s="$SECS" -v b="$BASE" 'BEGIN { exit !(s < 2 * b + 2) }'
dropped() {
    curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MPORT/metrics" |
        awk '/^coredns_dnstap_dropped_total /{print $2}'
}
# the I/O thread discards what is queued within a second or two
for i in $(seq 1 100); do
    D=$(dropped)
    awk -v d="${D:-0}" 'BEGIN { exit !(d >= 2 * '"$N"') }' && break
    sleep 0.1
done
check "no collector: coredns_dnstap_dropped_total counts every message (${D:-none} of $((2 * N)))" \
    awk -v d="${D:-0}" 'BEGIN { exit !(d >= 2 * '"$N"') }'
q -b 127.0.0.1 local.example A
check "still answering after the drops" answer_has '192\.0\.2\.7'
stop_topodns

# a collector that stops reading (fstrm_capture stopped after the
# handshake): the socket fills, the queue fills, queries go on at full speed
# and what does not fit is counted
SOCK3=$TMP/tap3.sock
capture "$SOCK3" "$TMP/tap3.fstrm"
MPORT=$(free_port)
start_topodns '
.:{$PORT} {
    prometheus 127.0.0.1:'"$MPORT"'
    dnstap unix://'"$SOCK3"' full
    hosts {
        192.0.2.7 local.example
    }
}'
wait_until 5 grep -q "opened output file" "$TMP/cap.log"
q -b 127.0.0.1 local.example A
sleep 0.5
kill -STOP "$CAP"
burst_whole
check "stalled collector: $N queries all answered" completed
check "stalled collector: as fast as without dnstap (${SECS}s against ${BASE}s)" \
    awk -v s="$SECS" -v b="$BASE" 'BEGIN { exit !(s < 2 * b + 2) }'
D=$(dropped)
check "stalled collector: coredns_dnstap_dropped_total counts what did not fit (${D:-none})" \
    awk -v d="${D:-0}" 'BEGIN { exit !(d > 0) }'
q -b 127.0.0.1 local.example A
check "stalled collector: still answering" answer_has '192\.0\.2\.7'
t0=$(now)
stop_topodns
check "stalled collector: shutdown is not held up for long (socket timeouts)" elapsed_below "$t0" 15
kill -CONT "$CAP"
end_capture

# ---- tcp:// with a host name, tls:// --------------------------------------
tcp_capture() {     # tcp_capture PORT FILE: fstrm_capture on 127.0.0.1:PORT, pid in CAP
    fstrm_capture -t protobuf:dnstap.Dnstap -a 127.0.0.1 -p "$1" -w "$2" > "$TMP/cap.log" 2>&1 &
    CAP=$!
    PIDS+=("$CAP")
    wait_until 5 grep -q "listening\|Listening\|opened" "$TMP/cap.log" || sleep 0.5
}
tapped() { dnstap-ldns -q -r "$1" 2>/dev/null | grep -c " CQ 127\.0\.0\.1 UDP [0-9]*b \"local\.example\.\" IN A$"; }
# tap_run ENDPOINT [refused]: topodns with `dnstap ENDPOINT` (the rest of
# the line and its block) and a hosts answer, asked 30 times over 3 s (past
# the writer's flush), or with `refused` asked once after the TLS proxy saw
# a failed handshake; then topodns, the collector and the proxy stopped
tap_run() {
    start_topodns '
.:{$PORT} {
    dnstap '"$1"'
    hosts {
        192.0.2.7 local.example
    }
}' || return 1
    if [ "${2:-}" = refused ]; then
        wait_until 5 grep -q "handshake failed" "$TMP/proxy.log"
        q -b 127.0.0.1 local.example A
    else
        for i in $(seq 1 30); do q -b 127.0.0.1 local.example A; sleep 0.1; done
    fi
    stop_topodns
    end_capture
    if [ -n "${PROXY:-}" ]; then kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; PROXY=; fi
}
CPORT=$(free_port)
tcp_capture "$CPORT" "$TMP/tcp.fstrm"
tap_run "tcp://localhost:$CPORT full"
check "tcp://localhost: answering" answer_has '192\.0\.2\.7'
OUT=$(dnstap-ldns -q -r "$TMP/tcp.fstrm" 2>&1 | tail -3)
check "tcp://localhost:PORT (a host name, resolved at setup): the collector got the client queries" \
    [ "$(tapped "$TMP/tcp.fstrm")" -ge 1 ]

if openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=collector.test \
       -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
       -keyout "$TMP/c.key" -out "$TMP/c.crt" > "$TMP/req.log" 2>&1; then
    # a TLS terminator: TLS on 127.0.0.1:TPORT, each connection relayed to
    # fstrm_capture's TCP port; logs "handshake ok" or "handshake failed"
    cat > "$TMP/tlsproxy.py" <<'PY'
import socket, ssl, sys, threading
port, target, cert, key, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(8)
def note(m):
    with open(log, "a") as f:
        f.write(m + "\n")
def pump(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
def serve(c):
    try:
        t = ctx.wrap_socket(c, server_side=True)
    except (ssl.SSLError, OSError) as e:
        note("handshake failed: %s" % e)
        c.close()
        return
    note("handshake ok")
    u = socket.create_connection(("127.0.0.1", target))
    threading.Thread(target=pump, args=(u, t), daemon=True).start()
    pump(t, u)
note("listening")
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
    tls_collector() {   # tls_collector FILE [CERT]: TLS on TPORT in front of fstrm_capture
        CPORT=$(free_port); TPORT=$(free_port)
        tcp_capture "$CPORT" "$1"
        : > "$TMP/proxy.log"
        python3 "$TMP/tlsproxy.py" "$TPORT" "$CPORT" "$TMP/${2:-c}.crt" "$TMP/${2:-c}.key" "$TMP/proxy.log" &
        PROXY=$!
        PIDS+=("$PROXY")
        wait_until 5 grep -q listening "$TMP/proxy.log"
    }
    tls_collector "$TMP/tls.fstrm"
    tap_run "tls://127.0.0.1:$TPORT full {
        skipverify
    }"
    OUT=$(cat "$TMP/proxy.log"; dnstap-ldns -q -r "$TMP/tls.fstrm" 2>&1 | tail -3)
    check "tls:// with skipverify: a TLS handshake with the self-signed collector" grep -q "handshake ok" "$TMP/proxy.log"
    check "tls:// with skipverify: the collector got the client queries, decoded by dnstap-ldns" \
        [ "$(tapped "$TMP/tls.fstrm")" -ge 1 ]

    tls_collector "$TMP/tlsv.fstrm"
    tap_run "tls://127.0.0.1:$TPORT full" refused
    check "tls:// verifying: still answering" answer_has '192\.0\.2\.7'
    OUT=$(cat "$TMP/proxy.log" "$LOG" | tail -8)
    check "tls:// without skipverify: the self-signed certificate is refused, nothing arrives" \
        bash -c 'grep -q "handshake failed" "$0" && ! grep -q "handshake ok" "$0" && [ "$1" -eq 0 ]' \
        "$TMP/proxy.log" "$(tapped "$TMP/tlsv.fstrm")"
    check "tls:// without skipverify: the log says why" \
        grep -q "No connection to dnstap endpoint: tls 127.0.0.1:$TPORT: certificate: " "$LOG"

    # verified: the certificate made a trusted CA for topodns through
    # OpenSSL's SSL_CERT_FILE; it names localhost and 127.0.0.1
    tls_collector "$TMP/tlsok.fstrm"
    SSL_CERT_FILE=$TMP/c.crt tap_run "tls://localhost:$TPORT full"
    OUT=$(cat "$TMP/proxy.log" "$LOG" | tail -8)
    check "tls://localhost, verified (a trusted CA naming localhost): the collector got the client queries" \
        [ "$(tapped "$TMP/tlsok.fstrm")" -ge 1 ]
    # trusted, but the certificate does not name the address asked for
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=collector.test \
        -addext "subjectAltName=DNS:collector.test" -keyout "$TMP/n.key" -out "$TMP/n.crt" > /dev/null 2>&1
    tls_collector "$TMP/tlsname.fstrm" n
    SSL_CERT_FILE=$TMP/n.crt tap_run "tls://127.0.0.1:$TPORT full" refused
    OUT=$(cat "$LOG" | tail -8)
    check "tls:// to an address the trusted certificate does not name: refused, nothing arrives" \
        eval '[ "$(tapped "$TMP/tlsname.fstrm")" -eq 0 ] && grep -q "certificate: IP address mismatch" "$LOG"'
else
    echo "SKIP (part): openssl cannot make a certificate: $(cat "$TMP/req.log")"
fi

for c in 'dnstap' 'dnstap /x.sock half' 'dnstap tls://127.0.0.1' 'dnstap tcp://:6000' \
         'dnstap ftp://127.0.0.1:6000' 'dnstap /x.sock {\n        nosuch x\n    }' \
         'dnstap /x.sock {\n        skipverify now\n    }' \
         'dnstap /x.sock {\n        extra {/metadata}\n    }'; do
    printf ".:53 {\n    $c\n}\n" > "$TMP/bad"
    OUT=$("$TOPODNS" -check -conf "$TMP/bad" 2>&1); rc=$?
    check "refused with file:line: $(head -1 <<<"$c")" \
        bash -c '[ $1 -ne 0 ] && grep -q "bad:[23]: " <<<"$0"' "$OUT" $rc
done
printf '.:53 {\n    dnstap tcp://127.0.0.1:6000 full\n    dnstap /tmp/x.sock\n    dnstap tcp://localhost:6000\n    dnstap tls://[::1]:6000 {\n        skipverify\n    }\n    forward . 127.0.0.1\n}\n' > "$TMP/good"
OUT=$("$TOPODNS" -check -conf "$TMP/good" 2>&1); rc=$?
check "tcp:// (address or host name), tls:// with skipverify and a second dnstap in one block pass -check" [ $rc -eq 0 ]

finish
