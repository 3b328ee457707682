#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test tier (unit, parity, e2e; multinode
# when run as root, else those report SKIP), then the ThreadSanitizer tier (the unit tests of
# the threaded modules in their own build, build-tsan/; TANDEM_TSAN=0 skips it), then the fuzz
# tier: each fuzz/ target for TANDEM_FUZZ_SECONDS (default 20; 0 skips it) in its own clang
# build, build-fuzz/. Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`, and skip
# the sanitizer and fuzz tiers.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
ctest --test-dir build --output-on-failure --timeout 900 "$@"
if [ $# -eq 0 ] && [ "${TANDEM_TSAN:-1}" != 0 ]; then
  bash scripts/sanitize.sh thread
fi
fuzz_s="${TANDEM_FUZZ_SECONDS:-20}"
if [ $# -eq 0 ] && [ "$fuzz_s" != 0 ]; then
  bash scripts/fuzz.sh all "$fuzz_s"
fi
