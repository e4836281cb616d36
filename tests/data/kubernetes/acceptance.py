#!/usr/bin/python3
"""acceptance.py — run the lines of acceptance.tsv for one Corefile profile.

Usage: acceptance.py TABLE PROFILE PORT TTL [--cache-cap N] [--coverage]

Each line of TABLE (format in its header) whose profile list holds PROFILE
(`kubeadm` stands for kubeadm_full and kubeadm_min) is sent to
127.0.0.1:PORT with dnspython (UDP with EDNS 1232, TCP for AXFR) and the
reply is compared: rcode, AA, TC, answer / authority / additional as sets of
"owner TTL TYPE RDATA" (owners and rdata compared as text, so the case the
server writes matters; SOA serials are not compared), and in the answer a
CNAME must precede the records of its target. With --cache-cap N (a cache
in front), every expected TTL is capped at N and a TTL up to 3 s lower is
accepted (cache hits count down). --coverage also checks that the table
covers every row 1–79 of the acceptance table.

Prints one line per failure and "profile: N passed, M failed"; exits 1 on
any failure.
"""
import re
import sys

import dns.flags
import dns.message
import dns.name
import dns.query
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype

SUBST = {"{S}": "testns.svc.cluster.local.", "{Z}": "cluster.local."}


def expand(text, ttl):
    for k, v in SUBST.items():
        text = text.replace(k, v)
    text = text.replace("$ST", str(min(ttl, 300)))
    return text.replace("$T", str(ttl))


def soa(zone, ttl):
    return "%s %d SOA ns.dns.%s hostmaster.%s * 7200 1800 86400 %d" % (
        zone, min(ttl, 300), zone, zone, ttl)


def parse_rr(text):
    """'owner TTL TYPE RDATA' → (owner, ttl, type, rdata text)."""
    owner, ttl, rtype, rdata = text.split(None, 3)
    if rtype == "SOA":
        f = rdata.split()
        f[2] = "*"
        return (owner, int(ttl), rtype, " ".join(f))
    rd = dns.rdata.from_text(dns.rdataclass.IN, dns.rdatatype.from_text(rtype), rdata,
                             relativize=False)
    return (owner, int(ttl), rtype, rd.to_text(relativize=False))


def expected_section(cell, ttl):
    cell = cell.strip()
    if cell == "*":
        return None
    if cell == "-" or cell == "":
        return []
    out = []
    for part in cell.split(" ; "):
        part = part.strip()
        m = re.fullmatch(r"SOA(?:\((\S+)\))?", part)
        if m:
            part = soa(m.group(1) or "cluster.local.", ttl)
        out.append(parse_rr(expand(part, ttl)))
    return out


def got_section(rrsets):
    out = []
    for rrset in rrsets:
        if rrset.rdtype == dns.rdatatype.OPT:
            continue
        owner = rrset.name.to_text()
        rtype = dns.rdatatype.to_text(rrset.rdtype)
        for rd in rrset:
            text = rd.to_text(relativize=False)
            if rtype == "SOA":
                f = text.split()
                f[2] = "*"
                text = " ".join(f)
            out.append((owner, rrset.ttl, rtype, text))
    return out


def match_sets(want, got, cap):
    """Multiset match; with cap, TTLs are capped and may be up to 3 lower."""
    rest = list(got)
    for w in want:
        wttl = min(w[1], cap) if cap else w[1]
        for i, g in enumerate(rest):
            if (g[0], g[2], g[3]) != (w[0], w[2], w[3]):
                continue
            if g[1] == wttl or (cap and wttl - 3 <= g[1] <= wttl):
                del rest[i]
                break
        else:
            return False
    return not rest


def cname_order_ok(msg):
    """A CNAME precedes every record owned by its target."""
    order = [(rs.name, rs.rdtype, [rd for rd in rs]) for rs in msg.answer]
    for i, (_, rdtype, rds) in enumerate(order):
        if rdtype != dns.rdatatype.CNAME:
            continue
        for rd in rds:
            for j in range(i):
                if order[j][0] == rd.target:
                    return False
    return True


def fmt(sec):
    return "\n".join("        %s %d %s %s" % r for r in sec) or "        (empty)"


def ask(qname, qtype, port):
    q = dns.message.make_query(qname, qtype, use_edns=0, payload=1232)
    if qtype in ("AXFR", "IXFR"):
        return dns.query.tcp(q, "127.0.0.1", port=port, timeout=3)
    return dns.query.udp(q, "127.0.0.1", port=port, timeout=3)


def run_line(f, port, ttl, cap):
    qname = expand(f[2], ttl)
    qtype = f[3]
    try:
        r = ask(qname, qtype, port)
    except Exception as e:  # timeout, bad reply
        return ["no reply: %s" % e]
    errs = []
    rcode = dns.rcode.to_text(r.rcode())
    if rcode != f[4]:
        errs.append("rcode %s, want %s" % (rcode, f[4]))
    flags = f[5].split(",") if f[5] not in ("", "-") else []
    aa = bool(r.flags & dns.flags.AA)
    if "aa" in flags and not aa:
        errs.append("AA not set")
    if "noaa" in flags and aa:
        errs.append("AA set")
    tc = bool(r.flags & dns.flags.TC)
    if tc != ("tc" in flags):
        errs.append("TC %s" % ("set" if tc else "clear"))
    for name, cell, rrsets in (("answer", f[6], r.answer), ("authority", f[7], r.authority),
                               ("additional", f[8], r.additional)):
        want = expected_section(cell, ttl)
        if want is None:
            continue
        got = got_section(rrsets)
        if not match_sets(want, got, cap):
            errs.append("%s differs:\n      want\n%s\n      got\n%s" % (name, fmt(want), fmt(got)))
    if not cname_order_ok(r):
        errs.append("a CNAME follows the records of its target")
    return errs


def in_profile(profiles, profile):
    for p in profiles.split(","):
        if p == profile or (p == "kubeadm" and profile.startswith("kubeadm_")):
            return True
    return False


def main():
    args = sys.argv[1:]
    cap = 0
    coverage = False
    if "--cache-cap" in args:
        i = args.index("--cache-cap")
        cap = int(args[i + 1])
        del args[i:i + 2]
    if "--coverage" in args:
        args.remove("--coverage")
        coverage = True
    table, profile, port, ttl = args[0], args[1], int(args[2]), int(args[3])
    lines = []
    with open(table, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            f = line.split("\t")
            if len(f) < 9:
                print("bad table line: %r" % line)
                return 1
            lines.append(f)
    passed = failed = 0
    if coverage:
        rows = {int(re.match(r"\d+", f[0]).group()) for f in lines}
        missing = sorted(set(range(1, 80)) - rows)
        if missing:
            print("FAIL: table misses acceptance rows %s" % missing)
            failed += 1
        else:
            passed += 1
    for f in lines:
        if not in_profile(f[1], profile):
            continue
        errs = run_line(f, port, ttl, cap)
        if errs:
            failed += 1
            print("FAIL row %s [%s] %s %s (%s)" % (f[0], profile, expand(f[2], ttl), f[3],
                                                   f[9] if len(f) > 9 else ""))
            for e in errs:
                print("    " + e)
        else:
            passed += 1
    print("%s: %d passed, %d failed" % (profile, passed, failed))
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
