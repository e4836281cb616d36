#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""chaos.py — the driver and the oracle of tests/chaos/chaos.sh.

While kubesim churns (pod and endpoint readiness flips) and this script
creates and deletes Services of its own, it injects every fault kubesim's
/sim/v1/faults offers, in cycles, and DNS clients in every zone query the
running topodns all the time. Then the faults, the churn and the changes stop
at one instant (T_END) and every Service name and pod name is asked from one
client in each zone and compared with answers computed here, independently,
from kubesim's /sim/v1/state:

  ClusterIP Service   A = its IPv4 cluster IPs
  headless Service    A = its ready IPv4 endpoints (ready true or absent),
                      deduplicated; with EndpointSlice hints, kube-proxy's
                      consumer rule (docs/topology.md rule 4): when every ready
                      endpoint has forZones and one names the client's zone,
                      only those; no ready endpoint → NXDOMAIN
  pod (pods verified) <a-b-c-d>.<ns>.pod.<zone> A = the pod's IP
  Services this script created and that are gone → NXDOMAIN

Services whose answer needs more (topologyKeys, internalTrafficPolicy Local,
same-zone, hints computed by topodns) are counted and left out; kubesim's
generator makes none of them.

Pass criteria:
  - every answer equals the oracle within --converge seconds of T_END
    (polled: one round asks every name from every zone at once, the first
    starting at T_END; the time is that of the last reply of the first round
    without a mismatch, so the round's own length counts against topodns);
  - during the whole run, no SERVFAIL for any name, and neither NXDOMAIN nor
    a wrong address for a name that existed throughout (generated ClusterIP
    Services and pods: the faults never remove them);
  - queries that got no reply at all are fewer than 1 % of the monitor's.

Fault cycles (each about 16 s at the default pace), in order: save the state;
close watches; fail the next requests with 500; delay every response; expire
the history (410); a malformed watch line; split chunks; 429 with Retry-After;
rotate the token (the token file first, as a kubelet would); 503 with
Retry-After; restore the saved state (a lower resourceVersion: the version gap
is more than 3 s of churn, so topodns's re-watch gets kubesim's 504 "too
large" instead of being caught up silently, see src/k8s/README.md); expire
again; then light faults only (closed watches, malformed lines, 500s), so
that no fault's own delay (the restore's 3 s wait for a too-large version)
runs past T_END. The last cycle is cut to fit --seconds, but always ends with
the light part.

Output: one line per phase and fault, then "chaos: PASS ..." or
"chaos: FAIL ..." with the first mismatches; exit 0 or 1.
"""
import argparse
import json
import os
import random
import select
import socket
import sys
import threading
import time
import urllib.error
import urllib.request

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype

ZONE = "cluster.local"
MUTATE_NS = "chaos"


def log(*a):
    print("[%7.2f]" % (time.monotonic() - START), *a, flush=True)


START = time.monotonic()


class Api:
    """kubesim over HTTP: the fault API (never authenticated) and writes."""

    def __init__(self, base, token):
        self.base = base
        self.token = token
        self.lock = threading.Lock()

    def _req(self, method, path, body=None, auth=True, timeout=10):
        data = json.dumps(body).encode() if body is not None else None
        r = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            r.add_header("Content-Type", "application/json")
        if auth:
            with self.lock:
                r.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(r, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except OSError as e:
            return 0, str(e).encode()

    def fault(self, body):
        st, out = self._req("POST", "/sim/v1/faults", body, auth=False)
        if st != 200:
            raise RuntimeError("fault %s: HTTP %s %s" % (body, st, out[:200]))
        return json.loads(out)

    def state(self):
        st, out = self._req("GET", "/sim/v1/state", auth=False, timeout=30)
        if st != 200:
            raise RuntimeError("state: HTTP %s" % st)
        return json.loads(out)

    def write(self, method, path, body=None):
        return self._req(method, path, body)[0]


# ---------------------------------------------------------------- oracle

def ready(ep):
    c = ep.get("conditions") or {}
    return c.get("ready") is not False


def is_v4(a):
    return ":" not in a


def hint_names(ep, key):
    return [h.get("name") for h in ((ep.get("hints") or {}).get(key) or [])]


def oracle(state, clients, created):
    """{(qname, client_ip): ("NOERROR", frozenset(ips)) | ("NXDOMAIN", None)}
    plus the number of Services left out."""
    nodes = {n["metadata"]["name"]: n for n in state["nodes"]}
    zone_of_client = {}
    for ip, pod in clients.items():
        node = nodes.get(pod["spec"].get("nodeName"), {})
        zone_of_client[ip] = (node.get("metadata", {}).get("labels") or {}).get(
            "topology.kubernetes.io/zone", "")
    slices = {}
    for s in state["endpointslices"]:
        if s.get("addressType") != "IPv4":
            continue
        svc = (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name")
        if svc:
            slices.setdefault((s["metadata"]["namespace"], svc), []).append(s)
    want = {}
    skipped = 0
    present = set()
    for svc in state["services"]:
        md, spec = svc["metadata"], svc["spec"]
        ns, name = md["namespace"], md["name"]
        present.add((ns, name))
        q = "%s.%s.svc.%s." % (name, ns, ZONE)
        ann = md.get("annotations") or {}
        if spec.get("type") == "ExternalName":
            skipped += 1
            continue
        if spec.get("clusterIP") not in (None, "", "None"):
            ips = frozenset(a for a in (spec.get("clusterIPs") or [spec["clusterIP"]]) if is_v4(a))
            for c in clients:
                want[(q, c)] = ("NOERROR", ips)
            continue
        # headless
        if (spec.get("topologyKeys") or "topodns.io/topology-keys" in ann or
                spec.get("internalTrafficPolicy") == "Local" or
                "endpointslice.kubernetes.io/same-zone" in ann):
            skipped += 1
            continue
        eps = [ep for s in slices.get((ns, name), []) for ep in s.get("endpoints") or []]
        rdy = [ep for ep in eps if ready(ep)]
        if not rdy:
            for c in clients:
                want[(q, c)] = ("NXDOMAIN", None)
            continue
        hinted = any((ep.get("hints") or {}) for ep in eps)
        asks = (spec.get("trafficDistribution") or
                ann.get("service.kubernetes.io/topology-mode") or
                "service.kubernetes.io/topology-aware-hints" in ann or
                (spec.get("routingPreference")))
        if not hinted and asks:
            skipped += 1   # rule 5: hints topodns computes itself
            continue
        for c in clients:
            z = zone_of_client[c]
            chosen = rdy
            if all(hint_names(ep, "forZones") for ep in rdy) and \
                    any(z in hint_names(ep, "forZones") for ep in rdy) and z:
                chosen = [ep for ep in rdy if z in hint_names(ep, "forZones")]
            # (no generated endpoint carries forNodes; the oracle leaves
            # node hints to tests/integration/topology.sh)
            ips = frozenset(a for ep in chosen for a in ep.get("addresses") or [] if is_v4(a))
            want[(q, c)] = ("NOERROR", ips)
    for (ns, name) in created:
        if (ns, name) not in present:
            q = "%s.%s.svc.%s." % (name, ns, ZONE)
            for c in clients:
                want[(q, c)] = ("NXDOMAIN", None)
    seen = {}
    for p in state["pods"]:
        ip = (p.get("status") or {}).get("podIP")
        phase = (p.get("status") or {}).get("phase")
        if not ip or not is_v4(ip) or phase in ("Succeeded", "Failed", "Unknown"):
            continue
        ns = p["metadata"]["namespace"]
        q = "%s.%s.pod.%s." % (ip.replace(".", "-"), ns, ZONE)
        seen.setdefault(q, set()).add(ip)
    for q, ips in seen.items():
        for c in clients:
            want[(q, c)] = ("NOERROR", frozenset(ips))
    return want, skipped


# ---------------------------------------------------------------- DNS

def parse(wire, qname):
    m = dns.message.from_wire(wire)
    ips = set()
    for rr in m.answer:
        if rr.rdtype == dns.rdatatype.A and rr.name.to_text().lower() == qname.lower():
            ips.update(r.address for r in rr)
    return m.id, dns.rcode.to_text(m.rcode()), frozenset(ips), m.question


WIRES = {}


def wire_of(name):
    w = WIRES.get(name)
    if w is None:
        q = dns.message.make_query(name, "A")
        q.flags |= dns.flags.RD
        w = WIRES[name] = q.to_wire()
    return w


def ask_all(port, clients, names, window=48, tries=4, timeout=0.3):
    """Every name (A) from every client at once, pipelined on one socket per
    client: ({client: {name: (rcode, ips)}}, the time the last reply came,
    how many queries were sent again). rcode "TIMEOUT" when TRIES sends
    got no reply."""
    socks = {}
    res, pending, todo, sends = {}, {}, {}, {}
    resent = 0
    last = time.monotonic()
    try:
        for c in clients:
            so = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            so.bind((c, 0))
            so.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            so.setblocking(False)
            socks[so] = c
            res[c], pending[c], todo[c] = {}, {}, list(names)
        while any(todo.values()) or any(pending.values()):
            for so, c in socks.items():
                pc = pending[c]
                while todo[c] and len(pc) < window:
                    n = todo[c].pop()
                    qid = random.randrange(65536)
                    while qid in pc:
                        qid = random.randrange(65536)
                    so.sendto(qid.to_bytes(2, "big") + wire_of(n)[2:], ("127.0.0.1", port))
                    pc[qid] = (n, time.monotonic())
                    sends[(c, n)] = sends.get((c, n), 0) + 1
            ready, _, _ = select.select(list(socks), [], [], 0.05)
            for so in ready:
                c = socks[so]
                pc = pending[c]
                while True:
                    try:
                        wire = so.recv(65535)
                    except BlockingIOError:
                        break
                    qid = int.from_bytes(wire[:2], "big")
                    if qid not in pc:
                        continue
                    n = pc[qid][0]
                    try:
                        _, rc, ips, question = parse(wire, n)
                    except Exception:
                        continue
                    if question and question[0].name.to_text().lower() == n.lower():
                        del pc[qid]
                        res[c][n] = (rc, ips)
                        last = time.monotonic()
            now = time.monotonic()
            for c, pc in pending.items():
                for qid, (n, t) in list(pc.items()):
                    if now - t > timeout:
                        del pc[qid]
                        if sends[(c, n)] < tries:
                            todo[c].append(n)
                            resent += 1
                        else:
                            res[c][n] = ("TIMEOUT", frozenset())
        return res, last, resent
    finally:
        for so in socks:
            so.close()


def compare(want, got):
    bad = []
    for (q, c), (rc, ips) in want.items():
        g = got.get(c, {}).get(q)
        if g is None:
            bad.append((q, c, (rc, ips), ("MISSING", None)))
        elif g[0] != rc or (rc == "NOERROR" and g[1] != ips):
            bad.append((q, c, (rc, ips), g))
    return bad


def fmt(v):
    rc, ips = v
    return rc + ("" if ips is None else " " + (",".join(sorted(ips)) or "-"))


# ---------------------------------------------------------------- load

class Monitor(threading.Thread):
    """One client querying all the time: stable names must never be
    NXDOMAIN or wrong, no name may ever be SERVFAIL."""

    def __init__(self, port, client, stable, others):
        super().__init__(daemon=True)
        self.port, self.client = port, client
        self.stable, self.others = stable, others   # {name: ips}, [names]
        self.stop = threading.Event()
        self.n = self.timeouts = 0
        self.errors = []

    def run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((self.client, 0))
        s.settimeout(1.0)
        names = list(self.stable)
        rnd = random.Random(self.client)
        while not self.stop.is_set():
            if self.others and rnd.random() < 0.3:
                n = rnd.choice(self.others)
            else:
                n = rnd.choice(names)
            q = dns.message.make_query(n, "A")
            try:
                s.sendto(q.to_wire(), ("127.0.0.1", self.port))
                while True:
                    wire = s.recv(65535)
                    m = dns.message.from_wire(wire)
                    if m.id == q.id:
                        break
            except socket.timeout:
                self.timeouts += 1
                self.n += 1
                continue
            self.n += 1
            rc = dns.rcode.to_text(m.rcode())
            ips = frozenset(r.address for rr in m.answer if rr.rdtype == dns.rdatatype.A for r in rr)
            t = time.monotonic() - START
            if rc == "SERVFAIL":
                self.errors.append((t, n, "SERVFAIL"))
            elif n in self.stable and (rc != "NOERROR" or ips != self.stable[n]):
                self.errors.append((t, n, fmt((rc, ips)) + " want " + fmt(("NOERROR", self.stable[n]))))
            time.sleep(0.002)
        s.close()


class Mutator(threading.Thread):
    """Creates a ClusterIP Service in namespace chaos every ~0.3 s (names
    chaos-0..39 in turn) and deletes the oldest when more than 8 exist
    (failures, e.g. injected ones or a name a restore brought back, are
    ignored: the oracle reads kubesim's state)."""

    def __init__(self, api):
        super().__init__(daemon=True)
        self.api = api
        self.stop = threading.Event()
        self.created = set()

    def run(self):
        live, i = [], 0
        while not self.stop.is_set():
            name = "chaos-%d" % (i % 40)   # a bounded pool: rounds stay short
            i += 1
            self.created.add((MUTATE_NS, name))
            self.api.write("POST", "/api/v1/namespaces/%s/services" % MUTATE_NS, {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                "spec": {"ports": [{"name": "p", "port": 80}]}})
            live.append(name)
            if len(live) > 8:
                self.api.write("DELETE", "/api/v1/namespaces/%s/services/%s" % (MUTATE_NS, live.pop(0)))
            self.stop.wait(0.3)


# ---------------------------------------------------------------- faults

def cycle(reflectors):
    """[(seconds to wait after, fault body, label)]: one cycle."""
    n = reflectors
    return [
        (0.5, {"saveState": "cycle"}, "save"),
        (1.0, {"closeWatches": True}, "close watches"),
        (1.0, {"failNext": {"count": n, "code": 500}, "closeWatches": True}, "500 x%d" % n),
        (1.5, {"delayMs": 300, "closeWatches": True}, "delay 300 ms"),
        (0.5, {"delayMs": 0}, "delay off"),
        (1.0, {"expireHistory": True, "closeWatches": True}, "expire history (410)"),
        (1.0, {"malformedWatchLine": True}, "malformed line"),
        (0.5, {"splitChunks": True, "closeWatches": True}, "split chunks on"),
        (1.5, {"failNext": {"count": n, "code": 429, "retryAfter": 1}, "closeWatches": True},
         "429 Retry-After 1"),
        (1.5, "ROTATE", "rotate token"),
        (1.0, {"failNext": {"count": n, "code": 503, "retryAfter": 1}, "closeWatches": True},
         "503 Retry-After 1"),
        (0.5, {"splitChunks": False}, "split chunks off"),
        (4.5, {"restoreState": "cycle"}, "restore (lower resourceVersion)"),
        (1.0, {"expireHistory": True}, "expire history"),
    ]


# 1.5 s apart: each failure is followed by a working watch and events
# (which reset the client's backoff) before the next one, so the client's
# delay at T_END is one failure's (0.8-1.2 s), not a doubled one.
LIGHT = [
    (1.5, {"closeWatches": True}, "close watches"),
    (1.5, {"malformedWatchLine": True}, "malformed line"),
    (1.5, {"failNext": {"count": 2, "code": 500}, "closeWatches": True}, "500 x2"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kubesim", required=True)
    ap.add_argument("--dns-port", type=int, required=True)
    ap.add_argument("--token", required=True)
    ap.add_argument("--token-file", required=True)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--churn", type=int, default=20)
    ap.add_argument("--reflectors", type=int, default=5)
    ap.add_argument("--converge", type=float, default=2.0)
    ap.add_argument("--client-ns", default="chaos-clients")
    args = ap.parse_args()
    api = Api(args.kubesim, args.token)
    port = args.dns_port
    fails = []

    st = api.state()
    clients = {p["status"]["podIP"]: p for p in st["pods"] if p["metadata"]["namespace"] == args.client_ns}
    want0, skipped = oracle(st, clients, set())
    log("cluster: %d services, %d pods, %d slices, %d clients (%s); %d names per client, %d services left out" % (
        len(st["services"]), len(st["pods"]), len(st["endpointslices"]), len(clients),
        " ".join(sorted(clients)), len(want0) // max(1, len(clients)), skipped))

    # before anything: topodns must already answer exactly (the baseline)
    names0 = sorted({q for q, _ in want0})
    got = ask_all(port, clients, names0)[0]
    bad = compare(want0, got)
    if bad:
        for b in bad[:10]:
            log("baseline mismatch: %s from %s: got %s want %s" % (b[0], b[1], fmt(b[3]), fmt(b[2])))
        print("chaos: FAIL: %d mismatches before any fault" % len(bad))
        return 1

    stable = {}
    others = []
    for svc in st["services"]:
        md, spec = svc["metadata"], svc["spec"]
        q = "%s.%s.svc.%s." % (md["name"], md["namespace"], ZONE)
        if spec.get("clusterIP") not in (None, "", "None") and spec.get("type") != "ExternalName":
            stable[q] = frozenset(a for a in (spec.get("clusterIPs") or [spec["clusterIP"]]) if is_v4(a))
        else:
            others.append(q)
    for (q, c), (rc, ips) in want0.items():
        if ".pod." in q:
            stable[q] = ips
    monitors = [Monitor(port, c, stable, others) for c in sorted(clients)]
    for m in monitors:
        m.start()
    mut = Mutator(api)
    api.fault({"churn": args.churn})
    mut.start()
    log("churn %d/s, Services created and deleted, %d clients querying" % (args.churn, len(monitors)))

    light_len = sum(w for w, _, _ in LIGHT)
    t_end = time.monotonic() + args.seconds
    ncycle = 0
    tok = 0
    while time.monotonic() + light_len < t_end:
        steps = 0
        for wait, body, label in cycle(args.reflectors):
            if time.monotonic() + wait + light_len > t_end:
                break
            if steps == 0:
                ncycle += 1
            steps += 1
            if body == "ROTATE":
                tok += 1
                new = "%s-%d" % (args.token, tok)
                tmp = args.token_file + ".new"
                with open(tmp, "w") as f:
                    f.write(new + "\n")
                os.rename(tmp, args.token_file)
                with api.lock:
                    api.token = new
                r = api.fault({"rotateToken": new})
            else:
                r = api.fault(body)
            log("cycle %d: %s (resourceVersion %s, %d watches)" % (ncycle, label, r["resourceVersion"], r["watches"]))
            time.sleep(wait)
        if steps < len(cycle(args.reflectors)):
            time.sleep(max(0.0, t_end - light_len - time.monotonic()))
            break
    for wait, body, label in LIGHT:
        r = api.fault(body)
        log("final: %s (resourceVersion %s)" % (label, r["resourceVersion"]))
        time.sleep(wait)

    # the end of the faults: stop the changes, then everything at once. The
    # monitors' run ends here too (the polls below need the CPU, one
    # interpreter lock, to measure topodns rather than this script).
    mut.stop.set()
    mut.join()
    for m in monitors:
        m.stop.set()
    for m in monitors:
        m.join()
    # the names to ask: churn (all that still runs) creates and deletes none
    names = sorted({q for q, _ in oracle(api.state(), clients, mut.created)[0]})
    r = api.fault({"reset": True, "churn": 0, "splitChunks": False, "delayMs": 0})
    t0 = time.monotonic()
    log("faults end (T_END): resourceVersion %s, %d watches" % (r["resourceVersion"], r["watches"]))
    # round 1 at once; the oracle (kubesim's state, final from T_END on) is
    # computed after it, so that reading the state costs no time measured
    got, last, resent = ask_all(port, clients, names)
    st = api.state()
    want, skipped = oracle(st, clients, mut.created)
    names = sorted({q for q, _ in want})
    converged_at = None
    rounds = 1
    last_bad = []
    while True:
        bad = compare(want, got)
        took = last - t0
        log("round %d: %d wrong of %d, last reply %.3f s after T_END, %d sent again" % (
            rounds, len(bad), len(want), took, resent))
        if not bad:
            converged_at = took
            break
        last_bad = bad
        if time.monotonic() - t0 > args.converge + 10:
            break
        rounds += 1
        got, last, resent = ask_all(port, clients, names)
    nq = len(want)
    if converged_at is None:
        fails.append("not converged %.1f s after the faults ended (%d of %d answers wrong)" % (
            time.monotonic() - t0, len(last_bad), nq))
    elif converged_at > args.converge:
        fails.append("converged only %.2f s after the faults ended (limit %.1f s)" % (converged_at, args.converge))
    if converged_at is None or converged_at > args.converge:
        for b in last_bad[:15]:
            log("mismatch: %s from %s: got %s want %s" % (b[0], b[1], fmt(b[3]), fmt(b[2])))
    else:
        log("converged %.3f s after T_END: %d answers (%d names x %d zones) equal the oracle, %d rounds" % (
            converged_at, nq, len(names), len(clients), rounds))
        # and it stays so
        got = ask_all(port, clients, names)[0]
        bad = compare(want, got)
        if bad:
            fails.append("%d answers changed after convergence" % len(bad))
            for b in bad[:10]:
                log("mismatch after convergence: %s from %s: got %s want %s" % (b[0], b[1], fmt(b[3]), fmt(b[2])))

    total = sum(m.n for m in monitors)
    touts = sum(m.timeouts for m in monitors)
    errs = [e for m in monitors for e in m.errors]
    log("monitor: %d queries, %d without reply, %d errors" % (total, touts, len(errs)))
    if errs:
        fails.append("%d SERVFAIL, NXDOMAIN or wrong answers for names that existed throughout" % len(errs))
        for e in sorted(errs)[:15]:
            log("monitor error at %.2f: %s: %s" % e)
    if total == 0 or touts * 100 > total:
        fails.append("%d of %d monitor queries got no reply" % (touts, total))
    if ncycle == 0:
        fails.append("no fault cycle ran (--seconds too short)")
    if fails:
        print("chaos: FAIL: " + "; ".join(fails))
        return 1
    print("chaos: PASS: %d cycles, %d monitor queries, converged in %.3f s" % (ncycle, total, converged_at))
    return 0


if __name__ == "__main__":
    sys.exit(main())
