"""vLLM's extra request fields, one row per behaviour: each is honoured as vLLM does it or
refused with a 400 naming it; a field no endpoint reads is named in one warning line. Never a
silent 200 with the wrong behaviour."""
import json
import math
import os

from harness import STORIES_GGUF, Server, check, run

CHAT_TEMPLATE = os.path.join(os.path.dirname(STORIES_GGUF),
                             "../chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja")
CHAT = ["--chat-template", CHAT_TEMPLATE]
PROMPT = "Once upon a time, there was a little girl named Lily. She liked to"


def complete(srv, **fields):
    status, out = srv.post_json("/v1/completions", {"prompt": PROMPT, "max_tokens": 12,
                                                    "temperature": 0, "return_token_ids": True,
                                                    **fields})
    check(status == 200, f"{fields}: {status} {out}")
    return out


REFUSED = [  # (fields, param, words)
    ({"suffix": "end"}, "suffix", "not currently supported"),
    ({"best_of": 2}, "best_of", "not supported"),
    ({"use_beam_search": True}, "use_beam_search", "beam search"),
    ({"prompt_logprobs": 21}, "prompt_logprobs", "must be in [0, 20]"),
    ({"prompt_logprobs": -1}, "prompt_logprobs", "needs --max-logprobs -1"),
    ({"logprobs": -1}, "logprobs", "needs --max-logprobs -1"),
    ({"prompt_logprobs": -2}, "prompt_logprobs", "must be in [0, 20]"),
    ({"prompt_logprobs": 1, "stream": True}, "prompt_logprobs", "not available when"),
    ({"max_tokens": 0}, "max_tokens", "only allowed with 'echo'"),
    ({"priority": 3}, "priority", "Got priority 3 but Priority scheduling is not enabled (start "
                                  "the server with --scheduling-policy priority)"),
    ({"allowed_token_ids": []}, "allowed_token_ids", "non-empty array"),
    ({"allowed_token_ids": [600]}, "allowed_token_ids", "outside the vocabulary"),
    ({"bad_words": "Lily"}, "bad_words", "an array of strings"),
    ({"truncate_prompt_tokens": 0}, "truncate_prompt_tokens", "must be -1 or in [1,"),
    ({"cache_salt": ""}, "cache_salt", "non-empty string"),
    ({"request_id": 7}, "request_id", "must be a string"),
    ({"stream": True, "stream_options": {"continuous_usage_stats": "yes"}}, "stream_options",
     "boolean"),
]


def test_refused_fields_are_400s_naming_them():
    with Server(STORIES_GGUF) as srv:
        for fields, param, words in REFUSED:
            status, out = srv.post_json("/v1/completions", {"prompt": "a", **fields})
            err = out.get("error", {})
            check(status == 400 and err.get("param") == param and words in err.get("message", ""),
                  f"{fields}: {status} {out}")
        # Accepted values of the same fields.
        for fields in ({"best_of": 1}, {"priority": 0}, {"spaces_between_special_tokens": False},
                       {"use_beam_search": False}):
            complete(srv, **fields)


def test_honoured_sampling_fields():
    with Server(STORIES_GGUF) as srv:
        base = complete(srv)["choices"][0]
        # allowed_token_ids: every sampled token is one of them, even at temperature 1.
        out = complete(srv, allowed_token_ids=[5, 6, 7], temperature=1, seed=3)
        ids = out["choices"][0]["token_ids"]
        check(ids and set(ids) <= {5, 6, 7}, f"allowed_token_ids: {ids}")
        # bad_words: the greedy output's second word is banned, so it never appears.
        words = base["text"].split()
        check(len(words) >= 2, base)
        banned = words[1]
        out = complete(srv, bad_words=[banned])["choices"][0]
        _, tok = srv.post_json("/tokenize", {"prompt": " " + banned, "add_special_tokens": False})
        seq = tok["tokens"]
        got = out["token_ids"]
        check(out["text"] != base["text"] and not any(
            got[i:i + len(seq)] == seq for i in range(len(got))),
              f"bad_words {banned!r} {seq}: {out['text']!r} {got}")
        # truncate_prompt_tokens: the last k prompt tokens only, as if sent alone.
        out = complete(srv, truncate_prompt_tokens=3)
        prompt_ids = base_prompt_ids(srv)
        alone = complete(srv, prompt=prompt_ids[-3:])
        check(out["usage"]["prompt_tokens"] == 3
              and out["choices"][0]["token_ids"] == alone["choices"][0]["token_ids"],
              f"truncate_prompt_tokens: {out['usage']} {out['choices'][0]['token_ids']} vs "
              f"{alone['choices'][0]['token_ids']}")
        # add_special_tokens false: no BOS (stories260k's tokenizer adds one by default).
        with_bos = complete(srv)["usage"]["prompt_tokens"]
        without = complete(srv, add_special_tokens=False)["usage"]["prompt_tokens"]
        check(without == with_bos - 1, f"add_special_tokens: {with_bos} vs {without}")
        # return_tokens_as_token_ids: logprobs name tokens by id.
        out = complete(srv, logprobs=2, return_tokens_as_token_ids=True)["choices"][0]
        check(out["logprobs"]["tokens"] == [f"token_id:{i}" for i in out["token_ids"]]
              and all(k.startswith("token_id:") for top in out["logprobs"]["top_logprobs"]
                      for k in top), f"return_tokens_as_token_ids: {out['logprobs']}")


def base_prompt_ids(srv):
    _, tok = srv.post_json("/tokenize", {"prompt": PROMPT})
    return tok["tokens"]


def test_request_id_header_first_and_no_engine_collision():
    with Server(STORIES_GGUF) as srv:
        check(complete(srv, request_id="abc")["id"] == "cmpl-abc", "body request_id")
        status, headers, body = srv.request("POST", "/v1/completions",
                                            {"prompt": PROMPT, "max_tokens": 2,
                                             "request_id": "abc"},
                                            headers={"X-Request-Id": "hdr"})
        check(status == 200 and json.loads(body)["id"] == "cmpl-hdr", f"{status} {body}")
        # The same client id twice at once: both are served (engine ids stay unique).
        results = srv.post_all_at_once("/v1/completions", [
            {"prompt": PROMPT, "max_tokens": 8, "request_id": "same"}] * 2)
        check(all(s == 200 and o["id"] == "cmpl-same" for s, o in results), f"{results}")


def test_continuous_usage_stats_in_every_chunk():
    with Server(STORIES_GGUF) as srv:
        status, events, done = srv.stream("/v1/completions", {
            "prompt": PROMPT, "max_tokens": 6, "stream": True, "temperature": 0,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}})
        check(status == 200 and done, f"{status}")
        chunks = [e for e in events if e.get("choices")]
        counts = [e["usage"]["completion_tokens"] for e in chunks]
        check(chunks and all("usage" in e for e in chunks) and counts == sorted(counts)
              and counts[-1] == 6, f"{[e.get('usage') for e in events]}")


def test_cache_salt_isolates_the_prefix_cache():
    long_prompt = PROMPT * 4
    with Server(STORIES_GGUF, "--enable-prompt-tokens-details") as srv:
        def cached(**fields):
            out = complete(srv, prompt=long_prompt, **fields)
            return out["usage"]["prompt_tokens_details"]["cached_tokens"]
        cached(cache_salt="a")
        check(cached(cache_salt="a") > 0, "same salt: the prefix cache hits")
        check(cached(cache_salt="b") == 0, "another salt: no hit")
        check(cached() == 0, "no salt after salted requests: no hit")


def test_unknown_fields_are_named_in_one_warning():
    with Server(STORIES_GGUF, "--chat-template", CHAT_TEMPLATE) as srv:
        complete(srv, frobnicate=1, zap="x")
        status, _ = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, "quux": True})
        check(status == 200, f"{status}")
        log = srv.full_log()
        check("The following fields were present in the request but ignored: 'frobnicate', "
              "'zap'" in log and "ignored: 'quux'" in log, srv.logs())


def test_chat_extras_documents_effort_template_and_include_reasoning():
    template = ("{% for m in messages %}{{ m.content }}|{% endfor %}"
                "{% if documents %}D{{ documents | length }}{% endif %}"
                "{% if reasoning_effort %}E{{ reasoning_effort }}{% endif %}")
    messages = [{"role": "user", "content": "hi"}]
    with Server(STORIES_GGUF, "--chat-template", CHAT_TEMPLATE) as srv:
        status, out = srv.post_json("/v1/chat/completions", {
            "messages": messages, "max_tokens": 2, "chat_template": template})
        check(status == 400 and out["error"]["param"] == "chat_template"
              and "--trust-request-chat-template" in out["error"]["message"], f"{status} {out}")
        for fields, param in (({"reasoning_effort": "max"}, "reasoning_effort"),
                              ({"documents": "doc"}, "documents"),
                              ({"include_reasoning": "no"}, "include_reasoning")):
            status, out = srv.post_json("/v1/chat/completions",
                                        {"messages": messages, "max_tokens": 2, **fields})
            check(status == 400 and out["error"]["param"] == param, f"{fields}: {status} {out}")
    with Server(STORIES_GGUF, "--chat-template", CHAT_TEMPLATE,
                "--trust-request-chat-template") as srv:
        body = {"messages": messages, "max_tokens": 2, "chat_template": template,
                "documents": [{"title": "a", "text": "b"}, {"text": "c"}],
                "reasoning_effort": "low", "return_token_ids": True}
        status, out = srv.post_json("/v1/chat/completions", body)
        check(status == 200, f"{status} {out}")
        _, tok = srv.post_json("/tokenize", {"prompt": "hi|D2Elow"})
        check(out["prompt_token_ids"] == tok["tokens"],
              f"rendered with the request's template: {out['prompt_token_ids']} vs {tok}")


def test_several_prompts_give_n_choices_each_indexed_as_vllm():
    with Server(STORIES_GGUF) as srv:
        prompts = ["Once upon a time", "The cat", "Lily and Ben"]
        alone = [complete(srv, prompt=p)["choices"][0] for p in prompts]
        out = complete(srv, prompt=prompts, n=2, temperature=0)
        check([c["index"] for c in out["choices"]] == list(range(6)), f"{out['choices']}")
        for p, single in enumerate(alone):
            for j in range(2):
                c = out["choices"][2 * p + j]
                check(c["text"] == single["text"] and c["prompt_token_ids"] ==
                      single["prompt_token_ids"], f"prompt {p} choice {j}: {c} vs {single}")
        check(out["usage"]["prompt_tokens"] == sum(
            len(s["prompt_token_ids"]) for s in alone)
              and out["usage"]["completion_tokens"] == sum(
                  len(c["token_ids"]) for c in out["choices"]), f"{out['usage']}")
        # Token-id prompts, echoed, streamed: each index gets its own prompt text first.
        ids = [s["prompt_token_ids"] for s in alone[:2]]
        status, events, done = srv.stream("/v1/completions", {
            "prompt": ids, "max_tokens": 4, "stream": True, "echo": True, "temperature": 0})
        texts = {}
        for e in events:
            for c in e.get("choices", []):
                texts[c["index"]] = texts.get(c["index"], "") + c["text"]
        check(status == 200 and done and sorted(texts) == [0, 1]
              and texts[0].startswith("Once upon a time") and texts[1].startswith("The cat"),
              f"{texts}")
        for bad in ([], [[]], ["a", [1, 2]], [["a"]], [[1, 99999]]):
            status, out = srv.post_json("/v1/completions", {"prompt": bad})
            check(status == 400 and out["error"]["param"] == "prompt", f"{bad}: {status} {out}")


def test_prompt_logprobs_and_echo_equal_a_teacher_forced_run():
    with Server(STORIES_GGUF, *CHAT) as srv:
        ids = base_prompt_ids(srv)[:10]
        # Teacher forcing: prefix ids[:t], only ids[t] allowed, its raw logprob reported.
        forced = []
        for t in range(1, len(ids)):
            c = complete(srv, prompt=ids[:t], max_tokens=1, logprobs=0,
                         allowed_token_ids=[ids[t]])["choices"][0]
            check(c["token_ids"] == [ids[t]], f"teacher forcing at {t}: {c}")
            forced.append(c["logprobs"]["token_logprobs"][0])
        out = complete(srv, prompt=ids, prompt_logprobs=2)["choices"][0]
        plp = out["prompt_logprobs"]
        check(len(plp) == len(ids) and plp[0] is None, f"{plp}")
        for t in range(1, len(ids)):
            entry = plp[t][str(ids[t])]
            check(abs(entry["logprob"] - forced[t - 1]) < 1e-3 and entry["rank"] >= 1
                  and len(plp[t]) <= 3, f"position {t}: {plp[t]} vs {forced[t - 1]}")
        # echo + logprobs + max_tokens 0 (lm-eval's log-likelihood): the prompt alone, its
        # logprobs the same numbers, the first token without one.
        echo = complete(srv, prompt=ids, echo=True, logprobs=1, max_tokens=0)
        c = echo["choices"][0]
        lp = c["logprobs"]
        check(c["text"] == "Once upon a time, there was a little" and c["token_ids"] == [] and c["finish_reason"] == "length"
              and echo["usage"]["completion_tokens"] == 0, f"{echo}")
        check(lp["token_logprobs"][0] is None and len(lp["token_logprobs"]) == len(ids)
              and all(abs(a - b) < 1e-3 for a, b in zip(lp["token_logprobs"][1:], forced)),
              f"{lp['token_logprobs']} vs {forced}")
        # echo + logprobs with generation: prompt then output, in one list.
        c = complete(srv, prompt=ids, echo=True, logprobs=1, max_tokens=3)["choices"][0]
        check(len(c["logprobs"]["tokens"]) == len(ids) + 3
              and c["logprobs"]["text_offset"][0] == 0, f"{c['logprobs']}")
        # Chat: prompt_logprobs at the top level, one entry per prompt token.
        status, chat = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2,
            "prompt_logprobs": 0, "return_token_ids": True})
        check(status == 200 and len(chat["prompt_logprobs"]) == len(chat["prompt_token_ids"])
              and chat["prompt_logprobs"][0] is None
              and all(len(e) >= 1 for e in chat["prompt_logprobs"][1:]), f"{status} {chat}")


def expected_stop_text(tokens, stop, min_tokens):
    """vLLM's rule, written from its detokenizer: the text of tokens 1..min_tokens can end no
    stop string; a later match may start in it. The text before the first allowed match."""
    text, checked = "", 0
    for i, token in enumerate(tokens, 1):
        text += token
        if i <= min_tokens:
            checked = len(text)
            continue
        pos = text.find(stop, max(0, checked - len(stop) + 1))
        if pos != -1:
            return text[:pos]
        checked = len(text)
    return None


def test_min_tokens_holds_off_stop_strings():
    with Server(STORIES_GGUF) as srv:
        base = complete(srv, max_tokens=30, logprobs=0)["choices"][0]
        tokens = base["logprobs"]["tokens"]
        for stop, min_tokens in ((" ", 0), (" ", 3), (".", 0), (",", 5)):
            want = expected_stop_text(tokens, stop, min_tokens)
            check(want is not None, f"the greedy text has no allowed '{stop}': {tokens}")
            out = complete(srv, max_tokens=30, stop=[stop], min_tokens=min_tokens)["choices"][0]
            check(out["text"] == want and out["finish_reason"] == "stop" and
                  out["stop_reason"] == stop,
                  f"stop {stop!r}, min_tokens {min_tokens}: {out['text']!r}, want {want!r}")
            check(len(out["token_ids"]) > min_tokens, f"at least min_tokens tokens: {out}")


def test_minus_one_asks_for_the_whole_vocabulary_with_no_cap():
    with Server(STORIES_GGUF, "--max-logprobs", "-1", *CHAT) as srv:
        # token_id:N keys: token texts collide (byte tokens), ids do not.
        out = complete(srv, max_tokens=3, logprobs=-1, prompt_logprobs=-1,
                       return_tokens_as_token_ids=True)
        choice = out["choices"][0]
        vocab = 512  # stories260K's tokenizer and logits row
        for top in choice["logprobs"]["top_logprobs"]:
            check(len(top) == vocab, f"every token of the vocabulary: {len(top)}")
            total = sum(math.exp(v) for v in top.values())
            check(abs(total - 1) < 1e-3, f"a whole distribution sums to 1: {total}")
        prompt = choice["prompt_logprobs"]
        check(prompt[0] is None and all(len(p) >= vocab for p in prompt[1:]),
              f"prompt positions: {[None if p is None else len(p) for p in prompt]}")
        status, body = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1, "logprobs": True,
            "top_logprobs": -1})
        check(status == 200, f"chat top_logprobs -1: {status} {body}")
        top = body["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
        check(len(top) == vocab, f"chat: every token of the vocabulary: {len(top)}")


def test_priority_is_taken_with_the_priority_policy():
    """--scheduling-policy priority: any integer priority is served by completions, chat and
    responses (the order it gives is proven in tests/unit/engine/priority_scheduler_test.cpp);
    a non-integer is a 400 naming it."""
    with Server(STORIES_GGUF, "--scheduling-policy", "priority", *CHAT) as srv:
        want = complete(srv)["choices"][0]["token_ids"]
        for priority in (5, -3, 0, 2**62):
            got = complete(srv, priority=priority)["choices"][0]["token_ids"]
            check(got == want, f"priority {priority}: {got} != {want}")
        status, out = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "priority": -1})
        check(status == 200, f"chat with priority: {status} {out}")
        status, out = srv.post_json("/v1/responses", {"input": "Hi", "max_output_tokens": 4,
                                                      "priority": 7})
        check(status == 200 and out.get("object") == "response", f"responses: {status} {out}")
        status, out = srv.post_json("/v1/completions", {"prompt": "a", "priority": "high"})
        check(status == 400 and out["error"]["param"] == "priority", f"{status} {out}")
    with Server(STORIES_GGUF, *CHAT) as srv:
        status, out = srv.post_json("/v1/responses", {"input": "Hi", "priority": 7})
        check(status == 400 and "Priority scheduling is not enabled" in out["error"]["message"],
              f"responses under fcfs: {status} {out}")


if __name__ == "__main__":
    run([test_priority_is_taken_with_the_priority_policy,
         test_refused_fields_are_400s_naming_them,
         test_honoured_sampling_fields,
         test_request_id_header_first_and_no_engine_collision,
         test_continuous_usage_stats_in_every_chunk,
         test_cache_salt_isolates_the_prefix_cache,
         test_unknown_fields_are_named_in_one_warning,
         test_chat_extras_documents_effort_template_and_include_reasoning,
         test_several_prompts_give_n_choices_each_indexed_as_vllm,
         test_prompt_logprobs_and_echo_equal_a_teacher_forced_run,
         test_min_tokens_holds_off_stop_strings,
         test_minus_one_asks_for_the_whole_vocabulary_with_no_cap])
