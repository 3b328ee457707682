#!/usr/bin/env bash
# Installs what is missing, builds, and runs every tier:
#   lint       clang-format over the tree, clang-tidy on recently changed lines (scripts/lint.sh;
#              TANDEM_LINT=0 skips it)
#   ctest      unit, parity, e2e; multinode when run as root, else those report SKIP
#   TSan       the threaded modules' unit tests in build-tsan/ (TANDEM_TSAN=0 skips it)
#   ASan+UBSan the whole tree's unit, parity and e2e tiers in build-asan/ (TANDEM_ASAN=0 skips it;
#              TANDEM_ASAN_TIERS picks tiers)
#   fuzz       each fuzz/ target for TANDEM_FUZZ_SECONDS (default 20; 0 skips it) in build-fuzz/
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`, and skip every other tier.
# Each step prints how long it took ("== test.sh: STEP took N s"), CI's budget being 90 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."

step() {
  local name="$1" started=$SECONDS
  shift
  "$@"
  echo "== test.sh: $name took $((SECONDS - started)) s (all steps so far: $SECONDS s)"
}

step setup bash scripts/setup.sh
step build bash scripts/build.sh
if [ $# -eq 0 ] && [ "${TANDEM_LINT:-1}" != 0 ]; then
  step lint bash scripts/lint.sh
fi
# Two tests at a time (the machine's two cores): an e2e test mostly waits on its servers, so the
# e2e tier takes half as long (multinode tests are RUN_SERIAL: alone).
step ctest ctest --test-dir build --output-on-failure --timeout 900 -j2 "$@"
if [ $# -eq 0 ] && [ "${TANDEM_TSAN:-1}" != 0 ]; then
  step tsan bash scripts/sanitize.sh thread
fi
if [ $# -eq 0 ] && [ "${TANDEM_ASAN:-1}" != 0 ]; then
  step asan bash scripts/sanitize.sh address
fi
fuzz_s="${TANDEM_FUZZ_SECONDS:-20}"
if [ $# -eq 0 ] && [ "$fuzz_s" != 0 ]; then
  step fuzz bash scripts/fuzz.sh all "$fuzz_s"
fi
