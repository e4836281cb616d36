#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# forward.sh — the forward plugin in the real binary against real upstreams on
# loopback: a second topodns serving a zone with `file`, Knot DNS serving a
# large RRset, and forward_upstream.py (scriptable: reports what it received,
# answers slowly, fails on demand). Shows answers forwarded, ID and EDNS
# preserved, except, TC passed through and the TCP retry, force_tcp and
# prefer_udp, policies, failover when an upstream is killed, health checks
# marking it down and recovery, all-down handling with and without
# failfast_all_unhealthy_upstreams, REFUSED at max_concurrent, next and
# failover rcodes, the metrics, and setup errors with file:line.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

HERE=$top_srcdir/tests/integration
MPORT=$(free_port)
scrape() { curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MPORT/metrics"; }

# start_fake NAME PORT: forward_upstream.py; its pid in FAKE_PID.
start_fake() {
    "$HERE/forward_upstream.py" "$2" "$1" > "$TMP/fake.$1.log" 2>&1 &
    FAKE_PID=$!
    PIDS+=("$FAKE_PID")
    local i
    for i in $(seq 1 50); do
        grep -q ready "$TMP/fake.$1.log" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "fake upstream $1 did not start"; cat "$TMP/fake.$1.log"; return 1
}

# start_knot PORT: knotd serving big.knot. (a 40-record TXT RRset).
start_knot() {
    mkdir -p "$TMP/knot"
    {
        echo '$ORIGIN big.knot.'
        echo '$TTL 300'
        echo '@ SOA ns.big.knot. h.big.knot. 1 7200 3600 1209600 300'
        echo '@ NS ns'
        echo 'ns A 192.0.2.1'
        for i in $(seq -w 1 40); do echo "@ TXT \"$i$(printf 'y%.0s' $(seq 1 58))\""; done
    } > "$TMP/knot/big.knot.zone"
    cat > "$TMP/knot/knot.conf" <<EOF
server:
    rundir: "$TMP/knot"
    listen: 127.0.0.1@$1
database:
    storage: "$TMP/knot"
template:
  - id: default
    storage: "$TMP/knot"
zone:
  - domain: big.knot
    file: big.knot.zone
EOF
    knotd -c "$TMP/knot/knot.conf" > "$TMP/knot/knot.log" 2>&1 &
    PIDS+=($!)
    local i
    for i in $(seq 1 50); do
        dig @127.0.0.1 -p "$1" +time=1 +tries=1 +short big.knot SOA 2>/dev/null | grep -q ns && return 0
        sleep 0.1
    done
    echo "knotd did not start"; cat "$TMP/knot/knot.log"; return 1
}

txt_of() { section ANSWER | sed -n 's/.*TXT[[:space:]]*//p' | head -1; }

A_PORT=$(free_port); start_fake alpha "$A_PORT" || exit 1; A_PID=$FAKE_PID
B_PORT=$(free_port); start_fake beta "$B_PORT" || exit 1
KNOT_PORT=$(free_port); start_knot "$KNOT_PORT" || exit 1

# upstream 1: a second topodns with the file plugin
start_topodns "example.org:{\$PORT} {
    file $top_srcdir/zones/example.org.zone
}" || exit 1
FILE_PORT=$PORT

# read_timeout beyond what int milliseconds hold: the longest c-ares wait
# (the double-to-int cast was undefined; the sanitizer build aborted here)
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$FILE_PORT {
        read_timeout 2562047h
    }
}" || exit 1
q www.example.org A
check "read_timeout 2562047h: answered" answer_has '192\.0\.2\.10$'
stop_topodns

# --- answers, ID, EDNS, except, truncation ----------------------------------
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    forward example.org 127.0.0.1:$FILE_PORT
    forward big.knot 127.0.0.1:$KNOT_PORT
    forward . 127.0.0.1:$A_PORT {
        except skip.test
    }
}" || exit 1

q www.example.org A
check "file upstream: NOERROR" rcode_is NOERROR
check "file upstream: address" answer_has 'www\.example\.org\..*IN[[:space:]]+A[[:space:]]+192\.0\.2\.10$'
check "file upstream: AA kept" aa_set
q nothere.example.org A
check "file upstream: NXDOMAIN" rcode_is NXDOMAIN
check "file upstream: SOA in authority" authority_has 'SOA'
q www.example.org A +tcp
check "file upstream over TCP" answer_has '192\.0\.2\.10$'

q echo.test TXT +bufsize=1400 +dnssec +nsid +subnet=192.0.2.0/24
check "EDNS size kept" grep -q '"edns=1400"' <<<"$OUT"
check "DO kept" grep -q '"do=1"' <<<"$OUT"
check "EDNS options kept (NSID, ECS)" grep -Eq '"opts=([0-9]+,)*3,([0-9]+,)*8' <<<"$OUT"
check "RD kept" grep -q '"rd=1"' <<<"$OUT"
check "UDP client: UDP upstream" grep -q '"proto=udp"' <<<"$OUT"
check "ECS echoed to the client" grep -q 'CLIENT-SUBNET: 192.0.2.0/24' <<<"$OUT"
q echo.test TXT +noedns +norec
check "no EDNS stays without EDNS" grep -q '"edns=none"' <<<"$OUT"
check "RD clear kept" grep -q '"rd=0"' <<<"$OUT"
check "no OPT in the reply" bash -c '! grep -q "OPT PSEUDOSECTION" <<<"$0"' "$OUT"
q echo.test TXT +tcp
check "TCP client: TCP upstream" grep -q '"proto=tcp"' <<<"$OUT"

OUT=$(python3 - "$PORT" <<'PY'
import socket, struct, sys
q = struct.pack("!HHHHHH", 0xBEEF, 0x0100, 1, 0, 0, 0) + b"\x04echo\x04test\x00" + struct.pack("!HH", 16, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
s.sendto(q, ("127.0.0.1", int(sys.argv[1])))
r = s.recv(4096)
print("replyid=%04x" % struct.unpack("!H", r[:2])[0])
print(r)
PY
)
check "client ID restored on the reply" grep -q 'replyid=beef' <<<"$OUT"
check "upstream saw another ID" bash -c '! grep -q "id=48879" <<<"$0"' "$OUT"

q skip.test A
check "except: not forwarded (no next plugin: SERVFAIL)" rcode_is SERVFAIL
q other.test A
check "outside except: forwarded" rcode_is NXDOMAIN

q big.knot TXT +bufsize=1232 +ignore
check "knot large RRset over UDP: TC passed to the client" tc_set
q big.knot TXT +bufsize=1232
check "dig retries over TCP: all 40 records" answer_count 40
q big.test TXT +bufsize=1232 +ignore
check "fake upstream large RRset: TC" tc_set
q big.test TXT +tcp
check "over TCP: all 40 records" answer_count 40

M=$(scrape)
check "metric: request duration per upstream and rcode" grep -q "^coredns_proxy_request_duration_seconds_count{proxy_name=\"forward\",rcode=\"NOERROR\",to=\"127.0.0.1:$A_PORT\"} [1-9]" <<<"$M"
check "metric: NXDOMAIN rcode label" grep -q "^coredns_proxy_request_duration_seconds_count{proxy_name=\"forward\",rcode=\"NXDOMAIN\",to=\"127.0.0.1:$FILE_PORT\"} 1" <<<"$M"
check "metric: buckets from 0.25 ms" grep -q "coredns_proxy_request_duration_seconds_bucket{proxy_name=\"forward\",rcode=\"NOERROR\",to=\"127.0.0.1:$A_PORT\",le=\"0.00025\"}" <<<"$M"
check "metric: responses written by forward" grep -q 'coredns_dns_responses_total{.*plugin="forward"' <<<"$M"
stop_topodns

# --- force_tcp / prefer_udp -------------------------------------------------
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT {
        force_tcp
    }
}" || exit 1
q echo.test TXT
check "force_tcp: UDP client goes out over TCP" grep -q '"proto=tcp"' <<<"$OUT"
stop_topodns
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT {
        prefer_udp
    }
}" || exit 1
q echo.test TXT +tcp
check "prefer_udp: TCP client goes out over UDP" grep -q '"proto=udp"' <<<"$OUT"
q big.test TXT +tcp +bufsize=1232
check "prefer_udp: truncated UDP reply retried over TCP" answer_count 40
stop_topodns

# --- policies ----------------------------------------------------------------
whos() {
    local i s=""
    for i in $(seq 1 "$1"); do q who.test TXT; s="$s$(txt_of)"; done
    echo "$s"
}
for pol in sequential round_robin random; do
    start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT 127.0.0.1:$B_PORT {
        policy $pol
    }
}" || exit 1
    W=$(whos 12)
    case $pol in
    sequential) check "sequential: always the first" [ "$W" = "$(printf '"alpha"%.0s' $(seq 1 12))" ] ;;
    round_robin) check "round_robin: alternates" grep -Eq '^("alpha""beta"){6}$|^("beta""alpha"){6}$' <<<"$W" ;;
    random) check "random: both used" bash -c 'grep -q alpha <<<"$0" && grep -q beta <<<"$0"' "$W" ;;
    esac
    stop_topodns
done

# --- failover, health checks, recovery ---------------------------------------
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    forward . 127.0.0.1:$A_PORT 127.0.0.1:$B_PORT {
        policy sequential
        health_check 0.2s
    }
}" || exit 1
q who.test TXT
check "before the kill: alpha answers" grep -q '"alpha"' <<<"$OUT"
kill "$A_PID"; wait "$A_PID" 2>/dev/null
q who.test TXT
check "alpha killed: beta answers at once" grep -q '"beta"' <<<"$OUT"
sleep 1.2
hc() { scrape | sed -n "s/^coredns_proxy_healthcheck_failures_total{proxy_name=\"forward\",to=\"127.0.0.1:$A_PORT\"} //p"; }
F1=$(hc)
check "health checks failing for alpha (>2)" [ "${F1:-0}" -gt 2 ]
q who.test TXT
check "alpha down: beta answers" grep -q '"beta"' <<<"$OUT"
start_fake alpha "$A_PORT" || exit 1
sleep 0.8
F2=$(hc); sleep 0.6; F3=$(hc)
check "alpha back: health checks stop failing" [ "$F2" = "$F3" ]
q who.test TXT
check "alpha healthy again: sequential picks it" grep -q '"alpha"' <<<"$OUT"
stop_topodns

# --- every upstream down: random spray vs failfast ---------------------------
N_PORT=$(free_port); start_fake nohc "$N_PORT" || exit 1
for ff in "" failfast_all_unhealthy_upstreams; do
    start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    forward . 127.0.0.1:$N_PORT {
        max_fails 1
        read_timeout 300ms
        health_check 0.1s
        $ff
    }
}" || exit 1
    q slow.test TXT             # times out: starts the (failing) probes
    check "read_timeout: SERVFAIL${ff:+ ($ff)}" rcode_is SERVFAIL
    sleep 2.5                   # two 1 s probe timeouts: down
    q who.test TXT
    if [ -z "$ff" ]; then
        check "all down: a random upstream is still tried" grep -q '"nohc"' <<<"$OUT"
    else
        check "all down + failfast: SERVFAIL" rcode_is SERVFAIL
    fi
    check "healthcheck_broken_total counted" bash -c 'scrape() { curl -s --noproxy "*" "http://127.0.0.1:$0/metrics"; }; scrape | grep -q "^coredns_forward_healthcheck_broken_total [1-9]"' "$MPORT"
    stop_topodns
done

# --- max_concurrent ----------------------------------------------------------
start_topodns ".:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    forward . 127.0.0.1:$B_PORT {
        max_concurrent 2
    }
}" || exit 1
for i in 1 2 3 4 5; do
    dig @127.0.0.1 -p "$PORT" +time=4 +tries=1 slow.test TXT > "$TMP/conc.$i" 2>&1 &
done
wait_digs() { local i; for i in 1 2 3 4 5; do while ! grep -q 'status:\|timed out' "$TMP/conc.$i" 2>/dev/null; do sleep 0.1; done; done; }
wait_digs
OK=$(cat "$TMP"/conc.* | grep -c 'status: NOERROR')
REF=$(cat "$TMP"/conc.* | grep -c 'status: REFUSED')
OUT=$(cat "$TMP"/conc.*)
check "max_concurrent 2: two answered" [ "$OK" -eq 2 ]
check "max_concurrent 2: the rest REFUSED" [ "$REF" -eq 3 ]
check "metric: max_concurrent rejects" grep -q '^coredns_forward_max_concurrent_rejects_total 3' <<<"$(scrape)"
q who.test TXT
check "below the cap again: answered" rcode_is NOERROR
stop_topodns

# --- next, next_on_nodata, failover -----------------------------------------
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT {
        next NXDOMAIN
        next_on_nodata
    }
    forward . 127.0.0.1:$B_PORT
}" || exit 1
q onlybeta.test TXT
check "next NXDOMAIN: the next forward answers" grep -q '"beta"' <<<"$OUT"
q who.test TXT
check "next: other rcodes answered by the first" grep -q '"alpha"' <<<"$OUT"
q nodata.test TXT
check "next_on_nodata: handed on (still NOERROR)" rcode_is NOERROR
stop_topodns
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT
}" || exit 1
q onlybeta.test TXT
check "without next: NXDOMAIN returned" rcode_is NXDOMAIN
q failalpha.test TXT
check "without failover: SERVFAIL returned" rcode_is SERVFAIL
stop_topodns
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$A_PORT 127.0.0.1:$B_PORT {
        policy sequential
        failover SERVFAIL
    }
}" || exit 1
q failalpha.test TXT
check "failover SERVFAIL: next upstream answers" grep -q '"beta"' <<<"$OUT"
q servfail.test TXT
check "failover: last answer returned when all fail" rcode_is SERVFAIL
stop_topodns

# --- resolv.conf upstreams ----------------------------------------------------
printf 'search example\nnameserver 127.0.0.1\n' > "$TMP/resolv.conf"
start_topodns ".:{\$PORT} {
    forward . 127.0.0.1:$B_PORT $TMP/resolv.conf {
        policy sequential
    }
}" || exit 1
q who.test TXT
check "resolv.conf file accepted as an upstream list" grep -q '"beta"' <<<"$OUT"
stop_topodns

# --- setup errors --------------------------------------------------------------
bad() {
    printf '%s\n' "$2" > "$TMP/Corefile.bad"
    OUT=$("$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1)
    local rc=$?
    check "$1: fails" [ $rc -ne 0 ]
    check "$1: message with file:line" grep -Eq "Corefile\.bad:$3: .*$4" <<<"$OUT"
}
bad "unknown option" '.:1053 {
    forward . 127.0.0.1 {
        bogus 1
    }
}' 3 "unknown property 'bogus'"
bad "unknown policy" '.:1053 {
    forward . 127.0.0.1 {
        policy fastest
    }
}' 3 "unknown policy 'fastest'"
bad "doh_method unsupported" '.:1053 {
    forward . 127.0.0.1 {
        doh_method GET
    }
}' 3 "not supported"
bad "https:// unsupported" '.:1053 {
    forward . https://127.0.0.1
}' 2 "not supported"
bad "tls CA that does not exist" '.:1053 {
    forward . tls://127.0.0.1 {
        tls /nonexistent/ca.pem
    }
}' 3 "error reading /nonexistent/ca.pem"
bad "no upstream" '.:1053 {
    forward .
}' 2 "Wrong argument count"
bad "bad address" '.:1053 {
    forward . not-an-address
}' 2 "not an IP address or file"
bad "16 upstreams" ".:1053 {
    forward . $(for i in $(seq 1 16); do printf '127.0.0.%d ' "$i"; done)
}" 2 "more than 15 TOs configured: 16"
bad "bad rcode" '.:1053 {
    forward . 127.0.0.1 {
        next NOTARCODE
    }
}' 3 "NOTARCODE is not a valid rcode"
bad "failover NOERROR" '.:1053 {
    forward . 127.0.0.1 {
        failover NOERROR
    }
}' 3 "NoError cannot be used in failover"
bad "negative read_timeout" '.:1053 {
    forward . 127.0.0.1 {
        read_timeout 0s
    }
}' 3 "read_timeout must be positive"
bad "health_check option" '.:1053 {
    forward . 127.0.0.1 {
        health_check 1s sometimes
    }
}' 3 "unknown option sometimes"
bad "force_tcp with argument" '.:1053 {
    forward . 127.0.0.1 {
        force_tcp yes
    }
}' 3 "Wrong argument count"

finish
