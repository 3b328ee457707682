#!/usr/bin/env bash
# tandem vs llama.cpp's llama-server on the same GGUF, one server after the other, same load:
#   scripts/bench_vs_llamacpp.sh MODEL.gguf LLAMA_SERVER [NUM_THREADS]
# `tandem bench serve` (input 128, output 32, ignore_eos, greedy) at concurrency 1 and 8
# against each; prints output tokens/s per server and the ratio tandem / llama.cpp.
# LLAMA_SERVER: from ../shared/peers/build_llamacpp.sh. Run on an otherwise idle machine (2
# cores: any other busy process wrecks the numbers). Results: docs/benchmarks.md.
set -u
cd "$(dirname "$0")/.."
BIN=${TANDEM_BIN:-build/tandem}
MODEL=${1:?usage: scripts/bench_vs_llamacpp.sh MODEL.gguf LLAMA_SERVER [NUM_THREADS]}
LLAMA=${2:?usage: scripts/bench_vs_llamacpp.sh MODEL.gguf LLAMA_SERVER [NUM_THREADS]}
THREADS=${3:-2}
PORT=18779
declare -A TPS
for server in tandem llama.cpp; do
  if [ "$server" = tandem ]; then
    $BIN serve "$MODEL" --host 127.0.0.1 --port $PORT --num-threads "$THREADS" \
      --max-num-seqs 8 > /tmp/bench_vs_srv.log 2>&1 &
  else
    "$LLAMA" -m "$MODEL" --host 127.0.0.1 --port $PORT -t "$THREADS" -tb "$THREADS" -np 8 \
      -c 8192 --no-webui > /tmp/bench_vs_srv.log 2>&1 &
  fi
  pid=$!
  for _ in $(seq 1 600); do
    curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/health 2>/dev/null | grep -q 200 && break
    sleep 0.2
  done
  for c in 1 8; do
    out=$($BIN bench serve --port $PORT --host 127.0.0.1 --num-prompts 16 --max-concurrency $c \
      --random-input-len 128 --random-output-len 32 --ignore-eos --disable-tqdm 2>&1)
    TPS[$server,$c]=$(echo "$out" | grep -i "Output token throughput" | awk '{print $NF}')
    echo "$server concurrency=$c output_tok_s=${TPS[$server,$c]}"
  done
  kill $pid
  wait $pid 2>/dev/null
done
for c in 1 8; do
  awk -v a="${TPS[tandem,$c]}" -v b="${TPS[llama.cpp,$c]}" -v c="$c" \
    'BEGIN { if (b > 0) printf "concurrency=%s tandem/llama.cpp = %.2f\n", c, a / b }'
done
