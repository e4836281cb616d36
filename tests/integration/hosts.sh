#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# hosts.sh — hosts file and inline entries: A/AAAA, PTR, NODATA, SERVFAIL
# for a missing name, fallthrough, ttl, no_reverse, wildcard owners
# (`*.NAME`: one label below, no PTR), reload on change; a
# FILE that is no regular file stops startup at its token.
. "$top_srcdir/tests/integration/lib.sh"
cat > "$TMP/hosts" <<'H'
# a comment
10.0.0.1   db.example.org db   # trailing comment
fd00::1    db.example.org
10.0.1.10  *.apps.example.org
10.0.1.11  a.apps.example.org
fd00::a    v6only.apps.example.org
::ffff:10.0.0.7 mapped.example.org
H
start_topodns "example.org:{\$PORT} in-addr.arpa:{\$PORT} ip6.arpa:{\$PORT} {
    hosts $TMP/hosts {
        10.0.0.2 api.example.org
        ttl 60
        reload 1s
        fallthrough
    }
    whoami
}
other.test:{\$PORT} {
    hosts $TMP/hosts other.test {
        10.9.9.9 x.other.test
        no_reverse
    }
}"
q db.example.org A
check "A from the file" answer_has '^db\.example\.org\.[[:space:]]+60[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.0\.1$'
check "authoritative" aa_set
q DB.Example.ORG AAAA
check "AAAA, case of the question kept" answer_has '^DB\.Example\.ORG\.[[:space:]]+60[[:space:]]+IN[[:space:]]+AAAA[[:space:]]+fd00::1$'
q api.example.org A
check "inline entry" answer_has '10\.0\.0\.2$'
q mapped.example.org A
check "IPv4-mapped address is an A" answer_has '10\.0\.0\.7$'
q api.example.org MX
check "existing name, other type: NODATA" rcode_is NOERROR
check "NODATA has no records" answer_count 0
q 1.0.0.10.in-addr.arpa PTR
check "PTR from the file" answer_has 'PTR[[:space:]]+db\.example\.org\.$'
q -x fd00::1
check "IPv6 PTR" answer_has 'PTR[[:space:]]+db\.example\.org\.$'
q nosuch.example.org A
check "fallthrough to whoami" additional_has '_udp\.nosuch\.example\.org\.'
q nosuch.other.test A
check "no fallthrough: SERVFAIL" rcode_is SERVFAIL
q 9.9.9.10.in-addr.arpa PTR
check "PTR of an address only other.test knows goes on (whoami)" additional_has '_udp\.9\.9\.9\.10\.in-addr\.arpa\.'
q 2.0.0.10.in-addr.arpa PTR
check "inline entries get PTRs too" answer_has 'PTR[[:space:]]+api\.example\.org\.$'
# regression: sscanf's %u wrapped 4294967297 to 1 (and took "+1", "01"),
# so these bogus names answered as 10.0.0.1; now they are no address and
# go on (whoami)
for bogus in 4294967297.0.0.10 +1.0.0.10 01.0.0.10 1.0.0.0.10 0.10; do
    q -q "$bogus.in-addr.arpa" -t PTR
    check "$bogus.in-addr.arpa is no address: not answered from the hosts file" \
        eval '! answer_has PTR && additional_has "_udp\\."'
done
# wildcards: one label below, never the name itself nor deeper, never a PTR
q foo.apps.example.org A
check "wildcard answers one label below" answer_has '^foo\.apps\.example\.org\.[[:space:]]+60[[:space:]]+IN[[:space:]]+A[[:space:]]+10\.0\.1\.10$'
check "wildcard answer is authoritative" aa_set
q a.apps.example.org A
check "an exact entry wins over the wildcard" eval 'answer_count 1 && answer_has "A[[:space:]]+10\.0\.1\.11$"'
q v6only.apps.example.org A
check "a family the exact name lacks comes from the wildcard" answer_has 'A[[:space:]]+10\.0\.1\.10$'
q foo.apps.example.org AAAA
check "wildcard name, other family: NODATA" eval 'rcode_is NOERROR && answer_count 0'
q apps.example.org A
check "the wildcard's parent is not matched (fallthrough to whoami)" additional_has '_udp\.apps\.example\.org\.'
q deep.foo.apps.example.org A
check "two labels below is not matched (fallthrough to whoami)" additional_has '_udp\.deep\.foo\.apps\.example\.org\.'
q 10.1.0.10.in-addr.arpa PTR
check "a wildcard owner is never a PTR target" eval '! answer_has "PTR" && additional_has "_udp\."'
q 11.1.0.10.in-addr.arpa PTR
check "the exact entry beside it still is" answer_has 'PTR[[:space:]]+a\.apps\.example\.org\.$'
echo "10.0.0.99 new.example.org" >> "$TMP/hosts"
ok=0
for _ in $(seq 1 40); do
    q new.example.org A
    if answer_has '10\.0\.0\.99$'; then ok=1; break; fi
    sleep 0.2
done
check "reload picks up a changed file" [ $ok -eq 1 ]

# not_regular NAME PATH: `hosts PATH` stops startup with file:line and the
# token at once (a FIFO blocked the open forever, a device such as
# /dev/zero was read without end)
not_regular() {
    printf 'example.org:%s {\n    whoami\n    hosts %s example.org\n}\n' "$(free_port)" "$2" > "$TMP/C.$1"
    OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.$1" 2>&1); rc=$?
    check "hosts $1: startup stops" eval '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
    check "hosts $1: C.$1:3 and the token named" \
        grep -qF "C.$1:3: plugin/hosts: $2 $3 near '$2'" <<<"$OUT"
}
mkfifo "$TMP/fifo"
not_regular fifo "$TMP/fifo" "is not a regular file"
not_regular dir "$TMP" "is a directory"
finish
