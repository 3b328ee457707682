#!/usr/bin/env bash
# tandem vs llama.cpp's llama-server on the same GGUF, one server after the other, same load:
#   scripts/bench_vs_llamacpp.sh MODEL.gguf LLAMA_SERVER [NUM_THREADS] [ROUNDS] [INPUT_LEN]
# Each round starts tandem, then llama-server, and runs `tandem bench serve` (input INPUT_LEN
# (default 128), output 32, ignore_eos, greedy, 16 prompts, a fresh prompt set per round and
# concurrency so that no prompt cache helps) at concurrency 1, 8 and 16 against each; rounds alternate the servers so that a slow spell of a shared machine hits both. Prints
# per run: output tokens/s, median TTFT and TPOT, resident memory (RSS of the server's process
# tree after the load); then per concurrency the median over rounds of tandem / llama.cpp
# output tokens/s and TTFT.
# CONCURRENCY="1 4 16" (environment) changes the concurrency levels.
# TANDEM_MODEL / TANDEM_FLAGS (environment) serve another model / add flags on tandem's side
# (e.g. a W8A8 folder of the same shapes against llama.cpp's Q8_0 GGUF); TANDEM_B_MODEL /
# TANDEM_B_FLAGS add a second tandem configuration ("tandem-b", e.g. the bf16 folder) to every
# round, and the summary then also prints tandem / tandem-b. TANDEM_B_BIN (environment) runs
# tandem-b from another binary (e.g. a build of the commit before a change: before/after in
# one run); TANDEM_B_MODEL then defaults to the same model.
# First, llama-bench (beside LLAMA_SERVER, or LLAMA_BENCH) measures the file on its own (tg32 and
# pp INPUT_LEN, 2 repetitions); the summary prints llama-server's single-stream decode speed
# (1000 / TPOT p50 at concurrency 1) over llama-bench's tg32. Below 0.7 the peer is not running
# as it can on this machine (a busy machine, a wrong thread count): the summary says so and
# reports no tandem/llama.cpp ratio.
# LLAMA_SERVER: from ../shared/peers/build_llamacpp.sh. Run on an otherwise idle machine (2
# cores: any other busy process wrecks the numbers). Not part of CI. Results: docs/benchmarks.md.
set -u
cd "$(dirname "$0")/.."
BIN=${TANDEM_BIN:-build/tandem}
USAGE="usage: scripts/bench_vs_llamacpp.sh MODEL.gguf LLAMA_SERVER [NUM_THREADS] [ROUNDS] [INPUT_LEN]"
MODEL=${1:?$USAGE}
LLAMA=${2:?$USAGE}
THREADS=${3:-2}
ROUNDS=${4:-3}
INPUT=${5:-128}
PORT=18779
CONCURRENCY=${CONCURRENCY:-"1 8 16"}
RESULTS=$(mktemp)
TANDEM_MODEL=${TANDEM_MODEL:-$MODEL}
TANDEM_FLAGS=${TANDEM_FLAGS:-}
TANDEM_B_BIN=${TANDEM_B_BIN:-}
TANDEM_B_MODEL=${TANDEM_B_MODEL:-${TANDEM_B_BIN:+$TANDEM_MODEL}}
TANDEM_B_BIN=${TANDEM_B_BIN:-$BIN}
TANDEM_B_FLAGS=${TANDEM_B_FLAGS:-}
SERVERS="tandem${TANDEM_B_MODEL:+ tandem-b} llama.cpp"

# RSS in MiB of a process and all its descendants.
tree_rss_mib() {
  local pids="$1" all="$1" next
  while [ -n "$pids" ]; do
    next=$(for p in $pids; do pgrep -P "$p"; done | tr '\n' ' ')
    all="$all $next"
    pids=$(echo "$next" | xargs)
  done
  local kb=0
  for p in $all; do
    r=$(awk '/^VmRSS/ {print $2}' "/proc/$p/status" 2>/dev/null)
    kb=$((kb + ${r:-0}))
  done
  echo $((kb / 1024))
}

LLAMA_BENCH=${LLAMA_BENCH:-$(dirname "$LLAMA")/llama-bench}
if [ -x "$LLAMA_BENCH" ]; then
  "$LLAMA_BENCH" -m "$MODEL" -t "$THREADS" -p "$INPUT" -n 32 -r 2 -o json 2>/dev/null |
    python3 -c '
import json, sys
for t in json.load(sys.stdin):
    kind, n = ("tg", t["n_gen"]) if t["n_gen"] else ("pp", t["n_prompt"])
    print("llama-bench %s%d: %.1f tok/s" % (kind, n, t["avg_ts"]))
    print("bench", kind, t["avg_ts"], file=open(sys.argv[1], "a"))
' "$RESULTS"
else
  echo "no llama-bench at $LLAMA_BENCH (LLAMA_BENCH=...): the peer is not checked against itself" >&2
fi

for round in $(seq 1 "$ROUNDS"); do
  for server in $SERVERS; do
    if [ "$server" = tandem ]; then
      # shellcheck disable=SC2086
      $BIN serve "$TANDEM_MODEL" --host 127.0.0.1 --port $PORT --num-threads "$THREADS" \
        --max-num-seqs 16 $TANDEM_FLAGS > /tmp/bench_vs_srv.log 2>&1 &
    elif [ "$server" = tandem-b ]; then
      # shellcheck disable=SC2086
      $TANDEM_B_BIN serve "$TANDEM_B_MODEL" --host 127.0.0.1 --port $PORT --num-threads "$THREADS" \
        --max-num-seqs 16 $TANDEM_B_FLAGS > /tmp/bench_vs_srv.log 2>&1 &
    else
      "$LLAMA" -m "$MODEL" --host 127.0.0.1 --port $PORT -t "$THREADS" -tb "$THREADS" -np 16 \
        -c 16384 --no-webui > /tmp/bench_vs_srv.log 2>&1 &
    fi
    pid=$!
    for _ in $(seq 1 600); do
      curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/health 2>/dev/null | grep -q 200 && break
      sleep 0.2
    done
    # The server answering must be the one just started (a previous one still shutting down
    # would otherwise be measured twice): llama-server has /props, tandem has not.
    props=$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$PORT/props)
    if { [ "$server" = llama.cpp ] && [ "$props" != 200 ]; } ||
       { [ "$server" != llama.cpp ] && [ "$props" = 200 ]; } || ! kill -0 "$pid" 2>/dev/null; then
      echo "round=$round $server: the server on port $PORT is not the one started (see /tmp/bench_vs_srv.log)" >&2
      exit 1
    fi
    for c in $CONCURRENCY; do
      # A new prompt set per (round, concurrency), the same for both servers: a set seen
      # before would be answered from either server's prompt/prefix cache.
      out=$($BIN bench serve --port $PORT --host 127.0.0.1 --num-prompts 16 --max-concurrency "$c" \
        --random-input-len "$INPUT" --random-output-len 32 --ignore-eos --disable-tqdm \
        --seed $((round * 100 + c)) 2>&1)
      tps=$(echo "$out" | grep -i "Output token throughput" | awk '{print $NF}')
      ttft=$(echo "$out" | grep -i "Median TTFT" | awk '{print $NF}')
      tpot=$(echo "$out" | grep -i "Median TPOT" | awk '{print $NF}')
      rss=$(tree_rss_mib "$pid")
      echo "round=$round $server concurrency=$c output_tok_s=$tps ttft_p50_ms=$ttft tpot_p50_ms=$tpot rss_mib=$rss"
      echo "$round $server $c $tps $ttft $tpot" >> "$RESULTS"
    done
    kill "$pid"
    wait "$pid" 2>/dev/null
    # Every process of the tree gone and the port closed before the next server starts.
    for _ in $(seq 1 300); do
      curl -s -o /dev/null 127.0.0.1:$PORT/health 2>/dev/null || break
      sleep 0.1
    done
  done
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1]) if line.strip()]
bench = {r[1]: float(r[2]) for r in rows if r[0] == "bench"}
runs = {}  # (round, concurrency) -> {server: (tok/s, ttft, tpot)}
for row in rows:
    if row[0] == "bench":
        continue
    rnd, server, c, tps, ttft, tpot = (row + [""] * 6)[:6]
    try:
        runs.setdefault((rnd, int(c)), {})[server] = (float(tps), float(ttft), float(tpot))
    except ValueError:
        pass  # a run that printed no number
tpots = [v["llama.cpp"][2] for (r, c), v in runs.items() if c == 1 and "llama.cpp" in v]
broken = False
if "tg" in bench and tpots:
    own = 1000 / statistics.median(tpots) / bench["tg"]
    print(f"llama-server decode at concurrency 1 = {own:.2f} of its own llama-bench tg32 "
          f"({1000 / statistics.median(tpots):.1f} vs {bench['tg']:.1f} tok/s)")
    if own < 0.7:
        print("the peer runs far below its own llama-bench here: the comparison is broken "
              "(a busy machine?); no ratio against llama.cpp reported")
        broken = True
for a, b in (("tandem", "llama.cpp"), ("tandem-b", "llama.cpp"), ("tandem", "tandem-b")):
    if broken and b == "llama.cpp":
        continue
    for c in sorted({c for _, c in runs}):
        pairs = [v for (r, cc), v in runs.items() if cc == c and a in v and b in v]
        if not pairs:
            continue
        tok = [v[a][0] / v[b][0] for v in pairs]
        ttft = [v[a][1] / v[b][1] for v in pairs]
        print(f"concurrency={c} {a}/{b} output tok/s = {statistics.median(tok):.2f} "
              f"(median of {len(tok)} rounds, min {min(tok):.2f}, max {max(tok):.2f}); "
              f"TTFT p50 {a}/{b} = {statistics.median(ttft):.2f}")
PY
rm -f "$RESULTS"
