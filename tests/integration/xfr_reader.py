#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""xfr_reader.py — zone transfer clients that read late, never, or leave
early (tests/integration/xfr_backpressure.sh). Every client connects from
127.0.0.2 with a small receive buffer (8 KiB, so the kernel holds little of
the transfer on our side) and sends `ZONE AXFR`.

  xfr_reader.py stall PORT ZONE PID PROBE_PORT PROBE SECONDS TLS OUT
      does not read for SECONDS; meanwhile samples the resident memory of
      process PID every 0.1 s and asks `PROBE A` over UDP (from 127.0.0.3
      to PROBE_PORT) one question after the other; then reads the whole
      transfer and writes its records, one "owner TYPE" line each, to OUT.
      TLS 1: over TLS (no certificate check). Prints one line:
        rss0_kb=R0 rss_max_kb=RM probes=P answered=A records=N messages=M
        soa_first=0|1 soa_last=0|1 rcode_ok=0|1 eof=0|1
  xfr_reader.py late PORT ZONE SECONDS
      does not read for SECONDS (or until it gets SIGUSR1), then reads what comes until the end of
      the transfer or of the connection. Prints records=N eof=0|1 (eof 1:
      the server closed the connection before the closing SOA).
  xfr_reader.py drop PORT ZONE N
      N clients one after the other, each reading the first message and
      closing (every other one with a reset). Prints dropped=N.
"""
import os
import signal
import socket
import ssl
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawdns  # noqa: E402  (its packet builders)

TYPES = {1: "A", 2: "NS", 6: "SOA", 16: "TXT", 28: "AAAA", 33: "SRV", 15: "MX", 5: "CNAME"}


def query(n, qtype, qid):
    return rawdns.header(qid=qid, flags=0) + rawdns.question(n, qtype)


def read_name(msg, off):
    labels, jumped, end = [], False, off
    for _ in range(128):
        n = msg[off]
        if n >= 0xC0:
            if not jumped:
                end = off + 2
            off = ((n & 0x3F) << 8) | msg[off + 1]
            jumped = True
            continue
        if n == 0:
            if not jumped:
                end = off + 1
            return ".".join(labels) + ".", end
        labels.append(msg[off + 1:off + 1 + n].decode("ascii", "replace").lower())
        off += 1 + n
    raise ValueError("name loop")


def records(msg):
    """(rcode, [(owner, type)]) of one message's answer section."""
    _, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    off = 12
    for _ in range(qd):
        _, off = read_name(msg, off)
        off += 4
    out = []
    for _ in range(an):
        owner, off = read_name(msg, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10 + rdlen
        out.append((owner, TYPES.get(rtype, "TYPE%d" % rtype)))
    return flags & 0xF, out


def connect(port, tls=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8192)
    s.bind(("127.0.0.2", 0))
    s.settimeout(20)
    s.connect(("127.0.0.1", port))
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s)
    return s


def send_axfr(s, zone):
    q = query(zone, 252, 0x4242)
    s.sendall(struct.pack(">H", len(q)) + q)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        try:
            chunk = s.recv(n - len(buf))
        except (ConnectionError, ssl.SSLError, socket.timeout):
            return None
        if not chunk:
            return None
        buf += chunk
    return buf


def read_transfer(s):
    """Every record up to the closing SOA: (records, messages, rcode_ok, eof)."""
    recs, msgs, rc_ok = [], 0, True
    while True:
        head = recv_exact(s, 2)
        msg = recv_exact(s, struct.unpack(">H", head)[0]) if head else None
        if msg is None:
            return recs, msgs, rc_ok, True
        msgs += 1
        rcode, rr = records(msg)
        rc_ok = rc_ok and rcode == 0 and msg[:2] == b"\x42\x42"
        recs += rr
        if len(recs) > 1 and recs[-1][1] == "SOA":
            return recs, msgs, rc_ok, False


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def stall(port, zone, pid, probe_port, probe, seconds, tls, out):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.3", 0))
    u.settimeout(2.0)
    s = connect(port, tls)
    rss0 = rss_kb(pid)
    send_axfr(s, zone)
    rss_max, probes, answered, qid = rss0, 0, 0, 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        rss_max = max(rss_max, rss_kb(pid))
        qid = (qid + 1) & 0xFFFF
        probes += 1
        u.sendto(query(probe, 1, qid), ("127.0.0.1", probe_port))
        try:
            while True:
                data = u.recv(4096)
                if data[:2] == struct.pack(">H", qid):
                    answered += (data[3] & 0xF) == 0
                    break
        except socket.timeout:
            pass
        time.sleep(0.1)
    rss_max = max(rss_max, rss_kb(pid))
    recs, msgs, rc_ok, eof = read_transfer(s)
    s.close()
    with open(out, "w") as f:
        for owner, rtype in recs:
            f.write("%s %s\n" % (owner, rtype))
    soa_first = int(bool(recs) and recs[0][1] == "SOA")
    soa_last = int(len(recs) > 1 and recs[-1][1] == "SOA")
    print("rss0_kb=%d rss_max_kb=%d probes=%d answered=%d records=%d messages=%d "
          "soa_first=%d soa_last=%d rcode_ok=%d eof=%d"
          % (rss0, rss_max, probes, answered, len(recs), msgs, soa_first, soa_last,
             int(rc_ok), int(eof)))


class Woken(Exception):
    pass


def woken(signum, frame):
    raise Woken()


def late(port, zone, seconds):
    signal.signal(signal.SIGUSR1, woken)
    s = connect(port)
    send_axfr(s, zone)
    try:
        time.sleep(seconds)
    except Woken:
        pass
    recs, _, _, eof = read_transfer(s)
    s.close()
    print("records=%d eof=%d" % (len(recs), int(eof)))


def drop(port, zone, n):
    for i in range(n):
        s = connect(port)
        send_axfr(s, zone)
        head = recv_exact(s, 2)
        if head:
            recv_exact(s, struct.unpack(">H", head)[0])
        if i % 2:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
    print("dropped=%d" % n)


def main():
    mode, a = sys.argv[1], sys.argv[2:]
    if mode == "stall":
        stall(int(a[0]), a[1], int(a[2]), int(a[3]), a[4], float(a[5]), a[6] == "1", a[7])
    elif mode == "late":
        late(int(a[0]), a[1], float(a[2]))
    elif mode == "drop":
        drop(int(a[0]), a[1], int(a[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
