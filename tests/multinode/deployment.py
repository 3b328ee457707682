"""A two-"machine" deployment for the multinode tests: a primary (`tandem serve` with the API
servers) in one network namespace and a `--headless` secondary in the other, started with the
seed's flags; plus an HTTP client run inside the primary's namespace (dp_client.py), to the end
(`client`) or watched as its requests progress (`client_progress`)."""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../e2e"))
from harness import BIN, check  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PORT, RPC_PORT = 8000, 13389


class Deployment:
    def __init__(self, m, model, common, timeout_s=60, head_extra=(), headless_extra=(),
                 env_extra=None):
        self.m = m
        self.model, self.common, self.env_extra = model, list(common), dict(env_extra or {})
        self.timeout_s = timeout_s
        self.head_extra, self.headless_extra = list(head_extra), list(headless_extra)
        self.logs = {}
        self.procs = {}

    def env(self, iface):
        return {**os.environ, "VLLM_ENGINE_READY_TIMEOUT_S": str(self.timeout_s),
                "GLOO_SOCKET_IFNAME": iface, "OMP_NUM_THREADS": "1", **self.env_extra}

    def start_head(self):
        cmd = [BIN, "serve", self.model, "--host", self.m.ip_a, "--port", str(PORT), *self.common,
               "--api-server-count=2", f"--data-parallel-address={self.m.ip_a}", *self.head_extra]
        self._start("head", self.m.ns_a, cmd, self.m.if_a)

    def start_headless(self):
        common = [a for a in self.common if not any(a.startswith(x.split("=")[0] + "=")
                                                    for x in self.headless_extra)]
        cmd = [BIN, "serve", self.model, *common, f"--data-parallel-address={self.m.ip_a}",
               "--data-parallel-start-rank=1", "--headless", *self.headless_extra]
        self._start("headless", self.m.ns_b, cmd, self.m.if_b)

    def _start(self, name, ns, cmd, iface):
        log = tempfile.NamedTemporaryFile(prefix=f"tandem-{name}-", suffix=".log", delete=False)
        self.logs[name] = log.name
        self.procs[name] = self.m.popen(ns, cmd, self.env(iface), log)

    def log(self, name):
        with open(self.logs[name], errors="replace") as f:
            return f.read()[-6000:]

    def wait_log(self, name, text, timeout=60):
        """Waits until `name`'s log shows `text`; fails if the process exits first or `timeout`
        (a hang guard) passes."""
        deadline = time.time() + timeout
        while True:
            with open(self.logs[name], errors="replace") as f:
                if text in f.read():
                    return
            p = self.procs[name]
            check(p.poll() is None,
                  f"{name} exited {p.returncode} before logging {text!r}:\n{self.log(name)}")
            check(time.time() < deadline,
                  f"{name} did not log {text!r} within {timeout} s:\n{self.log(name)}")
            time.sleep(0.05)

    def wait_head_listening(self, timeout=60):
        """The head logs where remote ranks dial once it has bound that handshake port (and its
        HTTP port): a headless started now dials a head that is there."""
        self.wait_log("head", f"remote ranks dial {self.m.ip_a}:{RPC_PORT}", timeout)

    def wait_headless_dialing(self, timeout=60):
        """The headless node's rank 1 has started dialing the head's handshake port."""
        self.wait_log("headless", f"DP rank 1: dialing the head at {self.m.ip_a}:{RPC_PORT}",
                      timeout)

    def client(self, spec, timeout=300):
        spec = {"base": f"http://{self.m.ip_a}:{PORT}", **spec}
        p = self.m.run_in(self.m.ns_a, [sys.executable, os.path.join(HERE, "dp_client.py"),
                                         json.dumps(spec)], timeout=timeout)
        check(p.returncode == 0, f"client failed: {p.stderr[-2000:]}")
        return json.loads(p.stdout)

    def client_progress(self, spec):
        """dp_client.py in progress mode, running in the background in the primary's namespace:
        the test watches its requests' events as they happen (ProgressClient)."""
        spec = {"base": f"http://{self.m.ip_a}:{PORT}", **spec, "progress": True}
        stderr = tempfile.NamedTemporaryFile(prefix="tandem-client-", suffix=".err",
                                             delete=False)
        p = self.m.popen_piped(self.m.ns_a, [sys.executable, os.path.join(HERE, "dp_client.py"),
                                             json.dumps(spec)], stderr)
        return ProgressClient(p, stderr)

    def metrics(self):
        return self.client({"get": ["/metrics"]})["/metrics"]["body"]

    def metric(self, name, engine):
        for line in self.metrics().splitlines():
            if line.startswith(name + "{") and f'engine="{engine}"' in line:
                return float(line.split()[-1])
        raise AssertionError(f"{name}{{engine={engine}}} not in /metrics")

    def wait_both_ranks(self, timeout=90):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, p in self.procs.items():
                check(p.poll() is None, f"{name} exited {p.returncode}:\n{self.log(name)}")
            try:
                if self.metric("tandem:engine_alive", 0) == 1 and \
                        self.metric("tandem:engine_alive", 1) == 1:
                    return
            except (AssertionError, ValueError):
                pass
            time.sleep(0.3)
        raise AssertionError(f"ranks not both up:\nHEAD\n{self.log('head')}\n"
                             f"HEADLESS\n{self.log('headless')}")

    def wait_exit(self, name, timeout):
        try:
            return self.procs[name].wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"{name} still running after {timeout}s:\n{self.log(name)}")

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


class ProgressClient:
    """A dp_client.py run in progress mode. `events` gathers its event lines as they come, each
    with the time it was read here ("t"); `wait_until` blocks until they satisfy a condition;
    `results` waits for its results line. Use as a context manager (stops the client)."""

    def __init__(self, proc, stderr_file):
        self.proc, self.stderr_file = proc, stderr_file
        self.events, self._results, self._ended = [], None, False
        self._cv = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            item = json.loads(line)
            with self._cv:
                if isinstance(item, list):
                    self._results = item
                else:
                    self.events.append({**item, "t": time.time()})
                self._cv.notify_all()
        with self._cv:
            self._ended = True
            self._cv.notify_all()

    def stderr(self):
        with open(self.stderr_file.name, errors="replace") as f:
            return f.read()[-2000:]

    def wait_until(self, condition, what, timeout):
        """Waits until condition(events) holds; returns a copy of the events then. Fails if the
        client ends first or `timeout` (a hang guard) passes."""
        deadline = time.time() + timeout
        with self._cv:
            while not condition(self.events):
                check(not self._ended, f"the client ended before {what}: {self.events[-4:]}"
                                       f"\n{self.stderr()}")
                left = deadline - time.time()
                check(left > 0, f"no {what} within {timeout} s: {self.events[-4:]}")
                self._cv.wait(left)
            return list(self.events)

    def results(self, timeout):
        """The results line; fails if the client has not ended within `timeout` (a hang
        guard: then some request hangs)."""
        deadline = time.time() + timeout
        with self._cv:
            while not self._ended:
                left = deadline - time.time()
                check(left > 0, f"requests still running after {timeout} s (hung): ended "
                                f"{sorted(e['i'] for e in self.events if e['event'] == 'done')}")
                self._cv.wait(left)
        check(self.proc.wait() == 0 and self._results is not None,
              f"client failed: {self.stderr()}")
        return self._results

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(timeout=10)


def finished_counts(dep, total, timeout_s=10):
    """Per-rank finished counters once they add up to `total`: they reach the scraped API
    server with the engines' heartbeats, so they may lag the responses by one interval."""
    deadline = time.time() + timeout_s
    while True:
        counts = [dep.metric("tandem:engine_requests_finished_total", r) for r in (0, 1)]
        if sum(counts) >= total or time.time() > deadline:
            return counts
        time.sleep(0.2)
