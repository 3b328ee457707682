"""Shared parts of the bench-model writers: deterministic per-tensor random values, bf16
rounding, a streaming safetensors writer and a streaming GGUF writer (gguf-py from llama.cpp).

Every tensor's values come from its own generator seeded by (seed, crc32(HF name)), so the HF
folder and each GGUF are written one tensor at a time, in any order, from the same values,
without holding a model in memory.
"""
import json
import os
import shutil
import struct
import zlib

import numpy as np


def rng_for(seed, name):
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def bf16_round(x):
    """f32 array → the nearest bf16 values (round to nearest even), still as f32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    u = (u + (0x7FFF + ((u >> 16) & 1))) & 0xFFFF0000
    return u.view(np.float32)


def bf16_bits(x):
    """bf16-exact f32 array → its uint16 bit patterns."""
    return (np.ascontiguousarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def normal(seed, name, shape, std):
    """N(0, std²) values of tensor `name`, rounded to bf16 (the HF checkpoint's dtype)."""
    rng = rng_for(seed, name)
    out = np.empty(shape, dtype=np.float32)
    flat = out.reshape(-1)
    step = 1 << 26  # 64 Mi values at a time: bounded temporaries
    for i in range(0, flat.size, step):
        part = rng.standard_normal(min(step, flat.size - i), dtype=np.float32)
        part *= np.float32(std)
        flat[i:i + part.size] = bf16_round(part)
    return out


class SafetensorsWriter:
    """Writes model.safetensors tensor by tensor: the header (names, dtypes, shapes, offsets) is
    fixed first from `specs` [(name, dtype "BF16"|"F32", shape)], then `write(name, array)` in
    the header's order."""

    def __init__(self, path, specs):
        self.specs = sorted(specs)
        header, offset = {"__metadata__": {"format": "pt"}}, 0
        for name, dtype, shape in self.specs:
            size = int(np.prod(shape)) * (2 if dtype == "BF16" else 4)
            header[name] = {"dtype": dtype, "shape": list(shape),
                            "data_offsets": [offset, offset + size]}
            offset += size
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        self.f = open(path, "wb")
        self.f.write(struct.pack("<Q", len(raw)))
        self.f.write(raw)
        self.next = 0

    def write(self, name, values):
        want, dtype, shape = self.specs[self.next]
        assert name == want, (name, want)
        assert tuple(values.shape) == tuple(shape), (name, values.shape, shape)
        data = bf16_bits(values) if dtype == "BF16" else values.astype("<f4", copy=False)
        data.tofile(self.f)
        self.next += 1

    def close(self):
        assert self.next == len(self.specs), "not every tensor was written"
        self.f.close()


def gguf_tensor_bytes(gguf, shape, qtype):
    """Bytes of a tensor of numpy `shape` stored as `qtype`."""
    block, type_size = gguf.GGML_QUANT_SIZES[qtype]
    n = int(np.prod(shape))
    assert shape[-1] % block == 0, (shape, qtype)
    return n // block * type_size


def gguf_encode(gguf, values, qtype):
    """f32 values → the array gguf-py writes for `qtype` (F32, F16, BF16 bits, Q8_0 blocks)."""
    q = gguf.GGMLQuantizationType
    if qtype == q.F32:
        return np.ascontiguousarray(values, dtype=np.float32)
    if qtype == q.F16:
        return values.astype(np.float16)
    if qtype == q.BF16:
        return bf16_bits(bf16_round(values))
    if qtype == q.Q8_0:
        rows = values.reshape(-1, values.shape[-1])
        out = [gguf.quants.quantize(rows[i:i + 4096], q.Q8_0) for i in range(0, len(rows), 4096)]
        return np.concatenate(out, axis=0)
    raise ValueError(f"no encoder for {qtype}")


def write_gguf(gguf, path, arch, kv_writer, tensors):
    """Writes a GGUF at `path`: `kv_writer(writer)` adds the metadata; `tensors` is a list of
    (name, numpy shape, qtype, make) where make() returns the f32 values; each is made, encoded
    and written in turn (only one tensor in memory)."""
    w = gguf.GGUFWriter(path, arch)
    kv_writer(w)
    for name, shape, qtype, _ in tensors:
        w.add_tensor_info(name, shape, np.dtype(np.float32), gguf_tensor_bytes(gguf, shape, qtype),
                          raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, shape, qtype, make in tensors:
        values = make()
        assert tuple(values.shape) == tuple(shape), (name, values.shape, shape)
        w.write_tensor_data(gguf_encode(gguf, values, qtype))
    w.close()


def byte_decoder():
    """GPT-2 byte-level BPE: the character each byte is written as → the byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def valid_output_ids(tokens, token_types):
    """Ids a random model may emit and still produce valid UTF-8 text: normal byte-level BPE
    tokens whose bytes decode on their own (llama-server answers 500 on invalid UTF-8)."""
    dec = byte_decoder()
    ok = np.zeros(len(tokens), dtype=bool)
    for i, (t, ty) in enumerate(zip(tokens, token_types)):
        if ty != 1:
            continue
        try:
            bytes(dec[c] for c in t).decode("utf-8")
            ok[i] = True
        except (KeyError, UnicodeDecodeError):
            pass
    return ok


def write_hf_folder(folder, specs, config, tokenizer_dir):
    """An HF folder: model.safetensors from `specs` [(name, dtype, shape, make)] one tensor at
    a time, config.json, and the tokenizer files `tokenizer_dir` has. Returns the parameter
    count."""
    ensure_dir(folder)
    makers = {name: make for name, _, _, make in specs}
    w = SafetensorsWriter(os.path.join(folder, "model.safetensors"),
                          [(n, d, s) for n, d, s, _ in specs])
    for name, _, _ in w.specs:
        w.write(name, makers[name]())
    w.close()
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for n in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        src = os.path.join(tokenizer_dir, n)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(folder, n))
    return sum(int(np.prod(s)) for _, _, s, _ in specs)


def ensure_dir(path):
    os.makedirs(path, exist_ok=True)
    return path
