#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# transfer.sh — zone transfers (src/plugin/transfer/) from the real binary:
# AXFR of a file zone and of cluster.local (kubesim-fed) with dig and kdig,
# CoreDNS's record order, several TCP messages for a large zone (each at
# most 64 KiB, AA set, all on one connection), IXFR (up to date: the SOA
# alone; older: the whole zone; no SOA in the query: SERVFAIL), UDP and
# clients not listed in `to` refused, the log lines, knotd as a secondary
# of cluster.local (AXFR, then IXFR after a kubectl change), and AXFR
# refused by kubernetes and file when no `transfer` is configured
# (acceptance row 78).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
command -v kdig >/dev/null || skip "kdig not installed"
RAW=$top_srcdir/tests/integration/rawdns.py
OUT=""
ZONE=$top_srcdir/zones/example.org.zone

# records of an AXFR as dig prints them, whitespace squeezed, SOA serial masked
axfr() {   # axfr ZONE [dig args...]
    local z=$1; shift
    OUT=$(dig @127.0.0.1 -p "$PORT" +time=3 +tries=1 "$z" AXFR "$@" 2>&1)
    grep -v '^;' <<<"$OUT" | grep . | awk '{ $1 = $1; if ($4 == "SOA") $7 = "SERIAL"; print }'
}
xfr() { OUT=$(python3 "$RAW" xfr "$PORT" "$@" 2>&1); }
total_is() { grep -q "^total messages=$1 records=$2 soa=$3$" <<<"$OUT"; }

# ---- a file zone ------------------------------------------------------------
python3 - "$TMP/big.zone" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("$ORIGIN big.test.\n$TTL 60\n@ IN SOA ns.big.test. h.big.test. 7 1 1 1 1\n")
    f.write("@ IN NS ns\nns IN A 192.0.2.1\n")
    for i in range(3000):
        f.write('h%d IN TXT "%s"\n' % (i, "x" * 40))
PY
start_topodns "example.org:{\$PORT} big.test:{\$PORT} {
    transfer {
        to 127.0.0.1 127.0.0.3:5300
    }
    file $ZONE example.org
    file $TMP/big.zone big.test
    log
}" || exit 1

A=$(axfr example.org)
OUT=$A
first=$(head -3 <<<"$A" | tr '\n' '|')
check "AXFR starts with the SOA, then the apex NS" [ "$first" = \
"example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. SERIAL 7200 3600 1209600 300|example.org. 3600 IN NS ns1.example.org.|example.org. 3600 IN NS ns2.example.org.|" ]
check "…and ends with the SOA" [ "$(tail -1 <<<"$A")" = \
    "example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. SERIAL 7200 3600 1209600 300" ]
check "…every record of the file, the SOA twice (72)" [ "$(grep -c . <<<"$A")" = 72 ]
# canonical order: the apex's own records, then _http._tcp, alias, …, www, then SOA
order=$(awk 'NR > 3 { print $1 }' <<<"$A" | uniq | tr '\n' ' ')
check "names in DNSSEC canonical order" [ "$order" = \
"example.org. _http._tcp.example.org. alias.example.org. alias2.example.org. a.b.c.example.org. dangling.example.org. external.example.org. loop1.example.org. loop2.example.org. mail.example.org. many.example.org. mixedcase.example.org. ns1.example.org. ns2.example.org. sub.example.org. ns.sub.example.org. *.wild.example.org. exists.wild.example.org. www.example.org. example.org. " ]
check "glue below a zone cut is transferred" grep -q '^ns.sub.example.org. 3600 IN AAAA 2001:db8::200$' <<<"$A"
check "server log: CoreDNS's transfer line" \
    grep -q '\[INFO\] plugin/transfer: Outgoing transfer of 72 records of zone "example.org." to 127.0.0.1 for 2024010101 SOA serial' "$LOG"
check "log plugin: the transfer as one query, AA, all octets" \
    grep -qE '"AXFR IN example.org. tcp [0-9]+ false 65535" NOERROR qr,aa [0-9]{4} ' "$LOG"

OUT=$(kdig @127.0.0.1 -p "$PORT" example.org AXFR 2>&1)
check "kdig: the same 72 records in one message" grep -q 'Received .*(1 messages, 72 records)' <<<"$OUT"

xfr example.org AXFR
check "one message, AA set" eval 'grep -q "^msg 1 NOERROR aa=1 an=72 " <<<"$OUT" && total_is 1 72 2'

# a zone larger than a message: CoreDNS's batches (63000 octets of records)
xfr big.test AXFR
check "large zone: 4 messages on one connection, 3004 records" total_is 4 3004 2
check "…every message AA, NOERROR, at most 65535 octets" eval \
    '[ "$(grep -cE "^msg [0-9]+ NOERROR aa=1 an=[0-9]+ len=([0-9]{1,4}|[0-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$" <<<"$OUT")" = 4 ]'
OUT=$(kdig @127.0.0.1 -p "$PORT" big.test AXFR 2>&1)
check "kdig reads the 4 messages" grep -q 'Received .*(4 messages, 3004 records)' <<<"$OUT"
OUT=$(dig @127.0.0.1 -p "$PORT" big.test AXFR 2>&1)
check "dig reads the 4 messages" grep -q 'XFR size: 3004 records (messages 4,' <<<"$OUT"

# IXFR: no journal; up to date → the SOA alone (no AA, as CoreDNS)
xfr example.org IXFR 2024010101
check "IXFR with the current serial: the SOA alone, no AA" eval \
    'grep -q "^msg 1 NOERROR aa=0 an=1 " <<<"$OUT" && total_is 1 1 1'
check "…logged as a noop" grep -q 'Outgoing noop, incremental transfer for up to date zone "example.org." to 127.0.0.1 for 2024010101 SOA serial' "$LOG"
OUT=$(dig @127.0.0.1 -p "$PORT" example.org IXFR=2024010101 2>&1)
check "dig IXFR=current: one SOA record" grep -q 'XFR size: 1 records' <<<"$OUT"
xfr example.org IXFR 2024010100
check "IXFR with an older serial: the whole zone (AXFR form)" total_is 1 72 2
OUT=$(kdig @127.0.0.1 -p "$PORT" example.org IXFR=2023 2>&1)
check "kdig IXFR=older: the whole zone" grep -q 'Received .*(1 messages, 72 records)' <<<"$OUT"
xfr example.org IXFR none
check "IXFR without a SOA in the authority section: SERVFAIL" eval \
    'grep -q "^msg 1 SERVFAIL aa=0 an=0 " <<<"$OUT"'

# who may transfer: `to` lists 127.0.0.1 and 127.0.0.3 (port ignored)
xfr example.org AXFR 0 127.0.0.3
check "a client listed with a port may transfer" total_is 1 72 2
xfr example.org AXFR 0 127.0.0.2
check "a client not in 'to': REFUSED" eval 'grep -q "^msg 1 REFUSED aa=0 an=0 " <<<"$OUT"'
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.0.2 example.org AXFR 2>&1)
check "dig from 127.0.0.2: transfer failed" grep -q 'Transfer failed' <<<"$OUT"
check "…logged as REFUSED" grep -q '127.0.0.2:[0-9]* - [0-9]* "AXFR IN example.org. tcp .*" REFUSED qr ' "$LOG"
OUT=$(kdig @127.0.0.1 -p "$PORT" example.org AXFR +notcp 2>&1)
check "AXFR over UDP: REFUSED" grep -q "server replied with error 'REFUSED'" <<<"$OUT"
OUT=$(kdig @127.0.0.1 -p "$PORT" example.org IXFR=1 +notcp 2>&1)
check "IXFR over UDP: REFUSED" grep -q "server replied with error 'REFUSED'" <<<"$OUT"
xfr www.example.org AXFR
check "AXFR of a name that is no zone apex: REFUSED (by file)" eval 'grep -q "^msg 1 REFUSED" <<<"$OUT"'
q www.example.org A
check "other queries unchanged" eval 'rcode_is NOERROR && aa_set && answer_has "192\.0\.2\.10$"'
q +tcp www.example.org A
check "…over TCP too, on the transfer's port" eval 'rcode_is NOERROR && answer_count 1'
stop_topodns

# ---- setup errors -----------------------------------------------------------
bad_conf() {   # bad_conf 'transfer lines' 'message regex'
    local f=$TMP/Bad.$RANDOM
    printf 'example.org:{$PORT} {\n    file %s\n    %s\n}\n' "$ZONE" "$1" > "$f"
    timeout 10 "$TOPODNS" -conf "$f" > "$f.out" 2>&1
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$(basename "$f"):[0-9]*: " "$f.out" &&
        grep -qE "$2" "$f.out" || { echo "  got (rc $rc):"; cat "$f.out"; return 1; }
}
check "'to' is required" bad_conf "transfer" "plugin/transfer: 'to' is required"
check "to without addresses" bad_conf "transfer {
        to
    }" "Wrong argument count"
check "to with a host name" bad_conf "transfer {
        to ns.example.net
    }" "must specify an IP address: \`ns.example.net'"
check "unknown property" bad_conf "transfer {
        to *
        bogus
    }" 'unknown property "bogus"'
check "source twice" bad_conf "transfer {
        to *
        source 127.0.0.1
        source 127.0.0.1
    }" "source already specified"

# ---- cluster.local from kubesim ---------------------------------------------
if ! command -v kubectl >/dev/null || [ ! -x "$KUBESIM" ]; then
    echo "note: kubesim or kubectl missing: kubernetes transfers not tested"
    finish
    exit $?
fi
start_kubesim --load "$KDATA/cluster.json"
export TOPODNS_SELF_IPS=10.244.0.20
start_topodns ".:{\$PORT} {
    transfer cluster.local {
        to *
    }
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
    }
    log
}" || exit 1
until_ok 5 eval 'q svc1.testns.svc.cluster.local A; rcode_is NOERROR' || echo "note: not synced after 5 s"
S=testns.svc.cluster.local.
want="cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5
cluster.local. 5 IN NS kube-dns.kube-system.svc.cluster.local.
kube-dns.kube-system.svc.cluster.local. 0 IN A 10.96.0.10
external.$S 5 IN CNAME ext.interwebs.test.
external-to-service.$S 5 IN CNAME svc1.testns.svc.cluster.local.
hdls1.$S 5 IN A 172.0.0.2
172-0-0-2.hdls1.$S 5 IN A 172.0.0.2
_http._tcp.hdls1.$S 5 IN SRV 0 25 80 172-0-0-2.hdls1.$S
hdls1.$S 5 IN A 172.0.0.3
172-0-0-3.hdls1.$S 5 IN A 172.0.0.3
_http._tcp.hdls1.$S 5 IN SRV 0 25 80 172-0-0-3.hdls1.$S
hdls1.$S 5 IN A 172.0.0.4
dup-name.hdls1.$S 5 IN A 172.0.0.4
_http._tcp.hdls1.$S 5 IN SRV 0 25 80 dup-name.hdls1.$S
hdls1.$S 5 IN A 172.0.0.5
dup-name.hdls1.$S 5 IN A 172.0.0.5
_http._tcp.hdls1.$S 5 IN SRV 0 25 80 dup-name.hdls1.$S
hdls1.$S 5 IN AAAA 5678:abcd::1
5678-abcd--1.hdls1.$S 5 IN AAAA 5678:abcd::1
_http._tcp.hdls1.$S 5 IN SRV 0 50 80 5678-abcd--1.hdls1.$S
hdls1.$S 5 IN AAAA 5678:abcd::2
5678-abcd--2.hdls1.$S 5 IN AAAA 5678:abcd::2
_http._tcp.hdls1.$S 5 IN SRV 0 50 80 5678-abcd--2.hdls1.$S
hdlsprtls.$S 5 IN A 172.0.0.20
172-0-0-20.hdlsprtls.$S 5 IN A 172.0.0.20
kube-dns.kube-system.svc.cluster.local. 5 IN A 10.96.0.10
kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.
_dns._udp.kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.
kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.
_dns-tcp._tcp.kube-dns.kube-system.svc.cluster.local. 5 IN SRV 0 100 53 kube-dns.kube-system.svc.cluster.local.
svc-dual-stack.$S 5 IN A 10.0.0.3
svc-dual-stack.$S 5 IN AAAA 10::3
svc-dual-stack.$S 5 IN SRV 0 100 80 svc-dual-stack.$S
_http._tcp.svc-dual-stack.$S 5 IN SRV 0 100 80 svc-dual-stack.$S
svc1.$S 5 IN A 10.0.0.1
svc1.$S 5 IN SRV 0 100 80 svc1.$S
_http._tcp.svc1.$S 5 IN SRV 0 100 80 svc1.$S
svc1.unexposedns.svc.cluster.local. 5 IN A 10.0.0.2
svc1.unexposedns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.unexposedns.svc.cluster.local.
_http._tcp.svc1.unexposedns.svc.cluster.local. 5 IN SRV 0 100 80 svc1.unexposedns.svc.cluster.local.
svc6.$S 5 IN AAAA 1234:abcd::1
svc6.$S 5 IN SRV 0 100 80 svc6.$S
_http._tcp.svc6.$S 5 IN SRV 0 100 80 svc6.$S
svcempty.$S 5 IN A 10.0.0.4
svcempty.$S 5 IN SRV 0 100 80 svcempty.$S
_http._tcp.svcempty.$S 5 IN SRV 0 100 80 svcempty.$S
cluster.local. 5 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. SERIAL 7200 1800 86400 5"
got=$(axfr cluster.local)
OUT=$got
check "AXFR cluster.local: CoreDNS's records in CoreDNS's order" [ "$got" = "$want" ]
[ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | sed 's/^/    /'
check "…no pod, PTR or zonal names" eval '! grep -qE "\.pod\.|in-addr|_zone" <<<"$got"'
OUT=$(kdig @127.0.0.1 -p "$PORT" cluster.local AXFR 2>&1)
check "kdig AXFR cluster.local: 47 records" grep -q 'Received .*(1 messages, 47 records)' <<<"$OUT"
serial=$(dig @127.0.0.1 -p "$PORT" +short cluster.local SOA | awk '{ print $3 }')
xfr cluster.local IXFR "$serial"
check "IXFR cluster.local at the store's serial: the SOA alone" total_is 1 1 1
xfr cluster.local IXFR $((serial - 1))
check "IXFR cluster.local at an older serial: the whole zone" total_is 1 47 2
xfr svc.cluster.local AXFR
check "AXFR below the apex (svc.cluster.local): REFUSED" eval 'grep -q "^msg 1 REFUSED" <<<"$OUT"'
xfr in-addr.arpa AXFR
check "AXFR of a reverse zone (not in transfer's zones): REFUSED" eval 'grep -q "^msg 1 REFUSED" <<<"$OUT"'
OUT=$(kdig @127.0.0.1 -p "$PORT" cluster.local AXFR +notcp 2>&1)
check "AXFR cluster.local over UDP: REFUSED" grep -q "server replied with error 'REFUSED'" <<<"$OUT"
# a real secondary: knotd loads the zone by AXFR
KNOT=""
if command -v knotd >/dev/null && command -v knotc >/dev/null; then
    KNOT=$(free_port)
    mkdir -p "$TMP/knot"
    cat > "$TMP/knot/knot.conf" <<EOF
server:
    rundir: "$TMP/knot"
    listen: 127.0.0.1@$KNOT
database:
    storage: "$TMP/knot"
remote:
  - id: topodns
    address: 127.0.0.1@$PORT
template:
  - id: default
    storage: "$TMP/knot"
zone:
  - domain: cluster.local
    master: topodns
EOF
    knotd -c "$TMP/knot/knot.conf" > "$TMP/knot/knot.log" 2>&1 &
    PIDS+=($!)
    kq() { dig @127.0.0.1 -p "$KNOT" +time=1 +tries=1 +short "$@" 2>/dev/null; }
    check "knotd as a secondary: cluster.local loaded by AXFR" until_ok 10 eval \
        '[ "$(kq svc1.$S A)" = 10.0.0.1 ]'
    # six SRV records sent, two of them alike (dup-name): a set of five
    check "…the headless SRV records too" eval '[ "$(kq _http._tcp.hdls1.$S SRV | grep -c " 80 ")" = 5 ]'
else
    echo "note: knotd missing: no secondary tested"
fi
# a new Service shows up in the next transfer. The SOA serial is the
# second of the store's last change (as CoreDNS's): change the zone in a
# later second than the one the secondary holds, or it stays up to date
until_ok 3 eval '[ "$(date +%s)" -gt "$serial" ]'
K apply --validate=false -f - > /dev/null <<'YAML'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: testns}
spec:
  type: ClusterIP
  clusterIP: 10.0.0.77
  clusterIPs: [10.0.0.77]
  ports: [{name: Web, protocol: UDP, port: 8080}]
YAML
check "a Service created with kubectl is in the next AXFR (port label lower-cased)" until_ok 5 eval \
    'axfr cluster.local | grep -q "^_web._udp.web.$S 5 IN SRV 0 100 8080 web.$S$"'
if [ -n "$KNOT" ]; then
    refreshed() {
        knotc -s "$TMP/knot/knot.sock" zone-refresh cluster.local > /dev/null
        sleep 0.5
        [ "$(kq web.$S A)" = 10.0.0.77 ]
    }
    check "knotd refreshes (its IXFR answered as AXFR) and serves the new Service" until_ok 3 refreshed
    check "…topodns saw an IXFR" grep -q '"IXFR IN cluster.local. tcp' "$LOG"
fi
stop_topodns

# ---- without transfer: REFUSED by kubernetes (acceptance row 78) and file ----
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
}
example.org:{\$PORT} {
    file $ZONE
}" || exit 1
xfr cluster.local AXFR
check "no transfer plugin: AXFR cluster.local REFUSED" eval 'grep -q "^msg 1 REFUSED aa=0 an=0 " <<<"$OUT"'
OUT=$(kdig @127.0.0.1 -p "$PORT" cluster.local AXFR +notcp 2>&1)
check "…over UDP too" grep -q "server replied with error 'REFUSED'" <<<"$OUT"
xfr example.org AXFR
check "no transfer plugin: AXFR of a file zone REFUSED" eval 'grep -q "^msg 1 REFUSED aa=0 an=0 " <<<"$OUT"'
finish
