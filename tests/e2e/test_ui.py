"""The web UI in a real browser (Debian's chromium driven by playwright-core, from ui/e2e/):
the manager's console against a real `tandem manager` + agent serving stories260K, and
`tandem serve`'s own playground page. Screenshots go to $TANDEM_UI_OUT_DIR (default
build/ui-test-output). Any browser console error fails the run."""
import os
import subprocess
import urllib.parse

from harness import MODELS, STORIES_GGUF, Server, check, run
from manager_harness import Cluster

UI_E2E = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../ui/e2e")
OUT = os.environ.get("TANDEM_UI_OUT_DIR", os.path.join(os.path.dirname(os.path.abspath(
    os.environ.get("TANDEM_BIN", "build/tandem"))), "ui-test-output"))
TINY_QWEN3 = os.path.join(MODELS, "tiny-qwen3")
# stories260K has no chat template; the playground chats, so it gets this one.
CHAT_TEMPLATE = os.path.abspath(os.path.join(MODELS, "chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja"))


def node(script, env):
    """Runs a browser flow; its output is shown on failure."""
    full = dict(os.environ, TANDEM_UI_OUT_DIR=OUT, **env)
    p = subprocess.run(["node", script], cwd=UI_E2E, env=full, capture_output=True, text=True,
                       timeout=600)
    check(p.returncode == 0, f"{script} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    print(p.stdout.strip())


def test_manager_console_deploys_scales_chats_and_follows_logs():
    with Cluster() as c:
        c.add_agent("node-a")
        # tiny-qwen3 (a chat template with thinking) for the thinking switch, deployed through
        # the API; the browser deploys stories260K itself.
        c.create("/v2/models", {"name": "tiny-qwen3", "local_path": TINY_QWEN3, "replicas": 1,
                                "gpu_selector": {"gpu_ids": ["node-a:cpu:0"]},
                                "backend_parameters": ["--max-model-len 256 --num-threads 1"]})
        c.wait_running("tiny-qwen3")
        node("manager_flow.mjs", {
            "TANDEM_MANAGER_URL": f"http://127.0.0.1:{c.port}",
            "TANDEM_ADMIN_PASSWORD": "admin-password",
            "STORIES_GGUF": os.path.abspath(STORIES_GGUF),
            "TANDEM_WORKER": "node-a",
            "CHAT_TEMPLATE": CHAT_TEMPLATE,
        })


def test_a_deployment_across_two_workers_shows_each_subordinate_state():
    with Cluster() as c:
        c.add_agent("node-a", devices="cpu:0")
        c.add_agent("node-b", devices="cpu:0")
        c.create("/v2/models", {
            "name": "stories-2x", "local_path": os.path.abspath(STORIES_GGUF), "replicas": 1,
            "distributed_inference_across_workers": True,
            "gpu_selector": {"gpu_ids": ["node-a:cpu:0", "node-b:cpu:0"]},
            "backend_parameters": ["--data-parallel-size 2 --max-model-len 256 --num-threads 1"]})

        def both_running():
            items = c.instances("stories-2x")
            subs = items[0]["distributed_servers"]["subordinate_workers"] if items else []
            return (len(items) == 1 and items[0]["state"] == "RUNNING" and len(subs) == 1 and
                    subs[0]["state"] == "RUNNING")
        c.wait_for("the deployment and its subordinate RUNNING", both_running, 180)
        node("two_workers_flow.mjs", {"TANDEM_MANAGER_URL": f"http://127.0.0.1:{c.port}",
                                      "TANDEM_ADMIN_PASSWORD": "admin-password"})


def test_serve_playground_page_asks_for_the_key_and_streams_the_greedy_answer():
    # Under --root-path /llm, opened at /llm/ as a proxy forwarding only /llm/* would show it.
    with Server(STORIES_GGUF, "--api-key", "page-key", "--served-model-name", "stories",
                "--chat-template", CHAT_TEMPLATE, "--root-path", "/llm") as s:
        node("serve_flow.mjs", {"TANDEM_SERVE_URL": f"http://127.0.0.1:{s.port}/llm",
                                "TANDEM_SERVE_KEY": "page-key", "TANDEM_SERVE_MODEL": "stories"})


def test_serve_no_ui_turns_the_page_off():
    with Server(STORIES_GGUF) as s:
        status, headers, body = s.request("GET", "/")
        check(status == 200 and headers["Content-Type"].startswith("text/html") and
              b"playground" in body, f"GET /: {status} {headers}")
    with Server(STORIES_GGUF, "--no-ui") as s:
        status, _, _ = s.request("GET", "/")
        check(status == 404, f"GET / with --no-ui: {status}")


def test_manager_serves_the_console_from_the_binary():
    with Cluster() as c:
        r = c.call("GET", "/", headers={"Accept-Encoding": "gzip"})
        check(r.status == 200 and r.headers["Content-Type"] == "text/html; charset=utf-8" and
              r.headers.get("Content-Encoding") == "gzip" and
              r.headers["Cache-Control"] == "no-cache" and r.headers.get("ETag"), f"GET /: {r}")
        index = c.call("GET", "/index.html").raw
        check('<div id="root">' in index, "index.html is the console")
        r = c.call("HEAD", "/index.html", headers={})
        check(r.status == 200 and r.raw == "" and int(r.headers["Content-Length"]) == len(index)
              and r.headers["Content-Type"] == "text/html; charset=utf-8", f"HEAD: {r}")
        # A route of the app falls back to index.html; a hashed asset is cached for good.
        r = c.call("GET", "/deployments/3/edit")
        check(r.status == 200 and r.raw == index, f"an app route: {r}")
        # Relative to <base href="/"> (assets are relative for tandem serve's --root-path).
        asset = urllib.parse.urljoin("/", index.split('src="')[1].split('"')[0])
        r = c.call("GET", asset)
        check(r.status == 200 and r.headers["Content-Type"].startswith("text/javascript") and
              "immutable" in r.headers["Cache-Control"], f"{asset}: {r}")
        r = c.call("GET", "/", headers={"If-None-Match": c.call("GET", "/").headers["ETag"]})
        check(r.status == 304, f"a matching validator: {r}")
        # The APIs keep their JSON 404s.
        for path in ("/v2/nothing", "/auth/nothing", "/assets/missing-0000.js"):
            r = c.call("GET", path)
            check(r.status in (401, 404) and r.json is not None, f"{path}: {r}")
        r = c.call("GET", "/v1/nothing", headers={"Authorization": "Bearer x"})
        check(r.status in (401, 404) and r.json is not None, f"/v1/nothing: {r}")


if __name__ == "__main__":
    run([test_manager_serves_the_console_from_the_binary,
         test_manager_console_deploys_scales_chats_and_follows_logs,
         test_a_deployment_across_two_workers_shows_each_subordinate_state,
         test_serve_playground_page_asks_for_the_key_and_streams_the_greedy_answer,
         test_serve_no_ui_turns_the_page_off])
