#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kubesim_kubectl.sh — tests/kubesim/kubesim against the real kubectl and curl.
#
# kubectl (create -f, get -o json, replace -f, patch --type=merge|json, delete -f,
# get after delete) through discovery fallback, then the list/watch protocol
# with curl: pagination with continue over a consistent revision, selectors,
# watch streams (ADDED/MODIFIED/DELETED/BOOKMARK, selector transitions,
# sendInitialEvents), 410 Expired, too large resourceVersions (the 3 s wait,
# 504 TooLarge, as an ERROR event for watch-lists), saveState/restoreState,
# 409 Conflict, 401 with --token and token
# rotation, failNext 429 + Retry-After, delay, malformed lines, closeWatches,
# --generate counts, --load of YAML multi-doc and kind: List, bad input, TLS.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

KUBESIM=${KUBESIM:-$top_builddir/tests/kubesim/kubesim}
command -v kubectl >/dev/null || skip "kubectl not installed"
command -v jq >/dev/null || skip "jq not installed"
export KUBECONFIG=/dev/null   # never a real cluster

# start_kubesim ARGS...: sets KS (base URL) and KS_PID
start_kubesim() {
    local out=$TMP/kubesim.$RANDOM.out
    "$KUBESIM" "$@" > "$out" 2> "$out.err" &
    KS_PID=$!
    PIDS+=("$KS_PID")
    local i
    for i in $(seq 1 100); do
        [ -s "$out" ] && break
        kill -0 "$KS_PID" 2>/dev/null || break
        sleep 0.1
    done
    KS_ADDR=$(head -1 "$out" | sed -n 's/^listening on //p')
    [ -n "$KS_ADDR" ] || { echo "kubesim did not start:"; cat "$out.err"; exit 1; }
    KS=http://$KS_ADDR
}
K() { kubectl --server "$KS" "$@" 2>&1; }
get() { OUT=$(curl -s "$@"); }                   # body in OUT
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
fault() { curl -s -X POST -d "$1" "$KS/sim/v1/faults" >/dev/null; }
jqo() { jq -r "$1" <<<"$OUT"; }
alive() { kill -0 "$KS_PID" 2>/dev/null; }
# tok_json TOKEN: an unpadded base64url continue token decoded by coreutils
tok_json() {
    local t
    t=$(tr '_-' '/+' <<<"$1")
    while (( ${#t} % 4 )); do t+='='; done
    base64 -d <<<"$t"
}

# ---------------------------------------------------------------- kubectl
start_kubesim
cat > "$TMP/objs.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  clusterIP: None
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: web-abcde
  namespace: shop
  labels: {kubernetes.io/service-name: web}
addressType: IPv4
endpoints:
- addresses: [10.1.0.5]
  conditions: {ready: true}
  nodeName: node-a
  zone: zone-a
ports: [{name: http, port: 80, protocol: TCP}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: shop, labels: {app: web}}
spec:
  nodeName: node-a
  containers: [{name: c, image: "nginx:1"}]
status: {phase: Running, podIP: 10.1.0.5}
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {topology.kubernetes.io/zone: zone-a}
EOF
OUT=$(K create -f "$TMP/objs.yaml" --validate=false)
check "kubectl create -f: 5 objects created" [ "$(grep -c ' created$' <<<"$OUT")" -eq 5 ]
OUT=$(K get pods -n shop -o json)
check "get -o json: PodList item with uid" [ "$(jqo '.items[0].metadata.uid | length')" -eq 36 ]
check "get -o json: resourceVersion" [ "$(jqo '.items[0].metadata.resourceVersion | test("^[0-9]+$")')" = true ]
check "get -o json: creationTimestamp" [ "$(jqo '.items[0].metadata.creationTimestamp | test("^20[0-9-]+T[0-9:]+Z$")')" = true ]
RV1=$(jqo '.items[0].metadata.resourceVersion')
OUT=$(K get endpointslices -n shop -o json)
check "get endpointslices (discovery.k8s.io/v1)" [ "$(jqo '.items[0].endpoints[0].zone')" = zone-a ]
OUT=$(K get nodes -o json)
check "get nodes" [ "$(jqo '.items[0].metadata.labels["topology.kubernetes.io/zone"]')" = zone-a ]

sed 's/"nginx:1"/"nginx:2"/; s/zone: zone-a/zone: zone-b/' "$TMP/objs.yaml" > "$TMP/objs2.yaml"
OUT=$(K replace -f "$TMP/objs2.yaml" --validate=false)
check "kubectl replace -f: 5 replaced" [ "$(grep -c ' replaced$' <<<"$OUT")" -eq 5 ]
OUT=$(K get pod web-0 -n shop -o json)
check "replace visible: image" [ "$(jqo '.spec.containers[0].image')" = nginx:2 ]
check "replace: resourceVersion grew" [ "$(jqo '.metadata.resourceVersion')" -gt "$RV1" ]
check "replace: generation bumped" [ "$(jqo '.metadata.generation')" -eq 2 ]
OUT=$(K get endpointslice web-abcde -n shop -o json)
check "replace visible: slice zone" [ "$(jqo '.endpoints[0].zone')" = zone-b ]

OUT=$(K patch service web -n shop --type=merge -p '{"metadata":{"labels":{"tier":"front"}},"spec":{"selector":null}}')
check "kubectl patch --type=merge" grep -q 'patched' <<<"$OUT"
OUT=$(K get service web -n shop -o json)
check "patch visible: label added" [ "$(jqo '.metadata.labels.tier')" = front ]
check "patch visible: null removes" [ "$(jqo '.spec.selector')" = null ]
check "patch keeps other labels" [ "$(jqo '.metadata.labels.app')" = web ]

OUT=$(K delete -f "$TMP/objs.yaml" --wait=false)
check "kubectl delete -f: 5 deleted" [ "$(grep -c ' deleted' <<<"$OUT")" -eq 5 ]
OUT=$(K get pod web-0 -n shop)
check "get after delete: NotFound" grep -q 'NotFound' <<<"$OUT"
OUT=$(K get node node-a)
check "get node after delete: NotFound" grep -q 'NotFound' <<<"$OUT"
sleep 1.3
OUT=$(K get namespace shop)
check "namespace gone after termination" grep -q 'NotFound' <<<"$OUT"

# ---------------------------------------------------------------- opaque kinds
# the kinds of a deployment's manifests, stored as sent: kubectl apply
# (create, then unchanged, then a merge of a changed field), get, delete
cat > "$TMP/deploy.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: conf, namespace: kube-system}
data: {Corefile: ". { whoami }"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: dns, namespace: kube-system}
spec:
  replicas: 2
  selector: {matchLabels: {app: dns}}
  template:
    metadata: {labels: {app: dns}}
    spec: {containers: [{name: dns, image: "topodns:1"}]}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: node-dns, namespace: kube-system}
spec:
  selector: {matchLabels: {app: node-dns}}
  template:
    metadata: {labels: {app: node-dns}}
    spec: {containers: [{name: dns, image: "topodns:1"}]}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: dns, namespace: kube-system}
spec: {maxUnavailable: 1, selector: {matchLabels: {app: dns}}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: dns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:dns"}
rules: [{apiGroups: [""], resources: [services], verbs: [list, watch]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:dns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:dns"}
subjects: [{kind: ServiceAccount, name: dns, namespace: kube-system}]
EOF
OUT=$(K apply --validate=false -f "$TMP/deploy.yaml")
check "kubectl apply: 7 opaque objects created" [ "$(grep -c ' created$' <<<"$OUT")" -eq 7 ]
RV1=$(K get pdb dns -n kube-system -o jsonpath='{.metadata.resourceVersion}')
OUT=$(K apply --validate=false -f "$TMP/deploy.yaml")
check "kubectl apply again: unchanged" [ "$(grep -c ' unchanged$' <<<"$OUT")" -eq 6 ]
# a PodDisruptionBudget's selector has patchStrategy replace: kubectl always
# sends it, and says "configured", as against a real apiserver; the patch
# changes nothing, so no new resourceVersion
check "…the PodDisruptionBudget's no-op patch" grep -q '^poddisruptionbudget.policy/dns configured$' <<<"$OUT"
check "…writes nothing" [ "$(K get pdb dns -n kube-system -o jsonpath='{.metadata.resourceVersion}')" = "$RV1" ]
sed -i 's/replicas: 2/replicas: 3/' "$TMP/deploy.yaml"
OUT=$(K apply --validate=false -f "$TMP/deploy.yaml")
check "kubectl apply of a change: deployment configured" grep -q '^deployment.apps/dns configured$' <<<"$OUT"
OUT=$(K get deployment dns -n kube-system -o json)
check "apps/v1 deployment: the change, the rest kept" \
    [ "$(jqo '[.spec.replicas, .spec.template.spec.containers[0].image] | join(" ")')" = "3 topodns:1" ]
OUT=$(K get clusterrole system:dns -o json)
check "rbac name with a colon; rules as sent" [ "$(jqo '.rules[0].resources[0]')" = services ]
OUT=$(K get pdb,daemonset,serviceaccount,configmap -n kube-system -o name)
check "get pdb, daemonset, serviceaccount, configmap" [ "$(echo $OUT)" = \
    "poddisruptionbudget.policy/dns daemonset.apps/node-dns serviceaccount/dns configmap/conf" ]
get "$KS/apis"
check "discovery: apps, events, policy, rbac, multicluster, autoscaling, apiextensions groups" \
    [ "$(jqo '[.groups[].name] | join(" ")')" = "apps discovery.k8s.io events.k8s.io policy rbac.authorization.k8s.io multicluster.x-k8s.io autoscaling apiextensions.k8s.io" ]
check "discovery: multicluster.x-k8s.io at v1alpha1" \
    [ "$(jqo '[.groups[] | select(.name == "multicluster.x-k8s.io") | .preferredVersion.version] | join(" ")')" = v1alpha1 ]
get "$KS/apis/multicluster.x-k8s.io/v1alpha1"
check "discovery: serviceimports in multicluster.x-k8s.io/v1alpha1" \
    [ "$(jqo '.groupVersion + " " + ([.resources[].name] | join(" "))')" = "multicluster.x-k8s.io/v1alpha1 serviceimports" ]
printf '%s\n' 'apiVersion: multicluster.x-k8s.io/v1alpha1' 'kind: ServiceImport' \
    'metadata: {name: db, namespace: kube-system}' \
    'spec: {type: ClusterSetIP, ips: [10.0.0.1], ports: [{name: sql, protocol: TCP, port: 5432}]}' \
    > "$TMP/si.yaml"
K apply --validate=false -f "$TMP/si.yaml" > /dev/null
OUT=$(K get serviceimport db -n kube-system -o json)
check "kubectl apply + get of a ServiceImport, spec as sent" \
    [ "$(jqo '.apiVersion + " " + .spec.type + " " + .spec.ips[0]')" = "multicluster.x-k8s.io/v1alpha1 ClusterSetIP 10.0.0.1" ]
get "$KS/apis/multicluster.x-k8s.io/v1/serviceimports"
check "serviceimports at another version: not found" grep -q NotFound <<<"$OUT"
check "clusterrole name '..' is invalid: 422" \
    [ "$(code -X POST -d '{"metadata":{"name":".."}}' "$KS/apis/rbac.authorization.k8s.io/v1/clusterroles")" = 422 ]
OUT=$(K delete -f "$TMP/deploy.yaml" --wait=false)
check "kubectl delete -f: 7 deleted" [ "$(grep -c ' deleted' <<<"$OUT")" -eq 7 ]

# ---------------------------------------------------------------- generated cluster
start_kubesim --generate nodes=12,pods=250,services=10,zones=3 --bookmark-interval 1
get "$KS/sim/v1/state"
check "--generate: 12 nodes" [ "$(jqo '.nodes | length')" -eq 12 ]
check "--generate: 250 pods" [ "$(jqo '.pods | length')" -eq 250 ]
check "--generate: 10 services" [ "$(jqo '.services | length')" -eq 10 ]
check "--generate: 3 zones on nodes" [ "$(jqo '[.nodes[].metadata.labels["topology.kubernetes.io/zone"]] | unique | length')" -eq 3 ]
check "--generate: allocatable cpu" [ "$(jqo '[.nodes[].status.allocatable.cpu | select(test("^[0-9]+m$"))] | length')" -eq 12 ]
check "--generate: 250 endpoints over slices" [ "$(jqo '[.endpointslices[].endpoints[]] | length')" -eq 250 ]
check "--generate: slices hold <= 100 endpoints" [ "$(jqo '[.endpointslices[].endpoints | length] | max')" -le 100 ]
check "--generate: endpoints have zone/nodeName/targetRef" [ "$(jqo '[.endpointslices[].endpoints[] | select(.zone and .nodeName and .targetRef.uid and (.conditions.ready != null))] | length')" -eq 250 ]
check "--generate: some headless services" [ "$(jqo '[.services[] | select(.spec.clusterIP == "None")] | length')" -ge 1 ]
check "--generate: pods carry managedFields" [ "$(jqo '[.pods[] | select(.metadata.managedFields | length == 2)] | length')" -eq 250 ]
check "--generate: pods spread over nodes" [ "$(jqo '[.pods[].spec.nodeName] | unique | length')" -eq 12 ]

# pagination: consistent pages, continue, remainingItemCount
get "$KS/api/v1/pods?limit=100"
RV=$(jqo .metadata.resourceVersion); CONT=$(jqo .metadata.continue)
check "page 1: 100 items" [ "$(jqo '.items | length')" -eq 100 ]
check "page 1: continue token" eval '[ -n "$CONT" ] && [ "$CONT" != null ]'
check "page 1: remainingItemCount 150" [ "$(jqo .metadata.remainingItemCount)" -eq 150 ]
# the token as the apiserver writes it: unpadded base64url of {"v","rv","start"}
check "page 1: continue token is unpadded base64url" eval '[[ "$CONT" =~ ^[A-Za-z0-9_-]+$ ]]'
check "page 1: continue token decodes (coreutils base64) to v and rv" \
    [ "$(tok_json "$CONT" | jq -r '.v + " " + (.rv | tostring)')" = "meta.k8s.io/v1 $RV" ]
check "list items omit kind" [ "$(jqo '.items[0].kind')" = null ]
NAMES=$(jqo '.items[].metadata | .namespace + "/" + .name')
# change the world between pages: delete the last pod in key order
LASTNS=$(curl -s "$KS/api/v1/pods" | jq -r '.items[-1].metadata.namespace')
LASTPOD=$(curl -s "$KS/api/v1/pods" | jq -r '.items[-1].metadata.name')
curl -s -X DELETE "$KS/api/v1/namespaces/$LASTNS/pods/$LASTPOD" >/dev/null
while [ -n "$CONT" ] && [ "$CONT" != null ]; do
    get "$KS/api/v1/pods?limit=100&continue=$CONT"
    check "page keeps resourceVersion $RV" [ "$(jqo .metadata.resourceVersion)" = "$RV" ]
    NAMES+=$'\n'$(jqo '.items[].metadata | .namespace + "/" + .name')
    CONT=$(jqo '.metadata.continue // empty')
done
check "paginated list: 250 unique pods (snapshot incl. the deleted one)" [ "$(sort -u <<<"$NAMES" | grep -c .)" -eq 250 ]
get "$KS/api/v1/pods"
check "fresh list sees the delete" [ "$(jqo '.items | length')" -eq 249 ]
get "$KS/api/v1/namespaces/ns-0/pods?limit=1000"
check "per-namespace list" [ "$(jqo '[.items[] | select(.metadata.namespace != "ns-0")] | length')" -eq 0 ] && [ "$(jqo '.items | length')" -gt 0 ]

# selectors
get "$KS/api/v1/pods?labelSelector=app%3Dsvc-00001"
check "labelSelector =" [ "$(jqo '.items | length')" -eq 25 ]
get "$KS/api/v1/pods?labelSelector=app+in+(svc-00001,svc-00002)"
check "labelSelector in" [ "$(jqo '.items | length')" -eq 50 ]
get "$KS/api/v1/pods?labelSelector=app+notin+(svc-00001),app!=svc-00002,app"
check "labelSelector notin, !=, exists" [ "$(jqo '.items | length')" -eq 199 ]
get "$KS/api/v1/pods?labelSelector=!app"
check "labelSelector !exists" [ "$(jqo '.items | length')" -eq 0 ]
get "$KS/apis/discovery.k8s.io/v1/endpointslices?labelSelector=kubernetes.io/service-name%3Dsvc-00003"
check "slice selector by service-name" [ "$(jqo '[.items[].endpoints[]] | length')" -eq 25 ]
get "$KS/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-00003"
N3=$(curl -s "$KS/api/v1/pods" | jq '[.items[] | select(.spec.nodeName == "node-00003")] | length')
check "fieldSelector spec.nodeName" [ "$(jqo '.items | length')" -eq "$N3" ] && [ "$N3" -gt 0 ]
get "$KS/api/v1/pods?fieldSelector=status.phase!%3DRunning"
check "fieldSelector !=" [ "$(jqo '.items | length')" -eq 0 ]
get "$KS/api/v1/namespaces?fieldSelector=metadata.name%3Dns-0"
check "fieldSelector metadata.name" [ "$(jqo '.items | length')" -eq 1 ]
check "unsupported field label: 400" [ "$(code "$KS/api/v1/pods?fieldSelector=spec.bogus%3D1")" = 400 ]
check "bad label selector: 400" [ "$(code "$KS/api/v1/pods?labelSelector=app+in+x")" = 400 ]
get "$KS/api/v1/pods?limit=5&labelSelector=app%3Dsvc-00009"
check "filtered page <= limit" [ "$(jqo '.items | length')" -eq 5 ]

# watch: ADDED / MODIFIED / DELETED / BOOKMARK
RV=$(curl -s "$KS/api/v1/namespaces/default/pods" | jq -r .metadata.resourceVersion)
curl -sN "$KS/api/v1/namespaces/default/pods?watch=1&resourceVersion=$RV&allowWatchBookmarks=true&timeoutSeconds=3" > "$TMP/w1" &
WPID=$!
sleep 0.3
curl -s -X POST -H 'Content-Type: application/json' "$KS/api/v1/namespaces/default/pods" \
    -d '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"w1","labels":{"app":"w"}},"spec":{"nodeName":"node-00001"},"status":{"phase":"Running","podIP":"10.9.9.9"}}' >/dev/null
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' "$KS/api/v1/namespaces/default/pods/w1" -d '{"metadata":{"labels":{"x":"1"}}}' >/dev/null
curl -s -X DELETE "$KS/api/v1/namespaces/default/pods/w1" >/dev/null
wait $WPID
OUT=$(cat "$TMP/w1")
check "watch: every line is one JSON event" [ "$(jq -c . "$TMP/w1" 2>/dev/null | grep -c .)" -eq "$(grep -c . "$TMP/w1")" ]
check "watch: ADDED, MODIFIED, DELETED in order" [ "$(jq -r 'select(.type != "BOOKMARK") | .type' "$TMP/w1" | tr '\n' ' ')" = "ADDED MODIFIED DELETED " ]
check "watch: BOOKMARK with only a resourceVersion" [ "$(jq -r 'select(.type == "BOOKMARK") | .object.metadata | keys | join(",")' "$TMP/w1" | head -1)" = resourceVersion ]
check "watch: DELETED carries last state" [ "$(jq -r 'select(.type == "DELETED") | .object.metadata.labels.x' "$TMP/w1")" = 1 ]
check "watch: ended by timeoutSeconds" true

# watch from "" gives synthetic ADDED; selector transitions give DELETED
curl -sN "$KS/api/v1/namespaces/ns-0/pods?watch=1&labelSelector=app%3Dsvc-00001&timeoutSeconds=2" > "$TMP/w2" &
WPID=$!
sleep 0.3
P1=$(curl -s "$KS/api/v1/namespaces/ns-0/pods?labelSelector=app%3Dsvc-00001&limit=1" | jq -r '.items[0].metadata.name')
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' "$KS/api/v1/namespaces/ns-0/pods/$P1" -d '{"metadata":{"labels":{"app":"moved"}}}' >/dev/null
wait $WPID
check "watch RV unset: 25 synthetic ADDED" [ "$(jq -r 'select(.type == "ADDED") | .type' "$TMP/w2" | grep -c .)" -eq 25 ]
check "watch: leaving the selector is DELETED" [ "$(jq -r 'select(.type == "DELETED") | .object.metadata.name' "$TMP/w2")" = "$P1" ]

# sendInitialEvents ends the initial events with an annotated bookmark
curl -sN "$KS/api/v1/nodes?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1" > "$TMP/w3"
check "sendInitialEvents: 12 ADDED then initial-events-end" [ "$(jq -r '.type' "$TMP/w3" | head -13 | tail -1)" = BOOKMARK ] && \
    [ "$(jq -r 'select(.type == "BOOKMARK") | .object.metadata.annotations["k8s.io/initial-events-end"]' "$TMP/w3" | head -1)" = true ]

# 409 on a stale PUT
get "$KS/api/v1/namespaces/ns-0/services/svc-00000"
STALE=$OUT
OUT=$(jq -c '.metadata.labels.v = "1"' <<<"$STALE" | curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: application/json' --data-binary @- "$KS/api/v1/namespaces/ns-0/services/svc-00000")
check "PUT with current resourceVersion: 200" [ "$OUT" = 200 ]
OUT=$(jq -c '.metadata.labels.v = "2"' <<<"$STALE" | curl -s -X PUT -H 'Content-Type: application/json' --data-binary @- "$KS/api/v1/namespaces/ns-0/services/svc-00000")
check "PUT with stale resourceVersion: 409 Conflict" [ "$(jqo .code)" = 409 ] && [ "$(jqo .reason)" = Conflict ]
check "POST existing: 409 AlreadyExists" [ "$(curl -s -X POST -d "$STALE" "$KS/api/v1/namespaces/ns-0/services" | jq -r .reason)" = AlreadyExists ]

# 410: watch and continue from before expireHistory
get "$KS/api/v1/pods?limit=10"
RV=$(jqo .metadata.resourceVersion); CONT=$(jqo .metadata.continue)
fault '{"expireHistory":true}'
get "$KS/api/v1/pods?watch=1&resourceVersion=$RV&timeoutSeconds=2"
check "watch after expireHistory: ERROR 410 Expired" [ "$(jqo .type)" = ERROR ] && [ "$(jqo .object.code)" = 410 ] && [ "$(jqo .object.reason)" = Expired ]
get "$KS/api/v1/pods?limit=10&continue=$CONT"
check "continue after expireHistory: 410 with a fresh token" [ "$(jqo .code)" = 410 ] && [ "$(jqo .reason)" = Expired ] && [ -n "$(jqo '.metadata.continue // empty')" ]
check "list with expired resourceVersion+Exact: 410" [ "$(code "$KS/api/v1/pods?resourceVersion=$RV&resourceVersionMatch=Exact")" = 410 ]

# too large resourceVersions wait up to 3 s for the version, then get the
# apiserver's NewTooLargeResourceVersionError (504 Timeout, cause
# ResourceVersionTooLarge, Retry-After: 1); a watch-list gets it as an ERROR
# event. All at once, while another list and watch wait for a version that
# appears 0.5 s later and are then served.
CUR=$(curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion)
FUT=$((CUR + 1000))
BIGTOK=$(printf '{"v":"meta.k8s.io/v1","rv":%d,"start":"x"}' "$FUT" | base64 -w0 | tr '+/' '-_' | tr -d '=')
TL=()
tl() { curl -s -D "$TMP/$1.h" -o "$TMP/$1.b" -w '%{time_total}' "$2" > "$TMP/$1.t" & TL+=($!); }
tl tl_list "$KS/api/v1/pods?resourceVersion=$FUT&resourceVersionMatch=NotOlderThan"
tl tl_watch "$KS/api/v1/pods?watch=1&resourceVersion=$FUT&allowWatchBookmarks=true"
tl tl_wl "$KS/api/v1/pods?watch=1&resourceVersion=$FUT&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
tl tl_cont "$KS/api/v1/pods?limit=10&continue=$BIGTOK"
tl tl_soon "$KS/api/v1/namespaces/default/pods?resourceVersion=$((CUR + 1))&resourceVersionMatch=NotOlderThan"
tl tl_soonw "$KS/api/v1/namespaces/default/pods?watch=1&resourceVersion=$((CUR + 1))&timeoutSeconds=2&allowWatchBookmarks=true"
sleep 0.5
for n in soon1 soon2; do
    curl -s -X POST "$KS/api/v1/namespaces/default/pods" -d "{\"metadata\":{\"name\":\"$n\"}}" >/dev/null
done
wait "${TL[@]}"
OUT=$(cat "$TMP/tl_list.h" "$TMP/tl_list.b")
check "too large list: 504 after a 3 s wait" grep -q '^HTTP/1.1 504' "$TMP/tl_list.h" && awk -v t="$(cat "$TMP/tl_list.t")" 'BEGIN { exit !(t >= 2.9 && t < 4) }'
check "too large list: Retry-After: 1" grep -qi '^Retry-After: 1' "$TMP/tl_list.h"
OUT=$(cat "$TMP/tl_list.b")
check "too large list: Status Timeout, cause ResourceVersionTooLarge, retryAfterSeconds 1" \
    [ "$(jqo '[.code, .reason, .details.causes[0].reason, .details.causes[0].message, .details.retryAfterSeconds] | join(",")')" = "504,Timeout,ResourceVersionTooLarge,Too large resource version,1" ]
check "too large list: the apiserver's message" [ "$(jqo .message)" = "Timeout: Too large resource version: $FUT, current: $((CUR + 2))" ]
OUT=$(cat "$TMP/tl_watch.h" "$TMP/tl_watch.b")
check "too large watch: 504 Retry-After 1, the same Status, no BOOKMARK" grep -q '^HTTP/1.1 504' "$TMP/tl_watch.h" && \
    grep -qi '^Retry-After: 1' "$TMP/tl_watch.h" && [ "$(jq -r '.details.causes[0].reason' "$TMP/tl_watch.b")" = ResourceVersionTooLarge ]
OUT=$(cat "$TMP/tl_wl.b")
check "too large watch-list: 200 with one ERROR event (504 TooLarge)" grep -q '^HTTP/1.1 200' "$TMP/tl_wl.h" && \
    [ "$(jq -r '[.type, .object.code, .object.details.causes[0].reason] | join(",")' "$TMP/tl_wl.b")" = "ERROR,504,ResourceVersionTooLarge" ]
check "too large continue token: 504" grep -q '^HTTP/1.1 504' "$TMP/tl_cont.h"
OUT=$(cat "$TMP/tl_soon.b")
check "list for a version that appears: served then, at it" [ "$(jqo .metadata.resourceVersion)" = $((CUR + 1)) ] && \
    [ "$(jqo '[.items[].metadata.name] | index("soon1") != null')" = true ] && awk -v t="$(cat "$TMP/tl_soon.t")" 'BEGIN { exit !(t < 2.5) }'
OUT=$(cat "$TMP/tl_soonw.b")
check "watch for a version that appears: its events after it only" \
    [ "$(jq -r 'select(.type != "BOOKMARK") | .type + ":" + .object.metadata.name' "$TMP/tl_soonw.b" | tr '\n' ' ')" = "ADDED:soon2 " ]
check "watch for a version that appears: no BOOKMARK below it" \
    [ "$(jq -r 'select(.type == "BOOKMARK") | .object.metadata.resourceVersion | tonumber | select(. <= '$((CUR + 1))')' "$TMP/tl_soonw.b" | grep -c .)" -eq 0 ]

# saveState / restoreState: the API goes back in time, as after an etcd restore
RV0=$(curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion)
fault '{"saveState":"snap"}'
curl -s -X POST "$KS/api/v1/namespaces/default/pods" -d '{"metadata":{"name":"later"}}' >/dev/null
curl -s -X DELETE "$KS/api/v1/namespaces/default/pods/soon1" >/dev/null
RV1=$(curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion)
curl -sN "$KS/api/v1/pods?watch=1&resourceVersion=$RV1&timeoutSeconds=30" > "$TMP/w_restore" &
WPID=$!
sleep 0.3
check "restoreState of an unknown name: 400" [ "$(code -X POST -d '{"restoreState":"nope"}' "$KS/sim/v1/faults")" = 400 ]
check "... and nothing changed" [ "$(curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion)" = "$RV1" ]
S=$SECONDS
fault '{"restoreState":"snap"}'
wait "$WPID"
check "restoreState ends open watches" [ $((SECONDS - S)) -lt 5 ]
get "$KS/sim/v1/state"
check "restoreState: the saved resourceVersion, history reset" [ "$(jqo '.resourceVersion + " " + .compactedResourceVersion')" = "$RV0 $RV0" ] && [ "$RV0" -lt "$RV1" ]
check "restoreState: the saved objects (soon1 back, later gone)" \
    [ "$(jqo '[.pods[].metadata.name | select(. == "soon1" or . == "later")] | join(",")')" = soon1 ]
get "$KS/api/v1/pods?limit=5"
check "restoreState: lists at the saved resourceVersion" [ "$(jqo .metadata.resourceVersion)" = "$RV0" ]
get "$KS/api/v1/pods?watch=1&resourceVersion=$((RV0 - 1))&timeoutSeconds=2"
check "restoreState: a watch from before it: 410" [ "$(jqo .type) $(jqo .object.code)" = "ERROR 410" ]
curl -sN "$KS/api/v1/namespaces/default/pods?watch=1&resourceVersion=$RV0&timeoutSeconds=1" > "$TMP/w_after" &
WPID=$!
sleep 0.2
curl -s -X POST "$KS/api/v1/namespaces/default/pods" -d '{"metadata":{"name":"fresh"}}' >/dev/null
wait "$WPID"
check "restoreState: changes go on from the saved resourceVersion" \
    [ "$(jq -r '.type + ":" + .object.metadata.name + ":" + .object.metadata.resourceVersion' "$TMP/w_after")" = "ADDED:fresh:$((RV0 + 1))" ]

# failNext 429 with Retry-After, then recovery
fault '{"failNext":{"count":2,"code":429,"retryAfter":7}}'
OUT=$(curl -s -i "$KS/api/v1/nodes")
check "failNext: 429" grep -q '^HTTP/1.1 429' <<<"$OUT"
check "failNext: Retry-After header" grep -qi '^Retry-After: 7' <<<"$OUT"
check "failNext: second request fails too" [ "$(code "$KS/api/v1/nodes")" = 429 ]
check "failNext: third succeeds" [ "$(code "$KS/api/v1/nodes")" = 200 ]
fault '{"failNext":{"count":1,"code":503}}'
check "failNext: 503" [ "$(code "$KS/api/v1/nodes")" = 503 ]

# delayMs
fault '{"delayMs":300}'
T=$(curl -s -o /dev/null -w '%{time_total}' "$KS/version")
fault '{"delayMs":0}'
check "delayMs delays responses" awk -v t="$T" 'BEGIN { exit !(t >= 0.29) }'

# churn switched at run time: changes while on, none once off
ksrv() { curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion; }
check "churn: a negative rate is 400" [ "$(code -X POST -d '{"churn":-1}' "$KS/sim/v1/faults")" = 400 ]
check "churn: a string is 400" [ "$(code -X POST -d '{"churn":"5"}' "$KS/sim/v1/faults")" = 400 ]
R0=$(ksrv)
check "churn: the settings show the rate" [ "$(curl -s -X POST -d '{"churn":50}' "$KS/sim/v1/faults" | jq -r .churn)" = 50 ]
sleep 0.6
R1=$(ksrv)
OUT="resourceVersion $R0 before, $R1 after 0.6 s of churn 50/s"
check "churn on: objects change" [ "$R1" -ge $((R0 + 10)) ]
fault '{"churn":0}'
R2=$(ksrv)
sleep 0.4
OUT="resourceVersion $R2 when stopped, $(ksrv) 0.4 s later"
check "churn off: nothing changes" [ "$(ksrv)" = "$R2" ]
check "churn off: the settings show 0" [ "$(curl -s "$KS/sim/v1/faults" | jq -r .churn)" = 0 ]

# malformed watch line, split chunks, closeWatches
curl -sN "$KS/api/v1/nodes?watch=1&resourceVersion=0&timeoutSeconds=20" > "$TMP/w4" &
WPID=$!
sleep 0.3
fault '{"splitChunks":true}'
curl -s -X PATCH -H 'Content-Type: application/merge-patch+json' "$KS/api/v1/nodes/node-00002" -d '{"metadata":{"labels":{"split":"yes"}}}' >/dev/null
fault '{"malformedWatchLine":true}'
fault '{"closeWatches":true,"splitChunks":false}'
S=$SECONDS
wait $WPID
check "closeWatches ends open watches" [ $((SECONDS - S)) -lt 5 ]
check "split event arrives whole" [ "$(grep '"split":"yes"' "$TMP/w4" | jq -r .type 2>/dev/null)" = MODIFIED ]
check "malformed line was sent" [ "$(tail -1 "$TMP/w4" | jq . >/dev/null 2>&1; echo $?)" != 0 ]

# bad input never crashes
check "bad JSON body: 400" [ "$(code -X POST -d '{nope' "$KS/api/v1/namespaces/default/pods")" = 400 ]
check "non-object body: 400" [ "$(code -X POST -d '[1,2]' "$KS/api/v1/namespaces/default/pods")" = 400 ]
check "invalid name: 422" [ "$(code -X POST -d '{"metadata":{"name":"Bad_Name"}}' "$KS/api/v1/namespaces/default/pods")" = 422 ]
check "slice without addressType: 422" [ "$(code -X POST -d '{"metadata":{"name":"s"}}' "$KS/apis/discovery.k8s.io/v1/namespaces/default/endpointslices")" = 422 ]
check "kind mismatch: 400" [ "$(code -X POST -d '{"kind":"Service","metadata":{"name":"p"}}' "$KS/api/v1/namespaces/default/pods")" = 400 ]
check "missing namespace: 404" [ "$(code -X POST -d '{"metadata":{"name":"p"}}' "$KS/api/v1/namespaces/nope/pods")" = 404 ]
check "bad continue token: 400" [ "$(code "$KS/api/v1/pods?limit=1&continue=%%%garbage")" = 400 ]
TOK=$(curl -s "$KS/api/v1/pods?limit=1" | jq -r .metadata.continue)
check "continue token: 200" [ "$(code "$KS/api/v1/pods?limit=1&continue=$TOK")" = 200 ]
check "continue token with '=' (RawURLEncoding has none): 400" [ "$(code "$KS/api/v1/pods?limit=1&continue=$TOK%3D")" = 400 ]
check "continue token of base64url non-JSON: 400" [ "$(code "$KS/api/v1/pods?limit=1&continue=Zm9vYmFy")" = 400 ]
get "$KS/api/v1/pods?limit=1&continue=Zm9v"
check "undecodable continue token: BadRequest Status" [ "$(jqo .code) $(jqo .reason)" = "400 BadRequest" ]
check "unknown resource: 404" [ "$(code "$KS/api/v1/secrets")" = 404 ]
check "apply patch: 415" [ "$(code -X PATCH -H 'Content-Type: application/apply-patch+yaml' -d '{}' "$KS/api/v1/nodes/node-00001")" = 415 ]
OUT=$(K patch node node-00001 --type=json -p '[{"op":"add","path":"/metadata/labels/jp~1x","value":"1"}]')
check "kubectl patch --type=json" [ "$(K get node node-00001 -o jsonpath='{.metadata.labels.jp/x}')" = 1 ]
OUT=$(K patch node node-00001 --type=json -p '[{"op":"test","path":"/metadata/name","value":"other"}]')
check "kubectl patch --type=json, failed test: the apiserver's 422 message" \
    grep -q 'the server rejected our request due to an error in our request' <<<"$OUT"
check "json-patch of an object (not an array): 400" [ "$(code -X PATCH -H 'Content-Type: application/json-patch+json' -d '{}' "$KS/api/v1/nodes/node-00001")" = 400 ]
check "bad faults body: 400" [ "$(code -X POST -d '{"failNext":"x"}' "$KS/sim/v1/faults")" = 400 ]
check "kubesim still alive after bad input" alive

# ---------------------------------------------------------------- --token, --load
cat > "$TMP/multi.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata: {name: loaded}
---
# a comment-only document is fine
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: loaded}
spec: {clusterIP: 10.96.5.5, ports: [{port: 443}]}
EOF
cat > "$TMP/list.json" <<'EOF'
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"lp","namespace":"loaded","labels":{"a":"b"}},"status":{"phase":"Running","podIP":"10.2.0.1"}},
 {"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":"api-1","namespace":"loaded","labels":{"kubernetes.io/service-name":"api"}},"addressType":"IPv4","endpoints":[{"addresses":["10.2.0.1"]}]}]}
EOF
start_kubesim --token s3cret --load "$TMP/multi.yaml" --load "$TMP/list.json"
check "--token: no credentials: 401" [ "$(code "$KS/api/v1/pods")" = 401 ]
check "--token: wrong token: 401" [ "$(code -H 'Authorization: Bearer nope' "$KS/api/v1/pods")" = 401 ]
get -H 'Authorization: Bearer s3cret' "$KS/api/v1/namespaces/loaded/services/api"
check "--load YAML multi-doc: service" [ "$(jqo .spec.clusterIP)" = 10.96.5.5 ]
get -H 'Authorization: Bearer s3cret' "$KS/apis/discovery.k8s.io/v1/namespaces/loaded/endpointslices/api-1"
check "--load kind: List: slice" [ "$(jqo '.endpoints[0].addresses[0]')" = 10.2.0.1 ]
get -H 'Authorization: Bearer s3cret' "$KS/api/v1/namespaces/loaded/pods?labelSelector=a%3Db"
check "--load kind: List: pod" [ "$(jqo '.items[0].status.podIP')" = 10.2.0.1 ]
fault '{"rotateToken":"n3w"}'
check "rotateToken: old token 401" [ "$(code -H 'Authorization: Bearer s3cret' "$KS/api/v1/pods")" = 401 ]
check "rotateToken: new token 200" [ "$(code -H 'Authorization: Bearer n3w' "$KS/api/v1/pods")" = 200 ]
echo 'kind: Nope' > "$TMP/bad.yaml"
refused() { ! timeout 5 "$KUBESIM" "$@" >/dev/null 2>&1; }
check "--load of an unsupported kind fails startup" refused --load "$TMP/bad.yaml"
check "--load of a missing file fails startup" refused --load "$TMP/missing.yaml"
check "bad --generate fails startup" refused --generate pods=x

# ---------------------------------------------------------------- TLS
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" \
        -days 1 -subj /CN=127.0.0.1 >/dev/null 2>&1; then
    # kubectl sends bearer tokens over https only
    start_kubesim --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --token tls-tok
    KS=https://$KS_ADDR
    check "TLS: https /version" [ "$(curl -sk -H 'Authorization: Bearer tls-tok' "$KS/version" | jq -r .major)" = 1 ]
    check "TLS: token still required" [ "$(curl -sk -o /dev/null -w '%{http_code}' "$KS/version")" = 401 ]
    OUT=$(K --insecure-skip-tls-verify --token tls-tok get namespaces -o json)
    check "TLS: kubectl with bearer token over https" [ "$(jqo '.items | length')" -eq 4 ]
fi

finish
