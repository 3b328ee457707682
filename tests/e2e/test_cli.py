"""Flags: vLLM spellings parse, the seed deployment's flags are accepted or refused by name,
--help lists defaults and env vars, a bad model file stops start-up naming the file."""
import os
import subprocess
import tempfile

from harness import BIN, STORIES_GGUF, Server, check, run


def serve_fails(*args):
    p = subprocess.run([BIN, "serve", *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


def test_help_lists_flags_defaults_and_env():
    out = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True).stdout
    for needle in ("--max-num-seqs", "256", "TANDEM_MAX_NUM_SEQS", "--api-key", "TANDEM_API_KEY",
                   "--no-enable-prefix-caching", "--block-size", "--kv-cache-memory-bytes",
                   "--config"):
        check(needle in out, f"{needle} missing from serve --help")
    top = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    check("serve" in top and "bench" in top, "tandem --help lacks commands")


def test_unsupported_parallel_flags_are_refused_by_name():
    # MTP drafting needs a model with MTP layers (stories260K has none).
    for args, flag in ((["--speculative_config",
                         '{"method":"qwen3_5_mtp","num_speculative_tokens":1}'],
                        "--speculative-config"),):
        code, out = serve_fails(STORIES_GGUF, *args)
        check(code != 0 and flag in out and "MTP layers" in out,
              f"{args}: code {code}: {out[-300:]}")


def test_inconsistent_data_parallel_flags_are_refused_by_name():
    for args, needle in ((["--headless"], "--data-parallel-address"),
                         (["--headless", "--data-parallel-address", "127.0.0.1",
                           "--data-parallel-size", "2", "--data-parallel-start-rank", "1",
                           "--api-server-count", "2"], "--api-server-count"),
                         (["--data-parallel-size", "2", "--data-parallel-size-local", "1"],
                          "--data-parallel-address"),
                         (["--data-parallel-size", "2", "--data-parallel-start-rank", "2",
                           "--headless", "--data-parallel-address", "127.0.0.1"],
                          "--data-parallel-start-rank"),
                         (["--api-server-count", "0"], "--api-server-count"),
                         (["--tensor-parallel-size", "0"], "--tensor-parallel-size"),
                         (["--config", "a.yaml", "--config=b.yaml"],
                          "--config is given more than once")):
        code, out = serve_fails(STORIES_GGUF, *args)
        check(code != 0 and needle in out, f"{args}: code {code}: {out[-300:]}")


def test_seed_flags_parse_in_all_spellings():
    # The single-rank subset of the seed deployment, in its mixed spellings.
    with Server(STORIES_GGUF, "--seed=1024", "--max-num-seqs=16", "--max-model-len=512",
                "--max_num_batched_tokens", "256", "--gpu-memory-utilization=0.90",
                "--trust-remote-code", "--async-scheduling", "--no-enable-prefix-caching",
                "--compilation-config", '{"cudagraph_mode":"FULL_DECODE_ONLY"}',
                "--additional-config", '{"enable_cpu_binding":true}',
                "--disable-access-log-for-endpoints", "/health,/metrics,/ping") as srv:
        status, body = srv.post_json("/v1/completions",
                                     {"model": STORIES_GGUF, "prompt": "Once", "max_tokens": 3})
        check(status == 200, f"{status} {body}")
        logs = srv.logs()
        check("no effect on CPU" in logs, "ineffective flags not logged")


def test_bad_model_file_stops_startup_naming_it():
    with tempfile.NamedTemporaryFile(suffix=".gguf", delete=False) as f:
        f.write(open(STORIES_GGUF, "rb").read()[:5000])
        path = f.name
    try:
        code, out = serve_fails(path)
        check(code != 0 and path in out, f"truncated gguf: code {code}: {out[-400:]}")
        code, out = serve_fails("/nonexistent/model.gguf")
        check(code != 0 and "/nonexistent/model.gguf" in out, f"missing model: {out[-300:]}")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    run([test_help_lists_flags_defaults_and_env, test_unsupported_parallel_flags_are_refused_by_name,
         test_inconsistent_data_parallel_flags_are_refused_by_name,
         test_seed_flags_parse_in_all_spellings, test_bad_model_file_stops_startup_naming_it])
