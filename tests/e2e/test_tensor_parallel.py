"""Tensor parallel through the real server: one _tp-worker process per TP rank ≥ 1 joined by
the shared-memory collectives; TP=2 and TP=4 give llama2.c's golden tokens, DP=2 × TP=2 too."""
import socket

from harness import STORIES_GGUF, STORIES_GOLDEN, Server, check, golden_cases, run

CASES = golden_cases(STORIES_GOLDEN, "generation")


def check_golden(srv):
    for case in CASES:
        prompt = case["prompt"] if case["prompt"] else case["prompt_ids"]
        status, body = srv.post_json("/v1/completions", {
            "model": STORIES_GGUF, "prompt": prompt, "max_tokens": len(case["generated_ids"]),
            "temperature": 0, "return_token_ids": True})
        check(status == 200, f"status {status}: {body}")
        check(body["choices"][0]["token_ids"] == case["generated_ids"],
              f"{case['prompt']!r}: {body['choices'][0]['token_ids'][:12]}")


def test_tp2_and_tp4_match_the_golden_outputs():
    for tp in ("2", "4"):
        with Server(STORIES_GGUF, "--tensor-parallel-size", tp, "--max-model-len", "512",
                    "--max-num-seqs", "16") as srv:
            check_golden(srv)


def test_dp2_times_tp2_matches_the_golden_outputs():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        rpc = s.getsockname()[1]
    with Server(STORIES_GGUF, "--tensor-parallel-size", "2", "--data-parallel-size", "2",
                "--data-parallel-rpc-port", str(rpc), "--max-model-len", "512",
                "--max-num-seqs", "16") as srv:
        check_golden(srv)


def test_non_dividing_tp_size_stops_start_up_naming_the_tensor():
    import subprocess
    from harness import BIN
    p = subprocess.run([BIN, "serve", STORIES_GGUF, "--tensor-parallel-size", "3", "--port", "8199"],
                       capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    check(p.returncode != 0 and "--tensor-parallel-size 3" in out and "weight '" in out, out[-600:])


if __name__ == "__main__":
    run([test_tp2_and_tp4_match_the_golden_outputs, test_dp2_times_tp2_matches_the_golden_outputs,
         test_non_dividing_tp_size_stops_start_up_naming_the_tensor])
