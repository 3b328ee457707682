"""Process lifecycle (issue 17): the API server of a deployment whose every engine core is gone
exits non-zero after answering what was in flight (vLLM's behaviour, so a supervisor restarts
it); a killed server's ipc socket files are removed by the next one, in the directory
$VLLM_RPC_BASE_PATH, $TMPDIR or /tmp chooses (an unusable one refused at start-up); the API key
is not passed down to engine processes. Issue 31: a stalled step turns /health to 503; SIGTERM
answers every request in flight (at once, or after --shutdown-timeout) and ends a stopped
engine core."""
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from harness import BIN, STORIES_GGUF, Server, check, free_port, run


def engine_cores(server_pid):
    return subprocess.run(["pgrep", "-P", str(server_pid), "-f", "_engine-core"],
                          capture_output=True, text=True).stdout.split()


def test_the_only_engine_core_dying_ends_the_server_after_its_requests():
    with Server(STORIES_GGUF) as srv:
        cores = engine_cores(srv.proc.pid)
        check(len(cores) == 1, f"one engine core: {cores}")
        events = []

        def stream():
            events.append(srv.stream("/v1/completions", {
                "prompt": "Once", "max_tokens": 2000, "ignore_eos": True, "stream": True}))

        thread = threading.Thread(target=stream)
        thread.start()
        srv.wait_until_running(1)
        os.kill(int(cores[0]), signal.SIGKILL)
        thread.join(timeout=60)
        status, chunks, done = events[0]
        check(status == 200 and done and "error" in chunks[-1] and
              "died" in chunks[-1]["error"]["message"],
              f"the stream in flight ends with an error event, then [DONE]: {chunks[-1:]}")
        srv.check_exits_once_no_engine_is_left()


def test_every_api_server_answers_its_requests_when_the_engines_are_gone():
    # --api-server-count 2: the kernel spreads connections over both; the second one's requests
    # too end with an error event (then [DONE]) or a 503, never a cut connection.
    with Server(STORIES_GGUF, "--api-server-count", "2") as srv:
        # Ready is API server 0 listening; API server 1 may still be starting (under ASan, by
        # a second): wait for it, or every request goes to API server 0.
        deadline = time.time() + 60
        while srv.full_log().count("HTTP server listening on") < 2:
            check(time.time() < deadline, f"API server 1 never listened:\n{srv.logs()}")
            time.sleep(0.1)
        cores = engine_cores(srv.proc.pid)
        check(len(cores) == 1, f"one engine core: {cores}")
        results = []

        def one(stream):
            body = {"prompt": "Once", "max_tokens": 2000, "ignore_eos": True}
            try:
                if stream:
                    results.append(("stream",) + srv.stream("/v1/completions",
                                                            {**body, "stream": True}))
                else:
                    results.append(("whole",) + srv.post_json("/v1/completions", body))
            except Exception as e:  # a cut connection: the failure this test is about
                results.append(("cut", repr(e)))

        threads = [threading.Thread(target=one, args=(i % 2 == 0,)) for i in range(12)]
        for t in threads:
            t.start()
        srv.wait_until_running(12)
        os.kill(int(cores[0]), signal.SIGKILL)
        for t in threads:
            t.join(timeout=60)
        check(len(results) == 12, f"{len(results)} of 12 answered")
        for r in results:
            if r[0] == "stream":
                _, status, chunks, done = r
                check(status == 200 and done and "error" in chunks[-1], f"a stream: {chunks[-1:]}")
            else:
                check(r[0] == "whole" and r[1] == 503, f"a whole request: {r}")
        srv.check_exits_once_no_engine_is_left()
        check(srv.full_log().count("no engine core is left") == 2,
              f"both API servers saw it:\n{srv.logs()}")


def test_a_killed_servers_ipc_files_are_removed_by_the_next():
    # A directory of its own: another test's server starting in parallel would remove stale
    # files in a shared /tmp first (and log it, not this one).
    ipc_dir = tempfile.mkdtemp(prefix="tandem-ipc-")
    try:
        env = {"TMPDIR": ipc_dir}
        with Server(STORIES_GGUF, env=env) as srv:
            pid = srv.proc.pid
            files = glob.glob(f"{ipc_dir}/tandem-{pid}-*")
            check(files, f"the server's ipc sockets: none under {ipc_dir}/tandem-{pid}-*")
            for core in engine_cores(pid):
                os.kill(int(core), signal.SIGKILL)
            srv.proc.kill()
            srv.proc.wait()
        check(all(os.path.exists(f) for f in files), "SIGKILL leaves them (the case to clean up)")
        with Server(STORIES_GGUF, env=env) as srv:
            check(not any(os.path.exists(f) for f in files),
                  f"still there after the next start: {[f for f in files if os.path.exists(f)]}")
            check(f"ipc socket file(s) in {ipc_dir} left by tandem processes that are gone" in
                  srv.full_log(), srv.logs())
    finally:
        shutil.rmtree(ipc_dir, ignore_errors=True)


def test_vllm_rpc_base_path_chooses_the_ipc_directory_before_tmpdir():
    rpc_dir, tmp_dir = tempfile.mkdtemp(prefix="tandem-rpc-"), tempfile.mkdtemp(prefix="tandem-t-")
    try:
        with Server(STORIES_GGUF, env={"VLLM_RPC_BASE_PATH": rpc_dir + "/", "TMPDIR": tmp_dir}) as srv:
            pid = srv.proc.pid
            check(glob.glob(f"{rpc_dir}/tandem-{pid}-*"), f"no ipc sockets in {rpc_dir}")
            check(not glob.glob(f"{tmp_dir}/tandem-{pid}-*"), f"ipc sockets in $TMPDIR {tmp_dir}")
            status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
            check(status == 200, f"{status} {body}")
    finally:
        shutil.rmtree(rpc_dir, ignore_errors=True)
        shutil.rmtree(tmp_dir, ignore_errors=True)


def test_an_unusable_ipc_directory_is_refused_at_start_up():
    scratch = tempfile.mkdtemp(prefix="tandem-ipc-bad-")
    a_file = os.path.join(scratch, "file")
    open(a_file, "w").close()
    too_long = os.path.join(scratch, "d" * 80)
    os.makedirs(too_long)
    rows = [({"TMPDIR": os.path.join(scratch, "missing")}, "(TMPDIR=" + scratch + "/missing) does not exist"),
            ({"TMPDIR": a_file}, "(TMPDIR=" + a_file + ") is not a directory"),
            ({"VLLM_RPC_BASE_PATH": too_long}, f"is {len(too_long)} bytes long; a Unix socket path allows a directory of at most"),
            # The engines get their endpoints as JSON: a path that is not UTF-8 crashed start-up.
            ({"VLLM_RPC_BASE_PATH": os.fsencode(scratch) + b"/\xff\xfe"}, "(VLLM_RPC_BASE_PATH) is not valid UTF-8"),
            # Writable to root by access(), yet no socket can be made there: the bind is tried.
            ({"TMPDIR": "/proc"}, "the ipc socket directory (TMPDIR=/proc)")]
    try:
        for env, needle in rows:
            proc = subprocess.run([BIN, "serve", STORIES_GGUF, "--host", "127.0.0.1", "--port",
                                   str(free_port())], env={**os.environ, **env},
                                  capture_output=True, text=True, errors="replace", timeout=60)
            out = proc.stdout + proc.stderr
            check(proc.returncode == 2, f"{env}: exit code {proc.returncode}, wanted 2:\n{out[-800:]}")
            check(needle in out, f"{env}: wanted {needle!r} in:\n{out[-800:]}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_the_api_key_reaches_no_engine_process():
    with Server(STORIES_GGUF, env={"TANDEM_API_KEY": "sk-secret-test-key"}) as srv:
        status, _ = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
        check(status == 401, f"the key is in force: {status}")
        cores = engine_cores(srv.proc.pid)
        check(len(cores) == 1, f"one engine core: {cores}")
        with open(f"/proc/{cores[0]}/environ", "rb") as f:
            environ = f.read().split(b"\0")
        check(not any(e.startswith((b"TANDEM_API_KEY=", b"VLLM_API_KEY=")) for e in environ),
              "the engine core's environment holds the API key")
        check(any(e.startswith(b"TANDEM_PARENT_PID=") for e in environ),
              "the environment read is the engine core's")


def start_in_flight(srv):
    """A stream (after its first chunk) and a whole request, both in flight; returns their
    result lists and threads."""
    streamed, whole = [], []

    def stream():
        streamed.append(srv.stream("/v1/completions", {
            "prompt": "Once", "max_tokens": 300, "ignore_eos": True, "stream": True}))

    def one():
        whole.append(srv.post_json("/v1/completions", {
            "prompt": "Lily", "max_tokens": 300, "ignore_eos": True}))

    threads = [threading.Thread(target=stream), threading.Thread(target=one)]
    for t in threads:
        t.start()
    srv.wait_until_running(2)
    return streamed, whole, threads


def wait_for_log(srv, needle, timeout_s=30):
    deadline = time.time() + timeout_s
    while needle not in srv.full_log():
        check(time.time() < deadline, f"no {needle!r} in the log:\n{srv.logs()}")
        time.sleep(0.05)


def test_sigterm_answers_every_request_in_flight_and_ends_a_stopped_engine():
    # Issue 31, item 9. The engine core is stopped (SIGSTOP): nothing it would answer comes.
    # SIGTERM with --shutdown-timeout 0 (vLLM's default): the stream ends with an error event,
    # the whole request gets a 503, never a silent close; the stopped engine core is killed.
    with Server(STORIES_GGUF) as srv:
        cores = engine_cores(srv.proc.pid)
        streamed, whole, threads = start_in_flight(srv)
        os.kill(int(cores[0]), signal.SIGSTOP)
        srv.proc.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(timeout=60)
        status, chunks, done = streamed[0]
        check(status == 200 and not done and chunks and "error" in chunks[-1] and
              "shutting down" in chunks[-1]["error"]["message"],
              f"the stream ends with an error event: {chunks[-1:]} done={done}")
        status, body = whole[0]
        check(status == 503 and "shutting down" in body["error"]["message"],
              f"the whole request gets a 503: {status} {body}")
        srv.proc.wait(timeout=30)
        check(subprocess.run(["ps", "-o", "stat=", "-p", cores[0]], capture_output=True,
                             text=True).stdout.strip() in ("", "Z"),
              f"the stopped engine core {cores[0]} is gone")


def test_sigterm_with_a_shutdown_timeout_lets_requests_in_flight_finish():
    with Server(STORIES_GGUF, "--shutdown-timeout", "60") as srv:
        cores = engine_cores(srv.proc.pid)
        streamed, whole, threads = start_in_flight(srv)
        os.kill(int(cores[0]), signal.SIGSTOP)  # holds them in flight across the signal
        srv.proc.send_signal(signal.SIGTERM)
        wait_for_log(srv, "shutting down (requests in flight get 60 s")
        os.kill(int(cores[0]), signal.SIGCONT)
        for t in threads:
            t.join(timeout=60)
        status, chunks, done = streamed[0]
        check(status == 200 and done and chunks[-1]["choices"][0]["finish_reason"] == "length",
              f"the stream finishes: {chunks[-1:]} done={done}")
        status, body = whole[0]
        check(status == 200 and body["usage"]["completion_tokens"] == 300,
              f"the whole request finishes: {status} {str(body)[:200]}")
        check(srv.proc.wait(timeout=30) == 0, "the server exits 0 once they are answered")


def health(srv):
    try:
        return srv.request("GET", "/health", timeout=5)[0]
    except OSError:
        return 0


def test_a_stopped_tp_worker_turns_health_to_503_until_it_steps_again():
    # Issue 31, item 9: the engine core's heartbeat goes on while its step waits for a stopped
    # TP worker; the step watchdog (VLLM_ENGINE_ITERATION_TIMEOUT_S) sees no output built.
    with Server(STORIES_GGUF, "--tensor-parallel-size", "2", "--max-model-len", "512",
                env={"VLLM_ENGINE_ITERATION_TIMEOUT_S": "2"}) as srv:
        cores = engine_cores(srv.proc.pid)
        workers = subprocess.run(["pgrep", "-P", cores[0], "-f", "_tp-worker"],
                                 capture_output=True, text=True).stdout.split()
        check(len(workers) == 1, f"one TP worker of our engine core: {workers}")
        os.kill(int(workers[0]), signal.SIGSTOP)
        result = []
        thread = threading.Thread(target=lambda: result.append(srv.post_json(
            "/v1/completions", {"prompt": "Once", "max_tokens": 4, "temperature": 0})))
        thread.start()
        deadline = time.time() + 60
        while health(srv) != 503:
            check(time.time() < deadline, f"/health never turned 503:\n{srv.logs()}")
            time.sleep(0.1)
        os.kill(int(workers[0]), signal.SIGCONT)
        thread.join(timeout=60)
        check(result and result[0][0] == 200, f"the request finishes once it steps: {result}")
        deadline = time.time() + 60
        while health(srv) != 200:
            check(time.time() < deadline, "/health never came back to 200")
            time.sleep(0.1)
        check("no output for its 1 request(s) in flight" in srv.full_log(), "the stall is logged")


if __name__ == "__main__":
    run([test_the_only_engine_core_dying_ends_the_server_after_its_requests,
         test_a_stopped_tp_worker_turns_health_to_503_until_it_steps_again,
         test_sigterm_answers_every_request_in_flight_and_ends_a_stopped_engine,
         test_sigterm_with_a_shutdown_timeout_lets_requests_in_flight_finish,
         test_every_api_server_answers_its_requests_when_the_engines_are_gone,
         test_a_killed_servers_ipc_files_are_removed_by_the_next,
         test_vllm_rpc_base_path_chooses_the_ipc_directory_before_tmpdir,
         test_an_unusable_ipc_directory_is_refused_at_start_up,
         test_the_api_key_reaches_no_engine_process])
