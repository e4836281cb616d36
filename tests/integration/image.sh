#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# image.sh — the container image is self-contained and runs as Kubernetes
# runs the rendered Deployment.
#
# scripts/image builds the image offline with podman (FROM scratch, storage
# in this test's temp dir) and unpacks its root filesystem (podman create +
# podman export). That root then runs, without podman, the way a container
# runtime starts the kube-dns pod of conf/kubernetes/kube-dns.yaml: in a
# network namespace of its own (its loopback also holding the cluster DNS
# address 10.96.0.10), a private mount namespace with the root
# read-only (readOnlyRootFilesystem), /proc and a minimal /dev mounted, the
# Corefile and resolv.conf placed where the ConfigMap and the kubelet put
# them, chroot into the root, uid/gid 65532 and no supplementary groups
# (runAsUser), only NET_BIND_SERVICE in the bounding and permitted sets
# (capabilities drop ALL, add NET_BIND_SERVICE), no ambient capabilities and
# no_new_privs (allowPrivilegeEscalation: false) — so binding port 53 relies
# on the file capability the image gives /topodns, as with CoreDNS's image.
# The command is the image's own ENTRYPOINT + CMD. kubesim runs in the same
# namespace, loaded with tests/data/topology/cluster.yaml and the rendered
# manifests (so the kube-dns Service exists); dig asks the ClusterIP name,
# headless names (by topology), /health and /ready answer, SIGTERM exits 0.
# A control run without NET_BIND_SERVICE must fail to bind.
#
# capsh (libcap2-bin) starts it: it does the chroot, the uid change and
# the capability sets in one exec chain, in the order a runtime does; with
# setpriv the chroot would have to come after dropping to 65532, which needs
# CAP_SYS_CHROOT kept into topodns.
# `podman run` is not used: it does not work on the build machines, and
# running the bare exported root shows that it alone suffices. Needs root (namespaces, chroot); skips, with the
# reason, when podman cannot build here.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
. "$top_srcdir/tests/integration/kubernetes_lib.sh"
need_kube
[ "$(id -u)" = 0 ] || skip "needs root (network namespace, chroot, capabilities)"
for t in podman:podman capsh:libcap2-bin getcap:libcap2-bin ip:iproute2 unshare:util-linux; do
    command -v "${t%%:*}" >/dev/null || skip "${t%%:*} not installed (Debian package ${t#*:})"
done
unset TOPODNS_DEFAULT_BIND    # inside its own network namespace: bind as in a pod

IMG=localhost/topodns-test:$$
STORE=$TMP/podman
if ! out=$("$top_srcdir/scripts/image" --storage "$STORE" --probe 2>&1); then
    skip "podman cannot build an image here: $(grep . <<<"$out" | tail -1)"
fi

# ---------------------------------------------------------------- the image
ROOT=$TMP/root
OUT=$("$top_srcdir/scripts/image" --build "$top_builddir" --tag "$IMG" --storage "$STORE" --export "$ROOT" 2>&1)
rc=$?
check "scripts/image builds and exports the image" test $rc -eq 0
[ $rc -eq 0 ] || { finish; exit 1; }
echo "$OUT" | grep -E '^(id|size):'
info() { sed -n "s/^$1: //p" <<<"$OUT"; }
check "image: USER 65532:65532" test "$(info user)" = 65532:65532
check "image: ENTRYPOINT [\"/topodns\"]" test "$(info entrypoint)" = '["/topodns"]'
check "image: CMD [\"-conf\", \"/etc/coredns/Corefile\"]" test "$(info cmd)" = '["-conf","/etc/coredns/Corefile"]'
check "image: a size is reported" grep -qE '^size: [0-9.]+ MB' <<<"$OUT"
CMDLINE=$(/usr/bin/python3 -c 'import json, sys; print(" ".join(json.loads(sys.argv[1]) + json.loads(sys.argv[2])))' \
    "$(info entrypoint)" "$(info cmd)")

OUT=$(cd "$ROOT" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | sort | tr '\n' ' ')
check "root: only the binary, etc, the libraries and tmp" test "$OUT" = "etc lib lib64 tmp topodns " -o \
    "$OUT" = "etc lib lib64 tmp topodns usr "
OUT=$(getcap "$ROOT/topodns")
check "root: /topodns has the file capability cap_net_bind_service=ep" grep -q 'cap_net_bind_service=ep' <<<"$OUT"
check "root: /etc/passwd and /etc/group name 65532" \
    eval 'grep -q "^nonroot:x:65532:65532:" "$ROOT/etc/passwd" && grep -q "^nonroot:x:65532:" "$ROOT/etc/group"'
check "root: CA certificates" test -s "$ROOT/etc/ssl/certs/ca-certificates.crt"
check "root: a default Corefile" test -s "$ROOT/etc/coredns/Corefile"
check "root: an empty /tmp, mode 1777" eval '[ "$(stat -c %a "$ROOT/tmp")" = 1777 ] && [ -z "$(ls -A "$ROOT/tmp")" ]'
# a sanitizer build (scripts/test's ASan stage) packs its runtime too; it
# needs /proc, which every container has, and LeakSanitizer cannot trace a
# process that gained a file capability (not dumpable): leaks are checked by
# the other tests
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
mkdir -p "$ROOT/proc" "$ROOT/dev"
OUT=$(unshare --mount --propagation private sh -c 'mount -t proc proc "$1/proc" && exec chroot "$1" /topodns -version' \
      sh "$ROOT" 2>&1)
check "root: the binary runs from the root alone (its libraries and loader inside)" grep -q '^topodns-' <<<"$OUT"

# what the ConfigMap and the kubelet mount: the rendered Corefile (the API
# endpoint added: no service account here) and a resolv.conf whose upstream
# is silent (forward and loop start, nothing answers)
"$top_srcdir/conf/kubernetes/render" --cluster-ip 10.96.0.10 > "$TMP/kube-dns.yaml"
/usr/bin/python3 - "$TMP/kube-dns.yaml" > "$TMP/Corefile" <<'PY'
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap":
        print(d["data"]["Corefile"], end="")
PY
echo "nameserver 192.0.2.53" > "$ROOT/etc/resolv.conf"

# ---------------------------------------------------------------- the network namespace
NS=topodns-image-$$
ip netns add "$NS" || skip "cannot create a network namespace (ip netns add)"
trap 'cleanup; ip netns del "$NS" 2>/dev/null' EXIT
ip -n "$NS" link set lo up
ip -n "$NS" addr add 10.96.0.10/32 dev lo
inns() { ip netns exec "$NS" "$@"; }

out=$TMP/kubesim.out
# not through inns: a function in the background is a subshell, and its pid
# is not kubesim's
ip netns exec "$NS" "$KUBESIM" --listen 127.0.0.1:0 --load "$top_srcdir/tests/data/topology/cluster.yaml" \
    > "$out" 2> "$out.err" &
PIDS+=("$!")
until_ok 10 grep -q '^listening on ' "$out" || { echo "kubesim did not start:"; cat "$out.err"; exit 1; }
KS=http://$(sed -n 's/^listening on //p' "$out" | head -1)
OUT=$(inns kubectl --server "$KS" apply --validate=false -f "$TMP/kube-dns.yaml" 2>&1)
check "the rendered manifests applied to kubesim" eval '[ "$(grep -c " created$" <<<"$OUT")" -eq 7 ]'
sed "s#^\( *\)kubernetes \(.*\) {\$#&\n\1    endpoint $KS#" "$TMP/Corefile" > "$ROOT/etc/coredns/Corefile"

# run_as_pod LOG CAPS: the image's command from its root as the kube-dns pod
# would run (header); CAPS is the permitted set: cap_net_bind_service+ep, or
# empty for the control run. Sets POD_PID.
DROP=$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | grep -vx cap_net_bind_service | paste -sd,)
run_as_pod() {
    # shellcheck disable=SC2016,SC2086
    ip netns exec "$NS" unshare --mount --propagation private sh -c '
        root=$1 drop=$2 caps=$3; shift 3
        mount --bind "$root" "$root" && mount -o remount,bind,ro "$root" &&
        mount -t proc proc "$root/proc" &&
        mount -t tmpfs -o mode=0755,size=64k tmpfs "$root/dev" || exit 1
        for d in null zero random urandom; do
            touch "$root/dev/$d" && mount --bind "/dev/$d" "$root/dev/$d" || exit 1
        done
        prog=$1; shift
        exec capsh --drop="$drop" --chroot="$root" --keep=1 --gid=65532 --groups= --uid=65532 \
            --caps="$caps" --no-new-privs --shell="$prog" -- "$@"' \
        sh "$ROOT" "$DROP" "$2" $CMDLINE > "$1" 2>&1 &
    POD_PID=$!
    PIDS+=("$POD_PID")
}

# control: without NET_BIND_SERVICE the file capability grants nothing
# (no_new_privs) and port 53 cannot be bound
run_as_pod "$TMP/control.log" ""
CPID=$POD_PID
gone() { ! kill -0 "$CPID" 2>/dev/null; }
until_ok 15 gone
OUT=$(cat "$TMP/control.log")
check "control: without NET_BIND_SERVICE topodns cannot bind port 53" \
    eval 'gone && grep -qi "permission denied" <<<"$OUT"'

run_as_pod "$TMP/pod.log" cap_net_bind_service+ep
PID=$POD_PID
ready() { [ "$(inns curl -s -o /dev/null -w '%{http_code}' http://10.96.0.10:8181/ready)" = 200 ]; }
check "the pod becomes ready (/ready on 8181)" until_ok 15 ready
OUT=$(cat "$TMP/pod.log")
[ "$FAIL" -eq 0 ] || { finish; exit 1; }
STATUS=$(cat "/proc/$PID/status")
st() { awk -v f="$1:" '$1 == f { $1 = ""; sub(/^ +/, ""); print }' <<<"$STATUS"; }
OUT=$STATUS
check "the process is the image's command" test "$(tr '\0' ' ' < "/proc/$PID/cmdline")" = "$CMDLINE "
check "…chrooted into the image's root" test "$(readlink "/proc/$PID/root")" = "$ROOT"
check "…as uid and gid 65532, no supplementary groups" \
    test "$(st Uid | tr -s '\t ' ' ')/$(st Gid | tr -s '\t ' ' ')/$(st Groups)" = \
    "65532 65532 65532 65532/65532 65532 65532 65532/"
check "…holding only CAP_NET_BIND_SERVICE (effective, permitted, bounding)" \
    test "$(st CapEff) $(st CapPrm) $(st CapBnd)" = "0000000000000400 0000000000000400 0000000000000400"
check "…none inheritable or ambient, no_new_privs" \
    test "$(st CapInh) $(st CapAmb) $(st NoNewPrivs)" = "0000000000000000 0000000000000000 1"
OUT=$(inns ss -lnup 'sport = :53' 2>&1)
check "…listening on port 53" grep -q ":53 " <<<"$OUT"

OUT=$(inns dig @10.96.0.10 +short +time=2 +tries=1 kube-dns.kube-system.svc.cluster.local A 2>&1)
check "dig: the kube-dns ClusterIP name (the applied Service)" test "$OUT" = 10.96.0.10
OUT=$(inns dig @10.96.0.10 +tcp +short +time=2 +tries=1 kube-dns.kube-system.svc.cluster.local A 2>&1)
check "dig over TCP: the same" test "$OUT" = 10.96.0.10
OUT=$(inns dig @10.96.0.10 +short +time=2 +tries=1 plain.prod.svc.cluster.local A 2>&1 | sort | tr '\n' ' ')
check "dig: a headless name, every endpoint" test "$OUT" = "10.20.1.1 10.20.1.2 10.20.1.3 "
OUT=$(inns dig @127.0.0.1 -b 127.0.2.1 +short +time=2 +tries=1 hinted.prod.svc.cluster.local A 2>&1 | sort | tr '\n' ' ')
check "dig: a headless name by topology, from a zone-b pod" test "$OUT" = "10.20.2.3 "
OUT=$(inns dig @127.0.0.1 -b 127.0.1.1 +short +time=2 +tries=1 hinted.prod.svc.cluster.local A 2>&1 | sort | tr '\n' ' ')
check "…and from a zone-a pod" test "$OUT" = "10.20.2.1 10.20.2.2 "
OUT=$(inns curl -s http://10.96.0.10:8080/health)
check "/health on 8080" test "$OUT" = OK
OUT=$(inns curl -s http://10.96.0.10:9153/metrics)
check "/metrics on 9153" grep -q '^coredns_dns_requests_total' <<<"$OUT"

kill -TERM "$PID"
wait "$PID"; rc=$?
OUT=$(cat "$TMP/pod.log")
check "SIGTERM: exits 0 (after the lameduck)" test $rc -eq 0
finish
