// Process-wide Prometheus metrics of the API server, served at GET /metrics (summed over the
// API servers of one deployment when they share them, metrics_share.h).
// Every series is exported twice with the same value: under `tandem:` and under vLLM's
// `vllm:` name, labelled model_name="<served model name>" and engine="<DP rank>" (vLLM V1's
// labels), so dashboards built for vLLM work.
// Reference: vLLM v1/metrics/loggers.py PrometheusStatLogger (names, types, help, buckets,
// labels) and v1/metrics/stats.py (what each observation is).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/engine_output.h"
#include "server/metrics_share.h"
#include "server/metrics_totals.h"

namespace tandem::server {

// One request that finished with "stop" or "length", as the per-request histograms see it
// (vLLM FinishedRequestStats). Times in seconds, never negative.
struct FinishedRequestStats {
  std::string finish_reason;  // "stop" | "length"
  int32_t num_prompt_tokens = 0;
  int32_t num_generation_tokens = 0;        // tokens delivered
  double e2e_latency_s = 0;                 // arrival at the API server → finish (API clock)
  double queued_time_s = 0;                 // queued → first scheduled (engine clock)
  double prefill_time_s = 0;                // first scheduled → first token
  double decode_time_s = 0;                 // first token → last token
  double inference_time_s = 0;              // first scheduled → last token
  double mean_time_per_output_token_s = 0;  // decode / (num_generation_tokens - 1); 0 for one
};

class Metrics {
 public:
  // The one registry of this process. Thread-safe.
  static Metrics& Global();

  Metrics();

  // Each records for the DP rank `dp_rank` that served the request (label engine="N").
  // A prompt counted once its request got its first token (vLLM's prompt_tokens_total).
  void AddPromptTokens(int32_t dp_rank, int64_t num_tokens);
  void AddGenerationTokens(int32_t dp_rank, int64_t num_tokens);
  // request_success_total only, for a request that ended without finishing: "abort" (the
  // client left) or "error".
  void AddRequestSuccess(int32_t dp_rank, const std::string& finished_reason);
  void ObserveTimeToFirstToken(int32_t dp_rank, double seconds);
  // `count` gaps of `seconds` between consecutive output tokens (also recorded as
  // time_per_output_token).
  void ObserveInterTokenLatency(int32_t dp_rank, double seconds, int32_t count = 1);
  // request_success_total, e2e latency and every per-request histogram.
  void ObserveFinishedRequest(int32_t dp_rank, const FinishedRequestStats& request);

  // Prometheus text exposition format 0.0.4, with # HELP / # TYPE for every family, every
  // series once per DP rank of `per_rank` (engine="N"). Engine-side series (running, waiting,
  // KV usage, preemptions, prefix cache, iteration tokens, ...) come from `per_rank`; with
  // them engine_alive{engine} (1 serving, 0 lost). `max_model_len` bounds the buckets of the
  // token-count histograms (vLLM's build_1_2_5_buckets(max_model_len)). `served` (empty = all)
  // limits the series to the ranks this API server serves (hybrid / external DP load
  // balancing: its own machine's).
  std::string Render(const std::string& model_name, int32_t max_model_len,
                     const std::vector<protocol::EngineStats>& per_rank,
                     const std::vector<bool>& alive, const std::vector<bool>& served = {}) const;
  // Same for one rank that serves.
  std::string Render(const std::string& model_name, int32_t max_model_len,
                     const protocol::EngineStats& stats) const;

  // A response aborted because its client stopped reading it (http::SessionOptions'
  // backpressure). Counted per API server process, without an engine label: the session does
  // not know which DP ranks served it (their aborts count in request_success_total "abort").
  void AddStalledClientAbort() { ++stalled_client_aborts_; }

  // Zeroes everything (tests only).
  void Reset();

  // From now on publishes this process's totals into `slot` of `share` after every update and
  // renders the sum over all slots (API servers sharing one port). Null: stop sharing.
  void ShareVia(std::unique_ptr<MetricsShare> share, int slot);

 private:
  // Caller holds mutex_. Publishes the totals of `dp_rank` (-1: all) into the share.
  void PublishLocked(int32_t dp_rank = -1);

  mutable std::mutex mutex_;
  std::atomic<int64_t> stalled_client_aborts_{0};
  MetricsTotals totals_;
  std::unique_ptr<MetricsShare> share_;
  int slot_ = 0;
};

}  // namespace tandem::server
