"""Start-up with each vLLM serve flag of issue 16, one flag per run with a typical value: the
server comes up, answers GET /v1/models and one short completion, and its log has the line
saying what it did with the flag (honoured, or accepted with no effect here and why); or, for
a feature tandem has not built, start-up stops with a non-zero code and a message naming the
flag. One table, one row per flag (the flags' behaviour in depth: test_vllm_flags.py)."""
import atexit
import collections
import os
import shutil
import subprocess
import tempfile

from harness import BIN, MODELS, STORIES_GGUF, STORIES_MOE_GGUF, Server, check, run

W8A8_ASCEND = os.path.join(MODELS, "stories260k-w8a8")
W8A8_CT = os.path.join(MODELS, "tiny-qwen3-w8a8-ct")

# --config's file: two flags from it, one of them a k-suffixed length as YAML carries it.
CONFIG_DIR = tempfile.mkdtemp(prefix="tandem-startup-flags-")
atexit.register(shutil.rmtree, CONFIG_DIR, ignore_errors=True)
CONFIG_YAML = os.path.join(CONFIG_DIR, "serve.yaml")
with open(CONFIG_YAML, "w") as f:
    f.write("max_model_len: 1k\nenable-prefix-caching: false\n")

# The flags as issue 16 lists them (its start-up paragraph), less --ssl-keyfile/--ssl-certfile
# (test_tls.py starts HTTPS servers): each must have exactly one row below.
ISSUE_FLAGS = [
    "--enable-chunked-prefill", "--no-enable-chunked-prefill", "--kv-cache-dtype",
    "--quantization", "-q", "-pp", "--swap-space", "--cpu-offload-gb", "--enforce-eager",
    "--disable-log-stats", "--enable-log-requests", "--enable-prompt-tokens-details",
    "--enable-server-load-tracking", "--enable-request-id-headers",
    "--override-generation-config", "--allowed-origins", "--allowed-methods", "--allowed-headers",
    "--allow-credentials", "--root-path", "--uvicorn-log-level", "--scheduling-policy",
    "--distributed-executor-backend", "--data-parallel-backend", "--data-parallel-hybrid-lb",
    "--data-parallel-external-lb", "--data-parallel-rank", "--config", "-dpl", "-dpa", "-dpp",
    "-dpr", "-ep", "--max-model-len", "--dtype",
]
# vLLM flags with a row here that the issue does not list.
EXTRA_FLAGS = ["--disable-log-requests", "-dpn"]

Row = collections.namedtuple("Row", "args model serves needles")


def logs(args, *needles, model=STORIES_GGUF):
    """The server comes up with `args` and its log contains every needle."""
    return Row(args, model, True, needles)


def refused(args, needle):
    """Start-up stops (non-zero exit) with `needle`, which names the flag, in its output."""
    return Row(args, STORIES_GGUF, False, (needle,))


NO_EFFECT_ONE_RANK = "accepted; no effect with one DP rank (its API servers serve it)"

STARTUP = [
    logs(["--enable-chunked-prefill"], "Chunked prefill is enabled with max_num_batched_tokens=2048."),
    logs(["--no-enable-chunked-prefill"],
         "--no-enable-chunked-prefill accepted; no effect: long prompts are always prefilled in "
         "chunks of --max-num-batched-tokens"),
    logs(["--kv-cache-dtype", "bfloat16"], "320.0 MiB, BF16 from --kv-cache-dtype bfloat16)"),
    logs(["--quantization", "ascend"],
         "stories260k-w8a8: 35 int8 W8A8 Linears (msModelSlim quant_model_description.json, "
         "--quantization ascend)", model=W8A8_ASCEND),
    logs(["-q", "compressed-tensors"],
         "int8 W8A8 Linears (compressed-tensors, --quantization compressed-tensors)",
         model=W8A8_CT),
    logs(["-pp", "1"], "--pipeline-parallel-size 1: one pipeline stage, every rank holds all "
                       "layers"),
    logs(["--swap-space", "4"], "--swap-space accepted; it has no effect on CPU"),
    logs(["--cpu-offload-gb", "0"], "--cpu-offload-gb accepted; it has no effect on CPU"),
    logs(["--enforce-eager"], "--enforce-eager accepted; it has no effect on CPU"),
    logs(["--disable-log-stats"],
         "--disable-log-stats accepted; tandem logs no periodic stats (see /metrics)"),
    logs(["--disable-log-requests"],
         "--disable-log-requests accepted; no effect: requests are logged only with "
         "--enable-log-requests (not given)"),
    logs(["--enable-log-requests"],
         "--enable-log-requests: each request is logged as it reaches the engine",
         "Received request cmpl-"),
    logs(["--enable-prompt-tokens-details"],
         "--enable-prompt-tokens-details: usage.prompt_tokens_details.cached_tokens counts the "
         "prompt tokens served from the prefix cache"),
    logs(["--enable-server-load-tracking"],
         "--enable-server-load-tracking: GET /load counts the generation requests this API "
         "server holds"),
    logs(["--enable-request-id-headers"],
         "--enable-request-id-headers: responses carry X-Request-Id"),
    logs(["--override-generation-config", '{"temperature": 0.5}'],
         "default sampling from generation_config.json and --override-generation-config: "
         "temperature=0.5"),
    logs(["--allowed-origins", '["http://app.example"]'],
         'CORS: --allowed-origins ["http://app.example"], --allowed-methods ["*"]'),
    logs(["--allowed-methods", '["GET", "POST"]'], '--allowed-methods ["GET", "POST"], '),
    logs(["--allowed-headers", '["Authorization", "Content-Type"]'],
         '--allowed-headers ["Authorization", "Content-Type"], --allow-credentials off'),
    logs(["--allow-credentials"], "--allow-credentials on: the origin is echoed instead of *"),
    logs(["--root-path", "/llm"], "--root-path /llm: requests under it are served as if it "
                                  "were absent"),
    logs(["--uvicorn-log-level", "warning"],
         "--uvicorn-log-level warning accepted; no effect (tandem's HTTP server is not uvicorn"),
    logs(["--scheduling-policy", "priority"],
         "--scheduling-policy priority: waiting requests are admitted by their priority field "
         "(lower first), then arrival"),
    logs(["--distributed-executor-backend", "mp"],
         "--distributed-executor-backend mp accepted: tandem runs its ranks as processes"),
    logs(["--data-parallel-backend", "mp"], "--data-parallel-backend mp: DP ranks run as processes"),
    logs(["--data-parallel-hybrid-lb"], "--data-parallel-hybrid-lb " + NO_EFFECT_ONE_RANK),
    logs(["--data-parallel-external-lb"], "--data-parallel-external-lb " + NO_EFFECT_ONE_RANK),
    refused(["--data-parallel-rank", "1"],
            "--data-parallel-rank 1 must be in [0, --data-parallel-size 1)"),
    logs(["--config", CONFIG_YAML],
         f"--config {CONFIG_YAML}: took max-model-len, enable-prefix-caching from the file",
         "max_model_len 1000, ", "prefix caching off"),
    logs(["-dpl", "1"], "--data-parallel-size-local 1: DP rank(s) 0..0 of 1 run on this machine"),
    logs(["-dpa", "127.0.0.1"],
         "--data-parallel-address 127.0.0.1 accepted; no effect with one DP rank and one API "
         "server"),
    logs(["-dpp", "13389"],
         "--data-parallel-rpc-port 13389 accepted; no effect with one DP rank and one API server"),
    # vLLM's short forms: -dpr is --data-parallel-start-rank, -dpn --data-parallel-rank.
    refused(["-dpr", "1"], "--data-parallel-start-rank 1 must be in [0, --data-parallel-size 1)"),
    logs(["-dpn", "0"], "--data-parallel-rank " + NO_EFFECT_ONE_RANK),
    logs(["-ep"], "--enable-expert-parallel: one rank (DP 1 x TP 1) holds all 8 experts of each "
                  "MoE layer; nothing to split", model=STORIES_MOE_GGUF),
    logs(["--max-model-len", "1k"], "max_model_len 1000, "),
    logs(["--dtype", "half"], f"--dtype: Linear and embedding weights of {STORIES_GGUF} "
                              "converted to F16 at load"),
]


def test_the_table_has_one_row_for_each_flag_of_the_issue():
    flags = collections.Counter(row.args[0] for row in STARTUP)
    for flag in ISSUE_FLAGS + EXTRA_FLAGS:
        check(flags[flag] == 1, f"{flag}: {flags[flag]} rows, want exactly 1")
    check(set(flags) == set(ISSUE_FLAGS + EXTRA_FLAGS),
          f"rows for flags outside the list: {set(flags) - set(ISSUE_FLAGS + EXTRA_FLAGS)}")


def serves_and_logs(row):
    """'' if the server comes up with row.args, serves, and logs every needle; else why not."""
    with Server(row.model, *row.args) as srv:
        status, _, body = srv.request("GET", "/v1/models")
        if status != 200:
            return f"/v1/models: {status} {body[:200]}"
        status, out = srv.post_json("/v1/completions",
                                    {"model": row.model, "prompt": "Once", "max_tokens": 2,
                                     "ignore_eos": True})
        if status != 200 or out["usage"]["completion_tokens"] != 2:
            return f"a completion: {status} {str(out)[:300]}"
        log = srv.full_log()
    missing = [n for n in row.needles if n not in log]
    return f"no {missing} in the log:\n{log[-3000:]}" if missing else ""


def test_each_flag_alone_starts_the_server_and_logs_what_it_did():
    failures = []
    for row in STARTUP:
        if row.serves:
            why = serves_and_logs(row)
            if why:
                failures.append(f"{row.args}: {why}")
    check(not failures, "\n".join(failures))


def test_each_flag_of_a_feature_not_built_stops_start_up_naming_it():
    failures = []
    for row in STARTUP:
        if not row.serves:
            p = subprocess.run([BIN, "serve", row.model, *row.args], capture_output=True,
                               text=True, timeout=60)
            out = p.stdout + p.stderr
            if p.returncode == 0 or row.needles[0] not in out:
                failures.append(f"{row.args}: code {p.returncode}, want '{row.needles[0]}':\n"
                                f"{out[-600:]}")
    check(not failures, "\n".join(failures))


if __name__ == "__main__":
    run([test_the_table_has_one_row_for_each_flag_of_the_issue,
         test_each_flag_alone_starts_the_server_and_logs_what_it_did,
         test_each_flag_of_a_feature_not_built_stops_start_up_naming_it])
