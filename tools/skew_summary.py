#!/usr/bin/env python3
"""Summarises scripts/bench_dp_skew.sh runs: per seed, least-loaded / round-robin ratios of
E2EL p50, p95, p99, mean (all, short and long requests) and output throughput; then the
geometric mean over seeds with a 95 % confidence interval (t over the per-seed log ratios) and
how many seeds favour least-loaded.

usage: tools/skew_summary.py OUT_DIR [--table]   (--table: the per-seed Markdown table)
"""
import glob
import json
import math
import os
import statistics
import sys

# Two-sided 95 % t quantiles by degrees of freedom (1..40); larger uses 2.0.
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
       2.056, 2.052, 2.048, 2.045, 2.042, 2.040, 2.037, 2.035, 2.032, 2.030, 2.028, 2.026, 2.024,
       2.023, 2.021]


def load(out_dir):
    runs = {}
    for meta in glob.glob(os.path.join(out_dir, "*.meta")):
        index, policy, seed = open(meta).read().split()[:3]
        try:
            result = json.load(open(os.path.join(out_dir, index + ".json")))
        except (OSError, ValueError):
            print(f"run {index}: no result", file=sys.stderr)
            continue
        e2el, is_long = result["e2els"], result["is_long"]
        runs[(int(seed), policy)] = {
            "index": int(index), "p50": result["p50_e2el_ms"], "p95": result["p95_e2el_ms"],
            "p99": result["p99_e2el_ms"], "mean": result["mean_e2el_ms"],
            "tok/s": result["output_throughput"], "failed": result["failed"],
            "short mean": statistics.mean(x for x, lg in zip(e2el, is_long) if not lg),
            "long mean": statistics.mean(x for x, lg in zip(e2el, is_long) if lg),
        }
    return runs


def main():
    runs = load(sys.argv[1])
    seeds = sorted({s for s, _ in runs if (s, "least-loaded") in runs and (s, "round-robin") in runs})
    keys = ["p50", "p95", "p99", "mean", "short mean", "long mean", "tok/s"]
    ratios = {k: [] for k in keys}
    if "--table" in sys.argv:
        print("| seed | first | LL p50 / p95 / p99 ms | RR p50 / p95 / p99 ms | p95 LL/RR |")
        print("|---|---|---|---|---|")
    for s in seeds:
        ll, rr = runs[(s, "least-loaded")], runs[(s, "round-robin")]
        for k in keys:
            ratios[k].append(ll[k] / rr[k])
        if "--table" in sys.argv:
            first = "LL" if ll["index"] < rr["index"] else "RR"
            print(f"| {s} | {first} | {ll['p50']:.0f} / {ll['p95']:.0f} / {ll['p99']:.0f} | "
                  f"{rr['p50']:.0f} / {rr['p95']:.0f} / {rr['p99']:.0f} | "
                  f"{ll['p95'] / rr['p95']:.2f} |")
    failed = sum(r["failed"] for r in runs.values())
    print(f"{len(seeds)} paired seeds, {len(runs)} runs, {failed} failed requests")
    if len(seeds) < 2:
        return
    for k in keys:
        logs = [math.log(x) for x in ratios[k]]
        mean, se = statistics.mean(logs), statistics.stdev(logs) / math.sqrt(len(logs))
        t = T95[len(logs) - 2] if len(logs) - 1 <= len(T95) else 2.0
        better = sum(1 for x in ratios[k] if (x > 1 if k == "tok/s" else x < 1))
        print(f"LL/RR {k:>10}: {math.exp(mean):.3f} [{math.exp(mean - t * se):.3f}-"
              f"{math.exp(mean + t * se):.3f}]  LL better in {better}/{len(seeds)}  "
              f"t={mean / se:.2f}")


if __name__ == "__main__":
    main()
