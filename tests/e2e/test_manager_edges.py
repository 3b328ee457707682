"""`tandem manager`'s edges (issue 17): the /v1 gateway answers every error in OpenAI's shape,
with `tandem serve`'s words and JSON nesting limit; 405 with Allow, HEAD like GET, and the
console's single-page fallback only for its own routes; SIGTERM ends a stream through the gateway
with an error event. One row per case, each checking the status, the message and that the
manager (or, after its SIGTERM, the instance behind it) then still serves a normal request."""
import collections
import http.client
import json
import signal
import socket
import time

from harness import STORIES_GGUF, check, run
from manager_harness import Cluster

GATEWAY = "/v1/chat/completions"


def nested(levels):
    return b'{"model": "no-such-deployment", "x": ' + b"[" * levels + b"]" * levels + b"}"


# name; status; method, path; raw body; key: send the API key; shape: "openai" ({"error":
# {message, type, param, code}}) or "management" ({code, reason, message}); needles: parts of the
# message; allow: the Allow header a 405 must carry.
Row = collections.namedtuple("Row", "name status method path raw key shape needles allow",
                             defaults=(None, True, "openai", (), None))

ROWS = [
    Row("gateway_body_not_json", 400, "POST", GATEWAY, b"{not json",
        needles=("request body is not valid JSON",)),
    Row("gateway_number_past_double", 400, "POST", GATEWAY,
        b'{"model": "m", "messages": [], "t": 1e400}', needles=("request body is not valid JSON",)),
    Row("gateway_body_not_an_object", 400, "POST", GATEWAY, b"[1]",
        needles=("request body must be a JSON object",)),
    # One nesting limit for the gateway and the instances behind it (128, as `tandem serve`).
    Row("gateway_nesting_past_128_levels", 400, "POST", GATEWAY, nested(128),
        needles=("deeper than the limit of 128 levels",)),
    Row("gateway_nesting_of_100_levels_passes_on", 404, "POST", GATEWAY, nested(99),
        needles=("does not exist",)),
    Row("v2_number_past_double", 400, "POST", "/v2/models", b'{"name": "x", "replicas": 1e400}',
        shape="management", needles=("request body is not valid JSON",)),
    Row("v2_nesting_past_128_levels", 400, "POST", "/v2/models",
        b'{"name": "x", "env": ' + b"[" * 128 + b"]" * 128 + b"}", shape="management",
        needles=("deeper than the limit of 128 levels",)),
    Row("post_on_the_console_root", 405, "POST", "/", b"{}", shape="management",
        needles=("POST", "/"), allow="GET, HEAD"),
    Row("post_on_a_console_route", 405, "POST", "/deployments", b"{}", shape="management",
        allow="GET, HEAD"),
    Row("get_on_gateway_completions", 405, "GET", "/v1/completions", allow="POST"),
    Row("post_on_gateway_models", 405, "POST", "/v1/models", b"{}", allow="GET, HEAD"),
    # The manager's own endpoints take GET and HEAD only; /v2 names what each path takes.
    Row("post_on_healthz", 405, "POST", "/healthz", b"{}", shape="management",
        needles=("POST", "/healthz", "GET, HEAD"), allow="GET, HEAD"),
    Row("delete_on_metrics", 405, "DELETE", "/metrics", shape="management", allow="GET, HEAD"),
    Row("put_on_version", 405, "PUT", "/version", b"{}", shape="management", allow="GET, HEAD"),
    Row("get_on_login", 405, "GET", "/auth/login", shape="management", allow="POST"),
    Row("patch_on_v2_models", 405, "PATCH", "/v2/models", b"{}", shape="management",
        needles=("PATCH", "/v2/models"), allow="GET, HEAD, POST"),
    Row("post_on_v2_gpu_devices", 405, "POST", "/v2/gpu-devices", b"{}", shape="management",
        allow="GET, HEAD"),
    Row("post_on_v2_usage", 405, "POST", "/v2/usage", b"{}", shape="management",
        allow="GET, HEAD"),
    Row("unknown_gateway_path", 404, "GET", "/v1/nothing-here", needles=("/v1/nothing-here",)),
    # Paths of the APIs never get the console's index.html, whatever follows them.
    Row("unknown_api_path", 404, "GET", "/api/nothing", shape="management"),
    Row("unknown_v2_path", 404, "GET", "/v2/nothing-here", shape="management"),
    Row("bare_v1_path", 404, "GET", "/v1", shape="management"),
    Row("missing_console_asset", 404, "GET", "/assets/nothing.js", shape="management"),
]


def raw_http(c, data, timeout=30):
    """Sends `data` on a new connection; returns (status, headers dict lower-cased, body)."""
    with socket.create_connection((c.host, c.port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except OSError:
            pass  # the manager already answered and closed
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split(" ")[1]) if lines[0].startswith("HTTP/") else 0
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return status, headers, body


def request_bytes(method, path, body=b"", headers=None):
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    return head.encode() + b"\r\n" + body


def dechunk(data):
    """The payload of a chunked body and whether it ended with its last chunk (0 CRLF CRLF)."""
    payload, pos = b"", 0
    while True:
        eol = data.find(b"\r\n", pos)
        if eol < 0:
            return payload, False
        size = int(data[pos:eol].split(b";")[0], 16)
        if size == 0:
            return payload, data[eol + 2:eol + 4] == b"\r\n"
        payload += data[eol + 2:eol + 2 + size]
        pos = eol + 2 + size + 2


def check_error(row, status, headers, body):
    check(status == row.status, f"{row.method} {row.path}: status {status}, want {row.status}: "
          f"{body[:300]!r}")
    check(headers.get("content-type", "").startswith("application/json"),
          f"a JSON answer, not the console's page: {headers} {body[:200]!r}")
    reply = json.loads(body)
    if row.shape == "openai":
        err = reply.get("error")
        check(isinstance(err, dict) and all(f in err for f in ("message", "type", "param", "code")),
              f"OpenAI's error shape: {reply}")
        check(err["code"] == row.status, f"code {err['code']}: {reply}")
        message = err["message"]
    else:
        check(reply.get("code") == row.status and "reason" in reply, f"management shape: {reply}")
        message = reply["message"]
    for n in row.needles:
        check(n in message, f"{n!r} not in {message!r}")
    if row.allow is not None:
        check(headers.get("allow") == row.allow, f"Allow {headers.get('allow')!r}, want "
              f"{row.allow!r}")


def serves_normally(c, key):
    r = c.call("GET", "/v1/models", headers={"Authorization": f"Bearer {key}"})
    check(r.status == 200 and r.json["object"] == "list", f"then a normal request: {r}")


def expect_row(c, key, row):
    headers = {"Authorization": f"Bearer {key}"} if row.key else {}
    status, got_headers, body = raw_http(c, request_bytes(row.method, row.path, row.raw or b"",
                                                          headers))
    check_error(row, status, got_headers, body)


def check_gateway_body_over_the_limit(c, key):
    """Past --max-body-bytes (4 MiB) on /v1: 413 in OpenAI's shape, answered on the header."""
    size = 5 << 20
    head = request_bytes("POST", GATEWAY, headers={"Authorization": f"Bearer {key}"})
    head = head.replace(b"Content-Length: 0", b"Content-Length: %d" % size)
    status, headers, body = raw_http(c, head + b"a" * (1 << 20))
    check_error(Row("", 413, "POST", GATEWAY, needles=("larger than the limit of 4194304 bytes",)),
                status, headers, body)


def check_head_answers_like_get(c, key):
    auth = {"Authorization": f"Bearer {key}"}
    for path, headers in (("/healthz", {}), ("/version", {}), ("/v1/models", auth),
                          ("/v2/models", auth), ("/deployments", {}), ("/", {})):
        get_status, get_headers, get_body = raw_http(c, request_bytes("GET", path, headers=headers))
        status, head_headers, body = raw_http(c, request_bytes("HEAD", path, headers=headers))
        check(status == get_status == 200 and body == b"",
              f"HEAD {path}: {status} (GET {get_status}), body {body[:100]!r}")
        check(head_headers.get("content-length") == str(len(get_body)) and
              head_headers.get("content-type") == get_headers.get("content-type"),
              f"HEAD {path}: the GET's headers: {head_headers} vs {get_headers}")


def check_expect_continue_on_a_path_that_reads_no_body(c, key):
    """No "100 Continue" for a body the manager would not read: the answer at once, then the
    connection closes. That includes a body-reading route whose caller is refused anyway: no key
    or a wrong one (401), a key whose scope does not include management (403)."""
    auth = {"Authorization": f"Bearer {key}"}
    wrong_key = {"Authorization": "Bearer gpustack_0000_wrong"}
    inference_key = c.create("/v2/api-keys", {"name": "expect-inference-only",
                                              "scope": ["inference"]})["value"]
    inference_only = {"Authorization": f"Bearer {inference_key}"}
    for path, headers, status in (("/", auth, 405), ("/v1/nothing-here", auth, 404),
                                  ("/v1/chat/completions", {}, 401),
                                  ("/v1/completions", wrong_key, 401),
                                  ("/v2/models", {}, 401), ("/v2/models", wrong_key, 401),
                                  ("/v2/models", inference_only, 403),
                                  ("/v2/users", inference_only, 403)):
        head = request_bytes("POST", path, headers={**headers, "Expect": "100-continue"})
        head = head.replace(b"Content-Length: 0", b"Content-Length: 5000")
        started = time.time()
        got, headers, body = raw_http(c, head, timeout=4)
        check(got == status and b"100 Continue" not in body and time.time() - started < 2,
              f"POST {path} with Expect: {got} {headers} {body[:200]!r}")


def check_console_routes_get_the_page(c, key):
    for path in ("/deployments", "/api-keys", "/deployments/3/edit", "/dashboard"):
        status, headers, body = raw_http(c, request_bytes("GET", path))
        check(status == 200 and headers.get("content-type", "").startswith("text/html") and
              b"<!doctype html>" in body.lower(), f"GET {path}: {status} {headers}")


def test_of(c, key, name, body):
    def test():
        body(c, key)
        serves_normally(c, key)
    test.__name__ = f"test_{name}"
    return test


def open_stream(c, path, headers):
    """A GET of a stream on a raw socket, read until its first body bytes: (socket, bytes)."""
    s = socket.create_connection((c.host, c.port), timeout=60)
    s.sendall(request_bytes("GET", path, headers=headers))
    out = b""
    while b"\r\n\r\n" not in out or not out.partition(b"\r\n\r\n")[2]:
        chunk = s.recv(65536)
        check(chunk, f"GET {path} started: {out[:300]!r}")
        out += chunk
    check(out.startswith(b"HTTP/1.1 200"), f"GET {path}: {out[:300]!r}")
    return s, out


def test_sigterm_ends_gateway_watch_and_log_streams_with_their_last_chunk():
    with Cluster() as c:
        c.add_agent("node-a")
        c.create("/v2/models", {"name": "stories", "local_path": STORIES_GGUF, "replicas": 1,
                                "backend_parameters": ["--max-model-len 2048 --num-threads 1"]})
        inst = c.wait_running("stories")[0]
        key = c.create("/v2/api-keys", {"name": "k"})["value"]
        body = json.dumps({"model": "stories", "prompt": "Once", "max_tokens": 1900,
                           "ignore_eos": True, "stream": True}).encode()
        with socket.create_connection((c.host, c.port), timeout=60) as s:
            s.sendall(request_bytes("POST", "/v1/completions", body,
                                    {"Authorization": f"Bearer {key}"}))
            out = b""
            while b"data: {" not in out:
                chunk = s.recv(65536)
                check(chunk, f"the stream started: {out[:300]!r}")
                out += chunk
            # A watch and a followed log, open at the same time.
            others = [open_stream(c, path, c.admin) for path in (
                "/v2/models?watch=true",
                f"/v2/model-instances/{inst['id']}/logs?tail=1&follow=true")]
            manager = c.procs["manager"]
            manager.send_signal(signal.SIGTERM)
            started = time.time()
            while chunk := s.recv(65536):
                out += chunk
            closed_after_s = time.time() - started
        # The watch and the log end with their last chunk, not a dropped connection.
        for (sock, got), what in zip(others, ("watch", "followed log")):
            with sock:
                while chunk := sock.recv(65536):
                    got += chunk
            check(dechunk(got.partition(b"\r\n\r\n")[2])[1],
                  f"the {what} ends with its last chunk: {got[-200:]!r}")
        check(closed_after_s < 10, f"the stream closes at once: after {closed_after_s:.1f} s")
        payload, complete = dechunk(out.partition(b"\r\n\r\n")[2])
        events = [e for e in payload.decode().split("\n\n") if e]
        check(all(e.startswith("data: ") for e in events), f"whole SSE events: {payload[-400:]!r}")
        check("data: [DONE]" not in events, f"a cut stream never says [DONE]: {events[-2:]}")
        err = json.loads(events[-1][len("data: "):]).get("error")
        check(isinstance(err, dict) and err.get("type") == "ServiceUnavailableError" and
              err.get("code") == 503 and "param" in err and "shutting down" in err["message"],
              f"the last event is an OpenAI error: {events[-1]}")
        check(len(events) > 1 and "choices" in json.loads(events[-2][len("data: "):]),
              f"tokens came before the cut: {events[-3:]}")
        check(complete, f"the chunked body ends with its last chunk: {out[-100:]!r}")
        check(manager.wait(timeout=30) == 0, f"the manager exits 0:\n{c.log('manager')}")
        # The instance behind the gateway goes on serving (the agent still runs it).
        conn = http.client.HTTPConnection("127.0.0.1", inst["port"], timeout=60)
        conn.request("POST", "/v1/completions", body=json.dumps(
            {"model": "stories", "prompt": "Once", "max_tokens": 2}),
            headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        check(resp.status == 200 and json.loads(resp.read())["choices"], "the instance serves")


if __name__ == "__main__":
    with Cluster() as cluster:
        api_key = cluster.create("/v2/api-keys", {"name": "edges"})["value"]
        tests = [test_of(cluster, api_key, row.name, lambda c, k, row=row: expect_row(c, k, row))
                 for row in ROWS]
        tests += [test_of(cluster, api_key, "gateway_body_over_4_mib_is_413",
                          check_gateway_body_over_the_limit),
                  test_of(cluster, api_key, "head_answers_like_get", check_head_answers_like_get),
                  test_of(cluster, api_key, "console_routes_get_the_page",
                          check_console_routes_get_the_page),
                  test_of(cluster, api_key, "expect_continue_on_a_path_that_reads_no_body",
                          check_expect_continue_on_a_path_that_reads_no_body),
                  test_sigterm_ends_gateway_watch_and_log_streams_with_their_last_chunk]
        names = [t.__name__ for t in tests]
        check(len(set(names)) == len(names), f"duplicate test names: {names}")
        run(tests)
