#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# lib_ports.sh — the test library's server ports (free_port in lib.sh) lie
# outside the kernel's ephemeral range, so that no client's source port can
# be a server's. dig binds its UDP socket with SO_REUSEPORT, like topodns's
# listeners, and the kernel lets two such sockets of one user share a port:
# inside that range dig's random source port may be the port it queries,
# and dig then reads its own query back (no QR) instead of an answer.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
[ -r /proc/sys/net/ipv4/ip_local_port_range ] || skip "no /proc/sys/net/ipv4/ip_local_port_range"
read -r ELOW EHIGH < /proc/sys/net/ipv4/ip_local_port_range
[ $(( ELOW - 1 - 10000 )) -ge 1000 ] || [ $(( 65535 - EHIGH - 1 )) -ge 1000 ] ||
    skip "ephemeral range $ELOW-$EHIGH leaves no room for server ports"

bad=""
for _ in $(seq 40); do
    p=$(free_port)
    if ! [ "$p" -ge 1024 ] 2>/dev/null || [ "$p" -gt 65535 ] ||
       { [ "$p" -ge "$ELOW" ] && [ "$p" -le "$EHIGH" ]; }; then
        bad="$bad $p"
    fi
done
OUT="ephemeral range $ELOW-$EHIGH; picked inside it or not a port:$bad"
check "free_port never picks an ephemeral port" test -z "$bad"

# a server on such a port answers as before
start_topodns ".:{\$PORT} {
    whoami
}" || exit 1
q whoami A
check "topodns answers on the port free_port picked" eval 'rcode_is NOERROR && section ADDITIONAL | grep -q "127\.0\.0\.1"'
finish
