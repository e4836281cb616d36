#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs_agree.sh — what the operator reads is what topodns does:
# - every environment variable topodns reads (getenv and main()'s limits in
#   src/), and every TOPODNS_* name a document mentions, is in the one list,
#   the ENVIRONMENT section of topodns(8);
# - the unsupported-plugin error quoted in docs/operations.md and
#   docs/configuration.md is, word for word, the line topodns prints (at
#   start, or with -check for a quote that starts with FILE:).
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
TOP=$(cd "$top_srcdir" && pwd)
ENVSEC=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH FILES/p' "$TOP/docs/man/topodns.8")
read_names=$(grep -rhoE '(getenv|env_limit|env_number)\("[A-Z][A-Z0-9_]*"' "$TOP/src" |
             sed 's/.*("\(.*\)"/\1/' | sort -u)
check "topodns reads some variables (the scan works)" grep -q TOPODNS_DEFAULT_BIND <<<"$read_names"
for v in $read_names; do
    check "$v (read in src/) is in topodns(8) ENVIRONMENT" grep -q "^\.B.* $v\b\|^\.B.*\b$v\b" <<<"$ENVSEC"
done
doc_names=$(cat "$TOP"/docs/*.md "$TOP"/README.md "$TOP"/src/plugin/*/README.md "$TOP"/src/k8s/README.md |
            grep -oE 'TOPODNS_[A-Z0-9_]+' | grep -v '_H$' | sort -u)
for v in $doc_names; do
    check "$v (named in the docs) is in topodns(8) ENVIRONMENT" grep -qw "$v" <<<"$ENVSEC"
done

# the unsupported-plugin error, as topodns prints it for a Corefile named
# Corefile whose line 3 is `trace`
mkdir -p "$TMP/op"
printf '.:%s {\n    errors\n    trace\n}\n' "$(free_port)" > "$TMP/op/Corefile"
REAL=$(cd "$TMP/op" && timeout 10 "$TOPODNS" -conf Corefile 2>&1 | head -1)
# and as -check reports it (the quotes that start with FILE:)
REALCHECK=$(cd "$TMP/op" && timeout 10 "$TOPODNS" -check -conf Corefile 2>&1 | head -1)
OUT="topodns printed: $REAL"
check "topodns stops on an unsupported plugin" grep -q "not supported by topodns" <<<"$REAL"
for doc in operations.md configuration.md; do
    # every backquoted "… is not supported by topodns …" quote of the doc,
    # its line breaks joined, with LINE and NAME filled in
    quotes=$(tr '\n' ' ' < "$TOP/docs/$doc" | sed 's/  */ /g' |
             grep -oE "\`[^\`]*plugin 'NAME' is not supported by topodns[^\`]*\`" | tr -d '`' |
             sed -e 's/LINE/3/g' -e 's/NAME/trace/g' -e 's/^FILE:/Corefile:/')
    check "$doc quotes the unsupported-plugin error" test -n "$quotes"
    while IFS= read -r quote; do
        [ -n "$quote" ] || continue
        real=$REAL
        case $quote in Corefile:*) real=$REALCHECK ;; esac
        OUT="$doc quotes: $quote"$'\n'"topodns printed: $real"
        check "$doc's quote is the real line" test "$quote" = "$real"
    done <<<"$quotes"
done
finish
