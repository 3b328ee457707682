"""Anthropic's Messages API (/v1/messages, /v1/messages/count_tokens) end to end, raw HTTP.

stories260k (a trained model, Qwen2.5 template) for the text path: the reply's shape, its greedy
text equal to /v1/chat/completions on the same conversation, the streamed events in Anthropic's
order with the same text, stop_sequences and max_tokens as stop reasons, count_tokens equal to
the chat prompt's tokens, errors in Anthropic's shape, x-api-key. tiny-qwen3 (random weights) for
tools and thinking: tool_choice any / tool give tool_use blocks whose input validates against
the input_schema (only the grammar can make that so), tool_use / tool_result history renders as
chat's tool_calls / tool messages, thinking blocks equal chat's reasoning."""
import http.client
import json
import os

import jsonschema

from harness import MODELS, STORIES_GGUF, Server, check, run

TEMPLATE = os.path.join(MODELS, "chat-templates", "Qwen-Qwen2.5-7B-Instruct.jinja")
QWEN3 = os.path.join(MODELS, "tiny-qwen3")
QWEN35_TEMPLATE = os.path.join(MODELS, "chat-templates", "Qwen3.5-4B.jinja")
STORIES = [STORIES_GGUF, "--chat-template", TEMPLATE, "--served-model-name", "stories"]
SYSTEM = "You tell short stories."
USER = [{"role": "user", "content": "Once upon a time"}]
CHAT_MESSAGES = [{"role": "system", "content": SYSTEM}] + USER
WEATHER_SCHEMA = {"type": "object",
                  "properties": {"city": {"type": "string", "maxLength": 12},
                                 "days": {"type": "integer", "minimum": 1, "maximum": 7}},
                  "required": ["city", "days"], "additionalProperties": False}
TIME_SCHEMA = {"type": "object", "properties": {"zone": {"type": "string", "maxLength": 8}},
               "required": ["zone"], "additionalProperties": False}
TOOLS = [{"name": "get_weather", "description": "Weather of a city",
          "input_schema": WEATHER_SCHEMA},
         {"name": "get_time", "description": "Time in a zone", "input_schema": TIME_SCHEMA}]
SCHEMAS = {"get_weather": WEATHER_SCHEMA, "get_time": TIME_SCHEMA}
EVENT_TYPES = {"message_start", "content_block_start", "ping", "content_block_delta",
               "content_block_stop", "message_delta", "message_stop"}


def messages(srv, headers=None, **body):
    body.setdefault("model", srv.model_name)
    body.setdefault("messages", USER)
    body.setdefault("max_tokens", 24)
    body.setdefault("temperature", 0)
    return srv.post_json("/v1/messages", body, headers)


def chat(srv, **body):
    body.setdefault("messages", CHAT_MESSAGES)
    body.setdefault("max_tokens", 24)
    body.setdefault("temperature", 0)
    return srv.post_json("/v1/chat/completions", body)


def sse(srv, body, path="/v1/messages"):
    """POSTs `body` with stream true; returns (status, content type, [(event name, data)])."""
    body = {"model": srv.model_name, "messages": USER, "max_tokens": 24, "temperature": 0,
            **body, "stream": True}
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    conn.request("POST", path, body=json.dumps(body).encode(),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    events, name = [], None
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: "):
            events.append((name, json.loads(line[len("data: "):])))
            name = None
    conn.close()
    return resp.status, resp.getheader("Content-Type"), events


def stream_blocks(events):
    """Checks Anthropic's event order and returns (message_start, blocks, message_delta); each
    block is its content_block_start object with the deltas applied."""
    names = [n for n, _ in events]
    check(all(n == d["type"] and n in EVENT_TYPES for n, d in events), names)
    check(names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"], names)
    check(names.count("ping") == 1, names)
    if "content_block_start" in names:
        check(names.index("ping") == names.index("content_block_start") + 1, names)
    blocks, open_index = [], None
    for name, data in events[1:-2]:
        if name == "content_block_start":
            check(open_index is None and data["index"] == len(blocks), (open_index, data))
            open_index = data["index"]
            blocks.append(dict(data["content_block"], partial_json=""))
        elif name == "content_block_delta":
            check(data["index"] == open_index, (open_index, data))
            delta, block = data["delta"], blocks[open_index]
            kind = {"text_delta": "text", "thinking_delta": "thinking",
                    "input_json_delta": "partial_json", "signature_delta": "signature"}
            check(delta["type"] in kind, delta)
            block[kind[delta["type"]]] += delta[kind[delta["type"]]]
        elif name == "content_block_stop":
            check(data["index"] == open_index, (open_index, data))
            open_index = None
    check(open_index is None, "a block was never stopped")
    for block in blocks:
        if block["type"] == "tool_use":
            check(block["input"] == {}, block)
            block["input"] = json.loads(block["partial_json"])
        del block["partial_json"]
    return events[0][1]["message"], blocks, events[-2][1]


def without_ids(content):
    return [{k: v for k, v in b.items() if k not in ("id", "signature")} for b in content]


def stories_server(*extra):
    srv = Server(*STORIES, *extra)
    srv.model_name = "stories"
    return srv


def qwen_server(*extra):
    srv = Server(QWEN3, "--served-model-name", "qwen", "--max-model-len", "1024", *extra)
    srv.model_name = "qwen"
    return srv


def test_reply_shape_and_greedy_text_equal_chat():
    with stories_server() as srv:
        status, ref = chat(srv)
        check(status == 200, ref)
        for system in (SYSTEM, [{"type": "text", "text": "You tell short "},
                                {"type": "text", "text": "stories."}]):
            status, body = messages(srv, system=system)
            check(status == 200, body)
            check(body["id"].startswith("msg_") and body["type"] == "message" and
                  body["role"] == "assistant" and body["model"] == "stories", body)
            text = ref["choices"][0]["message"]["content"]
            check(body["content"] == [{"type": "text", "text": text}], (body, text))
            check(body["stop_reason"] == "max_tokens" and body["stop_sequence"] is None, body)
            check(body["usage"] == {"input_tokens": ref["usage"]["prompt_tokens"],
                                    "output_tokens": 24}, (body["usage"], ref["usage"]))
        # Content as text blocks is the same conversation.
        status, body = messages(srv, system=SYSTEM, messages=[
            {"role": "user", "content": [{"type": "text", "text": "Once upon a time"}]}])
        check(status == 200 and body["content"][0]["text"] == text, body)


def test_stream_events_in_order_and_text_equal_whole():
    with stories_server() as srv:
        status, whole = messages(srv, system=SYSTEM)
        check(status == 200, whole)
        status, content_type, events = sse(srv, {"system": SYSTEM})
        check(status == 200 and content_type.startswith("text/event-stream"), content_type)
        start, blocks, delta = stream_blocks(events)
        check(start["content"] == [] and start["stop_reason"] is None and
              start["usage"] == {"input_tokens": whole["usage"]["input_tokens"],
                                 "output_tokens": 0} and start["id"].startswith("msg_"), start)
        check(blocks == whole["content"], (blocks, whole["content"]))
        check(delta["delta"] == {"stop_reason": "max_tokens", "stop_sequence": None}, delta)
        check(delta["usage"]["output_tokens"] == 24, delta)


def test_stop_sequences_and_max_tokens_are_stop_reasons():
    with stories_server() as srv:
        status, whole = messages(srv, max_tokens=40)
        check(status == 200, whole)
        text = whole["content"][0]["text"]
        at = len(text) // 2
        while text.find(text[at:at + 4]) != at or not text[at:at + 4].strip():
            at += 1
        stop = text[at:at + 4]
        status, body = messages(srv, max_tokens=40, stop_sequences=["never-seen", stop])
        check(status == 200, body)
        check(body["stop_reason"] == "stop_sequence" and body["stop_sequence"] == stop, body)
        check(body["content"] == [{"type": "text", "text": text[:at]}], (body, text[:at]))
        _, _, events = sse(srv, {"max_tokens": 40, "stop_sequences": [stop]})
        _, blocks, delta = stream_blocks(events)
        check(delta["delta"] == {"stop_reason": "stop_sequence", "stop_sequence": stop}, delta)
        check(blocks == body["content"], (blocks, body["content"]))
        status, body = messages(srv, max_tokens=3)
        check(status == 200 and body["stop_reason"] == "max_tokens", body)
        check(body["usage"]["output_tokens"] == 3, body)


def test_count_tokens_equals_the_chat_prompt():
    with stories_server() as srv:
        status, ref = chat(srv, max_tokens=1)
        check(status == 200, ref)
        status, count = srv.post_json("/v1/messages/count_tokens",
                                      {"model": "stories", "system": SYSTEM, "messages": USER})
        check(status == 200 and count == {"input_tokens": ref["usage"]["prompt_tokens"]},
              (count, ref["usage"]))
        # Tools are part of the prompt (chat with tool_choice none renders them too).
        openai_tools = [{"type": "function", "function": {
            "name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
            for t in TOOLS]
        status, ref = chat(srv, max_tokens=1, tools=openai_tools, tool_choice="none")
        check(status == 200, ref)
        status, count = srv.post_json("/v1/messages/count_tokens", {
            "model": "stories", "system": SYSTEM, "messages": USER, "tools": TOOLS})
        check(status == 200 and count == {"input_tokens": ref["usage"]["prompt_tokens"]},
              (count, ref["usage"]))
        status, body = messages(srv, system=SYSTEM, tools=TOOLS, tool_choice={"type": "none"},
                                max_tokens=1)
        check(status == 200 and body["usage"]["input_tokens"] == count["input_tokens"], body)


def check_error(status, body, want_status, want_type, text):
    check(status == want_status, (status, body))
    check(body.get("type") == "error" and body["error"]["type"] == want_type and
          text in body["error"]["message"], body)


def test_errors_in_anthropic_shape():
    with stories_server() as srv:
        for bad, text in [
            ({"max_tokens": None}, "max_tokens"),
            ({"max_tokens": 0}, "max_tokens"),
            ({"messages": [{"role": "robot", "content": "x"}]}, "robot"),
            ({"messages": [{"role": "user", "content": [{"type": "image", "source": {
                "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]}]},
             "image"),
            ({"messages": []}, "messages"),
            ({"messages": [{"role": "user", "content": [{"type": "video"}]}]}, "video"),
            ({"tool_choice": {"type": "any"}}, "tools"),
            ({"tools": [{"name": "x"}]}, "input_schema"),
            ({"stop_sequences": "END"}, "stop_sequences"),
            ({"temperature": -1}, "temperature")]:
            body = {k: v for k, v in bad.items() if v is not None}
            full = {"model": "stories", "messages": USER, "max_tokens": 8, **body}
            if bad.get("max_tokens", 1) is None:
                del full["max_tokens"]
            status, answer = srv.post_json("/v1/messages", full)
            check_error(status, answer, 400, "invalid_request_error", text)
        check_error(*messages(srv, model="claude-nope"), 404, "not_found_error", "claude-nope")
        status, _, raw = srv.request("POST", "/v1/messages", raw=b"{not json")
        check_error(status, json.loads(raw), 400, "invalid_request_error", "")
        status, _, raw = srv.request("GET", "/v1/messages")
        check_error(status, json.loads(raw), 405, "invalid_request_error", "POST")
        status, count = srv.post_json("/v1/messages/count_tokens",
                                      {"messages": [{"role": "robot", "content": "x"}]})
        check_error(status, count, 400, "invalid_request_error", "robot")
        # The tools need --enable-auto-tool-choice when tool_choice is auto (the default).
        check_error(*messages(srv, tools=TOOLS), 400, "invalid_request_error",
                    "--enable-auto-tool-choice")
        status, body = messages(srv)
        check(status == 200, body)


def test_x_api_key_is_accepted_like_bearer():
    with stories_server("--api-key", "sk-test") as srv:
        check_error(*messages(srv), 401, "authentication_error", "x-api-key")
        check_error(*messages(srv, headers={"x-api-key": "sk-wrong"}), 401,
                    "authentication_error", "API key")
        status, body = messages(srv, headers={"x-api-key": "sk-test"})
        check(status == 200 and body["type"] == "message", body)
        status, body = messages(srv, headers={"Authorization": "Bearer sk-test"})
        check(status == 200 and body["type"] == "message", body)
        status, count = srv.post_json("/v1/messages/count_tokens",
                                      {"model": "stories", "messages": USER},
                                      headers={"x-api-key": "sk-test"})
        check(status == 200 and count["input_tokens"] > 0, count)
        status, body = srv.post_json("/v1/chat/completions",
                                     {"messages": USER, "max_tokens": 2},
                                     headers={"x-api-key": "sk-test"})
        check(status == 200, body)
        status, body = srv.post_json("/v1/chat/completions", {"messages": USER, "max_tokens": 2})
        check(status == 401 and body["error"]["type"] == "AuthenticationError", body)


def check_tool_uses(content, names):
    uses = [b for b in content if b["type"] == "tool_use"]
    check(uses and all(b["name"] in names for b in uses), content)
    for b in uses:
        jsonschema.validate(b["input"], SCHEMAS[b["name"]])
        check(b["id"].startswith("toolu_"), b)
    return uses


def test_tool_choice_any_and_tool_give_valid_tool_use():
    with qwen_server() as srv:
        off = {"chat_template_kwargs": {"enable_thinking": False}}
        status, body = messages(srv, tools=TOOLS, tool_choice={"type": "any"}, max_tokens=300,
                                **off)
        check(status == 200 and body["stop_reason"] == "tool_use", body)
        check_tool_uses(body["content"], SCHEMAS)
        # Sampled (no seed in this API): one call at most, so max_tokens cannot cut the array.
        for _ in range(5):
            status, body = messages(srv, tools=TOOLS, max_tokens=300, temperature=1, **off,
                                    tool_choice={"type": "any", "disable_parallel_tool_use": True})
            check(status == 200 and body["stop_reason"] == "tool_use", body)
            check(len(check_tool_uses(body["content"], SCHEMAS)) == 1, body)
        status, whole = messages(srv, tools=TOOLS, max_tokens=300, **off,
                                 tool_choice={"type": "tool", "name": "get_time"})
        check(status == 200 and whole["stop_reason"] == "tool_use", whole)
        check(len(check_tool_uses(whole["content"], {"get_time"})) == 1, whole)
        _, _, events = sse(srv, {"tools": TOOLS, "max_tokens": 300, **off,
                                 "tool_choice": {"type": "tool", "name": "get_time"}})
        _, blocks, delta = stream_blocks(events)
        check(without_ids(blocks) == without_ids(whole["content"]), (blocks, whole["content"]))
        check(delta["delta"]["stop_reason"] == "tool_use", delta)
        # auto (the default with tools) needs the tool-call parser flags, as vLLM.
        check_error(*messages(srv, tools=TOOLS), 400, "invalid_request_error",
                    "--enable-auto-tool-choice")


def test_tool_history_renders_as_chat_tool_calls():
    flags = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
    with qwen_server(*flags) as srv:
        history = USER + [
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                 "input": {"city": "Paris", "days": 2}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False,
                 "content": [{"type": "text", "text": "sunny, 21 C"}]},
                {"type": "text", "text": "And tomorrow?"}]}]
        openai_history = USER + [
            {"role": "assistant", "content": "Let me look.", "tool_calls": [{
                "id": "toolu_1", "type": "function", "function": {
                    "name": "get_weather", "arguments": "{\"city\": \"Paris\", \"days\": 2}"}}]},
            {"role": "tool", "tool_call_id": "toolu_1", "content": "sunny, 21 C"},
            {"role": "user", "content": "And tomorrow?"}]
        openai_tools = [{"type": "function", "function": {
            "name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}
            for t in TOOLS]
        status, tok = srv.post_json("/tokenize", {"messages": openai_history,
                                                  "tools": openai_tools})
        check(status == 200 and "<tool_response>\nsunny, 21 C\n</tool_response>" in tok["prompt"],
              tok)
        status, count = srv.post_json("/v1/messages/count_tokens",
                                      {"model": "qwen", "messages": history, "tools": TOOLS})
        check(status == 200 and count == {"input_tokens": tok["count"]}, (count, tok["count"]))
        status, body = messages(srv, messages=history, tools=TOOLS, max_tokens=16)
        check(status == 200 and body["usage"]["input_tokens"] == tok["count"], body)
        check(body["stop_reason"] in ("max_tokens", "end_turn", "tool_use"), body)


def test_thinking_blocks_equal_chat_reasoning():
    # Qwen3.5's template opens <think> when thinking is on: the reply starts as reasoning.
    with qwen_server("--reasoning-parser", "qwen3", "--chat-template", QWEN35_TEMPLATE) as srv:
        for thinking, enabled in (({"type": "enabled", "budget_tokens": 1024}, True),
                                  ({"type": "disabled"}, False)):
            status, ref = chat(srv, messages=USER,
                               chat_template_kwargs={"enable_thinking": enabled})
            check(status == 200, ref)
            msg = ref["choices"][0]["message"]
            status, body = messages(srv, thinking=thinking)
            check(status == 200, body)
            want = ([{"type": "thinking", "thinking": msg["reasoning"]}] if msg["reasoning"]
                    else []) + ([{"type": "text", "text": msg["content"]}] if msg["content"]
                                else [])
            check(without_ids(body["content"]) == want, (body["content"], msg))
            check(any(b["type"] == "thinking" for b in want) == enabled, (enabled, msg))
            _, _, events = sse(srv, {"thinking": thinking})
            _, blocks, _ = stream_blocks(events)
            check(without_ids(blocks) == want, (blocks, want))
            check(all(b["signature"] for b in blocks if b["type"] == "thinking"), blocks)


if __name__ == "__main__":
    run([test_reply_shape_and_greedy_text_equal_chat,
         test_stream_events_in_order_and_text_equal_whole,
         test_stop_sequences_and_max_tokens_are_stop_reasons,
         test_count_tokens_equals_the_chat_prompt, test_errors_in_anthropic_shape,
         test_x_api_key_is_accepted_like_bearer,
         test_tool_choice_any_and_tool_give_valid_tool_use,
         test_tool_history_renders_as_chat_tool_calls,
         test_thinking_blocks_equal_chat_reasoning])
