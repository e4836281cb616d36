#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# reload_churn.sh — reloads under load, the test the ThreadSanitizer stage of
# scripts/test runs (it also runs in the default and ASan builds).
#
# kubesim serves a generated cluster that changes all the time (--churn:
# pod readiness and EndpointSlice endpoint flips); topodns serves it with
# kubernetes, topology (ECS trusted from 127.0.0.0/8), cache, prometheus and
# forward (to a second topodns serving a file zone), without the log plugin
# (a line per query would only slow the run down). While four clients
# (distinct 127.x.y.z source addresses; three of them send an ECS option
# with the address of a pod in each zone; UDP and some TCP) query ClusterIP,
# headless (plain, PreferClose, topology-mode Auto, and three whose hints
# topology computes), SRV, forwarded and nonexistent names, topodns is
# reloaded with SIGUSR1 RELOADS (50) times,
# each time waiting for "Reloading complete"; before each reload a Service
# with a new label value and port name is created (and the previous one
# deleted), so the store meets strings it has not seen while instances are
# swapped.
#
# Checks: every reload completes, topodns stays alive and keeps answering,
# names that exist never get SERVFAIL/NXDOMAIN (and always an answer), the
# nonexistent name always gets NXDOMAIN, almost no query goes unanswered
# while instances are swapped, the last created Service is served, topodns
# exits 0 on SIGTERM, and no log (topodns, its upstream, kubesim) holds a
# "WARNING: ThreadSanitizer" report.
#
# The generated cluster: 20 services in ns-0 with 20 pods each (svc-00000,
# -05, -10, -15 headless; -03, -10, -17 PreferClose; -04, -15 topology-mode
# Auto). With 20 endpoints a headless Service keeps ready ones whatever the
# churn flips (with fewer, all of them would now and then be not ready and
# the name NXDOMAIN, as it should).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"

PY=/usr/bin/python3
[ -x "$KUBESIM" ] || skip "kubesim not built"
[ -x "$PY" ] && "$PY" -c 'import dns.message, dns.query, dns.rcode' 2>/dev/null ||
    skip "python3-dnspython not installed"

RELOADS=${RELOADS:-50}
# sanitizer builds start, sync and reload slower
export WAIT_DNS_SECONDS=30

# Three headless Services whose slices carry no hints, so topology computes
# them: PreferClose, topology-mode Auto, same-zone Prefer. 20 endpoints each,
# pods 100.. of the generated cluster (pod j: 10.128.0.j on node-(j*7919 mod
# 20), in zone region-1a/b/c by node mod 3).
computed_fixture() {
    local k svc meta spec j n zones=(a b c)
    for k in 0 1 2; do
        svc=(close auto prefer)
        svc=computed-${svc[$k]}
        case $k in
            0) meta='' spec='  trafficDistribution: PreferClose' ;;
            1) meta='  annotations: {service.kubernetes.io/topology-mode: Auto}' spec='' ;;
            2) meta='  annotations: {endpointslice.kubernetes.io/same-zone: Prefer}' spec='' ;;
        esac
        printf -- '---\napiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: ns-0\n%s\nspec:\n  clusterIP: None\n  selector: {app: %s}\n  ports: [{name: http, port: 80, targetPort: 8080}]\n%s\n' \
            "$svc" "$meta" "$svc" "$spec"
        printf -- '---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: %s-1\n  namespace: ns-0\n  labels: {kubernetes.io/service-name: %s}\naddressType: IPv4\nports: [{name: http, port: 8080, protocol: TCP}]\nendpoints:\n' \
            "$svc" "$svc"
        for j in $(seq $((100 + k * 20)) $((119 + k * 20))); do
            n=$(( (j * 7919) % 20 ))
            printf -- '- {addresses: [10.128.0.%d], conditions: {ready: true, serving: true, terminating: false}, nodeName: node-%05d, zone: region-1%s}\n' \
                "$j" "$n" "${zones[$((n % 3))]}"
        done
    done
}
computed_fixture | grep -v '^$' > "$TMP/computed.yaml"
start_kubesim --generate nodes=20,pods=400,services=20,zones=3 --churn 200 --seed 7 \
    --load "$TMP/computed.yaml"

# the forward upstream: a second topodns serving example.org from a file
UP=$(free_port)
printf 'example.org:%s {\n    bind 127.0.0.1\n    file %s/zones/example.org.zone\n}\n' \
    "$UP" "$top_srcdir" > "$TMP/up.conf"
"$TOPODNS" -conf "$TMP/up.conf" > "$TMP/up.log" 2>&1 &
UP_PID=$!
PIDS+=("$UP_PID")
up_answers() {
    dig @127.0.0.1 -p "$UP" -b 127.0.0.1 +short +time=1 +tries=1 www.example.org A \
        > "$TMP/up.dig" 2>&1 && grep -qx '192.0.2.10' "$TMP/up.dig"
}
until_ok 30 up_answers || { echo "the upstream topodns did not answer:"; cat "$TMP/up.log"; exit 1; }

MP=$(free_port)
start_topodns ".:{\$PORT} {
    bind 127.0.0.1
    kubernetes cluster.local {
        endpoint $KS
        startup_timeout 20s
    }
    topology {
        client_subnet 127.0.0.0/8
    }
    cache 30
    prometheus 127.0.0.1:$MP
    forward . 127.0.0.1:$UP
}" || exit 1

count() { grep -cE "$1" "$LOG"; }
completed() { count '^\[INFO\] Reloading complete$'; }
completed_more_than() { [ "$(completed)" -gt "$1" ]; }

# --- the query loop ---------------------------------------------------------
cat > "$TMP/qloop.py" <<'PY'
import sys, threading, time, os
import dns.message, dns.query, dns.rcode, dns.rdatatype, dns.exception, dns.edns

port, stop = int(sys.argv[1]), sys.argv[2]
S = "ns-0.svc.cluster.local."
# (name, type, expected): "answer" = NOERROR with at least one record of the
# type, "nxdomain" = NXDOMAIN
NAMES = [
    ("svc-00001." + S, "A", "answer"),          # ClusterIP
    ("svc-00003." + S, "A", "answer"),          # ClusterIP, PreferClose
    ("svc-00004." + S, "A", "answer"),          # ClusterIP, topology-mode Auto
    ("svc-00000." + S, "A", "answer"),          # headless
    ("svc-00010." + S, "A", "answer"),          # headless, PreferClose
    ("svc-00015." + S, "A", "answer"),          # headless, topology-mode Auto
    ("_http._tcp.svc-00005." + S, "SRV", "answer"),
    ("_http._tcp.svc-00010." + S, "SRV", "answer"),
    ("_http._tcp.svc-00002." + S, "SRV", "answer"),
    ("computed-close." + S, "A", "answer"),     # headless, hints computed
    ("computed-auto." + S, "A", "answer"),
    ("computed-prefer." + S, "A", "answer"),
    ("www.example.org.", "A", "answer"),        # forwarded
    ("svc-99999." + S, "A", "nxdomain"),        # no such Service
]
# (source address, ECS address): pods 1, 2 and 3 (10.128.0.j) run in zones
# region-1b, region-1a and region-1c; the last client is nobody
CLIENTS = [("127.0.1.1", "10.128.0.1"), ("127.0.2.1", "10.128.0.2"),
           ("127.1.3.7", "10.128.0.3"), ("127.2.4.9", None)]
lock = threading.Lock()
stats = {"sent": 0, "ok": 0, "timeout": 0, "neterr": 0}
bad = {}

def client(src, ecs, n0):
    i = n0
    while not os.path.exists(stop):
        name, qt, want = NAMES[i % len(NAMES)]
        tcp = i % 10 == 0
        i += 1
        q = dns.message.make_query(name, qt)
        if ecs:
            q.use_edns(0, options=[dns.edns.ECSOption(ecs, 32)])
        key = None
        try:
            if tcp:
                r = dns.query.tcp(q, "127.0.0.1", port=port, source=src, timeout=2)
            else:
                r = dns.query.udp(q, "127.0.0.1", port=port, source=src, timeout=2)
            rc = r.rcode()
            has = any(rr.rdtype == dns.rdatatype.from_text(qt) for rr in r.answer)
            if want == "answer" and not (rc == dns.rcode.NOERROR and has):
                key = (name, qt, dns.rcode.to_text(rc) + ("" if has else " no answer"))
            elif want == "nxdomain" and rc != dns.rcode.NXDOMAIN:
                key = (name, qt, dns.rcode.to_text(rc))
            res = "ok" if key is None else None
        except dns.exception.Timeout:
            res = "timeout"
        except (OSError, EOFError):
            # TCP refused, or closed without a reply, while instances swap
            res = "neterr"
        except Exception as e:  # a malformed reply, ...
            res, key = None, (name, qt, "exception " + type(e).__name__)
        with lock:
            stats["sent"] += 1
            if res:
                stats[res] += 1
            else:
                bad[key] = bad.get(key, 0) + 1
        time.sleep(0.002)

ts = [threading.Thread(target=client, args=(c, e, k)) for k, (c, e) in enumerate(CLIENTS)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("sent %(sent)d ok %(ok)d timeout %(timeout)d neterr %(neterr)d" % stats)
for (name, qt, what), n in sorted(bad.items()):
    print("BAD %s %s %s x%d" % (name, qt, what, n))
PY
"$PY" "$TMP/qloop.py" "$PORT" "$TMP/stop" > "$TMP/qloop.out" 2>&1 &
QPID=$!
PIDS+=("$QPID")
sleep 1

# --- the reloads ------------------------------------------------------------
# new_service N: Service extra-N (label gen=gN, port p-N), extra-(N-1) deleted
new_service() {
    local api=$KS/api/v1/namespaces/ns-0/services
    curl -s -o /dev/null -X POST -H 'Content-Type: application/json' "$api" -d "{
        \"apiVersion\": \"v1\", \"kind\": \"Service\",
        \"metadata\": {\"name\": \"extra-$1\", \"labels\": {\"gen\": \"g$1\"}},
        \"spec\": {\"selector\": {\"gen\": \"g$1\"},
                 \"ports\": [{\"name\": \"p-$1\", \"port\": $((1000 + $1))}]}}"
    [ "$1" -gt 1 ] && curl -s -o /dev/null -X DELETE "$api/extra-$(($1 - 1))"
}
t0=$SECONDS
done_reloads=0
for i in $(seq 1 "$RELOADS"); do
    kill -0 "$TOPO_PID" 2>/dev/null || break
    new_service "$i"
    before=$(completed)
    kill -USR1 "$TOPO_PID"
    until_ok 30 completed_more_than "$before" || break
    done_reloads=$i
    sleep 0.1
done
echo "$done_reloads reloads in $((SECONDS - t0)) s"
sleep 1
touch "$TMP/stop"
wait "$QPID"
cat "$TMP/qloop.out"

OUT="$(tail -30 "$LOG")"
check "all $RELOADS reloads completed" [ "$done_reloads" -eq "$RELOADS" ]
check "no reload failed" [ "$(count '^\[ERROR\] Restart failed')" -eq 0 ]
check "topodns alive after the reloads" kill -0 "$TOPO_PID"

read -r _ sent _ ok _ tmo _ neterr < <(head -1 "$TMP/qloop.out")
OUT=$(cat "$TMP/qloop.out")
check "the query loop ran" [ "${sent:-0}" -ge 200 ]
check "no wrong answer (SERVFAIL, NXDOMAIN, empty) for names that exist" \
    [ "$(grep -c '^BAD ' "$TMP/qloop.out")" -eq 0 ]
# while an instance replaces another, a datagram queued on the old socket
# when it closes is lost (as in CoreDNS): allow 1 %
check "at most 1 % of the queries unanswered" [ $(( (${tmo:-0} + ${neterr:-0}) * 100 )) -le "${sent:-0}" ]

q -b 127.0.9.9 svc-00001.ns-0.svc.cluster.local A
check "answers after the reloads" answer_has 'A[[:space:]]+10\.[0-9.]+$'
extra_served() { q -b 127.0.9.9 "extra-$RELOADS.ns-0.svc.cluster.local" A; answer_has 'A[[:space:]]+10\.[0-9.]+$'; }
check "the last created Service is served" until_ok 5 extra_served
OUT=$(curl -s "http://127.0.0.1:$MP/metrics")
check "metrics served after the reloads" grep -q '^coredns_dns_requests_total{' <<<"$OUT"

stop_topodns
rc=$?
OUT="exit status $rc"$'\n'"$(tail -30 "$LOG")"
check "topodns exits 0 on SIGTERM" [ "$rc" -eq 0 ]

# --- ThreadSanitizer reports (none outside a TSan build) ----------------------
tsan_reports() {   # every report block of the logs, for the test's log
    local f
    for f in "$LOG" "$TMP/up.log" "$TMP"/kubesim.*.err; do
        [ -f "$f" ] || continue
        grep -q 'WARNING: ThreadSanitizer' "$f" || continue
        echo "==== ThreadSanitizer reports in $(basename "$f")"
        awk '/^==================$/ { inrep = !inrep; print; next } inrep' "$f"
    done
}
OUT=$(tsan_reports)
check "no ThreadSanitizer report" [ -z "$OUT" ]
finish
