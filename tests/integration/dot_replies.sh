#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dot_replies.sh — forward over tls:// takes only the reply to its query: a
# DNS-over-TLS upstream (dot_upstream.py, a certificate of a CA made here by
# the openssl CLI) that first sends a reply with ID 0, then one with the
# right ID for another question, then one with QR clear, and only then the
# right reply: topodns answers with the right one and counts three dropped
# replies (topodns_forward_mismatched_replies_total). An upstream that only
# sends wrong IDs: SERVFAIL after read_timeout, or, with a second upstream,
# the second one's answer.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
/usr/bin/python3 -c 'import dns.message, ssl' 2>/dev/null || skip "python3-dnspython not installed"
HERE=$top_srcdir/tests/integration

C=$TMP/certs
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
    -keyout "$C/ca.key" -out "$C/ca.pem" -days 2 -subj "/CN=test CA" 2>/dev/null &&
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$C/srv.key" \
    -out "$C/srv.csr" -subj "/CN=dns.test" 2>/dev/null &&
echo "subjectAltName=DNS:dns.test,IP:127.0.0.1" > "$C/srv.ext" &&
openssl x509 -req -in "$C/srv.csr" -CA "$C/ca.pem" -CAkey "$C/ca.key" -CAcreateserial \
    -out "$C/srv.pem" -days 2 -extfile "$C/srv.ext" 2>/dev/null ||
    { echo "openssl could not make certificates"; exit 1; }

U=$(free_port)
"$HERE/dot_upstream.py" "$U" "$C/srv.pem" "$C/srv.key" > "$TMP/dot.log" 2>&1 &
PIDS+=($!)
wait_until 5 grep -q ready "$TMP/dot.log" || { echo "dot_upstream.py did not start"; cat "$TMP/dot.log"; exit 1; }
F=$(free_port)
"$HERE/forward_upstream.py" "$F" plain > "$TMP/plain.log" 2>&1 &
PIDS+=($!)
wait_until 5 grep -q ready "$TMP/plain.log" || { echo "forward_upstream.py did not start"; exit 1; }

M=$(free_port)
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$M
    forward . tls://127.0.0.1:$U {
        tls $C/ca.pem
        tls_servername dns.test
        read_timeout 500ms
    }
}
next.test:{\$PORT} {
    forward . tls://127.0.0.1:$U 127.0.0.1:$F {
        tls $C/ca.pem
        tls_servername dns.test
        policy sequential
        read_timeout 500ms
    }
}" -workers 1 || exit 1

metric() {  # NAME LABEL-SUBSTRING: the value, 0 when absent
    curl -s --noproxy '*' "http://127.0.0.1:$M/metrics" | grep "^$1{" | grep -F "$2" |
        awk '{s+=$2} END {print s+0}'
}
MM=topodns_forward_mismatched_replies_total
long_q() { OUT=$(dig @127.0.0.1 -p "$PORT" +time=6 +tries=1 "$@" 2>&1); }

q good.test A
check "the right reply is taken" answer_has '192\.0\.2\.1'
check "nothing dropped for it" [ "$(metric $MM "to=\"127.0.0.1:$U\"")" = 0 ]

q wrongfirst.test A
check "replies with ID 0, another question, QR clear are skipped: the right one is used" \
    answer_has 'wrongfirst\.test\..*192\.0\.2\.2'
check "... none of the wrong ones" eval '! answer_has 198\.51\.100'
check "... and counted ($MM 3)" [ "$(metric $MM "to=\"127.0.0.1:$U\"")" = 3 ]
q WrongFirst.Test A
check "the question compares without regard to case" answer_has '192\.0\.2\.2'
check "... counted again (6)" [ "$(metric $MM "to=\"127.0.0.1:$U\"")" = 6 ]
q good.test A
check "the connection still serves the next query" answer_has '192\.0\.2\.1'

t0=$(now)
long_q onlywrong.test A
check "only wrong IDs: SERVFAIL" rcode_is SERVFAIL
check "... not the wrong answer" eval '! grep -q 198.51.100 <<<"$OUT"'
check "... after the read timeout (0.5 s)" eval '! elapsed_below "$t0" 0.45'
check "... the wrong replies counted" [ "$(metric $MM "to=\"127.0.0.1:$U\"")" -ge 8 ]

long_q onlywrong.next.test A
check "only wrong IDs, a second upstream: its answer (NXDOMAIN from the plain one)" \
    rcode_is NXDOMAIN
check "... not the wrong answer" eval '! grep -q 198.51.100 <<<"$OUT"'
check "... the DoT upstream was asked first" grep -q 'query onlywrong.next.test.' "$TMP/dot.log"
finish
