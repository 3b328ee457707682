#!/usr/bin/env bash
# Speculative decoding (ngram) on vs off, same run, one server after the other:
#   scripts/bench_speculative.sh MODEL.gguf [NUM_THREADS]
# Output tokens/s at concurrency 1 and 8 (tandem bench serve, input 128, output 64,
# ignore_eos) and the spec_decode counters. Run on an otherwise idle machine (2 cores: any
# other busy process wrecks the numbers). Results: docs/benchmarks.md, "Speculative decoding".
set -u
cd "$(dirname "$0")/.."
BIN=${TANDEM_BIN:-build/tandem}
MODEL=${1:?usage: scripts/bench_speculative.sh MODEL.gguf [NUM_THREADS]}
THREADS=${2:-2}
for cfg in off '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":3}'; do
  args=()
  [ "$cfg" != off ] && args=(--speculative-config "$cfg")
  $BIN serve $MODEL --host 127.0.0.1 --port 18778 --num-threads $THREADS "${args[@]}" > /tmp/bench2_srv.log 2>&1 &
  pid=$!
  for i in $(seq 1 300); do curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:18778/health 2>/dev/null | grep -q 200 && break; sleep 0.2; done
  for c in 1 8; do
    out=$($BIN bench serve --port 18778 --host 127.0.0.1 --num-prompts 16 --max-concurrency $c --random-input-len 128 --random-output-len 64 --ignore-eos --disable-tqdm 2>&1)
    tps=$(echo "$out" | grep -i "Output token throughput" | awk '{print $NF}')
    echo "spec=${cfg:0:5} concurrency=$c output_tok_s=$tps"
  done
  curl -s 127.0.0.1:18778/metrics | grep -E "^vllm:spec_decode_num_(drafts|draft_tokens|accepted_tokens)_total" | awk '{print "  " $1 " " $2}' | sed 's/{.*}//'
  kill $pid; wait $pid 2>/dev/null
done
