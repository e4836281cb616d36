#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# tests/fuzz/seeds.py — writes the hand-made seed inputs of the fuzz
# harnesses into tests/fuzz/corpus_NAME/ (run from tests/fuzz/; needs
# python3-dnspython and python3-yaml). The corpora are committed; run it
# again only to change them. Input formats: each harness's top comment.
import glob, json, os, struct
import dns.edns, dns.message, dns.rrset
import yaml


def w(d, name, data):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb' if isinstance(data, bytes) else 'w') as f:
        f.write(data)


# kube: first octet = instance (bit 7) | client address (low 4 bits)
def q(name, t, ecs=None, edns=True, peer=0):
    m = dns.message.make_query(name, t, use_edns=0 if (edns or ecs) else False)
    m.id = 0x1234
    if ecs:
        m.use_edns(0, 0, 1232, options=[dns.edns.ECSOption(ecs[0], ecs[1])])
    return bytes([peer]) + m.to_wire()


for n, name, t, ecs, edns, peer in [
        ('svc-a', 'svc1.testns.svc.cluster.local.', 'A', None, True, 0),
        ('svc-srv', '_http._tcp.svc1.testns.svc.cluster.local.', 'SRV', None, True, 2),
        ('headless', 'hdls1.testns.svc.cluster.local.', 'A', None, False, 4),
        ('headless-aaaa', 'hdls1.testns.svc.cluster.local.', 'AAAA', None, True, 12),
        ('ptr', '1.0.0.10.in-addr.arpa.', 'PTR', None, True, 8),
        ('pod', '10-240-0-1.testns.pod.cluster.local.', 'A', None, True, 9),
        ('soa', 'cluster.local.', 'SOA', None, True, 0),
        ('ns', 'cluster.local.', 'NS', None, True, 0),
        ('nx', 'nope.testns.svc.cluster.local.', 'A', None, True, 1),
        ('ext', 'external.testns.svc.cluster.local.', 'CNAME', None, True, 3),
        ('zonal', 'us-west-2a.pin._zone.hdls.testns.svc.cluster.local.', 'A', None, True, 0),
        ('topo-ecs', 'close.prod.svc.cluster.local.', 'A', ('127.0.2.1', 32), True, 6),
        ('topo-ecs6', 'close.prod.svc.cluster.local.', 'AAAA', ('fd00::1', 64), True, 12),
        ('topo-itp', 'itp.prod.svc.cluster.local.', 'A', None, True, 2),
        ('topo-srv', '_http._tcp.hinted.prod.svc.cluster.local.', 'SRV', ('127.0.3.1', 24), True,
         0x80 | 7),
        ('second', 'svc1.testns.svc.cluster.local.', 'TXT', None, True, 0x80 | 5),
        ('second-fall', 'www.example.org.', 'A', None, True, 0x80 | 1),
        ('dnsver', 'dns-version.cluster.local.', 'TXT', None, True, 0),
        ('any', 'svc1.testns.svc.cluster.local.', 'ANY', None, True, 0)]:
    w('corpus_kube', n, q(name, t, ecs, edns, peer))

# forward: first octet = query (low 3 bits) | over TCP (bit 3) | no EDNS (bit 4)
F = 'corpus_forward'
qs = [('example.org.', 'A'), ('example.org.', 'AAAA'), ('www.example.org.', 'CNAME'),
      ('example.org.', 'MX'), ('org.', 'NS'), ('1.0.0.127.in-addr.arpa.', 'PTR'),
      ('example.org.', 'TXT'), ('_sip._udp.example.org.', 'SRV')]
data = {'A': ['192.0.2.1', '192.0.2.2'], 'AAAA': ['2001:db8::1'], 'CNAME': ['example.org.'],
        'MX': ['10 mail.example.org.'], 'NS': ['a.ns.org.'], 'PTR': ['localhost.'],
        'TXT': ['"hello" "world"'], 'SRV': ['0 5 5060 sip.example.org.']}
for i, (name, t) in enumerate(qs):
    m = dns.message.make_query(name, t, use_edns=0, id=0x4242)
    r = dns.message.make_response(m)
    r.answer.append(dns.rrset.from_text(name, 300, 'IN', t, *data[t]))
    if t == 'CNAME':
        r.answer.append(dns.rrset.from_text('example.org.', 300, 'IN', 'A', '192.0.2.1'))
    w(F, 'ok-%d-%s' % (i, t), bytes([i]) + r.to_wire())
m = dns.message.make_query('example.org.', 'A', use_edns=0, id=0x4242)
r = dns.message.make_response(m)
r.set_rcode(3)
r.authority.append(dns.rrset.from_text('example.org.', 300, 'IN', 'SOA', 'ns. host. 1 2 3 4 5'))
w(F, 'nxdomain', bytes([0]) + r.to_wire())
w(F, 'other-question', bytes([1]) + r.to_wire())
w(F, 'truncated-udp', bytes([0]) + b'\x00\x00\x87\x80\x00\x01' + b'\xff' * 600)
w(F, 'no-qr', bytes([0x10]) + m.to_wire())

# tcp: seed octet for the cuts, then the stream
m1 = dns.message.make_query('example.org.', 'A', id=1).to_wire()
m2 = dns.message.make_query('www.example.org.', 'AAAA', use_edns=False, id=2).to_wire()
fr = lambda b: struct.pack('>H', len(b)) + b
w('corpus_tcp', 'two', bytes([0]) + fr(m1) + fr(m2))
w('corpus_tcp', 'pipelined-split', bytes([7]) + fr(m1) + fr(m2) + fr(m1))
w('corpus_tcp', 'short-length', bytes([3]) + fr(m1) + b'\x00\x05hello')
w('corpus_tcp', 'incomplete', bytes([1]) + fr(m1)[:20])

# watch: NUL-separated transport script
W = 'corpus_watch'
lst = json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "100"}, "items": [
    {"metadata": {"name": "a", "namespace": "default", "resourceVersion": "90"},
     "status": {"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}], "hostIP": "10.1.0.1",
                "phase": "Running"}, "spec": {"nodeName": "n1"}}]})


def ev(t, name, rv, extra=None):
    o = {"metadata": {"name": name, "namespace": "default", "resourceVersion": rv}}
    o.update(extra or {})
    return json.dumps({"type": t, "object": o}) + "\n"


pod = {"status": {"podIP": "10.0.0.2", "hostIP": "10.1.0.1"}, "spec": {"nodeName": "n1"}}
managed = {"metadata": {"name": "b", "namespace": "default", "resourceVersion": "102",
                        "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:x": {}}}]}}
S = lambda *segs: b'\0'.join(s.encode() for s in segs)
mod = ev('MODIFIED', 'b', '102', pod)
w(W, 'list-then-events', S(lst, '\x01D', ev('ADDED', 'b', '101', pod) + mod[:30],
                           mod[30:] + ev('DELETED', 'a', '103'), ev('BOOKMARK', 'x', '104'),
                           '\x01D'))
w(W, 'expired', S(lst, '\x01D', json.dumps({"type": "ERROR", "object": {
    "kind": "Status", "code": 410, "reason": "Expired"}}) + "\n", '\x01D', lst, '\x01D'))
w(W, 'too-large', S(lst, '\x01D', '\x01H504', json.dumps({"kind": "Status", "code": 504, "details": {
    "causes": [{"reason": "ResourceVersionTooLarge"}]}}), '\x01D', lst, '\x01D'))
w(W, 'retry-after', S('\x01H429 3', '{}', '\x01D', '\x01T', lst, '\x01D', 'garbage\n', '\x01T',
                      ev('ADDED', 'c', '105', pod), '\x01F'))
w(W, 'paged', S(json.dumps({"kind": "PodList", "metadata": {"resourceVersion": "100", "continue": "abc"},
                            "items": []}), '\x01D', lst, '\x01D',
                '\r\n \n' + json.dumps({"type": "ADDED", "object": managed}) + "\r\n", '\x01D'))
w(W, 'rolled-back', S(lst, '\x01D', ev('ADDED', 'd', '50'), '\x01D', '\x01H401', '\x01F', '\x01T'))

# kubeconfig
KC = 'corpus_kubeconfig'
w(KC, 'token', '''apiVersion: v1
kind: Config
current-context: ctx
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority: ca.crt
    insecure-skip-tls-verify: true
users:
- name: u1
  user:
    token: abc
    tokenFile: token
contexts:
- name: ctx
  context: {cluster: c1, user: u1}
''')
w(KC, 'data', '''#context other
clusters:
- name: c2
  cluster:
    server: "http://[::1]:8080/prefix"
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
users:
- name: u2
  user:
    client-certificate-data: YWJj
    client-key-data: "ZGVm"
    client-certificate: /abs/cert.pem
    client-key: key.pem
contexts:
- name: other
  context:
    cluster: c2
    user: u2
''')
w(KC, 'bad-b64', '''current-context: x
clusters: [{name: c, cluster: {server: "https://k:1", certificate-authority-data: "!!"}}]
contexts: [{name: x, context: {cluster: c}}]
''')
w(KC, 'deep', '[' * 80 + ']' * 80 + '\n')

# zone files for example.org., each behind 8 octets choosing 4 questions:
# (name, type) pairs, names 0-7 fixed (example.org., www, a.b.c, x.wild,
# sub, deep.sub, nonexistent, EXAMPLE.org.), then the zone's owners;
# types A AAAA CNAME MX NS SOA TXT SRV ANY
ZONE_PICKS = [bytes([0, 8, 1, 0, 2, 1, 3, 6]), bytes([4, 0, 5, 4, 6, 0, 7, 5]),
              bytes([8, 0, 9, 1, 10, 2, 11, 3]), bytes([12, 4, 13, 5, 14, 6, 15, 7]),
              bytes([16, 8, 17, 0, 18, 2, 19, 7])]


def zone(name, text):
    for i, p in enumerate(ZONE_PICKS):
        w('corpus_zone', '%s-%d' % (name, i), p + text.encode())


zone('basic', '''$ORIGIN example.org.
$TTL 3600
@   IN SOA ns1.example.org. hostmaster.example.org. ( 2024010101 7200 3600 1209600 300 )
    IN NS ns1
    IN NS ns2.example.net.
    IN MX 10 mail
ns1 IN A 192.0.2.53
    IN AAAA 2001:db8::53
www IN CNAME @
@   IN A 192.0.2.1
mail IN A 192.0.2.25
*.wild IN TXT "wildcard" "two"
a.b.c IN A 192.0.2.3
sub IN NS ns.sub
ns.sub IN A 192.0.2.99
_sip._udp IN SRV 0 5 5060 sip
sip IN CNAME mail
cname-loop IN CNAME cname-loop2
cname-loop2 IN CNAME cname-loop
ext IN CNAME www.example.net.
caa IN CAA 0 issue "letsencrypt.org"
h IN HTTPS 1 . alpn="h2,h3" port=443
''')
zone('escapes', '''example.org. 60 IN SOA a. b. 1 2 3 4 5
example.org. 60 IN NS a.
e\\.scaped.example.org. 60 IN TXT "quote\\"d" \\065BC
x 60 IN TYPE65280 \\# 3 abcdef
''')

# hosts files, each behind 8 octets choosing 4 questions: (name, type)
# pairs, names 0-2 fixed (localhost., 1.0.0.127.in-addr.arpa.,
# nothing.example.net.), then the file's first 8 names, then the reverse
# names of its first 8 addresses; types A AAAA MX PTR
def hosts(name, picks, text):
    for i, p in enumerate(picks):
        w('corpus_hosts', '%s-%d' % (name, i), bytes(p) + text.encode())


hosts('basic', [[3, 0, 6, 1, 11, 3, 2, 0], [7, 0, 10, 2, 13, 3, 1, 3],
                [10, 0, 14, 3, 15, 3, 0, 1], [9, 1, 16, 3, 4, 0, 12, 3]], '''# comment
127.0.0.1 localhost localhost.localdomain
::1 localhost ip6-localhost
192.0.2.1 www.example.org www
fe80::1%eth0 link.example.org
::ffff:192.0.2.7 mapped.example.org
10.0.0.1\tTab.Example.ORG. dup dup
10.0.0.1 dup
bad-address name
''')
# names 3-9: Tab.Example.ORG. dup dup dup DUP x.example.net. dup; reverse
# names 10-13: 10.0.0.1, 10.0.0.1, 10.0.0.2, 2001:db8::1
hosts('dup', [[3, 0, 4, 0, 5, 1, 10, 3], [7, 0, 8, 0, 12, 3, 13, 3]], '''10.0.0.1\tTab.Example.ORG. dup dup
10.0.0.1 dup # trailing comment
10.0.0.2 DUP x.example.net.
2001:db8::1 dup
''')
# one name with 40 IPv4 and 40 IPv6 addresses: replies above 512 octets
# (truncated); names 3-10 are many.example.org, reverse name 11 the first
# address
hosts('many', [[3, 0, 3, 1, 3, 2, 11, 3]],
      ''.join('10.0.%d.%d many.example.org\n' % (i // 8, i % 8 + 1) for i in range(40)) +
      ''.join('2001:db8::%x many.example.org\n' % (i + 1) for i in range(40)))
hosts('empty', [[0, 0, 1, 3, 2, 0, 0, 2]], '')

# HTTP requests
P = 'corpus_http'
w(P, 'health', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
w(P, 'ready-pipelined', 'GET /ready HTTP/1.1\r\nHost: x\r\n\r\n'
  'GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: text/plain\r\n\r\n')
w(P, 'post-body', 'POST /metrics?x=1&y=%41 HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello')
w(P, 'chunked', 'PUT /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n')
w(P, 'http10', 'GET /nothing HTTP/1.0\r\n\r\n')
w(P, 'explain', 'GET /explain?name=close.prod.svc.cluster.local&type=A&client=127.0.2.1 HTTP/1.1\r\n'
  'Host: x\r\n\r\n')
w(P, 'explain-srv', 'GET /explain?name=_http._tcp.hinted.prod.svc.cluster.local.&type=SRV'
  '&client=fd00%3A%3A1 HTTP/1.0\r\n\r\n')
w(P, 'explain-bad', 'GET /explain?name=x&type=MX&client=nope&&=%zz HTTP/1.1\r\n\r\n')

# store: some objects of the topology fixture, one per file
docs = [d for d in yaml.safe_load_all(open('../data/topology/cluster.yaml')) if d]
for i, d in enumerate(docs):
    if i % 4 == 0:
        w('corpus_store', '%02d-%s' % (i, d['kind'].lower()), json.dumps(d, separators=(',', ':')))
# and several in one input: the namespaces, nodes and pods with one
# Service and its EndpointSlice (what the topology decision needs), and all
j = [json.dumps(d, separators=(',', ':')) for d in docs]
base = [x for x, d in zip(j, docs) if d['kind'] in ('Namespace', 'Node', 'Pod')]
for i, d in enumerate(docs):
    if d['kind'] == 'Service' and i + 1 < len(docs) and docs[i + 1]['kind'] == 'EndpointSlice':
        w('corpus_store', 'with-%s' % d['metadata']['name'], '\n'.join(base + [j[i], j[i + 1]]) + '\n')
w('corpus_store', 'all', '\n'.join(j) + '\n')

# Corefiles of the tree
for f in sorted(glob.glob('../../conf/Corefile*')):
    w('corpus_corefile', os.path.basename(f), open(f).read())
# and one that imports the files of fuzz_corefile's root, corefile_root/
w('corpus_corefile', 'imports', 'import b.conf\n.:53 {\n    import a.conf\n    import snip x\n}\n'
  'import sub/c.conf\nexample.org {\n    import e*.conf\n}\n')
