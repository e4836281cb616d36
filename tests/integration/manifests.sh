#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# manifests.sh — conf/kubernetes/ is what an operator deploys. The manifests
# rendered by conf/kubernetes/render:
#   - have the objects and settings of the cluster DNS (CoreDNS's names,
#     labels, ports and probes; the hardened pod; PodDisruptionBudget,
#     spreading, trafficDistribution), with the flags' values filled in;
#   - round-trip through kubesim with `kubectl apply -f` (validated against
#     kubesim's OpenAPI document, no --validate=false; re-applied: nothing
#     changes) and come back from `kubectl get` as rendered;
#   - grant exactly what topodns watches (read back from topodns's own
#     per-resource watch metrics), plus events/create only with --events;
#   - carry a ConfigMap Corefile that topodns loads against kubesim (ports
#     and the API endpoint rewritten for loopback, forward pointed at a
#     second topodns serving example.org): ready, the applied kube-dns
#     Service answers with its clusterIP, headless Services by topology,
#     other names forwarded and cached, cluster names never taken from the
#     cache (kubeadm's `disable success|denial cluster.local`);
#   - --autoscale hpa: an autoscaling/v2 HorizontalPodAutoscaler on CPU for
#     Deployment coredns; --autoscale linear: the cluster-proportional-
#     autoscaler's kube-dns-autoscaler ConfigMap (kube-dns's linear
#     parameters), ServiceAccount, RBAC and Deployment; neither leaves a
#     replica count on coredns; both applied to kubesim and read back;
#   - node-local: two node-local caches (a zone-a and a zone-b node) in
#     front of the central topodns; with --ecs (forward's add_client_subnet
#     and the central's client_subnet) each pod gets its own zone's
#     endpoints, without it the central sees only the cache;
#   - node-local --node-mode: the cache answers the cluster domain itself in
#     node-local mode (NODE_NAME from the downward API): a client gets its
#     node's zone's endpoints, no pod is asked for, nodes only by name, and
#     every API request it makes is granted by its ClusterRole;
#   - --locate SOURCES: the `locate` line in the topology stanza (node-local
#     --node-mode too); without pods the ClusterRole loses pods and the
#     memory formula its pod term, cilium / calico add get/list/watch on
#     ciliumnodes / blockaffinities; bad words exit 2; the rendered
#     `--locate podcidr,endpoints` Corefile answers per zone against kubesim
#     (nodes given podCIDRs) and receives nothing it is not granted, no pods.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube

RENDER=$top_srcdir/conf/kubernetes/render

# ---------------------------------------------------------------- render
OUT=$("$RENDER" --cluster-ip 1.2.3 2>&1); rc=$?
check "render: a bad value exits 2 and names the flag" eval '[ $rc -eq 2 ] && grep -q -- "--cluster-ip" <<<"$OUT"'
OUT=$("$RENDER" --nonsense 2>&1); rc=$?
check "render: an unknown flag exits 2" eval '[ $rc -eq 2 ] && grep -q -- "--nonsense" <<<"$OUT"'

"$RENDER" --cluster-ip 10.96.0.10 --domain cluster.local --image registry.example/topodns:1.0 \
    --replicas 3 --events --client-subnet 127.0.0.1/32 \
    --pods 150000 --services 10000 --endpoints 150000 --nodes 5000 > "$TMP/kube-dns.yaml"
"$RENDER" > "$TMP/kube-dns-plain.yaml"

# facts about a rendered file, one "key value" per line, for the checks below
facts() {
    /usr/bin/python3 - "$1" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
print("kinds", " ".join(sorted(d["kind"] for d in docs)))
print("leftover", sum(open(sys.argv[1]).read().count(m) for m in ("__", "#@")))
by = {d["kind"]: d for d in docs}
for d in docs:
    if d["kind"] == "ClusterRole":
        for r in d["rules"]:
            for g in r["apiGroups"]:
                for res in r["resources"]:
                    for v in r["verbs"]:
                        print("rbac %s/%s %s" % (g or "core", res, v))
if "Deployment" in by:
    dep = by["Deployment"]
    pod = dep["spec"]["template"]["spec"]
    c = pod["containers"][0]
    sc, psc = c["securityContext"], pod["securityContext"]
    print("replicas", dep["spec"]["replicas"])
    print("labels", dep["spec"]["template"]["metadata"]["labels"]["k8s-app"], dep["metadata"]["name"])
    print("image", c["image"])
    print("args", " ".join(c["args"]))
    print("pod-security", psc["runAsNonRoot"], psc["runAsUser"], psc["seccompProfile"]["type"])
    print("container-security", sc["readOnlyRootFilesystem"], sc["allowPrivilegeEscalation"],
          ",".join(sc["capabilities"]["drop"]), ",".join(sc["capabilities"]["add"]))
    print("priority", pod["priorityClassName"], pod["serviceAccountName"], pod["dnsPolicy"])
    print("spread", " ".join(sorted(t["topologyKey"] for t in pod["topologySpreadConstraints"])))
    print("probes", c["livenessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["port"],
          c["readinessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["port"])
    print("ports", " ".join("%s/%s" % (p["containerPort"], p["protocol"]) for p in c["ports"]))
    print("memory", c["resources"]["requests"]["memory"], c["resources"]["limits"]["memory"])
if "Service" in by:
    s = by["Service"]
    print("service", s["metadata"]["name"], s["spec"]["clusterIP"], s["spec"]["trafficDistribution"],
          " ".join("%s/%s" % (p["port"], p["protocol"]) for p in s["spec"]["ports"]))
if "PodDisruptionBudget" in by:
    p = by["PodDisruptionBudget"]
    print("pdb", p["spec"]["maxUnavailable"], p["spec"]["selector"]["matchLabels"]["k8s-app"])
if "DaemonSet" in by:
    pod = by["DaemonSet"]["spec"]["template"]["spec"]
    print("daemonset", pod["hostNetwork"], pod["priorityClassName"], pod["securityContext"]["runAsUser"],
          len(pod.get("initContainers", [])))
    print("token", pod.get("automountServiceAccountToken", True),
          by["ServiceAccount"].get("automountServiceAccountToken", True))
    print("env", " ".join("%s=%s" % (e["name"], e["valueFrom"]["fieldRef"]["fieldPath"])
                          for e in pod["containers"][0].get("env", [])))
    res = pod["containers"][0]["resources"]
    print("memory", res["requests"]["memory"], res["limits"]["memory"])
for d in docs:
    if d["kind"] == "ConfigMap":
        open(sys.argv[1] + "." + d["metadata"]["name"] + ".Corefile", "w").write(d["data"]["Corefile"])
PY
}
F=$(facts "$TMP/kube-dns.yaml")
fact() { sed -n "s/^$1 //p" <<<"$F"; }
OUT=$F
check "kube-dns: the objects" test "$(fact kinds)" = \
    "ClusterRole ClusterRoleBinding ConfigMap Deployment PodDisruptionBudget Service ServiceAccount"
check "kube-dns: every placeholder and marker filled in" test "$(fact leftover)" = 0
check "kube-dns: CoreDNS's names, labels and args" test "$(fact labels) $(fact args)" = \
    "kube-dns coredns -conf /etc/coredns/Corefile"
check "kube-dns: image and replicas from the flags" test "$(fact image) $(fact replicas)" = \
    "registry.example/topodns:1.0 3"
check "kube-dns: non-root 65532, RuntimeDefault seccomp" test "$(fact pod-security)" = "True 65532 RuntimeDefault"
check "kube-dns: read-only root, no escalation, only NET_BIND_SERVICE" \
    test "$(fact container-security)" = "True False ALL NET_BIND_SERVICE"
check "kube-dns: system-cluster-critical, its service account, dnsPolicy Default" \
    test "$(fact priority)" = "system-cluster-critical coredns Default"
check "kube-dns: spread over hosts and zones" test "$(fact spread)" = \
    "kubernetes.io/hostname topology.kubernetes.io/zone"
check "kube-dns: /health on 8080, /ready on 8181" test "$(fact probes)" = "/health 8080 /ready 8181"
check "kube-dns: ports 53/UDP 53/TCP 9153 8080 8181" test "$(fact ports)" = \
    "53/UDP 53/TCP 9153/TCP 8080/TCP 8181/TCP"
check "kube-dns: the Service, its clusterIP, PreferClose" test "$(fact service)" = \
    "kube-dns 10.96.0.10 PreferClose 53/UDP 53/TCP 9153/TCP"
check "kube-dns: a PodDisruptionBudget" test "$(fact pdb)" = "1 kube-dns"
# docs/operations.md: 16 MiB + 130 B/pod + 800 B/service + 100 B/endpoint
# + 800 B/node, rounded up; limit twice that + 32 MiB
check "kube-dns: memory for 150,000 pods (the formula)" test "$(fact memory)" = "61Mi 154Mi"
RBAC_EVENTS=$(fact rbac)
COREFILE_EVENTS=$(cat "$TMP/kube-dns.yaml.coredns.Corefile")
check "kube-dns --events --client-subnet: the topology stanza" \
    eval 'grep -q "^        client_subnet 127.0.0.1/32$" <<<"$COREFILE_EVENTS" && grep -q "^        events$" <<<"$COREFILE_EVENTS"'
F=$(facts "$TMP/kube-dns-plain.yaml")
OUT=$F
check "defaults: 10.96.0.10, localhost/topodns:latest, 2 replicas, memory for 30,000 pods" \
    test "$(sed -n 's/^service kube-dns \([^ ]*\) .*/\1/p' <<<"$F") $(fact image) $(fact replicas) $(fact memory)" = \
    "10.96.0.10 localhost/topodns:latest 2 25Mi 82Mi"
RBAC_PLAIN=$(fact rbac)
COREFILE_PLAIN=$(cat "$TMP/kube-dns-plain.yaml.coredns.Corefile")
check "defaults: topology without events or client_subnet" \
    eval '! grep -qE "^ *(events|client_subnet)" <<<"$COREFILE_PLAIN" && grep -q "^    topology {$" <<<"$COREFILE_PLAIN"'

"$RENDER" node-local --cluster-ip 10.96.0.10 --ecs --init-image example/tools:1 > "$TMP/node-local.yaml"
F=$(facts "$TMP/node-local.yaml")
OUT=$F
check "node-local: the objects" test "$(fact kinds)" = "ConfigMap DaemonSet ServiceAccount"
check "node-local: filled in" test "$(fact leftover)" = 0
check "node-local: hostNetwork, node-critical, non-root, the init container" \
    test "$(fact daemonset)" = "True system-node-critical 65532 1"
check "node-local: cluster domain forwarded to the kube-dns IP with ECS, bound to 169.254.20.10" eval \
    'grep -q "forward . 10.96.0.10 {" "$TMP/node-local.yaml.node-local-dns.Corefile" &&
     grep -q "^        add_client_subnet$" "$TMP/node-local.yaml.node-local-dns.Corefile" &&
     [ "$(grep -c "^    bind 169.254.20.10$" "$TMP/node-local.yaml.node-local-dns.Corefile")" -eq 4 ]'
check "node-local: no API access (no token, no RBAC, no env)" \
    test "$(fact token) $(fact env)" = "False False "

"$RENDER" node-local --node-mode --services 10000 --endpoints 150000 > "$TMP/node-mode.yaml"
F=$(facts "$TMP/node-mode.yaml")
OUT=$F
check "node-local --node-mode: the objects" test "$(fact kinds)" = \
    "ClusterRole ClusterRoleBinding ConfigMap DaemonSet ServiceAccount"
check "node-local --node-mode: filled in" test "$(fact leftover)" = 0
check "node-local --node-mode: the token mounted, NODE_NAME from spec.nodeName" \
    test "$(fact token) $(fact env)" = "True True NODE_NAME=spec.nodeName"
RBAC_NODE=$(fact rbac)
OUT=$(cat "$TMP/node-mode.yaml.node-local-dns.Corefile")
check "node-local --node-mode: the cluster domain from kubernetes in node-local mode, not forwarded" eval \
    'grep -q "^        node {\$NODE_NAME}$" <<<"$OUT" && grep -q "^    kubernetes cluster.local {$" <<<"$OUT" &&
     [ "$(grep -c "forward . 10.96.0.10 {" <<<"$OUT")" -eq 2 ]'
# the formula without pods and with one node: 16 MiB + 800 B × 10,000
# + 100 B × 150,000 + 800 B, rounded up; limit twice that + 32 MiB
check "node-local --node-mode: memory from services and endpoints" test "$(fact memory)" = "38Mi 108Mi"

# ---------------------------------------------------------------- --autoscale
# docs(KIND NAME FIELD...) of a rendered file: the value at a dotted path of
# the document of that kind and name, JSON-encoded, one per line
doc() {
    /usr/bin/python3 - "$@" <<'PY'
import json, sys, yaml
f, kind, name = sys.argv[1:4]
d = [d for d in yaml.safe_load_all(open(f)) if d and d["kind"] == kind and d["metadata"]["name"] == name]
if len(d) != 1:
    print("no single %s %s" % (kind, name)); sys.exit()
for path in sys.argv[4:]:
    v = d[0]
    for k in path.split("."):
        v = v[int(k)] if isinstance(v, list) else v.get(k) if isinstance(v, dict) else None
    print(json.dumps(v, sort_keys=True))
PY
}
"$RENDER" --autoscale hpa --replicas 3 --max-replicas 12 --cpu-target 60 > "$TMP/hpa.yaml"
OUT=$(/usr/bin/python3 -c 'import sys, yaml
print(" ".join(sorted("%s/%s" % (d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$TMP/hpa.yaml")
check "--autoscale hpa: the objects and a HorizontalPodAutoscaler" test "$OUT" = \
    "ClusterRole/system:coredns ClusterRoleBinding/system:coredns ConfigMap/coredns Deployment/coredns HorizontalPodAutoscaler/coredns PodDisruptionBudget/coredns Service/kube-dns ServiceAccount/coredns"
OUT=$(doc "$TMP/hpa.yaml" HorizontalPodAutoscaler coredns apiVersion spec.scaleTargetRef spec.minReplicas \
      spec.maxReplicas spec.metrics | tr '\n' ' ')
check "--autoscale hpa: autoscaling/v2, Deployment coredns, 3 to 12 replicas, 60 % CPU" test "$OUT" = \
    '"autoscaling/v2" {"apiVersion": "apps/v1", "kind": "Deployment", "name": "coredns"} 3 12 [{"resource": {"name": "cpu", "target": {"averageUtilization": 60, "type": "Utilization"}}, "type": "Resource"}] '
OUT=$(doc "$TMP/hpa.yaml" Deployment coredns spec.replicas spec.template.spec.containers.0.resources.requests.cpu | tr '\n' ' ')
check "--autoscale hpa: the Deployment has no replica count, a CPU request" test "$OUT" = 'null "100m" '
check "--autoscale hpa: filled in" eval '! grep -q "__\|#@" "$TMP/hpa.yaml"'
"$RENDER" --autoscale linear --autoscaler-image example/cpa:1 > "$TMP/linear.yaml"
OUT=$(/usr/bin/python3 -c 'import sys, yaml
print(" ".join(sorted("%s/%s" % (d["kind"], d["metadata"]["name"]) for d in yaml.safe_load_all(open(sys.argv[1])) if d and "autoscaler" in d["metadata"]["name"])))' "$TMP/linear.yaml")
check "--autoscale linear: the cluster-proportional-autoscaler's objects" test "$OUT" = \
    "ClusterRole/system:kube-dns-autoscaler ClusterRoleBinding/system:kube-dns-autoscaler ConfigMap/kube-dns-autoscaler Deployment/kube-dns-autoscaler ServiceAccount/kube-dns-autoscaler"
LINEAR='{"coresPerReplica": 256, "includeUnschedulableNodes": true, "min": 2, "nodesPerReplica": 16, "preventSinglePointFailure": true}'
OUT=$(doc "$TMP/linear.yaml" ConfigMap kube-dns-autoscaler data.linear | python3 -c 'import json, sys; print(json.dumps(json.loads(json.load(sys.stdin)), sort_keys=True))')
check "--autoscale linear: the ConfigMap's linear parameters as kube-dns ships them" test "$OUT" = "$LINEAR"
OUT=$(doc "$TMP/linear.yaml" Deployment kube-dns-autoscaler spec.template.spec.containers.0.image \
      spec.template.spec.containers.0.command spec.template.spec.serviceAccountName | tr '\n' ' ')
check "--autoscale linear: its image, its ConfigMap, target Deployment/coredns, its ServiceAccount" eval \
    'grep -q "^\"example/cpa:1\" .*\"--configmap=kube-dns-autoscaler\".*\"--target=Deployment/coredns\".* \"kube-dns-autoscaler\" \$" <<<"$OUT"'
OUT=$(doc "$TMP/linear.yaml" ClusterRole system:kube-dns-autoscaler rules)
check "--autoscale linear: it may list nodes and scale deployments" eval \
    'grep -q "\"nodes\"" <<<"$OUT" && grep -q "\"deployments/scale\"" <<<"$OUT"'
check "--autoscale linear: no replica count on coredns" test "$(doc "$TMP/linear.yaml" Deployment coredns spec.replicas)" = null
OUT=$("$RENDER" --autoscale linear --replicas 3 --nodes-per-replica 8 --cores-per-replica 128 |
      sed -n "s/^  linear: //p")
check "--autoscale linear: min, nodesPerReplica and coresPerReplica from the flags" test "$OUT" = \
    "'{\"coresPerReplica\":128,\"nodesPerReplica\":8,\"min\":3,\"preventSinglePointFailure\":true,\"includeUnschedulableNodes\":true}'"
for bad in "--autoscale vpa" "--autoscale hpa --replicas 5 --max-replicas 4" "--cpu-target 0" "--autoscale hpa node-local"; do
    OUT=$("$RENDER" $bad 2>&1); rc=$?
    check "render $bad: exits 2 naming the flag" eval '[ $rc -eq 2 ] && grep -q -- "--[a-z-]*: " <<<"$OUT"'
done

# ---------------------------------------------------------------- kubectl apply
start_kubesim --load "$top_srcdir/tests/data/topology/cluster.yaml"
"$RENDER" --events kube-dns node-local > "$TMP/all.yaml"
OUT=$(K apply -f "$TMP/all.yaml")
check "kubectl apply: 10 objects created" [ "$(grep -c ' created$' <<<"$OUT")" -eq 10 ]
OUT=$(K apply -f "$TMP/all.yaml")
# a PodDisruptionBudget's selector has patchStrategy replace, so kubectl
# always patches it ("configured"), also against a real apiserver
check "kubectl apply again: nothing but the PodDisruptionBudget's no-op patch" \
    eval '[ "$(grep -c " unchanged$" <<<"$OUT")" -eq 9 ] &&
          grep -qx "poddisruptionbudget.policy/coredns configured" <<<"$OUT"'
kubectl --server "$KS" get -f "$TMP/all.yaml" -o json > "$TMP/got.json" 2> "$TMP/got.err"
OUT=$(/usr/bin/python3 - "$TMP/all.yaml" "$TMP/got.json" <<'PY'
import json, sys, yaml
want = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
got = json.load(open(sys.argv[2]))
got = got.get("items", [got])
def key(d): return (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])
def contains(g, w):
    # what was applied is there; the server may add defaults (a Service's
    # clusterIPs, ipFamilies, targetPort...)
    if isinstance(w, dict):
        return isinstance(g, dict) and all(contains(g.get(k), v) for k, v in w.items())
    if isinstance(w, list):
        return isinstance(g, list) and len(g) == len(w) and all(map(contains, g, w))
    return g == w
have = {key(d): d for d in got}
bad = []
for w in want:
    g = have.get(key(w))
    if g is None:
        bad.append("missing %s" % (key(w),)); continue
    for f in w:
        if f in ("metadata", "status"):
            continue
        if not contains(g.get(f), w[f]):
            bad.append("%s: %s differs" % (key(w), f))
    for l, v in (w["metadata"].get("labels") or {}).items():
        if (g["metadata"].get("labels") or {}).get(l) != v:
            bad.append("%s: label %s differs" % (key(w), l))
print("\n".join(bad) if bad else "ok %d" % len(want))
PY
)
check "kubectl get: every object as rendered" test "$OUT" = "ok 10"
OUT=$(K get deployment,daemonset,pdb,configmap,serviceaccount -n kube-system -o name)
check "kubectl get: the workloads in kube-system" eval \
    'for o in deployment.apps/coredns daemonset.apps/node-local-dns poddisruptionbudget.policy/coredns \
              configmap/coredns configmap/node-local-dns serviceaccount/coredns serviceaccount/node-local-dns; do
         grep -qx "$o" <<<"$OUT" || exit 1; done'
OUT=$(K get clusterrole system:coredns -o json)
check "kubectl get: the ClusterRole" grep -q '"endpointslices"' <<<"$OUT"

# the autoscalers: applied with kubectl, read back as rendered
OUT=$(K apply -f "$TMP/hpa.yaml")
check "kubectl apply --autoscale hpa: the HorizontalPodAutoscaler created" \
    grep -qx "horizontalpodautoscaler.autoscaling/coredns created" <<<"$OUT"
OUT=$(K get hpa coredns -n kube-system -o json | python3 -c 'import json, sys
d = json.load(sys.stdin)["spec"]
print(d["scaleTargetRef"]["name"], d["minReplicas"], d["maxReplicas"], d["metrics"][0]["resource"]["target"]["averageUtilization"])')
check "kubectl get hpa: as rendered" test "$OUT" = "coredns 3 12 60"
OUT=$(K apply -f "$TMP/linear.yaml")
check "kubectl apply --autoscale linear: the autoscaler's five objects created" eval \
    'for o in configmap/kube-dns-autoscaler serviceaccount/kube-dns-autoscaler deployment.apps/kube-dns-autoscaler \
              clusterrole.rbac.authorization.k8s.io/system:kube-dns-autoscaler \
              clusterrolebinding.rbac.authorization.k8s.io/system:kube-dns-autoscaler; do
         grep -qx "$o created" <<<"$OUT" || exit 1; done'
OUT=$(K get configmap kube-dns-autoscaler -n kube-system -o jsonpath='{.data.linear}' |
      python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))')
check "kubectl get configmap kube-dns-autoscaler: the linear parameters" test "$OUT" = "$LINEAR"
OUT=$(K get deployment kube-dns-autoscaler -n kube-system -o jsonpath='{.spec.template.spec.containers[0].image}')
check "kubectl get deployment kube-dns-autoscaler: its image" test "$OUT" = example/cpa:1

# ---------------------------------------------------------------- the ConfigMap's Corefile
# a real upstream for forward: a second topodns serving example.org from a file
start_topodns "example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
}" || exit 1
UP=$PORT
# loopback_corefile FILE: the Corefile of a rendered ConfigMap with its ports
# free, its addresses on loopback and the API endpoint kubesim's
RP=$(free_port); HP=$(free_port); MP=$(free_port)
loopback_corefile() {
    sed -e 's/^\.:53 {/.:{$PORT} {/' \
        -e "s/^\( *\)ready\$/\1ready 127.0.0.1:$RP/" \
        -e "s/^\( *\)health {/\1health 127.0.0.1:$HP {/" \
        -e "s/^\( *\)prometheus :9153/\1prometheus 127.0.0.1:$MP/" \
        -e "s#^\( *\)kubernetes cluster.local in-addr.arpa ip6.arpa {#&\n\1    endpoint $KS#" \
        -e "s#forward \. /etc/resolv.conf#forward . 127.0.0.1:$UP#" "$1"
}
loopback_corefile "$TMP/kube-dns.yaml.coredns.Corefile" > "$TMP/Corefile.central"
start_topodns "$(cat "$TMP/Corefile.central")" || exit 1
CENTRAL=$PORT

ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready")" = 200 ]; }
check "the ConfigMap's Corefile: ready" until_ok 5 ready
OUT=$(dig @127.0.0.1 -p "$CENTRAL" +short +time=2 +tries=1 kube-dns.kube-system.svc.cluster.local A)
check "the applied kube-dns Service answers with its clusterIP" test "$OUT" = 10.96.0.10
S=prod.svc.cluster.local
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.1.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "the ConfigMap's Corefile: topology answers per zone" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.2.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "…and the zone-b pod gets zone-b's" test "$OUT" = "10.20.2.3 "

# other names go through forward to the upstream, and are cached
hits() { curl -s "http://127.0.0.1:$MP/metrics" | awk '$1 ~ /^coredns_cache_hits_total[{]/ { s += $2 } END { print s + 0 }'; }
q www.example.org A
check "forward: www.example.org from the upstream" answer_has "192\.0\.2\.10"
h0=$(hits)
q www.example.org A
check "cache: the second ask is a hit" eval '[ "$(hits)" -gt "$h0" ] && answer_has "192\.0\.2\.10"'
# kubeadm's `disable success|denial cluster.local`: cluster names are never
# taken from the cache; each ask is answered from the watches, for the
# asking client's topology (docs/operations.md, the ConfigMap)
OUT=$(sed -n '/^    cache 30 {$/,/^    }$/p' "$TMP/kube-dns.yaml.coredns.Corefile")
check "the ConfigMap: kubeadm's cache 30 with cluster.local's success and denial not cached" test "$OUT" = \
"    cache 30 {
        disable success cluster.local
        disable denial cluster.local
    }"
h0=$(hits)
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.1.2 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "cluster names not cached: another zone-a pod gets zone-a's" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.2.2 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "…another zone-b pod zone-b's" test "$OUT" = "10.20.2.3 "
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.2.2 +time=2 +tries=1 nothere.$S A)
check "…a cluster NXDOMAIN" grep -q "status: NXDOMAIN" <<<"$OUT"
OUT=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.2.2 +time=2 +tries=1 nothere.$S A)
check "…and none of them from the cache (asked twice, no hit)" eval '[ "$(hits)" -eq "$h0" ] && grep -q "status: NXDOMAIN" <<<"$OUT"'

# ---------------------------------------------------------------- RBAC = what is watched
# touch one object of each kind; each watch that sees the event shows up in
# topodns's per-resource last-event metric
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
want=$(for r in $WATCHED; do
           g=core; [ "$r" = endpointslices ] && g=discovery.k8s.io
           echo "$g/$r list"; echo "$g/$r watch"
       done | sort)
OUT=$(diff <(echo "$want") <(sort <<<"$RBAC_PLAIN"))
check "RBAC (default): exactly list+watch of what topodns watches" test -z "$OUT"
OUT=$(diff <(printf '%s\ncore/events create\n' "$want" | sort) <(sort <<<"$RBAC_EVENTS"))
check "RBAC (--events): that and create on events" test -z "$OUT"
"$RENDER" --multicluster clusterset.local > "$TMP/kube-dns-mc.yaml"
F=$(facts "$TMP/kube-dns-mc.yaml")
OUT=$(diff <(printf '%s\nmulticluster.x-k8s.io/serviceimports list\nmulticluster.x-k8s.io/serviceimports watch\n' "$want" | sort) \
           <(fact rbac | sort))
check "RBAC (--multicluster): that and list+watch on serviceimports" test -z "$OUT"
OUT=$(cat "$TMP/kube-dns-mc.yaml.coredns.Corefile")
check "--multicluster: the zone and the option in the kubernetes stanza" eval \
    'grep -q "^    kubernetes cluster.local clusterset.local in-addr.arpa ip6.arpa {$" <<<"$OUT" &&
     grep -q "^        multicluster clusterset.local$" <<<"$OUT" && [ "$(fact leftover)" = 0 ]'
check "--multicluster: neither zone's answers cached, and the Corefile passes -check" eval \
    'grep -q "^        disable success cluster.local clusterset.local$" <<<"$OUT" &&
     grep -q "^        disable denial cluster.local clusterset.local$" <<<"$OUT" &&
     "$TOPODNS" -check -conf "$TMP/kube-dns-mc.yaml.coredns.Corefile" > /dev/null 2>&1'
OUT=$("$RENDER" --multicluster 'a b' 2>&1); rc=$?
check "render: a bad --multicluster zone exits 2" eval '[ $rc -eq 2 ] && grep -q -- "--multicluster" <<<"$OUT"'

# ---------------------------------------------------------------- node-local caches
# node_local [--ecs]: a rendered node-local Corefile for loopback, its
# cluster domain forwarded to the central topodns
node_local() {
    "$RENDER" node-local --cluster-ip 127.0.0.1 --local-ip 127.0.0.1 "$@" > "$TMP/nl.yaml"
    facts "$TMP/nl.yaml" > /dev/null
    sed -e 's/:53 {$/:{$PORT} {/' \
        -e "s/prometheus :9253/prometheus 127.0.0.1:$(free_port)/" \
        -e "s/health 127.0.0.1:8080/health 127.0.0.1:$(free_port)/" \
        -e "s/forward \. 127.0.0.1 {/forward . 127.0.0.1:$CENTRAL {/" \
        -e "s#forward \. /etc/resolv.conf#forward . 127.0.0.1:$UP#" \
        "$TMP/nl.yaml.node-local-dns.Corefile"
}
# nl_ask PORT SOURCE: the A records of hinted.prod through a node-local cache
nl_ask() { dig @127.0.0.1 -p "$1" -b "$2" +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' '; }

# the central (rendered with --client-subnet 127.0.0.1/32) trusts ECS from
# the caches' address: on loopback, the caches' "node network"
start_topodns "$(node_local --ecs)" || exit 1
NLA=$PORT           # the cache of a zone-a node
start_topodns "$(node_local --ecs)" || exit 1
NLB=$PORT           # the cache of a zone-b node
OUT=$(nl_ask "$NLA" 127.0.1.1)
check "node-local --ecs: a zone-a pod gets zone-a's endpoints" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(nl_ask "$NLB" 127.0.2.1)
check "node-local --ecs: a zone-b pod gets zone-b's" test "$OUT" = "10.20.2.3 "
OUT=$(dig @127.0.0.1 -p "$NLB" -b 127.0.2.2 +short +time=2 +tries=1 +subnet=127.0.1.1/32 hinted.$S A | sort | tr '\n' ' ')
check "node-local --ecs: a pod's own ECS is replaced (zone-b pod claiming zone-a)" test "$OUT" = "10.20.2.3 "
OUT=$(dig @127.0.0.1 -p "$NLA" +short +time=2 +tries=1 www.example.org A)
check "node-local: other names through the node's resolvers" test "$OUT" = 192.0.2.10
start_topodns "$(node_local)" || exit 1
OUT=$(nl_ask "$PORT" 127.0.2.1)
ALL=$(dig @127.0.0.1 -p "$CENTRAL" -b 127.0.0.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "node-local without --ecs: the central sees only the cache (an unknown client: every endpoint)" \
    eval '[ "$OUT" = "$ALL" ] && [ "$OUT" != "10.20.2.3 " ] && [ -n "$OUT" ]'

# --node-mode on node b1: answers for b1's zone from its own watches, and
# what it asked of the API server is what its ClusterRole grants
curl -s -X DELETE "$KS/sim/v1/requests" > /dev/null
"$RENDER" node-local --node-mode --cluster-ip 127.0.0.1 --local-ip 127.0.0.1 > "$TMP/nm.yaml"
facts "$TMP/nm.yaml" > /dev/null
NODE_NAME=b1 start_topodns "$(sed -e 's/:53 {$/:{$PORT} {/' \
    -e "s/prometheus :9253/prometheus 127.0.0.1:$(free_port)/" \
    -e "s/health 127.0.0.1:8080/health 127.0.0.1:$(free_port)/" \
    -e "s#^    kubernetes cluster.local {#&\\n        endpoint $KS#" \
    -e "s/forward \. 127.0.0.1 {/forward . 127.0.0.1:$CENTRAL {/" \
    -e "s#forward \. /etc/resolv.conf#forward . 127.0.0.1:$UP#" \
    "$TMP/nm.yaml.node-local-dns.Corefile")" || exit 1
NM=$PORT
until_ok 5 eval '[ "$(nl_ask "$NM" 127.0.1.1)" = "10.20.2.3 " ]'
OUT=$(nl_ask "$NM" 127.0.1.1)
check "node-local --node-mode on b1: a client is on b1, so zone-b's endpoints" test "$OUT" = "10.20.2.3 "
OUT=$(dig @127.0.0.1 -p "$NM" +short +time=2 +tries=1 www.example.org A)
check "node-local --node-mode: other names through the node's resolvers" test "$OUT" = 192.0.2.10
# ks_uris: the URIs of the API requests kubesim logged (GET /sim/v1/requests)
ks_uris() { curl -s "$KS/sim/v1/requests" | python3 -c 'import json, sys
for r in json.load(sys.stdin)["requests"]: print(r["uri"])'; }
USED=$(ks_uris | python3 -c '
import sys, urllib.parse
for line in sys.stdin:
    u = urllib.parse.urlsplit(line.strip())
    parts = u.path.strip("/").split("/")
    q = urllib.parse.parse_qs(u.query)
    res = parts[-1]
    g = "core" if parts[0] == "api" else parts[1]
    print("%s/%s %s" % (g, res, "watch" if q.get("watch") == ["1"] else "list"))
' | sort -u)
OUT="used: $USED
granted: $RBAC_NODE"
check "node-local --node-mode: no pods asked for" eval '! grep -q "core/pods" <<<"$USED"'
check "node-local --node-mode: every request granted by its ClusterRole" \
    eval 'while read -r r; do grep -qx "$r" <<<"$RBAC_NODE" || exit 1; done <<<"$USED"'
check "node-local --node-mode: the nodes are asked for by name only" eval \
    '! ks_uris | grep "^/api/v1/nodes" | grep -qv "fieldSelector=metadata.name%3Db1"'

# ---------------------------------------------------------------- --locate
# the Corefile line; the ClusterRole without pods when `pods` is not
# there, with get/list/watch on the CNI kinds named; memory without the pod
# term
"$RENDER" --locate podcidr,endpoints,cilium,calico --pods 150000 --services 10000 \
    --endpoints 150000 --nodes 5000 > "$TMP/kube-dns-loc.yaml"
F=$(facts "$TMP/kube-dns-loc.yaml")
OUT=$(cat "$TMP/kube-dns-loc.yaml.coredns.Corefile")
check "--locate: the line in the topology stanza, everything filled in" eval \
    'grep -q "^        locate podcidr endpoints cilium calico$" <<<"$OUT" && [ "$(fact leftover)" = 0 ]'
OUT=$(diff <( (grep -v "^core/pods " <<<"$RBAC_PLAIN"
               for v in get list watch; do
                   echo "cilium.io/ciliumnodes $v"; echo "crd.projectcalico.org/blockaffinities $v"
               done) | sort) <(fact rbac | sort))
check "--locate without pods: the ClusterRole loses pods, gains the CNI kinds" test -z "$OUT"
check "--locate without pods: memory for 150,000 pods without the pod index" \
    test "$(fact memory)" = "42Mi 116Mi"
"$RENDER" --locate 'endpoints pods' > "$TMP/kube-dns-locpods.yaml"
F=$(facts "$TMP/kube-dns-locpods.yaml")
OUT=$(diff <(sort <<<"$RBAC_PLAIN") <(fact rbac | sort))
check "--locate with pods: the default ClusterRole" test -z "$OUT"
check "--locate with pods: the line, in its order" \
    grep -q "^        locate endpoints pods$" "$TMP/kube-dns-locpods.yaml.coredns.Corefile"
"$RENDER" node-local --node-mode --locate podcidr,calico > "$TMP/nm-loc.yaml"
F=$(facts "$TMP/nm-loc.yaml")
OUT=$(diff <( (echo "$RBAC_NODE"; for v in get list watch; do echo "crd.projectcalico.org/blockaffinities $v"; done) | sort) \
           <(fact rbac | sort))
check "node-local --node-mode --locate: its ClusterRole and blockaffinities" test -z "$OUT"
check "node-local --node-mode --locate: the line after node" eval \
    'grep -A1 "^        node {\$NODE_NAME}$" "$TMP/nm-loc.yaml.node-local-dns.Corefile" | grep -q "^            locate podcidr calico$\|^        locate podcidr calico$" && [ "$(fact leftover)" = 0 ]'
for bad in flannel "pods,pods" ""; do
    OUT=$("$RENDER" --locate "$bad" 2>&1); rc=$?
    check "render: --locate '$bad' exits 2 naming the flag" eval '[ $rc -eq 2 ] && grep -q -- "--locate" <<<"$OUT"'
done

# the rendered `--locate podcidr,endpoints` Corefile run against the cluster
# (its nodes given podCIDRs): per-zone answers, and every resource it
# received bytes for is granted by its ClusterRole (no pods)
K patch node a1 --type merge -p '{"spec":{"podCIDRs":["127.0.1.0/31"]}}' > /dev/null
K patch node b1 --type merge -p '{"spec":{"podCIDRs":["127.0.2.0/31"]}}' > /dev/null
"$RENDER" --locate podcidr,endpoints > "$TMP/kube-dns-pc.yaml"
F=$(facts "$TMP/kube-dns-pc.yaml")
RBAC_PC=$(fact rbac)
RP=$(free_port); HP=$(free_port); MP=$(free_port)
loopback_corefile "$TMP/kube-dns-pc.yaml.coredns.Corefile" > "$TMP/Corefile.pc"
start_topodns "$(cat "$TMP/Corefile.pc")" || exit 1
check "--locate podcidr,endpoints: ready" until_ok 5 ready
until_ok 5 eval '[ "$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +short +time=2 +tries=1 hinted.$S A | sort | tr "\n" " ")" = "10.20.2.1 10.20.2.2 " ]'
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.1.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "--locate podcidr,endpoints: a zone-a pod gets zone-a's" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(dig @127.0.0.1 -p "$PORT" -b 127.0.2.1 +short +time=2 +tries=1 hinted.$S A | sort | tr '\n' ' ')
check "--locate podcidr,endpoints: a zone-b pod gets zone-b's" test "$OUT" = "10.20.2.3 "
M=$(curl -s "http://127.0.0.1:$MP/metrics")
GOT=$(sed -n 's/^topodns_kubernetes_received_bytes_total{resource="\([a-z]*\)"}.*/\1/p' <<<"$M" | sort -u)
OUT="received: $(echo $GOT)
granted: $RBAC_PC"
check "--locate podcidr,endpoints: nothing received for pods" eval '! grep -qx pods <<<"$GOT"'
check "--locate podcidr,endpoints: every resource received is granted list and watch" \
    eval '(for r in $GOT; do grep -qE "^[a-z0-9.]+/$r list$" <<<"$RBAC_PC" &&
               grep -qE "^[a-z0-9.]+/$r watch$" <<<"$RBAC_PC" || exit 1; done)'
stop_topodns
finish
