"""Speculative decoding with ngram drafts (--speculative-config, vLLM's fields): greedy output
equals the goldens exactly (verification accepts only what the model would have produced),
alone and in a batch, streaming included; the spec_decode counters count drafts and accepted
tokens consistently; seeded sampling is reproducible; bad configs stop start-up by name."""
import json
import subprocess

from harness import (BIN, STORIES_GGUF, STORIES_GOLDEN, STORIES_HF, Server, check, free_port,
                     golden_cases, run)

CASES = golden_cases(STORIES_GOLDEN, "generation")
NGRAM = json.dumps({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4,
                    "prompt_lookup_min": 1})


def greedy(case, **kw):
    prompt = case["prompt"] if case["prompt"] else case["prompt_ids"]
    return {"prompt": prompt, "max_tokens": len(case["generated_ids"]), "temperature": 0,
            "return_token_ids": True, **kw}


def metric(srv, name):
    """Σ over the series of `name`, which must be in /metrics."""
    values = srv.metric_values(name)
    check(values, f"{name} not in /metrics")
    return sum(values)


def check_goldens(srv, model):
    for case in CASES:
        status, body = srv.post_json("/v1/completions", greedy(case, model=model))
        check(status == 200, f"status {status}: {body}")
        got = body["choices"][0]["token_ids"]
        check(got == case["generated_ids"],
              f"{case['prompt']!r}: got {got[:16]}... want {case['generated_ids'][:16]}...")
        check(body["usage"]["completion_tokens"] == len(case["generated_ids"]), body["usage"])


def test_spec_decode_metrics_only_when_speculating():
    with Server(STORIES_GGUF) as srv:
        _, _, body = srv.request("GET", "/metrics")
        check(b"spec_decode" not in body, "spec_decode series without --speculative-config")


def test_ngram_greedy_equals_goldens_and_counters_add_up():
    for model in (STORIES_GGUF, STORIES_HF):
        with Server(model, "--speculative-config", NGRAM) as srv:
            check_goldens(srv, model)
            drafts = metric(srv, "vllm:spec_decode_num_drafts_total")
            drafted = metric(srv, "vllm:spec_decode_num_draft_tokens_total")
            accepted = metric(srv, "vllm:spec_decode_num_accepted_tokens_total")
            per_pos = metric(srv, "vllm:spec_decode_num_accepted_tokens_per_pos_total")
            check(drafts > 0 and accepted > 0, f"no speculation: drafts {drafts}, accepted "
                                               f"{accepted}")
            check(accepted <= drafted <= 3 * drafts, f"accepted {accepted}, drafted {drafted}, "
                                                     f"drafts {drafts}")
            check(per_pos == accepted, f"per-position sum {per_pos} != accepted {accepted}")
            check(metric(srv, "tandem:spec_decode_num_drafts_total") == drafts, "tandem: twin")


def test_ngram_in_a_busy_batch_and_streaming_equal_goldens():
    with Server(STORIES_GGUF, "--speculative-config", NGRAM, "--max-num-seqs", "8") as srv:
        cases = CASES * 3
        results = srv.post_all_at_once("/v1/completions", [greedy(c) for c in cases])
        for i, (case, (status, body)) in enumerate(zip(cases, results)):
            check(status == 200 and body["choices"][0]["token_ids"] == case["generated_ids"],
                  f"batched case {i}: {str(body)[:200]}")
        case = CASES[1]
        status, events, done = srv.stream("/v1/completions", greedy(case, stream=True))
        check(status == 200 and done, f"stream: {status}")
        streamed = [t for e in events for c in e["choices"] for t in (c.get("token_ids") or [])]
        check(streamed == case["generated_ids"], f"streamed {streamed[:16]}")


def test_tensor_and_data_parallel_with_speculation_equal_goldens():
    # TP ranks verify and draft in lock-step (the drafts travel in the plan); DP ranks each
    # speculate for their own requests.
    with Server(STORIES_GGUF, "--speculative-config", NGRAM, "--tensor-parallel-size", "2",
                "--data-parallel-size", "2", "--data-parallel-rpc-port", str(free_port())) as srv:
        check_goldens(srv, STORIES_GGUF)
        # The engines' counters reach /metrics with their stats messages (after a step that
        # finished a request, or the next heartbeat): wait for them; the deadline only guards
        # against a hang.
        import time
        deadline = time.time() + 30
        while metric(srv, "vllm:spec_decode_num_accepted_tokens_total") == 0:
            check(time.time() < deadline, "no acceptance reported by the DP ranks")
            time.sleep(0.1)


def test_seeded_sampling_is_reproducible_with_speculation():
    body = {"prompt": "Once upon a time", "max_tokens": 48, "temperature": 0.8, "seed": 1234,
            "return_token_ids": True}
    with Server(STORIES_GGUF, "--speculative-config", NGRAM) as srv:
        runs = [srv.post_json("/v1/completions", body)[1]["choices"][0]["token_ids"]
                for _ in range(2)]
        # ... and inside a busy batch of other sampled requests.
        batch = srv.post_all_at_once("/v1/completions", [body] + [
            {**body, "seed": 99 + i} for i in range(6)])
        busy = batch[0][1]["choices"][0]["token_ids"]
    check(len(runs[0]) == 48, f"{len(runs[0])} tokens")
    check(runs[0] == runs[1] == busy, f"seeded runs differ: {runs[0][:8]} {runs[1][:8]} "
                                      f"{busy[:8]}")


def test_bad_speculative_configs_stop_start_up_naming_the_field():
    for config, needle in [
            ('{"method": "ngram"}', "num_speculative_tokens"),
            ('{"method": "ngram", "num_speculative_tokens": null}', "is required"),
            ('{"method": 123, "num_speculative_tokens": 2}', "'method' must be a string"),
            ('{"method": "eagle", "num_speculative_tokens": 2}', "unknown method 'eagle'"),
            ('{"method": "ngram", "num_speculative_tokens": 2, "typo": 1}', "unknown field 'typo'"),
            ('{"method": "ngram", "num_speculative_tokens": 0}', "num_speculative_tokens"),
            ('{"method": "ngram", "num_speculative_tokens": 2, "prompt_lookup_min": 5, '
             '"prompt_lookup_max": 2}', "prompt_lookup_min 5 is larger"),
            ('{"method": "qwen3_5_mtp", "num_speculative_tokens": 3}', "MTP layers"),
            ('[1, 2]', "JSON object")]:
        p = subprocess.run([BIN, "serve", STORIES_GGUF, "--host", "127.0.0.1", "--port",
                            str(free_port()), "--speculative-config", config],
                           capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        check(p.returncode != 0, f"{config}: started")
        check(needle in out, f"{config}: {needle!r} not in {out[-400:]!r}")


if __name__ == "__main__":
    run([test_spec_decode_metrics_only_when_speculating,
         test_ngram_greedy_equals_goldens_and_counters_add_up,
         test_ngram_in_a_busy_batch_and_streaming_equal_goldens,
         test_tensor_and_data_parallel_with_speculation_equal_goldens,
         test_seeded_sampling_is_reproducible_with_speculation,
         test_bad_speculative_configs_stop_start_up_naming_the_field])
