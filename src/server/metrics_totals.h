// MetricsTotals: one API server's request counters and latency histograms as plain data, so
// that the API servers of one deployment can add theirs up (metrics_share.h) and /metrics
// shows the whole server whichever process answers the scrape.
#pragma once

#include <cstdint>

namespace tandem::server {

// finished_reason label values, in this order.
inline constexpr const char* kFinishReasons[] = {"stop", "length", "abort", "error"};
inline constexpr int kNumFinishReasons = 4;
// Bucket slots per histogram: up to 23 upper bounds plus the slot above them all (+Inf).
inline constexpr int kMaxHistogramBuckets = 24;

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

struct MetricsTotals {
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  int64_t request_success[kNumFinishReasons] = {};  // by kFinishReasons
  HistogramTotals ttft;  // seconds
  HistogramTotals itl;   // seconds
  HistogramTotals e2e;   // seconds

  void Add(const MetricsTotals& other) {
    prompt_tokens += other.prompt_tokens;
    generation_tokens += other.generation_tokens;
    for (int i = 0; i < kNumFinishReasons; ++i) request_success[i] += other.request_success[i];
    ttft.Add(other.ttft);
    itl.Add(other.itl);
    e2e.Add(other.e2e);
  }
};

}  // namespace tandem::server
