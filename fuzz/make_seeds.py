#!/usr/bin/env python3
"""Writes the seed corpus of one fuzz target into OUT_DIR, from the shared models folder.

Usage: make_seeds.py TARGET SHARED_DIR OUT_DIR

Shared files are read, never changed, and never copied into the repository: the corpus folder is
a temporary one (scripts/fuzz.sh). Big files are cut down to small valid seeds (a fuzzer mutates
kilobytes quickly and megabytes slowly): GGUFs keep their scalar metadata and get a few small
tensors; safetensors files keep a prefix of their tensors. Hand-written seeds of a target live in
fuzz/seeds/<target>/ and are copied as they are.
"""
import glob
import json
import os
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def write(out_dir, name, data):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- GGUF (ggml/docs/gguf.md): header, KV pairs, tensor infos, aligned data ----
GGUF_SCALAR_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_skip_value(buf, pos, vtype):
    if vtype in GGUF_SCALAR_SIZES:
        return pos + GGUF_SCALAR_SIZES[vtype]
    if vtype == 8:
        (n,) = struct.unpack_from("<Q", buf, pos)
        return pos + 8 + n
    if vtype == 9:
        etype, n = struct.unpack_from("<IQ", buf, pos)
        pos += 12
        for _ in range(n):
            pos = gguf_skip_value(buf, pos, etype)
        return pos
    raise ValueError("unknown GGUF type %d" % vtype)


def gguf_small_kvs(path, max_bytes=256):
    """The raw bytes of each KV pair of `path` no longer than max_bytes (drops the vocab arrays)."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:4] != b"GGUF":
        return []
    _, _, n_kv = struct.unpack_from("<IQQ", buf, 4)
    pos, kvs = 24, []
    for _ in range(n_kv):
        start = pos
        (klen,) = struct.unpack_from("<Q", buf, pos)
        pos += 8 + klen
        (vtype,) = struct.unpack_from("<I", buf, pos)
        pos = gguf_skip_value(buf, pos + 4, vtype)
        if pos - start <= max_bytes:
            kvs.append(buf[start:pos])
    return kvs


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_kv(key, vtype, payload):
    return gguf_string(key) + struct.pack("<I", vtype) + payload


def gguf_file(kvs, tensors, alignment=32):
    """tensors: (name, dims innermost first, ggml type, data bytes)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    offset, datas = 0, b""
    for name, dims, ttype, data in tensors:
        out += gguf_string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", ttype, offset)
        pad = (-len(data)) % alignment
        datas += data + b"\0" * pad
        offset += len(data) + pad
    out += b"\0" * ((-len(out)) % alignment)
    return out + datas


def gguf_seeds(shared, out_dir):
    vocab = ["<unk>", "<s>", "</s>", "\u2581a", "b"]
    synthetic = [
        gguf_kv("general.architecture", 8, gguf_string("llama")),
        gguf_kv("llama.block_count", 4, struct.pack("<I", 1)),
        gguf_kv("llama.context_length", 4, struct.pack("<I", 64)),
        gguf_kv("llama.embedding_length", 4, struct.pack("<I", 8)),
        gguf_kv("llama.feed_forward_length", 4, struct.pack("<I", 16)),
        gguf_kv("llama.attention.head_count", 4, struct.pack("<I", 2)),
        gguf_kv("llama.attention.head_count_kv", 4, struct.pack("<I", 1)),
        gguf_kv("llama.attention.layer_norm_rms_epsilon", 6, struct.pack("<f", 1e-5)),
        gguf_kv("general.alignment", 4, struct.pack("<I", 32)),
        gguf_kv("tokenizer.ggml.model", 8, gguf_string("llama")),
        gguf_kv("tokenizer.ggml.tokens", 9,
                struct.pack("<IQ", 8, len(vocab)) + b"".join(gguf_string(t) for t in vocab)),
        gguf_kv("tokenizer.ggml.scores", 9,
                struct.pack("<IQ", 6, len(vocab)) + struct.pack("<5f", 0, 0, 0, -1, -2)),
        gguf_kv("tokenizer.ggml.token_type", 9,
                struct.pack("<IQ", 5, len(vocab)) + struct.pack("<5i", 2, 3, 3, 1, 1)),
        gguf_kv("tokenizer.ggml.bos_token_id", 4, struct.pack("<I", 1)),
    ]
    q8_block = struct.pack("<e", 0.5) + bytes(range(32))
    tensors = [
        ("token_embd.weight", [8, 5], 0, struct.pack("<40f", *range(40))),
        ("blk.0.attn_norm.weight", [8], 1, struct.pack("<8e", *[1.0] * 8)),
        ("blk.0.ffn_up.weight", [32, 1], 8, q8_block),
        ("output_norm.weight", [8], 30, b"\x80\x3f" * 8),
    ]
    write(out_dir, "synthetic.gguf", gguf_file(synthetic, tensors))
    write(out_dir, "no_tensors.gguf", gguf_file(synthetic, []))
    for path in sorted(glob.glob(os.path.join(shared, "models", "*", "*.gguf"))):
        kvs = gguf_small_kvs(path)
        if kvs:
            name = os.path.basename(path).replace(".gguf", "-kv.gguf")
            write(out_dir, name, gguf_file(kvs, tensors))


def safetensors_seeds(shared, out_dir, max_data=16 << 10):
    for path in sorted(glob.glob(os.path.join(shared, "models", "*", "*.safetensors"))):
        with open(path, "rb") as f:
            (n,) = struct.unpack("<Q", f.read(8))
            header = json.loads(f.read(n))
            data_start = 8 + n
            meta = header.pop("__metadata__", None)
            kept, blob = {}, b""
            for name, t in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
                begin, end = t["data_offsets"]
                if len(blob) + end - begin > max_data:
                    continue
                f.seek(data_start + begin)
                kept[name] = dict(t, data_offsets=[len(blob), len(blob) + end - begin])
                blob += f.read(end - begin)
            if meta is not None:
                kept["__metadata__"] = meta
        head = json.dumps(kept).encode()
        model = os.path.basename(os.path.dirname(path))
        write(out_dir, model + "-" + os.path.basename(path), struct.pack("<Q", len(head)) + head + blob)


def hf_config_seeds(shared, out_dir):
    for pattern in ("config.json", "generation_config.json"):
        for path in sorted(glob.glob(os.path.join(shared, "models", "*", pattern))):
            shutil.copy(path, os.path.join(out_dir, os.path.basename(os.path.dirname(path)) + "-" + pattern))


def jinja_seeds(shared, out_dir):
    for path in sorted(glob.glob(os.path.join(shared, "models", "chat-templates", "*.jinja"))):
        shutil.copy(path, out_dir)
    for path in sorted(glob.glob(os.path.join(shared, "models", "*", "tokenizer_config.json"))):
        with open(path) as f:
            template = json.load(f).get("chat_template")
        if isinstance(template, str):
            write(out_dir, os.path.basename(os.path.dirname(path)) + ".jinja", template)


def text_seeds(shared, out_dir, mode_byte):
    """Texts (first byte even: Encode) and id lists (odd: Decode) for the tokenizer targets."""
    texts = []
    for path in sorted(glob.glob(os.path.join(shared, "models", "*", "PROVENANCE.md")))[:6]:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts.append(f.read(1024))
    goldens = os.path.join(shared, "models", "qwen3-tokenizer", "qwen3_token_goldens.json")
    if os.path.exists(goldens):
        with open(goldens) as f:
            data = json.load(f)
        cases = [c for v in data.values() if isinstance(v, list) for c in v]
        for case in cases[:40]:
            if isinstance(case, dict) and isinstance(case.get("text"), str):
                texts.append(case["text"])
                ids = next((v for k, v in case.items() if k.startswith("ids")), None)
                if isinstance(ids, list):
                    ids = [i for i in ids if isinstance(i, int)][:256]
                    write(out_dir, "ids-%d" % len(os.listdir(out_dir)),
                          b"\x01" + struct.pack("<%di" % len(ids), *ids))
    texts += ["Once upon a time", "<s>a</s>", "<|im_start|>user\nhi<|im_end|>\n<think>\n\n</think>",
              "caf\u00e9 \U0001F999 \u2581x", "  two  spaces\r\n\ttab"]
    for i, text in enumerate(texts):
        write(out_dir, "text-%d" % i, bytes([mode_byte]) + text.encode())
    write(out_dir, "ids-small", b"\x01" + struct.pack("<8i", 1, 2, 3, 300, 65, -1, 151643, 7))


def json_seeds(shared, out_dir):
    """The request seeds of openai_request, and small JSON files of the shared models."""
    for path in sorted(glob.glob(os.path.join(HERE, "seeds", "openai_request", "*"))):
        shutil.copy(path, out_dir)
    for i, path in enumerate(sorted(glob.glob(os.path.join(shared, "models", "*", "*.json")))):
        if os.path.getsize(path) <= 16 << 10:
            shutil.copy(path, os.path.join(out_dir, "model-%d.json" % i))


def main():
    target, shared, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    makers = {
        "gguf": gguf_seeds,
        "safetensors": safetensors_seeds,
        "hf_config": hf_config_seeds,
        "jinja": jinja_seeds,
        "spm_tokenizer": lambda s, o: text_seeds(s, o, 0),
        "bpe_tokenizer": lambda s, o: text_seeds(s, o, 0),
        "openai_request": lambda s, o: None,
        "gbnf": lambda s, o: None,
        "json_schema": lambda s, o: None,
        "regex": lambda s, o: None,
        "json": json_seeds,
    }
    if target not in makers:
        sys.exit("make_seeds.py: unknown target '%s' (one of %s)" % (target, ", ".join(makers)))
    makers[target](shared, out_dir)
    own = os.path.join(HERE, "seeds", target)
    for path in sorted(glob.glob(os.path.join(own, "*"))):
        shutil.copy(path, out_dir)
    if not os.listdir(out_dir):
        sys.exit("make_seeds.py: no seeds for '%s' (is %s the shared folder?)" % (target, shared))


if __name__ == "__main__":
    main()
