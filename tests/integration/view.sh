#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# view.sh — the view plugin: server blocks for the same zone and port, each
# with a view, picked by the client's source address (dig -b from 127.x),
# by the query type and by the name (a regex); the block without a view
# takes the rest; two blocks without a view for one zone/port, and
# expressions topodns does not evaluate, are refused with file:line.
. "$top_srcdir/tests/integration/lib.sh"

MPORT=$(free_port)
start_topodns '
.:{$PORT} {
    prometheus 127.0.0.1:'"$MPORT"'
    view nets {
        expr incidr(client_ip(), '"'"'127.0.0.0/24'"'"')
    }
    hosts {
        1.1.1.1 test
    }
}
.:{$PORT} {
    view other {
        expr incidr(client_ip(), '"'"'127.9.0.0/16'"'"') && type() in ['"'"'A'"'"', '"'"'AAAA'"'"']
    }
    hosts {
        2.2.2.2 test
        2.2.2.3 abc.x.example.com
    }
}
.:{$PORT} {
    view names {
        expr name() matches '"'"'^abc\\..*\\.example\\.com\\.$'"'"'
    }
    hosts {
        4.4.4.4 abc.x.example.com
        4.4.4.5 test
    }
}
.:{$PORT} {
    hosts {
        3.3.3.3 test
    }
}
'

q -b 127.0.0.1 test A
check "127.0.0.1 (in 127.0.0.0/24) gets the first view's block" answer_has '1\.1\.1\.1'
q -b 127.0.0.77 test A
check "127.0.0.77 gets the first view's block too" answer_has '1\.1\.1\.1'
q -b 127.9.3.4 test A
check "127.9.3.4 gets the second view's block" answer_has '2\.2\.2\.2'
q -b 127.9.3.4 abc.x.example.com A
check "views are tried in file order: 127.9.3.4 for abc.x.example.com gets the second" \
    answer_has '2\.2\.2\.3'
q -b 127.9.3.4 test TXT
check "127.9.3.4 asking TXT is not the second view's (type): the block without a view" \
    bash -c '! grep -q "2\.2\.2\.2" <<<"$0" && grep -q "status: NOERROR" <<<"$0"' "$OUT"
q -b 127.5.0.1 abc.x.example.com A
check "the name view (regex) takes abc.x.example.com from 127.5.0.1" answer_has '4\.4\.4\.4'
q -b 127.5.0.1 test A
check "127.5.0.1 for test. matches no view: the block without one" answer_has '3\.3\.3\.3'
M=$(curl -s --noproxy '*' --max-time 5 "http://127.0.0.1:$MPORT/metrics")
check "the view block's requests carry its view label in coredns_dns_requests_total" \
    grep -q 'coredns_dns_requests_total{family="1",proto="udp",server="dns://:'"$PORT"'",type="A",view="nets",zone="."} 2$' <<<"$M"
stop_topodns

# the block without a view written first: a matching view still wins
start_topodns '
.:{$PORT} {
    hosts {
        3.3.3.3 test
    }
}
.:{$PORT} {
    view late {
        expr incidr(client_ip(), '"'"'127.0.0.0/24'"'"')
    }
    hosts {
        1.1.1.1 test
    }
}
'
q -b 127.0.0.1 test A
check "a view block written after the block without one still wins" answer_has '1\.1\.1\.1'
q -b 127.1.0.1 test A
check "a client outside the view gets the block without one" answer_has '3\.3\.3\.3'
stop_topodns

# the view's name as metadata, read by the log plugin
start_topodns '
.:{$PORT} {
    metadata
    log . "VIEWLOG {name} {/view/name}"
    view splitnet {
        expr client_ip() == '"'"'127.0.0.8'"'"'
    }
    whoami
}
.:{$PORT} {
    whoami
}
'
q -b 127.0.0.8 meta.example A
check "metadata view/name of the view's block is logged" \
    wait_until 5 grep -q "VIEWLOG meta.example. splitnet" "$LOG"
stop_topodns

# a view block for a zone falls back to the shorter zone when its view does not hold
start_topodns '
example.org:{$PORT} {
    view only9 {
        expr incidr(client_ip(), '"'"'127.9.0.0/16'"'"')
    }
    hosts {
        9.9.9.9 www.example.org
    }
}
.:{$PORT} {
    hosts {
        8.8.8.8 www.example.org
    }
}
'
q -b 127.9.0.1 www.example.org A
check "example.org view holds: its block" answer_has '9\.9\.9\.9'
q -b 127.0.0.1 www.example.org A
check "example.org view fails: the root block answers" answer_has '8\.8\.8\.8'
stop_topodns

PORT=$(free_port)
printf '.:%s {\n    whoami\n}\n.:%s {\n    whoami\n}\n' "$PORT" "$PORT" > "$TMP/dup"
OUT=$("$TOPODNS" -check -conf "$TMP/dup" 2>&1); rc=$?
check "two blocks without a view for one zone/port are refused" \
    bash -c '[ $1 -ne 0 ] && grep -q "it is already defined" <<<"$0"' "$OUT" $rc

for e in "client_ip() + 1" "type() == 1" "env('"'"'HOME'"'"')" "metadata('"'"'x'"'"') == 'a'" \
         "name() matches 'a{1001}'" "incidr(client_ip(), '"'"'10.0.0.0/33'"'"')" "name()" "(true"; do
    printf '.:%s {\n    view v {\n        expr %s\n    }\n    whoami\n}\n' "$PORT" "$e" > "$TMP/bad"
    OUT=$("$TOPODNS" -check -conf "$TMP/bad" 2>&1); rc=$?
    check "refused at startup with file:line: expr $e" \
        bash -c '[ $1 -ne 0 ] && grep -q "bad:3: plugin/view: " <<<"$0"' "$OUT" $rc
done

finish
