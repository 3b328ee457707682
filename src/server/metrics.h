// Process-wide Prometheus metrics of the API server, served at GET /metrics.
// Every series is exported twice with the same value: under `tandem:` and under vLLM's
// `vllm:` name, labelled model_name="<served model name>", so dashboards built for vLLM work.
// Reference: vLLM v1/metrics/loggers.py PrometheusStatLogger (names, buckets, labels).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/engine_output.h"

namespace tandem::server {

// Cumulative-bucket histogram (Prometheus semantics: bucket le=b counts observations <= b).
class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void Observe(double value);
  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  const std::vector<uint64_t>& bucket_counts() const { return bucket_counts_; }  // not cumulative
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<uint64_t> bucket_counts_;
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  // The one registry of this process. Thread-safe.
  static Metrics& Global();

  Metrics();

  void AddPromptTokens(int64_t num_tokens);
  void AddGenerationTokens(int64_t num_tokens);
  // `finished_reason`: "stop", "length", "abort" or "error".
  void AddRequestSuccess(const std::string& finished_reason);
  void ObserveTimeToFirstToken(double seconds);
  // Gap between two consecutive output tokens (also recorded as time_per_output_token).
  void ObserveInterTokenLatency(double seconds);
  void ObserveE2eRequestLatency(double seconds);

  // Prometheus text exposition format 0.0.4, with # HELP / # TYPE for every family.
  // Engine-side gauges (running, waiting, KV usage, preemptions, blocks) come from `stats`.
  std::string Render(const std::string& model_name, const protocol::EngineStats& stats) const;
  // Same, with the engine-side series once per DP rank, labelled engine="N" (vLLM's label),
  // plus engine_alive{engine} (1 serving, 0 lost) and per-rank finished / generated counters.
  std::string Render(const std::string& model_name,
                     const std::vector<protocol::EngineStats>& per_rank,
                     const std::vector<bool>& alive) const;

  // Zeroes everything (tests only).
  void Reset();

 private:
  mutable std::mutex mutex_;
  int64_t prompt_tokens_ = 0;
  int64_t generation_tokens_ = 0;
  std::map<std::string, int64_t> request_success_;  // finished_reason → count
  Histogram ttft_;
  Histogram itl_;
  Histogram e2e_;
};

}  // namespace tandem::server
