#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# corefiles.sh — Corefiles that Kubernetes distributions and CoreDNS's
# READMEs ship (tests/data/corefiles/*.Corefile, kubeadm's is
# conf/Corefile.kubeadm and k8s_acceptance.sh's) load unchanged and answer as
# CoreDNS does. Each runs on loopback with only these edits: the :53 keys on
# a free port, health/ready/prometheus on free loopback ports (lameduck
# 100ms instead of 5s, so that each stop is quick), `endpoint`
# (kubesim) in the kubernetes stanza, forward to a second topodns instead of
# /etc/resolv.conf, /etc/coredns/ files from the test's directory, and for
# the IPv6 cluster `bind 127.0.0.1 ::1`.
# - kubespray: `kubernetes cluster.local 10.233.0.0/18` (64 reverse zones):
#   PTRs inside the range from the cluster, outside it from upstream; CIDR
#   server keys of any length; invalid CIDRs stop startup at file:line;
# - kops IPv6: dns64 synthesizes AAAA for IPv6 clients (cluster and upstream
#   names);
# - hosts wildcards: *.apps answers one label below, no PTR for the owner;
# - loadbalance weighted: the first address drawn by the weight file.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
CF=$top_srcdir/tests/data/corefiles
start_kubesim
load_fixture "$CF/objects.yaml"

# the upstream forward goes to
start_topodns ".:{\$PORT} {
    hosts {
        10.233.64.1 outside.interwebs.test
        10.233.0.99 inside-unknown.interwebs.test
        192.0.2.7 v4only.interwebs.test
    }
}" || exit 1
UP=$PORT

mkdir -p "$TMP/coredns"
# edited NAME: the Corefile with the loopback edits (ports: fresh_ports first)
fresh_ports() { HP=$(free_port); RP=$(free_port); MP=$(free_port); }
edited() {
    sed -e 's/:53 {$/:{$PORT} {/' \
        -e "s/^\( *\)health {/\1health 127.0.0.1:$HP {/" -e 's/lameduck 5s/lameduck 100ms/' \
        -e "s/^\( *\)ready\$/\1ready 127.0.0.1:$RP/" \
        -e "s/^\( *\)prometheus :9153/\1prometheus 127.0.0.1:$MP/" \
        -e "s#^\( *\)\(kubernetes cluster\.local.*{\)\$#\1\2\n\1    endpoint $KS#" \
        -e "s#forward \. /etc/resolv.conf#forward . 127.0.0.1:$UP#" \
        -e "s#/etc/coredns/#$TMP/coredns/#g" "$CF/$1.Corefile"
}
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready")" = 200 ]; }
synced() { until_ok 10 ready; }

# ------------------------------------------------------------------ kubespray
fresh_ports
start_topodns "$(edited kubespray)" || exit 1
check "kubespray: loads and gets ready" synced
check "kubespray: no zone refused" eval '! grep -qi "invalid" "$LOG"'
q kube-dns.kube-system.svc.cluster.local A
check "kubespray: a Service's A" answer_has 'A[[:space:]]+10\.233\.0\.3$'
q -x 10.233.0.3
check "kubespray: PTR in the first /24 of the /18 (cluster)" eval 'aa_set && answer_has "PTR[[:space:]]+kube-dns\.kube-system\.svc\.cluster\.local\.$"'
q -x 10.233.63.200
check "kubespray: PTR in the last /24 of the /18 (cluster)" answer_has 'PTR[[:space:]]+web\.apps\.svc\.cluster\.local\.$'
q -x 10.233.64.1
check "kubespray: PTR past the /18 goes on to forward (upstream)" answer_has 'PTR[[:space:]]+outside\.interwebs\.test\.$'
q -x 10.233.0.99
check "kubespray: no Service at an address inside: fallthrough in-addr.arpa (upstream)" \
    answer_has 'PTR[[:space:]]+inside-unknown\.interwebs\.test\.$'
stop_topodns

# server keys written as CIDRs of any length, beside a catch-all block: a
# name inside 10.0.0.0/17 goes to its block, one in the other half of the
# /16 to the catch-all
start_topodns "10.0.0.0/17:{\$PORT} fd00::/9:{\$PORT} {
    hosts {
        10.0.5.5 inside.cidr.test
        10.0.200.5 wrong-block.cidr.test
        fd00::5 v6-inside.cidr.test
    }
}
.:{\$PORT} {
    whoami
}" || exit 1
q -x 10.0.5.5
check "CIDR key /17: a name inside is the block's" answer_has 'PTR[[:space:]]+inside\.cidr\.test\.$'
q -x 10.0.200.5
check "CIDR key /17: the other half of the /16 is not" eval '! answer_has PTR && additional_has "_udp\."'
q 0.0.10.in-addr.arpa SOA
check "CIDR key /17: the /24 zone 0.0.10 is the block's (hosts answers, no whoami)" eval '! additional_has "_udp\."'
q 10.in-addr.arpa SOA
check "CIDR key /17: the parent /16 is not" additional_has '_udp\.'
q -x fd00::5
check "CIDR key fd00::/9 (8 nibble zones): a name inside" answer_has 'PTR[[:space:]]+v6-inside\.cidr\.test\.$'
stop_topodns

# a really invalid CIDR stops startup at its file:line, and says so
bad() {   # NAME TEXT EXPECTED
    printf '%b' "$2" > "$TMP/C.$1"
    OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.$1" 2>&1); rc=$?
    check "$1: startup stops" eval '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
    check "$1: file:line and 'invalid CIDR'" grep -qF "C.$1:$3" <<<"$OUT"
}
bad cidr-arg ".:$(free_port) {\n    kubernetes cluster.local 10.233.0.0/33 {\n        endpoint $KS\n    }\n}\n" \
    "2: invalid CIDR '10.233.0.0/33'"
bad cidr-key "10.0.0.0/40:$(free_port) {\n    whoami\n}\n" "1: invalid CIDR in server key near '10.0.0.0/40:"
bad cidr-key-sign "10.0.0.0/+8:$(free_port) {\n    whoami\n}\n" "1: invalid CIDR in server key near '10.0.0.0/+8:"
bad cidr-cache ".:$(free_port) {\n    cache 30 10.0.0.0/8/8\n    whoami\n}\n" "2: plugin/cache: invalid CIDR '10.0.0.0/8/8'"

# ------------------------------------------------------------------ kops IPv6
if ip -6 addr show lo 2>/dev/null | grep -q '::1/128'; then
    fresh_ports
start_topodns "$(edited kops-ipv6 | sed 's/^\(\.:{\$PORT} {\)$/\1\n    bind 127.0.0.1 ::1/')" || exit 1
    check "kops IPv6: loads and gets ready" synced
    q6() { OUT=$(dig @::1 -p "$PORT" +time=2 +tries=1 "$@" 2>&1); }
    q6 kube-dns.kube-system.svc.cluster.local AAAA
    check "kops IPv6: a cluster Service's AAAA synthesized from its ClusterIP (64:ff9b::/96)" \
        answer_has 'AAAA[[:space:]]+64:ff9b::ae9:3$'
    q6 v4only.interwebs.test AAAA
    check "kops IPv6: an upstream IPv4-only name gets a synthesized AAAA" answer_has 'AAAA[[:space:]]+64:ff9b::c000:207$'
    q v4only.interwebs.test AAAA
    check "kops IPv6: an IPv4 client is not translated" eval '! answer_has AAAA'
    q6 -x 64:ff9b::c000:207
    check "kops IPv6: a PTR under the prefix is left to the chain (no synthesis)" eval '! answer_has PTR'
    stop_topodns
else
    echo "note: no IPv6 loopback: the kops IPv6 Corefile is not run"
fi

# ------------------------------------------------------------------ hosts wildcards
echo "10.0.0.12 db.example.com" > "$TMP/coredns/custom.hosts"
fresh_ports
start_topodns "$(edited hosts-wildcard)" || exit 1
check "hosts wildcards: loads and gets ready" synced
q grafana.apps.example.com A
check "hosts wildcards: *.apps answers a name one label below" answer_has '^grafana\.apps\.example\.com\.[[:space:]]+[0-9]+[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.10$'
q console.apps.example.com A
check "hosts wildcards: the explicit entry wins" eval 'answer_count 1 && answer_has "A[[:space:]]+10\.0\.0\.11$"'
q apps.example.com A
check "hosts wildcards: the wildcard's parent is not answered by it" eval '! answer_has "10\.0\.0\.10"'
q -x 10.0.0.10
check "hosts wildcards: no PTR for a wildcard owner" eval '! answer_has "\*"'
q -x 10.0.0.11
check "hosts wildcards: PTR for the explicit name" answer_has 'PTR[[:space:]]+console\.apps\.example\.com\.$'
q db.example.com A
check "hosts wildcards: the hosts file too" answer_has 'A[[:space:]]+10\.0\.0\.12$'
q kube-dns.kube-system.svc.cluster.local A
check "hosts wildcards: the cluster still answers" answer_has 'A[[:space:]]+10\.233\.0\.3$'
stop_topodns

# ------------------------------------------------------------------ loadbalance weighted
cat > "$TMP/coredns/db.example.com" <<'Z'
$ORIGIN example.com.
@   3600 IN SOA sns.dns.icann.org. noc.dns.icann.org. 2024010101 7200 3600 1209600 3600
@   3600 IN NS  a.iana-servers.net.
www 3600 IN A   100.64.1.1
www 3600 IN A   100.64.1.2
www 3600 IN A   100.64.1.3
Z
printf 'www.example.com\n100.64.1.1 3\n100.64.1.2 1\n100.64.1.3 2\n' > "$TMP/coredns/db.example.com.weights"
fresh_ports
start_topodns "$(edited loadbalance-weighted)" || exit 1
check "loadbalance weighted: loads and gets ready" synced
args=(); for i in $(seq 1 300); do args+=(www.example.com A); done
T=$(dig @127.0.0.1 -p "$PORT" +noall +answer "${args[@]}" | awk '$4 == "A" { print $5 }' | awk 'NR % 3 == 1')
n1=$(grep -cx 100.64.1.1 <<<"$T"); n2=$(grep -cx 100.64.1.2 <<<"$T"); n3=$(grep -cx 100.64.1.3 <<<"$T")
OUT="first addresses of 300: .1=$n1 .2=$n2 .3=$n3"
echo "$OUT"
check "loadbalance weighted: 300 answers" [ $((n1 + n2 + n3)) -eq 300 ]
check "loadbalance weighted: weight 3 first most (about 150), weight 1 least (about 50)" \
    eval '[ "$n1" -gt "$n3" ] && [ "$n3" -gt "$n2" ] && [ "$n2" -gt 10 ] && [ "$n1" -ge 110 ] && [ "$n1" -le 190 ]'
q kube-dns.kube-system.svc.cluster.local A
check "loadbalance weighted: the cluster block still answers" answer_has 'A[[:space:]]+10\.233\.0\.3$'
stop_topodns
finish
