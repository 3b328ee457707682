// The human table and the JSON file of a `tandem bench serve` run, in vLLM's layout and key
// names so existing tooling can read both. Reference: vLLM benchmarks/serve.py benchmark().
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/bench/request_output.h"
#include "apps/bench/serve_bench_config.h"
#include "apps/bench/serve_metrics.h"

namespace tandem::apps::bench {

// The "==== Serving Benchmark Result ====" table: counts, throughputs, then Mean / Median /
// P<p> of each metric named in config.percentile_metrics, in ms.
std::string FormatServeReport(const ServeBenchConfig& config, const ServeMetrics& metrics,
                              int num_long_requests);

// The result document: run parameters, summary numbers (mean_/median_/std_/p<p>_<metric>_ms for
// the selected metrics) and per-request arrays (input_lens, output_lens, ttfts, itls, errors...).
nlohmann::json ServeResultJson(const ServeBenchConfig& config, const std::string& model_id,
                               const ServeMetrics& metrics,
                               const std::vector<RequestOutput>& outputs);

}  // namespace tandem::apps::bench
