#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""rawdns.py — send hand-made DNS packets to a server on loopback.

  rawdns.py udp PORT CASE        print the reply's rcode (or "noreply")
  rawdns.py pipeline PORT N      N queries written at once on one TCP
                                 connection; prints "ok N" when N replies
                                 with matching IDs came back
  rawdns.py xfr PORT ZONE TYPE [SERIAL|none] [SOURCE]
                                 an AXFR or IXFR (SERIAL in the authority
                                 SOA; "none": no authority record) over TCP
                                 from SOURCE (default 127.0.0.1); reads
                                 messages until the closing SOA, prints one
                                 line per message (rcode, AA, answer count,
                                 length) and a total line

CASEs build malformed or unusual packets (see CASES below). Only 127.0.0.1.
"""
import socket
import struct
import sys


def name(n):
    out = b""
    for label in n.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def header(qid=0x1234, flags=0x0100, qd=1, an=0, ns=0, ar=0):
    return struct.pack("!HHHHHH", qid, flags, qd, an, ns, ar)


def question(n="whoami.example.", qtype=1, qclass=1):
    return name(n) + struct.pack("!HH", qtype, qclass)


CASES = {
    "good": header() + question(),
    "short": b"\x12\x34\x01",
    "header-only": header(qd=0),
    "two-questions": header(qd=2) + question() + question(),
    "pointer-loop": header() + b"\xc0\x0c" + struct.pack("!HH", 1, 1),
    "forward-pointer": header() + b"\xc0\x20" + struct.pack("!HH", 1, 1) + b"\0" * 20,
    "trailing-garbage": header() + question() + b"garbage",
    "truncated-question": header() + name("whoami.example.")[:5],
    "long-label": header() + b"\x50" + b"a" * 80 + b"\0" + struct.pack("!HH", 1, 1),
    "response": header(flags=0x8100) + question(),
    "big-garbage": header() + question() + b"x" * 1100,
    "bad-opt": header(ar=1) + question() + b"\0" + struct.pack("!HHIH", 41, 4096, 0, 4) + b"\0\x08\0\x10",
}


def rcode(reply):
    if len(reply) < 12:
        return "short"
    r = reply[3] & 0x0F
    names = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
    return names.get(r, str(r))


def udp(port, case):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1.0)
    s.sendto(CASES[case], ("127.0.0.1", port))
    try:
        data, _ = s.recvfrom(65535)
    except socket.timeout:
        print("noreply")
        return
    qid = struct.unpack("!H", data[:2])[0]
    print(rcode(data), "id=%04x" % qid)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def pipeline(port, n):
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    out = b""
    ids = set()
    for i in range(n):
        q = header(qid=0x100 + i) + question("q%d.whoami.example." % i)
        out += struct.pack("!H", len(q)) + q
        ids.add(0x100 + i)
    s.sendall(out)          # all queries before reading any reply
    got = set()
    for _ in range(n):
        ln = struct.unpack("!H", recv_exact(s, 2))[0]
        msg = recv_exact(s, ln)
        got.add(struct.unpack("!H", msg[:2])[0])
    print("ok %d" % len(got) if got == ids else "mismatch %s" % sorted(got))


def skip_name(msg, off):
    while True:
        n = msg[off]
        if n == 0:
            return off + 1
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1 + n


def answer_types(msg):
    """Types of the answer records of a message."""
    qd, an = struct.unpack("!HH", msg[4:8])
    off = 12
    for _ in range(qd):
        off = skip_name(msg, off) + 4
    types = []
    for _ in range(an):
        off = skip_name(msg, off)
        t, _c, _ttl, ln = struct.unpack("!HHIH", msg[off:off + 10])
        types.append(t)
        off += 10 + ln
    return types


def xfr(port, zone, qtype, serial=None, source="127.0.0.1"):
    qt = {"AXFR": 252, "IXFR": 251}[qtype]
    q = question(zone, qt)
    ns = 0
    if qtype == "IXFR" and serial != "none":
        rdata = b"\0\0" + struct.pack("!IIIII", int(serial or 0), 0, 0, 0, 0)
        q += name(zone) + struct.pack("!HHIH", 6, 1, 0, len(rdata)) + rdata
        ns = 1
    q = header(qid=0x4242, flags=0, ns=ns) + q
    s = socket.socket()
    s.settimeout(3)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(struct.pack("!H", len(q)) + q)
    msgs = records = soas = 0
    while True:
        try:
            ln = struct.unpack("!H", recv_exact(s, 2))[0]
            msg = recv_exact(s, ln)
        except (EOFError, socket.timeout):
            print("eof")
            break
        msgs += 1
        types = answer_types(msg)
        records += len(types)
        soas += types.count(6)
        aa = (msg[2] >> 2) & 1
        print("msg %d %s aa=%d an=%d len=%d" % (msgs, rcode(msg), aa, len(types), ln))
        if rcode(msg) != "NOERROR" or soas >= 2 or (msgs == 1 and types == [6]):
            break
    print("total messages=%d records=%d soa=%d" % (msgs, records, soas))


if __name__ == "__main__":
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "udp":
        udp(port, sys.argv[3])
    elif mode == "pipeline":
        pipeline(port, int(sys.argv[3]))
    elif mode == "xfr":
        xfr(port, *sys.argv[3:])
