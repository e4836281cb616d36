#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/tsan_summary.py LOG... — the ThreadSanitizer reports of test logs,
deduplicated (used by the TSan stage of scripts/test).

A report is keyed by its kind and the top frame of our own code (src/ or
tests/, as file:function) of each of its two accesses; for each key it
prints how many reports, in which logs, and what was accessed (a global's
name, or where the heap block was allocated). Lines quoted by the
integration library ("    | " prefix) are read as well. Prints nothing when
there is no report; exits 0 either way.
"""
import collections
import os
import re
import sys

FRAME = re.compile(r"^\s*#\d+ (\S+) (\S+?)(?::\d+)*(?: \(|$)")


def own(frame):
    """file:function of a frame of our code, else None."""
    m = FRAME.match(frame)
    if not m:
        return None
    fn, path = m.group(1), m.group(2)
    if "libsanitizer" in path:
        return None
    for top in ("/src/", "/tests/"):
        i = path.rfind(top)
        if i >= 0:
            return "%s:%s" % (path[i + 1:], fn)
    return None


def first_own(frames):
    for f in frames:
        o = own(f)
        if o:
            return o
    return None


def reports(text):
    """(kind, sections) per report; a section is (header, [frames])."""
    lines = [l[6:] if l.startswith("    | ") else l for l in text.split("\n")]
    i = 0
    while i < len(lines):
        m = re.search(r"WARNING: ThreadSanitizer: (.*?)(?: \(pid=\d+\))?$", lines[i])
        i += 1
        if not m:
            continue
        secs = []
        while i < len(lines) and not lines[i].startswith("=================="):
            l = lines[i]
            if re.match(r"^  \S", l):
                secs.append((l.strip(), []))
            elif re.match(r"^\s+#\d+ ", l) and secs:
                secs[-1][1].append(l)
            elif "failed to restore the stack" in l and secs:
                secs[-1][1].append(l)
            i += 1
        yield m.group(1), secs


def main(paths):
    found = collections.OrderedDict()
    total = 0
    for path in paths:
        try:
            text = open(path, errors="replace").read()
        except OSError:
            continue
        for kind, secs in reports(text):
            total += 1
            acc = [s for s in secs
                   if re.match(r"(?i)^(previous )?(atomic )?(read|write)\b", s[0])]
            if not acc:       # other kinds: the first two stacks
                acc = [s for s in secs if s[1]][:2]
            tops = [first_own(s[1]) or "?" for s in acc[:2]]
            what = None
            for head, frames in secs:
                g = re.match(r"Location is global '([^']+)'", head)
                if g:
                    what = "global " + g.group(1)
                elif head.startswith("Location is heap block"):
                    what = "heap block allocated in %s" % (first_own(frames) or "?")
                elif head.startswith("Location is"):
                    what = head.split(" at ")[0]
            key = (kind, tuple(sorted(tops)))
            r = found.setdefault(key, {"n": 0, "logs": set(), "what": collections.Counter()})
            r["n"] += 1
            r["logs"].add(os.path.basename(path))
            if what:
                r["what"][what] += 1
    if not total:
        return
    print("ThreadSanitizer: %d reports, %d distinct (kind, our top frames of the two accesses):"
          % (total, len(found)))
    for (kind, tops), r in sorted(found.items(), key=lambda kv: -kv[1]["n"]):
        print("  %s: %s" % (kind, "  <->  ".join(tops)))
        whats = ", ".join(w for w, _ in r["what"].most_common(3))
        print("      x%d in %s%s" % (r["n"], ", ".join(sorted(r["logs"])),
                                   "; " + whats if whats else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
