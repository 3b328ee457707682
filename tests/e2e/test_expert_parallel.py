"""Expert parallel through the real server: DP=2 × TP=2 with --enable-expert-parallel (experts
over 4 ranks, all-to-all dispatch/combine, DP waves) gives each MoE model's golden tokens; a
single request (either rank busy, the other idle) finishes, a drain with uneven tails ends, and
the deployment serves again after the wave ends."""
import os
import socket
import threading
import time

from harness import (MODELS, STORIES_GOLDEN, STORIES_MOE_GGUF, Server, check, golden_cases, run)

QWEN3_MOE = os.path.join(MODELS, "tiny-qwen3-moe")
QWEN2_MOE = os.path.join(MODELS, "stories260k-qwen2moe-hf")
STORIES_CASES = golden_cases(STORIES_GOLDEN, "generation")
QWEN3_MOE_CASES = golden_cases(os.path.join(QWEN3_MOE, "golden.json"), "cases")


def rpc_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ep_server(model, dp="2", tp="2"):
    return Server(model, "--data-parallel-size", dp, "--tensor-parallel-size", tp,
                  "--enable-expert-parallel", "--data-parallel-rpc-port", str(rpc_port()),
                  "--max-model-len", "512", "--max-num-seqs", "8")


def complete(srv, model, prompt, max_tokens, headers=None):
    status, body = srv.post_json("/v1/completions", {
        "model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
        "return_token_ids": True, "ignore_eos": True}, headers=headers)
    check(status == 200, f"status {status}: {body}")
    return body["choices"][0]["token_ids"]


def engine_counters(srv, name):
    """tandem:<name>{engine="0"}, {engine="1"} from /metrics."""
    _, _, body = srv.request("GET", "/metrics")
    values = {}
    for line in body.decode().splitlines():
        if line.startswith(f"tandem:{name}{{"):
            rank = line.split('engine="')[1].split('"')[0]
            values[rank] = float(line.split()[-1])
    check(set(values) == {"0", "1"}, f"{name} per rank: {values}")
    return [values["0"], values["1"]]


def stories_cases():
    for case in STORIES_CASES:
        prompt = case["prompt"] if case["prompt"] else case["prompt_ids"]
        yield prompt, case["generated_ids"]


def qwen_cases():
    for case in QWEN3_MOE_CASES:
        yield case["prompt_ids"], case["generated_ids"]


def check_goldens(model, cases, pin_ranks=("0", "1")):
    with ep_server(model) as srv:
        for i, (prompt, want) in enumerate(cases):
            # Alternate the pinned rank: each case runs on one rank while the other idles.
            headers = {"X-data-parallel-rank": pin_ranks[i % len(pin_ranks)]}
            status, body = srv.post_json("/v1/completions", {
                "model": model, "prompt": prompt, "max_tokens": len(want), "temperature": 0,
                "return_token_ids": True}, headers=headers)
            check(status == 200, f"{model}: status {status}: {body}")
            got = body["choices"][0]["token_ids"]
            check(got == want, f"{model} case {i}: got {got[:12]} want {want[:12]}")


def test_tiny_qwen3_moe_dp2_tp2_ep_matches_golden():
    check_goldens(QWEN3_MOE, qwen_cases())


def test_qwen2_moe_with_experts_of_43_dp2_tp2_ep_matches_golden():
    # 43-wide experts cannot split over TP=2; over EP they need not.
    check_goldens(QWEN2_MOE, stories_cases())


def test_mixtral_gguf_dp2_tp2_ep_matches_golden():
    check_goldens(STORIES_MOE_GGUF, stories_cases())


def test_uneven_drain_ends_and_waves_restart():
    """Concurrent requests of very different lengths on both ranks: each equals one rank's
    output, nothing hangs while ranks finish at different steps, and a later request (a new
    wave) still works."""
    prompts = [case[0] for case in stories_cases()][:4]
    lengths = [1, 5, 40, 120, 3, 80, 17, 2]
    with Server(STORIES_MOE_GGUF, "--max-model-len", "512") as one:
        want = [complete(one, STORIES_MOE_GGUF, prompts[i % 4], n) for i, n in enumerate(lengths)]
    with ep_server(STORIES_MOE_GGUF, tp="1") as srv:
        got = [None] * len(lengths)

        def worker(i):
            got[i] = complete(srv, STORIES_MOE_GGUF, prompts[i % 4], lengths[i],
                              headers={"X-data-parallel-rank": str(i % 2)})

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(lengths))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
            check(not t.is_alive(), "a request did not finish within 120 s (ranks hung in a wave)")
        for i, n in enumerate(lengths):
            check(got[i] == want[i], f"request {i} ({n} tokens): {got[i]} != {want[i]}")
        # Idle ranks ran dummy steps during the wave and pause together afterwards: the
        # counters stop growing once nothing is left to do. Each request below waits for that
        # pause first, so it starts a new wave (one sent while the ranks still agree to stop
        # would join the old one).
        wait_until_paused(srv)
        dummy = engine_counters(srv, "engine_dummy_steps_total")
        check(sum(dummy) > 0, f"no dummy steps although ranks idled in waves: {dummy}")
        for rank in ("1", "0"):  # after the drain: new waves, started from either rank
            check(complete(srv, STORIES_MOE_GGUF, prompts[2], 40,
                           headers={"X-data-parallel-rank": rank}) == want[2],
                  f"request on rank {rank} after the drain differs")
            wait_until_paused(srv)
        waves = engine_counters(srv, "engine_waves_total")
        check(all(w >= 3 for w in waves), f"waves per rank {waves} (3 each expected: the drain "
                                          "and one per later request)")


def wait_until_paused(srv):
    """Waits until the dummy-step counters settle, unchanged for 1.5 s: 3 of the engines' 0.5 s
    stats heartbeats, so the window is measured on their clock, not against this machine's
    speed. The 30 s deadline only guards against ranks that never stop."""
    deadline = time.time() + 30
    last, since = engine_counters(srv, "engine_dummy_steps_total"), time.time()
    while time.time() - since < 1.5:
        check(time.time() < deadline, f"ranks still stepping while idle: {last} after 30 s")
        time.sleep(0.25)
        now = engine_counters(srv, "engine_dummy_steps_total")
        if now != last:
            last, since = now, time.time()


def test_a_lost_rank_stops_the_deployment_at_once():
    """Expert-parallel ranks step together, so one lost rank (here a TP worker of rank 1, which
    takes its engine core down with it) loses them all: the request in flight gets a 503 naming
    the lost rank, then the server exits non-zero (as vLLM's does when its engines are gone),
    so that a supervisor restarts it instead of a server answering 503 forever."""
    import signal
    import subprocess
    import threading
    with ep_server(QWEN3_MOE) as srv:
        check(complete(srv, QWEN3_MOE, [1, 2, 3], 4) != [], "no output before the kill")
        def children(parent, pattern):
            return subprocess.run(["pgrep", "-P", str(parent), "-f", pattern],
                                  capture_output=True, text=True).stdout.split()

        # This server's own processes only: serve → _engine-core (rank 1) → _tp-worker.
        engines = children(srv.proc.pid, '_engine-core.*"dp_rank":1,')
        check(len(engines) == 1, f"engine core of DP rank 1: {engines}")
        pids = children(engines[0], "_tp-worker")
        check(len(pids) == 1, f"TP worker of DP rank 1: {pids}")
        in_flight = {}

        def long_request():
            in_flight["answer"] = srv.post_json("/v1/completions", {
                "prompt": [1, 2, 3], "max_tokens": 500, "ignore_eos": True})

        thread = threading.Thread(target=long_request)
        thread.start()
        srv.wait_until_running(1)
        os.kill(int(pids[0]), signal.SIGKILL)
        thread.join(timeout=60)
        status, body = in_flight.get("answer", (0, {}))
        check(status == 503 and "died" in body["error"]["message"],
              f"the request in flight: {status} {body}\n{srv.logs()}")
        srv.check_exits_once_no_engine_is_left()


def test_unseeded_sampling_differs_between_ranks():
    """Requests without a seed draw from per-rank streams: the same request on rank 0 and on
    rank 1 must not replay the same "random" tokens."""
    with Server(STORIES_MOE_GGUF, "--data-parallel-size", "2", "--data-parallel-rpc-port",
                str(rpc_port())) as srv:
        outs = []
        for rank in ("0", "1"):
            status, body = srv.post_json("/v1/completions", {
                "prompt": "Once upon a time", "max_tokens": 24, "temperature": 1.5,
                "return_token_ids": True, "ignore_eos": True},
                headers={"X-data-parallel-rank": rank})
            check(status == 200, f"{status} {body}")
            outs.append(body["choices"][0]["token_ids"])
        check(outs[0] != outs[1], f"both ranks sampled {outs[0]}")


if __name__ == "__main__":
    run([test_tiny_qwen3_moe_dp2_tp2_ep_matches_golden,
         test_qwen2_moe_with_experts_of_43_dp2_tp2_ep_matches_golden,
         test_mixtral_gguf_dp2_tp2_ep_matches_golden,
         test_uneven_drain_ends_and_waves_restart,
         test_a_lost_rank_stops_the_deployment_at_once,
         test_unseeded_sampling_differs_between_ranks])
