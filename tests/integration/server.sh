#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# server.sh — the DNS server core against real clients: UDP, TCP, pipelined
# TCP, EDNS echo (with the query's NSID/EXPIRE/COOKIE options) and BADVERS, a
# COOKIE option of a bad length (FORMERR), truncation and TCP retry, malformed packets,
# opcode/class/zone rules and the bare SERVFAIL when no plugin answers.
. "$top_srcdir/tests/integration/lib.sh"
RAW="/usr/bin/python3 $top_srcdir/tests/integration/rawdns.py"

{
    echo '$ORIGIN example.'
    echo '@ 300 IN SOA ns.example. hostmaster.example. 1 7200 1800 86400 30'
    echo '@ 300 IN NS ns.example.'
    echo 'ns 300 IN A 10.0.0.53'
    echo 'one 300 IN A 10.0.0.1'
    for i in $(seq 1 60); do echo "many 300 IN A 10.1.0.$i"; done
} > "$TMP/example.zone"
{
    echo '$ORIGIN empty.'
    echo '@ 300 IN SOA ns.empty. hostmaster.empty. 1 7200 1800 86400 30'
    echo '@ 300 IN NS ns.empty.'
} > "$TMP/empty.zone"

start_topodns "example.:{\$PORT} {
    file $TMP/example.zone {
        fallthrough
    }
    whoami
}
empty.:{\$PORT} {
    file $TMP/empty.zone {
        fallthrough
    }
}"

# UDP and TCP
q whoami.example A
check "udp answer" rcode_is NOERROR
check "whoami additional has client A" additional_has '127\.0\.0\.1'
q +tcp whoami.example A
check "tcp answer" rcode_is NOERROR
check "tcp whoami says tcp" additional_has '_tcp\.whoami\.example\.'
OUT=$($RAW pipeline "$PORT" 20)
check "20 pipelined TCP queries answered" grep -q 'ok 20' <<<"$OUT"

# header flags: QR set, RD copied, RA clear
q one.example A
check "qr rd, no ra" bash -c "grep -q 'flags: qr aa rd;' <<<\"\$0\"" "$OUT"
q +norec one.example A
check "rd not set when not asked" bash -c "grep -q 'flags: qr aa;' <<<\"\$0\"" "$OUT"

# EDNS
q +noedns one.example A
check "no OPT without EDNS" bash -c '! grep -q "OPT PSEUDOSECTION" <<<"$0"' "$OUT"
q +edns=0 +bufsize=1232 one.example A
check "OPT echoed with client size" grep -q 'udp: 1232' <<<"$OUT"
q +dnssec one.example A
check "DO echoed" grep -qE 'flags: do;' <<<"$OUT"
q +edns=1 +noednsnegotiation one.example A
check "EDNS version 1 gets BADVERS" rcode_is BADVERS
q +ednsopt=65001:abcd one.example A
check "unknown EDNS option ignored" rcode_is NOERROR
check "... and not echoed" bash -c '! grep -q "^; OPT=65001" <<<"$0"' "$OUT"
q +cookie=0102030405060708 +nsid +ednsopt=9 one.example A
check "the client's COOKIE echoed (as CoreDNS)" grep -q '^; COOKIE: 0102030405060708 (echoed)$' <<<"$OUT"
check "NSID echoed empty" grep -q '^; NSID:$' <<<"$OUT"
check "EXPIRE echoed" grep -q '^; EXPIRE:' <<<"$OUT"
q +cookie=0102030405060708 +edns=1 +noednsnegotiation one.example A
check "BADVERS echoes no option" bash -c 'grep -q "status: BADVERS" <<<"$0" && ! grep -q COOKIE <<<"$0"' "$OUT"
# RFC 7873 5.2.2: a COOKIE option that is neither 8 octets nor 16 to 40 is FORMERR
q +ednsopt=10:aabbcc one.example A
check "a 3-octet COOKIE option: FORMERR" rcode_is FORMERR
check "... and nothing echoed" bash -c '! grep -q "COOKIE" <<<"$0"' "$OUT"
q +ednsopt=10:$(printf 'ab%.0s' $(seq 1 41)) one.example A
check "a 41-octet COOKIE option: FORMERR" rcode_is FORMERR
q +ednsopt=10:$(printf 'ab%.0s' $(seq 1 24)) one.example A
check "a 24-octet COOKIE option (client and server cookie): answered" rcode_is NOERROR

# truncation: 60 A records do not fit in 512 octets
q +noedns +ignore many.example A
check "UDP without EDNS truncated" tc_set
check "truncated answer smaller" bash -c '[ $(grep -c "^many.example.*IN.*A" <<<"$0") -lt 60 ]' "$OUT"
q +noedns many.example A
check "dig retries over TCP and gets all 60" answer_count 60
q +bufsize=4096 many.example A
check "EDNS 4096 fits all 60 over UDP" answer_count 60
check "no TC when it fits" bash -c '! grep -q "flags: qr aa tc" <<<"$0"' "$OUT"

# server-level rcodes
q +opcode=status one.example A
check "opcode STATUS gets NOTIMP" rcode_is NOTIMP
q -c CH -t TXT version.bind
check "class CH gets REFUSED (no chaos or forward here)" rcode_is REFUSED
q -c ANY -t A one.example
check "class ANY gets REFUSED" rcode_is REFUSED
q other.org A
check "name outside every zone gets REFUSED" rcode_is REFUSED
q nothing.empty A
check "no plugin answered gets SERVFAIL" rcode_is SERVFAIL

# malformed packets
for c in two-questions pointer-loop forward-pointer trailing-garbage truncated-question long-label bad-opt header-only; do
    OUT=$($RAW udp "$PORT" $c)
    check "malformed $c gets FORMERR" grep -q '^FORMERR id=1234' <<<"$OUT"
done
OUT=$($RAW udp "$PORT" short)
check "short packet dropped" grep -q noreply <<<"$OUT"
OUT=$($RAW udp "$PORT" response)
check "response packet dropped" grep -q noreply <<<"$OUT"
OUT=$($RAW udp "$PORT" good)
check "server alive after bad packets" grep -q '^NOERROR' <<<"$OUT"

# A fatal start-up error exits 1 with its FATAL line as the last word: no
# report after it (the sanitizer stages run this binary, so a leak on the
# way out would show here).
fatal_clean() {   # WHAT ARGS... : exit 1, the last line is the FATAL one naming WHAT
    local what=$1; shift
    OUT=$(timeout 20 "$TOPODNS" "$@" 2>&1)
    local rc=$?
    [ $rc -eq 1 ] && tail -n 1 <<<"$OUT" | grep -q "^\[FATAL\].*$what" || { echo "rc=$rc: $OUT" | tail -5; return 1; }
}
printf 'example.org {\n    nosuchplugin\n}\n' > "$TMP/bad.cf"
check "unknown directive: exit 1, nothing after FATAL" fatal_clean "nosuchplugin" -conf "$TMP/bad.cf"
printf '.:%s {\n    bind 127.0.0.1\n    whoami\n}\n' "$(free_port)" > "$TMP/ok.cf"
check "unwritable pidfile: exit 1, nothing after FATAL" fatal_clean "pidfile" -conf "$TMP/ok.cf" \
    -pidfile "$TMP/no/such/dir/pid"

finish
