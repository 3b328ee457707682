#!/usr/bin/env bash
# The sanitizer tiers, each in its own build folder, each failing on the first report.
#   scripts/sanitize.sh thread    ThreadSanitizer (build-tsan/): the unit tests of the threaded
#                                 modules (engine, router, comm, server, ipc, http); any data race
#                                 or lock-order inversion fails the run, naming both stacks.
#   scripts/sanitize.sh address   AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer
#                                 (build-asan/): the unit tests of the modules that take untrusted
#                                 bytes (core, http, text, structured: HTTP framing, JSON,
#                                 tokenizers, templates, grammars; model files are the fuzz
#                                 tier's, also under ASan + UBSan). Each process
#                                 writes its reports to build-asan/sanitizer-reports/; any report
#                                 there fails the run, printed whole.
# Each configures its folder on first use (-DTANDEM_SANITIZE=..., Debug at -O1) and builds only
# what it runs. The whole tree (the tandem binary for e2e, the parity tests) takes over an hour
# to build with ASan + UBSan on 2 cores, past CI's budget; `cmake --build build-asan` and
# `ctest --test-dir build-asan` run it by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
if [ $# -ne 1 ] || { [ "$mode" != thread ] && [ "$mode" != address ]; }; then
  echo "usage: scripts/sanitize.sh thread|address" >&2
  exit 2
fi
SHARED="${TANDEM_SHARED_DIR:-../shared}"
if [ ! -d "$SHARED/models" ] && [ -d /work/shared/models ]; then SHARED=/work/shared; fi
export TANDEM_SHARED_DIR="$(cd "$SHARED" && pwd)"

if [ "$mode" = thread ]; then
  BUILD=build-tsan
  NAME=ThreadSanitizer
  MODULES=(engine router comm server ipc http)
  FLAGS="-O1"
  SANITIZE=thread
  # second_deadlock_stack: both stacks of an inversion; tools/tsan.supp: libzmq's insides only.
  export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tools/tsan.supp ${TSAN_OPTIONS:-}"
else
  BUILD=build-asan
  NAME="AddressSanitizer + UndefinedBehaviorSanitizer"
  MODULES=(core http text structured)
  # -fno-sanitize-recover: undefined behaviour aborts like an ASan report instead of a warning.
  FLAGS="-O1 -fno-sanitize-recover=all"
  SANITIZE=address,undefined
  REPORTS="$PWD/$BUILD/sanitizer-reports"
  rm -rf "$REPORTS"
  mkdir -p "$REPORTS"
  # log_path: each process (a test's children included) writes its report to
  # REPORTS/{asan,ubsan}.PID.
  export ASAN_OPTIONS="detect_leaks=1 log_path=$REPORTS/asan ${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 log_path=$REPORTS/ubsan ${UBSAN_OPTIONS:-}"
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$FLAGS" \
    -DTANDEM_SANITIZE="$SANITIZE"
fi
targets=()
for m in "${MODULES[@]}"; do targets+=("unit_$m"); done
cmake --build "$BUILD" --target "${targets[@]}"
status=0
for m in "${MODULES[@]}"; do
  echo "== $NAME: unit_$m"
  if ! "$BUILD/tests/unit_$m" --gtest_brief=1; then
    echo "sanitize.sh: unit_$m failed under $NAME (see the report above)" >&2
    status=1
  fi
done
if [ "$mode" = address ] && compgen -G "$REPORTS/*" >/dev/null; then
  for f in "$REPORTS"/*; do
    echo "== $f"
    cat "$f"
  done
  echo "sanitize.sh: sanitizer reports above ($REPORTS)" >&2
  status=1
fi
exit $status
