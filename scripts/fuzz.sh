#!/usr/bin/env bash
# Runs one libFuzzer target of fuzz/ (or `all` of them, TANDEM_FUZZ_JOBS at a time: one per core
# by default) for SECONDS each.
#   scripts/fuzz.sh TARGET SECONDS      e.g. scripts/fuzz.sh jinja 60; scripts/fuzz.sh all 20
#   (SECONDS 0: only build them; scripts/test.sh builds in the background while other tiers run)
# Targets: gguf safetensors hf_config openai_request jinja spm_tokenizer bpe_tokenizer, and
# structured outputs' compilers and the JSON parser: gbnf json_schema regex json (each input of
# these must finish within 5 s and 1 GiB: their budgets are far below, issue 31).
# Configures build-fuzz/ with clang (-DTANDEM_FUZZ=ON: ASan + UBSan, only the sources the targets
# need) when it is not yet, builds the target, seeds a temporary corpus from the shared models
# folder (fuzz/make_seeds.py; TANDEM_SHARED_DIR, default ../shared) and runs it. A crash, a
# leak, a broken invariant or an input slower than 10 s is kept as build-fuzz/findings/TARGET/
# crash-* (leak-*, timeout-*) next to the run's log; replay one with
#   TANDEM_SHARED_DIR=... build-fuzz/fuzz/TARGET_fuzzer FILE
# Exits non-zero when any target found something.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(gguf safetensors hf_config openai_request jinja spm_tokenizer bpe_tokenizer gbnf json_schema
         regex json)
if [ $# -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh TARGET|all SECONDS   (TARGET: ${TARGETS[*]})" >&2
  exit 2
fi
if [ "$1" = all ]; then
  selected=("${TARGETS[@]}")
elif [[ " ${TARGETS[*]} " == *" $1 "* ]]; then
  selected=("$1")
else
  echo "fuzz.sh: unknown target '$1'; expected one of: ${TARGETS[*]} or all" >&2
  exit 2
fi
seconds="$2"

BUILD=build-fuzz
SHARED="${TANDEM_SHARED_DIR:-../shared}"
if [ ! -d "$SHARED/models" ] && [ -d /work/shared/models ]; then SHARED=/work/shared; fi
if [ ! -d "$SHARED/models" ]; then
  echo "fuzz.sh: no models folder in '$SHARED' (set TANDEM_SHARED_DIR to the shared folder)" >&2
  exit 2
fi
SHARED="$(cd "$SHARED" && pwd)"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DTANDEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Fuzz >/dev/null
fi

# Every selected target in one build (ninja runs two compilers at once), one build at a time on
# a shared machine (the same lock as the normal build's).
fuzzers=()
for target in "${selected[@]}"; do fuzzers+=("${target}_fuzzer"); done
flock /tmp/tandem-build.lock ninja -C "$BUILD" "${fuzzers[@]}"
if [ "$seconds" = 0 ]; then exit 0; fi

# Runs one target; its verdict goes to build-fuzz/findings/TARGET/verdict ("ok" or "FAILED").
run_target() {
  local target="$1" findings="$BUILD/findings/$1" corpus seeds log status=0 caps cov execs
  mkdir -p "$findings"
  rm -f "$findings/verdict"
  corpus="$(mktemp -d "${TMPDIR:-/tmp}/tandem-fuzz-$target-XXXXXX")"
  seeds="$corpus/seeds"
  python3 fuzz/make_seeds.py "$target" "$SHARED" "$seeds"
  mkdir "$corpus/new"
  log="$findings/fuzz.log"
  echo "fuzz.sh: $target for ${seconds} s ($(ls "$seeds" | wc -l) seeds; log $log)"
  caps=(-timeout=10 -rss_limit_mb=2048)
  case "$target" in gbnf | json_schema | regex | json) caps=(-timeout=5 -rss_limit_mb=1024) ;; esac
  TANDEM_SHARED_DIR="$SHARED" "$BUILD/fuzz/${target}_fuzzer" "$corpus/new" "$seeds" \
    -max_total_time="$seconds" "${caps[@]}" -print_final_stats=1 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || status=$?
  rm -rf "$corpus"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)"
  execs="$(grep -o 'number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*' || true)"
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $target FAILED (exit $status); findings in $findings:" >&2
    grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
    echo FAILED >"$findings/verdict"
  else
    echo "fuzz.sh: $target ok: ${execs:-?} runs, ${cov:-cov: ?} edges"
    echo ok >"$findings/verdict"
  fi
}

# TANDEM_FUZZ_JOBS targets at a time (default: one per core): each libFuzzer process is
# single-threaded, so on 2 cores two run side by side in the time of one, each as long.
jobs="${TANDEM_FUZZ_JOBS:-$(nproc)}"
if ! [[ "$jobs" =~ ^[0-9]+$ ]] || [ "$jobs" -lt 1 ]; then
  echo "fuzz.sh: TANDEM_FUZZ_JOBS must be a positive integer, got '$jobs'" >&2
  exit 2
fi
running=0
for target in "${selected[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$target" &
  running=$((running + 1))
done
wait || true
failed=()
for target in "${selected[@]}"; do
  if [ "$(cat "$BUILD/findings/$target/verdict" 2>/dev/null)" != ok ]; then failed+=("$target"); fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]} (see $BUILD/findings/)" >&2
  exit 1
fi
