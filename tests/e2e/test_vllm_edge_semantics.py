"""vLLM's semantics at the edges (issue 17, item 5), one row per case: each checks the status,
the message and that the server then serves a normal request."""
import json

from harness import STORIES_GGUF, STORIES_GOLDEN, Server, check, golden_cases, run


def serves_normally(srv):
    status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
    check(status == 200 and body["choices"][0]["text"], f"then a normal request: {status} {body}")


def test_an_empty_prompt_is_bos_alone_as_llama2c_runs_it():
    # llama2.c's no-prompt run (`./run stories260K.bin -t 0.0 -n 200`) is the first golden case:
    # prompt "" → [BOS], and the greedy ids it published.
    case = golden_cases(STORIES_GOLDEN, "generation")[0]
    check(case["prompt"] == "" and case["prompt_ids"] == [1], f"the no-prompt case: {case}")
    with Server(STORIES_GGUF) as srv:
        status, body = srv.post_json("/v1/completions", {
            "prompt": "", "max_tokens": len(case["generated_ids"]), "temperature": 0,
            "return_token_ids": True})
        check(status == 200, f"{status} {body}")
        choice = body["choices"][0]
        check(choice["prompt_token_ids"] == [1] and body["usage"]["prompt_tokens"] == 1,
              f"prompt ids {choice['prompt_token_ids']}")
        check(choice["token_ids"] == case["generated_ids"],
              f"got {choice['token_ids'][:12]}…, llama2.c {case['generated_ids'][:12]}…")
        status, body = srv.post_json("/tokenize", {"prompt": ""})
        check(status == 200 and body["tokens"] == [1], f"/tokenize '': {status} {body}")
        # A prompt of no tokens at all is still refused (vLLM: the decoder prompt cannot be
        # empty): token ids [], or "" without BOS.
        for prompt, extra in (([], {}), ("", {"add_special_tokens": False})):
            status, body = srv.post_json("/v1/completions",
                                         {"prompt": prompt, "max_tokens": 2, **extra})
            check(status == 400 and body["error"]["param"] == "prompt", f"{prompt!r}: {body}")
        serves_normally(srv)


def test_unknown_v1_paths_need_the_key_first():
    with Server(STORIES_GGUF, "--api-key", "sk-test") as srv:
        for method, path in (("GET", "/v1/nothing-here"), ("POST", "/v1/completions/x"),
                             ("GET", "/v1")):
            status, _, body = srv.request(method, path)
            check(status == 401 and "API key" in json.loads(body)["error"]["message"],
                  f"{method} {path} without the key: {status} {body[:200]}")
            status, _, body = srv.request(method, path, headers={"Authorization": "Bearer sk-test"})
            check(status == 404, f"{method} {path} with the key: {status} {body[:200]}")
        status, _, _ = srv.request("GET", "/health")
        check(status == 200, "non-/v1 paths stay open")
        status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2},
                                     headers={"Authorization": "Bearer sk-test"})
        check(status == 200, f"{status} {body}")


def test_integers_past_int64_are_reported_as_written():
    with Server(STORIES_GGUF) as srv:
        rows = [  # (raw JSON body, param, message part)
            ('{"prompt": [9223372036854775808], "max_tokens": 2}', "prompt",
             "token id 9223372036854775808 in 'prompt' is out of vocabulary"),
            ('{"prompt": "Once", "max_tokens": 18446744073709551615}', "max_tokens",
             "got 18446744073709551615"),
            ('{"prompt": "Once", "max_tokens": 2, "allowed_token_ids": [18446744073709551615]}',
             "allowed_token_ids", "token id 18446744073709551615"),
            ('{"prompt": "Once", "max_tokens": 2, "n": 9223372036854775809}', "n",
             "got 9223372036854775809"),
        ]
        for raw, param, words in rows:
            status, _, body = srv.request("POST", "/v1/completions", raw=raw.encode())
            err = json.loads(body)["error"]
            check(status == 400 and err["param"] == param and words in err["message"] and
                  "-9223372036854775808" not in err["message"] and "got -1" not in err["message"],
                  f"{raw}: {status} {err}")
        # A seed in the upper half of the 64-bit range is a seed like any other.
        out = []
        for _ in range(2):
            status, body = srv.post_json("/v1/completions", {
                "prompt": "Once", "max_tokens": 8, "temperature": 1, "seed": 18446744073709551615})
            check(status == 200, f"{status} {body}")
            out.append(body["choices"][0]["text"])
        check(out[0] == out[1], f"a seeded request repeats: {out}")
        serves_normally(srv)


def test_whole_responses_carry_vllms_null_fields():
    chat_template = STORIES_GGUF.rsplit("/", 2)[0] + "/chat-templates/Qwen-Qwen2.5-7B-Instruct.jinja"
    with Server(STORIES_GGUF, "--chat-template", chat_template) as srv:
        status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
        check(status == 200 and "system_fingerprint" in body and body["system_fingerprint"] is None
              and body["choices"][0]["prompt_logprobs"] is None, f"completions: {body}")
        status, body = srv.post_json("/v1/chat/completions", {
            "messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
        check(status == 200 and body["system_fingerprint"] is None and
              "prompt_logprobs" in body and body["prompt_logprobs"] is None, f"chat: {body}")


if __name__ == "__main__":
    run([test_an_empty_prompt_is_bos_alone_as_llama2c_runs_it,
         test_unknown_v1_paths_need_the_key_first,
         test_integers_past_int64_are_reported_as_written,
         test_whole_responses_carry_vllms_null_fields])
