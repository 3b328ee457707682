#!/usr/bin/env python3
"""Oracle tier (issue 34 §1): tandem against llama.cpp on the same random-weight model.

For each architecture, tools/make_bench_models.py writes a tiny random model as an f32 GGUF and
as an HF folder with the same weights. llama-server (the peers' llama.cpp, an implementation no
one here wrote) serves the GGUF with an f32 KV cache and without flash attention (its defaults,
an f16 cache and a CPU flash-attention kernel that rounds q·k through f16, put its logprobs 1e-3
from exact f32 on the tiny Llama; without them, 1e-5); tandem serves the GGUF and then the HF
folder. Each answers the same prompts greedily (temperature 0, ignore_eos, a fixed number of
tokens) with the log probability of every chosen token. The texts must be equal and the chosen
tokens' logprobs within --logprob-tol (1e-3: f32 weights and arithmetic in both engines,
different summation orders). A reference whose chosen tokens are mostly at probability 1 fails
(such a model tests nothing). Prints one Markdown row per (architecture, tandem source) for
docs/models.md.

  python3 tests/oracle/run_oracle.py [--tandem build/tandem] [--llama-server PATH]
      [--arch llama --arch qwen35moe-tiny] [--prompts 8] [--tokens 32]

Exit status: 0 all equal; 1 a difference (printed: prompt, both texts, first differing
position); 77 (ctest's SKIP) when llama-server is not built — build it with
`bash ../shared/peers/build_llamacpp.sh` (~7 min on 2 cores). Servers run one at a time on
127.0.0.1 with 2 threads; nothing else is contacted.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIP = 77

# Short story openings in stories260K's vocabulary (every architecture here uses its tokenizer
# or Qwen's; both tokenize plain English).
PROMPTS = [
    "Once upon a time",
    "The little dog",
    "Lily and Tom went to the park",
    "One day, a big bird",
    "She saw a red ball",
    "The sun was hot and",
    "Mom said",
    "In the garden there was a tiny",
    "He liked to play with",
    "They were very happy because",
]


# make_bench_models.py flags per architecture beyond --arch/--type: the bench Llama's head is its
# embedding table, whose logits are so peaked that greedy text repeats one token with
# probability 1; the oracle gives it a head of std hidden^-1/2 (256 → 1/16) so that the chosen
# tokens' probabilities are far from 1 and the logprob comparison means something.
ARCH_FLAGS = {"llama": ["--lm-head-std", "0.0625"]}


def degenerate(answers):
    """Whether a reference is too peaked to test anything: most chosen tokens at probability
    ~1, or every prompt continued by one repeated token."""
    logprobs = [lp for _, lps in answers for lp in lps]
    sharp = sum(lp > -1e-3 for lp in logprobs)
    return not logprobs or sharp * 2 > len(logprobs)


def shared_dir():
    for d in (os.environ.get("TANDEM_SHARED_DIR"), os.path.join(ROOT, "..", "shared"),
              "/work/shared"):
        if d and os.path.isdir(os.path.join(d, "models")):
            return os.path.normpath(d)
    return None


def numpy_python():
    """A Python that can import numpy (Debian's python3-numpy lives in /usr/bin/python3)."""
    for exe in (sys.executable, "/usr/bin/python3"):
        if exe and subprocess.run([exe, "-c", "import numpy"], capture_output=True).returncode == 0:
            return exe
    return None


def http_json(port, path, body=None, timeout=120):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


class Server:
    """One server process on 127.0.0.1:port, stopped (SIGTERM, then SIGKILL) on exit."""

    def __init__(self, argv, port, log_path):
        self.port = port
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited ({self.proc.returncode}); see {log_path}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        self.close()
        raise RuntimeError(f"{argv[0]} did not answer /health in 300 s; see {log_path}")

    def close(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def llama_answers(port, prompts, tokens):
    """(text, [logprob of each chosen token]) per prompt from llama-server's /completion."""
    out = []
    for p in prompts:
        r = http_json(port, "/completion", {"prompt": p, "n_predict": tokens, "temperature": 0,
                                            "n_probs": 1, "ignore_eos": True,
                                            "cache_prompt": False})
        out.append((r["content"], [c["logprob"] for c in r["completion_probabilities"]]))
    return out


def tandem_answers(port, prompts, tokens):
    """The same from tandem's /v1/completions (OpenAI logprobs)."""
    model = http_json(port, "/v1/models")["data"][0]["id"]
    out = []
    for p in prompts:
        r = http_json(port, "/v1/completions", {"model": model, "prompt": p, "max_tokens": tokens,
                                                "temperature": 0, "logprobs": 1,
                                                "ignore_eos": True})
        choice = r["choices"][0]
        out.append((choice["text"], choice["logprobs"]["token_logprobs"]))
    return out


def compare(name, source, want, got, tol):
    """Prints the differences; returns (equal texts, prompts, max |Δ logprob|)."""
    equal, max_delta = 0, 0.0
    for i, ((wt, wl), (gt, gl)) in enumerate(zip(want, got)):
        if wt == gt:
            equal += 1
        else:
            at = next((k for k in range(min(len(wt), len(gt))) if wt[k] != gt[k]),
                      min(len(wt), len(gt)))
            print(f"DIFF {name} ({source}) prompt {i} {PROMPTS[i]!r}: first difference at "
                  f"character {at}\n  llama.cpp: {wt!r}\n  tandem:    {gt!r}")
        for a, b in zip(wl, gl):
            max_delta = max(max_delta, abs(a - b))
        if len(wl) != len(gl):
            print(f"DIFF {name} ({source}) prompt {i}: {len(wl)} logprobs from llama.cpp, "
                  f"{len(gl)} from tandem")
            equal -= wt == gt
    return equal, len(want), max_delta


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tandem", default=os.path.join(ROOT, "build", "tandem"))
    ap.add_argument("--llama-server", default=os.environ.get(
        "LLAMA_SERVER", "/tmp/peer-llama.cpp/build/bin/llama-server"))
    ap.add_argument("--arch", action="append", help="architectures (default: llama, "
                    "qwen35moe-tiny)")
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--logprob-tol", type=float, default=1e-3)
    ap.add_argument("--port", type=int, default=0, help="default: a free one")
    ap.add_argument("--keep", help="write the models and logs here and keep them")
    args = ap.parse_args()
    archs = args.arch or ["llama", "qwen35moe-tiny"]
    if args.port == 0:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.port = s.getsockname()[1]
    prompts = PROMPTS[:args.prompts]

    if not os.access(args.llama_server, os.X_OK):
        print(f"SKIP: no llama-server at {args.llama_server}; build the peer with "
              "`bash ../shared/peers/build_llamacpp.sh` (or set LLAMA_SERVER)")
        return SKIP
    if not os.access(args.tandem, os.X_OK):
        print(f"FAIL: no tandem binary at {args.tandem}")
        return 1
    # <llama.cpp tree>/build/bin/llama-server → <llama.cpp tree>/gguf-py
    gguf_py = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(args.llama_server)))), "gguf-py")
    python = numpy_python()
    shared = shared_dir()
    if python is None or shared is None or not os.path.isdir(gguf_py):
        print(f"SKIP: needs numpy (python3-numpy), the shared models ({shared}) and llama.cpp's "
              f"gguf-py ({gguf_py})")
        return SKIP

    work = args.keep or tempfile.mkdtemp(prefix="tandem-oracle-")
    os.makedirs(work, exist_ok=True)
    rows, failed = [], False
    try:
        for arch in archs:
            subprocess.run([python, os.path.join(ROOT, "tools", "make_bench_models.py"), "--arch",
                            arch, "--type", "f32", "--out", work, "--shared-models",
                            os.path.join(shared, "models")] + ARCH_FLAGS.get(arch, []),
                           check=True, env={**os.environ, "PYTHONPATH": gguf_py},
                           stdout=subprocess.DEVNULL)
            gguf = os.path.join(work, f"{arch}-f32.gguf")
            hf = os.path.join(work, f"{arch}-hf")
            with Server([args.llama_server, "-m", gguf, "--host", "127.0.0.1", "--port",
                         str(args.port), "-t", "2", "-tb", "2", "-np", "1", "-c", "2048",
                         "-ctk", "f32", "-ctv", "f32", "-fa", "off", "--no-webui"], args.port, os.path.join(work, f"{arch}-llama.log")) as s:
                want = llama_answers(s.port, prompts, args.tokens)
            if degenerate(want):
                print(f"FAIL {arch}: llama.cpp's greedy tokens are almost all at probability 1; "
                      "the model is too peaked for the comparison to test anything")
                failed = True
                continue
            for source, path in (("GGUF", gguf), ("HF", hf)):
                with Server([args.tandem, "serve", path, "--host", "127.0.0.1", "--port",
                             str(args.port), "--num-threads", "2", "--max-num-seqs", "4"],
                            args.port, os.path.join(work, f"{arch}-tandem-{source}.log")) as s:
                    got = tandem_answers(s.port, prompts, args.tokens)
                equal, total, delta = compare(arch, source, want, got, args.logprob_tol)
                ok = equal == total and delta <= args.logprob_tol
                failed |= not ok
                rows.append(f"| {arch} | f32 | {source} | {equal}/{total} × {args.tokens} tokens "
                            f"| {delta:.1e} | {'equal' if ok else 'DIFFERS'} |")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print("| architecture | weights | tandem loads | greedy texts equal to llama.cpp | "
          "max abs Δ logprob | verdict |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
