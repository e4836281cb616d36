#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# answers.py PORT DOMAIN CLIENTS_FILE NAME... — ask topodns on
# 127.0.0.1:PORT for NAME.DOMAIN's A records from every client address in
# CLIENTS_FILE (one per line, the query's source address) and print one
# line per client and name, "NAME CLIENT: a.b.c.d ..." with the addresses
# sorted as `sort` sorts them ("" for none), as kubernetes_lib.sh's addrs
# prints them: thousands of clients in seconds where dig takes minutes. A
# query without an answer after one retry prints "NAME CLIENT: TIMEOUT".
import sys

import dns.exception
import dns.message
import dns.query
import dns.rdatatype

port, domain, clients_file = int(sys.argv[1]), sys.argv[2], sys.argv[3]
names = sys.argv[4:]
with open(clients_file) as f:
    clients = [line.strip() for line in f if line.strip()]
for client in clients:
    for name in names:
        q = dns.message.make_query("%s.%s" % (name, domain), "A")
        got = None
        for _ in range(2):
            try:
                got = dns.query.udp(q, "127.0.0.1", port=port, source=client, timeout=2)
                break
            except (dns.exception.Timeout, OSError):
                continue
        if got is None:
            print("%s %s: TIMEOUT" % (name, client))
            continue
        addrs = sorted(rr.address for rrset in got.answer if rrset.rdtype == dns.rdatatype.A
                       for rr in rrset)
        print("%s %s: %s" % (name, client, " ".join(addrs)))
