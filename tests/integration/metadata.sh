#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# metadata.sh — the metadata plugin in the real binary: kubesim serves the
# acceptance fixture, topodns watches it with `pods verified`, and the log
# plugin prints {/kubernetes/...} labels (from the query name, and the
# client's pod by its address), {/log/type} and {/log/class}; without the
# plugin every label prints "-".
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
start_kubesim
load_fixture "$KDATA/cluster.json"
# the fixture's pod podns/foo becomes our client at 127.0.0.77
K patch pod foo -n podns --subresource=status --type=merge \
    -p '{"status":{"phase":"Running","podIP":"127.0.0.77","podIPs":[{"ip":"127.0.0.77"}]}}' > /dev/null

logged() {
    local i
    for i in $(seq 1 20); do
        grep -qE "$1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}

FMT='{name} ns={/kubernetes/namespace} svc={/kubernetes/service} kind={/kubernetes/kind} ep={/kubernetes/endpoint} port={/kubernetes/port-name} proto={/kubernetes/protocol} err={/kubernetes/parse-error} client={/kubernetes/client-namespace}/{/kubernetes/client-pod-name} type={/log/type} class={/log/class}'
start_topodns ".:{\$PORT} {
    metadata
    log . \"$FMT\"
    kubernetes cluster.local {
        endpoint $KS
        pods verified
    }
}
plain.example:{\$PORT} {
    log . \"$FMT\"
    whoami
}" || exit 1
# the watches see the pod at its new address
until_ok 5 bash -c "dig @127.0.0.1 -p $PORT +short 127-0-0-77.podns.pod.cluster.local A | grep -q 127.0.0.77" ||
    echo "note: pod not seen yet"

q -b 127.0.0.77 svc1.testns.svc.cluster.local A
check "service name: namespace, service, kind; the client's pod" \
    logged '^\[INFO\] svc1\.testns\.svc\.cluster\.local\. ns=testns svc=svc1 kind=svc ep= port= proto= err=- client=podns/foo type=NOERROR class=success$'
q -b 127.0.0.78 _http._tcp.svc1.testns.svc.cluster.local SRV
check "port and protocol; a client that is no pod" \
    logged '^\[INFO\] _http\._tcp\.svc1\.testns\.svc\.cluster\.local\. ns=testns svc=svc1 kind=svc ep= port=http proto=tcp err=- client=-/- type=NOERROR class=success$'
q -b 127.0.0.77 ep1a.svc1.testns.svc.cluster.local A
check "endpoint" logged '^\[INFO\] ep1a\.svc1\.testns\.svc\.cluster\.local\. ns=testns svc=svc1 kind=svc ep=ep1a '
q -b 127.0.0.77 nope.testns.svc.cluster.local A
check "a missing name: NXDOMAIN denial" \
    logged '^\[INFO\] nope\.testns\.svc\.cluster\.local\. ns=testns svc=nope .* type=NXDOMAIN class=denial$'
q -b 127.0.0.77 a.b.c.svc1.testns.svc.cluster.local A
check "a name the grammar rejects: parse-error only" \
    logged '^\[INFO\] a\.b\.c\.svc1\.testns\.svc\.cluster\.local\. ns=- svc=- kind=- ep=- port=- proto=- err=invalid query name client=podns/foo '
q -b 127.0.0.77 svc1.testns.svc.cluster.local AAAA
check "NODATA" logged '^\[INFO\] svc1\.testns\.svc\.cluster\.local\. ns=testns .* type=NODATA class=denial$'
q -b 127.0.0.77 www.plain.example A
check "without the metadata plugin every label is -" \
    logged '^\[INFO\] www\.plain\.example\. ns=- svc=- kind=- ep=- port=- proto=- err=- client=-/- type=- class=-$'

printf '.:%s {\n    metadata\n    metadata example.org\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "a second metadata rejected" grep -q "bad:3: Wrong argument count or unexpected line ending" <<<"$OUT"
finish
