#include "apps/bench/serve_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tandem::apps::bench {

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = p / 100.0 * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

MetricStats ComputeStats(const std::vector<double>& values_s, const std::vector<double>& pcts) {
  MetricStats stats;
  for (double p : pcts) stats.percentiles_ms.emplace_back(p, 0.0);
  if (values_s.empty()) return stats;
  const double n = static_cast<double>(values_s.size());
  const double mean = std::accumulate(values_s.begin(), values_s.end(), 0.0) / n;
  double sq = 0;
  for (double v : values_s) sq += (v - mean) * (v - mean);
  stats.mean_ms = mean * 1000.0;
  stats.std_ms = std::sqrt(sq / n) * 1000.0;
  stats.median_ms = Percentile(values_s, 50) * 1000.0;
  for (auto& [p, value] : stats.percentiles_ms) value = Percentile(values_s, p) * 1000.0;
  return stats;
}

ServeMetrics ComputeServeMetrics(const std::vector<RequestOutput>& outputs, double duration_s,
                                 const std::vector<double>& percentiles) {
  ServeMetrics m;
  m.duration_s = duration_s;
  std::vector<double> ttfts, tpots, itls, e2els;
  for (const RequestOutput& out : outputs) {
    if (!out.success) {
      ++m.failed;
      if (m.first_error.empty()) m.first_error = out.error;
      continue;
    }
    ++m.completed;
    m.total_input += out.prompt_len;
    m.total_output += out.output_len;
    ttfts.push_back(out.ttft_s);
    e2els.push_back(out.latency_s);
    itls.insert(itls.end(), out.itl_s.begin(), out.itl_s.end());
    if (out.output_len > 1) {
      tpots.push_back((out.latency_s - out.ttft_s) / static_cast<double>(out.output_len - 1));
    }
  }
  if (duration_s > 0) {
    m.request_throughput = m.completed / duration_s;
    m.output_throughput = m.total_output / duration_s;
    m.total_token_throughput = (m.total_input + m.total_output) / duration_s;
  }
  m.ttft = ComputeStats(ttfts, percentiles);
  m.tpot = ComputeStats(tpots, percentiles);
  m.itl = ComputeStats(itls, percentiles);
  m.e2el = ComputeStats(e2els, percentiles);
  return m;
}

}  // namespace tandem::apps::bench
