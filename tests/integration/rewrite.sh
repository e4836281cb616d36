#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rewrite.sh — the rewrite plugin in the real binary, against a zone file,
# a second topodns (so that the cname rule's lookup is asynchronous) and a
# scripted upstream that reports the EDNS options it received: name rules
# of every match type with the answer mapped back (auto, name, value),
# regex rules with Go's semantics (leftmost-first, lazy, named groups, \b),
# continue/stop, type, ttl and rcode rules (also on an error no plugin
# wrote), the cname rule followed synchronously and through forward, edns0
# local/variable/nsid/subnet rules and their revert, an invalid name after
# a rewrite, and setup errors in CoreDNS's words with file:line.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

cat > "$TMP/cluster.test" <<'EOF'
$ORIGIN cluster.test.
@       3600 IN SOA ns.cluster.test. admin.cluster.test. 1 7200 3600 1209600 300
@       3600 IN NS  ns.cluster.test.
ns      3600 IN A   10.0.0.1
web     3600 IN A   10.0.0.10
alias   3600 IN CNAME web.cluster.test.
mail    3600 IN MX  10 web.cluster.test.
_http._tcp.web 3600 IN SRV 0 0 80 web.cluster.test.
short     20 IN A   10.0.0.20
ext     3600 IN CNAME old.target.test.
far     3600 IN CNAME old.remote.test.
a-bcd-x 3600 IN A   10.0.0.31
ab-cd-x 3600 IN A   10.0.0.32
x-xx    3600 IN A   10.0.0.33
x-z     3600 IN A   10.0.0.34
xy-z    3600 IN A   10.0.0.35
EOF
cat > "$TMP/other.test" <<'EOF'
$ORIGIN other.test.
@       3600 IN SOA ns.other.test. admin.other.test. 1 7200 3600 1209600 300
new     3600 IN A   10.9.9.9
EOF
cat > "$TMP/remote.test" <<'EOF'
$ORIGIN remote.test.
@       3600 IN SOA ns.remote.test. admin.remote.test. 1 7200 3600 1209600 300
new     3600 IN A   10.8.8.8
EOF

# the remote zone's server and the scripted upstream
start_topodns ".:{\$PORT} {
    file $TMP/remote.test remote.test
}" || exit 1
REMOTE=$PORT
UPPORT=$(free_port)
/usr/bin/python3 "$top_srcdir/tests/integration/forward_upstream.py" "$UPPORT" up > "$TMP/up.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do grep -q ready "$TMP/up.log" && break; sleep 0.1; done

owners() { section ANSWER | awk '{print $1}' | sort -u | tr '\n' ' '; }
question_is() { grep -A1 '^;; QUESTION SECTION:' <<<"$OUT" | tail -1 | grep -qE "$1"; }

start_topodns ".:{\$PORT} {
    errors
    rewrite name exact a.example.org. web.cluster.test.
    rewrite name suffix .example.net. .cluster.test. answer auto
    rewrite name regex (.*)-x\.example\.com {1}.cluster.test answer name (.*)\.cluster\.test {1}-x.example.com answer value (.*)\.cluster\.test {1}-x.example.com
    rewrite name prefix old web
    rewrite name substring subst.cluster ns.cluster
    rewrite continue name exact c1.example.org. c2.example.org.
    rewrite name exact c2.example.org. web.cluster.test.
    rewrite stop {
        name regex ^(.*)\.blk\.test\.\$ {1}.cluster.test
        answer auto
    }
    rewrite type TXT A
    rewrite continue ttl web.cluster.test. 60
    rewrite continue ttl suffix short.cluster.test. 30-
    rewrite continue rcode nx.cluster.test. NXDOMAIN REFUSED
    rewrite rcode suffix .nowhere. REFUSED NXDOMAIN
    rewrite name regex ^(.*)\.long\.test\.\$ {1}{1}{1}{1}{1}{1}{1}{1}.cluster.test.
    rewrite name regex (a|ab)(c|bcd)(d*)\.go\.test\.\$ {1}-{2}-{3}x.cluster.test.
    rewrite name regex ^(x+?)(x*)\.lazy\.test\.\$ {1}-{2}.cluster.test.
    rewrite name regex ^alt\.(x|xy) {1}-z.cluster.test.
    rewrite name regex ^(?P<svc>[a-z]+)\b.*\.named\.test\.\$ {1}.cluster.test.
    file $TMP/cluster.test cluster.test
    file $TMP/other.test other.test
}" || exit 1

q a.example.org A
check "exact: the client's question comes back" question_is '^;a\.example\.org\.[[:space:]]+IN[[:space:]]+A'
check "exact: owner mapped back (auto)" answer_has '^a\.example\.org\.[[:space:]]+3600[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.10'
check "exact: NOERROR, aa kept" bash -c "grep -q 'status: NOERROR' <<<\"\$0\" && grep -q 'flags: qr aa' <<<\"\$0\"" "$OUT"

q alias.example.net A
check "suffix auto: the CNAME's owner and target swapped back" answer_has '^alias\.example\.net\..*CNAME[[:space:]]+web\.example\.net\.'
check "suffix auto: the target's address under the client's suffix" answer_has '^web\.example\.net\..*A[[:space:]]+10\.0\.0\.10'
q _http._tcp.web.example.net SRV
check "suffix auto: an SRV target mapped back" answer_has 'SRV[[:space:]]+0 0 80 web\.example\.net\.'
q mail.example.net MX
check "suffix auto: an MX exchange mapped back" answer_has 'MX[[:space:]]+10 web\.example\.net\.'
q Web.Example.Net A
check "names match lower-cased" answer_has '^web\.example\.net\..*10\.0\.0\.10'

q alias-x.example.com A
check "regex with answer name: owners" [ "$(owners)" = "alias-x.example.com. web-x.example.com. " ]
check "regex with answer value: the CNAME target" answer_has 'CNAME[[:space:]]+web-x\.example\.com\.'

# Go's regexp semantics (RE2), which POSIX EREs do not have
q abcd.go.test A
check "regex, Go's documented example: (a|ab)(c|bcd)(d*) on abcd gives a, bcd, \"\"" answer_has 'A[[:space:]]+10\.0\.0\.31$'
q alt.xy.test A
check "regex, leftmost-first: ^alt\\.(x|xy) on alt.xy.test takes x (leftmost-longest, glibc's too: xy)" answer_has 'A[[:space:]]+10\.0\.0\.34$'
q xxx.lazy.test A
check "regex, lazy repeat: ^(x+?)(x*) on xxx gives x, xx" answer_has 'A[[:space:]]+10\.0\.0\.33$'
q web-123.named.test A
check "regex, named group and \\b" answer_has 'A[[:space:]]+10\.0\.0\.10$'

q old.cluster.test A
check "prefix: old. became web. for the next plugin" answer_has '10\.0\.0\.10'
check "prefix without answer rules: the owner stays the rewritten one" answer_has '^web\.cluster\.test\.'
check "prefix: the question is the client's (a stop rule matched)" question_is '^;old\.cluster\.test\.'
q subst.cluster.test A
check "substring" answer_has 'A[[:space:]]+10\.0\.0\.1$'

q c1.example.org A
check "continue then stop: both mapped back, last rule first" answer_has '^c1\.example\.org\..*10\.0\.0\.10'
q web.blk.test A
check "a rule from a block's words" answer_has '^web\.blk\.test\..*10\.0\.0\.10'

q web.cluster.test TXT
check "type: TXT asked as A" answer_has 'IN[[:space:]]+A[[:space:]]+10\.0\.0\.10'
check "type: the question keeps TXT" question_is 'IN[[:space:]]+TXT'
q ns.cluster.test A
check "ttl: not applied to other names" answer_has '^ns\.cluster\.test\.[[:space:]]+3600'
q short.cluster.test A
check "ttl range 30-: 20 raised to 30" answer_has '^short\.cluster\.test\.[[:space:]]+30[[:space:]]'
q nx.cluster.test A
check "rcode: NXDOMAIN becomes REFUSED" rcode_is REFUSED
check "rcode: the SOA still in the authority section" authority_has 'SOA'
q some.nowhere A
check "rcode on the bare REFUSED file returned without writing: NXDOMAIN" rcode_is NXDOMAIN
check "that reply carries the client's question" question_is '^;some\.nowhere\.'

q abcdefghijklmnopqrst.long.test A
check "invalid name after rewrite: SERVFAIL" rcode_is SERVFAIL
sleep 0.2
check "invalid name after rewrite: logged" grep -q 'invalid name after rewrite: abcdefghijklmnopqrst' "$LOG"

# cname: followed inside the server (file) and through forward (async)
start_topodns ".:{\$PORT} {
    rewrite cname exact old.target.test. new.other.test.
    file $TMP/cluster.test cluster.test
    file $TMP/other.test other.test
}
remote.test:{\$PORT} {
    forward . 127.0.0.1:$REMOTE
}
loop.test:{\$PORT} {
    rewrite cname suffix .loop.test. .loop.test.
    file $TMP/cluster.test loop.test
}" || exit 1
q ext.cluster.test A
check "cname: the CNAME's target replaced" answer_has '^ext\.cluster\.test\..*CNAME[[:space:]]+new\.other\.test\.'
check "cname: the new target's address follows" answer_has '^new\.other\.test\..*A[[:space:]]+10\.9\.9\.9'
check "cname: nothing of the old target" bash -c "! grep -q old.target <<<\"\$0\"" "$(section ANSWER)"
stop_topodns
start_topodns ".:{\$PORT} {
    rewrite cname prefix old. new.
    file $TMP/cluster.test cluster.test
}
remote.test:{\$PORT} {
    forward . 127.0.0.1:$REMOTE
}" || exit 1
q far.cluster.test A
check "cname through forward (the reply held until the lookup came back)" answer_has '^far\.cluster\.test\..*CNAME[[:space:]]+new\.remote\.test\.'
check "cname through forward: the address" answer_has '^new\.remote\.test\..*A[[:space:]]+10\.8\.8\.8'
q +tcp far.cluster.test A
check "cname through forward over TCP" answer_has 'A[[:space:]]+10\.8\.8\.8'

# edns0 rules, seen by the upstream
start_topodns ".:{\$PORT} {
    rewrite continue edns0 local set 0xffee {client_ip}
    rewrite continue edns0 local append 65001 0x0102ff
    rewrite continue edns0 nsid set
    rewrite continue edns0 subnet set 24 56
    forward . 127.0.0.1:$UPPORT
}" || exit 1
q -b 127.0.0.1 +noedns optdata.test TXT
check "edns0 local with {client_ip}" answer_has '"65518=7f000001"'
check "edns0 local with hex data" answer_has '"65001=0102ff"'
check "edns0 nsid: an empty NSID option" answer_has '"3="'
check "edns0 subnet: the client's /24" answer_has '"8=000118007f0000"'
q optdata.test TXT +subnet=10.1.2.3/32
check "edns0 subnet set replaces the client's ECS" answer_has '"8=000118007f0000"'

start_topodns ".:{\$PORT} {
    rewrite continue edns0 local set 0xffee hello
    rewrite continue edns0 local set 0xffef bye revert
    file $TMP/cluster.test cluster.test
}" || exit 1
q web.cluster.test A
check "edns0 local: the option echoed in the reply (as CoreDNS marks it supported)" grep -qE 'OPT=65518: 68 65 6c 6c 6f|65518.*hello' <<<"$OUT"
check "edns0 local revert: taken out of the reply" bash -c "! grep -q 65519 <<<\"\$0\"" "$OUT"
check "the answer itself" answer_has '10\.0\.0\.10'

# setup errors
bad() {  # bad 'rewrite line' 'message'
    printf '.:%s {\n    whoami\n    %s\n}\n' "$PORT" "$1" > "$TMP/bad"
    OUT=$(timeout 5 "$TOPODNS" -conf "$TMP/bad" 2>&1)
    check "'$1' rejected" grep -qF "bad:3: plugin/rewrite: $2" <<<"$OUT"
}
bad 'rewrite answer name a b' 'response rewrites must begin with a name rule'
bad 'rewrite name regex (.*)\.foo {1}{2}.bar' 'the rewrite regex pattern ({1}{2}.bar) uses more subexpressions than its corresponding matching regex pattern ((.*)\.foo)'
bad 'rewrite name regex (.*\.foo {1}.bar' 'invalid regex matching pattern: (.*\.foo'
bad 'rewrite name regex a{1001}\.foo {1}.bar' 'invalid regex matching pattern: a{1001}\.foo: error parsing regexp: invalid repeat count: `{1001}`'
bad 'rewrite name regex (\pL{30}){30} x' 'invalid regex matching pattern: (\pL{30}){30}: error parsing regexp: expression too large'
bad 'rewrite ttl regex a\C 30' 'invalid regex pattern in a ttl rule: a\C: error parsing regexp: invalid escape sequence: `\C`'
bad 'rewrite name fuzzy a b' 'name rule supports only exact, prefix, suffix, substring, and regex name matching, received: fuzzy'
bad 'rewrite name suffix a b answer auto answer name x y' 'auto name answer rule cannot be combined with explicit name anwer rules'
bad 'rewrite name suffix a b wrong' 'invalid arguments for suffix rule'
bad 'rewrite type A' 'type rules must have exactly two arguments'
bad 'rewrite type A BOGUS' 'invalid type "BOGUS"'
bad 'rewrite ttl a.b x' "invalid TTL 'x' for a ttl rule"
bad 'rewrite ttl a.b 40-30' "invalid TTL '40-30' for a ttl rule"
bad 'rewrite rcode a.b NXDOMAIN BOGUS' "invalid replacement RCODE 'BOGUS' for a rcode rule"
bad 'rewrite edns0 local set 0xzz x' 'strconv.ParseUint: parsing "0xzz": invalid syntax'
bad 'rewrite edns0 local set 1 0xabc' 'encoding/hex: odd length hex string'
bad 'rewrite edns0 local set 1 {nope}' 'unsupported variable name "{nope}"'
bad 'rewrite edns0 subnet set 33 56' 'invalid IPv4 bit mask length 33'
bad 'rewrite edns0 foo set' 'invalid rule type "foo"'
bad 'rewrite bogus a b' 'invalid rule type "bogus"'
bad 'rewrite stop' 'stop rule must begin with a rule type'
finish
