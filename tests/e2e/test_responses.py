"""POST /v1/responses (the OpenAI Responses API) as vLLM serves it, on the chat machinery:
greedy text equal to /v1/chat/completions for the same messages, instructions as the system
message, max_output_tokens → status "incomplete", previous_response_id continuing a stored
conversation (checked against /tokenize of the messages it must render), unknown ids → 404,
GET/DELETE of stored responses, text.format json_schema validated by an independent validator
on random weights, the streamed event sequence, reasoning and function-call items, 400s that
name the Responses field, and the real `openai` npm client."""
import http.client
import json
import os
import subprocess

import jsonschema

from harness import MODELS, STORIES_GGUF, Server, check, run

HERE = os.path.dirname(os.path.abspath(__file__))
QWEN25_TEMPLATE = os.path.join(MODELS, "chat-templates", "Qwen-Qwen2.5-7B-Instruct.jinja")
QWEN35_TEMPLATE = os.path.join(MODELS, "chat-templates", "Qwen3.5-4B.jinja")
TINY_QWEN3 = os.path.join(MODELS, "tiny-qwen3")
STORIES = [STORIES_GGUF, "--chat-template", QWEN25_TEMPLATE]
TOOL_FLAGS = ["--enable-auto-tool-choice", "--tool-call-parser", "hermes", "--max-model-len", "512"]
QWEN_FLAGS = ["--reasoning-parser", "qwen3", *TOOL_FLAGS]
STORY = "Once upon a time"


def create(srv, **body):
    body.setdefault("temperature", 0)
    return srv.post_json("/v1/responses", body)


def created(srv, **body):
    status, out = create(srv, **body)
    check(status == 200, f"{status}: {out}")
    return out


def output_text(response):
    """What the SDKs' output_text computes: the output_text parts of the message items."""
    return "".join(part["text"] for item in response["output"] if item["type"] == "message"
                   for part in item["content"] if part["type"] == "output_text")


def chat(srv, messages, max_tokens, **extra):
    status, out = srv.post_json("/v1/chat/completions", {
        "messages": messages, "max_tokens": max_tokens, "temperature": 0, **extra})
    check(status == 200, f"chat {status}: {out}")
    return out


def prompt_tokens(srv, messages, **extra):
    """/tokenize of chat messages, encoded as chat encodes them (BOS added when the template
    does not write it; /tokenize's own default for messages is vLLM's add_special_tokens=false)."""
    status, out = srv.post_json("/tokenize", {"messages": messages, "add_special_tokens": True,
                                              **extra})
    check(status == 200, f"tokenize {status}: {out}")
    return out


def stream_events(srv, body):
    """POSTs with stream=true; returns the events, checking the SSE framing: every event is an
    `event: <type>` line and a `data: <json>` line whose `type` is that name; no [DONE]."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    conn.request("POST", "/v1/responses", body=json.dumps({**body, "stream": True}).encode(),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    raw = resp.read().decode()
    conn.close()
    check(resp.status == 200, f"stream {resp.status}: {raw}")
    check(resp.getheader("Content-Type", "").startswith("text/event-stream"), resp.getheaders())
    events = []
    for block in raw.split("\n\n"):
        if not block:
            continue
        lines = block.split("\n")
        check(len(lines) == 2 and lines[0].startswith("event: ") and
              lines[1].startswith("data: "), f"bad SSE block {block!r}")
        data = json.loads(lines[1][len("data: "):])
        check(data["type"] == lines[0][len("event: "):], f"event name != type: {block!r}")
        events.append(data)
    check([e["sequence_number"] for e in events] == list(range(len(events))),
          f"sequence numbers {[e['sequence_number'] for e in events]}")
    return events


def test_greedy_text_equals_chat_and_the_object_has_vllms_fields():
    messages = [{"role": "user", "content": STORY}]
    with Server(*STORIES) as srv:
        for max_tokens in (6, 40):
            ref = chat(srv, messages, max_tokens)
            r = created(srv, input=STORY, max_output_tokens=max_tokens)
            check(output_text(r) == ref["choices"][0]["message"]["content"],
                  f"{output_text(r)!r} != {ref['choices'][0]}")
            check(r["usage"]["input_tokens"] == ref["usage"]["prompt_tokens"] and
                  r["usage"]["output_tokens"] == ref["usage"]["completion_tokens"] and
                  r["usage"]["total_tokens"] == r["usage"]["input_tokens"] +
                  r["usage"]["output_tokens"] and
                  r["usage"]["output_tokens_details"] == {"reasoning_tokens": 0} and
                  "cached_tokens" in r["usage"]["input_tokens_details"], f"{r['usage']}")
            finished = ref["choices"][0]["finish_reason"] == "stop"
            check(r["status"] == ("completed" if finished else "incomplete"), f"{r}")
        check(r["id"].startswith("resp_") and len(r["id"]) == 5 + 32 and
              r["object"] == "response" and isinstance(r["created_at"], int) and
              r["error"] is None, f"{r}")
        item = r["output"][0]
        check(len(r["output"]) == 1 and item["type"] == "message" and
              item["id"].startswith("msg_") and item["role"] == "assistant" and
              item["content"][0]["type"] == "output_text" and
              item["content"][0]["annotations"] == [], f"{item}")
        echoed = {"temperature": 0.0, "top_p": 1.0, "max_output_tokens": 40, "tools": [],
                  "tool_choice": "auto", "parallel_tool_calls": True, "store": True,
                  "previous_response_id": None, "instructions": None, "metadata": None,
                  "text": {"format": {"type": "text"}}, "truncation": "disabled",
                  "background": False, "user": None, "reasoning": None}
        for key, value in echoed.items():
            check(r[key] == value, f"{key}: {r[key]!r} != {value!r}")
        check(r["model"] == created(srv, input="x", max_output_tokens=1)["model"], r["model"])
        # Echoed as sent.
        r = created(srv, input=STORY, max_output_tokens=2, metadata={"k": "v"}, user="u1",
                    text={"format": {"type": "text"}}, reasoning={"effort": "low"})
        check(r["metadata"] == {"k": "v"} and r["user"] == "u1" and
              r["reasoning"] == {"effort": "low"}, f"{r}")


def test_instructions_become_the_system_message_and_items_the_messages():
    with Server(*STORIES) as srv:
        system = [{"role": "system", "content": "Tell a story."},
                  {"role": "user", "content": STORY}]
        tok = prompt_tokens(srv, system)
        r = created(srv, input=STORY, instructions="Tell a story.", max_output_tokens=12)
        check(r["usage"]["input_tokens"] == tok["count"], f"{r['usage']} vs {tok['count']}")
        check(r["instructions"] == "Tell a story.", r["instructions"])
        check(output_text(r) == chat(srv, system, 12)["choices"][0]["message"]["content"],
              output_text(r))
        # Message items, text parts, roles and an assistant turn render as chat's messages do.
        items = [{"type": "message", "role": "developer",
                  "content": [{"type": "input_text", "text": "Be brief."}]},
                 {"role": "user", "content": [{"type": "input_text", "text": "Hi"},
                                              {"type": "input_text", "text": "there"}]},
                 {"type": "message", "role": "assistant",
                  "content": [{"type": "output_text", "text": "Hello."}]},
                 {"role": "user", "content": STORY}]
        chat_messages = [{"role": "developer", "content": "Be brief."},
                         {"role": "user", "content": "Hi\nthere"},
                         {"role": "assistant", "content": "Hello."},
                         {"role": "user", "content": STORY}]
        r = created(srv, input=items, max_output_tokens=8)
        check(r["usage"]["input_tokens"] == prompt_tokens(srv, chat_messages)["count"],
              f"{r['usage']}")
        check(output_text(r) == chat(srv, chat_messages, 8)["choices"][0]["message"]["content"],
              output_text(r))


def test_max_output_tokens_makes_the_response_incomplete():
    with Server(*STORIES, "--max-model-len", "256") as srv:
        r = created(srv, input=STORY, max_output_tokens=5)
        check(r["status"] == "incomplete" and
              r["incomplete_details"] == {"reason": "max_output_tokens"} and
              r["usage"]["output_tokens"] == 5 and r["output"][0]["status"] == "incomplete",
              f"{r}")
        # More than the context leaves is clamped to what it leaves (vLLM), not refused.
        r = created(srv, input=STORY, max_output_tokens=100000)
        check(r["max_output_tokens"] == 256 - r["usage"]["input_tokens"], f"{r}")
        check(r["usage"]["output_tokens"] <= r["max_output_tokens"], f"{r['usage']}")


def test_previous_response_id_continues_the_stored_conversation():
    with Server(*STORIES) as srv:
        r1 = created(srv, input=STORY, instructions="Old rules.", max_output_tokens=8)
        r2 = created(srv, input="And then?", previous_response_id=r1["id"],
                     max_output_tokens=8)
        check(r2["previous_response_id"] == r1["id"], r2)
        # The earlier turn (its input and output, not its instructions, as OpenAI) comes first.
        turns = [{"role": "user", "content": STORY},
                 {"role": "assistant", "content": output_text(r1)},
                 {"role": "user", "content": "And then?"}]
        tok = prompt_tokens(srv, turns)
        check(output_text(r1) in tok["prompt"] and "Old rules." not in tok["prompt"], tok["prompt"])
        check(r2["usage"]["input_tokens"] == tok["count"],
              f"{r2['usage']} vs {tok['count']}")
        check(output_text(r2) == chat(srv, turns, 8)["choices"][0]["message"]["content"],
              output_text(r2))
        # A third turn sees both; new instructions lead.
        r3 = created(srv, input="The end.", previous_response_id=r2["id"],
                     instructions="New rules.", max_output_tokens=4)
        turns3 = [{"role": "system", "content": "New rules."}, *turns,
                  {"role": "assistant", "content": output_text(r2)},
                  {"role": "user", "content": "The end."}]
        check(r3["usage"]["input_tokens"] == prompt_tokens(srv, turns3)["count"], r3["usage"])
        # Branching from r1 again ignores r2.
        r2b = created(srv, input="And then?", previous_response_id=r1["id"],
                      max_output_tokens=8)
        check(output_text(r2b) == output_text(r2) and
              r2b["usage"]["input_tokens"] == r2["usage"]["input_tokens"], r2b)


def test_unknown_or_unstored_ids_are_404_and_stored_ones_can_be_read_and_deleted():
    with Server(*STORIES) as srv:
        status, out = create(srv, input="Hi", previous_response_id="resp_nope")
        check(status == 404 and out["error"]["type"] == "NotFoundError" and
              out["error"]["code"] == 404 and out["error"]["param"] == "previous_response_id" and
              out["error"]["message"] == "Response with id 'resp_nope' not found.", f"{out}")
        unstored = created(srv, input="Hi", max_output_tokens=3, store=False)
        check(unstored["store"] is False, unstored)
        status, out = create(srv, input="Hi", previous_response_id=unstored["id"])
        check(status == 404 and unstored["id"] in out["error"]["message"], f"{status} {out}")
        status, _, body = srv.request("GET", f"/v1/responses/{unstored['id']}")
        check(status == 404, body)
        r = created(srv, input="Hi", max_output_tokens=3)
        status, _, body = srv.request("GET", f"/v1/responses/{r['id']}")
        check(status == 200 and json.loads(body) == r, f"{status} {body}")
        status, _, body = srv.request("DELETE", f"/v1/responses/{r['id']}")
        check(status == 200 and json.loads(body) == {"id": r["id"], "object": "response.deleted",
                                                     "deleted": True}, body)
        for method in ("GET", "DELETE"):
            status, _, body = srv.request(method, f"/v1/responses/{r['id']}")
            check(status == 404 and json.loads(body)["error"]["message"] ==
                  f"Response with id '{r['id']}' not found.", f"{method} {status} {body}")
        status, _, body = srv.request("PUT", "/v1/responses/resp_x")
        check(status == 405, body)


def test_stream_events_come_in_order_and_build_the_final_response():
    with Server(*STORIES) as srv:
        whole = created(srv, input=STORY, max_output_tokens=20)
        events = stream_events(srv, {"input": STORY, "max_output_tokens": 20, "temperature": 0})
        types = [e["type"] for e in events]
        deltas = [e for e in events if e["type"] == "response.output_text.delta"]
        check(types == ["response.created", "response.in_progress", "response.output_item.added",
                        "response.content_part.added", *["response.output_text.delta"] *
                        len(deltas), "response.output_text.done", "response.content_part.done",
                        "response.output_item.done", "response.completed"], f"{types}")
        check(events[0]["response"]["status"] == "in_progress" and
              events[0]["response"]["output"] == [] and events[0]["response"]["usage"] is None,
              events[0])
        item_id = events[2]["item"]["id"]
        check(events[2]["item"]["status"] == "in_progress" and item_id.startswith("msg_"),
              events[2])
        for e in events[3:-2]:
            check(e["item_id"] == item_id and e["output_index"] == 0 and
                  e["content_index"] == 0, f"{e}")
        text = "".join(e["delta"] for e in deltas)
        final = events[-1]["response"]
        check(text == events[-4]["text"] == events[-3]["part"]["text"] ==
              events[-2]["item"]["content"][0]["text"] == output_text(final) ==
              output_text(whole), f"{text!r} vs {output_text(whole)!r}")
        check(final["status"] == whole["status"] == "incomplete" and
              final["usage"]["output_tokens"] == 20 and final["id"] == events[0]["response"]["id"],
              f"{final}")
        # A streamed response is stored too.
        status, _, body = srv.request("GET", f"/v1/responses/{final['id']}")
        check(status == 200 and json.loads(body) == final, f"{status}")


# Bounded schemas: random weights reach the end of each grammar well within max_output_tokens.
SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
                                      "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"]},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
     "minItems": 1, "maxItems": 3},
    {"enum": ["red", "green", 3]},
]


def test_text_format_json_schema_output_validates():
    with Server(TINY_QWEN3) as srv:
        for i, schema in enumerate(SCHEMAS):
            for temperature in (0, 1):
                r = created(srv, input="JSON please", max_output_tokens=200,
                            temperature=temperature, seed=i,
                            text={"format": {"type": "json_schema", "name": f"s{i}",
                                             "schema": schema, "strict": True}})
                check(r["status"] == "completed", f"schema {i}: {r}")
                jsonschema.validate(json.loads(output_text(r)), schema)
                check(r["text"]["format"]["schema"] == schema, r["text"])
        r = created(srv, input="JSON please", max_output_tokens=400,
                    text={"format": {"type": "json_object"}})
        check(r["status"] == "completed" and isinstance(json.loads(output_text(r)), dict), r)
        events = stream_events(srv, {"input": "JSON please", "max_output_tokens": 200,
                                     "text": {"format": {"type": "json_schema", "name": "s",
                                                         "schema": SCHEMAS[0]}}})
        jsonschema.validate(json.loads(output_text(events[-1]["response"])), SCHEMAS[0])
        status, out = create(srv, input="x", text={"format": {
            "type": "json_schema", "name": "bad", "schema": {"type": "array",
                                                             "uniqueItems": True}}})
        check(status == 400 and out["error"]["param"] == "text.format" and
              "uniqueItems" in out["error"]["message"], f"{status} {out}")


def test_reasoning_item_with_the_reasoning_parser():
    # The Qwen3.5 template opens <think> in the prompt, so the output starts as reasoning.
    with Server(TINY_QWEN3, *QWEN_FLAGS, "--chat-template", QWEN35_TEMPLATE) as srv:
        user = [{"role": "user", "content": "Hi"}]
        ref = chat(srv, user, 12)["choices"][0]["message"]
        r = created(srv, input="Hi", max_output_tokens=12)
        kinds = [item["type"] for item in r["output"]]
        check(kinds[0] == "reasoning" and r["output"][0]["id"].startswith("rs_") and
              r["output"][0]["summary"] == [], f"{r['output']}")
        check(r["output"][0]["content"][0] == {"type": "reasoning_text",
                                               "text": ref["reasoning_content"]},
              f"{r['output'][0]} vs {ref}")
        check(output_text(r) == (ref["content"] or ""), f"{output_text(r)!r} vs {ref}")
        # Random weights do not close the block within 12 tokens: all of them are reasoning (the
        # switch to content is covered by tests/unit/server/responses_test.cpp).
        check(kinds == ["reasoning"] and r["status"] == "incomplete" and
              r["output"][0]["status"] == "incomplete" and
              r["usage"]["output_tokens_details"]["reasoning_tokens"] == 12, f"{r}")
        events = stream_events(srv, {"input": "Hi", "max_output_tokens": 12, "temperature": 0})
        types = [e["type"] for e in events]
        check(types[2:4] == ["response.output_item.added", "response.content_part.added"] and
              events[3]["part"]["type"] == "reasoning_text", f"{types}")
        text = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
        check(text == ref["reasoning_content"] and
              events[-1]["response"]["output"] == [
                  {**item, "id": events[-1]["response"]["output"][k]["id"]}
                  for k, item in enumerate(r["output"])], f"{text!r} {events[-1]}")


WEATHER = {"type": "function", "name": "get_weather", "description": "Weather of a city",
           "parameters": {"type": "object",
                          "properties": {"city": {"type": "string", "maxLength": 10}},
                          "required": ["city"]}}


def test_function_calls_in_and_out():
    # No --reasoning-parser: with it, a grammar applies only after the model's </think>.
    with Server(TINY_QWEN3, *TOOL_FLAGS) as srv:
        # A call and its output given back render as chat's tool_calls and tool messages.
        items = [{"role": "user", "content": "Weather in Paris?"},
                 {"type": "function_call", "call_id": "call_1", "name": "get_weather",
                  "arguments": "{\"city\": \"Paris\"}"},
                 {"type": "function_call_output", "call_id": "call_1", "output": "sunny"}]
        chat_messages = [{"role": "user", "content": "Weather in Paris?"},
                         {"role": "assistant", "content": "", "tool_calls": [
                             {"id": "call_1", "type": "function", "function": {
                                 "name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
                         {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
        chat_tools = [{"type": "function", "function": {k: WEATHER[k] for k in
                                                        ("name", "description", "parameters")}}]
        tok = prompt_tokens(srv, chat_messages, tools=chat_tools)
        check("<tool_response>\nsunny\n</tool_response>" in tok["prompt"] and
              "\"name\": \"get_weather\"" in tok["prompt"], tok["prompt"])
        r = created(srv, input=items, tools=[WEATHER], max_output_tokens=4,
                    reasoning={"effort": "low"}, tool_choice="none")
        check(r["usage"]["input_tokens"] == prompt_tokens(srv, chat_messages,
                                                          tools=chat_tools)["count"], r["usage"])
        check(r["tools"] == [WEATHER] and r["tool_choice"] == "none", r)
        # tool_choice "required" is enforced by a grammar: one function_call item.
        r = created(srv, input="Weather?", tools=[WEATHER], tool_choice="required",
                    parallel_tool_calls=False, max_output_tokens=200)
        calls = [item for item in r["output"] if item["type"] == "function_call"]
        check(len(calls) == 1 and calls[0]["name"] == "get_weather" and
              calls[0]["status"] == "completed" and calls[0]["id"].startswith("fc_") and
              calls[0]["call_id"].startswith("call_"), f"{r['output']}")
        jsonschema.validate(json.loads(calls[0]["arguments"]), WEATHER["parameters"])
        # Continuing it: the call is part of the stored conversation.
        r2 = created(srv, previous_response_id=r["id"], tools=[WEATHER], tool_choice="none",
                     input=[{"type": "function_call_output", "call_id": calls[0]["call_id"],
                             "output": "rain"}], max_output_tokens=2)
        check(r2["usage"]["input_tokens"] > r["usage"]["input_tokens"], r2["usage"])
        events = stream_events(srv, {"input": "Weather?", "tools": [WEATHER],
                                     "tool_choice": {"type": "function", "name": "get_weather"},
                                     "max_output_tokens": 200})
        done = [e for e in events if e["type"] == "response.function_call_arguments.done"]
        delta = [e for e in events if e["type"] == "response.function_call_arguments.delta"]
        check(len(done) == 1 and done[0]["name"] == "get_weather" and
              delta[0]["delta"] == done[0]["arguments"] and
              events[-1]["response"]["output"][-1]["arguments"] == done[0]["arguments"],
              f"{[e['type'] for e in events]}")


def test_bad_requests_name_the_responses_field():
    rows = [
        ({}, 400, "input"),
        ({"input": 5}, 400, "input"),
        ({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
         400, "input"),
        ({"input": [{"type": "item_reference", "id": "x"}]}, 400, "input"),
        ({"input": [{"role": "robot", "content": "x"}]}, 400, "input"),
        ({"input": "x", "background": True}, 400, "background"),
        ({"input": "x", "truncation": "auto"}, 400, "truncation"),
        ({"input": "x", "conversation": "conv_1"}, 400, "conversation"),
        ({"input": "x", "include": ["message.output_text.logprobs"]}, 400, "include"),
        ({"input": "x", "tools": [{"type": "web_search"}]}, 400, "tools"),
        ({"input": "x", "tools": [WEATHER]}, 400, "tool_choice"),  # auto needs the flags
        ({"input": "x", "tool_choice": "required"}, 400, "tool_choice"),
        ({"input": "x", "max_output_tokens": 0}, 400, "max_output_tokens"),
        ({"input": "x", "temperature": -1}, 400, "temperature"),
        ({"input": "x", "store": "yes"}, 400, "store"),
        ({"input": "x", "text": {"format": {"type": "yaml"}}}, 400, "text.format"),
        ({"input": "x", "model": "nope"}, 404, "model"),
    ]
    with Server(*STORIES) as srv:
        for body, status, param in rows:
            got, out = create(srv, **body)
            check(got == status and out["error"]["param"] == param,
                  f"{body}: {got} {out}")
        check(created(srv, input="still up", max_output_tokens=1)["object"] == "response", "")


def test_openai_npm_client_responses():
    with Server(*STORIES, "--served-model-name", "stories", "--api-key", "sk-e2e") as srv:
        p = subprocess.run(["node", os.path.join(HERE, "node/responses_client.mjs")],
                           cwd=os.path.join(HERE, "node"), capture_output=True, text=True,
                           timeout=120,
                           env={**os.environ, "BASE_URL": f"http://127.0.0.1:{srv.port}/v1",
                                "API_KEY": "sk-e2e", "MODEL": "stories"})
        check(p.returncode == 0, f"node client failed:\n{p.stdout}\n{p.stderr}")
        check("responses-ok" in p.stdout, p.stdout)


if __name__ == "__main__":
    run([test_greedy_text_equals_chat_and_the_object_has_vllms_fields,
         test_instructions_become_the_system_message_and_items_the_messages,
         test_max_output_tokens_makes_the_response_incomplete,
         test_previous_response_id_continues_the_stored_conversation,
         test_unknown_or_unstored_ids_are_404_and_stored_ones_can_be_read_and_deleted,
         test_stream_events_come_in_order_and_build_the_final_response,
         test_text_format_json_schema_output_validates,
         test_reasoning_item_with_the_reasoning_parser,
         test_function_calls_in_and_out,
         test_bad_requests_name_the_responses_field,
         test_openai_npm_client_responses])
