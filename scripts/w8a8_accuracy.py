#!/usr/bin/env python3
"""Greedy agreement of W8A8 checkpoints with their float model (issue 13 §5), through the HTTP API.

usage: scripts/w8a8_accuracy.py FLOAT_MODEL QUANT_MODEL [QUANT_MODEL ...] [--tokens 128]

Starts `tandem serve` on each model in turn (build/tandem, or TANDEM_BIN), sends the same 32
story prompts (greedy, ignore_eos, logprobs=1) and reports, per quantized model against the float
one: the share of generated tokens equal position by position, the mean length of the common
prefix, the share of identical continuations, and the mean |logprob(quantized) - logprob(float)|
of the chosen token over the positions before the first difference (same context on both sides).
Not part of CI; results go to docs/benchmarks.md.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

BIN = os.environ.get("TANDEM_BIN", os.path.join(os.path.dirname(__file__), "..", "build", "tandem"))
OPENINGS = ["Once upon a time", "One day", "Lily and Ben", "The cat sat on the mat", "Tom had a red ball",
            "There was a little dog", "Sara liked to sing", "The sun was hot", "A big bird flew",
            "Mom said", "The boy found a box", "In the park", "Tim was sad", "The girl and her mom",
            "Max wanted to play", "It was a rainy day", "The little car", "Anna saw a frog",
            "The old man", "A small fish", "Ben and his dad", "The tree was tall", "Lucy had a doll",
            "The dog barked", "They went to the beach", "A bunny hopped", "Sam ate a cake",
            "The princess", "A bear lived", "The kids ran", "Jack climbed", "Mia drew a picture"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def generate(model, tokens):
    port = free_port()
    proc = subprocess.Popen([BIN, "serve", model, "--host", "127.0.0.1", "--port", str(port),
                             "--max-model-len", "512"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except Exception:  # noqa: BLE001 - not up yet
                time.sleep(0.2)
        out = []
        for text in OPENINGS:
            body = json.dumps({"prompt": text, "max_tokens": tokens, "temperature": 0,
                               "ignore_eos": True, "logprobs": 1,
                               "return_token_ids": True}).encode()
            req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", body,
                                         {"Content-Type": "application/json"})
            choice = json.load(urllib.request.urlopen(req, timeout=300))["choices"][0]
            out.append((choice["token_ids"], choice["logprobs"]["token_logprobs"]))
        return out
    finally:
        proc.terminate()
        proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("float_model")
    ap.add_argument("quant_models", nargs="+")
    ap.add_argument("--tokens", type=int, default=128)
    args = ap.parse_args()
    ref = generate(args.float_model, args.tokens)
    for model in args.quant_models:
        got = generate(model, args.tokens)
        same = total = prefix_sum = identical = 0
        deltas = []
        for (rid, rlp), (gid, glp) in zip(ref, got):
            total += len(rid)
            same += sum(a == b for a, b in zip(rid, gid))
            prefix = next((i for i, (a, b) in enumerate(zip(rid, gid)) if a != b), len(rid))
            prefix_sum += prefix
            identical += prefix == len(rid)
            deltas += [abs(a - b) for a, b in zip(rlp[:prefix + 1], glp[:prefix + 1])]
        print(f"{os.path.basename(model.rstrip('/'))}: {len(ref)} prompts x {args.tokens} tokens: "
              f"{same / total:.1%} of tokens equal position by position, mean common prefix "
              f"{prefix_sum / len(ref):.1f} tokens, {identical}/{len(ref)} continuations identical, "
              f"mean |d logprob| of the chosen token {sum(deltas) / len(deltas):.4f} over "
              f"{len(deltas)} same-context positions")


if __name__ == "__main__":
    sys.exit(main())
