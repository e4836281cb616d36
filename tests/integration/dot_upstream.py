#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""dot_upstream.py — a DNS-over-TLS upstream that answers with wrong replies.

  dot_upstream.py PORT CERT KEY

Listens on 127.0.0.1:PORT (TLS, RFC 7858 framing: a 2-octet length before
each message) and answers by the query name's first label (any zone):
  good.             A 192.0.2.1, the right reply
  wrongfirst.       first a reply with ID 0, then one with the right ID for
                    another question (other.test.), then one with the right ID
                    that is not a response (QR clear), then the right reply
                    (A 192.0.2.2)
  onlywrong.        only replies with a wrong ID (0, ID+1), never the right one
  anything else     NXDOMAIN
Logs each query it read ("query NAME ID") on stdout. Only loopback. Prints
"ready" once listening.
"""
import socket
import ssl
import struct
import sys
import threading

import dns.exception
import dns.message
import dns.rcode
import dns.rrset

PORT = int(sys.argv[1])
CTX = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
CTX.load_cert_chain(sys.argv[2], sys.argv[3])


def frame(msg):
    w = msg.to_wire() if not isinstance(msg, bytes) else msg
    return struct.pack("!H", len(w)) + w


def read_exact(conn, n):
    b = b""
    while len(b) < n:
        c = conn.recv(n - len(b))
        if not c:
            return None
        b += c
    return b


def answer(q, addr):
    r = dns.message.make_response(q)
    r.answer.append(dns.rrset.from_text(q.question[0].name, 60, "IN", "A", addr))
    return r


def serve(conn):
    try:
        while True:
            h = read_exact(conn, 2)
            if h is None:
                return
            wire = read_exact(conn, struct.unpack("!H", h)[0])
            if wire is None:
                return
            q = dns.message.from_wire(wire)
            name = q.question[0].name.to_text()
            print("query", name, q.id, flush=True)
            name = name.split(".")[0].lower()
            if name == "good":
                conn.sendall(frame(answer(q, "192.0.2.1")))
            elif name == "wrongfirst":
                bad = answer(q, "198.51.100.1")
                bad.id = 0 if q.id != 0 else 1
                conn.sendall(frame(bad))
                other = dns.message.make_query("other.test.", "A")
                other.id = q.id
                conn.sendall(frame(answer(other, "198.51.100.2")))
                noqr = bytearray(answer(q, "198.51.100.3").to_wire())
                noqr[2] &= 0x7F
                conn.sendall(frame(bytes(noqr)))
                conn.sendall(frame(answer(q, "192.0.2.2")))
            elif name == "onlywrong":
                for i in (0, (q.id + 1) & 0xFFFF):
                    bad = answer(q, "198.51.100.9")
                    bad.id = i if i != q.id else (i + 2) & 0xFFFF
                    conn.sendall(frame(bad))
            else:
                r = dns.message.make_response(q)
                r.set_rcode(dns.rcode.NXDOMAIN)
                conn.sendall(frame(r))
    except (OSError, ssl.SSLError, dns.exception.DNSException):
        return
    finally:
        conn.close()


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", PORT))
    s.listen(64)
    print("ready", flush=True)
    while True:
        c, _ = s.accept()
        try:
            t = CTX.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError):
            c.close()
            continue
        threading.Thread(target=serve, args=(t,), daemon=True).start()


if __name__ == "__main__":
    main()
