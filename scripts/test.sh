#!/usr/bin/env bash
# Installs what is missing, builds, and runs every tier:
#   lint       clang-format over the tree, clang-tidy on recently changed lines (scripts/lint.sh;
#              TANDEM_LINT=0 skips it)
#   ctest      unit, parity, e2e; multinode when run as root, oracle (tandem vs llama.cpp,
#              tests/oracle/) when the peer llama.cpp is built; else those report SKIP
#   TSan       the threaded modules' unit tests in build-tsan/ (TANDEM_TSAN=0 skips it)
#   ASan+UBSan the whole tree's unit, parity and e2e tiers in build-asan/ (TANDEM_ASAN=0 skips it;
#              TANDEM_ASAN_TIERS picks tiers)
#   fuzz       each fuzz/ target for TANDEM_FUZZ_SECONDS (default 20; 0 skips it) in build-fuzz/
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit`, and skip every other tier.
# Each step prints how long it took ("== test.sh: STEP took N s"), CI's budget being 90 minutes.
# Once the release build and lint are done, the sanitizer and fuzz folders build in the background
# at idle priority (SCHED_IDLE: they get only the CPU time the tests leave, which the e2e tests,
# mostly waiting on their servers, leave plenty of); each tier waits for its own build, whose
# log is build/background/<tier>.log.
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

fuzz_s="${TANDEM_FUZZ_SECONDS:-20}"
tiers=()
if [ $# -eq 0 ] && [ "${TANDEM_TSAN:-1}" != 0 ]; then tiers+=(tsan); fi
if [ $# -eq 0 ] && [ "${TANDEM_ASAN:-1}" != 0 ]; then tiers+=(asan); fi
if [ $# -eq 0 ] && [ "$fuzz_s" != 0 ]; then tiers+=(fuzz); fi
BG="$PWD/build/background"
rm -rf "$BG"
mkdir -p "$BG"
# One build at a time, in the order the tiers run; each writes TIER.rc when it ends. In a session
# of its own (setsid), so that a failing step ends the whole tree of them (the EXIT trap).
setsid bash -c '
  bg="$1"
  shift
  idle=(chrt --idle 0)
  if ! chrt --idle 0 true 2>/dev/null; then idle=(nice -n 19); fi
  for tier in "$@"; do
    case "$tier" in
      tsan) cmd=(bash scripts/sanitize.sh thread build) ;;
      asan) cmd=(bash scripts/sanitize.sh address build) ;;
      fuzz) cmd=(bash scripts/fuzz.sh all 0) ;;
    esac
    rc=0
    "${idle[@]}" "${cmd[@]}" >"$bg/$tier.log" 2>&1 || rc=$?
    echo "$rc" >"$bg/$tier.rc"
  done' _ "$BG" "${tiers[@]}" &
background=$!
trap 'kill -- -"$background" 2>/dev/null || true' EXIT

# Waits for TIER's background build; on failure prints its log and fails.
await_build() {
  while [ ! -f "$BG/$1.rc" ]; do
    # (the builder is never reaped here: a zombie counts as gone)
    state="$(ps -o stat= -p "$background" 2>/dev/null || true)"
    if { [ -z "$state" ] || [ "${state:0:1}" = Z ]; } && [ ! -f "$BG/$1.rc" ]; then
      echo "test.sh: the background build of $1 ended without a result" >&2
      return 1
    fi
    sleep 2
  done
  if [ "$(cat "$BG/$1.rc")" != 0 ]; then
    cat "$BG/$1.log"
    echo "test.sh: building $1 failed (log above: $BG/$1.log)" >&2
    return 1
  fi
}
# Two tests at a time (the machine's two cores): an e2e test mostly waits on its servers, so the
# e2e tier takes half as long (multinode tests are RUN_SERIAL: alone).
step ctest ctest --test-dir build --output-on-failure --timeout 900 -j2 "$@"
for tier in "${tiers[@]}"; do
  step "$tier-build-wait" await_build "$tier"
  case "$tier" in
    tsan) step tsan bash scripts/sanitize.sh thread ;;
    asan) step asan bash scripts/sanitize.sh address ;;
    fuzz) step fuzz bash scripts/fuzz.sh all "$fuzz_s" ;;
  esac
done
