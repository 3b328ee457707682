#!/usr/bin/env bash
# The sanitizer tiers, each in its own build folder, each failing on the first report.
#   scripts/sanitize.sh thread    ThreadSanitizer (build-tsan/): the unit tests of the threaded
#                                 modules (engine, router, comm, server, ipc, http); any data race
#                                 or lock-order inversion fails the run, naming both stacks.
#   scripts/sanitize.sh address   AddressSanitizer + LeakSanitizer + UndefinedBehaviorSanitizer
#                                 (build-asan/): the whole tree — every unit test binary, the
#                                 parity tests, and (TANDEM_ASAN_TIERS) the e2e tests of
#                                 untrusted input and process boundaries (ASAN_E2E_TESTS
#                                 below) against build-asan/tandem (its engine cores, API
#                                 servers, managers and agents included). Each
#                                 process writes its reports to build-asan/sanitizer-reports/;
#                                 any report there fails the run, printed whole.
# Each configures its folder on first use (-DTANDEM_SANITIZE=...) as a unity build
# (CMAKE_UNITY_BUILD: each target's sources compiled 16 to a translation unit, so Boost.Beast,
# nlohmann::json and their templates are compiled once per 16 sources, not per source): the
# whole tree with ASan + UBSan builds in ~9 minutes on 2 cores instead of over an hour (1090
# CPU-s; 8 to a unit took 1391, and the release tree keeps 8 for quicker rebuilds). ASan
# builds at -O0 (half the compile time of -O1; the e2e tier still runs well within its
# timeouts), TSan at -O1 (its run time grows most without optimization).
# TANDEM_ASAN_TIERS picks the address mode's tiers: "unit parity e2e" by default (what CI runs;
# on 2 cores about 12 minutes of build, 2 of unit, 1 of parity, 6 of e2e two tests at a time);
# e.g. TANDEM_ASAN_TIERS=unit for a quick look.
# The unit tiers run each test binary as a few shards (a process each, two at a time, as the
# release tier does): under ASan a process start costs ~0.25 s, and the 811 tests one process
# each took 246 s.
# A second argument `build` only configures and builds (scripts/test.sh builds the sanitizer
# folders in the background while the release tests run).
set -euo pipefail
cd "$(dirname "$0")/.."

mode="${1:-}"
only_build=0
if [ "${2:-}" = build ]; then only_build=1; fi
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ "$mode" != thread ] && [ "$mode" != address ]; } ||
   { [ $# -eq 2 ] && [ "$2" != build ]; }; then
  echo "usage: scripts/sanitize.sh thread|address [build]" >&2
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
  # -fno-sanitize-recover: undefined behaviour aborts like an ASan report instead of a warning.
  FLAGS="-O0 -fno-sanitize-recover=all"
  SANITIZE=address,undefined
  REPORTS="$PWD/$BUILD/sanitizer-reports"
  rm -rf "$REPORTS"
  mkdir -p "$REPORTS"
  # log_path: each process (a test's children included: every tandem process the e2e tier
  # starts) writes its report to REPORTS/{asan,ubsan}.PID.
  export ASAN_OPTIONS="detect_leaks=1 log_path=$REPORTS/asan ${ASAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 log_path=$REPORTS/ubsan ${UBSAN_OPTIONS:-}"
  # Tests that change what they do under ASan read this (an address-space limit cannot be set).
  export TANDEM_SANITIZE=address
fi
# The web UI is the same JavaScript in every folder: when the release folder exists, its
# ui-dist (brought up to date here) is embedded instead of building it again.
ui_args=()
if [ -f build/build.ninja ]; then
  ninja -C build tandem_ui_dist >/dev/null
  ui_args=(-DTANDEM_UI_PREBUILT_DIST="$PWD/build/ui-dist")
fi
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$FLAGS" \
    -DTANDEM_SANITIZE="$SANITIZE" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
    "${ui_args[@]}"
fi
status=0

# Runs the unit test binaries named (e.g. unit_http) under ctest, each as its shards (a few ctest
# tests per binary, tests/CMakeLists.txt), two at a time; ctest prints the output of each that
# failed.
run_unit_binaries() {
  local pattern
  pattern="^($(IFS='|'; echo "$*"))_[0-9]+\$"
  if ! ctest --test-dir "$BUILD" --output-on-failure --timeout 900 -j2 -R "$pattern"; then
    echo "sanitize.sh: unit tests failed under $NAME" >&2
    return 1
  fi
}

if [ "$mode" = thread ]; then
  targets=()
  for m in "${MODULES[@]}"; do targets+=("unit_$m"); done
  cmake --build "$BUILD" --target "${targets[@]}"
  if [ "$only_build" = 1 ]; then exit 0; fi
  echo "== $NAME: ${targets[*]}"
  run_unit_binaries "${targets[@]}" || status=1
  exit $status
fi

ASAN_E2E_TESTS="http_hardening|request_limits|hostile_inputs|structured_outputs|errors|tokenize"
ASAN_E2E_TESTS+="|anthropic_messages|responses|vllm_request_fields|vllm_edge_semantics|tls"
ASAN_E2E_TESTS+="|lifecycle|manager_edges|dp_load_balancing|tensor_parallel|batching|cli"
ASAN_E2E_TESTS+="|openai_client"

# address: every test binary, and the tandem binary for the e2e tier (not the header check:
# nothing to run).
read -r -a tiers <<< "${TANDEM_ASAN_TIERS:-unit parity e2e}"
targets=()
if [[ " ${tiers[*]} " == *" e2e "* ]]; then targets+=(tandem); fi
for t in $(ninja -C "$BUILD" -t targets all | grep -oE '^(unit_[a-z_]+|parity_tests):' |
           tr -d ':' | sort -u); do
  targets+=("$t")
done
cmake --build "$BUILD" --target "${targets[@]}"
if [ "$only_build" = 1 ]; then exit 0; fi
for tier in "${tiers[@]}"; do
  echo "== $NAME: $tier tier"
  case "$tier" in
    # Every unit test binary whole (layering, the tools' and the UI's Vitest tests run no
    # instrumented code: the release tier runs them).
    unit)
      mapfile -t units < <(printf '%s\n' "${targets[@]}" | grep -E '^unit_')
      run_unit_binaries "${units[@]}" || status=1
      continue ;;
    parity) args=(-L parity -j2) ;;
    # The e2e tests whose servers take untrusted input or cross process boundaries (the release
    # tier runs them all): HTTP framing and limits, request parsing and errors, structured
    # outputs, tokenize, the Anthropic and Responses APIs, TLS, shutdown, the manager's edges,
    # multi-process DP/TP, batching, the hostile corpus. Left to the release tier: model math
    # (qwen35, w8a8, expert_parallel, speculative, golden: the parity tier runs it under ASan),
    # start-up refusals (bad_models_and_flags: the gguf/safetensors/hf_config fuzzers), soak,
    # the UI, flag tables. Two at a time: an e2e test mostly waits on its servers.
    e2e) args=(-L e2e -j2 -R "^e2e_test_(${ASAN_E2E_TESTS})\$") ;;
    *) echo "sanitize.sh: unknown tier '$tier' in TANDEM_ASAN_TIERS (unit parity e2e)" >&2
       exit 2 ;;
  esac
  if ! ctest --test-dir "$BUILD" --output-on-failure --timeout 900 "${args[@]}"; then
    echo "sanitize.sh: the $tier tier failed under $NAME" >&2
    status=1
  fi
done
if compgen -G "$REPORTS/*" >/dev/null; then
  for f in "$REPORTS"/*; do
    echo "== $f"
    cat "$f"
  done
  echo "sanitize.sh: sanitizer reports above ($REPORTS)" >&2
  status=1
fi
exit $status
