#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# layering.sh — the shape of the tree (docs/architecture.md), checked on the
# sources: a core folder includes nothing of src/plugin/, no plugin folder
# includes another's files, only the composition root names plugins, the
# wire library stands alone, the folders include one another only
# downwards in the layer order below, and nothing points outside the
# repository; and on the built objects ($top_builddir; each check SKIPs
# without a build): no mutable process-wide variable, no call from a lower
# layer into a higher one, no call cycle between files beyond those
# tests/call-cycles.known lists.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top_srcdir" || exit 1
pass=0 fail=0
check() {  # check "what" OUTPUT-OF-THE-VIOLATIONS
    if [ -z "$2" ]; then pass=$((pass + 1)); echo "PASS: $1"
    else fail=$((fail + 1)); echo "FAIL: $1"; sed 's/^/    /' <<<"$2"; fi
}
core="src/server src/corefile src/k8s src/cluster src/runtime src/topology src/wire src/common"

# The layers, lowest first (docs/architecture.md):
#   0 src/common, src/wire          1 src/cluster, src/corefile
#   2 src/runtime                   3 src/k8s, src/topology
#   4 src/server                    5 src/plugin/<name>
#   6 the composition root (src/main.c, src/plugins.c)
# A file may include and call the files of its own folder and of lower
# layers only: never a higher layer, nor another folder of its own layer
# (k8s and topology know nothing of each other, nor do two plugins). The
# awk function maps a path under src/ (or an include path, which is
# relative to src/) to "layer folder"; a file outside these folders is
# left alone.
layer_awk='
function layer(p,   a, n) {
    sub(/^src\//, "", p)
    n = split(p, a, "/")
    if (n == 1) return (p == "main.c" || p ~ /^plugins[.]/) ? "6 root" : ""
    if (a[1] == "common" || a[1] == "wire") return "0 " a[1]
    if (a[1] == "cluster" || a[1] == "corefile") return "1 " a[1]
    if (a[1] == "runtime") return "2 runtime"
    if (a[1] == "k8s" || a[1] == "topology") return "3 " a[1]
    if (a[1] == "server") return "4 server"
    if (a[1] == "plugin" && n >= 3) return "5 plugin/" a[2]
    return ""
}
function downward(from, to,   f, t) {    # 1 when a file in from may use one in to
    if (from == "" || to == "") return 1
    split(from, f, " "); split(to, t, " ")
    return f[2] == t[2] || t[1] + 0 < f[1] + 0
}'
# shellcheck disable=SC2016
check "folders include only their own and lower layers (common -> cluster -> runtime -> {k8s, topology} -> server -> plugins)" \
    "$(grep -rnE '#[[:space:]]*include[[:space:]]*"[^"]+/[^"]+"' src --include='*.c' --include='*.h' \
           --include='*.cc' | awk "$layer_awk"'
        {
            file = $0; sub(/:.*/, "", file)
            inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            from = layer(file); to = layer(inc)
            if (!downward(from, to))
                print $0 "  (layer " from " includes layer " to ")"
        }')"

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

# Calls run one way between files: "A calls B" when an object file of src/
# uses a symbol another one defines (nm: undefined there, defined here). A
# group of files that reach each other around a loop (a strongly connected
# component of that graph) is a cycle. tests/call-cycles.known lists the
# cycles that exist today, one per line as its sorted file names; a cycle
# not in it fails (with one concrete loop and the symbols on each step), and
# so does a listed one that is gone, so the list only ever shrinks.
if [ -n "${top_builddir:-}" ] && [ -d "$top_builddir/src" ] && command -v nm >/dev/null &&
   [ -n "$(find "$top_builddir/src" -name '*.o' -print -quit)" ]; then
    syms=""
    while IFS= read -r o; do
        rel=${o#"$top_builddir"/}
        base=$(basename "$rel" .o); base=${base#lib*_a-}     # automake's per-target prefix
        src=""
        for e in c cc cpp; do
            [ -f "$(dirname "$rel")/$base.$e" ] && { src=$(dirname "$rel")/$base.$e; break; }
        done
        [ -n "$src" ] || continue       # an object left from a removed source
        syms+=$(nm -P -g "$o" 2>/dev/null | awk -v f="$src" 'NF >= 2 { print f, $2, $1 }')$'\n'
    done < <(find "$top_builddir/src" -name '*.o' | sort)
    # Calls only downwards: an object of a lower layer (or of another
    # folder of its layer) using a symbol that a higher one defines.
    # shellcheck disable=SC2016
    check "files call only their own folder and lower layers (the layer order above)" \
        "$(awk "$layer_awk"'
            NF == 3 && ($2 == "U" || $2 == "w" || $2 == "v") { use[++nu] = $1 SUBSEP $3; next }
            NF == 3 { def[$3] = (($3 in def) ? def[$3] SUBSEP : "") $1 }
            END {
                for (i = 1; i <= nu; i++) {
                    split(use[i], u, SUBSEP)
                    if (!(u[2] in def)) continue
                    nd = split(def[u[2]], d, SUBSEP)
                    for (k = 1; k <= nd; k++) {
                        from = layer(u[1]); to = layer(d[k])
                        if (!downward(from, to) && !seen[u[1], d[k]]++)
                            print u[1] " calls " d[k] " (" u[2] "): layer " from " -> layer " to
                    }
                }
            }' <<<"$syms" | sort)"
    found=$(sort -k1,1 -s <<<"$syms" | awk '
        NF == 3 {
            f = $1; t = $2; s = $3
            if (!(f in idx)) { idx[f] = ++n; name[n] = f }
            if (t == "U" || t == "w" || t == "v") { nu[f]++; und[f, nu[f]] = s }
            else if (!((s, f) in isdef)) { isdef[s, f] = 1; nd[s]++; def[s, nd[s]] = f }
        }
        END {
            for (i = 1; i <= n; i++)        # the edges, with up to 3 symbols each
                for (k = 1; k <= nu[name[i]]; k++) {
                    s = und[name[i], k]
                    for (d = 1; d <= nd[s]; d++) {
                        j = idx[def[s, d]]
                        if (j == i) continue
                        if (!((i, j) in R)) { R[i, j] = 1; deg[i]++; adj[i, deg[i]] = j; sy[i, j] = s }
                        else if (split(sy[i, j], tmp, ", ") < 3) sy[i, j] = sy[i, j] ", " s
                    }
                }
            for (k = 1; k <= n; k++)        # reachability
                for (i = 1; i <= n; i++)
                    if ((i, k) in R)
                        for (j = 1; j <= n; j++)
                            if ((k, j) in R) R[i, j] = 1
            for (i = 1; i <= n; i++) {      # the components, each with its shortest loop
                if ((i in comp) || !((i, i) in R)) continue
                members = name[i]; cnt = 1
                for (j in in_c) delete in_c[j]
                in_c[i] = 1
                for (j = i + 1; j <= n; j++)
                    if (((i, j) in R) && ((j, i) in R)) {
                        comp[j] = i; in_c[j] = 1; members = members " " name[j]; cnt++
                    }
                if (cnt < 2) continue
                for (j in seen) delete seen[j]
                head = 1; tail = 1; q[1] = i; seen[i] = 1; last = 0
                while (head <= tail && !last) {
                    u = q[head++]
                    for (e = 1; e <= deg[u]; e++) {
                        v = adj[u, e]
                        if (!(v in in_c)) continue
                        if (v == i) { last = u; break }
                        if (!(v in seen)) { seen[v] = 1; par[v] = u; q[++tail] = v }
                    }
                }
                loop = name[last] " -> " name[i] " (" sy[last, i] ")"
                for (v = last; v != i; v = par[v])
                    loop = name[par[v]] " -> " name[v] " (" sy[par[v], v] ")  " loop
                print members "\t" loop
            }
        }')
    known=$(sed -e 's/#.*//' -e 's/[[:space:]]\{1,\}/ /g' -e 's/^ //' -e 's/ $//' \
            tests/call-cycles.known 2>/dev/null | sed '/^$/d')
    out=""
    while IFS=$'\t' read -r members loop; do
        [ -n "$members" ] || continue
        grep -qxF "$members" <<<"$known" && continue
        hint=""
        while IFS= read -r k; do      # all of its files in one listed cycle: that one shrank
            [ -n "$k" ] || continue
            sub=1
            for m in $members; do [[ " $k " == *" $m "* ]] || sub=0; done
            [ "$sub" = 1 ] && hint=" (what is left of a listed cycle: replace that line with this one)"
        done <<<"$known"
        out+="cycle ($members), not in tests/call-cycles.known$hint; one loop: ${loop//  /; }"$'\n'
    done <<<"$found"
    check "no new call cycle between the files of src/ (tests/call-cycles.known)" "$(sed '/^$/d' <<<"$out")"
    out=""
    while IFS= read -r members; do
        [ -n "$members" ] || continue
        cut -f1 <<<"$found" | grep -qxF "$members" ||
            out+="listed cycle ($members) is gone or changed: take its line out of tests/call-cycles.known"$'\n'
    done <<<"$known"
    check "every cycle in tests/call-cycles.known still exists (the list only shrinks)" \
        "$(sed '/^$/d' <<<"$out")"
    echo "call cycles today: $(grep -c . <<<"$found")"
    while IFS=$'\t' read -r members loop; do
        [ -n "$members" ] && echo "    ${loop//  /; }"
    done <<<"$found"
else
    echo "SKIP: no object files under \$top_builddir/src (or no nm): call-cycle check not run"
fi

echo "layering: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
