#!/usr/bin/env bash
# Least-loaded vs round-robin under a skewed workload (issue 4 §2), as measured in
# docs/benchmarks.md: for each seed, a fresh DP=2 server per policy (both policies back to
# back, alternating which goes first), each engine core pinned to its own CPU, one open-loop
# `tandem bench serve` run. Summarise with tools/skew_summary.py OUT_DIR.
#
# usage: scripts/bench_dp_skew.sh MODEL OUT_DIR [FIRST_SEED] [LAST_SEED]
# env: TANDEM_BIN (build/tandem), RATE (req/s, 5.8), OUTLEN (16), NUM_PROMPTS (128),
#      MAX_NUM_SEQS (1), PORT_BASE (8300), RPC_BASE (29700)
set -euo pipefail
MODEL=$1 OUT=$2 FIRST=${3:-1} LAST=${4:-30}
BIN=${TANDEM_BIN:-$(dirname "$0")/../build/tandem}
RATE=${RATE:-5.8} OUTLEN=${OUTLEN:-16} NP=${NUM_PROMPTS:-128} MNS=${MAX_NUM_SEQS:-1}
PORT_BASE=${PORT_BASE:-8300} RPC_BASE=${RPC_BASE:-29700}
mkdir -p "$OUT"

run_one() {  # run_one INDEX POLICY SEED
  local i=$1 policy=$2 seed=$3 port=$((PORT_BASE + $1 % 100)) rpc=$((RPC_BASE + $1 % 100))
  setsid timeout 300 "$BIN" serve "$MODEL" --host 127.0.0.1 --port "$port" \
    --data-parallel-size 2 --api-server-count 1 --data-parallel-rpc-port "$rpc" \
    --max-num-seqs "$MNS" --num-threads 1 --max-model-len 1024 \
    --data-parallel-load-balancer "$policy" --disable-log-requests > "$OUT/$i.server.log" 2>&1 &
  local server=$!
  for _ in $(seq 1 240); do
    local m; m=$(curl -s "127.0.0.1:$port/metrics" | grep '^tandem:engine_alive' || true)
    if grep -q 'engine="0"} 1' <<<"$m" && grep -q 'engine="1"} 1' <<<"$m"; then break; fi
    sleep 0.5
  done
  # One accelerator per rank, emulated: each engine core (all its threads) on its own CPU.
  for pid in $(pgrep -g "$server" -f _engine-core); do
    local rank; rank=$(tr '\0' ' ' < "/proc/$pid/cmdline" | grep -o '"dp_rank":[0-9]*' | cut -d: -f2)
    taskset -a -p -c "$rank" "$pid" > /dev/null
  done
  cut -d' ' -f1 /proc/loadavg > "$OUT/$i.loadavg"
  timeout 300 "$BIN" bench serve --base-url "http://127.0.0.1:$port" --num-prompts "$NP" \
    --max-concurrency "$NP" --request-rate "$RATE" --random-input-len 32 \
    --random-output-len "$OUTLEN" --ignore-eos --long-request-fraction 0.25 \
    --long-request-multiplier 10 --seed "$seed" --disable-tqdm \
    --result-file "$OUT/$i.json" > "$OUT/$i.bench.log" 2>&1 || true
  sleep 0.3
  curl -s "127.0.0.1:$port/metrics" | grep '^tandem:engine_generation_tokens_total' \
    > "$OUT/$i.metrics" || true
  echo "$i $policy $seed" > "$OUT/$i.meta"
  kill -TERM -"$server" 2>/dev/null || true
  sleep 1.5
  kill -KILL -"$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
}

i=0
for seed in $(seq "$FIRST" "$LAST"); do
  if (( seed % 2 )); then order="least-loaded round-robin"; else order="round-robin least-loaded"; fi
  for policy in $order; do
    run_one "$i" "$policy" "$seed"
    echo "run $i: $policy seed $seed $(date +%T)"
    i=$((i + 1))
  done
done
