#!/bin/bash
# layering.sh — the shape of the tree (docs/architecture.md), checked on the
# sources: a core folder includes nothing of src/plugin/, no plugin folder
# includes another's files, only the composition root names plugins, the
# wire library stands alone, and nothing points outside the repository.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top_srcdir" || exit 1
pass=0 fail=0
check() {  # check "what" OUTPUT-OF-THE-VIOLATIONS
    if [ -z "$2" ]; then pass=$((pass + 1)); echo "PASS: $1"
    else fail=$((fail + 1)); echo "FAIL: $1"; sed 's/^/    /' <<<"$2"; fi
}
core="src/server src/corefile src/k8s src/cluster src/topology src/wire src/common"

# shellcheck disable=SC2086
check "core folders include nothing under src/plugin/" \
    "$(grep -rnE '#[[:space:]]*include[[:space:]]*"([.][.]/)*plugin/' $core)"

out=""
for d in src/plugin/*/; do
    n=$(basename "$d")
    out+=$(grep -rnE '#[[:space:]]*include[[:space:]]*"' "$d" | grep -E '"(\.\./)*plugin/' |
           grep -vE "\"plugin/$n/" || true)
done
check "plugin folders include nothing of each other" "$out"

# every plugin folder's definition, plugin_<folder>
plugins=$(cd src/plugin && ls -d */ | tr -d / | paste -sd'|')
# shellcheck disable=SC2086
check "only the composition root names plugin definitions" \
    "$(grep -rnwE "plugin_($plugins)" $core src/main.c)"

check "the wire library includes only itself and system headers" \
    "$(grep -rnE '#[[:space:]]*include[[:space:]]*"' src/wire | grep -v '"wire/')"

# The design notes kept beside the repository (its sibling folder of specs and
# layering notes) are for reading only: nothing in the tree may name them.
# The pattern is put together so that this file does not name them either.
sib=shared b=behaviour p=performance l=layering
outside="$sib/spec|\\.\\./$sib/|coredns-$b\\.md|kube-api-and-$p\\.md|design/$l"
check "docs, sources and tests point at nothing outside the repository" \
    "$(grep -rnE "$outside" \
        README.md docs src tests conf bench zones --include='*' 2>/dev/null | grep -v '^tests/layering.sh:')"

# No mutable process-wide state: the built archives define no writable
# variable outside thread-local storage (.tdata/.tbss). Constant tables
# holding pointers live in .data.rel.ro and are fine. The one exception is
# named: cJSON's allocation hooks are process-wide, so jsonarena.c installs
# them under a pthread_once guard. AddressSanitizer's one-definition-rule
# indicators (__odr_asan.*) are the sanitizer's own bookkeeping, not ours.
if [ -n "${top_builddir:-}" ] && [ -d "$top_builddir/src" ] && command -v objdump >/dev/null; then
    out=""
    while IFS= read -r a; do
        out+=$(objdump -t "$a" 2>/dev/null | awk -v a="${a#"$top_builddir"/}" '
            /^[^ ]+\.o:/ { obj = $1; sub(":", "", obj) }
            NF >= 6 && $(NF-2) ~ /^\.(data|bss)($|\.)/ && $(NF-2) !~ /rel\.ro/ &&
                $NF != $(NF-2) && $NF !~ /^__odr_asan\./ &&
                !(obj == "jsonarena.o" && $NF ~ /^once\.[0-9]+$/) {
                print a ": " obj ": " $(NF-2) " " $NF }')$'\n'
    done < <(find "$top_builddir/src" -name '*.a' | sort)
    out=$(sed '/^$/d' <<<"$out")
    check "no mutable process-wide variables in the built archives" "$out"
else
    echo "SKIP: no built archives under \$top_builddir/src (or no objdump): mutable-state check not run"
fi

echo "layering: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
