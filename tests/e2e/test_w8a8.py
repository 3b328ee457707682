"""W8A8 checkpoints through the HTTP API (docs/design/w8a8.md): every golden case of the four
W8A8 folders of ../shared/models gives its exact greedy ids (return_token_ids), stories260k-w8a8
also from TP=2 and DP=2 (and the 397B recipe's folder at TP=2 and DP=2 x TP=2 with expert
parallel and MTP speculation), with the first positions' top-5 logprobs within the golden's
exact-arithmetic tolerance; a folder with a corrupted description or scale (unknown type, a
listed tensor absent, a scale of the wrong shape) or a --quantization the folder does not match
stops start-up naming the tensor, and no server starts half-quantised. `tandem quantize`
reproduces the shared folders' tensors byte for byte from their float originals (msModelSlim
layout with its description, and compressed-tensors), and its output serves the goldens."""
import json
import os
import shutil
import struct
import subprocess
import tempfile

from harness import BIN, MODELS, Server, check, free_port, golden_cases, run

FOLDERS = ["stories260k-w8a8", "stories260k-w8a8-static", "tiny-qwen3-w8a8-ct",
           "tiny-qwen3.5-moe-w8a8"]
DYNAMIC = os.path.join(MODELS, "stories260k-w8a8")
FLAGS = ["--max-model-len", "256"]


def cases(folder):
    return golden_cases(os.path.join(MODELS, folder, "golden.json"), "cases")


def greedy(case, **kw):
    return {"prompt": case["prompt_ids"], "max_tokens": len(case["generated_ids"]),
            "temperature": 0, "return_token_ids": True, **kw}


def check_ids(srv, folder, what):
    for case in cases(folder):
        status, body = srv.post_json("/v1/completions", greedy(case))
        check(status == 200, f"{what} {case['name']}: {status} {str(body)[:300]}")
        got = body["choices"][0]["token_ids"]
        check(got == case["generated_ids"],
              f"{what} {case['name']}: got {got[:8]}... want {case['generated_ids'][:8]}...")


def test_every_folder_gives_every_golden_over_http():
    for folder in FOLDERS:
        extra = ["--no-enable-prefix-caching"] if "qwen3.5" in folder else []
        with Server(os.path.join(MODELS, folder), *FLAGS, *extra) as srv:
            check_ids(srv, folder, folder)
            check(f"int8 W8A8 Linears" in srv.full_log(), srv.full_log()[-400:])


def test_top5_logprobs_within_the_exact_arithmetic_tolerance():
    with Server(DYNAMIC, *FLAGS) as srv:
        for case in cases("stories260k-w8a8"):
            status, body = srv.post_json("/v1/completions", greedy(case, max_tokens=4, logprobs=5))
            check(status == 200, f"{case['name']}: {status} {str(body)[:200]}")
            tops = body["choices"][0]["logprobs"]["top_logprobs"]
            for k, want in enumerate(case["top5_first4"]):
                got = sorted(tops[k].values(), reverse=True)[:5]
                for (_, lp), g in zip(want, got):
                    check(abs(lp - g) <= 1e-3, f"{case['name']} position {k}: {g} vs {lp}")


def test_tensor_parallel_and_data_parallel_keep_every_golden():
    # TP 2 splits q/k/v/gate/up by rows (scales with them) and o/down by input channels
    # (scales whole); DP 2 runs two engines.
    with Server(DYNAMIC, *FLAGS, "--tensor-parallel-size", "2") as srv:
        check_ids(srv, "stories260k-w8a8", "TP=2")
    with Server(DYNAMIC, *FLAGS, "--data-parallel-size", "2", "--data-parallel-rpc-port",
                str(free_port())) as srv:
        check_ids(srv, "stories260k-w8a8", "DP=2")
    # Static W8A8 at TP 2: each rank adds -input_offset x its own columns' weight sums, rank 0
    # the checkpoint's bias; the ids stay the golden's.
    with Server(os.path.join(MODELS, "stories260k-w8a8-static"), *FLAGS,
                "--tensor-parallel-size", "2") as srv:
        check_ids(srv, "stories260k-w8a8-static", "static TP=2")


def test_the_seed_recipe_keeps_every_golden_under_tp_ep_and_mtp():
    # The 397B recipe's folder as the seed runs it (DP 2 x TP 2, expert parallel, MTP): int8
    # q/k/v split by heads (column-parallel: each rank quantizes the whole input row, as TP 1),
    # per-expert int8 experts whole per EP rank, the FLOAT MTP head drafting. (TP without EP
    # splits each expert's down_proj input; its per-token scale is then the rank's own slice's,
    # as in vLLM, which is different arithmetic: docs/design/w8a8.md.)
    folder = "tiny-qwen3.5-moe-w8a8"
    mtp = json.dumps({"method": "qwen3_5_mtp", "num_speculative_tokens": 3})
    flags = ["--tensor-parallel-size", "2", "--data-parallel-size", "2",
             "--enable-expert-parallel", "--speculative-config", mtp,
             "--data-parallel-rpc-port", str(free_port())]
    with Server(os.path.join(MODELS, folder), *FLAGS, "--no-enable-prefix-caching",
                *flags) as srv:
        check_ids(srv, folder, " ".join(flags))


def test_the_context_length_comes_from_text_config():
    # Qwen3.5's multimodal config.json keeps max_position_embeddings in text_config (vLLM reads
    # it there); no --max-model-len needed.
    with Server(os.path.join(MODELS, "tiny-qwen3.5-moe-w8a8"), "--no-enable-prefix-caching",
                "--max-num-seqs", "2") as srv:
        _, _, raw = srv.request("GET", "/v1/models")
        models = json.loads(raw)
        check(models["data"][0]["max_model_len"] == 262144, str(models)[:300])


def start_fails(folder, *flags, at_load=True):
    p = subprocess.run([BIN, "serve", folder, "--port", str(free_port()), *flags],
                       capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    # The API server listens (503) while the engine loads; a refused model makes the whole
    # process exit before any request is served.
    check(p.returncode != 0, f"started although it should not: {out[-400:]}")
    check(not at_load or "engine core failed to start" in out, out[-400:])
    return out


def copy_folder(src):
    dst = tempfile.mkdtemp(prefix="tandem-w8a8-")
    for name in os.listdir(src):
        shutil.copy(os.path.join(src, name), dst)
    return dst


def edit_description(folder, edit):
    path = os.path.join(folder, "quant_model_description.json")
    with open(path) as f:
        desc = json.load(f)
    edit(desc)
    with open(path, "w") as f:
        json.dump(desc, f)


def reshape_tensor(path, name, shape):
    """Rewrites the safetensors header of `path` so `name` has `shape` (same bytes)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header[name]["shape"] = shape
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + data)


def set_first_value(path, name, fmt, value):
    """Overwrites the first element of tensor `name` in the safetensors file `path`."""
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    n = struct.unpack("<Q", raw[:8])[0]
    begin = 8 + n + json.loads(raw[8:8 + n])[name]["data_offsets"][0]
    raw[begin:begin + struct.calcsize(fmt)] = struct.pack(fmt, value)
    with open(path, "wb") as f:
        f.write(raw)


def test_corrupted_folders_are_refused_naming_the_tensor():
    q = "model.layers.1.self_attn.k_proj"
    folder = copy_folder(DYNAMIC)
    try:
        edit_description(folder, lambda d: d.update({q + ".weight": "W4A8_DYNAMIC"}))
        out = start_fails(folder)
        check(f"tensor '{q}.weight' is W4A8_DYNAMIC" in out, out[-600:])

        shutil.copy(os.path.join(DYNAMIC, "quant_model_description.json"), folder)
        edit_description(folder, lambda d: d.update({q + ".input_scale": "W8A8_DYNAMIC"}))
        out = start_fails(folder)
        check(f"lists tensor '{q}.input_scale'" in out and "no such tensor" in out, out[-600:])

        shutil.copy(os.path.join(DYNAMIC, "quant_model_description.json"), folder)
        reshape_tensor(os.path.join(folder, "quant_model_weights.safetensors"),
                       q + ".weight_scale", [16, 2])
        out = start_fails(folder)
        check(f"tensor '{q}.weight_scale'" in out and "[16, 2]" in out and "[32, 1]" in out,
              out[-600:])

        # A NaN scale would serve NaN logits: refused naming the tensor and row.
        shutil.copy(os.path.join(DYNAMIC, "quant_model_weights.safetensors"), folder)
        set_first_value(os.path.join(folder, "quant_model_weights.safetensors"),
                        q + ".weight_scale", "<f", float("nan"))
        out = start_fails(folder)
        check(f"tensor '{q}.weight_scale'" in out and "at row 0" in out, out[-600:])

        # The whole checkpoint's type must be one tandem serves.
        shutil.copy(os.path.join(DYNAMIC, "quant_model_weights.safetensors"), folder)
        edit_description(folder, lambda d: d.update({"model_quant_type": "W4A8_DYNAMIC"}))
        out = start_fails(folder)
        check('model_quant_type is "W4A8_DYNAMIC"' in out, out[-600:])

        # The description must be a regular file (a directory aborted the engine once).
        os.remove(os.path.join(folder, "quant_model_description.json"))
        os.mkdir(os.path.join(folder, "quant_model_description.json"))
        out = start_fails(folder)
        check("is not a regular file" in out, out[-600:])
    finally:
        shutil.rmtree(folder)
    # compressed-tensors: a format that is not a string.
    folder = copy_folder(os.path.join(MODELS, "tiny-qwen3-w8a8-ct"))
    try:
        path = os.path.join(folder, "config.json")
        with open(path) as f:
            config = json.load(f)
        config["quantization_config"]["format"] = None
        config["quantization_config"]["kv_cache_scheme"] = None
        with open(path, "w") as f:
            json.dump(config, f)
        out = start_fails(folder)
        check("format is ''" in out, out[-600:])
        config["quantization_config"]["format"] = 5
        with open(path, "w") as f:
            json.dump(config, f)
        out = start_fails(folder)
        check("quantization_config.format is 5; expected a string" in out, out[-600:])
        config["quantization_config"]["format"] = "int-quantized"
        config["quantization_config"]["config_groups"]["group_0"]["weights"]["dynamic"] = True
        with open(path, "w") as f:
            json.dump(config, f)
        out = start_fails(folder)
        check("weights.dynamic is true" in out, out[-600:])
    finally:
        shutil.rmtree(folder)


def safetensors(path):
    """{name: (dtype, shape, bytes)} of a safetensors file."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    return {k: (v["dtype"], v["shape"], data[v["data_offsets"][0]:v["data_offsets"][1]])
            for k, v in header.items() if k != "__metadata__"}


def quantize(src, *flags):
    out = tempfile.mkdtemp(prefix="tandem-quantize-")
    p = subprocess.run([BIN, "quantize", os.path.join(MODELS, src), out, *flags],
                       capture_output=True, text=True, timeout=300)
    check(p.returncode == 0, p.stderr[-600:])
    check("Linears to int8" in p.stdout and "tensors written" in p.stderr, p.stdout + p.stderr)
    return out


def test_quantize_reproduces_the_shared_folders_byte_for_byte():
    for src, ref, flags, weights in [
            ("stories260k-hf", "stories260k-w8a8", [], "quant_model_weights.safetensors"),
            ("tiny-qwen3.5-moe", "tiny-qwen3.5-moe-w8a8", [], "quant_model_weights.safetensors"),
            ("tiny-qwen3", "tiny-qwen3-w8a8-ct", ["--format", "compressed-tensors"],
             "model.safetensors")]:
        out = quantize(src, *flags)
        try:
            ours = safetensors(os.path.join(out, weights))
            theirs = safetensors(os.path.join(MODELS, ref, weights))
            check(sorted(ours) == sorted(theirs),
                  f"{src}: names differ: {sorted(set(ours) ^ set(theirs))[:5]}")
            int8 = [k for k in theirs if theirs[k][0] == "I8"]
            check(len(int8) >= 21, f"{ref}: only {len(int8)} int8 tensors")
            for k in theirs:
                check(ours[k] == theirs[k], f"{src} -> {ref}: tensor {k} differs")
            if not flags:
                with open(os.path.join(out, "quant_model_description.json")) as f:
                    ours_desc = json.load(f)
                with open(os.path.join(MODELS, ref, "quant_model_description.json")) as f:
                    check(ours_desc == json.load(f), f"{ref}: description differs")
            else:
                with open(os.path.join(out, "config.json")) as f:
                    qc = json.load(f)["quantization_config"]
                check(qc["format"] == "int-quantized" and qc["ignore"] == ["lm_head"], str(qc))
            if src == "stories260k-hf":
                with Server(out, *FLAGS) as srv:
                    check_ids(srv, ref, "quantized by tandem")
        finally:
            shutil.rmtree(out)


def test_quantize_refuses_a_quantized_source_and_an_occupied_output():
    out = tempfile.mkdtemp(prefix="tandem-quantize-")
    try:
        p = subprocess.run([BIN, "quantize", DYNAMIC, out], capture_output=True, text=True)
        check(p.returncode == 1 and "already quantized" in p.stderr, p.stderr)
        p = subprocess.run([BIN, "quantize", os.path.join(MODELS, "stories260k-hf"), out,
                            "--ignore", "*_proj"], capture_output=True, text=True)
        check(p.returncode == 1 and "nothing to quantize" in p.stderr, p.stderr)
        # Half of a fused q|k|v (or of a layer's experts) would be refused by serve.
        p = subprocess.run([BIN, "quantize", os.path.join(MODELS, "stories260k-hf"), out,
                            "--ignore", "*k_proj"], capture_output=True, text=True)
        check(p.returncode == 1 and "as one matmul of one type" in p.stderr, p.stderr)
        p = subprocess.run([BIN, "quantize", os.path.join(MODELS, "tiny-qwen3.5-moe"), out,
                            "--ignore", "*layers.0.mlp.experts.3.*"], capture_output=True,
                           text=True)
        check(p.returncode == 1 and "as one matmul of one type" in p.stderr, p.stderr)
        shutil.copy(os.path.join(MODELS, "stories260k-hf", "model.safetensors"), out)
        p = subprocess.run([BIN, "quantize", os.path.join(MODELS, "stories260k-hf"), out],
                           capture_output=True, text=True)
        check(p.returncode == 1 and "already holds model.safetensors" in p.stderr, p.stderr)
    finally:
        shutil.rmtree(out)


def test_quantization_flag_must_match_the_folder():
    out = start_fails(DYNAMIC, "--quantization", "compressed-tensors")
    check("--quantization compressed-tensors does not match" in out, out[-600:])
    out = start_fails(os.path.join(MODELS, "stories260k-hf"), "-q", "ascend")
    check("--quantization ascend does not match" in out, out[-600:])
    out = start_fails(DYNAMIC, "--quantization", "awq", at_load=False)
    check("--quantization: awq not in {ascend,compressed-tensors}" in out, out[-600:])
    with Server(DYNAMIC, *FLAGS, "--quantization", "ascend") as srv:
        check_ids(srv, "stories260k-w8a8", "--quantization ascend")


if __name__ == "__main__":
    run([test_every_folder_gives_every_golden_over_http,
         test_top5_logprobs_within_the_exact_arithmetic_tolerance,
         test_tensor_parallel_and_data_parallel_keep_every_golden,
         test_the_seed_recipe_keeps_every_golden_under_tp_ep_and_mtp,
         test_the_context_length_comes_from_text_config,
         test_corrupted_folders_are_refused_naming_the_tensor,
         test_quantization_flag_must_match_the_folder,
         test_quantize_reproduces_the_shared_folders_byte_for_byte,
         test_quantize_refuses_a_quantized_source_and_an_occupied_output])
