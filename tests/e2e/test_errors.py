"""Every bad input gets its 4xx in the OpenAI error shape, and the server stays up."""
from harness import STORIES_GGUF, Server, check, run

KEY = "sk-test-123"
AUTH = {"Authorization": f"Bearer {KEY}"}


def expect_error(srv, status_want, method, path, body=None, raw=None, headers=None, param=None,
                 needles=()):
    hdrs = dict(AUTH)
    hdrs.update(headers or {})
    status, _, out = srv.request(method, path, body=body, raw=raw, headers=hdrs)
    check(status == status_want, f"{method} {path} {body or raw!r}: status {status}, want "
          f"{status_want}: {out[:300]!r}")
    import json
    err = json.loads(out)["error"]
    for field in ("message", "type", "param", "code"):
        check(field in err, f"error lacks {field}: {err}")
    check(err["message"], "empty error message")
    if param is not None:
        check(err["param"] == param, f"param {err['param']!r}, want {param!r}: {err}")
    for n in needles:
        check(n in err["message"], f"{n!r} not in {err['message']!r}")
    return err


def check_body_too_large(srv, path):
    """A 17 MiB body is refused with 413 as soon as its Content-Length is read (the server may
    close before the client has sent it all, so this speaks raw HTTP)."""
    import json
    import socket
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        size = 17 << 20
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  f"Authorization: Bearer {KEY}\r\nContent-Length: {size}\r\n\r\n".encode())
        try:
            s.sendall(b"a" * (1 << 20))
        except OSError:
            pass  # the server already answered and closed
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) == 0:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    check(head.startswith(b"HTTP/1.1 413"), f"oversized body: {head[:100]!r}")
    check("error" in json.loads(body[body.index(b"{"):body.rindex(b"}") + 1]), f"body {body[:200]!r}")


def send_raw(srv, payload):
    """Writes `payload` on one new connection and returns every byte until the server closes."""
    import socket
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(payload)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def check_body_without_length_is_answered(srv, path):
    """A POST whose body comes without Content-Length: HTTP/1.1 reads an empty body, then the
    body's bytes as a malformed next request. Both get their 400, in order, then the close."""
    data = send_raw(srv, f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Authorization: Bearer {KEY}\r\n\r\n".encode() + b'{"prompt": "a"}')
    check(data.count(b"HTTP/1.1 400") == 2, f"no-length body: {data[:400]!r}")
    check(b"request body is empty" in data and b"malformed HTTP request" in data, f"{data!r}")


def check_pipelined_requests_are_both_answered(srv, path):
    """A generation and a second request in one write (HTTP/1.1 pipelining): both answered, in
    order. The session used to end with the generation (nothing held it while the second
    request waited), answering neither."""
    body = b'{"prompt": "Once", "max_tokens": 8}'
    data = send_raw(srv, f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                         f"Authorization: Bearer {KEY}\r\nContent-Length: {len(body)}\r\n\r\n"
                         .encode() + body
                         + b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    check(data.count(b"HTTP/1.1 200") == 2 and b'"choices"' in data, f"pipelined: {data[:300]!r}")


def test_bad_inputs_get_4xx_and_server_stays_up():
    with Server(STORIES_GGUF, "--api-key", KEY, "--max-model-len", "256") as srv:
        c = "/v1/completions"
        ok = {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 4}
        expect_error(srv, 400, "POST", c, raw=b"{not json")
        expect_error(srv, 400, "POST", c, raw=b'{"model": "x", "prompt": "\xff\xfe"}')
        expect_error(srv, 400, "POST", c, {**ok, "max_tokens": "many"}, param="max_tokens")
        expect_error(srv, 400, "POST", c, {**ok, "temperature": -1}, param="temperature")
        expect_error(srv, 400, "POST", c, {**ok, "top_p": 1.5}, param="top_p")
        expect_error(srv, 400, "POST", c, {**ok, "n": 0}, param="n")
        expect_error(srv, 400, "POST", c, {**ok, "prompt": 5}, param="prompt")
        expect_error(srv, 404, "POST", c, {**ok, "model": "no-such-model"})
        # "Once" is [BOS, Once]: 2 + 255 = 257 tokens > --max-model-len 256.
        expect_error(srv, 400, "POST", c, {**ok, "max_tokens": 255}, needles=("256", "257"))
        expect_error(srv, 401, "POST", c, ok, headers={"Authorization": ""})
        expect_error(srv, 401, "POST", c, ok, headers={"Authorization": "Bearer wrong"})
        expect_error(srv, 405, "GET", c)
        expect_error(srv, 404, "GET", "/v1/nothing-here")
        check_body_too_large(srv, c)
        # Numbers beyond double range used to abort the process (nlohmann throws even with
        # exceptions off): every JSON entry point must answer 400 instead.
        expect_error(srv, 400, "POST", c, raw=b'{"prompt": "a", "temperature": 1e400}')
        expect_error(srv, 400, "POST", c, raw=b'{"prompt": "a", "unknown": -1e999}')
        expect_error(srv, 400, "POST", "/v1/chat/completions",
                     raw=b'{"messages": [{"role": "user", "content": "hi"}], "t": 1e400}')
        expect_error(srv, 400, "POST", "/tokenize", raw=b'{"prompt": "a", "x": 1e400}')
        expect_error(srv, 400, "POST", "/v1/chat/completions",
                     {"model": STORIES_GGUF, "messages": [{"role": "user", "content": "hi"}]},
                     needles=("chat template",))
        # Sampling fields tandem cannot honour or that name tokens outside the vocabulary (512)
        # are refused by name, never silently ignored.
        expect_error(srv, 400, "POST", c, {**ok, "stop_token_ids": [512]}, param="stop_token_ids",
                     needles=("512", "[0, 512)"))
        expect_error(srv, 400, "POST", c, {**ok, "stop_token_ids": [2 ** 64 - 1]},
                     param="stop_token_ids", needles=("beyond 2147483646",))  # never wrapped
        expect_error(srv, 400, "POST", c, {**ok, "stop_token_ids": [1.5]},
                     param="stop_token_ids", needles=("found a number",))
        expect_error(srv, 400, "POST", c, {**ok, "response_format": {"type": "TEXT"}},
                     param="response_format", needles=("unknown",))
        expect_error(srv, 400, "POST", c, {**ok, "logit_bias": {"600": 1}}, param="logit_bias",
                     needles=("600",))
        expect_error(srv, 400, "POST", c, {**ok, "logit_bias": {"5": 101}}, param="logit_bias")
        expect_error(srv, 400, "POST", c, {**ok, "logit_bias": {"five": 1}}, param="logit_bias")
        expect_error(srv, 400, "POST", c, {**ok, "logit_bias": [1]}, param="logit_bias",
                     needles=("found an array",))
        expect_error(srv, 400, "POST", c, {**ok, "response_format": {"type": "structural_tag"}},
                     param="response_format", needles=("structural_tag", "not supported"))
        expect_error(srv, 400, "POST", "/v1/chat/completions",
                     {"messages": [{"role": "user", "content": "hi"}],
                      "response_format": {"type": "json_schema", "json_schema": {}}},
                     param="response_format")
        check_body_without_length_is_answered(srv, c)
        check_pipelined_requests_are_both_answered(srv, c)
        status, _, _ = srv.request("GET", "/health")
        check(status == 200, f"/health {status} after bad inputs")
        # logit_bias is applied (greedy included): +100 on token 5 makes it every token.
        status, body = srv.post_json(c, {**ok, "temperature": 0, "return_token_ids": True,
                                         "logit_bias": {"5": 100}}, headers=AUTH)
        check(status == 200 and body["choices"][0]["token_ids"] == [5] * 4, f"logit_bias: {body}")
        status, body = srv.post_json(c, ok, headers=AUTH)
        check(status == 200 and body["choices"][0]["text"], f"good request after bad: {body}")
        status, _, _ = srv.request("GET", "/health")  # no key needed outside /v1
        check(status == 200, "health needs no key")


if __name__ == "__main__":
    run([test_bad_inputs_get_4xx_and_server_stays_up])
