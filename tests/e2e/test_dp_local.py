"""Data parallel on one machine: --data-parallel-size 2 with two API servers on one port.
Outputs equal one rank's; X-data-parallel-rank pins a rank; bad pins are 400s; /metrics sums
both API servers' request counters whichever one answers."""
from harness import STORIES_GGUF, Server, check, run

ARGS = ["--data-parallel-size", "2", "--api-server-count", "2", "--max-model-len", "512",
        "--max-num-seqs", "16"]


def finished(srv, rank):
    _, _, body = srv.request("GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith("tandem:engine_requests_finished_total{") and f'engine="{rank}"' in line:
            return float(line.split()[-1])
    raise AssertionError("no per-rank counter in /metrics")


def successes(srv):
    _, _, body = srv.request("GET", "/metrics")
    return sum(float(line.split()[-1]) for line in body.decode().splitlines()
               if line.startswith("vllm:request_success_total{"))


def wait_ranks(srv):
    import time
    deadline = time.time() + 60
    while time.time() < deadline:
        _, _, body = srv.request("GET", "/metrics")
        if body.decode().count('tandem:engine_alive{') == 2 and ' 0\n' not in "".join(
                l + "\n" for l in body.decode().splitlines() if l.startswith("tandem:engine_alive")):
            return
        time.sleep(0.2)
    raise AssertionError("ranks not alive")


def body(prompt, **kw):
    return {"model": STORIES_GGUF, "prompt": prompt, "max_tokens": 16, "temperature": 0,
            "return_token_ids": True, **kw}


def test_dp2_on_one_machine_pins_ranks_and_matches_one_rank():
    with Server(STORIES_GGUF) as one:
        want = one.post_json("/v1/completions", body("Lily and Ben"))[1]["choices"][0]["token_ids"]
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        rpc = s.getsockname()[1]
    args = ARGS + ["--data-parallel-rpc-port", str(rpc)]
    with Server(STORIES_GGUF, *args) as srv:
        wait_ranks(srv)
        for rank in (0, 1):
            before = finished(srv, rank)
            for _ in range(3):
                status, out = srv.post_json("/v1/completions", body("Lily and Ben"),
                                            headers={"X-data-parallel-rank": str(rank)})
                check(status == 200, f"pinned to {rank}: {status} {out}")
                check(out["choices"][0]["token_ids"] == want, f"rank {rank} output differs")
            # The engine's counters reach /metrics with its heartbeats: read until they show
            # the 3 (the deadline only guards against a hang), then it must be exactly 3.
            import time
            deadline = time.time() + 10
            while True:
                served = finished(srv, rank) - before
                if served >= 3 or time.time() > deadline:
                    break
                time.sleep(0.1)
            check(served == 3, f"rank {rank} did not serve the pinned ones: {served} of 3")
        # Two API servers share the port, so each scrape reaches either one; both show the
        # whole server's request counters (the 6 requests above, wherever they were served).
        for _ in range(8):
            check(successes(srv) == 6, f"request_success_total {successes(srv)}, expected 6")
        status, out = srv.post_json("/v1/completions", body("x"),
                                    headers={"X-data-parallel-rank": "7"})
        check(status == 400 and "out of range" in out["error"]["message"], f"{status} {out}")
        status, out = srv.post_json("/v1/completions", body("x"),
                                    headers={"X-data-parallel-rank": "one"})
        check(status == 400 and "X-data-parallel-rank" in out["error"]["message"], f"{out}")


if __name__ == "__main__":
    run([test_dp2_on_one_machine_pins_ranks_and_matches_one_rank])
