#!/usr/bin/env bash
# cache.sh — the cache plugin in front of forward, with a second topodns
# (file and hosts plugins) on loopback as the upstream: hits and misses in
# the metrics, TTL capped and counting down, denial lifetime from the SOA,
# DO in the key, disable success|denial per zone, SERVFAIL caching and
# `servfail 0`, keepttl, capacity and evictions, prefetch, serve_stale
# (immediate and verify) while the upstream is stopped, refresh when it is
# back. Also the cache in front of `file` in the same block.
. "$top_srcdir/tests/integration/lib.sh"

# ---- the upstream ---------------------------------------------------------
zone() {    # zone NAME EXTRA-RECORDS
    cat > "$TMP/$1.zone" <<EOF
\$ORIGIN $1.
@ 3600 IN SOA ns.$1. admin.$1. 1 7200 3600 1209600 20
@ 3600 IN NS ns.$1.
ns 3600 IN A 127.0.0.1
$2
EOF
}
zone example.org "www 3600 IN A 10.0.0.1
short 8 IN A 10.0.0.2
x.nodeny 3600 IN A 10.0.0.3
x.nosucc 3600 IN A 10.0.0.4"
zone pf.test "p 6 IN A 10.1.0.1"
zone stale.test "s 5 IN A 10.2.0.1"
zone verify.test "v 5 IN A 10.3.0.1"
zone keep.test "k 300 IN A 10.4.0.1"
zone cap.test "* 300 IN A 10.5.0.1"
UPCONF=""
for z in example.org pf.test stale.test verify.test keep.test cap.test; do
    UPCONF+="$z:{\$PORT} {
    file $TMP/$z.zone
}
"
done
UPCONF+="sf.test:{\$PORT} sf0.test:{\$PORT} {
    hosts {
        10.6.0.1 a.sf.test
    }
}"
start_topodns "$UPCONF" || exit 1
UP=$PORT
UP_PID=$TOPO_PID

# ---- the cache under test -------------------------------------------------
MPORT=$(free_port)
FWD="forward . 127.0.0.1:$UP"
start_topodns "example.org:{\$PORT} {
    prometheus 127.0.0.1:$MPORT
    cache 30 {
        disable denial nodeny.example.org
        disable success nosucc.example.org
    }
    $FWD
}
pf.test:{\$PORT} {
    cache {
        prefetch 2 1m 50%
    }
    $FWD
}
stale.test:{\$PORT} {
    cache {
        serve_stale 1h
    }
    $FWD
}
verify.test:{\$PORT} {
    cache {
        serve_stale 1h verify
    }
    $FWD
}
keep.test:{\$PORT} {
    cache {
        keepttl
    }
    $FWD
}
cap.test:{\$PORT} {
    cache {
        success 0
    }
    $FWD
}
sf.test:{\$PORT} {
    cache
    $FWD
}
sf0.test:{\$PORT} {
    cache {
        servfail 0
    }
    $FWD
}
local.test:{\$PORT} {
    cache
    hosts {
        10.9.0.1 h.local.test
        ttl 100
    }
}" || exit 1
FRONT=$PORT

# metric NAME ZONES [TYPE]: the value of one cache series (0 when absent)
metric() {
    curl -s "http://127.0.0.1:$MPORT/metrics" | awk -v n="$1" -v z="zones=\"$2\"" -v t="type=\"${3:-}\"" '
        $1 ~ "^"n"[{]" && index($1, z) && (t == "type=\"\"" || index($1, t)) { v = $2 }
        END { print v == "" ? 0 : v }'
}
ttl_of() { section ANSWER | awk '{print $2; exit}'; }
auth_ttl() { section AUTHORITY | awk '{print $2; exit}'; }

# ---- hits, misses, TTL ----------------------------------------------------
q www.example.org A
check "miss answered through forward" answer_has '10\.0\.0\.1$'
check "TTL capped at 30 (cache 30)" [ "$(ttl_of)" = 30 ]
check "one miss counted" [ "$(metric coredns_cache_misses_total example.org.)" = 1 ]
check "no hit yet" [ "$(metric coredns_cache_hits_total example.org. success)" = 0 ]
sleep 2.2
q WWW.Example.Org A
check "hit, question case kept" answer_has '^WWW\.Example\.Org\.'
check "hit sets AA" aa_set
t=$(ttl_of)
check "TTL counts down (got $t)" eval '[ "$t" -ge 24 ] && [ "$t" -le 28 ]'
check "success hit counted" [ "$(metric coredns_cache_hits_total example.org. success)" = 1 ]
check "requests = hits + misses" [ "$(metric coredns_cache_requests_total example.org.)" = 2 ]
check "one success entry" [ "$(metric coredns_cache_entries example.org. success)" = 1 ]
q www.example.org A +dnssec
check "DO is part of the key: a miss" [ "$(metric coredns_cache_misses_total example.org.)" = 2 ]
q short.example.org A
check "TTL below the cap kept (8)" [ "$(ttl_of)" = 8 ]

# ---- denial ---------------------------------------------------------------
q nx.example.org A
check "NXDOMAIN" rcode_is NXDOMAIN
check "denial lifetime from the SOA MINIMUM (20)" [ "$(auth_ttl)" = 20 ]
sleep 1.1
q nx.example.org A
check "NXDOMAIN from the cache" rcode_is NXDOMAIN
check "denial hit counted" [ "$(metric coredns_cache_hits_total example.org. denial)" = 1 ]
t=$(auth_ttl)
check "denial TTL counts down (got $t)" eval '[ "$t" -ge 16 ] && [ "$t" -le 19 ]'
q www.example.org TXT
check "NODATA" rcode_is NOERROR
q www.example.org TXT
check "NODATA cached as denial" [ "$(metric coredns_cache_hits_total example.org. denial)" = 2 ]

# ---- disable per zone -----------------------------------------------------
h0=$(metric coredns_cache_hits_total example.org. denial)
q nx.nodeny.example.org A
q nx.nodeny.example.org A
check "disable denial: NXDOMAIN below nodeny not cached" \
    [ "$(metric coredns_cache_hits_total example.org. denial)" = "$h0" ]
q x.nodeny.example.org A
q x.nodeny.example.org A
check "disable denial: success below nodeny still cached" \
    [ "$(metric coredns_cache_hits_total example.org. success)" = 2 ]
q x.nosucc.example.org A
q x.nosucc.example.org A
check "disable success: not cached" [ "$(metric coredns_cache_hits_total example.org. success)" = 2 ]
check "disable success: TTL still capped" [ "$(ttl_of)" = 30 ]
q nx.nosucc.example.org A
q nx.nosucc.example.org A
check "disable success: denial below nosucc still cached" \
    [ "$(metric coredns_cache_hits_total example.org. denial)" = "$((h0 + 1))" ]

# ---- SERVFAIL -------------------------------------------------------------
q nosuch.sf.test A
check "upstream SERVFAIL" rcode_is SERVFAIL
q nosuch.sf.test A
check "SERVFAIL cached (denial hit)" [ "$(metric coredns_cache_hits_total sf.test. denial)" = 1 ]
q nosuch.sf0.test A
q nosuch.sf0.test A
check "servfail 0: not cached" [ "$(metric coredns_cache_hits_total sf0.test. denial)" = 0 ]

# ---- keepttl --------------------------------------------------------------
q k.keep.test A
sleep 1.2
q k.keep.test A
check "keepttl: a hit" [ "$(metric coredns_cache_hits_total keep.test. success)" = 1 ]
check "keepttl: TTL not aged" [ "$(ttl_of)" = 300 ]

# ---- the cache in front of a local plugin ---------------------------------
q h.local.test A
q h.local.test A
check "cache in front of hosts: hit" [ "$(metric coredns_cache_hits_total local.test. success)" = 1 ]
check "hosts TTL 100 kept" eval '[ "$(ttl_of)" -le 100 ] && [ "$(ttl_of)" -ge 99 ]'

# ---- capacity and evictions -----------------------------------------------
seq 1 1400 | sed 's/.*/n&.cap.test A/' > "$TMP/batch"
dig @127.0.0.1 -p "$PORT" +time=2 +tries=1 +noall -f "$TMP/batch" > /dev/null 2>&1
ev=$(metric coredns_cache_evictions_total cap.test. success)
ent=$(metric coredns_cache_entries cap.test. success)
check "capacity 0 means 1024 entries at most (got $ent)" eval '[ "$ent" -le 1024 ] && [ "$ent" -gt 500 ]'
check "evictions counted (got $ev)" [ "$ev" -gt 0 ]
# every miss of the batch stored one entry (a query dig gave up on under a
# loaded machine would be neither, so count the misses rather than 1400)
miss=$(metric coredns_cache_misses_total cap.test.)
check "entries + evictions = inserts (misses $miss)" eval '[ "$((ent + ev))" = "$miss" ] && [ "$miss" -gt 1300 ]'

# ---- prefetch -------------------------------------------------------------
q p.pf.test A
check "prefetch zone: lifetime 6" [ "$(ttl_of)" = 6 ]
sleep 3.2
q p.pf.test A
q p.pf.test A
check "second hit within 50% of the TTL prefetches" [ "$(metric coredns_cache_prefetch_total pf.test.)" = 1 ]
sleep 0.3
q p.pf.test A
t=$(ttl_of)
check "prefetched entry is fresh (TTL $t)" [ "$t" -ge 5 ]
check "and served from the cache" [ "$(metric coredns_cache_hits_total pf.test. success)" = 3 ]

# ---- serve_stale ----------------------------------------------------------
q s.stale.test A
q v.verify.test A
kill "$UP_PID"; wait "$UP_PID" 2>/dev/null
sleep 5.5
q s.stale.test A +time=4
check "immediate: stale answer while the upstream is down" answer_has '10\.2\.0\.1$'
check "immediate: stale TTL is 0" [ "$(ttl_of)" = 0 ]
check "served_stale counted" [ "$(metric coredns_cache_served_stale_total stale.test.)" = 1 ]
check "a refresh was attempted" [ "$(metric coredns_cache_prefetch_total stale.test.)" -ge 1 ]
OUT=$(dig @127.0.0.1 -p "$PORT" +time=8 +tries=1 v.verify.test A 2>&1)
check "verify: stale answer after the upstream failed" answer_has '10\.3\.0\.1$'
check "verify: served_stale counted" [ "$(metric coredns_cache_served_stale_total verify.test.)" = 1 ]
# upstream back on the same port: the next stale hit refreshes the entry
PORT_FIXED=$UP start_topodns "$UPCONF" || exit 1
PORT=$FRONT
q s.stale.test A
sleep 0.5
q s.stale.test A
t=$(ttl_of)
check "upstream back: the refresh replaced the stale entry (TTL $t)" [ "$t" -ge 4 ]
finish
