"""The seed deployment's cluster-manager half, in miniature, on two "machines" (network
namespaces joined by a veth pair): a custom backend with the seed's command template, a
deployment pinned to machine A's devices with the seed's primary parameters (pasted with
`# comments`) and env, its Clone for machine B with the secondary's two differences, replicas
1 (the secondary first), a streamed chat through the manager's gateway with an API key equal to
one rank's answer; then the same as ONE deployment across both workers; then kill -9 of
machine B's process.

The manager runs in machine A's namespace (the namespaces reach each other, not the host); the
test talks to it from a thread that entered that namespace."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../e2e"))
from harness import MODELS, check, run  # noqa: E402
from manager_harness import Cluster  # noqa: E402
from netns import TwoMachines  # noqa: E402
from netns_thread import NamespaceThread  # noqa: E402
from test_ep_two_machines import QUESTIONS, reference_answers  # noqa: E402
from test_manager import CUSTOM_BACKEND as BACKEND  # noqa: E402  the seed's backend

MODEL = os.path.join(MODELS, "tiny-qwen3-moe")
RPC_PORT = 13389


def primary_parameters(ip_a):
    """The seed's primary parameters, scaled (TP 2, short lengths), as its users paste them."""
    return [
        "--data-parallel-size 2 --tensor-parallel-size 2",
        "--data-parallel-size-local=1          # DP ranks on this machine",
        "--api-server-count=2                  # HTTP front-end processes",
        f"--data-parallel-address={ip_a}      # primary's IP for the DP handshake",
        f"--data-parallel-rpc-port={RPC_PORT}  # handshake / RPC port",
        "--seed=1024",
        "--enable-expert-parallel",
        "--max-num-seqs=16",
        "--max-model-len=4096",
        "--max-num-batched-tokens=1024",
        "--gpu-memory-utilization=0.90",
        "--trust-remote-code",
        "--async-scheduling",
        "--no-enable-prefix-caching",
        "--compilation-config '{\"cudagraph_mode\":\"FULL_DECODE_ONLY\"}'",
        "--additional-config '{\"enable_cpu_binding\":true,\"multistream_overlap_shared_expert\":true}'",
        "--disable-access-log-for-endpoints /health,/metrics,/ping",
        "--num-threads 1",
    ]


def seed_env(ip, iface):
    return {"PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True", "HCCL_IF_IP": ip,
            "GLOO_SOCKET_IFNAME": iface, "TP_SOCKET_IFNAME": iface, "HCCL_SOCKET_IFNAME": iface,
            "OMP_PROC_BIND": "false", "OMP_NUM_THREADS": "1", "HCCL_BUFFSIZE": "1024",
            "TASK_QUEUE_ENABLE": "1", "VLLM_ENGINE_READY_TIMEOUT_S": "300",
            "TANDEM_STARTUP_TIMEOUT_S": "300"}


def chat(model, question):
    return {"model": model, "max_tokens": 24, "temperature": 0,
            "messages": [{"role": "user", "content": question}],
            "chat_template_kwargs": {"enable_thinking": False}}


def check_chat(c, model, key, reference):
    for q in QUESTIONS[:3]:
        status, events, text = c.gateway_stream(chat(model, q), key, timeout=120)
        check(status == 200, f"{model} {q!r}: {status} {events}")
        check(text == reference[q], f"{model} {q!r}: {text!r} != one rank's {reference[q]!r}")


def test_seed_flow_through_the_manager():
    reference = reference_answers(MODEL)
    with TwoMachines("mg") as m:
        ns_a = NamespaceThread(m.ns_a)

        def popen(name, cmd, log):
            ns = m.ns_b if name == "agent-node-b" else m.ns_a
            return m.popen(ns, cmd, dict(os.environ), log)

        with Cluster(host=m.ip_a, popen=popen, run_in=ns_a.run) as c:
            c.add_agent("node-a", ip=m.ip_a)
            c.add_agent("node-b", ip=m.ip_b)
            c.create("/v2/inference-backends", BACKEND)
            primary = c.create("/v2/models", {
                "name": "qwen3.5-397b-1", "local_path": MODEL, "replicas": 0,
                "backend": "vllm-ascend-custom", "backend_version": "0.18.0rc1",
                "gpu_selector": {"gpu_ids": ["node-a:cpu:0", "node-a:cpu:1"]},
                "backend_parameters": primary_parameters(m.ip_a),
                "env": seed_env(m.ip_a, m.if_a)})
            # Clone, as the UI does: a POST built from a GET.
            clone = c.call("GET", f"/v2/models/{primary['id']}").json
            clone["name"] = "qwen3.5-397b-2"
            clone["gpu_selector"] = {"gpu_ids": ["node-b:cpu:0", "node-b:cpu:1"]}
            clone["backend_parameters"] = [p for p in clone["backend_parameters"]
                                           if not p.startswith("--api-server-count")]
            clone["backend_parameters"] += ["--data-parallel-start-rank=1", "--headless"]
            clone["env"] = seed_env(m.ip_b, m.if_b)
            secondary = c.create("/v2/models", clone)
            t0 = time.time()
            c.set_replicas(secondary["id"], 1)
            c.set_replicas(primary["id"], 1)
            head = c.wait_running("qwen3.5-397b-1", timeout=300)[0]
            follower = c.wait_running("qwen3.5-397b-2", timeout=300)[0]
            print(f"  replicas 0 -> 1 to RUNNING (two hand-made deployments): {time.time() - t0:.1f} s")
            check(head["worker_name"] == "node-a" and follower["worker_name"] == "node-b",
                  (head, follower))
            check(f"joined the head at {m.ip_a}:{RPC_PORT}" in follower["state_message"],
                  f"the follower names its head: {follower['state_message']!r}")

            key = c.create("/v2/api-keys", {"name": "seed", "scope": ["inference"],
                                            "allowed_model_names": ["qwen3.5-397b-1"]})
            check_chat(c, "qwen3.5-397b-1", key["value"], reference)
            check(c.gateway_stream(chat("qwen3.5-397b-1", "hi"), None)[0] == 401, "no key: 401")
            other = c.create("/v2/api-keys", {"name": "other", "scope": ["inference"],
                                              "allowed_model_names": ["qwen3.5-397b-2"]})
            check(c.gateway_stream(chat("qwen3.5-397b-1", "hi"), other["value"])[0] == 404,
                  "a key not allowed on the deployment: 404")
            check(c.call("DELETE", f"/v2/api-keys/{key['id']}").status == 204, "delete")
            check(c.gateway_stream(chat("qwen3.5-397b-1", "hi"), key["value"])[0] == 401,
                  "a deleted key: 401 at once")

            # The same as ONE deployment across both workers: the manager fills the DP flags.
            c.set_replicas(primary["id"], 0)
            c.set_replicas(secondary["id"], 0)
            c.wait_for("the hand-made pair to stop",
                       lambda: not c.instances("qwen3.5-397b-1") and not c.instances("qwen3.5-397b-2"), 60)
            params = [p for p in primary_parameters(m.ip_a)
                      if not p.startswith(("--data-parallel-size-local", "--data-parallel-address",
                                           "--data-parallel-rpc-port"))]
            env = {k: v for k, v in seed_env(m.ip_a, m.if_a).items()
                   if not k.endswith("IFNAME") and k != "HCCL_IF_IP"}
            one = c.create("/v2/models", {
                "name": "qwen3.5-397b", "local_path": MODEL, "replicas": 0,
                "backend": "vllm-ascend-custom", "distributed_inference_across_workers": True,
                "gpu_selector": {"gpu_ids": ["node-a:cpu:0", "node-a:cpu:1", "node-b:cpu:0",
                                             "node-b:cpu:1"]},
                "backend_parameters": params, "env": env})
            t0 = time.time()
            c.set_replicas(one["id"], 1)

            def all_running():
                items = c.instances("qwen3.5-397b")
                if len(items) != 1 or items[0]["state"] != "RUNNING":
                    return False
                subs = items[0]["distributed_servers"]["subordinate_workers"]
                return len(subs) == 1 and subs[0]["state"] == "RUNNING"
            c.wait_for("the deployment across workers and its subordinate RUNNING", all_running, 300)
            print(f"  replicas 0 -> 1 to RUNNING (one deployment across two workers): {time.time() - t0:.1f} s")
            inst = c.instances("qwen3.5-397b")[0]
            sub = inst["distributed_servers"]["subordinate_workers"][0]
            check(sub["worker_name"] == "node-b" and m.ip_a in sub["state_message"], sub)
            key = c.create("/v2/api-keys", {"name": "one", "scope": ["inference"]})["value"]
            check_chat(c, "qwen3.5-397b", key, reference)

            # kill -9 of machine B's tandem process: ERROR with the exit status, the gateway
            # answers 503 or serves meanwhile (never hangs), the back-off restarts it.
            os.kill(sub["pid"], 9)
            c.wait_for("ERROR naming the signal", lambda: (lambda i: i["state"] == "ERROR" and
                       "killed by signal 9" in i["state_message"])(c.instances("qwen3.5-397b")[0]), 60)
            status, _, _ = c.gateway_stream(chat("qwen3.5-397b", "hi"), key, timeout=60)
            check(status in (200, 503), f"during the restart: {status}")
            c.wait_for("the restart", all_running, 300)
            check(c.instances("qwen3.5-397b")[0]["restart_count"] == 1, "one restart")
            check_chat(c, "qwen3.5-397b", key, reference)
        ns_a.close()


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("SKIP: the multinode tests need root (network namespaces)")
        sys.exit(77)
    run([test_seed_flow_through_the_manager])
