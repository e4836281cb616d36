#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""abuse.py — the measuring half of tests/integration/abuse.sh.

  abuse.py sample PID SECONDS OUT
      every 0.5 s for SECONDS: "t rss_kb fds" of process PID (VmRSS from
      /proc/PID/status, the entries of /proc/PID/fd), one line each, to OUT.

  abuse.py reload PID CONF LOG PORT TEMPLATE RELOADS
      RELOADS times: rewrite CONF from TEMPLATE with {N} replaced by the
      reload number (gen.test then answers 10.77.N/256.N%256), send SIGUSR1,
      wait for one more "Reloading complete" in LOG (10 s at most). Clients
      from four source addresses query all the while and check every answer:
        www.example.org  A 192.0.2.10 (file, cache), always
        gen.test         A of reload N-1 or N while reload N is under way,
                         and exactly N once it completed (checked after each)
        nope-XXXX.example.org  NXDOMAIN
        svc-00001.ns-0.svc.cluster.local  A its ClusterIP (kubernetes)
      Prints "reloads N/M", "queries Q", "no_reply K", "wrong W" and the first
      wrong answers; exit 0 when every reload completed and nothing was wrong.
"""
import os
import random
import re
import signal
import socket
import sys
import threading
import time

import dns.message
import dns.rcode
import dns.rdatatype


def sample(pid, seconds, out):
    t0 = time.monotonic()
    with open(out, "w") as f:
        while time.monotonic() - t0 < seconds:
            try:
                with open("/proc/%d/status" % pid) as s:
                    rss = int(re.search(r"^VmRSS:\s+(\d+)", s.read(), re.M).group(1))
                fds = len(os.listdir("/proc/%d/fd" % pid))
            except (OSError, AttributeError):
                break
            f.write("%.1f %d %d\n" % (time.monotonic() - t0, rss, fds))
            f.flush()
            time.sleep(0.5)
    return 0


def gen_ip(n):
    return "10.77.%d.%d" % (n // 256, n % 256)


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.n = 0          # reloads completed
        self.pending = 0    # reload under way (0: none)
        self.queries = self.no_reply = 0
        self.wrong = []
        self.stop = False


def client(port, src, cluster_ip, st):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    s.settimeout(1.0)
    rnd = random.Random(src)
    while not st.stop:
        kind = rnd.randrange(4)
        with st.lock:
            lo = st.n          # the oldest configuration that may answer
        name = ["www.example.org.", "gen.test.", "nope-%d.example.org." % rnd.randrange(100000),
                "svc-00001.ns-0.svc.cluster.local."][kind]
        q = dns.message.make_query(name, "A")
        try:
            s.sendto(q.to_wire(), ("127.0.0.1", port))
            while True:
                m = dns.message.from_wire(s.recv(65535))
                if m.id == q.id:
                    break
        except socket.timeout:
            with st.lock:
                st.queries += 1
                st.no_reply += 1
            continue
        with st.lock:
            hi = max(st.n, st.pending)   # the newest one that may have
        rc = dns.rcode.to_text(m.rcode())
        ips = sorted(r.address for rr in m.answer if rr.rdtype == dns.rdatatype.A for r in rr)
        if kind == 0:
            ok = rc == "NOERROR" and ips == ["192.0.2.10"]
        elif kind == 1:
            ok = rc == "NOERROR" and len(ips) == 1 and ips[0] in {gen_ip(k) for k in range(lo, hi + 1)}
        elif kind == 2:
            ok = rc == "NXDOMAIN" and not ips
        else:
            ok = rc == "NOERROR" and ips == [cluster_ip]
        with st.lock:
            st.queries += 1
            if not ok:
                st.wrong.append("%s from %s: %s %s (reloads %d..%d)" % (name, src, rc, ips, lo, hi))
    s.close()


def ask(port, name):
    """The A addresses of NAME (None when three tries got no reply: the
    server is flooded, so one lost datagram is no failure)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    try:
        for _ in range(3):
            q = dns.message.make_query(name, "A")
            s.sendto(q.to_wire(), ("127.0.0.1", port))
            try:
                while True:
                    m = dns.message.from_wire(s.recv(65535))
                    if m.id == q.id:
                        return sorted(r.address for rr in m.answer
                                      if rr.rdtype == dns.rdatatype.A for r in rr)
            except socket.timeout:
                continue
        return None
    finally:
        s.close()


def reload(pid, conf, logf, port, template, reloads):
    with open(template) as f:
        tmpl = f.read()
    cluster_ip = (ask(port, "svc-00001.ns-0.svc.cluster.local.") or [None])[0]
    st = State()
    ths = [threading.Thread(target=client, args=(port, src, cluster_ip, st), daemon=True)
           for src in ("127.0.6.1", "127.0.6.2", "127.0.6.3", "127.0.6.4")]
    for t in ths:
        t.start()
    done = 0
    late = []

    def completed():
        with open(logf, errors="replace") as f:
            return sum(1 for line in f if line.rstrip("\n") == "[INFO] Reloading complete")

    base = completed()
    for k in range(1, reloads + 1):
        with open(conf + ".tmp", "w") as f:
            f.write(tmpl.replace("{N}", gen_ip(k)))
        os.rename(conf + ".tmp", conf)
        with st.lock:
            st.pending = k
        os.kill(pid, signal.SIGUSR1)
        t0 = time.monotonic()
        while completed() < base + k and time.monotonic() - t0 < 10:
            time.sleep(0.02)
        if completed() < base + k:
            print("reload %d did not complete within 10 s" % k)
            break
        got = ask(port, "gen.test.")
        if got != [gen_ip(k)]:
            late.append("after reload %d: gen.test %s, want %s" % (k, got, gen_ip(k)))
        with st.lock:
            st.n = k
            st.pending = 0
        done = k
        time.sleep(0.1)
    time.sleep(0.5)
    st.stop = True
    for t in ths:
        t.join()
    print("reloads %d/%d" % (done, reloads))
    print("queries %d" % st.queries)
    print("no_reply %d" % st.no_reply)
    print("wrong %d" % (len(st.wrong) + len(late)))
    for w in (late + st.wrong)[:15]:
        print("  " + w)
    return 0 if done == reloads and not st.wrong and not late and cluster_ip else 1


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "sample":
        sys.exit(sample(int(a[2]), float(a[3]), a[4]))
    if a[1] == "reload":
        sys.exit(reload(int(a[2]), a[3], a[4], int(a[5]), a[6], int(a[7])))
    sys.exit(2)
