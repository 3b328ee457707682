"""HTTP framing by RFC 9112, backpressure and descriptor exhaustion (issue 17): one row per case,
each checking the status, the message and that the server then serves a normal request.
Raw sockets throughout: http.client would fix up the very framing under test."""
import json
import resource
import socket
import subprocess
import tempfile
import time
import urllib.request

from harness import ASAN, BIN, STORIES_GGUF, Server, check, free_port, run

BODY = b'{"prompt": "Once", "max_tokens": 2}'


def raw_exchange(port, data, timeout=10):
    """Sends `data`, reads until the server closes (or `timeout`); returns (bytes, closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except socket.timeout:
            return out, False
        return out, True


def status_and_body(reply):
    head, _, body = reply.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, head.decode(errors="replace"), body


def serves_normally(srv):
    status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
    check(status == 200 and body["choices"][0]["text"], f"then a normal request: {status} {body}")


def post(headers, body=BODY):
    return (b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
            headers + b"\r\n" + body)


# (name, request bytes, status, message part); each answered, then the connection closed.
FRAMING = [
    ("Transfer-Encoding gzip (chunked not final)", post(b"Transfer-Encoding: gzip\r\n"),
     400, "does not end with chunked"),
    ("Transfer-Encoding chunked, identity", post(b"Transfer-Encoding: chunked, identity\r\n"),
     400, "does not end with chunked"),
    ("Transfer-Encoding xchunked with Content-Length",
     post(b"Transfer-Encoding: xchunked\r\nContent-Length: %d\r\n" % len(BODY)),
     400, "Transfer-Encoding and Content-Length in one request"),
    ("a coding before chunked", post(b"Transfer-Encoding: gzip, chunked\r\n",
                                     b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)),
     501, "only chunked is implemented"),
    ("chunked with Content-Length",
     post(b"Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
          b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)),
     400, "Content-Length"),
    # Beast waits for the CR of a chunk line that ends in a bare LF: answered at once instead of
    # closed by the idle timeout without a word.
    ("chunk lines ending in a bare LF",
     post(b"Transfer-Encoding: chunked\r\n", b"%x\n%s\n0\n\n" % (len(BODY), BODY)),
     400, "a line ends in a bare LF"),
    ("a malformed absolute-form target", b"GET http://[::1/health HTTP/1.1\r\nHost: x\r\n\r\n",
     400, "malformed request target 'http://[::1/health'"),
    ("userinfo in an absolute-form target",
     b"GET http://user@127.0.0.1/health HTTP/1.1\r\nHost: x\r\n\r\n", 400,
     "malformed request target"),
]


def test_framing_that_cannot_be_trusted_is_answered_and_closed():
    with Server(STORIES_GGUF) as srv:
        for name, data, want_status, needle in FRAMING:
            reply, closed = raw_exchange(srv.port, data)
            status, head, body = status_and_body(reply)
            check(status == want_status and needle in body.decode(errors="replace"),
                  f"{name}: {reply[:400]!r}")
            check(closed and reply.count(b"HTTP/1.1") == 1,
                  f"{name}: one answer, then the connection closes (no smuggled second "
                  f"request): {reply[:600]!r}")
            serves_normally(srv)


def test_a_nul_byte_does_not_end_a_json_body():
    with Server(STORIES_GGUF) as srv:
        body = BODY + b"\0{\"smuggled\": 1}"
        reply, _ = raw_exchange(srv.port, post(b"Content-Length: %d\r\nConnection: close\r\n"
                                               % len(body), body))
        status, _, out = status_and_body(reply)
        message = json.loads(out)["error"]["message"]
        check(status == 400 and f"NUL byte at offset {len(BODY)}" in message, f"{reply[:400]!r}")
        serves_normally(srv)


def test_expect_100_continue_is_answered_before_the_body():
    with Server(STORIES_GGUF) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(post(b"Content-Length: %d\r\nExpect: 100-continue\r\n" % len(BODY), b""))
            interim = s.recv(4096)
            check(interim == b"HTTP/1.1 100 Continue\r\n\r\n", f"interim: {interim!r}")
            s.sendall(BODY)
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                reply += s.recv(65536)
        status, _, body = status_and_body(reply)
        check(status == 200 and json.loads(body)["choices"], f"{reply[:400]!r}")
        serves_normally(srv)


def test_head_is_answered_like_get_without_a_body():
    with Server(STORIES_GGUF) as srv:
        for path in ("/health", "/v1/models", "/version", "/playground/config", "/"):
            get = b"GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % path.encode()
            get_status, get_head, get_body = status_and_body(raw_exchange(srv.port, get)[0])
            reply, closed = raw_exchange(srv.port, b"HEAD" + get[3:])
            status, head, body = status_and_body(reply)
            check(status == get_status == 200 and body == b"" and closed,
                  f"HEAD {path}: {status} (GET {get_status}), body {body[:100]!r}")
            length = [l for l in head.lower().splitlines() if l.startswith("content-length:")]
            check(length == [f"content-length: {len(get_body)}"],
                  f"HEAD {path}: the GET's Content-Length ({len(get_body)}): {head}")
        serves_normally(srv)


def test_expect_100_continue_on_a_request_refused_anyway_gets_the_answer_at_once():
    # No "100 Continue" for a body the server would not read: the 404/405 at once (as uvicorn),
    # then the connection closes (the client may or may not send the body).
    with Server(STORIES_GGUF) as srv:
        for path, status, needle in ((b"/v1/nothing-here", 404, "no route for POST /v1/nothing"),
                                     (b"/health", 405, "allowed: GET, HEAD")):
            request = (b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % (path, len(BODY)))
            started = time.time()
            reply, closed = raw_exchange(srv.port, request, timeout=4)
            got, head, body = status_and_body(reply)
            check(got == status and needle in body.decode(errors="replace"),
                  f"{path}: {reply[:300]!r}")
            check(b"100 Continue" not in reply and closed and time.time() - started < 2,
                  f"{path}: answered at once without 100, then closed: {reply[:300]!r}")
        serves_normally(srv)


def test_http10_streams_end_with_the_connection_not_chunks():
    with Server(STORIES_GGUF) as srv:
        body = b'{"prompt": "Once", "max_tokens": 3, "stream": true}'
        request = (b"POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        reply, closed = raw_exchange(srv.port, request)
        status, head, out = status_and_body(reply)
        check(status == 200 and closed, f"{reply[:300]!r}")
        check("transfer-encoding" not in head.lower(), f"no chunked to HTTP/1.0: {head}")
        events = [line for line in out.decode().split("\n\n") if line]
        check(events[-1] == "data: [DONE]" and len(events) == 4,
              f"the raw SSE events, nothing between them: {out[:400]!r}")
        serves_normally(srv)


def test_absolute_form_targets_are_served():
    with Server(STORIES_GGUF) as srv:
        request = (b"GET http://127.0.0.1:%d/v1/models HTTP/1.1\r\nHost: x\r\n"
                   b"Connection: close\r\n\r\n" % srv.port)
        reply, _ = raw_exchange(srv.port, request)
        status, _, body = status_and_body(reply)
        check(status == 200 and json.loads(body)["object"] == "list", f"{reply[:300]!r}")
        serves_normally(srv)


def test_a_slow_upload_is_timed_by_idle_gaps_not_its_total():
    # 8 MB at 1 MB per second: about 8 s in all, past the 5 s keep-alive timeout that once cut
    # it (the timeout now counts from the last byte received).
    with Server(STORIES_GGUF) as srv:
        filler = b"a" * (8 << 20)
        body = b'{"prompt": "Once", "max_tokens": 2, "user": "' + filler + b'"}'
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            s.sendall(post(b"Content-Length: %d\r\n" % len(body), b""))
            for i in range(0, len(body), 1 << 20):
                s.sendall(body[i:i + (1 << 20)])
                time.sleep(1)
            reply = b""
            while not reply.rstrip().endswith(b"}"):
                chunk = s.recv(65536)
                check(chunk, f"the server closed during a slow upload: {reply[:300]!r}")
                reply += chunk
        status, _, out = status_and_body(reply)
        check(status == 200, f"{reply[:400]!r}")
        serves_normally(srv)


def test_a_client_that_stops_reading_is_aborted_and_its_requests_freed():
    with Server(STORIES_GGUF, "--stalled-client-timeout", "1") as srv:
        pid = srv.proc.pid
        rss_before = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0])
        # 64 sequences in two streams. Each stream must first fill the server's send queue
        # (1 MiB) and its kernel send buffer (up to 4 MiB on loopback) before it stalls: the
        # fewer streams, the fewer tokens that takes (the receive buffer is set before connecting,
        # so the window the client advertises stays small).
        body = json.dumps({"prompt": "Once", "max_tokens": 1500, "n": 32, "logprobs": 20,
                           "stream": True, "ignore_eos": True}).encode()
        readers = []
        for _ in range(2):  # never read
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(post(b"Content-Length: %d\r\n" % len(body), body))
            readers.append(s)
        deadline = time.time() + 120
        while time.time() < deadline:
            aborted = srv.metric_values("tandem:http_stalled_client_aborts_total")
            if aborted and aborted[0] >= 2:
                break
            time.sleep(0.2)
        check(aborted and aborted[0] == 2, f"2 stalled responses aborted: {aborted}\n{srv.logs()}")
        check(srv.full_log().count("stopped reading POST /v1/completions") == 2, srv.logs())
        # Their engine requests end too (blocks freed), without a client ever reading.
        while time.time() < deadline and srv.metric_values("vllm:num_requests_running")[0] > 0:
            time.sleep(0.2)
        check(srv.metric_values("vllm:num_requests_running") == [0.0], "64 sequences aborted")
        check(srv.metric_values("vllm:kv_cache_usage_perc") == [0.0], "KV blocks freed")
        rss_after = int(open(f"/proc/{pid}/status").read().split("VmRSS:")[1].split()[0])
        if ASAN:
            print("(RSS not bounded under AddressSanitizer: its quarantine keeps freed memory)")
        else:
            check(rss_after - rss_before < 64 << 10,
                  f"the API server's memory stays bounded: {rss_before} → {rss_after} KiB")
        for s in readers:
            s.close()
        serves_normally(srv)


def test_out_of_descriptors_backs_off_with_one_log_line():
    # 64 descriptors, soft and hard: the server cannot raise it. 200 connections exhaust it.
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    with Server(STORIES_GGUF, preexec_fn=low_limit) as srv:
        held = []
        for _ in range(200):
            try:
                held.append(socket.create_connection(("127.0.0.1", srv.port), timeout=2))
            except OSError:
                break
        stat = lambda: sum(int(x) for x in open(f"/proc/{srv.proc.pid}/stat").read()
                           .rsplit(")", 1)[1].split()[11:13])
        cpu_before = stat()
        time.sleep(2)
        ticks = stat() - cpu_before  # 1/100 s each
        check(ticks < 100, f"the accept loop does not spin on EMFILE: {ticks} ticks in 2 s")
        log = srv.full_log()
        check(0 < log.count("accept failed") <= 2 and "backing off" in log,
              f"one warning per 10 s:\n{log[-2000:]}")
        for s in held:
            s.close()
        deadline = time.time() + 30
        while True:  # the listener retries within 1 s of a descriptor coming free
            try:
                serves_normally(srv)
                break
            except (OSError, AssertionError):
                if time.time() > deadline:
                    raise
                time.sleep(0.2)


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one():
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    soft = 256 if hard == resource.RLIM_INFINITY else min(256, hard // 2)

    def low_soft_limit():  # as Debian's default soft limit of 1024 below a higher hard one
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    with Server(STORIES_GGUF, preexec_fn=low_soft_limit) as srv:
        limits = open(f"/proc/{srv.proc.pid}/limits").read()
        line = next(l for l in limits.splitlines() if l.startswith("Max open files"))
        now_soft, now_hard = line.split()[3:5]
        check(now_soft == now_hard != str(soft), f"started at {soft}: soft {now_soft}, hard "
              f"{now_hard}")


def test_a_slow_header_is_timed_by_idle_gaps_and_host_is_required():
    with Server(STORIES_GGUF) as srv:
        # 8 s of header, a byte every 80 ms: past the 5 s idle timeout in all, never idle.
        request = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * 90 + b"\r\n\r\n"
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            for i in range(len(request)):
                s.sendall(request[i:i + 1])
                time.sleep(0.08)
            reply = s.recv(4096)
        check(reply.startswith(b"HTTP/1.1 200"), f"a slow header is served: {reply[:200]!r}")
        for name, head in (("no Host", b"GET /health HTTP/1.1\r\n"),
                           ("two Hosts", b"GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n")):
            reply, closed = raw_exchange(srv.port, head + b"\r\n")
            status, _, body = status_and_body(reply)
            check(status == 400 and "Host header" in body.decode() and closed, f"{name}: {reply!r}")
        # HTTP/1.0 with Transfer-Encoding: answered, then closed (RFC 9112 §6.1).
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
        request = (b"POST /v1/completions HTTP/1.0\r\nConnection: keep-alive\r\n"
                   b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + body +
                   b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        reply, closed = raw_exchange(srv.port, request)
        check(closed and reply.count(b"HTTP/1.1 ") == 1 and reply.startswith(b"HTTP/1.1 200"),
              f"HTTP/1.0 with Transfer-Encoding: one answer, then close: {reply[:300]!r}")
        serves_normally(srv)


def test_host_may_be_a_name():
    port = free_port()
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([BIN, "serve", STORIES_GGUF, "--host", "localhost", "--port",
                                 str(port), "--num-threads", "1"], stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            deadline, text = time.time() + 60, ""
            while f"listening on localhost:{port} (127.0.0.1)" not in text:
                check(proc.poll() is None and time.time() < deadline, f"--host localhost: {text}")
                time.sleep(0.1)
                log.seek(0)
                text = log.read().decode(errors="replace")
            deadline = time.time() + 60
            while True:  # wait for the engine: /health turns 200
                try:
                    with urllib.request.urlopen(f"http://localhost:{port}/health") as r:
                        if r.status == 200:
                            break
                except OSError:
                    check(time.time() < deadline, "not healthy")
                    time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_a_request_the_client_left_is_in_the_access_log():
    with Server(STORIES_GGUF) as srv:
        body = json.dumps({"prompt": "Once", "max_tokens": 400, "stream": True,
                           "ignore_eos": True}).encode()
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(post(b"Content-Length: %d\r\n" % len(body), body))
            check(s.recv(4096).startswith(b"HTTP/1.1 200"), "the stream started")
        deadline = time.time() + 30
        while "(aborted: the client went away)" not in srv.full_log():
            check(time.time() < deadline, f"no access log line for the aborted request:\n"
                  f"{srv.logs()}")
            time.sleep(0.1)
        line = next(l for l in srv.full_log().splitlines() if "aborted: the client" in l)
        check("POST /v1/completions 200" in line, line)
        serves_normally(srv)


if __name__ == "__main__":
    run([test_framing_that_cannot_be_trusted_is_answered_and_closed,
         test_a_nul_byte_does_not_end_a_json_body,
         test_expect_100_continue_is_answered_before_the_body,
         test_expect_100_continue_on_a_request_refused_anyway_gets_the_answer_at_once,
         test_head_is_answered_like_get_without_a_body,
         test_http10_streams_end_with_the_connection_not_chunks,
         test_absolute_form_targets_are_served,
         test_a_slow_upload_is_timed_by_idle_gaps_not_its_total,
         test_a_client_that_stops_reading_is_aborted_and_its_requests_freed,
         test_out_of_descriptors_backs_off_with_one_log_line,
         test_the_soft_descriptor_limit_is_raised_to_the_hard_one,
         test_a_slow_header_is_timed_by_idle_gaps_and_host_is_required,
         test_host_may_be_a_name,
         test_a_request_the_client_left_is_in_the_access_log])
