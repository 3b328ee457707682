"""The seed deployment in miniature: DP=2 over two "machines" (network namespaces joined by a
veth pair), the primary with the API servers, the secondary --headless, flags as the seed's
command lines have them (sizes scaled). Needs root; without it the test says so and is skipped.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../e2e"))
from harness import STORIES_GGUF, Server, check, run  # noqa: E402
from netns import TwoMachines  # noqa: E402
from deployment import RPC_PORT, Deployment as _Deployment, finished_counts  # noqa: E402

PROMPTS = ["Once upon a time", "Lily and Ben", "The cat sat on the mat.", "One day, a little",
           "Tom had a red ball", "The sun was", "She saw a big dog", "The bird flew"]
COMMON = ["--data-parallel-size", "2", "--tensor-parallel-size", "1",
          "--data-parallel-size-local=1", "--data-parallel-rpc-port=13389", "--seed=1024",
          "--max-num-seqs=16", "--max-model-len=512", "--max-num-batched-tokens=512",
          "--gpu-memory-utilization=0.90", "--trust-remote-code", "--async-scheduling",
          "--no-enable-prefix-caching", "--disable-access-log-for-endpoints",
          "/health,/metrics,/ping", "--num-threads", "1"]


def Deployment(m, **kw):
    return _Deployment(m, STORIES_GGUF, COMMON, **kw)


def greedy(prompt, max_tokens=24, **kw):
    return {"model": STORIES_GGUF, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "return_token_ids": True, **kw}


def reference_outputs():
    with Server(STORIES_GGUF, "--seed=1024") as srv:
        out = {}
        for p in PROMPTS:
            status, body = srv.post_json("/v1/completions", greedy(p))
            check(status == 200, f"reference: {body}")
            out[p] = body["choices"][0]["token_ids"]
        return out


REFERENCE = {}


def check_64_requests_after(dep, before):
    """64 greedy requests through the primary, each equal to one rank's output; both ranks
    serve some beyond the `before` requests they had finished. Returns what each served."""
    results = dep.client({"requests": [greedy(PROMPTS[i % len(PROMPTS)]) for i in range(64)],
                          "concurrency": 16})
    for i, r in enumerate(results):
        check(r["status"] == 200 and not r["error"], f"request {i}: {r}")
        want = REFERENCE[PROMPTS[i % len(PROMPTS)]]
        check(r["token_ids"] == want, f"request {i}: {r['token_ids'][:8]} != {want[:8]}")
    after = finished_counts(dep, total=sum(before) + 64)
    served = [a - b for a, b in zip(after, before)]
    check(sum(served) == 64 and all(s > 0 for s in served), f"per-rank finished counts {served}")
    return served


def check_64_requests(dep):
    return check_64_requests_after(dep, before=[0, 0])


def test_seed_flags_head_first_64_requests_match_one_rank():
    with TwoMachines("a") as m:
        dep = Deployment(m)
        try:
            dep.start_head()
            dep.wait_head_listening()
            dep.start_headless()
            dep.wait_both_ranks()
            check_64_requests(dep)
        finally:
            dep.stop()


def test_headless_first_then_head_works_too_and_a_burst_splits_evenly():
    with TwoMachines("b") as m:
        dep = Deployment(m)
        try:
            dep.start_headless()
            dep.wait_headless_dialing()
            dep.start_head()
            dep.wait_both_ranks()
            # Issue 4 §2: a burst on two idle ranks before any snapshot carries load splits
            # 16 ± 1 / 16 ± 1 — so it is the first traffic the deployment sees. The balancer
            # counts every send exactly (RankLoadTracker), so only a request that finishes
            # during the burst can skew it: 400 tokens each (ignore_eos) keep all of them running
            # for 400 engine steps, far longer than 32 sends take (with 4 tokens, a loaded
            # machine finished some early and split 14 / 18).
            dep.client({"requests": [greedy("Once", max_tokens=400, ignore_eos=True)
                                     for _ in range(32)],
                        "concurrency": 32})
            split = finished_counts(dep, total=32)
            check(sum(split) == 32 and all(15 <= s <= 17 for s in split), f"burst split {split}")
            before = split
            check_64_requests_after(dep, before)
        finally:
            dep.stop()


LONG = 480  # tokens per long request: prompt + 480 fit --max-model-len=512
MAX_NUM_SEQS = int(next(a.split("=")[1] for a in COMMON if a.startswith("--max-num-seqs=")))


def pinned(body, rank):
    return dict(body, _headers={"X-data-parallel-rank": str(rank)})


def test_kill_headless_under_load_fails_its_requests_and_rank0_serves_on():
    """The headless machine dies while both ranks stream long requests: rank 1's fail naming
    it, rank 0's finish whole, and the deployment serves on. The kill waits for an event, not
    the clock: rank 1 holds 3 × --max-num-seqs long requests and rank 0 2 ×, so once both ranks
    have streamed a token, rank 1 has ≥ 2 × LONG engine steps left and rank 0 ≥ LONG (its second
    wave has not started) — neither can be done by the kill, however fast the machine."""
    with TwoMachines("c") as m:
        dep = Deployment(m)
        try:
            dep.start_head()
            dep.start_headless()
            dep.wait_both_ranks()
            rank_of = [1] * (3 * MAX_NUM_SEQS) + [0] * (2 * MAX_NUM_SEQS)
            reqs = [pinned(greedy(PROMPTS[i % 8], max_tokens=LONG, ignore_eos=True, stream=True),
                           rank) for i, rank in enumerate(rank_of)]

            def ranks_streaming(events):
                return {rank_of[e["i"]] for e in events if e["event"] == "first_token"}

            with dep.client_progress({"requests": reqs, "concurrency": len(reqs),
                                      "timeout": 60}) as client:
                seen = client.wait_until(lambda evs: ranks_streaming(evs) == {0, 1},
                                         "first streamed token on both ranks", timeout=120)
                m.kill_all(m.ns_b)
                t_kill = time.time()
                results = client.results(timeout=300)  # hang guard only
                events = list(client.events)
            ended_before_kill = {e["i"] for e in seen if e["event"] == "done"}
            rank1 = [i for i, r in enumerate(rank_of) if r == 1]
            rank0 = [i for i, r in enumerate(rank_of) if r == 0]
            check(any(i not in ended_before_kill for i in rank0),
                  "rank 0 had no request in flight when rank 1 died")
            for i in rank1:  # rank 1's: whole, or failed naming the lost rank
                r = results[i]
                if r["error"]:
                    check("rank 1" in r["error"] or "died" in r["error"],
                          f"request {i} on rank 1: error {r['error']}")
                else:
                    check(r["status"] == 200 and r["finish_reason"] == "length" and
                          len(r["token_ids"]) == LONG,
                          f"request {i} on rank 1 neither whole nor failed: "
                          f"{dict(r, token_ids=len(r['token_ids']), text=len(r['text']))}")
            failed = [i for i in rank1 if results[i]["error"]]
            check(failed, "no request failed although rank 1 died")
            for i in rank0:  # rank 0's: served whole through the loss
                r = results[i]
                check(r["status"] == 200 and not r["error"] and r["finish_reason"] == "length"
                      and len(r["token_ids"]) == LONG,
                      f"request {i} on rank 0: "
                      f"{dict(r, token_ids=len(r['token_ids']), text=len(r['text']))}")
            rank1_ended = max(e["t"] for e in events if e["event"] == "done" and e["i"] in rank1)
            check(rank1_ended - t_kill < 60, "failure not noticed quickly: rank 1's requests "
                                             f"ended {rank1_ended - t_kill:.1f} s after the kill")
            health = dep.client({"get": ["/health"]})["/health"]["status"]
            check(health == 200, f"/health {health} with rank 0 alive")
            check(dep.metric("tandem:engine_alive", 1) == 0, "rank 1 loss not in /metrics")
            after = dep.client({"requests": [greedy(p) for p in PROMPTS], "concurrency": 8})
            for p, r in zip(PROMPTS, after):
                check(r["status"] == 200 and r["token_ids"] == REFERENCE[p], f"after kill: {r}")
            print(f"  {len(failed)}/{len(rank1)} rank-1 requests failed (after at most "
                  f"{max(len(results[i]['token_ids']) for i in failed)} tokens), "
                  f"{len(rank1) - len(failed)} finished; rank 1's ended "
                  f"{rank1_ended - t_kill:.1f} s after the kill")
        finally:
            dep.stop()


def test_head_never_started_headless_gives_up_at_the_deadline():
    with TwoMachines("d") as m:
        dep = Deployment(m, timeout_s=3)
        try:
            dep.start_headless()
            code = dep.wait_exit("headless", 30)
            log = dep.log("headless")
            check(code != 0, f"headless exited {code}")
            check(f"{m.ip_a}:{RPC_PORT}" in log and "deadline" in log, log)
        finally:
            dep.stop()


def test_headless_never_started_head_exits_naming_rank1_and_address():
    with TwoMachines("e") as m:
        dep = Deployment(m, timeout_s=3)
        try:
            dep.start_head()
            code = dep.wait_exit("head", 30)
            log = dep.log("head")
            check(code != 0, f"head exited {code}")
            check("rank(s) 1 " in log and f"{m.ip_a}:{RPC_PORT}" in log, log)
        finally:
            dep.stop()


def test_config_mismatch_is_refused_naming_the_setting():
    with TwoMachines("f") as m:
        dep = Deployment(m, timeout_s=30, headless_extra=["--seed=7"])
        try:
            dep.start_head()
            dep.start_headless()
            check(dep.wait_exit("headless", 40) != 0, "headless accepted a different seed")
            check(dep.wait_exit("head", 40) != 0, "head accepted a different seed")
            for name in ("head", "headless"):
                check("--seed 7" in dep.log(name) and "--seed 1024" in dep.log(name),
                      f"{name}:\n{dep.log(name)}")
        finally:
            dep.stop()


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: multinode tests need root to create network namespaces (ip netns)")
        sys.exit(77)
    REFERENCE.update(reference_outputs())
    run([test_seed_flags_head_first_64_requests_match_one_rank,
         test_headless_first_then_head_works_too_and_a_burst_splits_evenly,
         test_kill_headless_under_load_fails_its_requests_and_rank0_serves_on,
         test_head_never_started_headless_gives_up_at_the_deadline,
         test_headless_never_started_head_exits_naming_rank1_and_address,
         test_config_mismatch_is_refused_naming_the_setting])
