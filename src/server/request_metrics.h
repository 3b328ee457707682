// RequestMetrics: one engine request's life as /metrics counts it, from its engine outputs to
// its end. Times of the API server's clock (arrival, each output's receipt) give the time to
// first token, the inter-token latency and the end-to-end latency; the engine's own times in
// its outputs (EngineOutput::queued_time_s, scheduled_time_s, timestamp_s) give the queue,
// prefill, decode and inference times and the time per output token, so a remote DP rank's
// clock never mixes with ours.
// Reference: vLLM v1/metrics/stats.py (RequestStateStats; IterationStats.update_from_output,
// update_from_events, update_from_finished_request).
// Not thread-safe: its owner serializes the calls (Generation's mutex).
#pragma once

#include <cstdint>
#include <string>

#include "protocol/engine_output.h"
#include "server/metrics.h"

namespace tandem::server {

class RequestMetrics {
 public:
  // `arrival_time_s`: MonotonicSeconds() when the API server received the request.
  RequestMetrics(Metrics& metrics, double arrival_time_s, int32_t num_prompt_tokens);

  // Where EngineClient::AddRequest stores the DP rank it chose (the `engine` label).
  int32_t* mutable_dp_rank() { return &dp_rank_; }
  int32_t dp_rank() const { return dp_rank_; }

  // One engine output, received at `now_s` (API clock), of whose tokens `num_delivered` reach
  // the client (those after a matched stop string do not). Counts the prompt at the first
  // token, the delivered tokens, and the time to first token / inter-token latencies.
  void OnOutput(const protocol::EngineOutput& output, int32_t num_delivered, double now_s);

  // The request finished with `finish_reason` "stop" or "length" at `now_s`: request_success,
  // the end-to-end latency and the per-request histograms.
  void OnFinished(const std::string& finish_reason, double now_s);

  // It ended without finishing: "abort" (the client left) or "error". Only request_success
  // counts it (vLLM records nothing else for such a request).
  void OnEnded(const std::string& reason);

  // What OnFinished records (exposed for tests).
  FinishedRequestStats Finished(const std::string& finish_reason, double now_s) const;

 private:
  Metrics& metrics_;
  const double arrival_time_s_;
  const int32_t num_prompt_tokens_;
  int32_t dp_rank_ = 0;
  int32_t num_generation_tokens_ = 0;  // delivered
  int32_t num_outputs_with_tokens_ = 0;
  double last_receipt_s_ = 0;  // API clock: the last output with tokens arrived
  // Engine clock (0 = not known).
  double queued_s_ = 0;
  double scheduled_s_ = 0;
  double first_token_s_ = 0;
  double last_token_s_ = 0;
};

}  // namespace tandem::server
