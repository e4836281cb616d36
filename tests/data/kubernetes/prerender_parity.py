#!/usr/bin/python3
"""prerender_parity.py — the same queries to two servers, reply bytes compared.

Usage: prerender_parity.py FAST_PORT SLOW_PORT TABLE NAMES_FILE [--rounds N]

FAST_PORT is a topodns with the pre-rendered answers on, SLOW_PORT the same
Corefile with TOPODNS_NO_PRERENDER=1 (tests/integration/prerender_parity.sh).
The query list: every (qname, qtype) of the kubernetes acceptance table
(TABLE, tests/data/kubernetes/acceptance.tsv, placeholders expanded) and of
NAMES_FILE (one "qname qtype" per line: the topology fixture's Services),
each from several client addresses (pods in different zones and nodes, a
node address, an unknown client), in several forms: UDP without EDNS, UDP
with EDNS 1232, EDNS with DO and an NSID and a cookie option, EDNS with a
small buffer (512), ECS from the trusted source and from an untrusted one,
TCP, and the qname in mixed case. Every query goes to each server ROUNDS
times (default 3: the first fills the memo, the next are answered from it),
with the same ID; the replies must be identical octet for octet apart from
the ID (no reply on one side must mean none on the other).

Prints one line per difference (at most 20) and "N queries, M differences";
exits 1 on any difference, 2 when a server does not answer at all. SOA
serials are zeroed before comparing (the time of each server's last store
change).
"""
import random
import socket
import struct
import sys

import dns.edns
import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rdatatype

SUBST = {"{S}": "testns.svc.cluster.local.", "{Z}": "cluster.local."}
TRUSTED = "127.0.0.1"           # client_subnet source in the Corefile
SOURCES = ["127.0.1.1", "127.0.1.2", "127.0.2.1", "127.0.2.2", "127.0.3.1",
           "127.0.3.2", "127.0.9.9", "127.0.10.3"]


def table_queries(path):
    out = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        f = line.rstrip("\n").split("\t")
        if len(f) < 4:
            continue
        name, qtype = f[2], f[3]
        for k, v in SUBST.items():
            name = name.replace(k, v)
        if qtype in ("AXFR", "IXFR"):
            continue
        out.append((name, qtype))
    return out


def names_queries(path):
    out = []
    for line in open(path):
        f = line.split()
        if len(f) == 2:
            out.append((f[0], f[1]))
    return out


def mixed_case(name, rnd):
    return "".join(c.upper() if c.isalpha() and rnd.random() < 0.5 else c for c in name)


def forms(rnd):
    """(label, builder(qname, qtype) -> (wire, source override or None, tcp))"""
    def plain(n, t):
        return dns.message.make_query(n, t, use_edns=False), None, False

    def edns(n, t):
        return dns.message.make_query(n, t, use_edns=0, payload=1232), None, False

    def opts(n, t):
        m = dns.message.make_query(n, t, use_edns=0, payload=4096, want_dnssec=True,
                                   options=[dns.edns.GenericOption(3, b""),
                                            dns.edns.GenericOption(10, b"\x01\x02\x03\x04\x05\x06\x07\x08")])
        return m, None, False

    def small(n, t):
        return dns.message.make_query(n, t, use_edns=0, payload=512), None, False

    def ecs_trusted(n, t):
        o = dns.edns.ECSOption("127.0.2.1", 32)
        return dns.message.make_query(n, t, use_edns=0, payload=1232, options=[o]), TRUSTED, False

    def ecs_untrusted(n, t):
        o = dns.edns.ECSOption("127.0.3.1", 24)
        return dns.message.make_query(n, t, use_edns=0, payload=1232, options=[o]), None, False

    def tcp(n, t):
        return dns.message.make_query(n, t, use_edns=0, payload=1232), None, True

    def case(n, t):
        return dns.message.make_query(mixed_case(n, rnd), t, use_edns=0, payload=1232), None, False

    def case_plain(n, t):
        return dns.message.make_query(mixed_case(n, rnd), t, use_edns=False), None, False

    return [("udp", plain), ("edns", edns), ("opts", opts), ("small", small),
            ("ecs-trusted", ecs_trusted), ("ecs-untrusted", ecs_untrusted), ("tcp", tcp),
            ("case", case), ("case-noedns", case_plain)]


UDP = {}


def udp_socket(source):
    s = UDP.get(source)
    if s is None:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((source, 0))
        s.settimeout(2)
        UDP[source] = s
    return s


def send(wire, port, source, tcp):
    """The raw reply octets, or None when nothing came back."""
    try:
        if tcp:
            s = socket.create_connection(("127.0.0.1", port), timeout=3, source_address=(source, 0))
            try:
                s.sendall(struct.pack("!H", len(wire)) + wire)
                head = b""
                while len(head) < 2:
                    c = s.recv(2 - len(head))
                    if not c:
                        return None
                    head += c
                n = struct.unpack("!H", head)[0]
                body = b""
                while len(body) < n:
                    c = s.recv(n - len(body))
                    if not c:
                        return None
                    body += c
                return body
            finally:
                s.close()
        s = udp_socket(source)
        s.sendto(wire, ("127.0.0.1", port))
        while True:
            data, peer = s.recvfrom(65535)
            if peer[1] == port and data[:2] == wire[:2]:
                return data
    except (socket.timeout, OSError):
        return None


def no_serial(reply):
    """The reply with every SOA serial zeroed: a serial is the time of the
    store's last change, which two servers see at different seconds."""
    if reply is None:
        return None
    try:
        m = dns.message.from_wire(reply)
    except Exception:
        return reply
    out = reply
    for sec in (m.answer, m.authority):
        for rrset in sec:
            if rrset.rdtype == dns.rdatatype.SOA:
                for rd in rrset:
                    out = out.replace(struct.pack("!I", rd.serial), b"\0\0\0\0")
    return out


def main():
    args = sys.argv[1:]
    rounds = 3
    if "--rounds" in args:
        i = args.index("--rounds")
        rounds = int(args[i + 1])
        del args[i:i + 2]
    fast, slow, table, names = int(args[0]), int(args[1]), args[2], args[3]
    rnd = random.Random(7)
    queries = table_queries(table) + names_queries(names)
    total = diffs = answered = 0
    shown = 0
    for qname, qtype in queries:
        for label, build in forms(rnd):
            topo = qname.endswith("prod.svc.cluster.local.")
            srcs = SOURCES if topo and label in ("udp", "edns", "case") else SOURCES[:2]
            for src in srcs:
                msg, src_override, tcp = build(qname, qtype)
                msg.id = rnd.randrange(65536)
                wire = msg.to_wire()
                source = src_override or src
                for rnd_i in range(rounds):
                    a = no_serial(send(wire, fast, source, tcp))
                    b = no_serial(send(wire, slow, source, tcp))
                    total += 1
                    if a is not None:
                        answered += 1
                    same = (a is None and b is None) or (
                        a is not None and b is not None and a[2:] == b[2:] and a[:2] == wire[:2])
                    if not same:
                        diffs += 1
                        if shown < 20:
                            shown += 1
                            print("DIFF %s %s %s from %s round %d:\n  fast %s\n  slow %s" % (
                                label, qname, qtype, source, rnd_i + 1,
                                a.hex() if a else None, b.hex() if b else None))
    print("%d queries, %d differences, %d answered" % (total, diffs, answered))
    if answered == 0:
        sys.exit(2)
    sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
