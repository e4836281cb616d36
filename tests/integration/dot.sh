#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# dot.sh — DNS over TLS in the real binary, both ways, with a throwaway CA
# made here by the openssl CLI:
#  - serving: tls:// blocks with the tls plugin answer kdig over TLS (the
#    certificate verifies against the CA and the hostname; a wrong hostname
#    fails), never over UDP; client_auth require_and_verify refuses a client
#    without a certificate or with one of another CA and serves one with a
#    certificate of the CA; a tls:// block without tls serves plain TCP;
#  - forwarding: tls:// upstreams to Unbound serving DNS over TLS and to
#    topodns's own DoT block, verified by server name or by IP address;
#    five queries use one connection (conn_cache metrics, and the upstream
#    sees one connection), `expire` closes an idle one; a certificate of an
#    unknown CA or a wrong server name gives SERVFAIL and failed health
#    checks; plain and tls:// upstreams mix;
#  - setup errors at their file:line.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

command -v openssl >/dev/null || skip "openssl not installed"
command -v kdig >/dev/null || skip "kdig (knot-dnsutils) not installed"
command -v unbound >/dev/null || skip "unbound not installed"
command -v ss >/dev/null || skip "ss (iproute2) not installed"

# --- a CA, a server certificate for dns.test and 127.0.0.1, a client one,
# and a second CA nobody trusts -------------------------------------------------
C=$TMP/certs
mkdir -p "$C"
mkcert() {  # NAME CA SUBJECT [SAN]
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$C/$1.key" \
        -out "$C/$1.csr" -subj "/CN=$3" 2>/dev/null || return 1
    : > "$C/$1.ext"
    [ -n "${4:-}" ] && echo "subjectAltName=$4" > "$C/$1.ext"
    openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -CAcreateserial \
        -out "$C/$1.pem" -days 2 -extfile "$C/$1.ext" 2>/dev/null
}
for ca in ca rogue; do
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$C/$ca.key" -out "$C/$ca.pem" -days 2 -subj "/CN=$ca test CA" 2>/dev/null ||
        { echo "openssl could not make a CA"; exit 1; }
done
mkcert srv ca dns.test "DNS:dns.test,IP:127.0.0.1" &&
mkcert client ca client.test &&
mkcert rsrv rogue dns.test "DNS:dns.test,IP:127.0.0.1" &&
mkcert rclient rogue client.test || { echo "openssl could not make certificates"; exit 1; }

# --- serving -------------------------------------------------------------------
P1=$(free_port); P2=$(free_port); P3=$(free_port)
start_topodns ".:{\$PORT} {
    whoami
}
tls://.:$P1 {
    tls $C/srv.pem $C/srv.key
    whoami
}
tls://.:$P2 {
    tls $C/srv.pem $C/srv.key $C/ca.pem {
        client_auth require_and_verify
    }
    whoami
}
tls://.:$P3 {
    whoami
}" || exit 1
DOT=$PORT

rcode_k() { grep -q "status: $1;" <<<"$OUT"; }   # kdig's way of printing it
kq() {  # PORT [kdig args...]: over TLS, output in OUT
    local p=$1; shift
    OUT=$(timeout 10 kdig @127.0.0.1 -p "$p" +tls +tls-ca="$C/ca.pem" +timeout=2 +retry=0 "$@" 2>&1)
}
kq "$P1" +tls-hostname=dns.test example.org A
check "DoT: answered over TLS" grep -q 'TLS session' <<<"$OUT"
check "DoT: NOERROR from whoami" rcode_k NOERROR
check "DoT: whoami saw the client over TCP" grep -qE '_tcp\.example\.org\..*SRV' <<<"$OUT"
kq "$P1" +tls-hostname=wrong.test example.org A
check "DoT: a wrong hostname fails the handshake" eval '! rcode_k NOERROR'
OUT=$(dig @127.0.0.1 -p "$P1" +time=1 +tries=1 example.org A 2>&1)
check "DoT: no UDP on the tls:// port" eval '! grep -q "status:" <<<"$OUT"'

kq "$P2" +tls-hostname=dns.test example.org A
check "client_auth require_and_verify: no client certificate fails" eval '! rcode_k NOERROR'
kq "$P2" +tls-hostname=dns.test +tls-certfile="$C/rclient.pem" +tls-keyfile="$C/rclient.key" example.org A
check "client_auth require_and_verify: another CA's certificate fails" eval '! rcode_k NOERROR'
kq "$P2" +tls-hostname=dns.test +tls-certfile="$C/client.pem" +tls-keyfile="$C/client.key" example.org A
check "client_auth require_and_verify: the CA's client certificate is served" rcode_k NOERROR

OUT=$(dig @127.0.0.1 -p "$P3" +tcp +time=2 +tries=1 example.org A 2>&1)
check "tls:// without the tls plugin: plain TCP" rcode_is NOERROR

# --- forwarding to Unbound over TLS -----------------------------------------------
U=$(free_port)
UD=$TMP/unbound
mkdir -p "$UD"
cat > "$UD/unbound.conf" <<EOF
server:
    interface: 127.0.0.1@$U
    tls-port: $U
    tls-service-key: "$C/srv.key"
    tls-service-pem: "$C/srv.pem"
    do-daemonize: no
    username: ""
    chroot: ""
    directory: "$UD"
    pidfile: ""
    use-syslog: no
    logfile: "$UD/unbound.log"
    verbosity: 1
    extended-statistics: yes
    do-ip6: no
    access-control: 127.0.0.0/8 allow
    module-config: "iterator"
    local-zone: "example.test." static
    local-data: "www.example.test. 300 IN A 192.0.2.7"
    local-data: "example.test. 300 IN NS ns.example.test."
    local-data: "ns.example.test. 300 IN A 192.0.2.1"
    tcp-idle-timeout: 60000
    incoming-num-tcp: 20
remote-control:
    control-enable: yes
    control-interface: "$UD/ctl.sock"
    control-use-cert: no
EOF
unbound -d -c "$UD/unbound.conf" > "$UD/stdout" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do
    OUT=$(timeout 3 kdig @127.0.0.1 -p "$U" +tls +tls-ca="$C/ca.pem" +tls-hostname=dns.test \
        +timeout=1 +retry=0 www.example.test A 2>&1) && rcode_k NOERROR && break
    sleep 0.1
done
check "unbound serves DNS over TLS" grep -q '192.0.2.7' <<<"$OUT" ||
    { cat "$UD/unbound.log" "$UD/stdout"; finish; exit 1; }

M=$(free_port)
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$M
    forward . tls://127.0.0.1:$U {
        tls $C/ca.pem
        tls_servername dns.test
    }
}
self.test:{\$PORT} {
    forward . tls://127.0.0.1:$P1 {
        tls $C/ca.pem
        tls_servername dns.test
        expire 1s
    }
}
ip.test:{\$PORT} {
    forward . tls://127.0.0.1:$P1 {
        tls $C/ca.pem
    }
}
named.test:{\$PORT} {
    forward . tls://127.0.0.1%dns.test:$P1 {
        tls $C/ca.pem
    }
}
misnamed.test:{\$PORT} {
    forward . tls://127.0.0.1%wrong.test:$P1 {
        tls $C/ca.pem
    }
}
mixed.test:{\$PORT} {
    forward . tls://127.0.0.1:$P3 127.0.0.1:$DOT {
        tls $C/ca.pem
        tls_servername dns.test
        policy sequential
        read_timeout 500ms
    }
}
rogue.test:{\$PORT} {
    forward . tls://127.0.0.1:$P2 {
        tls $C/rogue.pem
        tls_servername dns.test
        max_fails 1
        health_check 200ms
    }
}
wrongname.test:{\$PORT} {
    forward . tls://127.0.0.1:$U {
        tls $C/ca.pem
        tls_servername other.test
    }
}" -workers 1 || exit 1

metric() {  # NAME LABEL-SUBSTRING: the value, 0 when absent
    curl -s "http://127.0.0.1:$M/metrics" | grep "^$1{" | grep -F "$2" | awk '{s+=$2} END {print s+0}'
}
# start_topodns's own readiness queries went upstream too: count from here
H0=$(metric coredns_proxy_conn_cache_hits_total "to=\"127.0.0.1:$U\"")
M0=$(metric coredns_proxy_conn_cache_misses_total "to=\"127.0.0.1:$U\"")
for i in 1 2 3 4 5; do
    q www.example.test A
    check "forward over TLS to unbound: query $i answered" answer_has '192\.0\.2\.7'
done
H1=$(metric coredns_proxy_conn_cache_hits_total "to=\"127.0.0.1:$U\"")
M1=$(metric coredns_proxy_conn_cache_misses_total "to=\"127.0.0.1:$U\"")
OUT="hits $H0 -> $H1, misses $M0 -> $M1"
check "one connection ever dialed (conn_cache_misses_total 1)" [ "$M1" = 1 ]
check "the 5 queries took a connection each from the cache or a dial" \
    [ $((H1 - H0 + M1 - M0)) = 5 ]
check "at least 4 of them reused it (conn_cache_hits_total)" [ $((H1 - H0)) -ge 4 ]
check "proto label tcp-tls" \
    [ "$(metric coredns_proxy_conn_cache_hits_total 'proto="tcp-tls"')" -ge 4 ]
OUT=$(ss -Htn state established "( dport = :$U )")
check "unbound sees one connection from topodns" [ "$(grep -c . <<<"$OUT")" = 1 ]
OUT=$(unbound-control -c "$UD/unbound.conf" stats_noreset 2>&1)
check "unbound counted the 5 queries as TLS" grep -qE '^num\.query\.tls=([5-9]|[1-9][0-9]+)$' <<<"$OUT"
check "request duration recorded for the tls:// upstream" \
    [ "$(metric coredns_proxy_request_duration_seconds_count "to=\"127.0.0.1:$U\"")" -ge 5 ]

# --- forwarding to topodns's own DoT block ------------------------------------------
t0=$(now)
q a.self.test A
check "forward over TLS to topodns's DoT block" additional_has '_tcp\.a\.self\.test\..*SRV'
q b.self.test A
check "self: second query answered" rcode_is NOERROR
m=$(metric coredns_proxy_conn_cache_misses_total "to=\"127.0.0.1:$P1\"")
# the connection idles less than the two queries took: under 0.9 s, it
# cannot have expired (expire 1s) and must be reused; a machine slower
# than that may have dialed again
if elapsed_below "$t0" 0.9; then
    check "self: one connection for two queries" [ "$m" = 1 ]
else
    OUT="misses $m after $(elapsed_since "$t0") s"
    check "self: one or two connections for two queries (slow machine)" [ "$m" = 1 -o "$m" = 2 ]
fi
sleep 2.5
q c.self.test A
check "self: an expired connection is dialed again" \
    [ "$(metric coredns_proxy_conn_cache_misses_total "to=\"127.0.0.1:$P1\"")" = $((m + 1)) ]
q a.ip.test A
check "no tls_servername: the certificate's IP address verifies" rcode_is NOERROR
q a.named.test A
check "tls://IP%NAME: the upstream's own server name verifies" rcode_is NOERROR
q a.misnamed.test A
check "tls://IP%NAME: a name not in the certificate fails" rcode_is SERVFAIL
q a.mixed.test A
check "tls:// and plain upstreams mix: the TLS one fails (no TLS there), the plain one answers" \
    additional_has '_udp[.]a[.]mixed[.]test[.]'


# --- bad certificates --------------------------------------------------------------
check "no health check failure before" \
    [ "$(metric coredns_proxy_healthcheck_failures_total "to=\"127.0.0.1:$P2\"")" = 0 ]
q a.rogue.test A
check "a certificate of an unknown CA: SERVFAIL" rcode_is SERVFAIL
sleep 1
check "... and failed health checks" \
    [ "$(metric coredns_proxy_healthcheck_failures_total "to=\"127.0.0.1:$P2\"")" -ge 1 ]
q a.wrongname.test A
check "a certificate for another name: SERVFAIL" rcode_is SERVFAIL
stop_topodns

# --- setup errors --------------------------------------------------------------------
bad() {
    printf '%s\n' "$1" > "$TMP/bad.conf"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad.conf" 2>&1)
    local rc=$?
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF "$2" <<<"$OUT"
}
check "tls: one argument" bad "tls://.:$P1 {
    tls $C/srv.pem
}" "bad.conf:2: Wrong argument count or unexpected line ending near"
check "tls: unknown client_auth" bad "tls://.:$P1 {
    tls $C/srv.pem $C/srv.key {
        client_auth sometimes
    }
}" "bad.conf:3: plugin/tls: unknown authentication type 'sometimes'"
check "tls: unknown option" bad "tls://.:$P1 {
    tls $C/srv.pem $C/srv.key {
        ciphers all
    }
}" "bad.conf:3: plugin/tls: unknown option 'ciphers'"
check "tls: missing file" bad "tls://.:$P1 {
    tls $C/none.pem $C/srv.key
}" "bad.conf:2: plugin/tls: could not load TLS cert: open $C/none.pem"
check "tls: a key that is not the certificate's" bad "tls://.:$P1 {
    tls $C/srv.pem $C/client.key
}" "bad.conf:2: plugin/tls: could not load TLS key $C/client.key"
check "tls: ACME refused" bad "tls://.:$P1 {
    tls
}" "bad.conf:2: plugin/tls: automatic certificates (ACME) are not supported by topodns"
check "server key: unknown scheme" bad "quic://.:$P1 {
    whoami
}" "bad.conf:1: only dns:// and tls:// servers are supported near 'quic://.:$P1'"
check "dns:// and tls:// on one port" bad ".:$P1 {
    whoami
}
tls://example.org:$P1 {
    whoami
}" "bad.conf:4: cannot serve tls://example.org.:$P1 - port $P1 is served by dns:// already"
check "forward: tls CA that does not exist" bad ".:$P1 {
    forward . tls://127.0.0.1 {
        tls $C/none.pem
    }
}" "bad.conf:3: plugin/forward: error reading $C/none.pem"

finish
