#!/usr/bin/env python3
"""Writes a Llama model with random weights, for benchmarks that need an engine step to cost
more than the HTTP path around it (vLLM's `--load-format dummy` serves the same purpose).

The shipped models are so small (stories260K: 1.1 MiB) that streaming one token over SSE costs
about as much CPU as computing it, so on a 2-core machine the API server and the load generator
compete with the engines and hide what a routing policy does. This model has the same tokenizer
as stories260K (copied from ../shared/models/stories260k-hf at run time, never into the
repository) and wider, deeper layers. Its outputs are meaningless: use it only with
`--ignore-eos` and fixed output lengths.

usage: tools/make_bench_model.py OUT_DIR [--hidden 256] [--layers 4] [--intermediate 768]
Needs only the Python standard library.
"""
import argparse
import array
import json
import os
import random
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "shared", "models", "stories260k-hf")


def random_matrix(rng, rows, cols, scale):
    values = array.array("f", (rng.uniform(-scale, scale) for _ in range(rows * cols)))
    return values, [rows, cols]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=768)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--max-position-embeddings", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tokenizer-from", default=DEFAULT_SOURCE,
                    help="HF folder whose tokenizer.json and config's vocab are used")
    args = ap.parse_args()
    if args.hidden % args.heads or args.heads % args.kv_heads:
        sys.exit("--hidden must be a multiple of --heads, and --heads of --kv-heads")

    with open(os.path.join(args.tokenizer_from, "config.json")) as f:
        source = json.load(f)
    vocab = source["vocab_size"]
    head_dim = args.hidden // args.heads
    kv = args.kv_heads * head_dim
    h, inter = args.hidden, args.intermediate
    rng = random.Random(args.seed)
    scale = 1.0 / h ** 0.5

    tensors = [("model.embed_tokens.weight", random_matrix(rng, vocab, h, 1.0))]
    for i in range(args.layers):
        p = f"model.layers.{i}."
        tensors += [
            (p + "self_attn.q_proj.weight", random_matrix(rng, h, h, scale)),
            (p + "self_attn.k_proj.weight", random_matrix(rng, kv, h, scale)),
            (p + "self_attn.v_proj.weight", random_matrix(rng, kv, h, scale)),
            (p + "self_attn.o_proj.weight", random_matrix(rng, h, h, scale)),
            (p + "input_layernorm.weight", (array.array("f", [1.0] * h), [h])),
            (p + "post_attention_layernorm.weight", (array.array("f", [1.0] * h), [h])),
            (p + "mlp.gate_proj.weight", random_matrix(rng, inter, h, scale)),
            (p + "mlp.up_proj.weight", random_matrix(rng, inter, h, scale)),
            (p + "mlp.down_proj.weight", random_matrix(rng, h, inter, 1.0 / inter ** 0.5)),
        ]
    tensors.append(("model.norm.weight", (array.array("f", [1.0] * h), [h])))

    header, offset = {}, 0
    for name, (values, shape) in tensors:
        size = len(values) * 4
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    header_bytes = json.dumps(header).encode()
    header_bytes += b" " * (-len(header_bytes) % 8)

    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(header_bytes)))
        f.write(header_bytes)
        for _, (values, _) in tensors:
            if sys.byteorder != "little":
                values.byteswap()
            values.tofile(f)
    config = dict(source)
    config.update({
        "hidden_size": h, "num_hidden_layers": args.layers, "num_attention_heads": args.heads,
        "num_key_value_heads": args.kv_heads, "head_dim": head_dim, "intermediate_size": inter,
        "max_position_embeddings": args.max_position_embeddings, "tie_word_embeddings": True,
    })
    with open(os.path.join(args.out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2)
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        src = os.path.join(args.tokenizer_from, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(args.out_dir, name))
    params = sum(len(v) for _, (v, _) in tensors)
    print(f"{args.out_dir}: Llama, {args.layers} layers, hidden {h}, intermediate {inter}, "
          f"vocab {vocab}, {params / 1e6:.1f} M parameters ({offset / 2**20:.1f} MiB f32)")


if __name__ == "__main__":
    main()
