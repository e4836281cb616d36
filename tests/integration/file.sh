#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# file.sh — the file plugin in the real binary, queried with dig: answers
# from zones/example.org.zone (AA, NXDOMAIN/NODATA with the SOA, empty
# non-terminals, CNAME chains, wildcards, referrals, MX/SRV additional,
# truncation, case), a reverse zone, reload on a serial change, fallthrough,
# setup errors naming the zone file and line.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

ZONES=$top_srcdir/zones
cp "$ZONES/example.org.zone" "$TMP/db.example.org"

start_topodns "example.org:{\$PORT} 10.in-addr.arpa:{\$PORT} {
    file $TMP/db.example.org example.org {
        reload 1s
    }
    file $ZONES/10.in-addr.arpa.zone 10.0.0.0/8
}" || exit 1

# --- positive answers -------------------------------------------------------
q www.example.org A
check "www A: NOERROR" rcode_is NOERROR
check "www A: AA" aa_set
check "www A: address" answer_has '^www\.example\.org\.[[:space:]]+300[[:space:]]+IN[[:space:]]+A[[:space:]]+192\.0\.2\.10$'
check "www A: apex NS in authority" authority_has 'IN[[:space:]]+NS[[:space:]]+ns1\.example\.org\.'
check "www A: one answer" answer_count 1

q WwW.ExAmPlE.oRg A
check "question case preserved" grep -q '^;WwW\.ExAmPlE\.oRg\.[[:space:]]' <<<"$OUT"
check "answer owner from the zone" answer_has '^www\.example\.org\.'

q example.org SOA
check "apex SOA" answer_has 'SOA[[:space:]]+ns1\.example\.org\. hostmaster\.example\.org\. 2024010101 7200 3600 1209600 300'
check "apex SOA: NS in authority" authority_count 2

q example.org NS
check "apex NS: AA" aa_set
check "apex NS: both servers" answer_count 2
check "apex NS: glue A" additional_has '^ns1\.example\.org\..*A[[:space:]]+192\.0\.2\.53$'
check "apex NS: glue AAAA" additional_has '^ns1\.example\.org\..*AAAA[[:space:]]+2001:db8::53$'
check "apex NS: glue ns2" additional_has '^ns2\.example\.org\..*192\.0\.2\.54$'

q example.org MX
check "MX: exchange" answer_has 'MX[[:space:]]+10 mail\.example\.org\.'
check "MX: target address in additional" additional_has '^mail\.example\.org\..*192\.0\.2\.25$'

q www.example.org TXT
check "TXT: two strings" answer_has 'TXT[[:space:]]+"hello" "world"'

q _http._tcp.example.org SRV
check "SRV: two records" answer_count 2
check "SRV: target addresses" additional_has '^www\.example\.org\..*AAAA'
check "SRV: second target" additional_has '^mail\.example\.org\.'

# --- negative answers -------------------------------------------------------
q nothere.example.org A
check "NXDOMAIN" rcode_is NXDOMAIN
check "NXDOMAIN: AA" aa_set
check "NXDOMAIN: SOA in authority, TTL as written" authority_has '^example\.org\.[[:space:]]+3600[[:space:]]+IN[[:space:]]+SOA'
check "NXDOMAIN: empty answer" answer_count 0

q www.example.org MX
check "NODATA: NOERROR" rcode_is NOERROR
check "NODATA: empty answer" answer_count 0
check "NODATA: SOA" authority_has 'SOA'

q b.c.example.org A
check "empty non-terminal: NOERROR" rcode_is NOERROR
check "empty non-terminal: SOA" authority_has 'SOA'
q x.b.c.example.org A
check "below an empty non-terminal: NXDOMAIN" rcode_is NXDOMAIN

# --- CNAMEs -----------------------------------------------------------------
q alias.example.org A
check "CNAME chain: NOERROR" rcode_is NOERROR
check "CNAME chain: first link" answer_has '^alias\.example\.org\..*CNAME[[:space:]]+alias2\.example\.org\.$'
check "CNAME chain: second link" answer_has '^alias2\.example\.org\..*CNAME[[:space:]]+www\.example\.org\.$'
check "CNAME chain: target A" answer_has '^www\.example\.org\..*A[[:space:]]+192\.0\.2\.10$'
check "CNAME chain: three records" answer_count 3

q alias.example.org CNAME
check "CNAME query: not chased" answer_count 1

q external.example.org A
check "out-of-zone CNAME: NOERROR" rcode_is NOERROR
check "out-of-zone CNAME: the CNAME only" answer_count 1
check "out-of-zone CNAME: target" answer_has 'CNAME[[:space:]]+www\.example\.net\.'

q dangling.example.org A
check "CNAME to a missing in-zone name: NXDOMAIN" rcode_is NXDOMAIN
check "CNAME to a missing in-zone name: CNAME kept" answer_has 'CNAME'

q loop1.example.org A
check "CNAME loop: answered" rcode_is NOERROR
check "CNAME loop: each link once" answer_count 2

# --- wildcards ----------------------------------------------------------------
q Anything.wild.example.org A
check "wildcard: synthesized" answer_has '^anything\.wild\.example\.org\..*A[[:space:]]+192\.0\.2\.100$'
check "wildcard: AA" aa_set
q a.b.wild.example.org TXT
check "wildcard: several labels" answer_has '"wildcard"'
q anything.wild.example.org AAAA
check "wildcard: NODATA" authority_has 'SOA'
check "wildcard NODATA: NOERROR" rcode_is NOERROR
q exists.wild.example.org TXT
check "existing name: no wildcard" answer_count 0

# --- delegation -----------------------------------------------------------------
q host.sub.example.org A
check "referral: NOERROR" rcode_is NOERROR
check "referral: no AA" bash -c '! grep -o "flags: [a-z ]*;" <<<"$0" | grep -qw aa' "$OUT"
check "referral: empty answer" answer_count 0
check "referral: NS in authority" authority_has '^sub\.example\.org\..*NS[[:space:]]+ns\.sub\.example\.org\.$'
check "referral: glue" additional_has '^ns\.sub\.example\.org\..*A[[:space:]]+192\.0\.2\.200$'

# --- truncation -----------------------------------------------------------------
q many.example.org A +ignore +noedns
check "40 A over UDP/512: TC" tc_set
q many.example.org A +tcp
check "40 A over TCP: all" answer_count 40

# --- other zones, transfers -------------------------------------------------------
q -x 10.0.0.10
check "reverse zone: PTR" answer_has 'PTR[[:space:]]+www\.example\.org\.'
q -x 10.0.0.99
check "reverse zone: NXDOMAIN" rcode_is NXDOMAIN
q example.org AXFR
check "AXFR refused" grep -q 'Transfer failed' <<<"$OUT"

# --- reload ---------------------------------------------------------------------------
sed -e 's/2024010101 ; serial/2024010102 ; serial/' \
    -e 's/^www     300 IN A    192.0.2.10$/www     300 IN A    192.0.2.11/' \
    "$ZONES/example.org.zone" > "$TMP/db.new"
mv "$TMP/db.new" "$TMP/db.example.org"
ok=0
for i in $(seq 1 40); do
    q www.example.org A
    if answer_has '192\.0\.2\.11$'; then ok=1; break; fi
    sleep 0.1
done
check "reload: new data after the serial change" test "$ok" -eq 1
check "reload: logged like CoreDNS" grep -q "\[INFO\] plugin/file: Successfully reloaded zone \"example.org.\" in \"$TMP/db.example.org\" with 2024010102 SOA serial" "$LOG"

# same serial: not reloaded
sed -e 's/2024010101 ; serial/2024010102 ; serial/' \
    -e 's/^www     300 IN A    192.0.2.10$/www     300 IN A    192.0.2.12/' \
    "$ZONES/example.org.zone" > "$TMP/db.new"
mv "$TMP/db.new" "$TMP/db.example.org"
sleep 2.5
q www.example.org A
check "reload: same serial keeps the old zone" answer_has '192\.0\.2\.11$'

# a broken file keeps the old zone
printf 'garbage here\n' > "$TMP/db.example.org"
sleep 2.5
q www.example.org A
check "reload: broken file keeps serving" answer_has '192\.0\.2\.11$'
check "reload: parse error logged" grep -q '\[ERROR\] plugin/file: Parsing zone "example.org."' "$LOG"
stop_topodns

# --- fallthrough ------------------------------------------------------------------------
start_topodns "example.org:{\$PORT} {
    file $ZONES/example.org.zone {
        fallthrough
    }
}" || exit 1
q nothere.example.org A
check "fallthrough: NXDOMAIN goes on (no next plugin: SERVFAIL)" rcode_is SERVFAIL
q www.example.org MX
check "fallthrough: NODATA does not" rcode_is NOERROR
q www.example.org A
check "fallthrough: answers unchanged" answer_count 1
stop_topodns

# --- reload_by_mtime: same serial, newer file ------------------------------------------
cp "$ZONES/example.org.zone" "$TMP/db.mtime"
touch -d '2 minutes ago' "$TMP/db.mtime"
start_topodns "example.org:{\$PORT} {
    file $TMP/db.mtime {
        reload 1s
        reload_by_mtime
    }
}" || exit 1
sed -e 's/^www     300 IN A    192.0.2.10$/www     300 IN A    192.0.2.13/' \
    "$ZONES/example.org.zone" > "$TMP/db.new"
mv "$TMP/db.new" "$TMP/db.mtime"
ok=0
for i in $(seq 1 40); do
    q www.example.org A
    if answer_has '192\.0\.2\.13$'; then ok=1; break; fi
    sleep 0.1
done
check "reload_by_mtime: same serial, newer file reloads" test "$ok" -eq 1
stop_topodns

# --- setup errors ---------------------------------------------------------------------------
printf '$ORIGIN example.org.\n@ 60 IN SOA a. b. 1 2 3 4 5\nwww 60 IN A 999.1.1.1\n' > "$TMP/bad.zone"
printf 'example.org:53 {\n    file %s\n}\n' "$TMP/bad.zone" > "$TMP/Corefile.bad"
OUT=$("$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1)
rc=$?
check "bad zone file: startup fails" test "$rc" -ne 0
check "bad zone file: names file and line" grep -q "$TMP/bad.zone:3:" <<<"$OUT"
printf 'www 60 IN A 192.0.2.1\n' > "$TMP/nosoa.zone"
printf 'example.org:53 {\n    file %s\n}\n' "$TMP/nosoa.zone" > "$TMP/Corefile.bad"
OUT=$("$TOPODNS" -conf "$TMP/Corefile.bad" 2>&1)
check "zone without SOA: startup fails" grep -q 'has no SOA record' <<<"$OUT"

finish
