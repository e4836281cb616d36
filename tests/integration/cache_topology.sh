#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cache_topology.sh — the cache in front of kubernetes with `topology` (the
# kubeadm Corefile with topology added): kubesim serves the three-zone
# fixture, and dig plays pods in different zones and on different nodes
# (-b 127.0.z.n). Within the TTL, clients in different zones each get their
# own zone's endpoints (zone variants), clients on different nodes their own
# node's (node variants, internalTrafficPolicy Local), clients in the same
# zone share the cached variant, and client-independent answers are shared
# by everyone; metrics show which were hits.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
start_kubesim
load_fixture "$top_srcdir/tests/data/topology/cluster.yaml"

METRICS=$(free_port)
start_topodns ".:{\$PORT} {
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        endpoint $KS
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    topology
    prometheus 127.0.0.1:$METRICS
    cache 30
    loadbalance
}" || exit 1

S=prod.svc.cluster.local
addrs() {
    dig @127.0.0.1 -p "$PORT" -b "$2" +time=2 +tries=1 +short "$1.$S" A | sort | tr '\n' ' ' | sed 's/ $//'
}
expect() { local got; got=$(addrs "$2" "$3"); OUT="got '$got' want '$4'"; check "$1" test "$got" = "$4"; }
metric() {
    curl -s "http://127.0.0.1:$METRICS/metrics" | awk -v n="$1" -v t="type=\"$2\"" '
        $1 ~ "^"n"[{]" && index($1, t) { s += $2 } END { print s + 0 }'
}
requests() {
    curl -s "http://127.0.0.1:$METRICS/metrics" | awk '$1 ~ /^coredns_cache_requests_total[{]/ { s += $2 } END { print s + 0 }'
}
for i in $(seq 1 50); do
    [ -n "$(addrs hinted 127.0.9.9)" ] && [ -n "$(addrs auto 127.0.1.1)" ] && break
    sleep 0.1
done
sleep 0.2

# zone-dependent answers (EndpointSlice hints)
h0=$(metric coredns_cache_hits_total success)
T0=$(now)      # the zone-a variant is stored after this
expect "zone-a client: zone-a endpoints"     hinted 127.0.1.1 "10.20.2.1 10.20.2.2"
expect "zone-b client within the TTL: its own zone, not zone-a's cached answer" \
                                             hinted 127.0.2.2 "10.20.2.3"
expect "zone-c client: its own zone"         hinted 127.0.3.2 "10.20.2.4"
h1=$(metric coredns_cache_hits_total success)
OUT="hits $h0 -> $h1"; check "first asks per zone were misses" [ "$h1" = "$h0" ]
expect "other zone-a node: zone-a variant"   hinted 127.0.1.2 "10.20.2.1 10.20.2.2"
expect "zone-b again"                        hinted 127.0.2.2 "10.20.2.3"
expect "unknown again"                       hinted 127.0.9.9 "10.20.2.1 10.20.2.2 10.20.2.3 10.20.2.4"
h2=$(metric coredns_cache_hits_total success)
OUT="hits $h1 -> $h2"; check "same zone (and unknown) served from the cache" [ "$h2" = "$((h1 + 3))" ]
expect "unknown client (asked while waiting for the sync): every endpoint" \
                                             hinted 127.0.9.9 "10.20.2.1 10.20.2.2 10.20.2.3 10.20.2.4"
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.2 +time=2 +tries=1 hinted.$S A)
# 30 at most, and aged by no more than the time that really passed since
# the variant was stored (28..30 on an idle machine)
check "cached variant keeps the kubernetes TTL (30, counting down)" \
    ttl_aged "$(section ANSWER | awk '{print $2; exit}')" 30 0 "$T0"
check "cached variant has AA" aa_set

# node-dependent answers (internalTrafficPolicy: Local)
expect "itp on a1"                           itp 127.0.1.1 "10.20.3.1"
expect "itp on b1 within the TTL: its own node" itp 127.0.2.1 "10.20.3.2"
h3=$(metric coredns_cache_hits_total success)
expect "itp on a1 again (hit)"               itp 127.0.1.1 "10.20.3.1"
h4=$(metric coredns_cache_hits_total success)
OUT="hits $h3 -> $h4"; check "node variant served from the cache" [ "$h4" = "$((h3 + 1))" ]

# client-independent answers are shared
expect "plain from zone-a"                   plain 127.0.1.1 "10.20.1.1 10.20.1.2 10.20.1.3"
h5=$(metric coredns_cache_hits_total success)
expect "plain from zone-b: shared entry"     plain 127.0.2.2 "10.20.1.1 10.20.1.2 10.20.1.3"
expect "plain from unknown: shared entry"    plain 127.0.9.9 "10.20.1.1 10.20.1.2 10.20.1.3"
h6=$(metric coredns_cache_hits_total success)
OUT="hits $h5 -> $h6"; check "independent answer shared by every client" [ "$h6" = "$((h5 + 2))" ]
finish
