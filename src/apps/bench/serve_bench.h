// RunServeBench: the `tandem bench serve` run — resolve the model, send one warm-up request,
// replay the random workload at the configured rate and concurrency, then print the report and
// save the JSON.
#pragma once

#include "apps/bench/serve_bench_config.h"
#include "core/status.h"

namespace tandem::apps::bench {

// Returns non-ok only when the run could not start (bad flags, server unreachable, the warm-up
// request failed) or the result file could not be written; failed benchmark requests are
// counted in the report, never returned. Blocks until every request has finished.
// Reference: vLLM benchmarks/serve.py benchmark(): requests are released at their arrival
// times, then wait for a free concurrency slot, and the clock for TTFT starts when sent.
Status RunServeBench(const ServeBenchConfig& config);

}  // namespace tandem::apps::bench
