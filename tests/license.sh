#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# license.sh — every source file names its licence (LICENSE, Apache-2.0)
# in an SPDX line: scripts/spdx in check mode; `scripts/spdx --add` writes
# the missing lines.
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "SKIP: not a git checkout (the file list comes from git ls-files)"; exit 77; }
[ -f "$top/LICENSE" ] || { echo "FAIL: no LICENSE"; exit 1; }
"$top/scripts/spdx"
