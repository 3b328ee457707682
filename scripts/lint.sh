#!/usr/bin/env bash
# The lint tier (STYLE.md 19): clang-format (.clang-format: Google base, 100 columns) over every
# C++ file of the repository, then clang-tidy (.clang-tidy) on the lines changed by the commits
# since the main that last landed (.ci/lint-base) and by uncommitted edits
# (tools/tidy_changed.py; whole-tree reformatting commits, listed in .git-blame-ignore-revs,
# are looked through). Needs build/ (compile_commands.json). Extra arguments go to
# tidy_changed.py, e.g. `--base main` for a branch's lines.
#   scripts/lint.sh                 # what CI runs
#   clang-format -i FILE...         # to mend what the first step reports
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "lint.sh: the files above are not clang-formatted; run: clang-format -i FILE..." >&2
  exit 1
fi
echo "lint.sh: clang-format clean over ${#files[@]} files"
python3 tools/tidy_changed.py "$@"
