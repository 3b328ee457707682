"""Process lifecycle (issue 17): the API server of a deployment whose every engine core is gone
exits non-zero after answering what was in flight (vLLM's behaviour, so a supervisor restarts
it); a killed server's ipc socket files are removed by the next one; the API key is not passed
down to engine processes."""
import glob
import os
import signal
import subprocess
import threading
import time

from harness import STORIES_GGUF, Server, check, run


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
    with Server(STORIES_GGUF) as srv:
        pid = srv.proc.pid
        files = glob.glob(f"/tmp/tandem-{pid}-*")
        check(files, f"the server's ipc sockets: none under /tmp/tandem-{pid}-*")
        for core in engine_cores(pid):
            os.kill(int(core), signal.SIGKILL)
        srv.proc.kill()
        srv.proc.wait()
    check(all(os.path.exists(f) for f in files), "SIGKILL leaves them (the case to clean up)")
    with Server(STORIES_GGUF) as srv:
        check(not any(os.path.exists(f) for f in files),
              f"still there after the next start: {[f for f in files if os.path.exists(f)]}")
        check("ipc socket file(s) in /tmp left by tandem processes that are gone" in
              srv.full_log(), srv.logs())


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


if __name__ == "__main__":
    run([test_the_only_engine_core_dying_ends_the_server_after_its_requests,
         test_every_api_server_answers_its_requests_when_the_engines_are_gone,
         test_a_killed_servers_ipc_files_are_removed_by_the_next,
         test_the_api_key_reaches_no_engine_process])
