"""Continuous batching: concurrent streams equal solo runs; seeded sampling is batch-invariant;
prefix caching reports cached tokens; a tiny KV cache forces preemption yet every output is right."""
import concurrent.futures as cf

from harness import STORIES_GGUF, Server, check, run

PROMPTS = ["Once upon a time", "Lily and Ben", "The cat sat on the mat.", "One day, a little",
           "Tom had a red ball", "The sun was", "She saw a big dog", "The bird flew"]


def complete(srv, prompt, **kw):
    body = {"model": STORIES_GGUF, "prompt": prompt, "max_tokens": 40, "temperature": 0,
            "return_token_ids": True}
    body.update(kw)
    status, out = srv.post_json("/v1/completions", body)
    check(status == 200, f"status {status}: {out}")
    return out


def stream_tokens(srv, prompt, **kw):
    body = {"model": STORIES_GGUF, "prompt": prompt, "max_tokens": 40, "temperature": 0,
            "stream": True, "return_token_ids": True}
    body.update(kw)
    status, events, done = srv.stream("/v1/completions", body)
    check(status == 200 and done, f"stream status {status}, done {done}: {events[:1]}")
    ids, text = [], ""
    for ev in events:
        for ch in ev.get("choices", []):
            ids += ch.get("token_ids") or []
            text += ch.get("text", "")
    return ids, text


def test_16_concurrent_streams_equal_solo():
    with Server(STORIES_GGUF, "--max-num-seqs", "16") as srv:
        prompts = [PROMPTS[i % len(PROMPTS)] + " " * (i // len(PROMPTS)) for i in range(16)]
        solo = [complete(srv, p)["choices"][0] for p in prompts]
        with cf.ThreadPoolExecutor(16) as pool:
            streamed = list(pool.map(lambda p: stream_tokens(srv, p), prompts))
        for p, s, (ids, text) in zip(prompts, solo, streamed):
            check(ids == s["token_ids"], f"{p!r}: stream ids {ids[:10]} vs solo {s['token_ids'][:10]}")
            check(text == s["text"], f"{p!r}: stream text {text!r} vs solo {s['text']!r}")


def test_seeded_sampling_same_alone_and_in_busy_batch():
    with Server(STORIES_GGUF) as srv:
        kw = {"temperature": 0.9, "top_p": 0.95, "seed": 1234, "max_tokens": 32}
        alone = complete(srv, "Once upon a time", **kw)["choices"][0]["token_ids"]
        with cf.ThreadPoolExecutor(9) as pool:
            noise = [pool.submit(complete, srv, p, temperature=1.0, max_tokens=48) for p in PROMPTS]
            busy = pool.submit(complete, srv, "Once upon a time", **kw)
            for f in noise:
                f.result()
            busy_ids = busy.result()["choices"][0]["token_ids"]
        check(alone == busy_ids, f"seeded: alone {alone} vs busy {busy_ids}")
        other = complete(srv, "Once upon a time", **{**kw, "seed": 99})["choices"][0]["token_ids"]
        check(other != alone, "a different seed gave the same 32 tokens")


def test_prefix_caching_reports_cached_tokens():
    # vLLM shows usage.prompt_tokens_details only with --enable-prompt-tokens-details.
    with Server(STORIES_GGUF, "--block-size", "16", "--enable-prompt-tokens-details") as srv:
        prefix = "Once upon a time, there was a little girl named Lily. She loved to play outside"
        first = complete(srv, prefix + " in the park.")
        second = complete(srv, prefix + " in the park.")
        cached = second["usage"].get("prompt_tokens_details", {}).get("cached_tokens", 0)
        check(cached >= 16, f"cached_tokens {cached}, usage {second['usage']}")
        check(first["choices"][0]["token_ids"] == second["choices"][0]["token_ids"],
              "cached prefix changed the output")


def test_preemption_keeps_outputs_correct():
    with Server(STORIES_GGUF) as ref_srv:
        want = {p: complete(ref_srv, p, max_tokens=100)["choices"][0]["token_ids"] for p in PROMPTS}
    # 8 blocks of 16 tokens hold one 128-token sequence: 8 concurrent requests must preempt.
    with Server(STORIES_GGUF, "--max-model-len", "128", "--block-size", "16",
                "--kv-cache-memory-bytes", str(8 * 16 * 5 * 2 * 4 * 8 * 4),
                "--no-enable-prefix-caching") as srv:
        with cf.ThreadPoolExecutor(8) as pool:
            got = dict(zip(PROMPTS, pool.map(
                lambda p: complete(srv, p, max_tokens=100)["choices"][0]["token_ids"], PROMPTS)))
        for p in PROMPTS:
            check(got[p] == want[p], f"{p!r} under preemption: {got[p][:12]} vs {want[p][:12]}")
        check(metric(srv, "vllm:num_preemptions_total") > 0, "no preemptions counted")


def metric(srv, name):
    _, _, body = srv.request("GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"{name} not in /metrics")


def test_client_disconnect_aborts_and_frees_blocks():
    import http.client
    import json
    import time
    with Server(STORIES_GGUF, "--no-enable-prefix-caching") as srv:
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        conn.request("POST", "/v1/completions", body=json.dumps({
            "model": STORIES_GGUF, "prompt": "Once upon a time", "max_tokens": 2000,
            "ignore_eos": True, "stream": True}), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        check(resp.status == 200, f"status {resp.status}")
        resp.fp.readline()  # first event arrived: the request is running
        check(metric(srv, "vllm:num_requests_running") == 1, "request not running")
        conn.sock.close()
        conn.close()
        deadline = time.time() + 10
        while time.time() < deadline and metric(srv, "vllm:num_requests_running") != 0:
            time.sleep(0.1)
        check(metric(srv, "vllm:num_requests_running") == 0, "aborted request still running")
        check(metric(srv, "vllm:kv_cache_usage_perc") == 0, "blocks not freed after abort")


if __name__ == "__main__":
    run([test_16_concurrent_streams_equal_solo, test_seeded_sampling_same_alone_and_in_busy_batch,
         test_prefix_caching_reports_cached_tokens, test_preemption_keeps_outputs_correct,
         test_client_disconnect_aborts_and_frees_blocks])
