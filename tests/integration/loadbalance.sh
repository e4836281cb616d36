#!/usr/bin/env bash
# loadbalance.sh — A records come back in more than one order, the CNAME
# stays first, other rcodes are left alone.
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
printf 'lb.test:%s {\n    loadbalance weighted /tmp/w\n    file %s\n}\n' "$PORT" "$TMP/lb.zone" > "$TMP/bad"
OUT=$("$TOPODNS" -conf "$TMP/bad" 2>&1)
check "weighted refused at start-up with file:line" grep -q "bad:2: .*weighted policy is not supported" <<<"$OUT"
finish
