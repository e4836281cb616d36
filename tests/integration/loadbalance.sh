#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# loadbalance.sh — A records come back in more than one order, the CNAME
# stays first, other rcodes are left alone; `weighted FILE` draws the first
# address by the file's weights, re-reads the file, and refuses a bad one.
. "$top_srcdir/tests/integration/lib.sh"
{
    echo '$ORIGIN lb.test.'
    echo '@ 300 IN SOA ns.lb.test. hostmaster.lb.test. 1 7200 1800 86400 30'
    echo '@ 300 IN NS ns.lb.test.'
    echo 'ns 300 IN A 10.0.0.53'
    for i in 1 2 3 4 5 6; do echo "web 300 IN A 10.0.0.$i"; done
    echo 'alias 300 IN CNAME web.lb.test.'
} > "$TMP/lb.zone"
start_topodns "lb.test:{\$PORT} {
    loadbalance round_robin
    file $TMP/lb.zone
}"
orders=$(for i in $(seq 1 30); do dig @127.0.0.1 -p "$PORT" +short web.lb.test A | tr '\n' ' '; echo; done | sort -u | wc -l)
OUT="distinct orders: $orders"
check "more than one order in 30 queries" [ "$orders" -gt 1 ]
q web.lb.test A
check "all six records" answer_count 6
ok=1
for i in $(seq 1 20); do
    first=$(dig @127.0.0.1 -p "$PORT" +noall +answer alias.lb.test A | head -1 | awk '{print $4}')
    [ "$first" = CNAME ] || ok=0
done
OUT="CNAME first: $ok"
check "CNAME always first" [ "$ok" -eq 1 ]
stop_topodns

# weighted: the first address is drawn by the weight file's weights
# (3:1:2 here, and 1 each for the three addresses the file does not name:
# 3:1:2:1:1:1 of 9), the file is re-read on change
cat > "$TMP/lb.weights" <<'W'
# weights for web
web.lb.test
10.0.0.1 3
10.0.0.2 1
   10.0.0.3 2

W
start_topodns "lb.test:{\$PORT} {
    loadbalance weighted $TMP/lb.weights {
        reload 1s
    }
    file $TMP/lb.zone
}"
# firsts N NAME: the first A record of each of N answers, one per line
# (one dig for all N; every answer holds the zone's 6 A records; a batch
# with a lost answer, on a loaded machine, is asked again, up to 3 times)
firsts() {
    local args=() i a
    for i in $(seq 1 "$1"); do args+=("$2" A); done
    for i in 1 2 3; do
        a=$(dig @127.0.0.1 -p "$PORT" +noall +answer "${args[@]}" | awk '$4 == "A" { print $5 }')
        [ "$(grep -c . <<<"$a")" -eq $(($1 * 6)) ] && break
    done
    awk 'NR % 6 == 1' <<<"$a"
}
# mostly_first ADDR: within 8 s, ADDR is first in at least 40 of 50 answers
mostly_first() {
    local _
    for _ in $(seq 1 40); do
        T=$(firsts 50 web.lb.test)
        [ "$(grep -cx "$1" <<<"$T")" -ge 40 ] && return 0
        sleep 0.2
    done
    OUT="first addresses: $(sort <<<"$T" | uniq -c | tr '\n' ' ')"
    return 1
}
T=$(for b in 1 2 3 4 5 6; do firsts 100 web.lb.test; done)
n1=$(grep -cx 10.0.0.1 <<<"$T"); n2=$(grep -cx 10.0.0.2 <<<"$T"); n3=$(grep -cx 10.0.0.3 <<<"$T")
others=$(grep -cvx '10\.0\.0\.[123]' <<<"$T")
OUT="first address counts in 600: .1=$n1 .2=$n2 .3=$n3 others=$others"
echo "$OUT"
check "600 answers seen" [ "$(grep -c . <<<"$T")" -eq 600 ]
check "weight 3 of 9: a third first (150..250 of 600)" eval '[ "$n1" -ge 150 ] && [ "$n1" -le 250 ]'
check "weight 1 of 9: a ninth (35..100)" eval '[ "$n2" -ge 35 ] && [ "$n2" -le 100 ]'
check "weight 2 of 9: two ninths (90..180)" eval '[ "$n3" -ge 90 ] && [ "$n3" -le 180 ]'
check "three unnamed addresses, weight 1 each: a third (150..250)" eval '[ "$others" -ge 150 ] && [ "$others" -le 250 ]'
check "weight 3 beats weight 1" [ "$n1" -gt "$n2" ]
q web.lb.test A
check "weighted keeps all six records" answer_count 6
q alias.lb.test A
check "weighted: the CNAME stays first" eval 'section ANSWER | head -1 | grep -q CNAME'
# change the file: the reload (1s) makes 10.0.0.5 (weight 255) nearly always first
printf 'web.lb.test\n10.0.0.5 255\n' > "$TMP/lb.weights.new"
mv "$TMP/lb.weights.new" "$TMP/lb.weights"
check "reload picks up the changed weights" mostly_first 10.0.0.5
# a file that no longer parses is logged and the last weights kept
echo 'web.lb.test 3 4' > "$TMP/lb.weights"
sleep 2.5
T=$(firsts 50 web.lb.test)
OUT="after a bad file: $(sort <<<"$T" | uniq -c | tr '\n' ' ')"
check "a bad file keeps the last weights" [ "$(grep -cx 10.0.0.5 <<<"$T")" -ge 40 ]
check "a bad file is logged" grep -q 'plugin/loadbalance: could not parse weight line:"web.lb.test 3 4"' "$LOG"
stop_topodns

# start-up errors stop topodns at the directive's file:line
bad() {   # NAME WEIGHTS-TEXT EXPECTED [BLOCK]
    printf '%b' "$2" > "$TMP/w.$1"
    printf 'lb.test:%s {\n    file %s\n    loadbalance weighted %s %s\n}\n' "$(free_port)" "$TMP/lb.zone" "$TMP/w.$1" "${4:-}" > "$TMP/C.$1"
    OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.$1" 2>&1); rc=$?
    check "weighted $1: start-up stops" eval '[ $rc -ne 0 ] && [ $rc -ne 124 ]'
    check "weighted $1: C.$1:3 and the reason" grep -qF "C.$1:3: plugin/loadbalance: $3" <<<"$OUT"
}
bad zero 'web.lb.test\n10.0.0.1 0\n' 'wrong weight value:"0" in weight file'
bad big 'web.lb.test\n10.0.0.1 256\n' 'wrong weight value:"256" in weight file'
bad noname '10.0.0.1 3\n' 'missing domain name in weight file'
bad ipname '10.0.0.1\n' 'wrong domain name:"10.0.0.1" in weight file'
bad badip 'web.lb.test\nten 3\n' 'wrong IP address:"ten" in weight file'
printf 'lb.test:%s {\n    file %s\n    loadbalance weighted %s {\n        reload 0\n    }\n}\n' "$(free_port)" "$TMP/lb.zone" "$TMP/none" > "$TMP/C.none"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.none" 2>&1); rc=$?
check "weighted, missing file and no reload: start-up stops" eval '[ $rc -ne 0 ] && grep -qF "C.none:3: plugin/loadbalance: weight file open error" <<<"$OUT"'
printf 'lb.test:%s {\n    loadbalance weighted\n}\n' "$(free_port)" > "$TMP/C.noarg"
OUT=$(timeout 10 "$TOPODNS" -conf "$TMP/C.noarg" 2>&1)
check "weighted without a file: an error at its line" grep -qF "C.noarg:2: plugin/loadbalance: missing weight file argument" <<<"$OUT"
# a missing file with a reload only warns, and is read once it appears
start_topodns "lb.test:{\$PORT} {
    loadbalance weighted $TMP/later.weights {
        reload 1s
    }
    file $TMP/lb.zone
}"
check "missing file with reload: a warning" grep -q 'Failed to open weight file' "$LOG"
printf 'web.lb.test\n10.0.0.6 255\n' > "$TMP/later.weights"
check "the file is used once it appears" mostly_first 10.0.0.6
finish
