#!/usr/bin/env bash
# MTP speculation k = 0 (off), 1, 2, 3 on a Qwen3.5 model, one server after the other:
#   scripts/bench_mtp.sh [MODEL_DIR]   (default ../shared/models/tiny-qwen3.5-moe)
# Output tokens/s and mean TPOT at concurrency 1 (input 64, output 64, ignore_eos), and the
# spec_decode counters. Run on an otherwise idle machine. Results: docs/benchmarks.md.
set -u
cd "$(dirname "$0")/.."
BIN=${TANDEM_BIN:-build/tandem}
MODEL=${1:-../shared/models/tiny-qwen3.5-moe}
for k in 0 1 2 3; do
  args=(--no-enable-prefix-caching --max-model-len 512)
  [ "$k" != 0 ] && args+=(--speculative-config "{\"method\":\"qwen3_5_mtp\",\"num_speculative_tokens\":$k}")
  $BIN serve $MODEL --host 127.0.0.1 --port 18779 --num-threads 1 "${args[@]}" > /tmp/bench_mtp_srv.log 2>&1 &
  pid=$!
  for i in $(seq 1 100); do curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18779/health 2>/dev/null | grep -q 200 && break; sleep 0.2; done
  out=$($BIN bench serve --port 18779 --host 127.0.0.1 --num-prompts 32 --max-concurrency 1 --random-input-len 64 --random-output-len 64 --ignore-eos --disable-tqdm 2>&1)
  tps=$(echo "$out" | grep -i "Output token throughput" | awk '{print $NF}')
  tpot=$(echo "$out" | grep -i "Mean TPOT" | awk '{print $NF}')
  m=$(curl -s 127.0.0.1:18779/metrics | grep -E "^vllm:spec_decode_num_(drafts|draft_tokens|accepted_tokens)_total" | awk '{printf "%s ", $2}')
  echo "k=$k out_tok_s=$tps mean_tpot_ms=$tpot drafts/draft_tokens/accepted=$m"
  kill $pid; wait $pid 2>/dev/null
done
