#!/usr/bin/env python3
"""Which src/ headers the header self-containment check (CMakeLists.txt: tandem_header_check)
must compile: those that changed since the main that last landed, and every header that
includes one of them, directly or not.

Usage: tools/header_check_set.py BUILD_DIR [--base REV] [--all]
Prints the ninja targets (one object file per header, CMakeFiles/tandem_header_check.dir/...)
to build, one per line; nothing when no header needs it.

Why this is the whole check, not a sample: a header H compiles alone or not depending only on
its own text, the headers it includes (transitively) and the build's flags and system headers.
Every header that landed passed the check then (CI compiles the changed set each time), so
after a change only H that changed, or that reach a changed header through their includes,
can have stopped compiling alone: e.g. B drops `#include <vector>` that its includer A relied
on. The window is that of tools/tidy_changed.py: BASE..HEAD plus uncommitted changes, BASE
being --base, else the commit in .ci/lint-base (its merge base with HEAD). Every header is
selected (--all's answer) when no base is known, or when the build's flags may have changed
(CMakeLists.txt, cmake/, the .ci/lint-base file itself is not such a change).
Each header costs ~8 s of one core to parse on a 2-core CI machine (Boost.Beast, JSON): all
~150 took ~560 s of a fresh clone's build step; a typical change selects a fraction.
Exit status: 0, or 2 on a usage error.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tidy_changed  # noqa: E402  (recorded_base, git: one definition of the window)

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Changes that can alter how every header compiles.
FLAG_FILES = re.compile(r"^(CMakeLists\.txt|cmake/)")


def c_identifier(rel):
    """CMake's string(MAKE_C_IDENTIFIER): every character outside [A-Za-z0-9_] becomes '_',
    and a leading digit gets a '_' in front."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", rel)
    return "_" + out if out[:1].isdigit() else out


def include_graph(src_dir):
    """{header: set of src/ headers it includes}, paths relative to src_dir."""
    graph = {}
    for root, _, files in os.walk(src_dir):
        for name in files:
            if not name.endswith(".h"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src_dir)
            with open(path, encoding="utf-8", errors="replace") as f:
                graph[rel] = {inc for inc in INCLUDE.findall(f.read())}
    return graph


def with_includers(graph, changed):
    """The headers of `graph` that are in `changed` or include one of them transitively."""
    includers = {}
    for header, includes in graph.items():
        for inc in includes:
            includers.setdefault(inc, set()).add(header)
    selected = {h for h in changed if h in graph}
    frontier = list(changed)  # a deleted header's includers too
    while frontier:
        for includer in includers.get(frontier.pop(), ()):
            if includer not in selected:
                selected.add(includer)
                frontier.append(includer)
    return selected


def changed_paths(base):
    """Repository paths changed in base..HEAD and uncommitted (tracked or not)."""
    names = set(tidy_changed.git("diff", "--name-only", base).split())
    names |= set(tidy_changed.git("diff", "--name-only", "HEAD").split())
    names |= set(tidy_changed.git("ls-files", "--others", "--exclude-standard").split())
    return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build")
    parser.add_argument("--base", help="count changes from this commit (default: .ci/lint-base)")
    parser.add_argument("--all", action="store_true", help="every header")
    args = parser.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    graph = include_graph("src")
    base = None
    if not args.all:
        base = tidy_changed.git("rev-parse", args.base).strip() if args.base else \
            tidy_changed.recorded_base()
    if base is None:
        selected = set(graph)
        why = "every header" + ("" if args.all else " (no .ci/lint-base commit in this clone)")
    else:
        base = tidy_changed.git("merge-base", base, "HEAD").strip()
        paths = changed_paths(base)
        if any(FLAG_FILES.search(p) for p in paths):
            selected = set(graph)
            why = f"every header (build files changed since {base[:12]})"
        else:
            changed = {p[len("src/"):] for p in paths if p.startswith("src/") and p.endswith(".h")}
            selected = with_includers(graph, changed)
            why = (f"{len(changed)} changed since {base[:12]} and the headers that include "
                   "them")
    print(f"header_check_set: {len(selected)} of {len(graph)} headers: {why}", file=sys.stderr)
    for rel in sorted(selected):
        print(f"CMakeFiles/tandem_header_check.dir/header_check/{c_identifier(rel)}.cpp.o")
    return 0


if __name__ == "__main__":
    sys.exit(main())
