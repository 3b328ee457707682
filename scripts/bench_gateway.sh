#!/usr/bin/env bash
# The manager's gateway overhead: `tandem bench serve` against one instance directly and
# through `tandem manager`'s /v1 gateway (API key, least-loaded routing, SSE relay), same model,
# same load, alternating rounds so that a slow spell of a shared machine hits both:
#   scripts/bench_gateway.sh MODEL [ROUNDS]
# One manager and one agent on loopback run MODEL as a deployment (one instance, --num-threads
# $ENGINE_THREADS, default 2; MANAGER_ARGS are added to `tandem manager`). Per concurrency (CONCURRENCY, default "1 16"): input 128, output 32, ignore_eos, greedy,
# 16 (C=1) or 64 prompts, fresh ones every run, prefix caching off. Prints per run TTFT p50/p99 and output tok/s; then the medians over
# rounds of the added TTFT (gateway − direct, ms) and the throughput ratio (gateway / direct).
# Also prints the time from replicas 0 → 1 to RUNNING. Run on an otherwise idle machine. Not
# part of CI. Results: docs/benchmarks.md.
set -u
cd "$(dirname "$0")/.."
BIN=${TANDEM_BIN:-build/tandem}
MODEL=$(realpath "${1:?usage: scripts/bench_gateway.sh MODEL [ROUNDS]}")
ROUNDS=${2:-3}
CONCURRENCY=${CONCURRENCY:-"1 16"}
ENGINE_THREADS=${ENGINE_THREADS:-2}
DIR=$(mktemp -d)
MPORT=18791
RESULTS=$DIR/results.txt
cleanup() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT

"$BIN" manager --host 127.0.0.1 --port $MPORT --data-dir "$DIR/manager" \
  --bootstrap-password bench-password --token bench-token ${MANAGER_ARGS:-} > "$DIR/manager.log" 2>&1 &
until curl -sf "http://127.0.0.1:$MPORT/healthz" > /dev/null; do sleep 0.1; done
"$BIN" agent --server-url "http://127.0.0.1:$MPORT" --token bench-token --worker-name bench \
  --worker-ip 127.0.0.1 --worker-port 18792 --data-dir "$DIR/agent" --devices cpu:0 \
  --service-port-range 18800-18810 > "$DIR/agent.log" 2>&1 &
api() {  # METHOD PATH [JSON]
  curl -sf -b "$DIR/cookies" -X "$1" "http://127.0.0.1:$MPORT$2" ${3:+-d "$3"}
}
curl -sf -c "$DIR/cookies" -d 'username=admin&password=bench-password' \
  "http://127.0.0.1:$MPORT/auth/login" > /dev/null
until api GET /v2/workers | grep -q '"state":"ready"'; do sleep 0.2; done
ID=$(api POST /v2/models "{\"name\": \"bench\", \"local_path\": \"$MODEL\", \"replicas\": 0,
  \"backend_parameters\": [\"--num-threads $ENGINE_THREADS --max-model-len 2048 --max-num-seqs 64 --no-enable-prefix-caching\"]}" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
KEY=$(api POST /v2/api-keys '{"name": "bench", "scope": ["inference"]}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["value"])')
T0=$(date +%s.%N)
api GET /v2/models/$ID | python3 -c 'import json,sys; m=json.load(sys.stdin); m["replicas"]=1; print(json.dumps(m))' \
  > "$DIR/m.json"
curl -sf -b "$DIR/cookies" -X PUT "http://127.0.0.1:$MPORT/v2/models/$ID" -d @"$DIR/m.json" > /dev/null
until api GET "/v2/model-instances?state=RUNNING" | grep -q '"total":1'; do
  if api GET "/v2/model-instances?state=ERROR" | grep -q '"total":1'; then
    echo "the instance failed:"; api GET "/v2/model-instances"; echo; exit 1
  fi
  sleep 0.05
done
T1=$(date +%s.%N)
echo "replicas 0 -> 1 to RUNNING: $(python3 -c "print(f'{$T1 - $T0:.2f}')") s"
PORT=$(api GET "/v2/model-instances?state=RUNNING" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["port"])')

run() {  # NAME URL C ROUND SEED
  local prompts=64
  [ "$3" = 1 ] && prompts=16
  "$BIN" bench serve --base-url "$2" --model bench --api-key "$KEY" --num-prompts $prompts \
    --max-concurrency "$3" --random-input-len 128 --random-output-len 32 --ignore-eos \
    --seed "$5" --disable-tqdm --result-file "$DIR/r.json" > /dev/null 2>&1 || { echo "$1 failed"; return; }
  python3 - "$1" "$3" "$4" "$DIR/r.json" >> "$RESULTS" <<'PY'
import json, sys
name, c, rnd, path = sys.argv[1:]
r = json.load(open(path))
print(name, c, rnd, r["median_ttft_ms"], r["p99_ttft_ms"], r["output_throughput"], r["failed"])
PY
  tail -1 "$RESULTS"
}
seed=1000
for round in $(seq 1 "$ROUNDS"); do
  for c in $CONCURRENCY; do
    if [ $((round % 2)) = 1 ]; then order="direct gateway"; else order="gateway direct"; fi
    for who in $order; do
      url="http://127.0.0.1:$PORT"
      [ "$who" = gateway ] && url="http://127.0.0.1:$MPORT"
      seed=$((seed + 1))  # fresh prompts every run: no prefix cache helps either side
      run "$who" "$url" "$c" "$round" "$seed"
    done
  done
done
python3 - "$RESULTS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for c in sorted({r[1] for r in rows}, key=int):
    per_round = {}
    for name, cc, rnd, ttft50, ttft99, tput, failed in rows:
        if cc == c:
            per_round.setdefault(rnd, {})[name] = (float(ttft50), float(ttft99), float(tput))
    full = [v for v in per_round.values() if len(v) == 2]
    d50 = statistics.median(v["gateway"][0] - v["direct"][0] for v in full)
    d99 = statistics.median(v["gateway"][1] - v["direct"][1] for v in full)
    ratio = statistics.median(v["gateway"][2] / v["direct"][2] for v in full)
    print(f"C={c}: added TTFT p50 {d50:+.2f} ms, p99 {d99:+.2f} ms; throughput gateway/direct {ratio:.3f} ({len(full)} rounds)")
PY
