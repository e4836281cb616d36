#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""forward_upstream.py — a scriptable DNS upstream for the forward tests.

  forward_upstream.py PORT NAME

Listens on 127.0.0.1:PORT (UDP and TCP) and answers by query name:
  echo.test. TXT   what it received: "name=NAME" "proto=udp|tcp" "id=N"
                   "edns=SIZE|none" "do=0|1" "opts=CODE,..." "rd=0|1"
  who.test.  TXT   "NAME"
  optdata.test. TXT  the query's EDNS options, one string each: "CODE=HEX"
                   (their data in wire form), or "none"
  slow.test. TXT   "NAME" after 1.5 s
  servfail.test.   SERVFAIL;  refused.test. REFUSED;  nx.test. NXDOMAIN
  nodata.test.     NOERROR, no records
  big.test.  TXT   40 TXT records of 60 octets (TC over UDP when too big)
  onlybeta.test.   TXT "NAME" from the upstream named beta, NXDOMAIN elsewhere
  failalpha.test.  SERVFAIL from the upstream named alpha, TXT "NAME" elsewhere
  . NS             health probes; upstreams named nohc* never answer them
  anything else    NXDOMAIN
Only loopback. Prints "ready" once listening.
"""
import socket
import struct
import sys
import threading
import time

import dns.exception
import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import dns.rrset

PORT = int(sys.argv[1])
NAME = sys.argv[2]


def txt(resp, qname, *strings):
    quoted = " ".join('"%s"' % s for s in strings)
    resp.answer.append(dns.rrset.from_text(qname, 30, "IN", "TXT", quoted))


def build(wire, proto):
    q = dns.message.from_wire(wire)
    resp = dns.message.make_response(q)
    qn = q.question[0].name.to_text().lower()
    if qn == "." and NAME.startswith("nohc"):
        return None
    if qn == "echo.test.":
        opts = ",".join(str(int(o.otype)) for o in q.options) if q.edns >= 0 else ""
        txt(resp, q.question[0].name, "name=" + NAME, "proto=" + proto, "id=%d" % q.id,
            "edns=%s" % (q.payload if q.edns >= 0 else "none"),
            "do=%d" % (1 if q.ednsflags & dns.flags.DO else 0),
            "opts=" + opts, "rd=%d" % (1 if q.flags & dns.flags.RD else 0))
    elif qn == "optdata.test.":
        strs = ["%d=%s" % (int(o.otype), o.to_wire().hex()) for o in q.options] or ["none"]
        txt(resp, q.question[0].name, *strs)
    elif qn in ("who.test.", "slow.test."):
        if qn == "slow.test.":
            time.sleep(1.5)
        txt(resp, q.question[0].name, NAME)
    elif qn == "onlybeta.test." and NAME == "beta":
        txt(resp, q.question[0].name, NAME)
    elif qn == "failalpha.test.":
        if NAME == "alpha":
            resp.set_rcode(dns.rcode.SERVFAIL)
        else:
            txt(resp, q.question[0].name, NAME)
    elif qn == "servfail.test.":
        resp.set_rcode(dns.rcode.SERVFAIL)
    elif qn == "refused.test.":
        resp.set_rcode(dns.rcode.REFUSED)
    elif qn == "nodata.test.":
        pass
    elif qn == "big.test.":
        for i in range(40):
            txt(resp, q.question[0].name, ("%02d" % i) + "x" * 58)
    else:
        resp.set_rcode(dns.rcode.NXDOMAIN)
    limit = 65535
    if proto == "udp":
        limit = q.payload if q.edns >= 0 else 512
    try:
        return resp.to_wire(max_size=limit)
    except dns.exception.TooBig:
        resp.answer = []
        resp.flags |= dns.flags.TC
        return resp.to_wire()


def udp_one(sock, wire, addr):
    try:
        out = build(wire, "udp")
        if out is not None:
            sock.sendto(out, addr)
    except Exception as e:  # a bad query gets no answer
        print("udp error:", e, flush=True)


def serve_udp(sock):
    while True:
        wire, addr = sock.recvfrom(65535)
        threading.Thread(target=udp_one, args=(sock, wire, addr), daemon=True).start()


def recv_exact(c, n):
    b = b""
    while len(b) < n:
        k = c.recv(n - len(b))
        if not k:
            return None
        b += k
    return b


def tcp_conn(c):
    with c:
        while True:
            h = recv_exact(c, 2)
            if not h:
                return
            wire = recv_exact(c, struct.unpack("!H", h)[0])
            if wire is None:
                return
            out = build(wire, "tcp")
            if out is None:
                continue
            c.sendall(struct.pack("!H", len(out)) + out)


def serve_tcp(ls):
    while True:
        c, _ = ls.accept()
        threading.Thread(target=tcp_conn, args=(c,), daemon=True).start()


u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", PORT))
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", PORT))
t.listen(64)
threading.Thread(target=serve_tcp, args=(t,), daemon=True).start()
print("ready", flush=True)
serve_udp(u)
