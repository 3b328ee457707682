#!/usr/bin/env python3
"""Cost of structured-output token masks in a decode step: time per output token (TPOT) of C
concurrent streaming requests constrained by a JSON schema, against the same requests
unconstrained with the same numbers of output tokens (ignore_eos + max_tokens), same server.

Usage: scripts/bench_structured.py MODEL [ROUNDS]  (env: CONCURRENCY=16, ENGINE_THREADS=2)
Starts `build/tandem serve MODEL` on a free port; prints one line per round and the mean.
The first (warm-up) round builds the grammar's position masks and is not counted.
"""
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

BIN = os.environ.get("TANDEM_BIN", os.path.join(os.path.dirname(__file__), "../build/tandem"))
C = int(os.environ.get("CONCURRENCY", "16"))
SCHEMAS = {
    "strings": {"type": "array", "items": {"type": "string", "maxLength": 12},
                "minItems": 10, "maxItems": 10},
    "object": {"type": "object", "properties": {
        "id": {"type": "integer", "minimum": 0, "maximum": 100000},
        "name": {"type": "string", "maxLength": 20},
        "scores": {"type": "array", "items": {"type": "number"}, "maxItems": 6},
        "tags": {"type": "array", "items": {"enum": ["a", "bb", "ccc"]}, "maxItems": 8}},
        "required": ["id", "name", "scores", "tags"]},
}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stream(port, body):
    """(output tokens, seconds from the first token to the last)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", "/v1/completions", body=json.dumps({**body, "stream": True,
                 "stream_options": {"include_usage": True}}),
                 headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    first = last = None
    tokens = 0
    for line in resp:
        line = line.decode().strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        event = json.loads(line[6:])
        if event.get("usage"):
            tokens = event["usage"]["completion_tokens"]
        if event.get("choices") and event["choices"][0].get("text"):
            now = time.perf_counter()
            first = first or now
            last = now
    conn.close()
    return tokens, (last - first) if first else 0.0


def run_batch(port, bodies):
    results = [None] * len(bodies)
    threads = [threading.Thread(target=lambda i=i: results.__setitem__(i, stream(port, bodies[i])))
               for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def tpot(results):
    tokens = sum(max(t - 1, 0) for t, _ in results)
    return sum(s for _, s in results) / tokens if tokens else float("nan")


def main():
    model = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    port = free_port()
    log = open("/tmp/bench_structured.log", "w")
    proc = subprocess.Popen([BIN, "serve", model, "--port", str(port), "--host", "127.0.0.1",
                             "--num-threads", os.environ.get("ENGINE_THREADS", "2")],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
        for name, schema in SCHEMAS.items():
            ratios = []
            for r in range(rounds + 1):
                constrained = [{"prompt": "Hello", "max_tokens": 400, "temperature": 1,
                                "seed": 100 * r + i,
                                "response_format": {"type": "json_schema", "json_schema": {
                                    "name": name, "schema": schema}}} for i in range(C)]
                masked = run_batch(port, constrained)
                plain = run_batch(port, [{"prompt": "Hello", "max_tokens": max(t, 1),
                                          "temperature": 1, "ignore_eos": True, "seed": 100 * r + i}
                                         for i, (t, _) in enumerate(masked)])
                a, b = tpot(masked), tpot(plain)
                label = "warm-up" if r == 0 else f"round {r}"
                print(f"{name} {label}: C={C} tokens {sum(t for t, _ in masked)}  TPOT masked "
                      f"{a * 1000:.2f} ms  plain {b * 1000:.2f} ms  ratio {a / b:.3f}", flush=True)
                if r > 0:
                    ratios.append(a / b)
            mean = sum(ratios) / len(ratios)
            print(f"{name}: mean TPOT ratio masked/plain {mean:.3f} "
                  f"(mask share of a step {(1 - 1 / mean) * 100:.1f}%)", flush=True)
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
