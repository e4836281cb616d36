#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# docs/man/plugins.sh CONFIGURATION.md — writes topodns-plugins(7) from the
# plugin order and the directives table of docs/configuration.md, so the
# manual page and the document cannot disagree. Run by make.
set -eu
md=$1
cat <<'HEAD'
.TH TOPODNS-PLUGINS 7 "2026-11-23" "topodns" "Miscellaneous"
.SH NAME
topodns-plugins \- the Corefile directives topodns implements
.SH DESCRIPTION
Plugins run in a fixed order, whatever their order in the Corefile (the
order of CoreDNS's plugin.cfg); the ones topodns implements, outermost first:
.PP
HEAD
# the order: the paragraph of backquoted names after "outermost first:"
awk '/outermost first:$/ { on = 1; next } on && /^`/ { found = 1 } found && /^$/ { exit }
     found { printf "%s ", $0 }' "$md" | sed -e 's/`//g' -e 's/ *$//'
echo
cat <<'MID'
.PP
Every plugin has a README with its full syntax, examples and metrics,
installed as PLUGIN.md in the topodns documentation directory
(plugins/).
.SH DIRECTIVES
MID
# "| [name](link) | `syntax` | what it does |" rows
grep '^| \[' "$md" | while IFS= read -r row; do
    name=$(printf '%s\n' "$row" | sed 's/^| \[\([^]]*\)\].*/\1/')
    syntax=$(printf '%s\n' "$row" | sed 's/^| [^|]* | `\(.*\)` | .* |$/\1/' | sed 's/\\|/|/g')
    what=$(printf '%s\n' "$row" | sed 's/^| [^|]* | `.*` | \(.*\) |$/\1/' | sed 's/`//g; s/\\|/|/g')
    printf '.TP\n.B %s\n' "$name"
    printf '%s\n' "$syntax" | sed 's/\\/\\e/g; s/^\./\\\&./' | sed 's/^/.B "/; s/$/"/'
    printf '.br\n%s\n' "$what" | sed 's/\\/\\e/g; s/—/\\(em/g'
done
cat <<'TAIL'
.SH SEE ALSO
.BR topodns (8),
.BR corefile (5)
TAIL
