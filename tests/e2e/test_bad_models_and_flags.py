"""A broken model file or flag stops `tandem serve` at start-up with one message that names the
file, key, tensor or flag, what was expected and what was found: never an allocation storm, a
crash, a hang or a server that answers "" (issue 17, item 4 and the flags of item 5).

One row per case. Each row builds its broken copy in a temp folder from ../shared (never written
there), runs `tandem serve` under a 4 GiB address-space limit (an allocation storm fails the
row instead of filling the machine) and a 60 s deadline (a hang fails it too), and checks the exit
code, the message, and that nothing crashed. CONTROLS start the same copies without their defect
under the same limits and serve a request: a refusal is the defect's, not the copying's.
"""
import json
import os
import re
import resource
import shutil
import signal
import struct
import subprocess
import tempfile
import time

from harness import ASAN, BIN, MODELS, STORIES_GGUF, STORIES_HF, Server, check, free_port, run

ADDRESS_SPACE_BYTES = 4 << 30
DEADLINE_S = 60
QWEN3 = os.path.join(MODELS, "tiny-qwen3")
QWEN35 = os.path.join(MODELS, "tiny-qwen3.5-moe")
QWEN35_GGUF = os.path.join(QWEN35, "tiny-qwen3.5-moe-f16.gguf")
PHYSICAL_MEMORY_BYTES = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


# Under AddressSanitizer (scripts/sanitize.sh address sets TANDEM_SANITIZE) no address-space
# limit can be set: ASan reserves ~15 TB of shadow address space at start. There the storm guard
# is ASan's own: past 4 GiB of RSS the process ends with a report (which fails the tier), and an
# allocation it cannot make throws std::bad_alloc as under the limit.
LIMITED_ENV = {"ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") +
               " hard_rss_limit_mb=4096 allocator_may_return_null=1"} if ASAN else {}


def limit_memory():
    if not ASAN:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))


# ---- GGUF files (gguf.md: magic, u32 version, u64 tensor and kv counts, kvs, tensor infos,
# padding to general.alignment, data), read and written back with some values changed.
U32, F32, STRING, ARRAY = 4, 6, 8, 9
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}


def read_gguf(path):
    data, pos = open(path, "rb").read(), 0

    def take(fmt):
        nonlocal pos
        value = struct.unpack_from(fmt, data, pos)[0]
        pos += struct.calcsize(fmt)
        return value

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return data[pos - n:pos].decode("utf-8", "surrogateescape")

    def value(kind):
        if kind == STRING:
            return string()
        if kind == ARRAY:
            item_kind, n = take("<I"), take("<Q")
            return item_kind, [value(item_kind) for _ in range(n)]
        return take(_SCALARS[kind])

    check(data[:4] == b"GGUF", f"{path} is not a GGUF file")
    pos = 4
    version, n_tensors, n_kvs = take("<I"), take("<Q"), take("<Q")
    kvs = {}
    for _ in range(n_kvs):
        key, kind = string(), take("<I")
        kvs[key] = (kind, value(kind))
    tensors = []
    for _ in range(n_tensors):
        name, n_dims = string(), take("<I")
        tensors.append((name, [take("<Q") for _ in range(n_dims)], take("<I"), take("<Q")))
    align = kvs.get("general.alignment", (U32, 32))[1]
    return version, kvs, tensors, data[(pos + align - 1) // align * align:], align


def write_gguf(path, version, kvs, tensors, blob, align):
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)))

    def string(s):
        b = s.encode("utf-8", "surrogateescape")
        out.extend(struct.pack("<Q", len(b)) + b)

    def value(kind, v):
        if kind == STRING:
            string(v)
        elif kind == ARRAY:
            out.extend(struct.pack("<IQ", v[0], len(v[1])))
            for item in v[1]:
                value(v[0], item)
        else:
            out.extend(struct.pack(_SCALARS[kind], v))

    for key, (kind, v) in kvs.items():
        string(key)
        out.extend(struct.pack("<I", kind))
        value(kind, v)
    for name, dims, kind, offset in tensors:
        string(name)
        out.extend(struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims))
        out.extend(struct.pack("<IQ", kind, offset))
    out.extend(b"\0" * (-len(out) % align))
    open(path, "wb").write(bytes(out) + blob)
    return path


def gguf_copy(tmp, source, changes=None, keep_tokens=None):
    """A copy of GGUF `source` in `tmp` with metadata `changes` ({key: (kind, value)}) set and,
    when `keep_tokens` is given, only that many vocabulary entries left."""
    version, kvs, tensors, blob, align = read_gguf(source)
    kvs.update(changes or {})
    if keep_tokens is not None:
        for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
                    "tokenizer.ggml.merges"):
            if key in kvs:
                kind, (item_kind, items) = kvs[key]
                kvs[key] = (kind, (item_kind, items[:keep_tokens]))
    return write_gguf(os.path.join(tmp, "model.gguf"), version, kvs, tensors, blob, align)


# ---- Hugging Face folders: links to the shared files, the edited ones written in full.
def hf_copy(tmp, source, config=None, generation=None, tokenizer=None):
    """A folder in `tmp` linking every file of `source` except its GGUFs; `config`,
    `generation` and `tokenizer` (functions that edit the parsed JSON in place) replace
    config.json, generation_config.json and tokenizer.json with edited copies."""
    folder = os.path.join(tmp, "model")
    os.mkdir(folder)
    for name in os.listdir(source):
        if not name.endswith(".gguf"):
            os.symlink(os.path.join(source, name), os.path.join(folder, name))
    for name, edit in (("config.json", config), ("generation_config.json", generation),
                       ("tokenizer.json", tokenizer)):
        if edit is not None:
            with open(os.path.join(source, name)) as f:
                content = json.load(f)
            edit(content)
            os.unlink(os.path.join(folder, name))
            with open(os.path.join(folder, name), "w") as f:
                json.dump(content, f)
    return folder


def with_fifo(folder, name):
    os.unlink(os.path.join(folder, name))
    os.mkfifo(os.path.join(folder, name))
    return folder


def text_config(config):
    return config.get("text_config", config)


def qwen35_without_layer_types(config, interval):
    del text_config(config)["layer_types"]
    text_config(config)["full_attention_interval"] = interval


# Qwen3.5's default KV budget (262144 tokens x 256 sequences) is more than the 4 GiB limit maps.
QWEN35_ARGS = ["--max-model-len", "512"]

# (name, build(tmp) -> serve arguments, what the message must say ({tmp}: the temp folder)).
MODEL_ROWS = [
    ("gguf_block_count_10_million",
     lambda t: [gguf_copy(t, STORIES_GGUF, {"llama.block_count": (U32, 10_000_000)})],
     "GGUF file '{tmp}/model.gguf' has llama.block_count = 10000000 but tensors for 5 blocks"),
    ("gguf_rms_norm_eps_nan",
     lambda t: [gguf_copy(t, STORIES_GGUF,
                          {"llama.attention.layer_norm_rms_epsilon": (F32, float("nan"))})],
     "GGUF file '{tmp}/model.gguf': llama.attention.layer_norm_rms_epsilon (rms_norm_eps) is "
     "nan; expected a finite number > 0"),
    ("gguf_rms_norm_eps_negative",
     lambda t: [gguf_copy(t, STORIES_GGUF,
                          {"llama.attention.layer_norm_rms_epsilon": (F32, -1.0)})],
     "llama.attention.layer_norm_rms_epsilon (rms_norm_eps) is -1; expected a finite number > 0"),
    ("gguf_rope_theta_zero",
     lambda t: [gguf_copy(t, STORIES_GGUF, {"llama.rope.freq_base": (F32, 0.0)})],
     "GGUF file '{tmp}/model.gguf': llama.rope.freq_base (rope_theta) is 0; expected a finite "
     "number > 0"),
    ("gguf_empty_vocabulary",
     lambda t: [gguf_copy(t, STORIES_GGUF, keep_tokens=0)],
     "GGUF file '{tmp}/model.gguf': tokenizer.ggml.tokens holds 0 tokens but token_embd.weight "
     "has 512 rows; expected one token per row"),
    ("gguf_vocabulary_shorter_than_the_embedding",
     lambda t: [gguf_copy(t, STORIES_GGUF, keep_tokens=10)],
     "tokenizer.ggml.tokens holds 10 tokens but token_embd.weight has 512 rows"),
    ("gguf_qwen35_block_count_10_million",
     lambda t: [gguf_copy(t, QWEN35_GGUF, {"qwen35moe.block_count": (U32, 10_000_000)}),
                *QWEN35_ARGS],
     "GGUF file '{tmp}/model.gguf' has qwen35moe.block_count = 10000000 but tensors for 5 "
     "blocks"),
    ("gguf_qwen35_full_attention_interval_zero",
     lambda t: [gguf_copy(t, QWEN35_GGUF, {"qwen35moe.full_attention_interval": (U32, 0)}),
                *QWEN35_ARGS],
     "GGUF file '{tmp}/model.gguf': Qwen3.5 config: full_attention_interval is 0; expected >= 1"),
    ("hf_num_hidden_layers_a_billion",
     lambda t: [hf_copy(t, STORIES_HF, config=lambda c: c.update(num_hidden_layers=10**9))],
     "'{tmp}/model/config.json': num_hidden_layers is 1000000000 but the checkpoint holds "
     "tensors for 5 layers"),
    ("hf_num_hidden_layers_1e9_written_as_a_float",
     lambda t: [hf_copy(t, STORIES_HF, config=lambda c: c.update(num_hidden_layers=1e9))],
     "'{tmp}/model/config.json': field 'num_hidden_layers' is 1000000000.0; expected an integer"),
    ("hf_qwen3_num_hidden_layers_beyond_int32",
     lambda t: [hf_copy(t, QWEN3, config=lambda c: c.update(num_hidden_layers=10**12))],
     "'{tmp}/model/config.json': num_hidden_layers is 1000000000000 but the checkpoint holds "
     "tensors for 3 layers"),
    ("hf_qwen35_num_hidden_layers_a_billion",
     lambda t: [hf_copy(t, QWEN35, config=lambda c: text_config(c).update(
         num_hidden_layers=10**9)), *QWEN35_ARGS],
     "'{tmp}/model/config.json': num_hidden_layers is 1000000000 but the checkpoint holds "
     "tensors for 4 layers"),
    ("hf_qwen3_rope_theta_zero",
     lambda t: [hf_copy(t, QWEN3, config=lambda c: c.update(rope_theta=0))],
     "'{tmp}/model/config.json': field 'rope_theta' is 0; expected a finite number > 0"),
    ("hf_qwen3_rms_norm_eps_negative",
     lambda t: [hf_copy(t, QWEN3, config=lambda c: c.update(rms_norm_eps=-1e-6))],
     "'{tmp}/model/config.json': field 'rms_norm_eps' is -1e-06; expected a finite number > 0"),
    ("hf_llama_rope_theta_negative",
     lambda t: [hf_copy(t, STORIES_HF, config=lambda c: c.update(rope_theta=-10000.0))],
     "'{tmp}/model/config.json': field 'rope_theta' is -10000.0; expected a finite number > 0"),
    ("hf_qwen35_rope_theta_zero",
     lambda t: [hf_copy(t, QWEN35, config=lambda c: text_config(c)["rope_parameters"].update(
         rope_theta=0)), *QWEN35_ARGS],
     "field 'rope_theta' is 0; expected a finite number > 0"),
    ("hf_qwen35_rms_norm_eps_negative",
     lambda t: [hf_copy(t, QWEN35, config=lambda c: text_config(c).update(rms_norm_eps=-1)),
                *QWEN35_ARGS],
     "field 'rms_norm_eps' is -1; expected a finite number > 0"),
    ("hf_qwen35_full_attention_interval_zero",
     lambda t: [hf_copy(t, QWEN35, config=lambda c: qwen35_without_layer_types(c, 0)),
                *QWEN35_ARGS],
     "full_attention_interval is 0; expected >= 1"),
    ("hf_qwen3_vocab_size_zero",
     lambda t: [hf_copy(t, QWEN3, config=lambda c: c.update(vocab_size=0))],
     "'{tmp}/model/config.json': model config vocab_size must be > 0, got 0"),
    ("hf_tokenizer_with_an_empty_vocabulary",
     lambda t: [hf_copy(t, QWEN3, tokenizer=lambda j: (j["model"].update(vocab={}, merges=[]),
                                                       j.update(added_tokens=[])))],
     "'{tmp}/model/tokenizer.json': byte-level BPE vocab is empty"),
    ("generation_config_top_p_7",
     lambda t: [hf_copy(t, QWEN3, generation=lambda g: g.update(top_p=7))],
     "{tmp}/model/generation_config.json: 'top_p' must be a number in (0, 1], got 7"),
    ("generation_config_temperature_negative",
     lambda t: [hf_copy(t, QWEN3, generation=lambda g: g.update(temperature=-0.5))],
     "{tmp}/model/generation_config.json: 'temperature' must be a number >= 0, got -0.5"),
    ("generation_config_top_k_below_minus_one",
     lambda t: [hf_copy(t, QWEN3, generation=lambda g: g.update(top_k=-2))],
     "{tmp}/model/generation_config.json: 'top_k' must be an integer: -1 or 0 (off)"),
    ("generation_config_repetition_penalty_zero",
     lambda t: [hf_copy(t, QWEN3, generation=lambda g: g.update(repetition_penalty=0))],
     "{tmp}/model/generation_config.json: 'repetition_penalty' must be a number > 0, got 0"),
    ("fifo_gguf",
     lambda t: (os.mkfifo(os.path.join(t, "model.gguf")), [os.path.join(t, "model.gguf")])[1],
     "model '{tmp}/model.gguf' is not a regular file (a FIFO)"),
    ("fifo_chat_template",
     lambda t: (os.mkfifo(os.path.join(t, "t.jinja")),
                [STORIES_GGUF, "--chat-template", os.path.join(t, "t.jinja")])[1],
     "--chat-template: '{tmp}/t.jinja' is not a regular file (a FIFO)"),
]

# A FIFO in place of each file of a folder: refused at once (a blocking open(2) hung start-up,
# and SIGTERM with it), naming the file.
for _name in ("config.json", "generation_config.json", "tokenizer_config.json", "tokenizer.json",
              "model.safetensors"):
    MODEL_ROWS.append((f"fifo_{_name.replace('.', '_')}",
                       lambda t, name=_name: [with_fifo(hf_copy(t, QWEN3), name),
                                              "--max-model-len", "512"],
                       f"'{{tmp}}/model/{_name}' is not a regular file (a FIFO)"))

FLAG_ROWS = [
    ("num_threads_100000", ["--num-threads", "100000"],
     "--num-threads: must be an integer in [0, 1024], got '100000'"),
    ("kv_cache_memory_bytes_beyond_physical_memory",
     ["--kv-cache-memory-bytes", "100000000000000"],
     "--kv-cache-memory-bytes 100000000000000 (93132.3 GiB) exceeds this machine's physical "
     f"memory of {PHYSICAL_MEMORY_BYTES} bytes"),
    ("kv_cache_memory_bytes_1e14", ["--kv-cache-memory-bytes", "1e14"],
     "--kv-cache-memory-bytes '1e14' is not an integer"),
    ("kv_cache_memory_bytes_negative", ["--kv-cache-memory-bytes", "-1"],
     "--kv-cache-memory-bytes: must be an integer in [0, 2^63-1], got '-1'"),
    ("gpu_memory_utilization_zero", ["--gpu-memory-utilization", "0"],
     "--gpu-memory-utilization: must be a finite number in [0.01, 1], got '0'"),
    ("max_num_seqs_zero", ["--max-num-seqs", "0"],
     "--max-num-seqs: must be an integer in [1, 65536], got '0'"),
    ("max_model_len_beyond_int32", ["--max-model-len", "99999999999"],
     "--max-model-len: must be an integer in [0, 2^31-1], got '99999999999'"),
    ("port_zero", ["--port", "0"], "--port: must be an integer in [1, 65535], got '0'"),
    ("tensor_parallel_size_zero", ["--tensor-parallel-size", "0"],
     "--tensor-parallel-size: must be an integer in [1, 1024], got '0'"),
    ("block_size_not_a_power_of_two", ["--block-size", "3"],
     "--block-size: 3 not in {1,2,4,8,16,32,64,128}"),
]

# Every floating-point flag refuses NaN and the infinities by name (CLI11's Range and
# PositiveNumber compare, and NaN compares false: --gpu-memory-utilization nan used to reach the
# engine as JSON null).
FLOAT_FLAGS = ["gpu-memory-utilization", "chat-template-timeout", "stalled-client-timeout",
               "swap-space", "cpu-offload-gb"]
for flag in FLOAT_FLAGS:
    for value in ("nan", "inf", "-inf"):
        FLAG_ROWS.append((f"{flag}_{value}", [f"--{flag}", value],
                          f"--{flag}: must be a finite number in "))

# Every integer flag answers a value beyond int64 with its range in a few digits (CLI11's Range
# printed --max-num-seqs's as a 300-digit double); the human-readable ones (32k) say why.
INT_FLAGS = ["max-chat-messages", "max-chat-tools", "chat-template-max-recursion",
             "chat-template-max-loop-iterations", "chat-template-max-output-bytes", "port",
             "max-log-len", "api-server-count", "max-num-seqs", "seed", "max-logprobs",
             "num-threads", "tensor-parallel-size", "data-parallel-size",
             "data-parallel-size-local", "data-parallel-start-rank", "data-parallel-rpc-port",
             "pipeline-parallel-size", "data-parallel-rank", "ssl-cert-reqs", "block-size"]
HUMAN_READABLE_INT_FLAGS = ["max-model-len", "max-num-batched-tokens", "kv-cache-memory-bytes"]
HUGE = "1" + "0" * 30
for flag in INT_FLAGS:
    FLAG_ROWS.append((f"{flag}_beyond_int64", [f"--{flag}", HUGE],
                      f"--{flag}: must be an integer in ["))
for flag in HUMAN_READABLE_INT_FLAGS:
    FLAG_ROWS.append((f"{flag}_beyond_int64", [f"--{flag}", HUGE],
                      f"--{flag} '{HUGE}' is not an integer"))
# Values the API shows or hands to the engines as JSON must be UTF-8 (a served model name of
# other bytes was listed as U+FFFD and could not be asked for).
FLAG_ROWS.append(("served_model_name_not_utf8", ["--served-model-name", b"\xff\xfeabc"],
                  "--served-model-name: the value is not valid UTF-8"))


def serve_refused(args):
    """Runs `tandem serve ARGS` under the memory limit; returns (exit code, output, seconds).
    Fails when it is still running at the deadline (a hang, or a server that started)."""
    started = time.monotonic()
    proc = subprocess.Popen([BIN, "serve", *args, "--host", "127.0.0.1", "--port",
                             str(free_port())] if "--port" not in args else [BIN, "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", preexec_fn=limit_memory, start_new_session=True,
                            env={**os.environ, **LIMITED_ENV})
    try:
        out, _ = proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        raise AssertionError(f"still running after {DEADLINE_S} s (hung, or started instead of "
                             f"refusing):\n{out[-1500:]}")
    return proc.returncode, out, time.monotonic() - started


def check_refused(args, needle):
    code, out, seconds = serve_refused(args)
    check(code != 0, f"exit code {code}, expected a refusal:\n{out[-1500:]}")
    check(needle in out, f"wanted {needle!r} in:\n{out[-1500:]}")
    for crash in ("killed by signal", "terminate called", "check failed", "bad_alloc",
                  "Segmentation"):
        check(crash not in out, f"'{crash}': a crash, not a refusal:\n{out[-1500:]}")
    longest_number = max((len(n) for n in re.findall(r"\d+", out.replace(HUGE, ""))), default=0)
    check(longest_number < 25, f"a {longest_number}-digit number in the message:\n{out[-800:]}")
    check(seconds < DEADLINE_S, f"took {seconds:.1f} s")


def model_row(name, build, needle):
    def test():
        tmp = tempfile.mkdtemp(prefix="tandem-bad-model-")
        try:
            check_refused(build(tmp), needle.format(tmp=tmp))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    test.__name__ = f"test_{name}_is_refused_at_start_up"
    return test


def flag_row(name, args, needle):
    def test():
        check_refused([STORIES_GGUF, *args], needle)
    test.__name__ = f"test_flag_{name.replace('-', '_')}_is_refused_at_start_up"
    return test


def test_every_number_flag_shows_its_range_in_help():
    """A number flag declared without IntRange / NumberRange would take NaN or print CLI11's
    300-digit range: --help shows each INT and FLOAT flag's range (or its set of values, as
    --block-size's {1,2,4,...}) after its type."""
    out = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True,
                         timeout=30).stdout
    typed = re.findall(r"^\s*(--[a-z0-9-]+)(?:,[^ ]+)* (INT|FLOAT)(\S*)", out, re.MULTILINE)
    check(len(typed) >= len(FLOAT_FLAGS) + len(INT_FLAGS), f"too few number flags in --help: "
          f"{typed}\n{out[:2000]}")
    unranged = [flag for flag, _, rng in typed if not rng.startswith((":[", ":(", ":{"))]
    check(not unranged, f"number flags without a range in --help: {unranged}")


# The copies above without their defect start and serve under the same limits.
CONTROLS = [
    ("stories_gguf", lambda t: [gguf_copy(t, STORIES_GGUF)]),
    ("qwen35_gguf", lambda t: [gguf_copy(t, QWEN35_GGUF), *QWEN35_ARGS]),
    ("stories_hf", lambda t: [hf_copy(t, STORIES_HF, config=lambda c: None)]),
    ("qwen3_hf", lambda t: [hf_copy(t, QWEN3, config=lambda c: None,
                                    generation=lambda g: None), "--max-model-len", "512"]),
    ("qwen35_hf_layer_types_from_interval",
     lambda t: [hf_copy(t, QWEN35, config=lambda c: qwen35_without_layer_types(c, 4)),
                *QWEN35_ARGS]),
]


def control_row(name, build):
    def test():
        tmp = tempfile.mkdtemp(prefix="tandem-good-model-")
        try:
            model, *args = build(tmp)
            with Server(model, *args, preexec_fn=limit_memory, env=LIMITED_ENV) as srv:
                status, body = srv.post_json("/v1/completions", {
                    "model": model, "prompt": "Once", "max_tokens": 4, "ignore_eos": True})
                check(status == 200 and body["usage"]["completion_tokens"] == 4,
                      f"{status} {body}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    test.__name__ = f"test_unbroken_copy_of_{name}_starts_and_serves"
    return test


def test_the_kv_cache_keeps_within_the_address_space_limit():
    """Under `ulimit -v` (4 GiB here) the KV budget is what the process may still map: an
    explicit --kv-cache-memory-bytes past it is refused naming the limit, and the utilization
    budget is cut to it (logged) instead of failing to allocate. (Under ASan there is no such
    limit: it reserves terabytes of shadow address space.)"""
    if ASAN:
        print("SKIP the address-space limit cases: none can be set under AddressSanitizer")
        return
    check_refused([STORIES_GGUF, "--kv-cache-memory-bytes", str(5 << 30)],
                  "under its address-space limit (ulimit -v)")
    # 16384 sequences × 512 tokens want ~10 GiB of KV: more than 4 GiB can map.
    with Server(STORIES_GGUF, "--max-num-seqs", "16384", "--max-num-batched-tokens", "16384",
                preexec_fn=limit_memory) as srv:
        check("KV cache budget cut to" in srv.full_log() and "ulimit -v" in srv.full_log(),
              srv.logs())
        status, body = srv.post_json("/v1/completions", {"prompt": "Once", "max_tokens": 4})
        check(status == 200 and body["choices"][0]["text"], f"{status} {body}")


if __name__ == "__main__":
    run([*(model_row(*row) for row in MODEL_ROWS), *(flag_row(*row) for row in FLAG_ROWS),
         test_every_number_flag_shows_its_range_in_help,
         test_the_kv_cache_keeps_within_the_address_space_limit,
         *(control_row(*row) for row in CONTROLS)])
