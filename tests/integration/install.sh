#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# install.sh — `make install` into a scratch root (DESTDIR): the binary is
# there and runs, the manual pages topodns(8), corefile(5) and
# topodns-plugins(7) are there and render without a warning (groff -ww),
# topodns-plugins(7) lists every plugin the binary has, and every plugin's
# README is installed as plugins/NAME.md.
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/tests/integration/lib.sh"
command -v groff >/dev/null || skip "groff not installed (Debian groff-base)"
root=$TMP/root
OUT=$(make -C "$top_builddir" install DESTDIR="$root" prefix=/usr 2>&1)
check "make install succeeds" [ $? -eq 0 ]
OUT=$("$root/usr/bin/topodns" -version 2>&1)
check "the installed binary runs" grep -q '^topodns-' <<<"$OUT"
for page in man8/topodns.8 man5/corefile.5 man7/topodns-plugins.7; do
    f=$root/usr/share/man/$page
    check "$page installed" [ -s "$f" ]
    OUT=$(groff -man -Tutf8 -ww -z "$f" 2>&1)
    check "$page renders without warnings" [ -z "$OUT" ]
done
text=$(groff -man -Tascii "$root/usr/share/man/man7/topodns-plugins.7" 2>/dev/null | col -b 2>/dev/null || true)
missing=""
for p in $("$root/usr/bin/topodns" -plugins | sed -n 's/^  dns\.//p'); do
    grep -qE "^ {7}$p( |$)" <<<"$text" || missing+=" $p"
    [ -s "$root/usr/share/doc/topodns/plugins/$p.md" ] || missing+=" $p.md"
done
OUT="missing:$missing"
check "every plugin in topodns-plugins(7) and its README installed" [ -z "$missing" ]
check "the user docs installed" [ -s "$root/usr/share/doc/topodns/configuration.md" ]
finish
