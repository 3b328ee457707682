// Process-wide Prometheus metrics of the API server, served at GET /metrics (summed over the
// API servers of one deployment when they share them, metrics_share.h).
// Every series is exported twice with the same value: under `tandem:` and under vLLM's
// `vllm:` name, labelled model_name="<served model name>", so dashboards built for vLLM work.
// Reference: vLLM v1/metrics/loggers.py PrometheusStatLogger (names, buckets, labels).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/engine_output.h"
#include "server/metrics_share.h"
#include "server/metrics_totals.h"

namespace tandem::server {

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

  // From now on publishes this process's totals into `slot` of `share` after every update and
  // renders the sum over all slots (API servers sharing one port). Null: stop sharing.
  void ShareVia(std::unique_ptr<MetricsShare> share, int slot);

 private:
  void PublishLocked();  // caller holds mutex_

  mutable std::mutex mutex_;
  MetricsTotals totals_;
  std::unique_ptr<MetricsShare> share_;
  int slot_ = 0;
};

}  // namespace tandem::server
