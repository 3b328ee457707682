"""A real `tandem manager` and real `tandem agent`s on loopback for the manager's end-to-end
tests (stdlib only), with JSON helpers for /v2 and the /v1 gateway.

Agents that run in network namespaces (tests/multinode) pass `popen` to start inside them."""
import http.client
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from harness import BIN, check, free_port


class Reply:
    def __init__(self, status, body, headers):
        self.status, self.raw, self.headers = status, body, headers
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return f"HTTP {self.status}: {self.raw[:2000]!r}"


class Cluster:
    """The manager on HOST:PORT with data in a temporary folder; agents added with add_agent."""

    def __init__(self, host="127.0.0.1", popen=None, run_in=None):
        # run_in(f) runs f() where the manager's address is reachable (a network namespace's
        # thread in the multinode tests); here, in place.
        self.run_in = run_in or (lambda f: f())
        self.host, self.port = host, free_port()
        self.dir = tempfile.mkdtemp(prefix="tandem-manager-e2e-")
        self.procs, self.logs = {}, {}
        self.popen = popen or (lambda name, cmd, log: subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT))
        self.admin = None

    def __enter__(self):
        self._start("manager", [BIN, "manager", "--host", self.host, "--port", str(self.port),
                                "--data-dir", self.dir + "/manager", "--bootstrap-password",
                                "admin-password", "--token", "registration-token"])
        self.wait_for("the manager to listen", lambda: self._get_ok("/healthz"), 30)
        r = self.call("POST", "/auth/login", raw=b"username=admin&password=admin-password",
                      content_type="application/x-www-form-urlencoded")
        check(r.status == 200, f"login: {r}")
        self.admin = {"Cookie": r.headers["Set-Cookie"].split(";")[0]}
        return self

    def __exit__(self, *exc):
        for name in reversed(list(self.procs)):
            self.stop(name)
        shutil.rmtree(self.dir, ignore_errors=True)

    def _start(self, name, cmd):
        log = tempfile.NamedTemporaryFile(prefix=f"tandem-{name}-", suffix=".log", delete=False)
        self.logs[name] = log.name
        self.procs[name] = self.popen(name, cmd, log)

    def stop(self, name):
        p = self.procs[name]
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def log(self, name, tail=6000):
        with open(self.logs[name], errors="replace") as f:
            return f.read()[-tail:]

    def add_agent(self, name, ip="127.0.0.1", devices="cpu:0,cpu:1", ports=None, server_host=None):
        # Each agent its own 16 ports (agents on one host would otherwise race for the same).
        base = 30000 + (os.getpid() % 500) * 64 + 16 * sum(n.startswith("agent-") for n in self.procs)
        ports = ports or f"{base}-{base + 15}"
        self._start(f"agent-{name}", [
            BIN, "agent", "--server-url", f"http://{server_host or self.host}:{self.port}",
            "--token", "registration-token", "--worker-name", name, "--worker-ip", ip,
            "--data-dir", f"{self.dir}/agent-{name}", "--devices", devices,
            "--service-port-range", ports, "--heartbeat-interval", "1",
            "--worker-port", str(free_port())])
        self.wait_for(f"worker {name} to be ready", lambda: any(
            w["name"] == name and w["state"] == "ready" for w in self.items("/v2/workers")), 30)

    # HTTP ------------------------------------------------------------------------------------
    def call(self, method, path, body=None, headers=None, raw=None, timeout=120,
             content_type="application/json"):
        return self.run_in(lambda: self._call(method, path, body, headers, raw, timeout,
                                              content_type))

    def _call(self, method, path, body, headers, raw, timeout, content_type):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        hdrs = {"Content-Type": content_type}
        if self.admin is not None and headers is None:
            hdrs.update(self.admin)
            # The console's own origin, as a browser sends it with a write (the manager
            # refuses a cross-site write made with the session cookie).
            hdrs["Origin"] = f"http://{self.host}:{self.port}"
        hdrs.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        out = resp.read().decode(errors="replace")
        conn.close()
        return Reply(resp.status, out, dict(resp.getheaders()))

    def _get_ok(self, path):
        try:
            return self.call("GET", path, headers={}).status == 200
        except OSError:
            return False

    def items(self, path):
        r = self.call("GET", path + ("&" if "?" in path else "?") + "page=-1")
        check(r.status == 200, f"GET {path}: {r}")
        return r.json["items"]

    def create(self, path, body):
        r = self.call("POST", path, body)
        check(r.status == 201, f"POST {path}: {r}")
        return r.json

    def set_replicas(self, model_id, replicas):
        m = self.call("GET", f"/v2/models/{model_id}").json
        m["replicas"] = replicas
        r = self.call("PUT", f"/v2/models/{model_id}", m)
        check(r.status == 200, f"PUT replicas: {r}")

    def instances(self, model_name):
        return self.items(f"/v2/model-instances?model_name={model_name}")

    def wait_for(self, what, predicate, timeout=120):
        """Polls `predicate` every 0.1 s until it is true; fails naming `what` and the logs
        after `timeout` seconds (a hang guard, not a timing assertion)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if predicate():
                return
            for name, p in self.procs.items():
                check(p.poll() is None or not name.startswith(("manager", "agent")),
                      f"{name} exited {p.returncode} while waiting for {what}:\n{self.log(name)}")
            time.sleep(0.1)
        logs = "\n".join(f"--- {n}:\n{self.log(n, 3000)}" for n in self.procs)
        raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{logs}")

    def wait_running(self, model_name, timeout=180):
        def running():
            items = self.instances(model_name)
            for i in items:
                check(i["state"] != "ERROR" or "restart" in i["state_message"],
                      f"instance of {model_name} failed: {i['state_message']}")
            return items and all(i["state"] == "RUNNING" for i in items)
        self.wait_for(f"{model_name} RUNNING", running, timeout)
        return self.instances(model_name)

    def gateway_stream(self, body, key, timeout=120):
        """Streams through /v1/chat/completions or /v1/completions (by body) with `key`;
        returns (status, [events], text)."""
        return self.run_in(lambda: self._gateway_stream(body, key, timeout))

    def _gateway_stream(self, body, key, timeout):
        path = "/v1/chat/completions" if "messages" in body else "/v1/completions"
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        headers = {"Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        conn.request("POST", path, body=json.dumps({**body, "stream": True}).encode(),
                     headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            out = resp.read().decode(errors="replace")
            conn.close()
            return resp.status, [json.loads(out)] if out.startswith("{") else [out], ""
        events = []
        for line in resp:
            line = line.decode().rstrip("\r\n")
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
        conn.close()
        text = ""
        for e in events:
            for c in e.get("choices", []):
                text += (c.get("delta") or {}).get("content") or c.get("text") or ""
        return 200, events, text
