"""Every bad input gets its 4xx in the OpenAI error shape, and the server stays up.

One row per bad request (ROWS), each run and reported as its own test: its exact status, the
four error fields, its `param` and message parts where the row names them, and then a normal
request the server must still serve. One server serves every row, so a row that brings it down
fails every row after it too (each reported)."""
import collections
import json
import socket

from harness import STORIES_GGUF, Server, check, run

KEY = "sk-test-123"
AUTH = {"Authorization": f"Bearer {KEY}"}
C = "/v1/completions"
CHAT = "/v1/chat/completions"
OK = {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 4}
HI = [{"role": "user", "content": "hi"}]

# name: the test's name; status: the exact HTTP status; method, path; body (JSON-encoded) or raw
# (bytes as sent); headers: over AUTH ({"Authorization": ""} sends none); param: err["param"]
# must equal it (None: not checked); needles: parts err["message"] must contain; allow: the Allow
# header a 405 must carry.
Row = collections.namedtuple("Row", "name status method path body raw headers param needles allow",
                             defaults=(None, None, None, None, (), None))

ROWS = [
    Row("body_not_json", 400, "POST", C, raw=b"{not json"),
    Row("prompt_not_utf8", 400, "POST", C, raw=b'{"model": "x", "prompt": "\xff\xfe"}'),
    Row("max_tokens_a_string", 400, "POST", C, {**OK, "max_tokens": "many"}, param="max_tokens"),
    Row("temperature_negative", 400, "POST", C, {**OK, "temperature": -1}, param="temperature"),
    Row("top_p_above_one", 400, "POST", C, {**OK, "top_p": 1.5}, param="top_p"),
    Row("n_zero", 400, "POST", C, {**OK, "n": 0}, param="n"),
    Row("prompt_a_number", 400, "POST", C, {**OK, "prompt": 5}, param="prompt"),
    Row("unknown_model", 404, "POST", C, {**OK, "model": "no-such-model"}),
    # "Once" is [BOS, Once]: 2 + 255 = 257 tokens > --max-model-len 256.
    Row("prompt_and_max_tokens_past_max_model_len", 400, "POST", C, {**OK, "max_tokens": 255},
        needles=("256", "257")),
    Row("no_api_key", 401, "POST", C, OK, headers={"Authorization": ""}),
    Row("wrong_api_key", 401, "POST", C, OK, headers={"Authorization": "Bearer wrong"}),
    Row("get_on_completions", 405, "GET", C, allow="POST"),
    Row("post_on_health", 405, "POST", "/health", raw=b"{}", allow="GET, HEAD"),
    # The playground's page: GET and HEAD only, never a 404 for another method.
    Row("post_on_root", 405, "POST", "/", raw=b"{}", needles=("POST", "GET, HEAD"),
        allow="GET, HEAD"),
    Row("unknown_v1_path", 404, "GET", "/v1/nothing-here"),
    Row("unknown_api_path", 404, "GET", "/api/nothing-here", needles=("/api/nothing-here",)),
    # Numbers beyond double range used to abort the process (nlohmann throws even with
    # exceptions off): every JSON entry point must answer 400 instead.
    Row("completions_number_past_double", 400, "POST", C,
        raw=b'{"prompt": "a", "temperature": 1e400}'),
    Row("completions_unknown_field_past_double", 400, "POST", C,
        raw=b'{"prompt": "a", "unknown": -1e999}'),
    Row("chat_number_past_double", 400, "POST", CHAT,
        raw=b'{"messages": [{"role": "user", "content": "hi"}], "t": 1e400}'),
    Row("tokenize_number_past_double", 400, "POST", "/tokenize",
        raw=b'{"prompt": "a", "x": 1e400}'),
    Row("chat_without_a_chat_template", 400, "POST", CHAT,
        {"model": STORIES_GGUF, "messages": HI}, needles=("chat template",)),
    # Sampling fields tandem cannot honour or that name tokens outside the vocabulary (512)
    # are refused by name, never silently ignored.
    Row("stop_token_id_past_the_vocabulary", 400, "POST", C, {**OK, "stop_token_ids": [512]},
        param="stop_token_ids", needles=("512", "[0, 512)")),
    Row("stop_token_id_past_int64_is_never_wrapped", 400, "POST", C,
        {**OK, "stop_token_ids": [2 ** 64 - 1]}, param="stop_token_ids",
        needles=("beyond 2147483646",)),
    Row("stop_token_id_not_an_integer", 400, "POST", C, {**OK, "stop_token_ids": [1.5]},
        param="stop_token_ids", needles=("found a number",)),
    Row("response_format_type_unknown", 400, "POST", C,
        {**OK, "response_format": {"type": "TEXT"}}, param="response_format",
        needles=("unknown",)),
    Row("logit_bias_token_past_the_vocabulary", 400, "POST", C, {**OK, "logit_bias": {"600": 1}},
        param="logit_bias", needles=("600",)),
    Row("logit_bias_value_above_100", 400, "POST", C, {**OK, "logit_bias": {"5": 101}},
        param="logit_bias"),
    Row("logit_bias_key_not_a_token_id", 400, "POST", C, {**OK, "logit_bias": {"five": 1}},
        param="logit_bias"),
    Row("logit_bias_an_array", 400, "POST", C, {**OK, "logit_bias": [1]}, param="logit_bias",
        needles=("found an array",)),
    Row("response_format_structural_tag", 400, "POST", C,
        {**OK, "response_format": {"type": "structural_tag"}}, param="response_format",
        needles=("structural_tag", "not supported")),
    Row("chat_json_schema_empty", 400, "POST", CHAT,
        {"messages": HI, "response_format": {"type": "json_schema", "json_schema": {}}},
        param="response_format"),
    # A request id becomes the response id, log lines and a header: at most 512 printable bytes.
    Row("request_id_of_one_mib", 400, "POST", C, {**OK, "request_id": "a" * (1 << 20)},
        param="request_id", needles=("request_id is 1048576 bytes long", "limit is 512 bytes")),
    Row("chat_request_id_with_a_newline", 400, "POST", CHAT,
        {"messages": HI, "request_id": "a\nb"}, param="request_id",
        needles=("control character 0x0a at byte 1",)),
    Row("x_request_id_header_past_512_bytes", 400, "POST", C, OK,
        headers={"X-Request-Id": "a" * 4096},
        needles=("X-Request-Id header is 4096 bytes long", "limit is 512 bytes")),
    # A tab is the one control character HTTP lets through in a header value.
    # Past Beast's default header limit of 8 KiB: still the X-Request-Id check's own 400.
    Row("x_request_id_header_of_16_kib", 400, "POST", C, OK,
        headers={"X-Request-Id": "a" * 16384},
        needles=("X-Request-Id header is 16384 bytes long", "limit is 512 bytes")),
    Row("x_request_id_header_with_a_tab", 400, "GET", "/v1/models",
        headers={"X-Request-Id": "a\tb"}, needles=("X-Request-Id", "control character 0x09")),
]


def expect_error(srv, row):
    """Sends `row`'s request; checks its status, the error shape, param and message parts."""
    hdrs = dict(AUTH)
    hdrs.update(row.headers or {})
    status, headers, out = srv.request(row.method, row.path, body=row.body, raw=row.raw,
                                       headers=hdrs)
    if row.allow is not None:
        check(headers.get("Allow") == row.allow, f"Allow {headers.get('Allow')!r}, want "
              f"{row.allow!r}")
    check(status == row.status, f"{row.method} {row.path} {row.body or row.raw!r}: status "
          f"{status}, want {row.status}: {out[:300]!r}")
    err = json.loads(out)["error"]
    for field in ("message", "type", "param", "code"):
        check(field in err, f"error lacks {field}: {err}")
    check(err["message"], "empty error message")
    if row.param is not None:
        check(err["param"] == row.param, f"param {err['param']!r}, want {row.param!r}: {err}")
    for n in row.needles:
        check(n in err["message"], f"{n!r} not in {err['message']!r}")
    return err


def serves_normally(srv):
    status, body = srv.post_json(C, OK, headers=AUTH)
    check(status == 200 and body["choices"][0]["text"],
          f"then a normal request: {status} {str(body)[:300]}")


def answer_to_oversized(srv, head, rest=b""):
    """Sends `head`, then `rest`; the server may answer and close before it has read them all,
    so this speaks raw HTTP and stops writing when it does. Returns (response head, body)."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        try:
            s.sendall(head)
            s.sendall(rest)
        except OSError:
            pass  # the server already answered and closed
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) == 0:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head, body


def check_body_too_large(srv):
    """A 17 MiB body is refused with 413 as soon as its Content-Length is read."""
    size = 17 << 20
    head, body = answer_to_oversized(
        srv, f"POST {C} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Authorization: Bearer {KEY}\r\nContent-Length: {size}\r\n\r\n".encode(),
        b"a" * (1 << 20))
    check(head.startswith(b"HTTP/1.1 413"), f"oversized body: {head[:100]!r}")
    check("error" in json.loads(body[body.index(b"{"):body.rindex(b"}") + 1]),
          f"body {body[:200]!r}")


def check_oversized_body_checks_key_and_path_first(srv):
    """An oversized Content-Length with a wrong key is a 401 and on an unknown path a 404, as
    when the body fits: the key and the route are checked before the body's size (the 413 once
    came first, at the header). A chunked body past the limit is still a 413."""
    size = 17 << 20
    cases = ((f"POST {C}", "Bearer wrong", b"HTTP/1.1 401"),
             ("POST /v1/no-such-route", f"Bearer {KEY}", b"HTTP/1.1 404"))
    for line, auth, want in cases:
        head, _ = answer_to_oversized(
            srv, f"{line} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Authorization: {auth}\r\nContent-Length: {size}\r\n\r\n".encode())
        check(head.startswith(want), f"{line} with {auth!r}: {head[:100]!r}, want {want!r}")
    chunk = b"a" * (1 << 20)
    head, _ = answer_to_oversized(
        srv, f"POST {C} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Authorization: Bearer {KEY}\r\nTransfer-Encoding: chunked\r\n\r\n".encode(),
        (b"100000\r\n" + chunk + b"\r\n") * 17 + b"0\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 413"), f"chunked 17 MiB body: {head[:100]!r}")


def check_header_too_large(srv):
    """Request line + headers past 64 KiB: 431 (RFC 6585 §5) in the OpenAI shape, naming the
    limit (Beast's own limit of 8 KiB answered a generic 400 "header limit exceeded")."""
    head, body = answer_to_oversized(
        srv, f"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {KEY}\r\n"
             f"X-Filler: {'a' * (80 << 10)}\r\n\r\n".encode())
    check(head.startswith(b"HTTP/1.1 431"), f"oversized header: {head[:100]!r}")
    error = json.loads(body[body.index(b"{"):body.rindex(b"}") + 1])["error"]
    check(error["code"] == 431 and error["type"] == "RequestHeaderFieldsTooLargeError" and
          "larger than the limit of 65536 bytes" in error["message"], f"error {error}")


def header_of_size(total, filler_headers=1):
    """A GET /health whose request line + headers + blank line are exactly `total` bytes, the
    filler split over `filler_headers` X-Filler-N headers."""
    base = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    names = [f"X-Filler-{i}: ".encode() for i in range(filler_headers)]
    fixed = len(base) + sum(len(n) + 2 for n in names) + 2
    fill = total - fixed
    sizes = [fill // filler_headers + (1 if i < fill % filler_headers else 0)
             for i in range(filler_headers)]
    head = base + b"".join(n + b"a" * k + b"\r\n" for n, k in zip(names, sizes)) + b"\r\n"
    assert len(head) == total
    return head


def check_header_limit_counts_every_byte_however_it_arrives(srv):
    """The 64 KiB limit is the request line, the fields and the blank line together, exactly,
    whether the header arrives in one write or in 1000-byte pieces (Beast's own limit let two
    60 KB fields read in one buffer through)."""
    limit = 64 << 10
    for total, fields, pieces, want in [(limit, 1, False, b"HTTP/1.1 200"),
                                        (limit + 1, 1, False, b"HTTP/1.1 431"),
                                        (limit, 2, True, b"HTTP/1.1 200"),
                                        (limit + 1, 2, True, b"HTTP/1.1 431"),
                                        (80 << 10, 2, False, b"HTTP/1.1 431"),
                                        (120 << 10, 2, False, b"HTTP/1.1 431"),
                                        (120 << 10, 2, True, b"HTTP/1.1 431"),
                                        (150 << 10, 8000, False, b"HTTP/1.1 431")]:
        head = header_of_size(total, fields)
        with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
            try:
                if pieces:
                    for i in range(0, len(head), 1000):
                        s.sendall(head[i:i + 1000])
                else:
                    s.sendall(head)
            except OSError:
                pass  # answered and closed before the rest was read
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        check(data.startswith(want), f"{total} bytes in {fields} field(s), "
                                     f"{'pieces' if pieces else 'one write'}: {data[:120]!r}")


def send_raw(srv, payload):
    """Writes `payload` on one new connection and returns every byte until the server closes."""
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(payload)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def check_body_without_length_is_answered(srv):
    """A POST whose body comes without Content-Length: HTTP/1.1 reads an empty body, then the
    body's bytes as a malformed next request. Both get their 400, in order, then the close."""
    data = send_raw(srv, f"POST {C} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Authorization: Bearer {KEY}\r\n\r\n".encode() + b'{"prompt": "a"}')
    check(data.count(b"HTTP/1.1 400") == 2, f"no-length body: {data[:400]!r}")
    check(b"request body is empty" in data and b"malformed HTTP request" in data, f"{data!r}")


def check_pipelined_requests_are_both_answered(srv):
    """A generation and a second request in one write (HTTP/1.1 pipelining): both answered, in
    order. The session used to end with the generation (nothing held it while the second
    request waited), answering neither."""
    body = b'{"prompt": "Once", "max_tokens": 8}'
    data = send_raw(srv, f"POST {C} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n"
                         .encode() + body
                         + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(data.count(b"HTTP/1.1 200") == 2 and b'"choices"' in data, f"pipelined: {data[:300]!r}")


def check_health_and_logit_bias_after_every_bad_input(srv):
    status, _, _ = srv.request("GET", "/health")
    check(status == 200, f"/health {status} after bad inputs")
    # logit_bias is applied (greedy included): +100 on token 5 makes it every token.
    status, body = srv.post_json(C, {**OK, "temperature": 0, "return_token_ids": True,
                                     "logit_bias": {"5": 100}}, headers=AUTH)
    check(status == 200 and body["choices"][0]["token_ids"] == [5] * 4, f"logit_bias: {body}")
    status, body = srv.post_json(C, OK, headers=AUTH)
    check(status == 200 and body["choices"][0]["text"], f"good request after bad: {body}")
    status, _, _ = srv.request("GET", "/health")  # no key needed outside /v1
    check(status == 200, "health needs no key")


def test_of(srv, name, body):
    """A test function for harness.run named test_<name>: body(srv), then a normal request."""
    def test():
        body(srv)
        serves_normally(srv)
    test.__name__ = f"test_{name}"
    return test


def tests_on(srv):
    """One test per row, then the raw-HTTP cases and the checks after every bad input."""
    tests = [test_of(srv, row.name, lambda s, row=row: expect_error(s, row)) for row in ROWS]
    tests += [test_of(srv, "body_over_16_mib_is_413", check_body_too_large),
              test_of(srv, "oversized_body_checks_key_and_path_first",
                      check_oversized_body_checks_key_and_path_first),
              test_of(srv, "header_over_64_kib_is_431", check_header_too_large),
              test_of(srv, "header_limit_counts_every_byte_however_it_arrives",
                      check_header_limit_counts_every_byte_however_it_arrives),
              test_of(srv, "body_without_content_length_is_answered",
                      check_body_without_length_is_answered),
              test_of(srv, "pipelined_requests_are_both_answered",
                      check_pipelined_requests_are_both_answered),
              test_of(srv, "health_and_logit_bias_after_every_bad_input",
                      check_health_and_logit_bias_after_every_bad_input)]
    names = [t.__name__ for t in tests]
    check(len(set(names)) == len(names), f"duplicate test names: {names}")
    return tests


if __name__ == "__main__":
    with Server(STORIES_GGUF, "--api-key", KEY, "--max-model-len", "256") as server:
        run(tests_on(server))
