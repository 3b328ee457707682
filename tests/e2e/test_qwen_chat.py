"""Qwen3 chat end to end on tiny-qwen3 (random weights: the text is gibberish, so the checks are
on structure): the reasoning/content split decided from the prompt's tail with thinking on/off
(Qwen3 template) and with an opened block (Qwen3.5 template), usage counts, /tokenize and
/detokenize, the tool round trip, 400s for bad messages, and the real `openai` npm client."""
import os
import subprocess

from harness import MODELS, Server, check, run

HERE = os.path.dirname(os.path.abspath(__file__))
QWEN3 = os.path.join(MODELS, "tiny-qwen3")
QWEN35_TEMPLATE = os.path.join(MODELS, "chat-templates", "Qwen3.5-4B.jinja")
FLAGS = ["--reasoning-parser", "qwen3", "--enable-auto-tool-choice", "--tool-call-parser",
         "hermes", "--max-model-len", "512"]
USER = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
OFF = {"enable_thinking": False}


def chat(srv, **body):
    body.setdefault("messages", USER)
    body.setdefault("max_tokens", 12)
    body.setdefault("temperature", 0)
    return srv.post_json("/v1/chat/completions", body)


def streamed(srv, **body):
    body.setdefault("messages", USER)
    body.setdefault("max_tokens", 12)
    body.setdefault("temperature", 0)
    body["stream"] = True
    body["stream_options"] = {"include_usage": True}
    status, events, done = srv.stream("/v1/chat/completions", body)
    check(status == 200 and done, f"stream failed: {status} {events[:1]}")
    reasoning, content, usage = "", "", None
    for e in events:
        usage = e.get("usage") or usage
        for c in e["choices"]:
            d = c["delta"]
            check(not (d.get("reasoning_content") and d.get("content")),
                  f"a delta carries both: {d}")
            reasoning += d.get("reasoning_content") or ""
            content += d.get("content") or ""
    return reasoning, content, usage


def test_thinking_off_is_all_content():
    with Server(QWEN3, *FLAGS) as srv:
        status, tok = srv.post_json("/tokenize", {"messages": USER, "chat_template_kwargs": OFF})
        check(status == 200, tok)
        check(tok["prompt"].endswith("<think>\n\n</think>\n\n"), repr(tok["prompt"][-40:]))
        status, body = chat(srv, chat_template_kwargs=OFF)
        check(status == 200, body)
        msg = body["choices"][0]["message"]
        check(msg["reasoning_content"] is None, f"reasoning with thinking off: {msg}")
        check(isinstance(msg["content"], str) and msg["content"], msg)
        check(body["usage"]["prompt_tokens"] == tok["count"], (body["usage"], tok["count"]))
        check(body["usage"]["completion_tokens"] == 12, body["usage"])
        reasoning, content, usage = streamed(srv, chat_template_kwargs=OFF)
        check(reasoning == "" and content == msg["content"], (reasoning, content, msg))
        check(usage["completion_tokens"] == 12 and usage["prompt_tokens"] == tok["count"], usage)
        # A top-level enable_thinking is not a template kwarg: ignored, the prompt keeps thinking on.
        status, tok2 = srv.post_json("/tokenize", {"messages": USER, "enable_thinking": False})
        check(status == 200 and tok2["prompt"].endswith("<|im_start|>assistant\n"), tok2)


def test_default_kwargs_flag_and_request_override():
    with Server(QWEN3, *FLAGS, "--default-chat-template-kwargs",
                '{"enable_thinking": false}') as srv:
        _, off = srv.post_json("/tokenize", {"messages": USER})
        check(off["prompt"].endswith("</think>\n\n"), repr(off["prompt"][-30:]))
        _, on = srv.post_json("/tokenize", {"messages": USER,
                                            "chat_template_kwargs": {"enable_thinking": True}})
        check(on["prompt"].endswith("<|im_start|>assistant\n"), repr(on["prompt"][-30:]))


def test_thinking_on_plain_and_stream_agree():
    with Server(QWEN3, *FLAGS) as srv:
        status, body = chat(srv)
        check(status == 200, body)
        msg = body["choices"][0]["message"]
        check("reasoning_content" in msg, msg)
        reasoning, content, _ = streamed(srv)
        check((reasoning, content) == (msg["reasoning_content"] or "", msg["content"] or ""),
              ((reasoning, content), msg))


def test_open_think_prompt_starts_in_reasoning():
    # Qwen3.5's template opens <think> at the end of the prompt when thinking is on.
    with Server(QWEN3, *FLAGS, "--chat-template", QWEN35_TEMPLATE) as srv:
        _, tok = srv.post_json("/tokenize", {"messages": USER})
        check(tok["prompt"].endswith("<think>\n"), repr(tok["prompt"][-30:]))
        status, body = chat(srv, skip_special_tokens=True)
        check(status == 200, body)
        msg = body["choices"][0]["message"]
        text = (msg["reasoning_content"] or "") + (msg["content"] or "")
        check(text, msg)
        if "</think>" not in text:  # random weights: almost surely never closes the block
            check(msg["content"] is None and msg["reasoning_content"], msg)
        reasoning, content, _ = streamed(srv)
        check((reasoning, content) == (msg["reasoning_content"] or "", msg["content"] or ""),
              ((reasoning, content), msg))
        _, off = srv.post_json("/tokenize", {"messages": USER, "chat_template_kwargs": OFF})
        check(off["prompt"].endswith("</think>\n\n"), repr(off["prompt"][-30:]))
        _, body = chat(srv, chat_template_kwargs=OFF)
        check(body["choices"][0]["message"]["reasoning_content"] is None, body)
        # A template that raises is a 400 with its message; the server stays up.
        status, body = chat(srv, messages=USER + [{"role": "system", "content": "late"}])
        check(status == 400 and "System message must be at the beginning" in
              body["error"]["message"], body)
        status, body = chat(srv)
        check(status == 200, body)


def test_tool_round_trip_and_tokenize():
    with Server(QWEN3, *FLAGS) as srv:
        status, body = chat(srv, tools=TOOLS, chat_template_kwargs=OFF)
        check(status == 200, body)
        check(body["choices"][0]["finish_reason"] in ("length", "stop", "tool_calls"), body)
        messages = USER + [
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "chatcmpl-tool-1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "chatcmpl-tool-1", "content": "sunny, 21 C"}]
        status, tok = srv.post_json("/tokenize", {"messages": messages, "tools": TOOLS})
        check(status == 200, tok)
        check('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
              in tok["prompt"], tok["prompt"])
        check("<tool_response>\nsunny, 21 C\n</tool_response>" in tok["prompt"], tok["prompt"])
        check('"properties": {"city": {"type": "string"}}, "required": ["city"]' in tok["prompt"],
              tok["prompt"])
        status, body = chat(srv, messages=messages, tools=TOOLS)
        check(status == 200, body)
        check(body["usage"]["prompt_tokens"] == tok["count"], (body["usage"], tok["count"]))
        status, detok = srv.post_json("/detokenize", {"tokens": tok["tokens"]})
        check(status == 200 and detok["prompt"] == tok["prompt"], detok)


def test_bad_requests_are_400s_and_the_server_stays_up():
    with Server(QWEN3, *FLAGS) as srv:
        for bad, what in [
            ({"messages": [{"role": "wizard", "content": "x"}]}, "wizard"),
            ({"messages": [{"role": "user", "content": 7}]}, "content"),
            ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "content"),
            ({"messages": []}, "messages"),
            ({"messages": USER, "tool_choice": "required"}, "tools"),
            ({"messages": USER, "tools": TOOLS,
              "tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice")]:
            status, body = chat(srv, **bad)
            check(status == 400, f"{bad} -> {status} {body}")
            check(what in body["error"]["message"] or what in str(body["error"]["param"]),
                  f"{bad} -> {body}")
        status, body = chat(srv)
        check(status == 200, body)
    with Server(QWEN3, "--max-model-len", "512") as srv:  # no --enable-auto-tool-choice
        status, body = chat(srv, tools=TOOLS)
        check(status == 400 and "--enable-auto-tool-choice" in body["error"]["message"], body)


def test_openai_npm_client_thinking_and_tools():
    with Server(QWEN3, *FLAGS, "--served-model-name", "qwen") as srv:
        p = subprocess.run(["node", os.path.join(HERE, "node/qwen_chat_client.mjs")],
                           cwd=os.path.join(HERE, "node"), capture_output=True, text=True,
                           timeout=300,
                           env={**os.environ, "BASE_URL": f"http://127.0.0.1:{srv.port}/v1",
                                "MODEL": "qwen"})
        check(p.returncode == 0, f"node client failed:\n{p.stdout}\n{p.stderr}")
        check("qwen-chat-ok" in p.stdout, p.stdout)


if __name__ == "__main__":
    run([test_thinking_off_is_all_content, test_default_kwargs_flag_and_request_override,
         test_thinking_on_plain_and_stream_agree, test_open_think_prompt_starts_in_reasoning,
         test_tool_round_trip_and_tokenize, test_bad_requests_are_400s_and_the_server_stays_up,
         test_openai_npm_client_thinking_and_tools])
