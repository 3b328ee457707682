"""Hybrid and external DP load balancing (docs/design/dp-load-balancing-modes.md): two "machines"
on loopback, each with its own API server serving only its own DP rank, one deployment (the
head runs the handshake and the coordinator). Outputs equal one rank's; each machine's requests
run on its own rank only; a pin to the other machine's rank is a 400 naming the range; /metrics
shows the served rank only; the flags' misuses stop start-up naming them."""
import signal
import subprocess
import time

from harness import (BIN, STORIES_GGUF, STORIES_GOLDEN, STORIES_MOE_GGUF, Server, check,
                     free_port, golden_cases, run)

COMMON = ["--data-parallel-size", "2", "--data-parallel-address", "127.0.0.1",
          "--max-model-len", "512", "--max-num-seqs", "16"]


def greedy(prompt):
    return {"model": STORIES_GGUF, "prompt": prompt, "max_tokens": 12, "temperature": 0,
            "return_token_ids": True}


def engine_series(srv, name):
    """{engine label: value} of tandem/vllm metric `name` on this API server."""
    _, _, body = srv.request("GET", "/metrics")
    out = {}
    for line in body.decode().splitlines():
        if line.startswith(name + "{") and 'engine="' in line:
            out[line.split('engine="')[1].split('"')[0]] = float(line.split()[-1])
    return out


def wait_finished(srv, rank, count, timeout_s=30):
    """Waits until this API server's rank `rank` has finished `count` requests (the engine's
    counter reaches /metrics with its heartbeats); returns the count then."""
    deadline = time.time() + timeout_s
    while True:
        done = engine_series(srv, "tandem:engine_requests_finished_total").get(str(rank), 0)
        if done >= count or time.time() > deadline:
            return done
        time.sleep(0.1)


def check_two_machines(head_args, second_args):
    with Server(STORIES_GGUF) as one:
        want = {p: one.post_json("/v1/completions", greedy(p))[1]["choices"][0]["token_ids"]
                for p in ("Lily and Ben", "Once upon a time")}
    rpc = free_port()
    ports = ["--data-parallel-rpc-port", str(rpc)]
    head = Server(STORIES_GGUF, *COMMON, *ports, *head_args)
    second = Server(STORIES_GGUF, *COMMON, *ports, *second_args)
    try:
        with head, second:
            for rank, srv in ((0, head), (1, second)):
                check(list(engine_series(srv, "tandem:engine_alive")) == [str(rank)],
                      f"machine of rank {rank} shows {engine_series(srv, 'tandem:engine_alive')}")
                for prompt, ids in want.items():
                    status, out = srv.post_json("/v1/completions", greedy(prompt))
                    check(status == 200 and out["choices"][0]["token_ids"] == ids,
                          f"rank {rank}, {prompt}: {status} {out}")
                check(wait_finished(srv, rank, 2) == 2,
                      f"rank {rank} finished {wait_finished(srv, rank, 2)}, want 2")
                other = 1 - rank
                status, out = srv.post_json("/v1/completions", greedy("x"),
                                            headers={"X-data-parallel-rank": str(other)})
                check(status == 400 and f"X-data-parallel-rank {other} is not served by this "
                      f"API server" in out["error"]["message"] and
                      f"serves DP rank(s) {rank}..{rank}" in out["error"]["message"],
                      f"pin to the other machine's rank: {status} {out}")
                status, out = srv.post_json("/v1/completions", greedy("Lily and Ben"),
                                            headers={"X-data-parallel-rank": str(rank)})
                check(status == 200, f"pin to its own rank: {status} {out}")
            check("serves its own API for DP rank(s) 1..1" in head.full_log(), head.logs())
    finally:
        head.stop()
        second.stop()


def test_hybrid_lb_each_machine_serves_its_own_rank():
    check_two_machines(["--data-parallel-hybrid-lb", "--data-parallel-size-local", "1"],
                       ["--data-parallel-hybrid-lb", "--data-parallel-start-rank", "1"])


def test_external_lb_one_api_deployment_per_rank():
    check_two_machines(["--data-parallel-rank", "0"], ["-dpn", "1"])


def test_a_second_machine_with_other_settings_is_refused_by_name():
    rpc = free_port()
    ports = ["--data-parallel-rpc-port", str(rpc)]
    with Server(STORIES_GGUF, *COMMON, *ports, "-dpn", "0", ready_timeout_s=120) as head:
        p = subprocess.run([BIN, "serve", STORIES_GGUF, *COMMON, *ports, "-dpn", "1",
                            "--seed", "7", "--port", str(free_port()), "--num-threads", "1"],
                           capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        check(p.returncode != 0 and "--seed" in out and "the head at 127.0.0.1" in out,
              f"code {p.returncode}:\n{out[-1500:]}")
        # The head refused that machine and serves on.
        check("refused the API machine" in head.full_log(), head.logs())
        status, out = head.post_json("/v1/completions", greedy("Lily and Ben"))
        check(status == 200, f"the head after the refusal: {status} {out}")


def test_hybrid_lb_with_expert_parallel_steps_both_machines_in_waves():
    """An expert-parallel MoE deployment over two API machines: a request to either machine
    gives the golden tokens, and the other machine's rank joins its waves (dummy steps) though
    no request reached it."""
    cases = golden_cases(STORIES_GOLDEN, "generation")[:2]
    rpc = free_port()
    common = ["--data-parallel-size", "2", "--data-parallel-address", "127.0.0.1",
              "--data-parallel-rpc-port", str(rpc), "--enable-expert-parallel",
              "--data-parallel-hybrid-lb", "--max-model-len", "512", "--max-num-seqs", "8"]
    head = Server(STORIES_MOE_GGUF, *common, "--data-parallel-size-local", "1")
    second = Server(STORIES_MOE_GGUF, *common, "--data-parallel-start-rank", "1")
    try:
        with head, second:
            for rank, srv, idle in ((0, head, second), (1, second, head)):
                for case in cases:
                    prompt = case["prompt"] if case["prompt"] else case["prompt_ids"]
                    want = case["generated_ids"]
                    status, out = srv.post_json("/v1/completions", {
                        "model": STORIES_MOE_GGUF, "prompt": prompt, "max_tokens": len(want),
                        "temperature": 0, "return_token_ids": True})
                    check(status == 200 and out["choices"][0]["token_ids"] == want,
                          f"rank {rank}: {status} {str(out)[:300]}")
                deadline = time.time() + 30
                while time.time() < deadline:
                    dummy = engine_series(idle, "tandem:engine_dummy_steps_total")
                    if dummy.get(str(1 - rank), 0) > 0:
                        break
                    time.sleep(0.1)
                check(dummy.get(str(1 - rank), 0) > 0,
                      f"rank {1 - rank} ran no dummy step in rank {rank}'s waves: {dummy}")
                check(engine_series(idle, "tandem:engine_requests_finished_total")
                      .get(str(1 - rank), 0) == (0 if rank == 0 else len(cases)),
                      "requests ran on the machine that was not asked")
    finally:
        head.stop()
        second.stop()


MISUSES = [
    (["--data-parallel-hybrid-lb", "--data-parallel-rank", "0"],
     "--data-parallel-hybrid-lb and --data-parallel-external-lb / --data-parallel-rank are two "
     "load-balancing modes; choose one"),
    (["--data-parallel-hybrid-lb", "--headless", "--data-parallel-start-rank", "1"],
     "--data-parallel-hybrid-lb runs this machine's own API servers; it cannot be --headless"),
    (["-dpn", "1", "--data-parallel-size-local", "2"],
     "--data-parallel-rank serves one DP rank per API deployment; --data-parallel-size-local 2 "
     "must be 1"),
    (["-dpn", "1"],
     "--data-parallel-rank with DP rank(s) from 1 needs --data-parallel-address"),
    (["-dpn", "1", "-dpr", "2"],
     "--data-parallel-rank 1 and --data-parallel-start-rank 2 disagree"),
    (["-dpn=1", "-dpr=2"],  # argparse's "-x=value" spelling of the short forms
     "--data-parallel-rank 1 and --data-parallel-start-rank 2 disagree"),
    (["-dpn", "1", "-dpr", "0"],  # an explicit 0 is not the default
     "--data-parallel-rank 1 and --data-parallel-start-rank 0 disagree"),
    (["-dpn", "2"], "--data-parallel-rank 2 must be in [0, --data-parallel-size 2)"),
    # vLLM's -dpr is --data-parallel-start-rank (a follower's first rank), not the rank.
    (["-dpr", "1"],
     "--data-parallel-start-rank 1 is for --headless machines (or --data-parallel-hybrid-lb "
     "ones); the head serves ranks from 0"),
]


def test_misused_flags_stop_start_up_naming_them():
    failures = []
    for args, needle in MISUSES:
        p = subprocess.run([BIN, "serve", STORIES_GGUF, "--data-parallel-size", "2", *args],
                           capture_output=True, text=True, timeout=60)
        out = p.stdout + p.stderr
        if p.returncode == 0 or needle not in out:
            failures.append(f"{args}: code {p.returncode}, want '{needle}':\n{out[-600:]}")
    check(not failures, "\n".join(failures))


def test_a_machine_waiting_for_its_head_stops_on_sigterm():
    """SIGTERM while an API machine still waits for an absent head ends it at once, exit 0 (the
    signal stayed pending until the start-up deadline, up to 600 s)."""
    p = subprocess.Popen([BIN, "serve", STORIES_GGUF, *COMMON, "-dpn", "1",
                          "--data-parallel-rpc-port", str(free_port()), "--port",
                          str(free_port())],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    try:
        for line in p.stdout:  # the wait has begun once it asks the head
            log.append(line)
            if "asking the head" in line:
                break
        p.send_signal(signal.SIGTERM)
        rest, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    out = "".join(log) + (rest or "")
    check(p.returncode == 0 and "signal 15: no longer waiting for the head" in out,
          f"code {p.returncode}:\n{out[-1500:]}")


if __name__ == "__main__":
    run([test_hybrid_lb_each_machine_serves_its_own_rank, test_external_lb_one_api_deployment_per_rank,
         test_a_second_machine_with_other_settings_is_refused_by_name,
         test_hybrid_lb_with_expert_parallel_steps_both_machines_in_waves,
         test_misused_flags_stop_start_up_naming_them,
         test_a_machine_waiting_for_its_head_stops_on_sigterm])
