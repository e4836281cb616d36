#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kubesim_crd.sh — CustomResourceDefinitions, dryRun and HorizontalPodAutoscalers
# in tests/kubesim/kubesim, driven by the real kubectl and curl.
#
# Before its CRD a kind is unknown (kubectl: no matches for kind; the API:
# 404). kubectl apply of the Cilium and Calico CRDs under tests/data/cni/
# makes them served: discovery (/apis, /apis/GROUP, /apis/GROUP/VERSION),
# status.acceptedNames and the NamesAccepted/Established conditions; then
# their objects go through create, apply (create, then merge patch),
# get/list, kubectl get --watch and curl watches (resourceVersion replay,
# bookmarks, 410), replace, merge and JSON patch, strategic merge patch
# refused with 415, delete; a namespaced CRD; CRD validation (422); the
# request log. Deleting a CRD deletes its objects (DELETED on the watch, which
# then ends) and the kind is 404 again; saveState/restoreState bring it back.
# dryRun=All on create/replace/patch/delete (kubectl --dry-run=server):
# nothing stored, no resourceVersion taken, no watch event; an unknown dryRun
# value is 422. kubectl apply of an autoscaling/v2 HPA and a ConfigMap. The
# OpenAPI v3 document: kubectl create/apply with validation on (no
# --validate=false), of CRs, an HPA and conf/kubernetes/render's manifests.
# --generate podCIDRs=1.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

. "$top_srcdir/tests/integration/kubernetes_lib.sh"   # start_kubesim, need_kube
DATA=$top_srcdir/tests/data/cni
need_kube
command -v jq >/dev/null || skip "jq not installed"
command -v curl >/dev/null || skip "curl not installed"

# kubectl with its discovery and OpenAPI cache in the test's directory
K() { kubectl --server "$KS" --cache-dir "$TMP/kcache" "$@" 2>&1; }
get() { OUT=$(curl -s "$@"); }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
jqo() { jq -r "$1" <<<"$OUT"; }
ksrv() { curl -s "$KS/sim/v1/faults" | jq -r .resourceVersion; }
CN=/apis/cilium.io/v2/ciliumnodes
BA=/apis/crd.projectcalico.org/v1/blockaffinities

start_kubesim --bookmark-interval 1

# ---------------------------------------------------------------- before the CRD
OUT=$(K apply -f "$DATA/ciliumnodes.yaml" --validate=false)
check "CR before its CRD: kubectl: no matches for kind" grep -q 'no matches for kind "CiliumNode" in version "cilium.io/v2"' <<<"$OUT"
get "$KS$CN"
check "CR before its CRD: 404 NotFound Status" [ "$(code "$KS$CN")" = 404 ] && [ "$(jqo .reason)" = NotFound ]
check "CR before its CRD: /apis/cilium.io 404" [ "$(code "$KS/apis/cilium.io")" = 404 ]
check "CR before its CRD: not in /apis" [ "$(curl -s "$KS/apis" | jq '[.groups[].name] | index("cilium.io")')" = null ]

# ---------------------------------------------------------------- CRD apply
OUT=$(K apply -f "$DATA/cilium-crd.yaml" --validate=false)
check "kubectl apply of the CiliumNode CRD" grep -q 'ciliumnodes.cilium.io created' <<<"$OUT"
OUT=$(K apply -f "$DATA/calico-crd.yaml" --validate=false)
check "kubectl apply of the BlockAffinity CRD" grep -q 'blockaffinities.crd.projectcalico.org created' <<<"$OUT"
OUT=$(K get crd ciliumnodes.cilium.io -o json)
check "CRD: status.acceptedNames" [ "$(jqo '.status.acceptedNames | [.plural, .kind, .listKind, .singular, (.shortNames|join(","))] | join(" ")')" = "ciliumnodes CiliumNode CiliumNodeList ciliumnode cn,ciliumn" ]
check "CRD: Established and NamesAccepted True" [ "$(jqo '[.status.conditions[] | select(.status == "True") | .type] | sort | join(",")')" = "Established,NamesAccepted" ]
check "CRD: Established reason" [ "$(jqo '.status.conditions[] | select(.type == "Established") | .reason')" = InitialNamesAccepted ]
check "CRD: storedVersions" [ "$(jqo '.status.storedVersions | join(",")')" = v2 ]
check "CRD: conversion defaulted" [ "$(jqo .spec.conversion.strategy)" = None ]
OUT=$(K wait --for condition=established --timeout=10s crd/ciliumnodes.cilium.io crd/blockaffinities.crd.projectcalico.org)
check "kubectl wait --for condition=established" [ "$(grep -c 'condition met' <<<"$OUT")" -eq 2 ]
OUT=$(K get crd -o name)
check "kubectl get crd lists both" [ "$(wc -l <<<"$OUT")" -eq 2 ]
get "$KS/apis"
check "discovery: /apis lists cilium.io v2" [ "$(jqo '.groups[] | select(.name == "cilium.io") | .preferredVersion.groupVersion')" = cilium.io/v2 ]
check "discovery: /apis lists crd.projectcalico.org" [ "$(jqo '.groups[] | select(.name == "crd.projectcalico.org") | .versions[0].version')" = v1 ]
check "discovery: /apis lists apiextensions.k8s.io" [ "$(jqo '.groups[] | select(.name == "apiextensions.k8s.io") | .preferredVersion.version')" = v1 ]
get "$KS/apis/cilium.io"
check "discovery: /apis/cilium.io APIGroup" [ "$(jqo '.kind + " " + .versions[0].groupVersion')" = "APIGroup cilium.io/v2" ]
get "$KS/apis/cilium.io/v2"
check "discovery: /apis/cilium.io/v2 resources" [ "$(jqo '.resources[0] | [.name, .kind, .namespaced, (.shortNames|join(",")), (.categories|join(","))] | join(" ")')" = "ciliumnodes CiliumNode false cn,ciliumn cilium" ]
check "discovery: /apis/cilium.io/v1 404" [ "$(code "$KS/apis/cilium.io/v1")" = 404 ]
check "discovery: /apis/cilium.io/v2/ trailing slash" [ "$(curl -s "$KS/apis/cilium.io/v2/" | jq -r .groupVersion)" = cilium.io/v2 ]

# ---------------------------------------------------------------- CRs: create, apply, get, list
RV0=$(ksrv)
WATCH_OUT=$TMP/kwatch.txt
timeout 90 kubectl --server "$KS" --cache-dir "$TMP/kcache" get ciliumnodes --watch -o name > "$WATCH_OUT" 2>&1 &
KWATCH_PID=$!
PIDS+=($KWATCH_PID)
curl -s -N "$KS$CN?watch=1&resourceVersion=$RV0&allowWatchBookmarks=true&timeoutSeconds=90" > "$TMP/cwatch.txt" &
CWATCH_PID=$!
PIDS+=($CWATCH_PID)
sleep 0.5
OUT=$(K apply -f "$DATA/ciliumnodes.yaml" --validate=false)
check "kubectl apply creates CiliumNodes" [ "$(grep -c 'created' <<<"$OUT")" -eq 2 ]
OUT=$(K apply -f "$DATA/ciliumnodes.yaml" --validate=false)
check "kubectl apply again: unchanged" [ "$(grep -c 'unchanged' <<<"$OUT")" -eq 2 ]
OUT=$(K create -f "$DATA/blockaffinities.yaml" --validate=false)
check "kubectl create BlockAffinities" [ "$(grep -c 'created' <<<"$OUT")" -eq 5 ]
OUT=$(K create -f "$DATA/blockaffinities.yaml" --validate=false)
check "kubectl create again: AlreadyExists" grep -q 'AlreadyExists.*blockaffinities.crd.projectcalico.org "node-a-10-244-0-0-26" already exists' <<<"$OUT"
OUT=$(K get cn node-a -o json)
check "kubectl get cn (short name) -o json" [ "$(jqo '.spec.ipam.podCIDRs | join(",")')" = "10.244.0.0/24,fd00:10:244::/64" ]
check "CR: kind/apiVersion" [ "$(jqo '.kind + " " + .apiVersion')" = "CiliumNode cilium.io/v2" ]
check "CR: server fields" [ "$(jqo '.metadata | (.uid != null) and (.generation == 1) and (.resourceVersion != null)')" = true ]
OUT=$(K get blockaffinities)
check "kubectl get blockaffinities (table)" [ "$(grep -c '^node-' <<<"$OUT")" -eq 5 ]
get "$KS$BA?labelSelector=&fieldSelector=metadata.name%3Dnode-b-10-244-1-64-26"
check "list with fieldSelector" [ "$(jqo '.kind + " " + (.items | length | tostring) + " " + .items[0].spec.state')" = "BlockAffinityList 1 pending" ]
get "$KS$BA?limit=2"
check "list: limit/continue" [ "$(jqo '.items | length')" -eq 2 ] && [ "$(jqo .metadata.remainingItemCount)" -eq 3 ]
get "$KS$BA?limit=2&continue=$(jqo .metadata.continue)"
check "list: second page" [ "$(jqo '.items[0].metadata.name')" = node-b-10-244-1-0-26 ]
check "cluster-scoped CR under a namespace: 404" [ "$(code "$KS/apis/cilium.io/v2/namespaces/default/ciliumnodes")" = 404 ]
OUT=$(K get cn node-zz)
check "get missing CR: NotFound with resource.group" grep -q 'ciliumnodes.cilium.io "node-zz" not found' <<<"$OUT"

# ---------------------------------------------------------------- replace, patch
K get cn node-b -o json | jq '.spec.ipam.podCIDRs = ["10.244.9.0/24"]' > "$TMP/nb.json"
OUT=$(K replace -f "$TMP/nb.json" --validate=false)
check "kubectl replace of a CR" grep -q 'ciliumnode.cilium.io/node-b replaced' <<<"$OUT"
check "replace stored" [ "$(K get cn node-b -o jsonpath='{.spec.ipam.podCIDRs[0]}')" = 10.244.9.0/24 ]
check "replace: generation 2" [ "$(K get cn node-b -o jsonpath='{.metadata.generation}')" = 2 ]
OUT=$(K replace -f "$TMP/nb.json" --validate=false)
check "replace with the old resourceVersion: 409" grep -q 'Conflict\|the object has been modified' <<<"$OUT"
OUT=$(K patch cn node-b -p '{"spec":{"ipam":{"podCIDRs":["10.244.1.0/24"]}}}')
check "strategic merge patch of a CR: 415 as the apiserver" grep -q 'application/strategic-merge-patch+json is not supported' <<<"$OUT"
check "415 status code" [ "$(code -X PATCH -H 'Content-Type: application/strategic-merge-patch+json' -d '{}' "$KS$CN/node-b")" = 415 ]
OUT=$(K patch cn node-b --type=merge -p '{"spec":{"ipam":{"podCIDRs":["10.244.1.0/24"]}}}')
check "merge patch of a CR" grep -q patched <<<"$OUT"
OUT=$(K patch blockaffinity node-b-10-244-1-64-26 --type=json -p '[{"op":"replace","path":"/spec/state","value":"confirmed"}]')
check "JSON patch of a CR" grep -q patched <<<"$OUT"
check "JSON patch stored" [ "$(K get blockaffinity node-b-10-244-1-64-26 -o jsonpath='{.spec.state}')" = confirmed ]
sed 's/10.244.0.0\/24/10.244.5.0\/24/' "$DATA/ciliumnodes.yaml" > "$TMP/cn2.yaml"
OUT=$(K apply -f "$TMP/cn2.yaml" --validate=false)
check "kubectl apply of a changed CR: configured" grep -q 'node-a configured' <<<"$OUT"
check "apply stored (merge patch)" [ "$(K get cn node-a -o jsonpath='{.spec.ipam.podCIDRs[0]}')" = 10.244.5.0/24 ]
check "kubectl apply of a CR sends a merge patch" bash -c "curl -s '$KS/sim/v1/requests' | jq -e '[.requests[] | select(.method == \"PATCH\" and (.uri | startswith(\"$CN/node-a\")))] | length >= 1' >/dev/null"

# ---------------------------------------------------------------- watch
OUT=$(K delete cn node-b)
check "kubectl delete of a CR" grep -q 'deleted' <<<"$OUT"
check "deleted CR: 404" [ "$(code "$KS$CN/node-b")" = 404 ]
# both watches stay open until the last event has arrived (a loaded machine
# can take longer than any fixed watch timeout for the steps above)
wait_until 30 bash -c "grep -q '\"type\":\"DELETED\"' '$TMP/cwatch.txt' && grep -q '\"type\":\"BOOKMARK\"' '$TMP/cwatch.txt'"
wait_until 30 bash -c "[ \$(grep -c 'ciliumnode.cilium.io/node-' '$WATCH_OUT') -ge 4 ]"
sleep 0.5
kill "$CWATCH_PID" "$KWATCH_PID" 2>/dev/null
OUT=$(cat "$TMP/cwatch.txt")
check "curl watch from a resourceVersion: ADDED, MODIFIED, DELETED in order" [ "$(jq -r 'select(.type != "BOOKMARK") | .type + " " + .object.metadata.name' "$TMP/cwatch.txt" | tr '\n' ' ')" = "ADDED node-a ADDED node-b MODIFIED node-b MODIFIED node-b MODIFIED node-a MODIFIED node-b DELETED node-b " ]
check "curl watch: bookmarks of kind CiliumNode" [ "$(jq -r 'select(.type == "BOOKMARK") | .object.kind' "$TMP/cwatch.txt" | sort -u)" = CiliumNode ]
OUT=$(cat "$WATCH_OUT")
check "kubectl get --watch of a CR kind" [ "$(grep -c 'ciliumnode.cilium.io/node-' "$WATCH_OUT")" -ge 4 ]
curl -s -X POST -d '{"expireHistory":true}' "$KS/sim/v1/faults" >/dev/null
get "$KS$CN?watch=1&resourceVersion=$RV0"
check "watch of a CR from an expired resourceVersion: 410 ERROR event" [ "$(jqo '.type + " " + (.object.code|tostring)')" = "ERROR 410" ]
get "$KS/sim/v1/requests"
check "request log records the CR requests" [ "$(jqo "[.requests[] | select(.uri | startswith(\"$CN\"))] | length")" -ge 8 ]

# ---------------------------------------------------------------- namespaced CRD, validation
cat > "$TMP/widget-crd.yaml" <<'EOF'
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1alpha1
    served: false
    storage: false
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
EOF
OUT=$(K apply -f "$TMP/widget-crd.yaml" --validate=false)
check "namespaced CRD applied" grep -q created <<<"$OUT"
get "$KS/apis/example.com"
check "discovery: served versions only, GA preferred" [ "$(jqo '[.versions[].version] | join(",")') $(jqo .preferredVersion.version)" = "v1,v1beta1 v1" ]
check "discovery: unserved version 404" [ "$(code "$KS/apis/example.com/v1alpha1")" = 404 ]
check "CRD defaults singular and listKind" [ "$(K get crd widgets.example.com -o jsonpath='{.spec.names.singular} {.spec.names.listKind}')" = "widget WidgetList" ]
printf 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: kube-system}\nspec: {size: 3}\n' > "$TMP/w1.yaml"
OUT=$(K apply -f "$TMP/w1.yaml" --validate=false)
check "namespaced CR created" grep -q 'widget.example.com/w1 created' <<<"$OUT"
check "namespaced CR: get in its namespace" [ "$(code "$KS/apis/example.com/v1/namespaces/kube-system/widgets/w1")" = 200 ]
check "namespaced CR: served at v1beta1 too" [ "$(code "$KS/apis/example.com/v1beta1/namespaces/kube-system/widgets/w1")" = 200 ]
check "namespaced CR: not at the unserved v1alpha1" [ "$(code "$KS/apis/example.com/v1alpha1/namespaces/kube-system/widgets/w1")" = 404 ]
check "namespaced CR: cluster-wide list" [ "$(curl -s "$KS/apis/example.com/v1/widgets" | jq '.items | length')" -eq 1 ]
check "namespaced CR: get without a namespace 404" [ "$(code "$KS/apis/example.com/v1/widgets/w1")" = 404 ]
sed 's/widgets.example.com/gadgets.example.com/' "$TMP/widget-crd.yaml" > "$TMP/bad-crd.yaml"
OUT=$(K apply -f "$TMP/bad-crd.yaml" --validate=false)
check "CRD with a name other than plural.group: 422" grep -q 'metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group' <<<"$OUT"
sed 's/storage: false/storage: true/' "$TMP/widget-crd.yaml" | sed 's/widgets/things/' > "$TMP/bad2.yaml"
OUT=$(K apply -f "$TMP/bad2.yaml" --validate=false)
check "CRD with two storage versions: 422" grep -q 'must have exactly one version marked as storage version' <<<"$OUT"
sed 's/Namespaced/Cluster/' "$TMP/widget-crd.yaml" > "$TMP/bad3.yaml"
OUT=$(K apply -f "$TMP/bad3.yaml" --validate=false)
check "CRD scope change: 422 immutable" grep -q 'spec.scope: Invalid value: "Cluster": field is immutable' <<<"$OUT"
check "CRD without schema: 422" [ "$(curl -s -X POST -H 'Content-Type: application/json' -d '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},"spec":{"group":"example.com","scope":"Cluster","names":{"plural":"foos","kind":"Foo"},"versions":[{"name":"v1","served":true,"storage":true}]}}' "$KS/apis/apiextensions.k8s.io/v1/customresourcedefinitions" | jq -r '.code, .details.causes[0].field' | tr '\n' ' ')" = "422 spec.versions[0].schema.openAPIV3Schema " ]

# ---------------------------------------------------------------- saveState/restoreState
curl -s -X POST -d '{"saveState":"crds"}' "$KS/sim/v1/faults" >/dev/null

# ---------------------------------------------------------------- CRD delete
RV1=$(ksrv)
curl -s -N "$KS$CN?watch=1&resourceVersion=$RV1&timeoutSeconds=10" > "$TMP/cwatch2.txt" &
CW=$!
PIDS+=($CW)
sleep 0.3
OUT=$(K delete -f "$DATA/cilium-crd.yaml")
check "kubectl delete of the CRD" grep -q 'ciliumnodes.cilium.io" deleted' <<<"$OUT"
check "the watch of its kind ends" wait_until 3 bash -c "! kill -0 $CW 2>/dev/null"
check "its objects were DELETED on the watch" [ "$(jq -r 'select(.type == "DELETED") | .object.metadata.name' "$TMP/cwatch2.txt")" = node-a ]
get "$KS$CN"
check "after the CRD delete: 404 NotFound" [ "$(code "$KS$CN")" = 404 ] && [ "$(jqo .reason)" = NotFound ]
check "after the CRD delete: get 404" [ "$(code "$KS$CN/node-a")" = 404 ]
check "after the CRD delete: group gone from /apis" [ "$(curl -s "$KS/apis" | jq '[.groups[].name] | index("cilium.io")')" = null ]
OUT=$(K get ciliumnodes)
check "after the CRD delete: kubectl get fails" grep -q 'the server could not find the requested resource\|the server doesn.t have a resource type' <<<"$OUT"
check "after the CRD delete: objects gone from the state" [ "$(curl -s "$KS/sim/v1/state" | jq 'has("ciliumnodes.cilium.io")')" = false ]
check "other CRDs still served" [ "$(code "$KS$BA")" = 200 ]
OUT=$(K apply -f "$DATA/cilium-crd.yaml" --validate=false)
check "CRD re-created" grep -q created <<<"$OUT"
check "re-created CRD: no objects" [ "$(curl -s "$KS$CN" | jq '.items | length')" -eq 0 ]
curl -s -X POST -d '{"restoreState":"crds"}' "$KS/sim/v1/faults" >/dev/null
check "restoreState: the old CRD's objects are back" [ "$(curl -s "$KS$CN" | jq -r '.items[].metadata.name')" = node-a ]
check "restoreState: the namespaced CRD still served" [ "$(code "$KS/apis/example.com/v1/namespaces/kube-system/widgets/w1")" = 200 ]

# ---------------------------------------------------------------- dryRun
RV2=$(ksrv)
curl -s -N "$KS/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$RV2&timeoutSeconds=4" > "$TMP/dwatch.txt" &
PIDS+=($!)
sleep 0.3
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dr, namespace: default}\ndata: {a: "1"}\n' > "$TMP/cm.yaml"
OUT=$(K create -f "$TMP/cm.yaml" --dry-run=server -o json --validate=false)
check "create --dry-run=server: the object as it would be" [ "$(jqo '.data.a + " " + (.metadata.uid != null | tostring) + " " + (.metadata.resourceVersion // "none")')" = "1 true none" ]
check "create --dry-run=server: nothing stored" [ "$(code "$KS/api/v1/namespaces/default/configmaps/dr")" = 404 ]
check "create --dry-run=server: no resourceVersion taken" [ "$(ksrv)" = "$RV2" ]
OUT=$(K apply -f "$TMP/cm.yaml" --dry-run=server --validate=false)
check "apply --dry-run=server" grep -q 'created (server dry run)' <<<"$OUT"
check "apply --dry-run=server: nothing stored" [ "$(code "$KS/api/v1/namespaces/default/configmaps/dr")" = 404 ]
K create -f "$TMP/cm.yaml" --validate=false >/dev/null
RV3=$(ksrv)
OUT=$(K patch configmap dr --type=merge -p '{"data":{"a":"2"}}' --dry-run=server -o json)
check "patch --dry-run=server: result shown" [ "$(jqo .data.a)" = 2 ] && [ "$(jqo .metadata.resourceVersion)" = "$RV3" ]
check "patch --dry-run=server: not stored" [ "$(curl -s "$KS/api/v1/namespaces/default/configmaps/dr" | jq -r .data.a)" = 1 ]
sed 's/"1"/"3"/' "$TMP/cm.yaml" > "$TMP/cm3.yaml"
OUT=$(K replace -f "$TMP/cm3.yaml" --dry-run=server -o json --validate=false)
check "replace --dry-run=server: result shown" [ "$(jqo .data.a)" = 3 ]
check "replace --dry-run=server: not stored" [ "$(curl -s "$KS/api/v1/namespaces/default/configmaps/dr" | jq -r .data.a)" = 1 ]
OUT=$(K delete configmap dr --dry-run=server)
check "delete --dry-run=server" grep -q 'deleted (server dry run)' <<<"$OUT"
check "delete --dry-run=server: still there" [ "$(code "$KS/api/v1/namespaces/default/configmaps/dr")" = 200 ]
check "delete with dryRun query: still there" [ "$(code -X DELETE "$KS/api/v1/namespaces/default/configmaps/dr?dryRun=All")" = 200 ] && [ "$(code "$KS/api/v1/namespaces/default/configmaps/dr")" = 200 ]
OUT=$(K delete crd blockaffinities.crd.projectcalico.org --dry-run=server)
check "CRD delete --dry-run=server: kind still served" [ "$(code "$KS$BA")" = 200 ] && [ "$(curl -s "$KS$BA" | jq '.items | length')" -eq 5 ]
check "dry runs took no resourceVersion" [ "$(ksrv)" = "$RV3" ]
get -X POST -H 'Content-Type: application/json' -d '{"metadata":{"name":"x"}}' "$KS/api/v1/namespaces/default/configmaps?dryRun=Some"
check "unknown dryRun value: 422 as the apiserver" [ "$(jqo .code)" = 422 ] && [ "$(jqo .message)" = 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Some"]: supported values: "All"' ]
get -X DELETE "$KS/api/v1/namespaces/default/configmaps/dr?dryRun=x"
check "unknown dryRun value on delete: 422 DeleteOptions" [ "$(jqo .code)" = 422 ] && grep -q '^DeleteOptions.meta.k8s.io' <<<"$(jqo .message)"
sleep 4
check "dry runs sent no watch events" [ "$(jq -r '.object.metadata.name' "$TMP/dwatch.txt" | tr '\n' ' ')" = "dr " ]

# ---------------------------------------------------------------- HPA
cat > "$TMP/hpa.yaml" <<'EOF'
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: topodns, namespace: kube-system}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: topodns}
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: topodns-autoscaler, namespace: kube-system}
data:
  linear: '{"coresPerReplica":256,"nodesPerReplica":16,"min":2,"preventSinglePointFailure":true}'
EOF
OUT=$(K apply -f "$TMP/hpa.yaml" --validate=false)
check "kubectl apply of an HPA and the autoscaler ConfigMap" [ "$(grep -c created <<<"$OUT")" -eq 2 ]
OUT=$(K get hpa -n kube-system topodns -o json)
check "HPA stored" [ "$(jqo '.apiVersion + " " + (.spec.maxReplicas|tostring)')" = "autoscaling/v2 10" ]
sed 's/maxReplicas: 10/maxReplicas: 20/' "$TMP/hpa.yaml" > "$TMP/hpa2.yaml"
OUT=$(K apply -f "$TMP/hpa2.yaml" --validate=false)
check "kubectl apply of a changed HPA" grep -q 'topodns configured' <<<"$OUT"
check "HPA changed" [ "$(K get hpa -n kube-system topodns -o jsonpath='{.spec.maxReplicas}')" = 20 ]
check "discovery: autoscaling/v2" [ "$(curl -s "$KS/apis/autoscaling/v2" | jq -r '.resources[0].name')" = horizontalpodautoscalers ]

# ---------------------------------------------------------------- OpenAPI v3, validation on
get "$KS/openapi/v3"
check "openapi v3 index: core, apps, CRD groups" [ "$(jqo '.paths | has("api/v1") and has("apis/apps/v1") and has("apis/crd.projectcalico.org/v1") and has("apis/example.com/v1beta1")')" = true ]
check "openapi v3 index: not the unserved version" [ "$(jqo '.paths | has("apis/example.com/v1alpha1")')" = false ]
URL=$(jqo '.paths["apis/crd.projectcalico.org/v1"].serverRelativeURL')
check "openapi v3 index: hashed URLs" grep -Eq '^/openapi/v3/apis/crd.projectcalico.org/v1[?]hash=[0-9A-F]{16}$' <<<"$URL"
get "$KS$URL"
check "openapi v3 GV document: PATCH with GVK and fieldValidation" [ "$(jqo '.paths["/apis/crd.projectcalico.org/v1/blockaffinities/{name}"].patch | (."x-kubernetes-group-version-kind".kind + " " + ([.parameters[].name] | join(",")))')" = "BlockAffinity dryRun,fieldValidation" ]
get "$KS/openapi/v3/api/v1"
check "openapi v3 core: namespaced paths" [ "$(jqo '.paths["/api/v1/namespaces/{namespace}/configmaps/{name}"].put."x-kubernetes-group-version-kind".kind')" = ConfigMap ]
check "openapi v3: unknown group version 404" [ "$(code "$KS/openapi/v3/apis/nope.io/v1")" = 404 ]
OUT=$(K apply -f "$DATA/ciliumnodes.yaml")
check "kubectl apply of CRs without --validate=false" [ "$(grep -c 'ciliumnode.cilium.io/node-. \(created\|configured\|unchanged\)' <<<"$OUT")" -eq 2 ]
OUT=$(K apply -f "$TMP/hpa2.yaml")
check "kubectl apply of an HPA without --validate=false" grep -q 'topodns unchanged' <<<"$OUT"
if [ -x "$top_srcdir/conf/kubernetes/render" ]; then
    "$top_srcdir/conf/kubernetes/render" --events --multicluster clusterset.local kube-dns node-local > "$TMP/render.yaml"
    OUT=$(K apply -f "$TMP/render.yaml")
    check "kubectl apply of the rendered manifests without --validate=false" [ "$(grep -c ' created$' <<<"$OUT")" -eq 10 ]
    OUT=$(K create -f "$TMP/render.yaml")
    check "kubectl create with validation: AlreadyExists from the server" [ "$(grep -c 'AlreadyExists' <<<"$OUT")" -eq 10 ]
fi
check "validation on: kubectl asks the server to validate (fieldValidation=Strict)" bash -c "curl -s '$KS/sim/v1/requests' | jq -e '[.requests[] | select(.uri | test(\"fieldValidation=Strict\"))] | length >= 3' >/dev/null"

check "kubesim still alive" kill -0 "$KS_PID"

# ---------------------------------------------------------------- --generate podCIDRs=1
# pods_in_cidrs: every pod's IP inside its node's spec.podCIDR (and in
# spec.podCIDRs), pod IPs unique, every endpoint address a pod's
pods_in_cidrs() {
    curl -s "$KS/sim/v1/state" > "$TMP/state.json"
    /usr/bin/python3 - "$TMP/state.json" "$1" <<'PY'
import ipaddress, json, sys
s = json.load(open(sys.argv[1]))
want_inside = sys.argv[2] == "inside"
cidr = {}
for n in s["nodes"]:
    c = ipaddress.ip_network(n["spec"]["podCIDR"])
    assert n["spec"]["podCIDRs"] == [n["spec"]["podCIDR"]]
    cidr[n["metadata"]["name"]] = c
nets = list(cidr.values())
assert all(not a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:]) or not want_inside
ips = [p["status"]["podIP"] for p in s["pods"]]
inside = [ipaddress.ip_address(p["status"]["podIP"]) in cidr[p["spec"]["nodeName"]] for p in s["pods"]]
eps = {a for sl in s["endpointslices"] for e in (sl.get("endpoints") or []) for a in e["addresses"]}
ok = len(set(ips)) == len(ips) and eps <= set(ips) and (all(inside) if want_inside else not any(inside))
sys.exit(0 if ok and len(ips) > 0 else 1)
PY
}
start_kubesim --generate nodes=3,pods=900,services=9,zones=3,podCIDRs=1
check "--generate podCIDRs=1: every pod inside its node's podCIDR" pods_in_cidrs inside
check "--generate podCIDRs=1: 900 pods on 3 nodes get /23 blocks" [ "$(curl -s "$KS/api/v1/nodes/node-00001" | jq -r .spec.podCIDR)" = 10.128.2.0/23 ]
start_kubesim --generate nodes=3,pods=30,services=5,zones=3
check "--generate default: pod IPs as before (10.128.0.x, not in the node's podCIDR)" pods_in_cidrs outside
check "--generate default: node podCIDR as before" [ "$(curl -s "$KS/api/v1/nodes/node-00002" | jq -r .spec.podCIDR)" = 10.244.2.0/24 ]
start_kubesim --load "$DATA/cilium-crd.yaml" --load "$DATA/ciliumnodes.yaml" --load "$DATA/calico-crd.yaml" --load "$DATA/blockaffinities.yaml"
check "--load of CRDs and their objects" [ "$(curl -s "$KS$CN" | jq '.items | length') $(curl -s "$KS$BA" | jq '.items | length')" = "2 5" ]
check "--load of CRDs: established" [ "$(curl -s "$KS/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ciliumnodes.cilium.io" | jq -r '.status.conditions[] | select(.type == "Established") | .status')" = True ]
printf 'apiVersion: cilium.io/v2\nkind: CiliumNode\nmetadata: {name: x}\n' > "$TMP/orphan.yaml"
check "--load of a CR without its CRD fails startup" bash -c "! timeout 5 '$KUBESIM' --load '$TMP/orphan.yaml' >/dev/null 2>&1"
check "--generate podCIDRs=1 that does not fit is refused" bash -c "! timeout 5 '$KUBESIM' --generate nodes=70000,pods=10,podCIDRs=1 >/dev/null 2>&1"
finish
