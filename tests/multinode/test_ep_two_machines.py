"""The seed deployment complete in miniature: two "machines" (network namespaces joined by a veth
pair), `--data-parallel-size 2 --tensor-parallel-size 2 --enable-expert-parallel` (TP scaled
from 8), the tiny Qwen3-MoE, every other flag and variable of the seed's two command lines as
written (but speculative decoding, which tiny-qwen3-moe has no head for). The 8 experts live on
4 ranks over two machines (Gloo over the veth pair); DP ranks step in waves. Through the
primary: streaming chats with `Authorization: Bearer <key>` and
`"chat_template_kwargs": {"enable_thinking": false}` equal one rank's answers. Needs root;
without it the test says so and is skipped.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../e2e"))
from harness import MODELS, Server, check, run  # noqa: E402
from netns import TwoMachines  # noqa: E402
from deployment import Deployment, finished_counts  # noqa: E402

MODEL = os.path.join(MODELS, "tiny-qwen3-moe")
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


def reference_answers():
    """One rank, no parallelism, the same requests (not streamed)."""
    with Server(MODEL, "--seed=1024", "--served-model-name", NAME, "--max-model-len=4096") as srv:
        out = {}
        for q in QUESTIONS:
            body = dict(chat(q), stream=False)
            status, resp = srv.post_json("/v1/chat/completions", body)
            check(status == 200, f"reference: {resp}")
            out[q] = resp["choices"][0]["message"]["content"]
        return out


REFERENCE = {}


def seed_deployment(m):
    env = {"OMP_PROC_BIND": "false", "TASK_QUEUE_ENABLE": "1", "HCCL_BUFFSIZE": "1024",
           "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True"}
    return Deployment(m, MODEL, COMMON, timeout_s=120, env_extra=env,
                      head_extra=["--served-model-name", NAME, "--api-key", KEY])


def test_seed_tp2_ep_streaming_chat_with_key_equals_one_rank():
    with TwoMachines("g") as m:
        dep = seed_deployment(m)
        try:
            dep.start_head()
            dep.wait_head_listening()
            dep.start_headless()
            dep.wait_both_ranks()
            auth = {"Authorization": f"Bearer {KEY}"}
            # A lone request: the other rank idles in the wave with dummy steps.
            t0 = time.time()
            lone = dep.client({"path": "/v1/chat/completions", "headers": auth,
                               "requests": [chat(QUESTIONS[0])], "timeout": 60})
            check(lone[0]["error"] is None and lone[0]["text"] == REFERENCE[QUESTIONS[0]],
                  f"lone request: {lone[0]}")
            lone_s = time.time() - t0
            results = dep.client({"path": "/v1/chat/completions", "headers": auth,
                                  "requests": [chat(q) for q in QUESTIONS], "concurrency": 8,
                                  "timeout": 120})
            for q, r in zip(QUESTIONS, results):
                check(r["status"] == 200 and r["error"] is None, f"{q!r}: {r}")
                check(r["finish_reason"] in ("length", "stop"), f"{q!r}: {r}")
                check(r["text"] == REFERENCE[q], f"{q!r}: {r['text']!r} != {REFERENCE[q]!r}")
            served = finished_counts(dep, total=1 + len(QUESTIONS))
            check(all(s > 0 for s in served), f"per-rank finished counts {served}")
            no_key = dep.client({"path": "/v1/chat/completions", "requests": [chat("hi")]})
            check(no_key[0]["status"] == 401, f"no key: {no_key[0]}")
            print(f"  lone request {lone_s:.2f} s; per-rank finished {served}")
        finally:
            dep.stop()


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: multinode tests need root to create network namespaces (ip netns)")
        sys.exit(77)
    REFERENCE.update(reference_answers())
    run([test_seed_tp2_ep_streaming_chat_with_key_equals_one_rank])
