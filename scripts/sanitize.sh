#!/usr/bin/env bash
# The sanitizer tier: builds the unit tests of the threaded modules (engine, router, comm,
# server, ipc, http) with ThreadSanitizer into build-tsan/ and runs them; any data race or
# lock-order inversion fails the run (halt_on_error), naming both stacks.
#   scripts/sanitize.sh thread
# Configures build-tsan/ on first use (-DTANDEM_SANITIZE=thread, RelWithDebInfo-like -O1) and
# builds only those test binaries and what they link.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -ne 1 ] || [ "$1" != thread ]; then
  echo "usage: scripts/sanitize.sh thread" >&2
  exit 2
fi
BUILD=build-tsan
MODULES=(engine router comm server ipc http)
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1" \
    -DTANDEM_SANITIZE=thread
fi
targets=()
for m in "${MODULES[@]}"; do targets+=("unit_$m"); done
cmake --build "$BUILD" --target "${targets[@]}"
SHARED="${TANDEM_SHARED_DIR:-../shared}"
if [ ! -d "$SHARED/models" ] && [ -d /work/shared/models ]; then SHARED=/work/shared; fi
export TANDEM_SHARED_DIR="$(cd "$SHARED" && pwd)"
# second_deadlock_stack: both stacks of an inversion; tools/tsan.supp: libzmq's insides only.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tools/tsan.supp ${TSAN_OPTIONS:-}"
status=0
for m in "${MODULES[@]}"; do
  echo "== ThreadSanitizer: unit_$m"
  if ! "$BUILD/tests/unit_$m" --gtest_brief=1; then
    echo "sanitize.sh: unit_$m failed under ThreadSanitizer (see the report above)" >&2
    status=1
  fi
done
exit $status
