#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_external.sh — the k8s_external plugin through the real binary against
# kubesim: external IPs, load-balancer ingress (an IP, or a hostname looked
# up through the server, also in bursts of queries that wait on it), SRV,
# headless endpoints, PTR, the apex records, NXDOMAIN/NODATA shapes,
# fallthrough, and the Corefile errors. The
# expected answers are those of CoreDNS's own k8s_external tests (same
# Services, k8s_external.yaml), plus the cases those tables do not cover.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
has_plugin k8s_external || { echo "FAIL: k8s_external not in -plugins"; exit 1; }

# ---- Corefile errors ------------------------------------------------------
bad() {   # bad NAME 'Corefile' 'expected message regex'
    local c=$TMP/bad.$RANDOM
    printf '%s\n' "$2" > "$c"
    OUT=$(timeout 10 "$TOPODNS" -conf "$c" -dns.port "$(free_port)" 2>&1)
    WANT=$3
    check "$1" eval 'grep -qE -- "$WANT" <<<"$OUT"'
}
bad "ttl out of range" ". {
    kubernetes
    k8s_external example.com {
        ttl 3601
    }
}" ":4: .*ttl must be in range \[0, 3600\]: 3601"
bad "ttl not a number" ". {
    kubernetes
    k8s_external example.com {
        ttl five
    }
}" ":4: .*strconv.Atoi: parsing \"five\": invalid syntax"
bad "unknown property" ". {
    kubernetes
    k8s_external example.com {
        resync 1
    }
}" "unknown property 'resync'"
bad "apex without a value" ". {
    kubernetes
    k8s_external example.com {
        apex
    }
}" ":4: .*[Ww]rong argument count"
bad "no kubernetes plugin in the block" ". {
    k8s_external example.com
}" "kubernetes plugin not loaded"

# ---- the cluster --------------------------------------------------------------
start_kubesim
load_fixture "$KDATA/k8s_external.yaml"
export TOPODNS_SELF_IPS=10.9.8.7
cat > "$TMP/example.org.db" <<'Z'
$ORIGIN example.org.
@       3600 IN SOA ns.example.org. admin.example.org. 7 3600 600 86400 60
@       3600 IN NS  ns.example.org.
from-file.testns 60 IN A 9.9.9.9
Z
start_topodns ".:{\$PORT} {
    hosts {
        7.7.7.7 lb.example.test
        fallthrough
    }
    kubernetes cluster.local {
        endpoint $KS
        namespaces testns kube-system
    }
    k8s_external example.com in-addr.arpa {
        headless
    }
    transfer example.com {
        to 127.0.0.1
    }
}
example.org:{\$PORT} {
    kubernetes cluster.local {
        endpoint $KS
    }
    k8s_external {
        apex ns-here
        ttl 30
        fallthrough
    }
    file $TMP/example.org.db
}" || exit 1
until_ok 5 eval 'q svc1.testns.example.com A; answer_has "1\.2\.3\.4"' || echo "note: not synced after 5 s"

# records of a section in order, as "owner ttl type rdata" (class dropped)
recs() { section "$1" | awk '{ $3 = ""; print }' | tr -s ' \t' ' ' | tr '\n' '|'; }
sorted() { section "$1" | awk '{ $3 = ""; print }' | tr -s ' \t' ' ' | sort | tr '\n' '|'; }
is() { [ "$(recs "$1")" = "$2" ]; }
is_sorted() { [ "$(sorted "$1")" = "$2" ]; }
SOA_RE='^example\.com\.[[:space:]]+5[[:space:]]+IN[[:space:]]+SOA[[:space:]]+ns1\.dns\.example\.com\. hostmaster\.dns\.example\.com\. [0-9]+ 7200 1800 86400 5$'
soa_only() { answer_count 0 && authority_count 1 && authority_has "$SOA_RE"; }
Z=testns.example.com

# ---- CoreDNS's table ----------------------------------------------------------
q 4.3.2.1.in-addr.arpa PTR
check "PTR of an external IP" eval 'rcode_is NOERROR && aa_set && is ANSWER "4.3.2.1.in-addr.arpa. 5 PTR svc1.testns.example.com.|"'
q svc1.$Z PTR
check "PTR for a Service name: NODATA" eval 'rcode_is NOERROR && aa_set && soa_only'
q not-existing.$Z PTR
check "PTR for a missing Service: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q 9.9.9.9.in-addr.arpa PTR
check "PTR of an address no Service has: NXDOMAIN" eval 'rcode_is NXDOMAIN && authority_count 1'
q svc1.$Z A
check "A of externalIPs" eval 'rcode_is NOERROR && aa_set && is ANSWER "svc1.$Z. 5 A 1.2.3.4|" && authority_count 0'
q svc1.$Z SRV
check "SRV at the Service name" eval 'rcode_is NOERROR && is ANSWER "svc1.$Z. 5 SRV 0 100 80 svc1.$Z.|" && is ADDITIONAL "svc1.$Z. 5 A 1.2.3.4|"'
q '*._not-udp-or-tcp.svc1.'$Z SRV
check "SRV with an unknown protocol: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q _http._tcp.svc1.$Z SRV
check "SRV _http._tcp" eval 'rcode_is NOERROR && is ANSWER "_http._tcp.svc1.$Z. 5 SRV 0 100 80 svc1.$Z.|" && is ADDITIONAL "svc1.$Z. 5 A 1.2.3.4|"'
q svc1.$Z AAAA
check "AAAA of an IPv4-only Service: NODATA" eval 'rcode_is NOERROR && soa_only'
q svc0.$Z AAAA
check "AAAA of a missing Service: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q svc0.$Z A
check "A of a missing Service: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q svc0.svc-nons.example.com A
check "missing namespace: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q svc6.$Z AAAA
check "AAAA of an IPv6 external IP" eval 'rcode_is NOERROR && is ANSWER "svc6.$Z. 5 AAAA 1:2::5|"'
q _http._tcp.svc6.$Z SRV
check "SRV with an AAAA additional" eval 'is ANSWER "_http._tcp.svc6.$Z. 5 SRV 0 100 80 svc6.$Z.|" && is ADDITIONAL "svc6.$Z. 5 AAAA 1:2::5|"'
q svc6.$Z SRV
check "SRV at the name, AAAA additional" eval 'is ANSWER "svc6.$Z. 5 SRV 0 100 80 svc6.$Z.|" && is ADDITIONAL "svc6.$Z. 5 AAAA 1:2::5|"'
q testns.example.com A
check "the namespace name: NODATA" eval 'rcode_is NOERROR && soa_only'
q testns.example.com SOA
check "SOA below the apex: NODATA with the SOA" eval 'rcode_is NOERROR && soa_only'
q svc11.$Z A
check "LoadBalancer Service's externalIPs" eval 'is ANSWER "svc11.$Z. 5 A 2.3.4.5|"'
q _http._tcp.svc11.$Z SRV
check "LoadBalancer SRV" eval 'is ANSWER "_http._tcp.svc11.$Z. 5 SRV 0 100 80 svc11.$Z.|" && is ADDITIONAL "svc11.$Z. 5 A 2.3.4.5|"'
q svc12.$Z A
check "ingress hostname: CNAME, then its A looked up through the server" eval \
    'rcode_is NOERROR && aa_set && is ANSWER "svc12.$Z. 5 CNAME lb.example.test.|lb.example.test. 3600 A 7.7.7.7|"'
q svc12.$Z AAAA
check "ingress hostname without AAAA: the CNAME alone" eval 'rcode_is NOERROR && is ANSWER "svc12.$Z. 5 CNAME lb.example.test.|"'
q _http._tcp.svc12.$Z SRV
check "ingress hostname SRV: the hostname as target, its A additional" eval \
    'is ANSWER "_http._tcp.svc12.$Z. 5 SRV 0 100 80 lb.example.test.|" && is ADDITIONAL "lb.example.test. 3600 A 7.7.7.7|"'
q svc12.$Z SRV +tcp
check "ingress hostname SRV over TCP" eval 'is ANSWER "svc12.$Z. 5 SRV 0 100 80 lb.example.test.|"'
# a burst: 300 queries whose answers wait on lookups of the ingress
# hostname (SRV at _http._tcp, and A through the CNAME), 30 sent before any
# reply is read so that the server takes them in batches from its request
# pool; every reply must be an answer (QR) to one of them, with its records
OUT=$(timeout 30 /usr/bin/python3 - "$PORT" "$Z" <<'PY'
import socket, struct, sys
port, zone = int(sys.argv[1]), sys.argv[2]
def wire(n):
    return b"".join(bytes([len(l)]) + l.encode() for l in n.split(".") if l) + b"\0"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(3)
ok = 0
for burst in range(10):
    sent = {}
    for i in range(30):
        qid = burst * 30 + i + 1
        srv = i % 3 != 2
        qname = ("_http._tcp.svc12." if srv else "svc12.") + zone
        sent[qid] = srv
        s.sendto(struct.pack("!HHHHHH", qid, 0x0120, 1, 0, 0, 0) + wire(qname) +
                 struct.pack("!HH", 33 if srv else 1, 1), ("127.0.0.1", port))
    while sent:
        try:
            d = s.recv(4096)
        except socket.timeout:
            print("no reply to %d queries" % len(sent)); sys.exit(0)
        qid, fl, qd, an, ns, ar = struct.unpack("!HHHHHH", d[:12])
        if not fl & 0x8000:
            print("datagram without QR, id %d flags %04x" % (qid, fl)); sys.exit(0)
        if qid not in sent:
            print("reply to no query sent: id %d" % qid); sys.exit(0)
        srv = sent.pop(qid)
        if fl & 0xf or (srv and (an, ar) != (1, 1)) or (not srv and an != 2):
            print("id %d: rcode %d answer %d additional %d" % (qid, fl & 0xf, an, ar)); sys.exit(0)
        ok += 1
print("ok %d" % ok)
PY
)
check "300 queries waiting on hostname lookups, in bursts: each answered once, with QR" \
    eval '[ "$OUT" = "ok 300" ]'
q svc-headless.$Z A
check "headless: every ready endpoint" eval 'rcode_is NOERROR && is_sorted ANSWER "svc-headless.$Z. 5 A 1.2.3.4|svc-headless.$Z. 5 A 1.2.3.5|"'
q svc-headless.$Z SRV
check "headless SRV: endpoint targets, weight 50" eval \
    'is_sorted ANSWER "svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-0.svc-headless.$Z.|svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-1.svc-headless.$Z.|" &&
     is_sorted ADDITIONAL "endpoint-svc-0.svc-headless.$Z. 5 A 1.2.3.4|endpoint-svc-1.svc-headless.$Z. 5 A 1.2.3.5|"'
q _http._tcp.svc-headless.$Z SRV
check "headless _http._tcp SRV" eval \
    'is_sorted ANSWER "_http._tcp.svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-0.svc-headless.$Z.|_http._tcp.svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-1.svc-headless.$Z.|"'
q endpoint-svc-0.svc-headless.$Z SRV
check "endpoint SRV" eval 'is ANSWER "endpoint-svc-0.svc-headless.$Z. 5 SRV 0 100 80 endpoint-svc-0.svc-headless.$Z.|" && is ADDITIONAL "endpoint-svc-0.svc-headless.$Z. 5 A 1.2.3.4|"'
q endpoint-svc-1.svc-headless.$Z A
check "endpoint A" eval 'is ANSWER "endpoint-svc-1.svc-headless.$Z. 5 A 1.2.3.5|"'

# ---- the apex (CoreDNS's apex table; our own address stands for the
# ---- Service fronting the server until one exists) -----------------------------
q example.com SOA
check "apex SOA" eval 'rcode_is NOERROR && aa_set && answer_count 1 && section ANSWER | grep -qE "${SOA_RE}"'
q example.com NS
check "apex NS with ns1 glue" eval 'is ANSWER "example.com. 5 NS ns1.dns.example.com.|" && is ADDITIONAL "ns1.dns.example.com. 5 A 10.9.8.7|"'
q example.com SRV
check "apex SRV: NODATA" eval 'rcode_is NOERROR && soa_only'
q dns.example.com SRV
check "dns.<zone>: empty non-terminal" eval 'rcode_is NOERROR && soa_only'
q dns.example.com NS
check "dns.<zone> NS: NODATA" eval 'rcode_is NOERROR && soa_only'
q ns1.dns.example.com NS
check "ns1 NS: NODATA" eval 'rcode_is NOERROR && soa_only'
q ns1.dns.example.com AAAA
check "ns1 AAAA without IPv6: NODATA" eval 'rcode_is NOERROR && soa_only'
q ns1.dns.example.com A
check "ns1 A" eval 'rcode_is NOERROR && aa_set && is ANSWER "ns1.dns.example.com. 5 A 10.9.8.7|"'
q ns2.dns.example.com A
check "other names under dns.<zone>: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q a.ns1.dns.example.com A
check "below ns1: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'

# ---- zone transfer -------------------------------------------------------------
axfr() { dig @127.0.0.1 -p "$PORT" +time=3 +tries=1 example.com AXFR 2>&1 | grep -v '^;' | grep . |
         awk '{ $3 = ""; if ($4 == "SOA") $7 = "SERIAL"; print }' | tr -s ' \t' ' '; }
X=$(axfr)
OUT=$X
check "AXFR: SOA first and last, then NS and ns1's address" eval \
    '[ "$(head -1 <<<"$X")" = "example.com. 5 SOA ns1.dns.example.com. hostmaster.dns.example.com. SERIAL 7200 1800 86400 5" ] &&
     [ "$(tail -1 <<<"$X")" = "$(head -1 <<<"$X")" ] && [ "$(sed -n 2,3p <<<"$X" | tr "\n" "|")" = "example.com. 5 NS ns1.dns.example.com.|ns1.dns.example.com. 5 A 10.9.8.7|" ]'
want="svc1.$Z. 5 A 1.2.3.4
svc1.$Z. 5 SRV 0 100 80 svc1.$Z.
_http._tcp.svc1.$Z. 5 SRV 0 100 80 svc1.$Z.
svc6.$Z. 5 AAAA 1:2::5
svc12.$Z. 5 CNAME lb.example.test.
_http._tcp.svc12.$Z. 5 SRV 0 100 80 lb.example.test.
lbip.$Z. 5 A 3.3.3.3
lbip.$Z. 5 A 4.4.4.4
_dns._udp.lbip.$Z. 5 SRV 0 33 53 lbip.$Z.
noports.$Z. 5 A 5.5.5.5
svc-headless.$Z. 5 A 1.2.3.4
svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-1.svc-headless.$Z.
endpoint-svc-0.svc-headless.$Z. 5 A 1.2.3.4
endpoint-svc-1.svc-headless.$Z. 5 SRV 0 100 80 endpoint-svc-1.svc-headless.$Z.
_http._tcp.svc-headless.$Z. 5 SRV 0 50 80 endpoint-svc-0.svc-headless.$Z."
missing=$(grep -vxF -f <(cat <<<"$X") <<<"$want")
OUT="missing: $missing"
check "AXFR: the records the names answer" test -z "$missing"
OUT=$X
check "AXFR: no record twice, nothing of Services without external addresses" eval \
    '[ -z "$(grep -v " SOA " <<<"$X" | sort | uniq -d)" ] && ! grep -q "^internal\." <<<"$X" && [ "$(grep -c CNAME <<<"$X")" = 1 ]'
OUT=$(dig @127.0.0.1 -p "$PORT" +time=3 +tries=1 in-addr.arpa AXFR 2>&1)
check "AXFR of the reverse zone: not served" grep -q "Transfer failed" <<<"$OUT"

# ---- beyond CoreDNS's tables ---------------------------------------------------
q lbip.$Z A
check "externalIPs then ingress IPs, duplicates once" eval 'is ANSWER "lbip.$Z. 5 A 3.3.3.3|lbip.$Z. 5 A 4.4.4.4|"'
q _dns._udp.lbip.$Z SRV
check "SRV weight over three addresses: 33" eval 'is ANSWER "_dns._udp.lbip.$Z. 5 SRV 0 33 53 lbip.$Z.|" && is ADDITIONAL "lbip.$Z. 5 A 3.3.3.3|lbip.$Z. 5 A 4.4.4.4|"'
q lbip.$Z SRV
check "SRV per port, weight over six items: 16" eval 'is ANSWER "lbip.$Z. 5 SRV 0 16 53 lbip.$Z.|lbip.$Z. 5 SRV 0 16 80 lbip.$Z.|"'
q _http._udp.lbip.$Z SRV
check "SRV with the wrong protocol: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q noports.$Z A
check "Service without ports: A" eval 'is ANSWER "noports.$Z. 5 A 5.5.5.5|"'
q noports.$Z SRV
check "Service without ports: no SRV (NODATA)" eval 'rcode_is NOERROR && soa_only'
q internal.$Z A
check "Service without external addresses: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q svc1.otherns.example.com A
check "namespace not exposed by the kubernetes plugin: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q endpoint-svc-2.svc-headless.$Z A
check "endpoint not ready: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q anything.svc1.$Z A
check "endpoint name of a non-headless Service: its addresses (as CoreDNS)" eval 'is ANSWER "anything.svc1.$Z. 5 A 1.2.3.4|"'
q a.b.c.svc1.$Z A
check "too long: NXDOMAIN" eval 'rcode_is NXDOMAIN && soa_only'
q SVC1.TestNS.Example.COM A
check "owner as the client spelled it" eval 'rcode_is NOERROR && is ANSWER "SVC1.TestNS.Example.COM. 5 A 1.2.3.4|"'
q svc1.$Z TXT
check "other qtypes: NODATA" eval 'rcode_is NOERROR && soa_only'
q svc1.testns.svc.cluster.local A
check "the kubernetes zone is still served by kubernetes" eval 'rcode_is NOERROR && is ANSWER "svc1.testns.svc.cluster.local. 5 A 10.0.0.1|"'

# ---- apex, ttl and fallthrough (second block) ---------------------------------
q svc1.testns.example.org A
check "ttl 30, zone from the server block" eval 'is ANSWER "svc1.testns.example.org. 30 A 1.2.3.4|"'
q svc1.otherns.example.org A
check "all namespaces exposed in that block" eval 'is ANSWER "svc1.otherns.example.org. 30 A 6.6.6.6|"'
q example.org NS
check "apex ns-here" eval 'is ANSWER "example.org. 30 NS ns1.ns-here.example.org.|" && is ADDITIONAL "ns1.ns-here.example.org. 30 A 10.9.8.7|"'
q example.org SOA
check "apex SOA with apex ns-here" eval 'answer_has "SOA[[:space:]]+ns1\.ns-here\.example\.org\. hostmaster\.ns-here\.example\.org\. [0-9]+ 7200 1800 86400 30$"'
q from-file.testns.example.org A
check "fallthrough: NXDOMAIN goes on to the file plugin" eval 'rcode_is NOERROR && is ANSWER "from-file.testns.example.org. 60 A 9.9.9.9|"'
q nothing.testns.example.org A
check "fallthrough: the file plugin's NXDOMAIN" eval 'rcode_is NXDOMAIN && authority_has "SOA[[:space:]]+ns\.example\.org\."'
q testns.example.org A
check "fallthrough: NODATA is not passed on" eval 'rcode_is NOERROR && answer_count 0 && authority_has "ns1\.ns-here\.example\.org\."'

# ---- the Service fronting this server: its external IPs become ns1's --------
K apply --validate=false -f - >/dev/null <<Y
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: kube-dns, namespace: kube-system}
  spec:
    clusterIP: 10.96.0.10
    externalIPs: [192.0.2.53, "2001:db8::53"]
    ports: [{name: dns, protocol: UDP, port: 53}]
- apiVersion: discovery.k8s.io/v1
  kind: EndpointSlice
  metadata:
    name: kube-dns-abcde
    namespace: kube-system
    labels: {kubernetes.io/service-name: kube-dns}
  addressType: IPv4
  ports: [{name: dns, protocol: UDP, port: 53}]
  endpoints:
  - addresses: [10.9.8.7]
    conditions: {ready: true}
Y
until_ok 5 eval 'q ns1.dns.example.com A; answer_has "192\.0\.2\.53"'
check "ns1 A: the fronting Service's external IP" eval 'is ANSWER "ns1.dns.example.com. 5 A 192.0.2.53|"'
q ns1.dns.example.com AAAA
check "ns1 AAAA: its IPv6 external IP" eval 'is ANSWER "ns1.dns.example.com. 5 AAAA 2001:db8::53|"'
q example.com NS
check "apex NS glue follows" eval 'is_sorted ADDITIONAL "ns1.dns.example.com. 5 A 192.0.2.53|ns1.dns.example.com. 5 AAAA 2001:db8::53|"'

# ---- changes are followed ---------------------------------------------------------
K patch service svc1 -n testns --type=merge -p '{"spec":{"externalIPs":["1.2.3.9"]}}' >/dev/null
until_ok 5 eval 'q svc1.$Z A; answer_has "1\.2\.3\.9"'
check "a changed externalIPs list is served" eval 'is ANSWER "svc1.$Z. 5 A 1.2.3.9|"'
K patch service svc11 -n testns --subresource=status --type=merge \
    -p '{"status":{"loadBalancer":{"ingress":[{"ip":"8.8.4.4"}]}}}' >/dev/null
until_ok 5 eval 'q svc11.$Z A; answer_has "8\.8\.4\.4"'
check "load-balancer status through the status subresource" eval 'is ANSWER "svc11.$Z. 5 A 2.3.4.5|svc11.$Z. 5 A 8.8.4.4|"'

finish
