#!/usr/bin/env python3
"""clang-tidy (.clang-tidy) on the C++ lines that recent commits changed.

Usage: tools/tidy_changed.py [--build build] [--base REV | --since-hours H] [-j N]

The lines checked are those that `git blame` attributes to a commit of the window, plus
uncommitted ones. The window is BASE..HEAD, BASE being --base, else the commit named in
.ci/lint-base (the main that last landed: each session writes it when it starts, so CI checks
exactly the lines of the submission), else the commits of the last --since-hours (default 3)
before HEAD's commit time. A BASE that is not an ancestor of HEAD counts from its merge base.
Commits listed in .git-blame-ignore-revs (whole-tree reformatting) are looked through, as
`git blame --ignore-revs-file` does, so a formatting commit does not make every line "changed".
Each changed file is checked with `clang-tidy -line-filter` so that only its changed lines
report; headers get their compile command interpolated from build/compile_commands.json. In a
unity build (CMAKE_UNITY_BUILD, scripts/build.sh) the database names the unity sources; each
source they include gets its unity source's command.
Exit status: 0 when no warning is reported (.clang-tidy makes every warning an error), 1
otherwise, 2 on a usage or set-up error.
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CXX = re.compile(r"\.(cpp|h)$")
# The fuzz targets build only in their own clang tree (build-fuzz/), not in build/.
SKIP = re.compile(r"^fuzz/")
HEADER = re.compile(r"^([0-9a-f]{40}) \d+ (\d+)")
# The build is gcc's; clang-tidy parses with clang 14, for which Boost 1.74's Asio looks for the
# Coroutines TS (__cpp_coroutines) and so hides co_await support that gcc's C++20 gets.
CLANG_ONLY_ARGS = ["-extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1",
                   "-extra-arg=-DBOOST_ASIO_HAS_STD_COROUTINE=1"]


# GCC's precompiled header (cmake/TandemPch.cmake) is forced in with -include; clang cannot read
# GCC's .gch next to it, so the commands clang-tidy gets parse the plain headers instead.
PCH_INCLUDE = re.compile(r"cmake_pch\.hxx$")


UNITY_SOURCE = re.compile(r"/Unity/unity_\d+_cxx\.cxx$")
UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def split_unity(commands):
    """Replaces each unity source's entry by one entry per source it includes."""
    out = []
    for entry in commands:
        path = os.path.join(entry["directory"], entry["file"])
        if not UNITY_SOURCE.search(path) or not os.path.isfile(path):
            out.append(entry)
            continue
        with open(path) as f:
            included = UNITY_INCLUDE.findall(f.read())
        for source in included:
            copy = dict(entry)
            if "command" in copy:
                copy["command"] = copy["command"].replace(entry["file"], source)
            else:
                copy["arguments"] = [source if a == entry["file"] else a
                                     for a in copy["arguments"]]
            copy["file"] = source
            out.append(copy)
    return out


def without_pch(build, out_dir):
    """Writes build's compile_commands.json to out_dir without the PCH flags, unity sources
    split into their sources."""
    with open(os.path.join(build, "compile_commands.json")) as f:
        commands = split_unity(json.load(f))
    for entry in commands:
        args = shlex.split(entry.pop("command")) if "command" in entry else entry["arguments"]
        kept = []
        i = 0
        while i < len(args):
            if args[i] == "-include" and i + 1 < len(args) and PCH_INCLUDE.search(args[i + 1]):
                i += 2
                continue
            if args[i] != "-Winvalid-pch":
                kept.append(args[i])
            i += 1
        entry["arguments"] = kept
    with open(os.path.join(out_dir, "compile_commands.json"), "w") as f:
        json.dump(commands, f)


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


LINT_BASE_FILE = os.path.join(".ci", "lint-base")


def recorded_base():
    """The commit .ci/lint-base names, or None when there is none or it is not in this clone."""
    if not os.path.isfile(LINT_BASE_FILE):
        return None
    with open(LINT_BASE_FILE) as f:
        words = [w for w in f.read().split() if not w.startswith("#")]
    rev = next((w for w in words if re.fullmatch(r"[0-9a-f]{7,40}", w)), None)
    if rev is None:
        return None
    found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", rev + "^{commit}"],
                           capture_output=True, text=True)
    return found.stdout.strip() if found.returncode == 0 else None


def window_commits(args):
    """Returns (base or None, set of commit ids in the window)."""
    base = git("rev-parse", args.base).strip() if args.base else None
    if base is None and args.since_hours is None:
        base = recorded_base()
        if base is None:
            print(f"tidy_changed: {LINT_BASE_FILE} names no commit of this clone; checking "
                  "the last 3 hours' commits", file=sys.stderr)
    if base is not None:
        base = git("merge-base", base, "HEAD").strip()
    else:
        head_time = int(git("log", "-1", "--format=%ct", "HEAD").strip())
        before = head_time - int((args.since_hours or 3.0) * 3600)
        base = git("rev-list", "-1", f"--before={before}", "HEAD").strip() or None
    revs = git("rev-list", f"{base}..HEAD" if base else "HEAD").split()
    return base, set(revs)


def changed_files(base):
    names = git("diff", "--name-only", base if base else git("hash-object", "-t", "tree",
                                                                "/dev/null").strip(), "--",
                "*.cpp", "*.h").split()
    names += git("diff", "--name-only", "HEAD", "--", "*.cpp", "*.h").split()  # uncommitted
    return sorted({n for n in names if os.path.isfile(n) and CXX.search(n) and
                   not SKIP.search(n)})


def changed_lines(path, commits, ignore_file):
    cmd = ["blame", "--porcelain"]
    if ignore_file:
        cmd += ["--ignore-revs-file", ignore_file]
    lines = []
    for row in git(*cmd, "--", path).splitlines():
        m = HEADER.match(row)
        if m and (m.group(1) in commits or m.group(1) == "0" * 40):
            lines.append(int(m.group(2)))
    ranges = []
    for n in sorted(lines):
        if ranges and ranges[-1][1] + 1 == n:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ranges


def tidy(path, ranges, build):
    line_filter = json.dumps([{"name": path, "lines": ranges}], separators=(",", ":"))
    proc = subprocess.run(["clang-tidy", "-p", build, "--quiet", f"-line-filter={line_filter}",
                           *CLANG_ONLY_ARGS, path], capture_output=True, text=True)
    return path, proc.returncode, proc.stdout + proc.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--since-hours", type=float)
    parser.add_argument("--base")
    parser.add_argument("-j", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    os.chdir(git("rev-parse", "--show-toplevel").strip())
    if not os.path.isfile(os.path.join(args.build, "compile_commands.json")):
        print(f"tidy_changed: {args.build}/compile_commands.json not found; build first "
              "(scripts/build.sh)", file=sys.stderr)
        return 2
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        # A shallow clone has no history to tell changed lines from old ones: every line would
        # be "changed" and clang-tidy would take an hour. Said, not silently skipped.
        print("tidy_changed: WARNING: shallow clone, no history to find changed lines; "
              "clang-tidy skipped (git fetch --unshallow to run it)", file=sys.stderr)
        return 0
    base, commits = window_commits(args)
    ignore_file = ".git-blame-ignore-revs" if os.path.isfile(".git-blame-ignore-revs") else None
    work = []
    for path in changed_files(base):
        ranges = changed_lines(path, commits, ignore_file)
        if ranges:
            work.append((path, ranges))
    print(f"tidy_changed: {len(work)} files with changed lines since "
          f"{base[:12] if base else 'the first commit'}", flush=True)
    failed = []
    db = tempfile.TemporaryDirectory(prefix="tidy-db-")
    without_pch(args.build, db.name)
    with db, concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.j)) as pool:
        for path, rc, out in pool.map(lambda w: tidy(w[0], w[1], db.name), work):
            if rc != 0:
                failed.append(path)
                sys.stdout.write(out)
    if failed:
        print(f"tidy_changed: clang-tidy reported on {len(failed)} files: "
              + " ".join(failed), file=sys.stderr)
        return 1
    print("tidy_changed: clean")
    return 0


if __name__ == "__main__":
    sys.exit(main())
