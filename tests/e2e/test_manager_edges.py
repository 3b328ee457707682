"""`tandem manager`'s edges (issue 17): the /v1 gateway answers every error in OpenAI's shape,
with `tandem serve`'s words and JSON nesting limit; 405 with Allow, HEAD like GET, and the
console's single-page fallback only for its own routes. One row per case, each checking the
status, the message and that the manager then still serves a normal request."""
import collections
import json
import socket
import time

from harness import check, run
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
                          ("/deployments", {}), ("/", {})):
        get_status, get_headers, get_body = raw_http(c, request_bytes("GET", path, headers=headers))
        status, head_headers, body = raw_http(c, request_bytes("HEAD", path, headers=headers))
        check(status == get_status == 200 and body == b"",
              f"HEAD {path}: {status} (GET {get_status}), body {body[:100]!r}")
        check(head_headers.get("content-length") == str(len(get_body)) and
              head_headers.get("content-type") == get_headers.get("content-type"),
              f"HEAD {path}: the GET's headers: {head_headers} vs {get_headers}")


def check_expect_continue_on_a_path_that_reads_no_body(c, key):
    """No "100 Continue" for a body the manager would not read: the answer at once, then the
    connection closes."""
    for path, status in (("/", 405), ("/v1/nothing-here", 404)):
        head = request_bytes("POST", path, headers={"Authorization": f"Bearer {key}",
                                                    "Expect": "100-continue"})
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
                          check_expect_continue_on_a_path_that_reads_no_body)]
        names = [t.__name__ for t in tests]
        check(len(set(names)) == len(names), f"duplicate test names: {names}")
        run(tests)
