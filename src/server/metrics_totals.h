// MetricsTotals: one API server's request counters and histograms as plain data, one set per
// DP rank (vLLM's `engine` label), so that the API servers of one deployment can add theirs up
// (metrics_share.h) and /metrics shows the whole server whichever process answers the scrape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace tandem::server {

// finished_reason label values, in this order.
inline constexpr const char* kFinishReasons[] = {"stop", "length", "abort", "error"};
inline constexpr int kNumFinishReasons = 4;
// Bucket slots per histogram: up to 31 upper bounds plus the slot above them all (+Inf).
inline constexpr int kMaxHistogramBuckets = 32;

struct HistogramTotals {
  uint64_t bucket_counts[kMaxHistogramBuckets] = {};  // per bucket, not cumulative
  uint64_t count = 0;
  double sum = 0;

  void Add(const HistogramTotals& other) {
    for (int i = 0; i < kMaxHistogramBuckets; ++i) bucket_counts[i] += other.bucket_counts[i];
    count += other.count;
    sum += other.sum;
  }
};

// What the API server counted for the requests it sent to one DP rank. Trivially copyable:
// it lives in shared memory as is.
struct EngineTotals {
  int64_t prompt_tokens = 0;      // prompts of requests that got their first token
  int64_t generation_tokens = 0;  // tokens delivered
  int64_t request_success[kNumFinishReasons] = {};  // by kFinishReasons
  HistogramTotals ttft;  // seconds, API server's clock: arrival to first token
  HistogramTotals itl;   // seconds, gap between two tokens (also time_per_output_token)
  HistogramTotals e2e;   // seconds, arrival to finish
  // Per finished request (stop or length), from the engine's times (EngineOutput):
  HistogramTotals queue_time;                     // seconds, queued → first scheduled
  HistogramTotals prefill_time;                   // seconds, first scheduled → first token
  HistogramTotals decode_time;                    // seconds, first token → last token
  HistogramTotals inference_time;                 // seconds, first scheduled → last token
  HistogramTotals request_time_per_output_token;  // seconds, decode / (tokens - 1)
  HistogramTotals request_prompt_tokens;          // tokens (bounds: kTokenCountBounds)
  HistogramTotals request_generation_tokens;      // tokens (bounds: kTokenCountBounds)

  void Add(const EngineTotals& other) {
    prompt_tokens += other.prompt_tokens;
    generation_tokens += other.generation_tokens;
    for (int i = 0; i < kNumFinishReasons; ++i) request_success[i] += other.request_success[i];
    for (auto [mine, theirs] :
         {std::pair{&ttft, &other.ttft}, std::pair{&itl, &other.itl}, std::pair{&e2e, &other.e2e},
          std::pair{&queue_time, &other.queue_time}, std::pair{&prefill_time, &other.prefill_time},
          std::pair{&decode_time, &other.decode_time},
          std::pair{&inference_time, &other.inference_time},
          std::pair{&request_time_per_output_token, &other.request_time_per_output_token},
          std::pair{&request_prompt_tokens, &other.request_prompt_tokens},
          std::pair{&request_generation_tokens, &other.request_generation_tokens}}) {
      mine->Add(*theirs);
    }
  }
};

struct MetricsTotals {
  std::vector<EngineTotals> engines;  // [DP rank]; grows to the highest rank seen

  // The totals of `dp_rank`, created (zero) if needed.
  EngineTotals& Engine(int32_t dp_rank) {
    const size_t r = dp_rank < 0 ? 0 : static_cast<size_t>(dp_rank);
    if (engines.size() <= r) engines.resize(r + 1);
    return engines[r];
  }

  void Add(const MetricsTotals& other) {
    if (engines.size() < other.engines.size()) engines.resize(other.engines.size());
    for (size_t r = 0; r < other.engines.size(); ++r) engines[r].Add(other.engines[r]);
  }
};

}  // namespace tandem::server
