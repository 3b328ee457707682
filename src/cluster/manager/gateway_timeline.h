// GatewayTimeline: the gateway's last 15 minutes in 10-second steps, for the console's
// dashboard (GET /v2/dashboard): requests, output tokens and time-to-first-token samples per
// step, and requests / output tokens per deployment over the window. Thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::cluster::manager {

class GatewayTimeline {
 public:
  static constexpr int64_t kStepSeconds = 10;
  static constexpr int64_t kSteps = 90;  // 15 minutes
  static constexpr size_t kMaxSamplesPerStep = 4096;

  // One answered request at `now_unix` (seconds): its deployment, output tokens and time to
  // first byte in seconds (< 0: none, e.g. an error before any byte).
  void Record(double now_unix, const std::string& model, int64_t output_tokens,
              double first_byte_s);

  // {"step_s": 10, "points": [{"time", "requests_per_s", "output_tokens_per_s",
  //   "ttft_p50_ms", "ttft_p95_ms"}] (one per step of the window, oldest first; the TTFT
  //   percentiles null in a step without samples), "busiest": [{"model_name", "requests",
  //   "output_tokens"}] (most requests first, at most 10)}. Percentiles: nearest rank.
  nlohmann::json Snapshot(double now_unix) const;

 private:
  struct Step {
    int64_t index = 0;  // floor(unix / kStepSeconds)
    int64_t requests = 0;
    int64_t output_tokens = 0;
    std::vector<double> ttft_ms;
    std::map<std::string, std::pair<int64_t, int64_t>> by_model;  // requests, output tokens
  };
  mutable std::mutex mutex_;
  std::deque<Step> steps_;  // oldest first, at most kSteps
};

}  // namespace tandem::cluster::manager
