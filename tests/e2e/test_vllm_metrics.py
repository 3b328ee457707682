"""/metrics as vLLM V1 exports it, so that vLLM's Grafana dashboard and GPUStack's metric mapping
show data: every vllm: series carries model_name and engine (the DP rank) labels; the per-request
histograms (queue, prefill, decode, inference time, time per output token, prompt and generation
tokens), the prefix-cache counters and the engine's iteration-tokens histogram are there with
vLLM's names, types and buckets, and their values move by exactly what the traffic did."""
import http.client
import json
import re
import socket
import time

from harness import STORIES_GGUF, Server, check, run

BLOCK = 16  # tandem's and vLLM's default --block-size

# vLLM v1/metrics/loggers.py, as Prometheus' Python client writes the bounds.
LATENCY_LE = ["0.3", "0.5", "0.8", "1.0", "1.5", "2.0", "2.5", "5.0", "10.0", "15.0", "20.0",
              "30.0", "40.0", "50.0", "60.0", "120.0", "240.0", "480.0", "960.0", "1920.0",
              "7680.0", "+Inf"]
TPOT_LE = ["0.01", "0.025", "0.05", "0.075", "0.1", "0.15", "0.2", "0.3", "0.4", "0.5", "0.75",
           "1.0", "2.5", "5.0", "7.5", "10.0", "20.0", "40.0", "80.0", "+Inf"]
ITERATION_LE = ["1.0", "8.0", "16.0", "32.0", "64.0", "128.0", "256.0", "512.0", "1024.0",
                "2048.0", "4096.0", "8192.0", "16384.0", "+Inf"]
TOKENS_LE_512 = ["1.0", "2.0", "5.0", "10.0", "20.0", "50.0", "100.0", "200.0", "500.0", "+Inf"]

# The series issue 16 lists (histograms by their buckets), beside those tandem had before.
COUNTERS = ["vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total"]
HISTOGRAMS = {
    "vllm:request_queue_time_seconds": LATENCY_LE,
    "vllm:request_prefill_time_seconds": LATENCY_LE,
    "vllm:request_decode_time_seconds": LATENCY_LE,
    "vllm:request_inference_time_seconds": LATENCY_LE,
    "vllm:e2e_request_latency_seconds": LATENCY_LE,
    "vllm:request_prompt_tokens": TOKENS_LE_512,
    "vllm:request_generation_tokens": TOKENS_LE_512,
    "vllm:request_time_per_output_token_seconds": TPOT_LE,
    "vllm:time_per_output_token_seconds": TPOT_LE,
    "vllm:inter_token_latency_seconds": TPOT_LE,
    "vllm:iteration_tokens_total": ITERATION_LE,
}

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

# Short prompts (under one block with their outputs: they can neither hit nor leave a full
# block) and one long prompt of several blocks.
SHORT = ["Lily and Ben", "The sun was", "Tom had a red ball"]
LONG = ("Once upon a time, there was a little girl named Lily. She loved to play outside in "
        "the park with her friends and her big red ball")


class Scrape:
    """One /metrics answer: its samples (name, labels, value) and its # TYPE lines."""

    def __init__(self, srv):
        _, _, body = srv.request("GET", "/metrics")
        self.text = body.decode()
        self.samples, self.types = [], {}
        for line in self.text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(" ", 3)
                self.types[name] = kind
            elif line and not line.startswith("#"):
                m = SAMPLE.match(line)
                check(m, f"a sample without labels or malformed: {line!r}")
                self.samples.append((m.group(1), dict(LABEL.findall(m.group(2))),
                                     float(m.group(3))))

    def value(self, name, **labels):
        """Σ of the samples of `name` whose labels include `labels`."""
        found = [v for n, l, v in self.samples
                 if n == name and all(l.get(k) == str(w) for k, w in labels.items())]
        check(found, f"no {name} {labels} in /metrics")
        return sum(found)


def complete(srv, prompt, max_tokens):
    status, out = srv.post_json("/v1/completions", {
        "model": STORIES_GGUF, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
        "ignore_eos": True})
    check(status == 200, f"{status} {out}")
    check(out["usage"]["completion_tokens"] == max_tokens, f"{out['usage']}")
    return out


def wait_for(srv, condition, what, in_a_row=1):
    """Scrapes until `condition(scrape)` holds `in_a_row` times in a row: the engines' own
    series reach an API server with the engines' stats messages (their outputs to it, else
    their heartbeats). The deadline only guards against a hang; `what` (a string, or a function
    of the last scrape) says what never showed."""
    deadline = time.time() + 20
    held = 0
    while True:
        scrape = Scrape(srv)
        held = held + 1 if condition(scrape) else 0
        if held == in_a_row:
            return scrape
        if time.time() > deadline:
            what = what(scrape) if callable(what) else what
            raise AssertionError(f"{what} never showed in /metrics:\n{scrape.text[-3000:]}")
        if not held:
            time.sleep(0.1)


def test_every_listed_series_has_vllm_type_buckets_and_labels():
    with Server(STORIES_GGUF, "--max-model-len", "512") as srv:
        complete(srv, SHORT[0], 4)
        scrape = wait_for(srv, lambda s: s.value("vllm:iteration_tokens_total_count") > 0,
                          "the first step")
        for name in COUNTERS:
            check(scrape.types.get(name) == "counter", f"{name}: TYPE {scrape.types.get(name)}")
            check(scrape.value(name, engine="0") >= 0, name)
        for name, les in HISTOGRAMS.items():
            check(scrape.types.get(name) == "histogram", f"{name}: TYPE {scrape.types.get(name)}")
            got = [l["le"] for n, l, _ in scrape.samples if n == name + "_bucket"]
            check(got == les, f"{name}: buckets {got}, vLLM has {les}")
            for suffix in ("_count", "_sum"):
                scrape.value(name + suffix, engine="0")
        vllm = [(n, l) for n, l, _ in scrape.samples if n.startswith("vllm:")]
        check(len(vllm) > 100, f"only {len(vllm)} vllm: samples")
        for name, labels in vllm:
            check(labels.get("model_name") == STORIES_GGUF and labels.get("engine") == "0",
                  f"{name} {labels}: expected model_name={STORIES_GGUF!r} and engine=\"0\"")
        # The tandem: twin of every vllm: family.
        for name in list(HISTOGRAMS) + COUNTERS:
            check(scrape.types.get("tandem:" + name[len("vllm:"):]) == scrape.types[name], name)


def deltas(before, after, names, **labels):
    return {n: after.value(n, **labels) - before.value(n, **labels) for n in names}


def test_values_move_by_what_the_requests_did():
    with Server(STORIES_GGUF, "--max-model-len", "512", "--enable-prompt-tokens-details") as srv:
        before = Scrape(srv)
        outs = [complete(srv, p, n) for p, n in zip(SHORT, (5, 6, 6))]
        outs.append(complete(srv, LONG, 4))
        outs.append(complete(srv, LONG, 4))  # its full blocks come from the prefix cache
        prompt = sum(o["usage"]["prompt_tokens"] for o in outs)
        generated = sum(o["usage"]["completion_tokens"] for o in outs)
        n = len(outs)
        long_tokens = outs[-1]["usage"]["prompt_tokens"]
        check(long_tokens > 2 * BLOCK, f"the long prompt has {long_tokens} tokens")
        check(all(o["usage"]["prompt_tokens"] + o["usage"]["completion_tokens"] < BLOCK
                  for o in outs[:3]), f"a short request fills a block: {outs[:3]}")
        # The engine serves at most the prompt's full blocks, never its last token.
        hits = (long_tokens - 1) // BLOCK * BLOCK
        check([o["usage"]["prompt_tokens_details"] for o in outs] ==
              [{"cached_tokens": 0}] * 4 + [{"cached_tokens": hits}],
              f"{[o['usage'] for o in outs]}")
        # Sequential requests: each engine step gave one request one token; vLLM counts a
        # prompt in the step of its first token.
        after = wait_for(srv, lambda s: s.value("vllm:iteration_tokens_total_count") -
                         before.value("vllm:iteration_tokens_total_count") >= generated,
                         f"{generated} engine steps")
        got = deltas(before, after, [
            "vllm:iteration_tokens_total_count", "vllm:iteration_tokens_total_sum",
            "vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total",
            "vllm:prompt_tokens_total", "vllm:generation_tokens_total",
            "vllm:request_prompt_tokens_sum", "vllm:request_prompt_tokens_count",
            "vllm:request_generation_tokens_sum", "vllm:request_generation_tokens_count",
            "vllm:time_to_first_token_seconds_count", "vllm:inter_token_latency_seconds_count",
            "vllm:e2e_request_latency_seconds_count"], engine="0")
        want = {
            "vllm:iteration_tokens_total_count": generated,
            "vllm:iteration_tokens_total_sum": prompt + generated,
            "vllm:prefix_cache_queries_total": prompt,
            "vllm:prefix_cache_hits_total": hits,
            "vllm:prompt_tokens_total": prompt,
            "vllm:generation_tokens_total": generated,
            "vllm:request_prompt_tokens_sum": prompt,
            "vllm:request_prompt_tokens_count": n,
            "vllm:request_generation_tokens_sum": generated,
            "vllm:request_generation_tokens_count": n,
            "vllm:time_to_first_token_seconds_count": n,
            "vllm:inter_token_latency_seconds_count": generated - n,
            "vllm:e2e_request_latency_seconds_count": n,
        }
        check(got == want, f"moved by {got}\nexpected {want}")
        length = after.value("vllm:request_success_total", engine="0", finished_reason="length")
        check(length - before.value("vllm:request_success_total", finished_reason="length") == n,
              f"request_success_total{{finished_reason=length}} {length}")
        phases = {}
        for phase in ("queue", "prefill", "decode", "inference"):
            name = f"vllm:request_{phase}_time_seconds"
            count = after.value(name + "_count") - before.value(name + "_count")
            check(count == n, f"{name}_count moved by {count}, expected {n}")
            phases[phase] = after.value(name + "_sum") - before.value(name + "_sum")
            check(phases[phase] >= 0, f"{name}_sum {phases[phase]}")
        # Per request, inference = prefill + decode (vLLM's intervals share their ends).
        check(abs(phases["inference"] - phases["prefill"] - phases["decode"]) < 1e-6,
              f"{phases}")
        check(phases["decode"] > 0, "every request decoded after its first token")
        tpot = "vllm:request_time_per_output_token_seconds_count"
        check(after.value(tpot) - before.value(tpot) == n, f"{tpot}")


def test_request_counters_move_while_a_stream_runs():
    with Server(STORIES_GGUF, "--max-model-len", "512") as srv:
        before = Scrape(srv)
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        conn.request("POST", "/v1/completions", body=json.dumps({
            "model": STORIES_GGUF, "prompt": LONG, "max_tokens": 200, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}),
            headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        check(resp.status == 200, f"stream: {resp.status}")
        first = None
        while first is None:
            line = resp.readline().decode()
            if line.startswith("data: "):
                first = json.loads(line[len("data: "):])
        # The first token is counted before it is sent: TTFT and the prompt have moved.
        during = Scrape(srv)
        ttft = "vllm:time_to_first_token_seconds_count"
        check(during.value(ttft) - before.value(ttft) == 1, "TTFT not counted at the first token")
        check(during.value("vllm:prompt_tokens_total") > before.value("vllm:prompt_tokens_total"),
              "the prompt is counted with its first token (vLLM)")
        usage = None
        for raw in resp:
            line = raw.decode()
            if line.startswith("data: {"):
                usage = json.loads(line[len("data: "):]).get("usage") or usage
        conn.close()
        check(usage and usage["completion_tokens"] == 200, f"{usage}")
        after = Scrape(srv)
        moved = (after.value("vllm:request_generation_tokens_sum") -
                 before.value("vllm:request_generation_tokens_sum"))
        check(moved == 200, f"request_generation_tokens_sum moved by {moved}")
        check("prompt_tokens_details" not in usage or usage["prompt_tokens_details"] is None,
              f"prompt_tokens_details without --enable-prompt-tokens-details: {usage}")


def test_each_dp_rank_has_its_engine_series():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        rpc = s.getsockname()[1]
    # Two DP ranks, two API servers on one port (the default): each scrape reaches either.
    with Server(STORIES_GGUF, "--data-parallel-size", "2", "--max-model-len", "512",
                "--data-parallel-rpc-port", str(rpc)) as srv:
        wait_for(srv, lambda s: s.value("tandem:engine_alive", engine="0") == 1 and
                 s.value("tandem:engine_alive", engine="1") == 1, "both ranks alive")
        before = Scrape(srv)
        pinned = {0: [(SHORT[0], 3), (LONG, 5)], 1: [(SHORT[1], 4), (SHORT[2], 6), (LONG, 2)]}
        want = {}
        for rank, requests in pinned.items():
            prompt = generated = 0
            for text, max_tokens in requests:
                status, out = srv.post_json("/v1/completions", {
                    "model": STORIES_GGUF, "prompt": text, "max_tokens": max_tokens,
                    "temperature": 0, "ignore_eos": True},
                    headers={"X-data-parallel-rank": str(rank)})
                check(status == 200, f"rank {rank}: {status} {out}")
                prompt += out["usage"]["prompt_tokens"]
                generated += out["usage"]["completion_tokens"]
            want[rank] = {
                "vllm:request_success_total": len(requests),
                "vllm:request_prompt_tokens_count": len(requests),
                "vllm:request_prompt_tokens_sum": prompt,
                "vllm:request_generation_tokens_sum": generated,
                "vllm:request_queue_time_seconds_count": len(requests),
                "vllm:prompt_tokens_total": prompt,
                "vllm:generation_tokens_total": generated,
                "vllm:prefix_cache_queries_total": prompt,
                "vllm:iteration_tokens_total_count": generated,
                "vllm:iteration_tokens_total_sum": prompt + generated,
            }

        def moved(scrape, rank):
            return {name: scrape.value(name, engine=rank) - before.value(name, engine=rank)
                    for name in want[rank]}

        # Either API server answers a scrape; both show the whole server's numbers (request
        # series summed over both, engine series as each engine last reported to it).
        wait_for(srv, lambda s: all(moved(s, r) == want[r] for r in (0, 1)),
                 lambda s: f"per-rank moves {[moved(s, r) for r in (0, 1)]} (want {want})",
                 in_a_row=16)
        for _ in range(6):
            scrape = Scrape(srv)
            for name in list(HISTOGRAMS) + COUNTERS:
                key = name + "_count" if name in HISTOGRAMS else name
                engines = sorted(l["engine"] for n, l, _ in scrape.samples if n == key)
                check(engines == ["0", "1"], f"{key}: engine labels {engines}")


if __name__ == "__main__":
    run([test_every_listed_series_has_vllm_type_buckets_and_labels,
         test_values_move_by_what_the_requests_did,
         test_request_counters_move_while_a_stream_runs,
         test_each_dp_rank_has_its_engine_series])
