"""`tandem manager` + `tandem agent` for real on loopback: deploy through /v2, run instances as
processes, chat through the /v1 gateway with API keys, restart what dies, refuse bad input.

The seed's flow across two network namespaces is tests/multinode/test_manager_seed.py."""
import json
import os
import threading
import time

from harness import MODELS, STORIES_GGUF, Server, check, free_port, run
from manager_harness import Cluster

TINY_QWEN3 = os.path.join(MODELS, "tiny-qwen3")
CUSTOM_BACKEND = {
    "backend_name": "vllm-ascend-custom",
    "version_configs": {"0.18.0rc1": {
        "entrypoint": "tandem serve",
        "run_command": "{{model_path}} --host {{worker_ip}} --port {{port}} "
                       "--served-model-name {{model_name}}"}},
    "default_version": "0.18.0rc1",
}
BUSY = 24  # long requests pinning replica A (480 tokens each: they outlast the burst)
CHAT = {"messages": [{"role": "user", "content": "Say something about the sea."}],
        "max_tokens": 12, "temperature": 0, "chat_template_kwargs": {"enable_thinking": False}}


def test_deploy_clone_chat_through_the_gateway_with_api_keys():
    with Cluster() as c:
        c.add_agent("node-a")
        backend = c.create("/v2/inference-backends", CUSTOM_BACKEND)
        check(backend["is_built_in"] is False, backend)
        model = c.create("/v2/models", {
            "name": "qwen-1", "local_path": TINY_QWEN3, "replicas": 0,
            "backend": "vllm-ascend-custom", "backend_version": "0.18.0rc1",
            "gpu_selector": {"gpu_ids": ["node-a:cpu:0"]},
            "backend_parameters": ["--max-model-len 512 --max-num-seqs 4  # small",
                                   "--seed=1024", "--num-threads 1"],
            "env": {"OMP_NUM_THREADS": "1"}})
        check(c.instances("qwen-1") == [], "replicas 0 makes no instance")
        # Clone: a POST built from a GET, on the other device.
        clone = c.call("GET", f"/v2/models/{model['id']}").json
        clone.update(name="qwen-2", gpu_selector={"gpu_ids": ["node-a:cpu:1"]})
        clone = c.create("/v2/models", clone)
        c.set_replicas(clone["id"], 1)
        c.set_replicas(model["id"], 1)
        inst = c.wait_running("qwen-1")[0]
        check(inst["worker_name"] == "node-a" and inst["gpu_indexes"] == [0], inst)
        c.wait_running("qwen-2")
        logs = c.call("GET", f"/v2/model-instances/{inst['id']}/logs?tail=200")
        check(logs.status == 200 and "HTTP server listening on 127.0.0.1" in logs.raw,
              f"the instance's log through the manager: {logs}")
        check(c.call("GET", f"/v2/model-instances/{inst['id']}/logs?tail=x").status == 400, "bad tail")
        _check_follow(c, inst["id"])
        c.wait_for("ready_replicas", lambda: c.call("GET", f"/v2/models/{model['id']}")
                   .json["ready_replicas"] == 1, 30)

        key = c.create("/v2/api-keys", {"name": "ci", "scope": ["inference"],
                                        "allowed_model_names": ["qwen-1"]})["value"]
        status, events, text = c.gateway_stream({**CHAT, "model": "qwen-1"}, key)
        check(status == 200 and text, f"gateway stream: {status} {events}")
        check(all("usage" not in e or e["choices"] for e in events),
              "the usage chunk the gateway asked for is not passed on")
        with Server(TINY_QWEN3, "--max-model-len", "512", "--seed", "1024") as direct:
            _, direct_events, _ = direct.stream("/v1/chat/completions", {**CHAT, "model": direct.model, "stream": True})
            direct_text = "".join((e["choices"][0]["delta"].get("content") or "")
                                  for e in direct_events if e.get("choices"))
        check(text == direct_text, f"gateway {text!r} != single server {direct_text!r}")
        print(f"  answer through the gateway = single server: {text!r}")

        check(c.gateway_stream({**CHAT, "model": "qwen-1"}, None)[0] == 401, "no key: 401")
        check(c.gateway_stream({**CHAT, "model": "qwen-1"}, "tandem_0123456789abcdef_" + "0" * 32)[0]
              == 401, "a wrong key: 401")
        status, body, _ = c.gateway_stream({**CHAT, "model": "qwen-2"}, key)
        check(status == 404 and "does not exist" in body[0]["error"]["message"],
              f"a key not allowed on the model: 404 ({status} {body})")
        models = c.call("GET", "/v1/models", headers={"Authorization": f"Bearer {key}"}).json
        check([m["id"] for m in models["data"]] == ["qwen-1"], models)
        c.wait_for("usage to be recorded", lambda: any(
            u["model_name"] == "qwen-1" and u["completion_tokens"] > 0
            for u in c.items("/v2/usage")), 10)
        key_row = [k for k in c.items("/v2/api-keys") if k["name"] == "ci"][0]
        check(c.call("DELETE", f"/v2/api-keys/{key_row['id']}").status == 204, "delete key")
        check(c.gateway_stream({**CHAT, "model": "qwen-1"}, key)[0] == 401,
              "a deleted key is refused at once")

        # Replicas 0: the process ends and the instance goes.
        pid = inst["pid"]
        c.set_replicas(model["id"], 0)
        c.wait_for("the instance to go", lambda: c.instances("qwen-1") == [], 30)
        c.wait_for("its process to end", lambda: _ended(pid), 30)


def test_two_replicas_split_by_load_and_a_killed_one_restarts():
    with Cluster() as c:
        c.add_agent("node-a")
        model = c.create("/v2/models", {
            "name": "stories", "local_path": STORIES_GGUF, "replicas": 2,
            "gpu_selector": {"gpus_per_replica": 1},
            "backend_parameters": ["--max-model-len 512 --max-num-seqs 64 --num-threads 1"]})
        a, b = c.wait_running("stories")
        key = c.create("/v2/api-keys", {"name": "k"})["value"]
        auth = {"Authorization": f"Bearer {key}"}

        # Pin replica A busy with long requests sent to it directly, then send 64 short ones
        # through the gateway: least-loaded routing gives A fewer.
        busy_done = threading.Event()

        def busy():
            import http.client
            threads = []
            for _ in range(BUSY):
                def one():
                    conn = http.client.HTTPConnection("127.0.0.1", a["port"], timeout=300)
                    conn.request("POST", "/v1/completions", body=json.dumps({
                        "model": "stories", "prompt": "Once", "max_tokens": 480,
                        "ignore_eos": True, "temperature": 0}), headers={"Content-Type": "application/json"})
                    conn.getresponse().read()
                    conn.close()
                t = threading.Thread(target=one)
                t.start()
                threads.append(t)
            for t in threads:
                t.join()
            busy_done.set()

        threading.Thread(target=busy, daemon=True).start()
        c.wait_for("the gateway to see replica A busy", lambda: _gateway_load(c, a) >= BUSY, 60)
        before_a, before_b = _finished(c, a), _finished(c, b)
        results = []

        def short(i):
            r = c.call("POST", "/v1/completions", {"model": "stories", "prompt": f"Tom {i}",
                                                   "max_tokens": 4, "temperature": 0}, headers=auth)
            results.append(r.status)

        threads = [threading.Thread(target=short, args=(i,)) for i in range(64)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        check(results.count(200) == 64, f"64 gateway requests: {results}")
        check(not busy_done.is_set(), "the test's premise: replica A was still busy during the burst")
        got_a, got_b = _finished(c, a) - before_a, _finished(c, b) - before_b
        check(got_a + got_b == 64 and got_b > got_a,
              f"the idle replica got {got_b}, the busy one {got_a}")
        print(f"  load split: idle replica {got_b}, busy replica {got_a}")

        # kill -9 of one instance's process: ERROR with the exit status, gateway keeps serving
        # on the survivor (or 503), never hangs; the back-off restarts it.
        os.kill(b["pid"], 9)
        c.wait_for("ERROR with the signal", lambda: any(
            i["id"] == b["id"] and i["state"] == "ERROR" and "killed by signal 9" in i["state_message"]
            for i in c.instances("stories")), 30)
        for i in range(8):
            r = c.call("POST", "/v1/completions", {"model": "stories", "prompt": "Lily",
                                                   "max_tokens": 4}, headers=auth, timeout=60)
            check(r.status in (200, 503), f"during the restart: {r}")
        c.wait_for("the restart", lambda: any(
            i["id"] == b["id"] and i["state"] == "RUNNING" and i["restart_count"] == 1
            for i in c.instances("stories")), 60)
        busy_done.wait(300)
        m = c.call("GET", "/metrics", headers={}).raw
        check('tandem_manager_gateway_requests_total{model_name="stories",code="200"}' in m, m[-2000:])
        check('tandem_manager_model_instances{state="RUNNING"} 2' in m, m[:2000])


def _ended(pid):
    """The process is gone or a zombie. Reading /proc/PID/stat while the process is being reaped
    fails with ENOENT or ESRCH: gone too."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] == "Z"
    except OSError:
        return True


def _check_follow(c, instance_id):
    """logs?follow=true keeps the response open and relays what the instance logs next."""
    import http.client
    conn = http.client.HTTPConnection(c.host, c.port, timeout=60)
    conn.request("GET", f"/v2/model-instances/{instance_id}/logs?tail=1&follow=true", headers=c.admin)
    resp = conn.getresponse()
    check(resp.status == 200, f"follow: {resp.status}")
    resp.read1(65536)  # the tail
    # A request makes the instance log an access line, which must arrive on the open stream.
    inst = [i for i in c.items("/v2/model-instances") if i["id"] == instance_id][0]
    probe = http.client.HTTPConnection("127.0.0.1", inst["port"], timeout=30)
    probe.request("GET", "/v1/models")
    probe.getresponse().read()
    got = b""
    while b"GET /v1/models" not in got:
        chunk = resp.read1(65536)
        check(chunk, f"the followed log ended without the new line: {got!r}")
        got += chunk
    conn.close()
    # HEAD: the headers alone, at once, also with follow and also for a watch (neither stream is
    # started), and the connection serves the next request.
    conn = http.client.HTTPConnection(c.host, c.port, timeout=60)
    for path, content_type in ((f"/v2/model-instances/{instance_id}/logs?tail=1&follow=true",
                                "text/plain"), ("/v2/models?watch=true", "application/json")):
        conn.request("HEAD", path, headers=c.admin)
        resp = conn.getresponse()
        check(resp.status == 200 and resp.read() == b"" and
              resp.getheader("content-type", "").startswith(content_type),
              f"HEAD {path}: {resp.status} {resp.getheaders()}")
    conn.request("GET", "/v2/models", headers=c.admin)
    resp = conn.getresponse()
    check(resp.status == 200 and json.loads(resp.read())["items"], "GET after the HEADs")
    conn.close()


def _metric(c, inst, name):
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", inst["port"], timeout=10)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    return sum(float(l.split()[-1]) for l in text.splitlines() if l.startswith(name + "{"))


def _gateway_load(c, inst):
    m = c.call("GET", "/metrics", headers={}).raw
    prefix = f'tandem_manager_gateway_instance_load{{model_name="stories",instance_id="{inst["id"]}"}} '
    return sum(float(l[len(prefix):]) for l in m.splitlines() if l.startswith(prefix))


def _finished(c, inst):
    return _metric(c, inst, "vllm:request_success_total")


def test_bad_input_is_refused_or_an_error_state_with_the_reason():
    with Cluster() as c:
        c.add_agent("node-a")
        r = c.call("POST", "/v2/models", raw=b'{"name": "x", ')
        check(r.status == 400 and "not valid JSON" in r.json["message"], r)
        r = c.call("POST", "/v2/models", {"name": "x", "local_path": "/m", "replicas": 1,
                                          "gpu_selector": {"gpu_ids": ["node-a:cpu:7"]}})
        check(r.status == 400 and "no device 'node-a:cpu:7'" in r.json["message"], r)
        r = c.call("POST", "/v2/models", {"name": "x", "local_path": "/m", "bogus": 1})
        check(r.status == 400 and "unknown field 'bogus'" in r.json["message"], r)
        bad = c.create("/v2/inference-backends", {
            "backend_name": "quote-custom", "default_entrypoint": "tandem serve",
            "default_run_command": "{{model_path}} --port {{port}} --served-model-name '{{model_name}}"})
        c.create("/v2/models", {"name": "unbalanced", "local_path": STORIES_GGUF,
                                "backend": bad["backend_name"], "replicas": 1,
                                "restart_on_error": False})
        c.wait_for("the quote error", lambda: any(
            i["state"] == "ERROR" and "unbalanced '" in i["state_message"]
            for i in c.instances("unbalanced")), 30)
        c.create("/v2/models", {"name": "missing", "local_path": "/nonexistent/model.gguf",
                                "replicas": 1, "restart_on_error": False})
        c.wait_for("the missing path error", lambda: any(
            i["state"] == "ERROR" and "local_path '/nonexistent/model.gguf' does not exist on worker 'node-a'"
            in i["state_message"] for i in c.instances("missing")), 30)
        r = c.call("GET", "/v2/models")
        check(r.status == 200 and r.json["pagination"]["total"] == 2, f"rows kept: {r}")


if __name__ == "__main__":
    run([test_deploy_clone_chat_through_the_gateway_with_api_keys,
         test_two_replicas_split_by_load_and_a_killed_one_restarts,
         test_bad_input_is_refused_or_an_error_state_with_the_reason])
