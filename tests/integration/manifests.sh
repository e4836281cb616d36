#!/bin/bash
# manifests.sh — conf/kube-dns.yaml is what an operator deploys: check that
# its RBAC grants everything topodns actually watches (read back from
# topodns's own per-resource watch metrics) plus events/create, and run the
# Corefile of its ConfigMap — ports and the API endpoint rewritten for
# loopback, forward pointed at a second topodns serving example.org — against
# a kubesim cluster (the kubeadm Corefile with topology, end to end):
# it must become ready, answer headless Services by topology, forward other
# names, and cache both (per zone for the topology answers).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

MANIFESTS=$top_srcdir/conf/kube-dns.yaml
/usr/bin/python3 - "$MANIFESTS" "$TMP" <<'PY' || { echo "cannot read $MANIFESTS"; exit 1; }
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
out = sys.argv[2]
kinds = sorted(d["kind"] for d in docs)
open(out + "/kinds", "w").write(" ".join(kinds) + "\n")
with open(out + "/rbac", "w") as f:
    for d in docs:
        if d["kind"] == "ClusterRole":
            for r in d["rules"]:
                for g in r["apiGroups"]:
                    for res in r["resources"]:
                        for v in r["verbs"]:
                            f.write("%s/%s %s\n" % (g or "core", res, v))
for d in docs:
    if d["kind"] == "ConfigMap":
        open(out + "/Corefile.orig", "w").write(d["data"]["Corefile"])
PY
OUT=$(cat "$TMP/kinds")
check "manifests: the standard set of objects" test "$OUT" = \
    "ClusterRole ClusterRoleBinding ConfigMap Deployment Service ServiceAccount"

start_kubesim --load "$top_srcdir/tests/data/topology/cluster.yaml"
# a real upstream for forward: a second topodns serving example.org from a file
start_topodns "example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
}" || exit 1
UP=$PORT
RP=$(free_port); HP=$(free_port); MP=$(free_port)
sed -e 's/^\.:53 {/.:{$PORT} {/' \
    -e "s/^\( *\)ready\$/\1ready 127.0.0.1:$RP/" \
    -e "s/^\( *\)health {/\1health 127.0.0.1:$HP {/" \
    -e "s/^\( *\)prometheus :9153/\1prometheus 127.0.0.1:$MP/" \
    -e "s#^\( *\)kubernetes cluster.local in-addr.arpa ip6.arpa {#&\n\1    endpoint $KS#" \
    -e "s#forward \. /etc/resolv.conf#forward . 127.0.0.1:$UP#" \
    "$TMP/Corefile.orig" > "$TMP/Corefile.test"
for p in cache loop forward; do      # plugins still being written are left out, loudly
    has_plugin "$p" && continue
    echo "note: $p not built: its directive removed"
    awk -v p="$p" '$1 == p { skip = ($NF == "{"); next } skip { if ($1 == "}") skip = 0; next } { print }' \
        "$TMP/Corefile.test" > "$TMP/Corefile.cut" && mv "$TMP/Corefile.cut" "$TMP/Corefile.test"
done
start_topodns "$(cat "$TMP/Corefile.test")" || exit 1

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready")" = 200 ]; }
check "the ConfigMap's Corefile: ready" until_ok 5 ready
S=prod.svc.cluster.local
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "the ConfigMap's Corefile: topology answers per zone" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.2.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "…and the zone-b pod gets zone-b's" test "$OUT" = "10.20.2.3 "

# other names go through forward to the upstream, and are cached
hits() { curl -s "http://127.0.0.1:$MP/metrics" | awk '$1 ~ /^coredns_cache_hits_total[{]/ { s += $2 } END { print s + 0 }'; }
q www.example.org A
check "forward: www.example.org from the upstream" answer_has "192\.0\.2\.10"
h0=$(hits)
q www.example.org A
check "cache: the second ask is a hit" eval '[ "$(hits)" -gt "$h0" ] && answer_has "192\.0\.2\.10"'
# cluster names cached per topology: both zones asked above; asked again
# within the TTL each zone gets its own variant from the cache
h0=$(hits)
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.2 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "cache+topology: another zone-a pod gets zone-a's" test "$OUT" = "10.20.2.1 10.20.2.2 "
check "…from the cache" test "$(hits)" -gt "$h0"
h0=$(hits)
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.2.2 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "cache+topology: another zone-b pod gets zone-b's" test "$OUT" = "10.20.2.3 "
check "…from the cache too" test "$(hits)" -gt "$h0"

# every resource topodns watches is granted list+watch: touch one object of
# each kind; each watch that sees the event shows up in topodns's
# per-resource last-event metric
K annotate namespace prod touched=1 > /dev/null
K annotate service hinted -n prod touched=1 > /dev/null
K annotate endpointslice hinted-x1 -n prod touched=1 > /dev/null
K annotate pod ca1 -n clients touched=1 > /dev/null
K annotate node a1 touched=1 > /dev/null
seen() {
    M=$(curl -s "http://127.0.0.1:$MP/metrics")
    [ "$(grep -c '^topodns_kubernetes_last_event_timestamp_seconds{' <<<"$M")" -ge 5 ]
}
until_ok 3 seen
WATCHED=$(sed -n 's/^topodns_kubernetes_last_event_timestamp_seconds{resource="\([a-z]*\)"}.*/\1/p' <<<"$M" | sort -u)
OUT="watched: $(echo $WATCHED)"
check "topodns watched services, endpointslices, namespaces, pods and nodes" \
    test "$(echo $WATCHED)" = "endpointslices namespaces nodes pods services"
for r in $WATCHED; do
    g=core; [ "$r" = endpointslices ] && g=discovery.k8s.io
    OUT=$(cat "$TMP/rbac")
    check "RBAC: list $g/$r" grep -qx "$g/$r list" "$TMP/rbac"
    check "RBAC: watch $g/$r" grep -qx "$g/$r watch" "$TMP/rbac"
done
check "RBAC: create core/events (topology events)" grep -qx "core/events create" "$TMP/rbac"
finish
