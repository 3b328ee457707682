"""vLLM launch scripts run unchanged: each vLLM serve flag tandem takes is honoured (the server
comes up and does it), logged as having no effect here with the reason, or refused at start-up
naming the flag. One server per row. Each flag of issue 16 alone at start-up, with the line it
logs: test_vllm_startup_flags.py; here the refusals of other values and the flags' behaviour."""
import json
import os
import re
import subprocess
import tempfile
import threading
import time

from harness import BIN, STORIES_GGUF, STORIES_MOE_GGUF, Server, check, run


def serve_fails(*args):
    p = subprocess.run([BIN, "serve", *args], capture_output=True, text=True, errors="replace",
                       timeout=60)
    return p.returncode, p.stdout + p.stderr


def models(srv):
    status, _, body = srv.request("GET", "/v1/models")
    check(status == 200, f"/v1/models: {status} {body[:300]}")
    return json.loads(body)["data"]


# Features tandem has not built: start-up stops naming the flag.
REFUSED = [
    (["-pp", "2"], "--pipeline-parallel-size 2: pipeline parallelism is not built"),
    (["--distributed-executor-backend", "ray"], "--distributed-executor-backend ray is not built"),
    (["--data-parallel-backend", "ray"], "--data-parallel-backend ray is not built"),
    (["-dpb", "ray"], "--data-parallel-backend ray is not built"),
    (["--override-generation-config", "[1]"], "--override-generation-config must be a JSON object"),
    (["--root-path", "llm"], "--root-path 'llm' must start with '/'"),
    (["--max-model-len", "32k"],
     "--max-model-len 32000 exceeds the model's context length 2048"),  # vLLM's 32k is 32000
    (["--max-model-len", "3x"], "--max-model-len '3x' is not an integer"),
    (["--max-model-len", "1.5K"], "--max-model-len '1.5K' is not an integer"),
    (["--max-model-len", ".k"], "--max-model-len '.k' is not an integer"),
    (["--max-model-len", "9" * 400 + "k"], "is not an integer"),
    (["--max-num-batched-tokens", "-.m"], "--max-num-batched-tokens '-.m' is not an integer"),
    (["--override-generation-config", '{"top_p": 7}'],
     "--override-generation-config: 'top_p' must be a number in (0, 1], got 7"),
    (["--override-generation-config", '{"temperature": "hot"}'],
     "--override-generation-config: 'temperature' must be a number >= 0"),
    (["--override-generation-config", '{"top_k": 99999999999}'],
     "--override-generation-config: 'top_k' must be an integer"),
    (["--config", "/nonexistent/config.yaml"], "--config '/nonexistent/config.yaml': cannot read"),
    (["--allowed-origins", "http://a.example"], "--allowed-origins must be a JSON list of strings"),
]


def test_features_not_built_are_refused_by_name():
    for args, needle in REFUSED:
        code, out = serve_fails(STORIES_GGUF, *args)
        check(code != 0 and needle in out, f"{args}: code {code}, wanted '{needle}':\n{out[-600:]}")


def test_human_readable_lengths_short_forms_and_root_path():
    # 0.5k = 500 (vLLM: lowercase suffixes are powers of 1000, uppercase of 1024).
    with Server(STORIES_GGUF, "--max-model-len", "0.5k", "--max-num-batched-tokens", "4.1k",
                "-pp", "1", "-dpl", "1", "--root-path", "/llm", "--served-model-name", "s") as srv:
        check(models(srv)[0]["max_model_len"] == 500, f"0.5k: {models(srv)}")
        check("max_num_batched_tokens 4100" in srv.full_log(), "4.1k is exactly 4100")
        check("--root-path /llm" in srv.full_log(), "the root path is logged")
        # Under the prefix and without it, as vLLM serves both.
        for path in ("/llm/v1/completions", "/v1/completions"):
            status, body = srv.post_json(path, {"model": "s", "prompt": "Once", "max_tokens": 2})
            check(status == 200, f"{path}: {status} {body}")
        status, _, _ = srv.request("GET", "/llmx/v1/models")
        check(status == 404, f"a path that only starts with the prefix's letters: {status}")
    with Server(STORIES_MOE_GGUF, "-ep", "--served-model-name", "moe") as srv:
        check(models(srv)[0]["id"] == "moe" and
              "--enable-expert-parallel: one rank (DP 1 x TP 1) holds all 8 experts" in
              srv.full_log(), f"-ep starts the MoE model and says what it split:\n{srv.logs()}")


def test_override_generation_config_sets_the_defaults():
    with Server(STORIES_GGUF, "--override-generation-config",
                '{"temperature": 0.0, "top_k": 1}') as srv:
        check("default sampling from generation_config.json and --override-generation-config: "
              "temperature=0.0, top_k=1" in srv.full_log(), srv.logs())
        # temperature 0 by default: two requests without sampling fields answer alike.
        answers = [srv.post_json("/v1/completions", {"model": STORIES_GGUF, "prompt": "Once",
                                                      "max_tokens": 12})[1] for _ in range(2)]
        check(answers[0]["choices"][0]["text"] == answers[1]["choices"][0]["text"], answers)


def test_config_yaml_gives_flags_and_the_command_line_wins():
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("# vLLM's config file: flag names as keys\n"
                "max_model_len: 256\n"
                "served-model-name:\n  - first\n  - second\n"
                "enable_prefix_caching: false\n"
                "max-num-seqs: 8\n"
                "seed: 1\n")
        path = f.name
    try:
        with Server(STORIES_GGUF, "--config", path, "--max-num-seqs", "4") as srv:
            data = models(srv)
            check([m["id"] for m in data] == ["first", "second"] and data[0]["max_model_len"] == 256,
                  f"the file's flags: {data}")
            log = srv.full_log()
            check("max_num_seqs 4" in log and "prefix caching off" in log, f"{srv.logs()}")
        with open(path, "w") as f:
            f.write("- not\n- a mapping\n")
        code, out = serve_fails(STORIES_GGUF, "--config", path)
        check(code != 0 and "expected a mapping of flag names" in out, out[-400:])
        # Scalars reach the flags as written: 007 stays a name, not the number 7.
        with open(path, "w") as f:
            f.write("served_model_name: [007, '1.10']\n")
        with Server(STORIES_GGUF, "--config", path) as srv:
            check([m["id"] for m in models(srv)] == ["007", "1.10"], f"{models(srv)}")
        for text, needle in (("a: &x [*x]\n", "nested more than 64 levels"),
                             ("? [a, b]\n: 1\n", "a key that is not a flag name")):
            with open(path, "w") as f:
                f.write(text)
            code, out = serve_fails(STORIES_GGUF, "--config", path)
            check(code != 0 and needle in out, f"{text!r}: {code} {out[-400:]}")
        # Not a regular file: refused at once (a FIFO would block start-up before signals work).
        fifo = path + ".fifo"
        os.mkfifo(fifo)
        try:
            for target in (os.path.dirname(path), fifo):
                code, out = serve_fails(STORIES_GGUF, "--config", target)
                check(code != 0 and "not a regular file" in out, f"{target}: {code} {out[-400:]}")
        finally:
            os.unlink(fifo)
        with open(path, "w") as f:
            f.write("max_model_len: 256\nno_such_flag: 3\n")
        code, out = serve_fails(STORIES_GGUF, "--config", path)
        check(code != 0 and "no-such-flag" in out, f"an unknown key is refused by name: {out[-400:]}")
    finally:
        os.unlink(path)


# YAML that vLLM's reader refuses or takes another way (malformed merges, several documents):
# start-up stops naming the file and the construct. (name, file text, message parts).
CONFIG_REFUSED = [
    ("a merge of a scalar", "<<: 5\nseed: 1\n",
     ("a merge key ('<<') takes a mapping or a list of mappings",)),
    ("a merge of a list holding a scalar inside a flag's mapping",
     "speculative_config:\n  <<: [{method: ngram}, 3]\n  num_speculative_tokens: 2\n",
     ("key 'speculative_config': a merge key ('<<') takes a mapping",)),
    ("a second document", "max_model_len: 256\n---\nmax_model_len: 64\n",
     ("holds 2 YAML documents", "remove the '---' line")),
    # A few anchors standing for 10^10 values ("billion laughs"): refused before expanding.
    ("an alias bomb", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 10)) +
     "served-model-name: *a9\n", ("aliases expand to more than 100000 values",)),
    # Merge keys chained 30 deep, each merging the previous ten times: 10^30 visits.
    ("a chain of merges", "m0: &m0 {k0: 1}\n" + "".join(
        f"m{i}: &m{i} {{<<: [{', '.join([f'*m{i - 1}'] * 10)}], k{i}: 1}}\n"
        for i in range(1, 31)) + "<<: *m30\n", ("aliases expand to more than 100000 values",)),
    # "--KEY=VALUE" is what a key becomes: a key holding '=' or a space would smuggle a value
    # past "the command line wins".
    ("a key holding '='", '"served-model-name=evil": x\n', ("key 'served-model-name=evil': not a "
                                                            "flag name",)),
    ("a key holding a space", '"max-num-seqs 4": 8\n', ("key 'max-num-seqs 4': not a flag name",)),
    ("help", "help: true\n", ("key 'help': not a setting",)),
    ("a value that is not UTF-8", b"served-model-name: \xff\xfeabc\n", ("is not valid UTF-8",)),
]


def test_config_yaml_merge_keys_work_and_second_documents_stop_start_up():
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        path = f.name
    try:
        for name, text, needles in CONFIG_REFUSED:
            with open(path, "wb" if isinstance(text, bytes) else "w") as f:
                f.write(text)
            code, out = serve_fails(STORIES_GGUF, "--config", path)
            check(code == 2 and f"--config '{path}'" in out and all(n in out for n in needles),
                  f"{name}: code {code}, wanted 2 and {needles}:\n{out[-600:]}")
        # What CLI11 refuses among the file's flags: exit 2 (argparse's), naming the file.
        for text, needle in (("no_such_flag: 3\n", "no-such-flag"),
                             ("max_num_seqs: many\n", "max-num-seqs")):
            with open(path, "w") as f:
                f.write(text)
            code, out = serve_fails(STORIES_GGUF, "--config", path)
            check(code == 2 and f"(--{needle} came from --config '{path}')" in out,
                  f"{text!r}: code {code}:\n{out[-600:]}")
        code, out = serve_fails(STORIES_GGUF, "--config", "")
        check(code == 2 and "--config '': no file named" in out, f"--config '': {code} {out[-400:]}")
        # Anchors and aliases are plain YAML and work.
        with open(path, "w") as f:
            f.write("max_model_len: &len 256\nmax_num_batched_tokens: *len\n")
        with Server(STORIES_GGUF, "--config", path) as srv:
            check(models(srv)[0]["max_model_len"] == 256, f"{models(srv)}")
            check("max_num_batched_tokens 256" in srv.full_log(), srv.logs())
            status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
            check(status == 200 and body["choices"][0]["text"], f"{status} {body}")
        # Merge keys as PyYAML (vLLM's yaml.safe_load) resolves them: of a list of mappings the
        # first listed wins, and the mapping's own keys win over every merged one.
        with open(path, "w") as f:
            f.write("<<: [{max_model_len: 256, max_num_batched_tokens: 512},\n"
                    "     {max_model_len: 128, max_num_seqs: 4}]\n"
                    "max_num_batched_tokens: 384\n")
        with Server(STORIES_GGUF, "--config", path) as srv:
            check(models(srv)[0]["max_model_len"] == 256, f"the first merged wins: {models(srv)}")
            log = srv.full_log()
            check("max_num_seqs 4" in log and "max_num_batched_tokens 384" in log,
                  f"merged and own keys: {srv.logs()}")
            status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 2})
            check(status == 200 and body["choices"][0]["text"], f"{status} {body}")
    finally:
        os.unlink(path)


def test_server_load_and_request_id_headers():
    with Server(STORIES_GGUF) as srv:
        status, _, body = srv.request("GET", "/load")
        check(status == 200 and json.loads(body) == {"server_load": 0}, f"/load off: {body}")
        _, headers, _ = srv.request("POST", "/v1/completions",
                                    {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 2})
        check("X-Request-Id" not in headers, f"no X-Request-Id without the flag: {headers}")
    with Server(STORIES_GGUF, "--enable-server-load-tracking", "--enable-request-id-headers",
                "--max-num-seqs", "1", "--max-model-len", "512") as srv:
        # Four long requests, one running at a time: /load sees them while they are held.
        body = {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 480, "ignore_eos": True}
        done = threading.Event()
        results = []

        def burst():
            results.extend(srv.post_all_at_once("/v1/completions", [body] * 4))
            done.set()
        threading.Thread(target=burst, daemon=True).start()
        peak, started = 0, time.time()
        while not done.is_set():  # polls until the burst ends
            status, _, out = srv.request("GET", "/load")
            peak = max(peak, json.loads(out)["server_load"])
            check(time.time() - started < 120, "the burst did not end in 120 s (a hang guard)")
        check(all(s == 200 for s, _ in results), f"the burst: {[s for s, _ in results]}")
        check(peak >= 1, f"/load never saw a request in flight (peak {peak})")
        status, _, out = srv.request("GET", "/load")
        check(json.loads(out) == {"server_load": 0}, f"/load after the burst: {out}")
        # X-Request-Id: the client's echoed; else a new one, on whole and streamed answers.
        _, headers, _ = srv.request("POST", "/v1/completions",
                                    {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 2},
                                    headers={"X-Request-Id": "my-id-42"})
        check(headers.get("X-Request-Id") == "my-id-42", f"echo: {headers}")
        _, headers, _ = srv.request("POST", "/v1/completions",
                                    {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 2,
                                     "stream": True})
        rid = headers.get("X-Request-Id", "")
        check(len(rid) == 32 and all(c in "0123456789abcdef" for c in rid), f"generated: {headers}")


def test_cors_preflight_before_the_key_and_allowed_origins():
    preflight = {"Origin": "http://app.example", "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    with Server(STORIES_GGUF, "--api-key", "k") as srv:
        # vLLM's defaults: any origin, method and header; the preflight needs no key.
        status, headers, body = srv.request("OPTIONS", "/v1/chat/completions", headers=preflight)
        check(status == 200 and headers.get("Access-Control-Allow-Origin") == "*" and
              "POST" in headers.get("Access-Control-Allow-Methods", "") and
              headers.get("Access-Control-Allow-Headers") == "authorization, content-type",
              f"preflight: {status} {headers} {body}")
        status, headers, _ = srv.request("POST", "/v1/completions",
                                         {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 2},
                                         headers={"Origin": "http://app.example",
                                                  "Authorization": "Bearer k"})
        check(status == 200 and headers.get("Access-Control-Allow-Origin") == "*", f"{status} {headers}")
        status, headers, _ = srv.request("GET", "/v1/models")
        check(status == 401 and "Access-Control-Allow-Origin" not in headers, "no Origin, no CORS")
    with Server(STORIES_GGUF, "--allowed-origins", '["http://ok.example"]', "--allow-credentials",
                "--allowed-methods", '["GET", "POST"]') as srv:
        status, headers, body = srv.request("OPTIONS", "/v1/models",
                                            headers=dict(preflight, Origin="http://evil.example"))
        check(status == 400 and b"Disallowed CORS origin" in body, f"{status} {body}")
        status, headers, _ = srv.request("OPTIONS", "/v1/models",
                                         headers=dict(preflight, Origin="http://ok.example"))
        check(status == 200 and headers.get("Access-Control-Allow-Origin") == "http://ok.example"
              and headers.get("Access-Control-Allow-Credentials") == "true"
              and headers.get("Vary") == "Origin"
              and headers.get("Access-Control-Allow-Methods") == "GET, POST", f"{headers}")
        status, headers, body = srv.request("OPTIONS", "/v1/models", headers=dict(
            preflight, Origin="http://ok.example", **{"Access-Control-Request-Method": "DELETE"}))
        check(status == 400 and b"Disallowed CORS method" in body, f"{status} {body}")


def test_enable_log_requests_logs_each_request_and_max_log_len_cuts_its_prompt():
    body = {"model": STORIES_GGUF, "prompt": "Lily and Ben went to the park", "max_tokens": 3,
            "temperature": 0, "seed": 7}
    with Server(STORIES_GGUF) as srv:
        check(srv.post_json("/v1/completions", body)[0] == 200, "completion")
        check("Received request" not in srv.full_log(), "logged without --enable-log-requests")
    with Server(STORIES_GGUF, "--enable-log-requests", "--max-log-len", "5",
                env={"TANDEM_LOG_LEVEL": "debug"}) as srv:
        status, out = srv.post_json("/v1/completions", body)
        check(status == 200, f"{status} {out}")
        log = srv.full_log()
        received = re.search(r"Received request (cmpl-\S+): params: SamplingParams\(n=1, "
                             r"presence_penalty=0\.0, .*temperature=0\.0, .*seed=7, .*"
                             r"max_tokens=3, .*\), lora_request: None\.", log)
        check(received, f"no INFO line for the request:\n{srv.logs()}")
        details = re.search(r"Request " + re.escape(received.group(1)) +
                            r" details: prompt: '(.*)', prompt_token_ids: \[([0-9, ]*)\], "
                            r"prompt_embeds shape: None\.", log)
        check(details, f"no DEBUG line with the prompt:\n{srv.logs()}")
        check(len(details.group(1)) <= 5 and len(details.group(2).split(", ")) == 5,
              f"--max-log-len 5: {details.group(0)}")


def test_prompt_tokens_details_only_with_the_flag():
    body = {"model": STORIES_GGUF, "prompt": "Once upon a time", "max_tokens": 2}
    with Server(STORIES_GGUF) as srv:
        status, out = srv.post_json("/v1/completions", body)
        check(status == 200 and out["usage"].get("prompt_tokens_details") is None,
              f"vLLM leaves prompt_tokens_details null without the flag: {out}")
    with Server(STORIES_GGUF, "--enable-prompt-tokens-details") as srv:
        status, out = srv.post_json("/v1/completions", body)
        check(status == 200 and out["usage"]["prompt_tokens_details"] == {"cached_tokens": 0},
              f"{out}")
        status, events, done = srv.stream("/v1/completions", dict(
            body, stream=True, stream_options={"include_usage": True}))
        usage = [e["usage"] for e in events if e.get("usage")]
        check(status == 200 and done and usage and
              usage[-1]["prompt_tokens_details"] == {"cached_tokens": 0}, f"{events}")


if __name__ == "__main__":
    run([test_features_not_built_are_refused_by_name,
         test_human_readable_lengths_short_forms_and_root_path,
         test_override_generation_config_sets_the_defaults,
         test_config_yaml_gives_flags_and_the_command_line_wins,
         test_config_yaml_merge_keys_work_and_second_documents_stop_start_up,
         test_server_load_and_request_id_headers,
         test_cors_preflight_before_the_key_and_allowed_origins,
         test_enable_log_requests_logs_each_request_and_max_log_len_cuts_its_prompt,
         test_prompt_tokens_details_only_with_the_flag])
