#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_http2.sh — the API client speaks HTTP/2 when the server offers it.
# kubesim speaks HTTP/1.1 only, so nghttpx (Debian nghttp2-proxy) sits in
# front of it as a kube-apiserver-like TLS front end: HTTP/2 (or HTTP/1.1,
# whichever ALPN picks) to the client, HTTP/1.1 to kubesim. Checks, through
# the real proxy and the real binary:
#   - h2 offered: topodns syncs, every list and watch went over HTTP/2
#     (nghttpx's access log records the protocol of each request), and all
#     reflectors share one TCP connection (multiplexed streams);
#   - watch events stream over h2 (kubectl create → answer), and watches
#     closed by the server are re-opened on h2;
#   - only http/1.1 offered: topodns falls back and syncs the same.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
command -v nghttpx >/dev/null || skip "nghttpx (nghttp2-proxy) not installed"
command -v openssl >/dev/null || skip "openssl not installed"

P=$TMP/pki
mkdir -p "$P"
ossl() { openssl "$@" 2>>"$P/openssl.log" || { cat "$P/openssl.log"; exit 1; }; }
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
ossl req -x509 "${EC[@]}" -keyout "$P/ca.key" -out "$P/ca.crt" -days 2 -subj /CN=topodns-test-ca
ossl req "${EC[@]}" -keyout "$P/srv.key" -out "$P/srv.csr" -subj /CN=apiserver
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$P/srv.ext"
ossl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -out "$P/srv.crt" -days 2 -extfile "$P/srv.ext"

svc() {   # svc NAME IP: a ClusterIP Service manifest on stdout
    printf 'apiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: default}\n' "$1"
    printf 'spec: {clusterIP: %s, clusterIPs: [%s], ports: [{name: http, port: 80}]}\n' "$2" "$2"
}
svc web 10.96.0.50 > "$P/web.yaml"
start_kubesim --load "$P/web.yaml"

# start_proxy ALPN-LIST: nghttpx on 127.0.0.1:$FP in front of kubesim
start_proxy() {
    FP=$(free_port)
    ALOG=$TMP/access.$RANDOM.log
    nghttpx --frontend="127.0.0.1,$FP" --backend="${KS_ADDR/:/,}" --workers=1 \
        --npn-list="$1" --accesslog-file="$ALOG" \
        --accesslog-format='$request $status' --errorlog-file="$TMP/nghttpx.err" \
        --backend-read-timeout=15m --frontend-read-timeout=15m \
        --backend-connections-per-host=64 --no-ocsp \
        "$P/srv.key" "$P/srv.crt" > "$TMP/nghttpx.out" 2>&1 &
    NG_PID=$!
    PIDS+=("$NG_PID")
    until_ok 5 curl -s --noproxy '*' -o /dev/null --cacert "$P/ca.crt" "https://127.0.0.1:$FP/version" \
        || { echo "nghttpx did not start"; cat "$TMP/nghttpx.err" "$TMP/nghttpx.out"; exit 1; }
}
stop_proxy() { kill "$NG_PID"; wait "$NG_PID" 2>/dev/null; }

# corefile: topodns through a kubeconfig naming the proxy and its CA (no
# client credentials: the proxy does not ask for any)
# (RP, the ready port, is chosen by the caller: this runs in a subshell)
corefile() {
    cat > "$TMP/kubeconfig" <<KC
apiVersion: v1
kind: Config
current-context: proxy
clusters:
- name: proxy
  cluster: {server: "https://127.0.0.1:$FP", certificate-authority: "$P/ca.crt"}
users:
- name: dns
  user: {}
contexts:
- name: proxy
  context: {cluster: proxy, user: dns}
KC
    echo ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        kubeconfig $TMP/kubeconfig
    }
}"
}
answers() { q "$1.default.svc.cluster.local" A; rcode_is NOERROR && answer_has "$2"; }
ready() { [ "$(curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready")" = 200 ]; }
# conns: established TCP connections from topodns to the proxy
conns() { ss -Htnp state established "( dport = :$FP )" | grep -c "pid=$TOPO_PID,"; }
fault() { curl -s --noproxy '*' -X POST -d "$1" "$KS/sim/v1/faults" >/dev/null; }

# ---- HTTP/2 offered ------------------------------------------------------
start_proxy h2,http/1.1
RP=$(free_port)
start_topodns "$(corefile)" || exit 1
check "h2: synced through the proxy, the service answers" until_ok 10 answers web '10\.96\.0\.50'
check "h2: /ready 200" until_ok 5 ready
OUT=$(cat "$ALOG")
check "h2: the lists went over HTTP/2" grep -qE 'GET /api/v1/services[?]limit=[0-9]+ HTTP/2 200' "$ALOG"
check "h2: no request over HTTP/1.1" eval '! grep -q "HTTP/1" "$ALOG"'
OUT=$(ss -Htnp state established "( dport = :$FP )")
check "h2: services, endpointslices and namespaces share one connection" [ "$(conns)" -eq 1 ]

svc api 10.96.0.51 > "$P/api.yaml"
OUT=$(K create -f "$P/api.yaml" --validate=false)
check "h2: a watch event streams through (kubectl create → answer)" until_ok 5 answers api '10\.96\.0\.51'
fault '{"closeWatches":true}'
check "h2: closed watches are logged as HTTP/2 watch requests" \
    until_ok 5 grep -q 'GET /api/v1/services?watch=1&.* HTTP/2 200' "$ALOG"
svc db 10.96.0.52 > "$P/db.yaml"
OUT=$(K create -f "$P/db.yaml" --validate=false)
check "h2: after the server closed the watches, new events still arrive" until_ok 10 answers db '10\.96\.0\.52'
OUT=$(cat "$ALOG")
check "h2: still no HTTP/1.1 request" eval '! grep -q "HTTP/1" "$ALOG"'
check "h2: still one connection after the re-watch" [ "$(conns)" -eq 1 ]
stop_topodns
stop_proxy

# ---- only HTTP/1.1 offered ------------------------------------------------
start_proxy http/1.1
RP=$(free_port)
start_topodns "$(corefile)" || exit 1
check "http/1.1 only: synced, the services answer" until_ok 10 eval 'answers web "10\.96\.0\.50" && answers db "10\.96\.0\.52"'
check "http/1.1 only: /ready 200" until_ok 5 ready
OUT=$(cat "$ALOG")
check "http/1.1 only: the lists went over HTTP/1.1" grep -qE 'GET /api/v1/services[?]limit=[0-9]+ HTTP/1.1 200' "$ALOG"
check "http/1.1 only: no HTTP/2 request" eval '! grep -q "HTTP/2" "$ALOG"'
stop_topodns
stop_proxy

finish
