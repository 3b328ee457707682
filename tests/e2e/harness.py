"""Starts a real `tandem serve` process and speaks HTTP to it (stdlib only).

Environment (set by CTest): TANDEM_BIN = build/tandem, TANDEM_SHARED_DIR = ../shared.
"""
import atexit
import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.environ.get("TANDEM_BIN", os.path.join(os.path.dirname(__file__), "../../build/tandem"))
SHARED = os.environ.get("TANDEM_SHARED_DIR",
                        os.path.join(os.path.dirname(__file__), "../../../shared"))
MODELS = os.path.join(SHARED, "models")
# The ASan + UBSan tier (scripts/sanitize.sh address) runs these tests against an instrumented
# binary: memory figures (RSS) include ASan's quarantine of freed blocks and its shadow memory,
# so the tests that bound them check that in the release tier only.
ASAN = "address" in os.environ.get("TANDEM_SANITIZE", "")
STORIES_GGUF = os.path.join(MODELS, "stories260k/stories260K.gguf")
STORIES_HF = os.path.join(MODELS, "stories260k-hf")
STORIES_MOE_GGUF = os.path.join(MODELS, "stories260k-moe-gguf/stories260K-moe8x4.gguf")
STORIES_GOLDEN = os.path.join(MODELS, "stories260k/stories260K.golden.json")


class GoldenFileError(AssertionError):
    """A golden/reference file that cannot give a test any case to check (names the file)."""


def load_golden_json(path):
    """The parsed golden/reference JSON at `path`. Raises GoldenFileError naming `path` when it is
    missing, unreadable, empty (only whitespace) or not JSON: a test over it must fail, not pass
    on zero cases. Every e2e test that reads a golden goes through this and golden_cases
    (tests/common/golden_json.h is the C++ pair)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise GoldenFileError(f"golden file {path}: cannot be read ({e.strerror}); point "
                              f"TANDEM_SHARED_DIR (now {SHARED}) at the shared folder") from None
    if not raw.strip():
        raise GoldenFileError(f"golden file {path}: empty ({len(raw)} bytes): a test over it "
                              "would check zero cases")
    try:
        return json.loads(raw)
    except ValueError as e:
        raise GoldenFileError(f"golden file {path}: not JSON: {e}") from None


def golden_cases(path, key, kind=list):
    """golden[key] of the JSON file `path`, `key` a dot-separated path ("cases",
    "invariants.mtp.cases"): a non-empty list (kind=dict: a non-empty object, e.g. stories260K's
    "tokenize_no_bos"). Raises GoldenFileError naming `path` and `key` when the file cannot be
    loaded (load_golden_json), a step is missing or not an object, or the value is of another kind
    or empty."""
    node, walked = load_golden_json(path), []
    for part in key.split("."):
        if not isinstance(node, dict):
            raise GoldenFileError(f"golden file {path}: '{'.'.join(walked) or '(top level)'}' is "
                                  f"{type(node).__name__}; expected an object holding '{part}'")
        walked.append(part)
        if part not in node:
            raise GoldenFileError(f"golden file {path}: no '{'.'.join(walked)}': a test over it "
                                  "would check zero cases")
        node = node[part]
    if not isinstance(node, kind):
        raise GoldenFileError(f"golden file {path}: '{key}' is {type(node).__name__}; expected a "
                              f"non-empty {kind.__name__} of cases")
    if not node:
        raise GoldenFileError(f"golden file {path}: '{key}' is empty: a test over it would check "
                              "zero cases")
    return node


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One `tandem serve` on a free loopback port; use as a context manager."""

    def __init__(self, model, *args, env=None, ready_timeout_s=120, tls_context=None,
                 preexec_fn=None):
        """`tls_context` (an ssl.SSLContext): talk HTTPS with it (for --ssl-* servers).
        `preexec_fn`: run in the child before tandem starts (e.g. to lower a resource limit)."""
        self.model, self.args, self.ready_timeout_s = model, args, ready_timeout_s
        self.tls_context, self.preexec_fn = tls_context, preexec_fn
        self.full_env = dict(os.environ)
        self.full_env.update(env or {})
        self._spawn()

    def _spawn(self):
        self.port = free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="tandem-e2e-", suffix=".log", delete=False)
        cmd = [BIN, "serve", self.model, "--host", "127.0.0.1", "--port", str(self.port),
               "--num-threads", "1", *self.args]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=self.full_env, preexec_fn=self.preexec_fn)

    def _listening(self):
        # Our own process says it listens on our port: a /health answer alone could come from
        # another test's server that won a race for the same free port.
        return f"HTTP server listening on 127.0.0.1:{self.port}" in self.full_log()

    def __enter__(self):
        deadline = time.time() + self.ready_timeout_s
        port_races = 0
        while time.time() < deadline:
            if self.proc.poll() is not None:
                # free_port() closes its socket before tandem binds: a server started in
                # parallel can take the port in between. Start again on another (3 times).
                if "cannot bind" in self.logs() and port_races < 3:
                    port_races += 1
                    self._spawn()
                    continue
                raise RuntimeError(f"tandem exited with {self.proc.returncode}:\n{self.logs()}")
            if self._listening():
                try:
                    status, _, _ = self.request("GET", "/health")
                    if status == 200:
                        return self
                except OSError:
                    pass
            time.sleep(0.1)
        raise RuntimeError(f"tandem not healthy after {self.ready_timeout_s}s:\n{self.logs()}")

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def full_log(self):
        self.log.flush()
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def logs(self):
        """The last 8000 characters of the server's output (for failure messages)."""
        return self.full_log()[-8000:]

    def connection(self, timeout=120):
        """A new connection to the server: HTTPS when the server was started with TLS."""
        if self.tls_context is not None:
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout,
                                               context=self.tls_context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, raw=None, timeout=120):
        """Returns (status, headers dict, body bytes)."""
        conn = self.connection(timeout)
        hdrs = {"Content-Type": "application/json"}
        hdrs.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        out = resp.read()
        conn.close()
        return resp.status, dict(resp.getheaders()), out

    def post_json(self, path, body, headers=None):
        status, _, out = self.request("POST", path, body, headers)
        try:
            return status, json.loads(out)
        except ValueError:
            return status, {"_raw": out.decode(errors="replace")}

    def post_all_at_once(self, path, bodies):
        """POSTs every body at the same time, one thread each; returns [(status, json)] in the
        order of `bodies`."""
        results = [None] * len(bodies)

        def one(i):
            results[i] = self.post_json(path, bodies[i])

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(bodies))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return results

    def wait_until_running(self, num_requests, timeout_s=60):
        """Waits until at least `num_requests` requests run on the engines (/metrics)."""
        deadline = time.time() + timeout_s
        while sum(self.metric_values("vllm:num_requests_running")) < num_requests:
            check(time.time() < deadline, f"{num_requests} request(s) never ran at once")
            time.sleep(0.05)

    def check_exits_once_no_engine_is_left(self, timeout_s=60):
        """The server, all of whose engine cores are gone, exits with 1 within `timeout_s`
        (vLLM's behaviour: a supervisor restarts it) and says why in its log."""
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        check(code == 1, f"exit code {code}; 1 once no engine is left\n{self.logs()}")
        check("no engine core is left" in self.full_log(), self.logs())

    def metric_values(self, name):
        """The values of every series of metric `name` (e.g. one per engine) now."""
        _, _, body = self.request("GET", "/metrics")
        return [float(line.split()[-1]) for line in body.decode().splitlines()
                if line.startswith(name + "{")]

    def stream(self, path, body, headers=None, timeout=120):
        """POSTs with stream=true; returns (status, list of parsed SSE data objects, saw_done)."""
        conn = self.connection(timeout)
        hdrs = {"Content-Type": "application/json"}
        hdrs.update(headers or {})
        conn.request("POST", path, body=json.dumps(body).encode(), headers=hdrs)
        resp = conn.getresponse()
        if resp.status != 200:
            out = resp.read()
            conn.close()
            return resp.status, [json.loads(out)], False
        events, done = [], False
        for line in resp:
            line = line.decode().rstrip("\r\n")
            if not line.startswith("data: "):
                continue
            payload = line[len("data: "):]
            if payload == "[DONE]":
                done = True
                break
            events.append(json.loads(payload))
        conn.close()
        return resp.status, events, done


_SHARED_SERVERS = {}


def shared_server(model, *args):
    """A `with` target like Server(model, *args), started once per test file and kept for the
    next test that asks for the same model and flags: starting one loads the model and its
    tokenizer (a 151k-token vocabulary: ~1 s, ~8 s under AddressSanitizer), most of what many
    tests cost. They are stopped when the test file's process exits (however it exits). For
    tests that leave the server as they found it; a test that measures the process (memory,
    exit codes, signals) starts its own Server. A shared server that has died is started again
    for the next test."""
    key = (model, args)
    srv = _SHARED_SERVERS.get(key)
    if srv is None or srv.proc.poll() is not None:
        srv = Server(model, *args).__enter__()
        if not _SHARED_SERVERS:
            atexit.register(lambda: [s.stop() for s in _SHARED_SERVERS.values()])
        _SHARED_SERVERS[key] = srv
    return contextlib.nullcontext(srv)


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def check_error(status, body, want_status, needles, what):
    """An OpenAI-shape error: `want_status`, and each of `needles` in its message."""
    check(status == want_status, f"{what}: status {status}, want {want_status}: {str(body)[:300]}")
    message = body["error"]["message"]
    for n in needles:
        check(n in message, f"{what}: {n!r} not in {message!r}")


def run(tests):
    """Runs test functions, prints a line each, exits non-zero on any failure."""
    failed = 0
    for t in tests:
        start = time.time()
        try:
            t()
            print(f"PASS {t.__name__} ({time.time() - start:.1f}s)", flush=True)
        except Exception as e:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print(f"FAIL {t.__name__}: {e}", flush=True)
    print(f"{len(tests) - failed}/{len(tests)} passed")
    sys.exit(1 if failed else 0)
