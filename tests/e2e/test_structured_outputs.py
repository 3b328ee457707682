"""Structured outputs as vLLM serves them: response_format json_schema / json_object,
structured_outputs {json, regex, choice, grammar}, the older guided_* fields, and tool_choice
"required" / named enforced by a grammar. tiny-qwen3 has random weights, so only the token mask
can make its output valid: every row checks the output with an independent validator (Python's
jsonschema, re, json). Refusals are 400s naming the field."""
import json
import os
import re
import subprocess

import jsonschema

from harness import MODELS, STORIES_GGUF, Server, check, run, shared_server

TINY_QWEN3 = os.path.join(MODELS, "tiny-qwen3")
NGRAM = json.dumps({"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 3,
                    "prompt_lookup_min": 1})

# Twenty schemas over the supported subset. Every string, array and number is bounded, so a
# random-weight model reaches the end of the grammar well within max_tokens.
S = {"type": "string", "maxLength": 8}
SCHEMAS = [
    {"type": "object", "properties": {"name": S, "age": {"type": "integer", "minimum": 0,
                                                          "maximum": 120}},
     "required": ["name", "age"]},
    {"type": "boolean"},
    {"type": "integer", "minimum": -50, "maximum": 50},
    {"type": "integer", "exclusiveMinimum": 7, "maximum": 1000},
    {"type": "number"},
    {"type": "null"},
    {"enum": ["red", "green", 3, None, True]},
    {"const": {"a": [1, 2]}},
    {"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9},
     "minItems": 2, "maxItems": 4},
    {"type": "array", "prefixItems": [S, {"type": "boolean"}], "items": False},
    {"type": "string", "minLength": 3, "maxLength": 6},
    {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
    {"type": "string", "format": "date"},
    {"type": "string", "format": "uuid"},
    {"type": ["integer", "null"], "minimum": 1, "maximum": 3},
    {"anyOf": [{"type": "object", "properties": {"x": {"type": "integer", "maximum": 9,
                                                        "minimum": 0}},
                "required": ["x"]},
               {"type": "array", "items": {"type": "boolean"}, "maxItems": 2}]},
    {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 99},
                                      "tags": {"type": "array", "items": S, "maxItems": 2},
                                      "ok": {"type": "boolean"}},
     "required": ["id"]},
    {"type": "object", "properties": {"inner": {"type": "object",
                                                "properties": {"v": {"enum": ["a", "b"]}},
                                                "required": ["v"]}},
     "required": ["inner"]},
    {"$defs": {"pt": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0,
                                                             "maximum": 9},
                                                       "y": {"type": "integer", "minimum": 0,
                                                             "maximum": 9}},
                      "required": ["x", "y"]}},
     "type": "array", "items": {"$ref": "#/$defs/pt"}, "minItems": 1, "maxItems": 2},
    {"type": "object", "properties": {"a": {"type": "string", "enum": ["x", "y"]},
                                      "b": {"type": "number"}},
     "required": ["a", "b"], "additionalProperties": False},
]


def completion(srv, body):
    status, out = srv.post_json("/v1/completions", {"prompt": "Hello", "max_tokens": 200, **body})
    check(status == 200, f"{status}: {out}")
    return out["choices"]


def check_schema_outputs(srv, label):
    assert len(SCHEMAS) == 20
    for i, schema in enumerate(SCHEMAS):
        for temperature in (0, 1):
            body = {"temperature": temperature, "seed": i,
                    "response_format": {"type": "json_schema",
                                        "json_schema": {"name": f"s{i}", "schema": schema}}}
            choice = completion(srv, body)[0]
            check(choice["finish_reason"] == "stop",
                  f"{label} schema {i} T={temperature}: {choice['finish_reason']}: "
                  f"{choice['text']!r}")
            try:
                value = json.loads(choice["text"])
                jsonschema.validate(value, schema)
            except (ValueError, jsonschema.ValidationError) as e:
                raise AssertionError(f"{label} schema {i} T={temperature}: {choice['text']!r}: "
                                     f"{e}") from None


def test_json_schema_outputs_validate_for_twenty_schemas_at_two_temperatures():
    with shared_server(TINY_QWEN3) as srv:
        check_schema_outputs(srv, "tiny-qwen3")


def test_json_schema_outputs_validate_with_ngram_speculative_decoding():
    with Server(TINY_QWEN3, "--speculative-config", NGRAM) as srv:
        check_schema_outputs(srv, "tiny-qwen3 + ngram")
        # Drafts were verified against the masks (JSON repeats itself: the n-gram drafter finds
        # matches), and some were accepted.
        drafted = sum(srv.metric_values("vllm:spec_decode_num_draft_tokens_total"))
        accepted = sum(srv.metric_values("vllm:spec_decode_num_accepted_tokens_total"))
        check(drafted > 0 and accepted > 0, f"drafted {drafted}, accepted {accepted}")


def test_choice_regex_grammar_and_json_object_rows():
    rows = [  # (request fields, check on the text)
        ({"structured_outputs": {"choice": ["happy dog", "sad cat", "x"]}},
         lambda t: t in ("happy dog", "sad cat", "x")),
        ({"guided_choice": ["yes", "no"]}, lambda t: t in ("yes", "no")),
        ({"structured_outputs": {"regex": r"[a-z]{3,8}( [0-9]{1,3}){2}"}},
         lambda t: re.fullmatch(r"[a-z]{3,8}( [0-9]{1,3}){2}", t)),
        ({"guided_regex": r"(ab|cd)+!\d"}, lambda t: re.fullmatch(r"(ab|cd)+!\d", t)),
        ({"structured_outputs": {"grammar": 'root ::= "(" item ("," item){0,3} ")"\n'
                                            'item ::= [0-9] | "x" [a-c]'}},
         lambda t: re.fullmatch(r"\((?:[0-9]|x[a-c])(?:,(?:[0-9]|x[a-c])){0,3}\)", t)),
        ({"guided_grammar": 'root ::= ("a" root "b")?'},
         lambda t: re.fullmatch(r"(a*)(b*)", t) and t.count("a") == t.count("b")),
        ({"structured_outputs": {"json": {"type": "object", "properties": {
            "k": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3}},
            "required": ["k"]}, "disable_any_whitespace": True}},
         lambda t: " " not in t and "\n" not in t and isinstance(json.loads(t)["k"], list)),
        ({"guided_json": json.dumps({"type": "integer", "minimum": 10, "maximum": 12})},
         lambda t: t in ("10", "11", "12")),
        # Properties come in the schema's order (xgrammar's), not sorted.
        ({"response_format": {"type": "json_schema", "json_schema": {"name": "o", "schema": {
            "type": "object", "properties": {"zeta": {"type": "boolean"},
                                             "alpha": {"type": "boolean"}},
            "required": ["zeta", "alpha"]}}}},
         lambda t: list(json.loads(t)) == ["zeta", "alpha"]),
    ]
    with shared_server(TINY_QWEN3) as srv:
        for fields, ok in rows:
            for temperature in (0, 1):
                choices = completion(srv, {"temperature": temperature, "n": 2, "seed": 5,
                                           **fields})
                check(len(choices) == 2, f"{fields}: {choices}")
                for c in choices:
                    check(c["finish_reason"] == "stop" and ok(c["text"]),
                          f"{fields} T={temperature}: {c['finish_reason']} {c['text']!r}")
        # Ambiguous: the stacks double per "a"; the matcher keeps a bounded set (the engine hung
        # before), and the output is still in the language, ended or cut by max_tokens.
        for temperature in (0, 1):
            c = completion(srv, {"guided_grammar": 'root ::= s\ns ::= s1 | s2\n'
                                                   's1 ::= "a" s | ""\ns2 ::= "a" s | ""',
                                 "max_tokens": 40, "temperature": temperature, "seed": 1})[0]
            check(re.fullmatch(r"a*", c["text"]), f"ambiguous grammar: {c}")
        # The same through chat, streamed: the deltas join into a valid answer.
        status, events, done = srv.stream("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "Pick"}], "stream": True, "max_tokens": 50,
            "structured_outputs": {"choice": ["alpha", "beta gamma"]}})
        text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                       if e.get("choices"))
        check(status == 200 and done and text in ("alpha", "beta gamma"), f"{status} {text!r}")


def test_json_object_answers_an_object():
    with shared_server(TINY_QWEN3) as srv:
        status, out = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "JSON please"}], "max_tokens": 400,
            "temperature": 0, "response_format": {"type": "json_object"}})
        check(status == 200, f"{status} {out}")
        content = out["choices"][0]["message"]["content"]
        check(out["choices"][0]["finish_reason"] == "stop", f"{out}")
        check(isinstance(json.loads(content), dict), content)


WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                     "days": {"type": "integer", "minimum": 1, "maximum": 7}},
    "required": ["city", "days"]}}}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {
    "type": "object", "properties": {"zone": {"enum": ["UTC", "CET"]}}, "required": ["zone"]}}}


def test_tool_choice_required_and_named_are_enforced():
    # "required" allows any number of calls; a random-weight model never closes the array, so
    # the rows bound it with parallel_tool_calls false (one call, as vLLM answers then).
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    with shared_server(TINY_QWEN3) as srv:
        for temperature in (0, 1):
            status, out = srv.post_json("/v1/chat/completions", {
                "messages": messages, "tools": [WEATHER, TIME], "tool_choice": "required",
                "parallel_tool_calls": False, "max_tokens": 300, "temperature": temperature,
                "seed": 3})
            check(status == 200, f"{status} {out}")
            choice = out["choices"][0]
            calls = choice["message"]["tool_calls"]
            check(choice["finish_reason"] == "tool_calls" and len(calls) == 1, f"{choice}")
            for call in calls:
                tool = {"get_weather": WEATHER, "get_time": TIME}[call["function"]["name"]]
                jsonschema.validate(json.loads(call["function"]["arguments"]),
                                    tool["function"]["parameters"])
            status, out = srv.post_json("/v1/chat/completions", {
                "messages": messages, "tools": [WEATHER, TIME], "max_tokens": 300,
                "tool_choice": {"type": "function", "function": {"name": "get_time"}},
                "temperature": temperature, "seed": 4})
            check(status == 200, f"{status} {out}")
            calls = out["choices"][0]["message"]["tool_calls"]
            check(len(calls) == 1 and calls[0]["function"]["name"] == "get_time", f"{out}")
            check(json.loads(calls[0]["function"]["arguments"])["zone"] in ("UTC", "CET"),
                  f"{calls}")
        # Streamed, the call starts (id, type, name) and its arguments follow in pieces as they
        # are generated (vLLM); joined, they are the whole response's arguments.
        for tool_choice, seed in (("required", 3), ({"type": "function",
                                                     "function": {"name": "get_weather"}}, 5)):
            body = {"messages": messages, "tools": [WEATHER, TIME], "tool_choice": tool_choice,
                    "parallel_tool_calls": False, "max_tokens": 300, "temperature": 1,
                    "seed": seed}
            status, whole = srv.post_json("/v1/chat/completions", body)
            check(status == 200, f"{status} {whole}")
            want = whole["choices"][0]["message"]["tool_calls"][0]["function"]
            status, events, done = srv.stream("/v1/chat/completions", {**body, "stream": True})
            check(status == 200 and done, f"{status} {events[-1:]}")
            pieces = [c for e in events if e.get("choices")
                      for c in e["choices"][0]["delta"].get("tool_calls") or []]
            check(pieces and pieces[0].get("id", "").startswith("chatcmpl-tool-") and
                  pieces[0]["type"] == "function" and
                  pieces[0]["function"]["name"] == want["name"], f"the call starts: {pieces[:1]}")
            check(all("id" not in p and "name" not in p["function"] and p["index"] == 0
                      for p in pieces[1:]), f"then arguments only: {pieces[1:3]}")
            check(len([p for p in pieces if p["function"]["arguments"]]) > 2,
                  f"{tool_choice}: arguments in pieces as they come, not one at the end: "
                  f"{len(pieces)} piece(s)")
            joined = "".join(p["function"]["arguments"] for p in pieces)
            check(json.loads(joined) == json.loads(want["arguments"]),
                  f"{tool_choice}: streamed {joined!r}, whole {want['arguments']!r}")
            finish = [e["choices"][0]["finish_reason"] for e in events if e.get("choices")]
            # vLLM: "tool_calls" for "required" that ended with stop; a named function keeps
            # the engine's reason.
            want_finish = "tool_calls" if tool_choice == "required" else "stop"
            check(finish[-1] == want_finish == whole["choices"][0]["finish_reason"],
                  f"{tool_choice}: finish_reason {finish[-1]}, whole "
                  f"{whole['choices'][0]['finish_reason']}")
            # Cut by max_tokens: "length", streamed or whole (the arguments are incomplete).
            cut = {**body, "max_tokens": 6}
            status, whole = srv.post_json("/v1/chat/completions", cut)
            status, events, done = srv.stream("/v1/chat/completions", {**cut, "stream": True})
            finish = [e["choices"][0]["finish_reason"] for e in events if e.get("choices")]
            check(whole["choices"][0]["finish_reason"] == "length" and finish[-1] == "length",
                  f"{tool_choice} cut short: whole {whole['choices'][0]['finish_reason']}, "
                  f"streamed {finish[-1]}")
        status, out = srv.post_json("/v1/chat/completions", {
            "messages": messages, "tools": [WEATHER], "tool_choice": "required",
            "response_format": {"type": "json_object"}})
        check(status == 400 and out["error"]["param"] == "tool_choice", f"{status} {out}")
        status, out = srv.post_json("/v1/chat/completions", {
            "messages": messages, "tools": [WEATHER], "parallel_tool_calls": "no"})
        check(status == 400 and out["error"]["param"] == "parallel_tool_calls", f"{status} {out}")


REFUSED = [  # (request fields, param, words in the message)
    ({"guided_regex": "a", "guided_choice": ["a"]}, "guided_choice", "only one kind"),
    ({"response_format": {"type": "json_object"}, "structured_outputs": {"regex": "a"}},
     "structured_outputs.regex", "only one kind"),
    ({"guided_json": {"type": "object", "patternProperties": {"a": {}}}}, "guided_json",
     "patternProperties"),
    ({"guided_json": {"type": "string", "format": "hostname-ish"}}, "guided_json", "format"),
    ({"guided_regex": r"(a)\1"}, "guided_regex", "back-reference"),
    ({"guided_regex": "(?=a)b"}, "guided_regex", "look"),
    ({"guided_grammar": "root ::= root \"a\" | \"b\""}, "guided_grammar", "left-recursive"),
    ({"guided_grammar": "root ::= x"}, "guided_grammar", "'x' is used but not defined"),
    ({"guided_grammar": "root ::= \"a"}, "guided_grammar", "closing the literal"),
    ({"guided_choice": []}, "guided_choice", "non-empty array"),
    ({"guided_choice": "a"}, "guided_choice", "non-empty array"),
    ({"response_format": {"type": "structural_tag"}}, "response_format", "structural_tag"),
    ({"response_format": {"type": "json_schema"}}, "response_format", "json_schema"),
    ({"structured_outputs": {"whitespace_pattern": " "}}, "structured_outputs",
     "whitespace_pattern"),
    ({"structured_outputs": "json"}, "structured_outputs", "must be an object"),
    ({"guided_json": "{not json"}, "guided_json", "not JSON"),
    # Compile blow-ups are refused quickly (they took minutes and GBs before), and so is a
    # grammar that matches nothing (it answered 200 with "").
    ({"guided_regex": "((a{0,20}){0,20}){0,20}"}, "guided_regex", "too large"),
    ({"guided_regex": "(a?){10000}"}, "guided_regex", "too large"),
    ({"guided_grammar": "root ::= [^\\x00-\\U0010FFFF]"}, "guided_grammar", "matches no text"),
]


def test_bad_constraints_are_400s_naming_the_field_and_the_server_goes_on():
    with Server(STORIES_GGUF) as srv:
        for fields, param, words in REFUSED:
            status, out = srv.post_json("/v1/completions", {"prompt": "a", **fields})
            err = out.get("error", {})
            check(status == 400 and err.get("param") == param and words in err.get("message", ""),
                  f"{fields}: {status} {out}")
        status, out = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 5})
        check(status == 200, f"after the refusals: {status} {out}")


def test_real_openai_client_parse_with_zod_and_required_tools():
    here = os.path.dirname(os.path.abspath(__file__))
    with Server(TINY_QWEN3, "--served-model-name", "tiny") as srv:
        p = subprocess.run(["node", os.path.join(here, "node/structured_client.mjs")],
                           cwd=os.path.join(here, "node"), capture_output=True, text=True,
                           timeout=300, env={**os.environ, "MODEL": "tiny",
                                             "BASE_URL": f"http://127.0.0.1:{srv.port}/v1"})
        check(p.returncode == 0 and "parse-zod-ok" in p.stdout and "tool-required-ok" in p.stdout,
              f"node client failed:\n{p.stdout}\n{p.stderr}")


if __name__ == "__main__":
    run([test_json_schema_outputs_validate_for_twenty_schemas_at_two_temperatures,
         test_json_schema_outputs_validate_with_ngram_speculative_decoding,
         test_choice_regex_grammar_and_json_object_rows,
         test_json_object_answers_an_object,
         test_tool_choice_required_and_named_are_enforced,
         test_bad_constraints_are_400s_naming_the_field_and_the_server_goes_on,
         test_real_openai_client_parse_with_zod_and_required_tools])
