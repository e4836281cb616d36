#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# minimal.sh — the minimal plugin in the real binary, in front of file: a
# positive answer keeps only its answer section (compared with the same zone
# served without minimal), while NXDOMAIN, NODATA and delegations keep their
# authority and additional sections; EDNS is still echoed; an argument
# stops start-up.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"

zone() {
    cat <<Z
\$ORIGIN $1.
@      300 IN SOA ns1.$1. hostmaster.$1. 1 7200 1800 86400 30
@      300 IN NS  ns1.$1.
ns1    300 IN A   10.0.0.53
www    300 IN A   10.0.0.1
@      300 IN MX  10 mail.$1.
mail   300 IN A   10.0.0.2
sub    300 IN NS  ns.sub.$1.
ns.sub 300 IN A   10.0.0.54
Z
}
zone min.example > "$TMP/min.zone"
zone full.example > "$TMP/full.zone"

start_topodns "min.example:{\$PORT} {
    minimal
    file $TMP/min.zone
}
full.example:{\$PORT} {
    file $TMP/full.zone
}" || exit 1
additional_count() { [ "$(section ADDITIONAL | grep -c .)" -eq "$1" ]; }

q www.full.example A
check "without minimal: NS in the authority section" authority_has 'IN[[:space:]]+NS[[:space:]]+ns1\.full\.example\.'
q full.example MX
check "without minimal: MX with the mail server's address" additional_has '^mail\.full\.example\..*A[[:space:]]+10\.0\.0\.2'
q www.min.example A
check "with minimal: the answer" answer_has '^www\.min\.example\..*A[[:space:]]+10\.0\.0\.1$'
check "... authoritative as before" aa_set
check "... no authority section" authority_count 0
check "... no additional section" additional_count 0
check "... EDNS still echoed" opt_present
q min.example MX
check "MX: the answer without the mail server's address" \
    bash -c 'grep -q "IN[[:space:]]*MX" <<<"$0" && ! grep -q "ADDITIONAL SECTION" <<<"$0"' "$OUT"

q nope.min.example A
check "NXDOMAIN kept" rcode_is NXDOMAIN
check "... with its SOA" authority_has 'SOA'
q www.min.example TXT
check "NODATA kept with its SOA" bash -c 'grep -q "status: NOERROR" <<<"$0" && grep -q "IN[[:space:]]*SOA" <<<"$0"' "$OUT"
q a.sub.min.example A
check "a delegation keeps its NS" authority_has 'IN[[:space:]]+NS[[:space:]]+ns\.sub\.min\.example\.'
check "... and its glue" additional_has '^ns\.sub\.min\.example\..*A[[:space:]]+10\.0\.0\.54'

printf '.:%s {\n    minimal yes\n    whoami\n}\n' "$PORT" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "an argument rejected" grep -q "bad:2: Wrong argument count or unexpected line ending" <<<"$OUT"
finish
