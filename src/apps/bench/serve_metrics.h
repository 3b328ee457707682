// ServeMetrics: the summary numbers of a `tandem bench serve` run, computed from the per-request
// outputs exactly as vLLM defines them.
// Reference: vLLM benchmarks/serve.py calculate_metrics. Definitions (successful requests only):
//   TTFT  = first text chunk time − send time
//   TPOT  = (E2EL − TTFT) / (output tokens − 1), per request with more than one output token
//   ITL   = every gap between consecutive text chunks, pooled over all requests
//   E2EL  = end of response − send time
//   throughputs divide by the benchmark duration (first send → last completion).
// Percentiles use linear interpolation between closest ranks (numpy.percentile's default).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "apps/bench/request_output.h"

namespace tandem::apps::bench {

// Mean, median, standard deviation (population) and chosen percentiles of one metric, in ms.
struct MetricStats {
  double mean_ms = 0;
  double median_ms = 0;
  double std_ms = 0;
  std::vector<std::pair<double, double>> percentiles_ms;  // (percentile in [0,100], value)
};

struct ServeMetrics {
  int completed = 0;
  int failed = 0;
  int total_input = 0;   // tokens over successful requests
  int total_output = 0;  // tokens over successful requests
  double duration_s = 0;
  double request_throughput = 0;      // completed / duration, req/s
  double output_throughput = 0;       // total_output / duration, tok/s
  double total_token_throughput = 0;  // (total_input + total_output) / duration, tok/s
  MetricStats ttft, tpot, itl, e2el;
  std::string first_error;  // error of the first failed request (by request order), "" if none
};

// The p-th percentile (0..100) of `values` with linear interpolation; 0 when empty.
double Percentile(std::vector<double> values, double p);

// Stats of `values_s` (seconds) reported in milliseconds; all zero when empty.
MetricStats ComputeStats(const std::vector<double>& values_s, const std::vector<double>& pcts);

// Aggregates `outputs` of a run that lasted `duration_s`.
ServeMetrics ComputeServeMetrics(const std::vector<RequestOutput>& outputs, double duration_s,
                                 const std::vector<double>& percentiles);

}  // namespace tandem::apps::bench
