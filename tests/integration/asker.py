#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# asker.py PORT NAME STOPFILE [SOURCE [TCP_EVERY]] — ask topodns on
# 127.0.0.1:PORT for NAME's A record from SOURCE (default 127.0.3.1) until
# STOPFILE exists, every TCP_EVERY-th query over TCP (0, the default: UDP
# only). Prints "SENT LOST BAD": queries sent, queries without a reply
# (timeout or connection error), replies that are not NOERROR with an A
# record in the answer.
import os
import sys

import dns.exception
import dns.message
import dns.query
import dns.rcode
import dns.rdatatype

port, name, stop = int(sys.argv[1]), sys.argv[2], sys.argv[3]
source = sys.argv[4] if len(sys.argv) > 4 else "127.0.3.1"
tcp_every = int(sys.argv[5]) if len(sys.argv) > 5 else 0
sent = lost = bad = 0
while not os.path.exists(stop):
    q = dns.message.make_query(name, "A")
    ask = dns.query.tcp if tcp_every and sent % tcp_every == 0 else dns.query.udp
    try:
        r = ask(q, "127.0.0.1", port=port, source=source, timeout=2)
        if r.rcode() != dns.rcode.NOERROR or not any(
                rr.rdtype == dns.rdatatype.A for rr in r.answer):
            bad += 1
    except (dns.exception.Timeout, OSError, EOFError):
        lost += 1
    sent += 1
print(sent, lost, bad)
