"""Issue 31: hostile requests that took `tandem serve` down or let it grow without bound.

Each case is answered with a clear 4xx (or served) and the server goes on serving, its peak
RSS under 1 GiB above its idle size (release builds; ASan's quarantine keeps freed memory):
- GBNF grammars that chain 100,000 rules (a stack overflow killed the process) or 10,000;
- a JSON schema with 10,000 required properties (24 GB and the OOM killer), or 20,000;
- JSON objects of 262,145 keys (past the limit) and a logit_bias of 100,000 tokens (served);
- a JSON schema sent as a string nested past the limit;
- with --reasoning-parser, response_format holds whether or not the model thinks: never
  "stop" with content that is not the schema's;
- a request refused by its key or path is answered before its body is read (a 15 MB body
  declared, 100 bytes sent), and bodies past the server's byte budget get 503 at their header;
- /tokenize runs a request's chat_template only with the key.
"""
import json
import os
import socket
import time

from harness import ASAN, MODELS, Server, check, check_error, run, shared_server

QWEN3 = os.path.join(MODELS, "tiny-qwen3")
KEY = "sk-hostile"
AUTH = {"Authorization": f"Bearer {KEY}"}
FLAGS = ["--max-model-len", "512", "--api-key", KEY, "--reasoning-parser", "qwen3",
         "--trust-request-chat-template"]
USER = [{"role": "user", "content": "hi"}]


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def timed(what, fn):
    """Runs fn, prints how long it took (the closing note's figures), returns its result."""
    start = time.time()
    out = fn()
    print(f"  {what}: {time.time() - start:.2f} s", flush=True)
    return out


def check_serves(srv):
    status, out = srv.post_json("/v1/completions", {"prompt": "hi", "max_tokens": 2,
                                                    "temperature": 0}, headers=AUTH)
    check(status == 200 and out["usage"]["completion_tokens"] >= 1,
          f"the server no longer serves: {status} {str(out)[:200]}")


def chain_grammar(n):
    return "root ::= r0\n" + "".join(f'r{i} ::= "a" r{i + 1}\n' for i in range(n)) + \
        f'r{n} ::= "a"\n'


def required_schema(n):
    return {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(n)},
            "required": [f"p{i}" for i in range(n)]}


def structured_and_json_cases(srv):
    # Item 1: rule chains. 100,000 rules pass the automaton's state limit: a 400 naming it.
    status, out = timed("GBNF chain of 100,000 rules", lambda: srv.post_json(
        "/v1/completions", {"prompt": "a", "max_tokens": 2,
                            "structured_outputs": {"grammar": chain_grammar(100_000)}},
        headers=AUTH))
    check_error(status, out, 400, ["too large", "50000 states"], "100,000 rules")
    status, out = timed("GBNF chain of 10,000 rules", lambda: srv.post_json(
        "/v1/completions", {"prompt": "a", "max_tokens": 2, "temperature": 0,
                            "structured_outputs": {"grammar": chain_grammar(10_000)}},
        headers=AUTH))
    check(status == 200 and out["choices"][0]["text"] and set(out["choices"][0]["text"]) == {"a"},
          f"10,000 rules: {status} {str(out)[:300]}")
    # Item 2: many required properties, as response_format and as guided_json.
    for n in (10_000, 20_000):
        status, out = timed(f"JSON schema with {n} required properties", lambda: srv.post_json(
            "/v1/chat/completions",
            {"messages": USER, "max_tokens": 2, "response_format": {
                "type": "json_schema", "json_schema": {"name": "o", "schema": required_schema(n)}}},
            headers=AUTH))
        check_error(status, out, 400, ["too large"], f"{n} required properties")
    # An enum of 100,000 values (each checked against the ones before: 8 s; now a set).
    status, out = timed("enum of 100,000 values", lambda: srv.post_json(
        "/v1/chat/completions",
        {"messages": USER, "max_tokens": 2, "response_format": {
            "type": "json_schema", "json_schema": {"name": "e", "schema": {
                "enum": [f"value{i}" for i in range(100_000)]}}}}, headers=AUTH))
    check(status in (200, 400), f"enum of 100,000: {status} {str(out)[:300]}")
    # A schema sent as a string, nested past the limit: refused by the bounded parser.
    status, out = srv.post_json("/v1/completions", {
        "prompt": "a", "max_tokens": 2, "guided_json": '{"items":' * 200 + "{}" + "}" * 200},
        headers=AUTH)
    check_error(status, out, 400, ["deeper than 128"], "a schema string nested 200 deep")
    # Item 3: objects of many keys parse in linear time; past 262,144 keys, a 400.
    too_many = "{" + ",".join(f'"k{i}":0' for i in range(262_145)) + "}"
    raw = '{"prompt": "hi", "x": %s}' % too_many
    status, _, body = timed("262,145 keys on /tokenize (no key)", lambda: srv.request(
        "POST", "/tokenize", raw=raw.encode()))
    check_error(status, json.loads(body), 400, ["more than 262144 keys"], "262,145 keys")
    bias = {str(i): 0 for i in range(100_000)}
    status, out = timed("logit_bias of 100,000 tokens", lambda: srv.post_json(
        "/v1/completions", {"prompt": "hi", "max_tokens": 2, "logit_bias": bias}, headers=AUTH))
    check(status == 200, f"logit_bias of 100,000 tokens: {status} {str(out)[:300]}")


def test_structured_outputs_and_json_bombs_are_4xx_and_memory_stays_bounded():
    with Server(QWEN3, *FLAGS) as srv:
        check_serves(srv)
        idle_kib = rss_kib(srv.proc.pid, "VmRSS")
        structured_and_json_cases(srv)
        check_serves(srv)
        peak_kib = rss_kib(srv.proc.pid, "VmHWM")
        print(f"  RSS idle {idle_kib >> 10} MiB, peak {peak_kib >> 10} MiB", flush=True)
        if not ASAN:
            check(peak_kib - idle_kib < 1 << 20,
                  f"peak RSS {peak_kib >> 10} MiB is 1 GiB or more above idle {idle_kib >> 10} MiB")


def test_response_format_holds_when_the_model_reasons_or_not():
    # The second schema's JSON holds the think tags as text: the reasoning parser must not cut
    # them out of the content (the block opens the output or not at all).
    schemas = [
        ({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
         lambda v: isinstance(v, dict) and isinstance(v.get("a"), int)),
        ({"type": "object", "properties": {"<think>": {"const": "</think>"}},
          "required": ["<think>"]}, lambda v: v == {"<think>": "</think>"}),
    ]
    with shared_server(QWEN3, *FLAGS) as srv:
        finishes = []
        for schema, valid in schemas:
            for seed in range(4):
                status, out = srv.post_json("/v1/chat/completions", {
                    "messages": USER, "max_tokens": 40, "temperature": 1.0, "seed": seed,
                    "response_format": {"type": "json_schema",
                                        "json_schema": {"name": "o", "schema": schema}}},
                    headers=AUTH)
                check(status == 200, f"seed {seed}: {status} {str(out)[:300]}")
                choice = out["choices"][0]
                finishes.append(choice["finish_reason"])
                if choice["finish_reason"] == "stop":
                    content = choice["message"]["content"]
                    try:
                        value = json.loads(content)
                    except (TypeError, ValueError):
                        raise AssertionError(f"seed {seed}: 'stop' with content {content!r}")
                    check(valid(value), f"seed {seed}: 'stop' with {content!r}, not the schema's")
                else:
                    check(choice["finish_reason"] == "length", f"seed {seed}: {choice}")
        print(f"  finish reasons: {finishes}", flush=True)


def send_head(port, head):
    """Opens a connection, sends `head` (and nothing more); returns the socket."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(head.encode())
    return s


def read_status(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0


def test_refused_requests_are_answered_before_their_bodies_are_read():
    with shared_server(QWEN3, *FLAGS) as srv:
        big = 15_000_000
        cases = [
            ("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Authorization: Bearer wrong\r\nContent-Length: {big}\r\n\r\n", 401),
            ("POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Content-Length: {big}\r\n\r\n", 401),
            ("POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Content-Length: {big}\r\n\r\n", 404),
            ("PUT /tokenize HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
             f"Content-Length: {big}\r\n\r\n", 405),
        ]
        for head, want in cases:
            s = send_head(srv.port, head)
            s.sendall(b"{" + b" " * 99)  # 100 bytes of the 15 MB
            status = read_status(s)
            s.close()
            check(status == want, f"{head.splitlines()[0]}: status {status}, want {want}")
        # The byte budget: 128 MiB per client address. Eight 15 MB bodies declared (and not
        # sent) are held; the ninth is refused at its header.
        held = [send_head(srv.port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                          "Content-Type: application/json\r\nAuthorization: Bearer "
                          f"{KEY}\r\nContent-Length: {big}\r\n\r\n{{") for _ in range(8)]
        s = send_head(srv.port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                      f"application/json\r\nAuthorization: Bearer {KEY}\r\n"
                      f"Content-Length: {big}\r\n\r\n")
        check(read_status(s) == 503, "a ninth 15 MB body was not refused by the byte budget")
        s.close()
        for h in held:
            h.close()
        check_serves(srv)  # the budget is released when the connections go


def test_tokenize_runs_a_request_template_only_with_the_key():
    body = {"messages": USER, "chat_template": "{{ messages[0].content }}!"}
    with shared_server(QWEN3, *FLAGS) as srv:
        status, out = srv.post_json("/tokenize", body)
        check_error(status, out, 401, ["needs an API key"], "a request template without the key")
        status, out = srv.post_json("/tokenize", body, headers=AUTH)
        check(status == 200 and out["prompt"] == "hi!", f"with the key: {status} {out}")
        status, out = srv.post_json("/tokenize", {"prompt": "hi"})  # still open without one
        check(status == 200, f"/tokenize of a prompt without the key: {status} {out}")


if __name__ == "__main__":
    run([test_structured_outputs_and_json_bombs_are_4xx_and_memory_stays_bounded,
         test_response_format_holds_when_the_model_reasons_or_not,
         test_refused_requests_are_answered_before_their_bodies_are_read,
         test_tokenize_runs_a_request_template_only_with_the_key])
