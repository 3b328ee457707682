"""The seed deployment complete in miniature: two "machines" (network namespaces joined by a veth
pair), `--data-parallel-size 2 --tensor-parallel-size 2 --enable-expert-parallel` (TP scaled
from 8), every other flag and variable of the seed's two command lines as written. First with
the tiny Qwen3-MoE (no MTP head: without the speculative config), then with the seed's own
architecture, tiny-qwen3.5-moe, and the seed's `--speculative_config` verbatim (MTP, 3 drafts).
The 8 experts live on 4 ranks over two machines (Gloo over the veth pair); DP ranks step in
waves. Through the primary: streaming chats with `Authorization: Bearer <key>` and
`"chat_template_kwargs": {"enable_thinking": false}` equal one rank's answers without
speculation, and /metrics shows drafts on both ranks. Needs root; without it the test says so
and is skipped.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../e2e"))
from harness import MODELS, Server, check, run  # noqa: E402
from netns import TwoMachines  # noqa: E402
from deployment import Deployment, finished_counts  # noqa: E402

MODEL = os.path.join(MODELS, "tiny-qwen3-moe")
MODEL35 = os.path.join(MODELS, "tiny-qwen3.5-moe")
SPEC = ["--speculative_config",
        '{"method":"qwen3_5_mtp","num_speculative_tokens":3,"enforce_eager":true}']
NAME = "qwen3-moe-seed"
KEY = "sk-seed-deployment"
COMMON = ["--data-parallel-size", "2", "--tensor-parallel-size", "2",
          "--data-parallel-size-local=1", "--data-parallel-rpc-port=13389", "--seed=1024",
          "--enable-expert-parallel", "--max-num-seqs=16", "--max-model-len=4096",
          "--max-num-batched-tokens=1024", "--gpu-memory-utilization=0.90",
          "--trust-remote-code", "--async-scheduling", "--no-enable-prefix-caching",
          "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
          "--additional-config",
          '{"enable_cpu_binding":true,"multistream_overlap_shared_expert":true}',
          "--disable-access-log-for-endpoints", "/health,/metrics,/ping", "--num-threads", "1"]
QUESTIONS = ["Hello! Who are you?", "What is 2 + 2?", "Name a colour.", "Write one word.",
             "Tell me a story.", "你好", "Is the sky blue?", "Count to three."]


def chat(question, max_tokens=24):
    return {"model": NAME, "stream": True, "max_tokens": max_tokens, "temperature": 0,
            "messages": [{"role": "user", "content": question}],
            "chat_template_kwargs": {"enable_thinking": False}}


def reference_answers(model=MODEL):
    """One rank, no parallelism, no speculation, the same requests (not streamed)."""
    with Server(model, "--seed=1024", "--served-model-name", NAME, "--max-model-len=4096",
                "--no-enable-prefix-caching") as srv:
        out = {}
        for q in QUESTIONS:
            body = dict(chat(q), stream=False)
            status, resp = srv.post_json("/v1/chat/completions", body)
            check(status == 200, f"reference: {resp}")
            out[q] = resp["choices"][0]["message"]["content"]
        return out


REFERENCE = {}
REFERENCE35 = {}


def seed_deployment(m, model=MODEL, extra=()):
    env = {"OMP_PROC_BIND": "false", "TASK_QUEUE_ENABLE": "1", "HCCL_BUFFSIZE": "1024",
           "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    return Deployment(m, model, COMMON + list(extra), timeout_s=120, env_extra=env,
                      head_extra=["--served-model-name", NAME, "--api-key", KEY])


def run_seed_deployment(tag, model, extra, reference, then=None):
    """Starts the head then the headless machine, checks the seed's traffic against
    `reference`, then runs `then(dep)` if given."""
    with TwoMachines(tag) as m:
        dep = seed_deployment(m, model, extra)
        try:
            dep.start_head()
            dep.wait_head_listening()
            dep.start_headless()
            dep.wait_both_ranks()
            check_seed_traffic(dep, reference)
            if then is not None:
                then(dep)
        finally:
            dep.stop()


def check_seed_traffic(dep, reference):
    auth = {"Authorization": f"Bearer {KEY}"}
    # A lone request: the other rank idles in the wave with dummy steps.
    t0 = time.time()
    lone = dep.client({"path": "/v1/chat/completions", "headers": auth,
                       "requests": [chat(QUESTIONS[0])], "timeout": 60})
    check(lone[0]["error"] is None and lone[0]["text"] == reference[QUESTIONS[0]],
          f"lone request: {lone[0]}")
    lone_s = time.time() - t0
    results = dep.client({"path": "/v1/chat/completions", "headers": auth,
                          "requests": [chat(q) for q in QUESTIONS], "concurrency": 8,
                          "timeout": 120})
    for q, r in zip(QUESTIONS, results):
        check(r["status"] == 200 and r["error"] is None, f"{q!r}: {r}")
        check(r["finish_reason"] in ("length", "stop"), f"{q!r}: {r}")
        check(r["text"] == reference[q], f"{q!r}: {r['text']!r} != {reference[q]!r}")
    served = finished_counts(dep, total=1 + len(QUESTIONS))
    check(all(s > 0 for s in served), f"per-rank finished counts {served}")
    no_key = dep.client({"path": "/v1/chat/completions", "requests": [chat("hi")]})
    check(no_key[0]["status"] == 401, f"no key: {no_key[0]}")
    print(f"  lone request {lone_s:.2f} s; per-rank finished {served}")


def check_drafts_on_both_ranks(dep):
    # The counters travel with the coordinator's snapshots: wait for them (a hang guard only).
    deadline = time.time() + 30
    while True:
        drafts = [dep.metric("vllm:spec_decode_num_drafts_total", r) for r in (0, 1)]
        if all(d > 0 for d in drafts) or time.time() > deadline:
            break
        time.sleep(0.2)
    check(all(d > 0 for d in drafts), f"MTP drafts per rank {drafts}")
    print(f"  MTP drafts per rank {drafts}")


def test_seed_tp2_ep_streaming_chat_with_key_equals_one_rank():
    run_seed_deployment("g", MODEL, (), REFERENCE)


def test_seed_qwen35_with_its_mtp_speculative_config_equals_one_rank():
    run_seed_deployment("h", MODEL35, SPEC, REFERENCE35, then=check_drafts_on_both_ranks)


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: multinode tests need root to create network namespaces (ip netns)")
        sys.exit(77)
    REFERENCE.update(reference_answers())
    REFERENCE35.update(reference_answers(MODEL35))
    run([test_seed_tp2_ep_streaming_chat_with_key_equals_one_rank,
         test_seed_qwen35_with_its_mtp_speculative_config_equals_one_rank])
