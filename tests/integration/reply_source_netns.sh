#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# reply_source_netns.sh — replies leave from the address the query was sent
# to, with the default wildcard listener (a block without `bind`: one
# dual-stack [::] socket). It needs a listener on every address, so it runs
# in a network namespace of its own (root only; otherwise it skips): an
# interface (dummy, or veth) with 169.254.20.10 (the node-local cache
# address) and 10.53.0.2, loopback up, and fd00:53::10 and ::1 where IPv6
# is there.
# topodns runs inside with TOPODNS_DEFAULT_BIND unset and port 53; dig,
# inside too, queries each address from another source address (dig drops
# a reply from any address but the one it asked), over UDP and TCP, and
# the log plugin's {local} names the address queried.
. "$top_srcdir/tests/integration/lib.sh"

command -v ip >/dev/null || skip "ip (iproute2) is not installed"
NS=topodns-reply-$$
ip netns add "$NS" 2>/dev/null ||
    skip "cannot create a network namespace (ip netns add needs root)"
trap 'cleanup; ip netns del "$NS" 2>/dev/null' EXIT
nsx() { ip netns exec "$NS" "$@"; }
# the interface: a dummy one, or where the kernel has no dummy driver a
# veth pair with both ends in the namespace
IF=dummy0
nsx ip link set lo up || { echo "namespace set-up failed"; exit 1; }
if ! nsx ip link add "$IF" type dummy 2>/dev/null; then
    IF=veth0
    nsx ip link add "$IF" type veth peer name veth1 && nsx ip link set veth1 up ||
        { echo "namespace set-up failed: neither a dummy nor a veth interface"; exit 1; }
fi
nsx ip link set "$IF" up &&
    nsx ip addr add 169.254.20.10/32 dev "$IF" &&
    nsx ip addr add 10.53.0.2/24 dev "$IF" || { echo "namespace set-up failed"; exit 1; }
v6=0
nsx ip -6 addr add fd00:53::10/128 dev "$IF" nodad 2>/dev/null &&
    nsx ip -6 addr show dev lo | grep -q '::1/128' && v6=1

CONF=$TMP/Corefile
LOG=$TMP/topodns.log
cat > "$CONF" <<'CF'
.:53 {
    log . "{local} {proto} {name}"
    whoami
}
CF
# ip and env exec into topodns: $! is the server's own PID, which
# cleanup kills (a backgrounded function would leave it running)
ip netns exec "$NS" env -u TOPODNS_DEFAULT_BIND "$TOPODNS" -conf "$CONF" > "$LOG" 2>&1 &
TOPO_PID=$!
PIDS+=("$TOPO_PID")
for _ in $(seq 1 50); do
    nsx dig @127.0.0.1 +time=1 +tries=1 . SOA >/dev/null 2>&1 && break
    kill -0 "$TOPO_PID" 2>/dev/null || break
    sleep 0.1
done

# ask ADDR [dig args...]: query inside the namespace; output in OUT
ask() { local a=$1; shift; OUT=$(nsx dig @"$a" +time=2 +tries=1 "$@" 2>&1); }
logged() {
    local i
    for i in $(seq 1 20); do
        grep -qxF "[INFO] $1" "$LOG" && return 0
        sleep 0.05
    done
    return 1
}

check "listening on the wildcard address" grep -q '^\.:53$' "$LOG"
ask 169.254.20.10 -b 127.0.0.1 a1.test A
check "UDP to 169.254.20.10 from 127.0.0.1 answered" rcode_is NOERROR
check "UDP to 169.254.20.10: {local}" logged "169.254.20.10 udp a1.test."
ask 10.53.0.2 -b 127.0.0.1 a2.test A
check "UDP to 10.53.0.2 from 127.0.0.1 answered" rcode_is NOERROR
check "UDP to 10.53.0.2: {local}" logged "10.53.0.2 udp a2.test."
ask 10.53.0.2 -b 169.254.20.10 a3.test A
check "UDP to 10.53.0.2 from 169.254.20.10 answered" rcode_is NOERROR
ask 127.0.0.5 a4.test A
check "UDP to 127.0.0.5 (from 127.0.0.1) answered" rcode_is NOERROR
check "UDP to 127.0.0.5: {local}" logged "127.0.0.5 udp a4.test."
ask 127.0.0.1 a5.test A
check "UDP to 127.0.0.1 answered" rcode_is NOERROR
ask 169.254.20.10 -b 127.0.0.1 +tcp a6.test A
check "TCP to 169.254.20.10 answered" rcode_is NOERROR
check "TCP to 169.254.20.10: {local}" logged "169.254.20.10 tcp a6.test."
# a burst: 60 queries from one socket, to three addresses in turn, sent
# before any reply is read, so that the server receives them in batches
# (recvmmsg) and sends the replies in batches (sendmmsg); each reply must
# come from the address its query (known by its ID) was sent to
burst=$(nsx /usr/bin/python3 - <<'PY'
import socket, struct
dsts = ["169.254.20.10", "10.53.0.2", "127.0.0.5"]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(3)
sent = {}
for i in range(60):
    qid = 0x1000 + i
    name = b"".join(bytes([len(l)]) + l for l in [b"b%d" % i, b"test"]) + b"\0"
    s.sendto(struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name + struct.pack(">HH", 1, 1),
             (dsts[i % 3], 53))
    sent[qid] = dsts[i % 3]
ok = bad = 0
try:
    while ok + bad < len(sent):
        data, (src, _) = s.recvfrom(4096)
        qid = struct.unpack(">H", data[:2])[0]
        if sent.get(qid) == src:
            ok += 1
        else:
            bad += 1
except socket.timeout:
    pass
print(ok, bad)
PY
)
check "a burst of 60 UDP queries to three addresses: every reply from its query's address ($burst)" \
    test "$burst" = "60 0"
if [ $v6 = 1 ]; then
    ask fd00:53::10 -b ::1 a7.test A
    check "UDP to fd00:53::10 from ::1 answered" rcode_is NOERROR
    check "UDP to fd00:53::10: {local}" logged "[fd00:53::10] udp a7.test."
    ask ::1 a8.test A
    check "UDP to ::1 answered" rcode_is NOERROR
    check "UDP to ::1: {local}" logged "[::1] udp a8.test."
else
    echo "no IPv6 in the namespace: IPv6 checks left out"
fi

finish
