# SPDX-License-Identifier: Apache-2.0
# scripts/deps.sh — sourced by scripts/test and scripts/demo: installs the
# Debian packages topodns needs to build and test, when any is missing.
# Non-interactive; apt-get update runs once, and only when something is missing.
# kubectl (for the Kubernetes tests) comes from Debian's kubernetes-client, but
# only when no kubectl is on the PATH already (never two of them).
# The sanitizer runtimes of scripts/test (libasan8, libubsan1, libtsan2) come
# with build-essential: gcc's libgcc-N-dev depends on them.
# The fuzz stage (scripts/fuzz): clang and its libFuzzer runtime
# (libclang-rt-14-dev; --no-install-recommends would leave it out).
# The image (scripts/image, tests/integration/image.sh): podman builds it,
# libcap2-bin gives the binary its file capability (setcap) and runs it as
# the pod would (capsh), ca-certificates is the bundle it ships.
# python3-kubernetes is the official Kubernetes Python client that
# tests/integration/kubesim_pyclient.sh drives kubesim with.
# The dnstap plugin builds on libfstrm-dev and libprotobuf-c-dev (with
# protoc-c from protobuf-c-compiler); its test reads the stream back with
# fstrm_capture (fstrm-bin) and dnstap-ldns.

TOPODNS_PKGS=(
    build-essential autoconf automake libtool pkg-config
    libldns-dev libevent-dev libcurl4-openssl-dev libcjson-dev libc-ares-dev
    libcmocka-dev libyaml-dev uthash-dev liburcu-dev libssl-dev libre2-dev
    libfstrm-dev libprotobuf-c-dev protobuf-c-compiler fstrm-bin dnstap-ldns
    bind9-dnsutils knot-dnsutils knot ldnsutils curl jq python3 python3-dnspython python3-yaml
    python3-kubernetes
    iproute2 valgrind dnsperf nsd nghttp2-proxy bc unbound
    podman libcap2-bin ca-certificates
    clang libclang-rt-14-dev
)

# Only for `make bench` (hand-run benchmarks; not scripts/test): the plot.
TOPODNS_BENCH_PKGS=(gnuplot-nox)

install_bench_deps() {
    local missing=() p
    for p in "${TOPODNS_BENCH_PKGS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages and not root: apt-get install ${missing[*]}" >&2
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

install_deps() {
    local missing=() p
    for p in "${TOPODNS_PKGS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "installing: ${missing[*]}"
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages and not root: apt-get install ${missing[*]}" >&2
        return 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
