#!/usr/bin/env python3
"""Writes random-weight models with real shapes that both llama.cpp and tandem load, for speed
measurements side by side (their outputs are meaningless: benchmark with ignore_eos and fixed
lengths):

  PYTHONPATH=<llama.cpp>/gguf-py python3 tools/make_bench_models.py --arch NAME \\
      --type bf16|f16|f32|q8_0 --out DIR
writes DIR/NAME-TYPE.gguf (llama.cpp's layout for the architecture) and DIR/NAME-hf/ (a Hugging
Face folder with the same weights: safetensors + config.json + tokenizer; kept when it was
written whole for the same arch, shape and seed: bench_model.json).
A Qwen3.5 model's MTP layer is in the HF folder only unless --gguf-mtp (the peer's llama.cpp
cannot load a qwen35moe GGUF that has it).
`--list` prints the names and their sizes. Needs numpy (Debian python3-numpy) and the gguf-py
of ../shared/peers's llama.cpp tree (bash ../shared/peers/build_llamacpp.sh unpacks it into
/tmp/peer-llama.cpp). Reads tokenizers from ../shared/models at run time; nothing from there is
copied into this repository. The W8A8 copy of an HF folder: `tandem quantize DIR/NAME-hf OUT`.

Architectures (names as llama.cpp's general.architecture, plus the shape):
  llama                   a Llama of hidden 256 × 4 layers with stories260K's tokenizer (the
                          former tools/make_bench_model.py; --hidden/--layers/--intermediate/
                          --heads/--kv-heads override its shape)
  qwen35moe-a3b           Qwen3.5-35B-A3B's width, 8 of its 40 layers, + its MTP layer
  qwen35moe-397b-1layer   Qwen3.5-397B-A17B's width, 4 layers (3 GDN + 1 attention), no MTP
  qwen35moe-tiny          the same layout at toy width (hidden 64): checks the writer in seconds
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from bench_models import llama, qwen35moe  # noqa: E402

ARCHS = {**{n: llama for n in llama.CONFIGS}, **{n: qwen35moe for n in qwen35moe.CONFIGS}}
TYPES = {"f32": ("F32", "ALL_F32"), "f16": ("F16", "MOSTLY_F16"),
         "bf16": ("BF16", "MOSTLY_BF16"), "q8_0": ("Q8_0", "MOSTLY_Q8_0")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--arch", choices=sorted(ARCHS))
    ap.add_argument("--type", choices=sorted(TYPES), default="q8_0")
    ap.add_argument("--out")
    ap.add_argument("--list", action="store_true", help="print the architectures and exit")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shared-models", default=os.path.join(HERE, "..", "..", "shared", "models"),
                    help="the shared models folder (tokenizers come from it)")
    ap.add_argument("--no-gguf", action="store_true", help="write only the HF folder")
    ap.add_argument("--gguf-mtp", action="store_true",
                    help="qwen35moe: the MTP layer in the GGUF too (the HF folder always has it; "
                         "the peer's llama.cpp refuses a GGUF with it)")
    for flag in ("hidden", "layers", "intermediate", "heads", "kv-heads"):
        ap.add_argument("--" + flag, type=int, help="llama only: override the shape")
    ap.add_argument("--lm-head-std", type=float,
                    help="llama only: an lm_head of its own, N(0, STD²), instead of the embedding "
                         "table (whose logits are so peaked that greedy text repeats one token "
                         "with probability 1: useless to compare logprobs; tests/oracle uses "
                         "hidden^-1/2)")
    args = ap.parse_args()
    if args.list:
        for name, module in sorted(ARCHS.items()):
            print(name, module.CONFIGS[name])
        return
    if not args.arch or not args.out:
        ap.error("--arch and --out are required (or --list)")
    try:
        import gguf
    except ImportError:
        sys.exit("make_bench_models.py: gguf-py not importable: set PYTHONPATH to the gguf-py "
                 "folder of ../shared/peers's llama.cpp tree (e.g. /tmp/peer-llama.cpp/gguf-py)")
    if not os.path.isdir(args.shared_models):
        ap.error(f"--shared-models {args.shared_models}: not a folder (the shared models, whose "
                 "tokenizers the models use)")
    module = ARCHS[args.arch]
    overrides = {k: getattr(args, k.replace("-", "_")) for k in
                 ("hidden", "layers", "intermediate", "heads", "kv_heads", "lm_head_std")
                 if getattr(args, k.replace("-", "_")) is not None}
    if overrides and module is not llama:
        ap.error("--hidden/--layers/.../--lm-head-std apply to --arch llama only")
    if args.gguf_mtp and module is llama:
        ap.error("--gguf-mtp applies to the qwen35moe models only")
    model = (module.Model(args.arch, args.seed, args.shared_models, gguf, overrides)
             if module is llama else
             module.Model(args.arch, args.seed, args.shared_models, gguf, args.gguf_mtp))
    if args.type == "q8_0" and any(v % 32 for k, v in model.c.items()
                                   if k in ("hidden", "intermediate", "moe", "shared")):
        ap.error("--type q8_0 needs widths that are multiples of 32 (its blocks): "
                 + str({k: v for k, v in model.c.items() if k in ("hidden", "intermediate")}))
    os.makedirs(args.out, exist_ok=True)
    hf = os.path.join(args.out, args.arch + "-hf")
    # The folder is kept only when it was written, whole, for this arch, shape and seed.
    recipe = json.dumps({"arch": args.arch, "config": model.c, "seed": args.seed},
                        sort_keys=True)
    marker = os.path.join(hf, "bench_model.json")
    started = time.time()
    if os.path.exists(marker) and open(marker).read() == recipe:
        print(f"{hf}: kept (written for the same arch, shape and seed)")
    else:
        if os.path.exists(marker):
            os.remove(marker)
        n = model.write_hf(hf)
        with open(marker, "w") as f:
            f.write(recipe)
        print(f"{hf}: {n / 1e6:.1f} M parameters ({time.time() - started:.0f} s)")
    if not args.no_gguf:
        qname, ftype = TYPES[args.type]
        path = os.path.join(args.out, f"{args.arch}-{args.type}.gguf")
        started = time.time()
        n = model.write_gguf(path, getattr(gguf.GGMLQuantizationType, qname),
                             getattr(gguf.LlamaFileType, ftype))
        print(f"{path}: {n / 1e6:.1f} M parameters, {os.path.getsize(path) / 2**30:.2f} GiB "
              f"({time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
