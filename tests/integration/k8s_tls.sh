#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# k8s_tls.sh — the API client over TLS against kubesim serving HTTPS and
# requiring a client certificate (--client-ca): a throwaway CA, a server
# certificate for IP:127.0.0.1 and a client certificate are made with openssl.
# topodns syncs (a service answers) when configured with
#   endpoint https://127.0.0.1:PORT + tls CERT KEY CACERT, and with
#   a kubeconfig carrying certificate-authority-data, client-certificate-data,
#   client-key-data and a token (kubesim also requires the token);
# with a CA that did not sign the server's certificate it does not sync,
# stays not ready, and logs the verification failure. kubesim speaks
# HTTP/1.1 only; k8s_http2.sh covers HTTP/2 through a TLS front end.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
[ -x "$KUBESIM" ] || skip "kubesim not built"
command -v openssl >/dev/null || skip "openssl not installed"

P=$TMP/pki
mkdir -p "$P"
ossl() { openssl "$@" 2>>"$P/openssl.log" || { cat "$P/openssl.log"; exit 1; }; }
EC=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
ossl req -x509 "${EC[@]}" -keyout "$P/ca.key" -out "$P/ca.crt" -days 2 -subj /CN=topodns-test-ca
ossl req -x509 "${EC[@]}" -keyout "$P/other.key" -out "$P/other.crt" -days 2 -subj /CN=some-other-ca
ossl req "${EC[@]}" -keyout "$P/srv.key" -out "$P/srv.csr" -subj /CN=kubesim
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > "$P/srv.ext"
ossl x509 -req -in "$P/srv.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -out "$P/srv.crt" -days 2 -extfile "$P/srv.ext"
ossl req "${EC[@]}" -keyout "$P/cli.key" -out "$P/cli.csr" -subj "/O=system:masters/CN=topodns"
printf 'extendedKeyUsage=clientAuth\n' > "$P/cli.ext"
ossl x509 -req -in "$P/cli.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -out "$P/cli.crt" -days 2 -extfile "$P/cli.ext"

cat > "$P/svc.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec: {clusterIP: 10.96.0.50, clusterIPs: [10.96.0.50], ports: [{name: http, port: 80, protocol: TCP}]}
Y

# kubesim over TLS with client certificates required
start_kubesim --tls-cert "$P/srv.crt" --tls-key "$P/srv.key" --client-ca "$P/ca.crt" --load "$P/svc.yaml"
KS=https://$KS_ADDR
C() { curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "$@" "$KS/api/v1/services"; }
OUT=$(C --cacert "$P/ca.crt" --cert "$P/cli.crt" --key "$P/cli.key")
check "kubesim: HTTPS with a client certificate → 200" [ "$OUT" = 200 ]
OUT=$(C --cacert "$P/ca.crt")
check "kubesim: no client certificate → handshake refused" [ "$OUT" = 000 ]
OUT=$(C --cacert "$P/ca.crt" --cert "$P/other.crt" --key "$P/other.key")
check "kubesim: a client certificate from another CA → refused" [ "$OUT" = 000 ]
OUT=$(C --cacert "$P/other.crt" --cert "$P/cli.crt" --key "$P/cli.key")
check "kubesim: curl with the wrong CA does not trust it" [ "$OUT" = 000 ]

web_answers() { q web.default.svc.cluster.local A; rcode_is NOERROR && answer_has '10\.96\.0\.50'; }

# 1. endpoint + tls CERT KEY CACERT
RP=$(free_port)
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        endpoint $KS
        tls $P/cli.crt $P/cli.key $P/ca.crt
    }
}" || exit 1
check "endpoint + tls: synced, service answers" until_ok 10 web_answers
ready() { curl -s --noproxy '*' -o /dev/null -w '%{http_code}' "http://127.0.0.1:$RP/ready"; }
OUT=$(ready)
check "endpoint + tls: /ready 200" [ "$OUT" = 200 ]
cat > "$P/api.yaml" <<'Y'
apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec: {clusterIP: 10.96.0.51, clusterIPs: [10.96.0.51], ports: [{name: https, port: 443}]}
Y
OUT=$(K --certificate-authority="$P/ca.crt" --client-certificate="$P/cli.crt" --client-key="$P/cli.key" \
    create -f "$P/api.yaml" --validate=false)
check "kubectl over TLS creates a service, the watch sees it" until_ok 5 eval \
    'q api.default.svc.cluster.local A; rcode_is NOERROR && answer_has "10\.96\.0\.51"'
stop_topodns

# 2. kubeconfig with *-data and a token; kubesim wants both
kill "$KS_PID"; wait "$KS_PID" 2>/dev/null
start_kubesim --tls-cert "$P/srv.crt" --tls-key "$P/srv.key" --client-ca "$P/ca.crt" \
    --token t0ken-42 --load "$P/svc.yaml"
KS=https://$KS_ADDR
OUT=$(C --cacert "$P/ca.crt" --cert "$P/cli.crt" --key "$P/cli.key")
check "kubesim: certificate without the token → 401" [ "$OUT" = 401 ]
b64() { base64 -w0 < "$1"; }
kubeconfig() {   # kubeconfig FILE CA-FILE
    cat > "$1" <<KC
apiVersion: v1
kind: Config
current-context: test
clusters:
- name: sim
  cluster:
    server: $KS
    certificate-authority-data: $(b64 "$2")
users:
- name: dns
  user:
    client-certificate-data: $(b64 "$P/cli.crt")
    client-key-data: $(b64 "$P/cli.key")
    token: t0ken-42
contexts:
- name: test
  context: {cluster: sim, user: dns}
KC
}
kubeconfig "$TMP/kubeconfig" "$P/ca.crt"
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        kubeconfig $TMP/kubeconfig
    }
}" || exit 1
check "kubeconfig (*-data + token): synced, service answers" until_ok 10 web_answers
stop_topodns

# 3. the wrong CA: no sync, not ready, the verification failure logged
kill "$KS_PID"; wait "$KS_PID" 2>/dev/null
start_kubesim --tls-cert "$P/srv.crt" --tls-key "$P/srv.key" --client-ca "$P/ca.crt" --load "$P/svc.yaml"
KS=https://$KS_ADDR
RP=$(free_port)
start_topodns ".:{\$PORT} {
    ready 127.0.0.1:$RP
    kubernetes cluster.local {
        endpoint $KS
        tls $P/cli.crt $P/cli.key $P/other.crt
        startup_timeout 1s
    }
}" || exit 1
sleep 2
check "wrong CA: the service does not answer" eval '! web_answers'
OUT=$(ready)
check "wrong CA: /ready 503" [ "$OUT" = 503 ]
OUT=$(grep -i 'certificate' "$LOG" | head -3)
check "wrong CA: the verification failure is logged" grep -qiE 'SSL certificate problem|certificate verify failed' "$LOG"
OUT=$(cat "$LOG")
check "wrong CA: the log names the request" grep -qE "GET $KS/api/v1/services[?]limit=[0-9]*: " "$LOG"
stop_topodns

# the same through a kubeconfig with the wrong certificate-authority-data
kubeconfig "$TMP/kubeconfig.bad" "$P/other.crt"
sed -i '/token:/d' "$TMP/kubeconfig.bad"
start_topodns ".:{\$PORT} {
    kubernetes cluster.local {
        kubeconfig $TMP/kubeconfig.bad
        startup_timeout 1s
    }
}" || exit 1
sleep 1
check "kubeconfig with the wrong CA: no answer" eval '! web_answers'
OUT=$(cat "$LOG")
check "kubeconfig with the wrong CA: verification failure logged" \
    grep -qiE 'SSL certificate problem|certificate verify failed' "$LOG"
finish
