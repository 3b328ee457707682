#include "server/request_metrics.h"

#include <algorithm>

namespace tandem::server {

RequestMetrics::RequestMetrics(Metrics& metrics, double arrival_time_s, int32_t num_prompt_tokens)
    : metrics_(metrics), arrival_time_s_(arrival_time_s), num_prompt_tokens_(num_prompt_tokens) {}

void RequestMetrics::OnOutput(const protocol::EngineOutput& output, int32_t num_delivered,
                              double now_s) {
  // The engine's QUEUED / SCHEDULED times come with the first output.
  if (output.queued_time_s > 0 && queued_s_ == 0) queued_s_ = output.queued_time_s;
  if (output.scheduled_time_s > 0 && scheduled_s_ == 0) scheduled_s_ = output.scheduled_time_s;
  const auto num_new = static_cast<int32_t>(output.new_token_ids.size());
  if (num_new > 0) {
    if (num_outputs_with_tokens_ == 0) {
      // vLLM counts a prompt when its first token comes (IterationStats.num_prompt_tokens).
      metrics_.AddPromptTokens(dp_rank_, num_prompt_tokens_);
      metrics_.ObserveTimeToFirstToken(dp_rank_, now_s - arrival_time_s_);
      first_token_s_ = output.timestamp_s;
    } else {
      // Several tokens in one output (speculative decoding) share the gap.
      metrics_.ObserveInterTokenLatency(dp_rank_, (now_s - last_receipt_s_) / num_new, num_new);
    }
    ++num_outputs_with_tokens_;
    last_receipt_s_ = now_s;
    last_token_s_ = output.timestamp_s;
  }
  if (num_delivered > 0) {
    num_generation_tokens_ += num_delivered;
    metrics_.AddGenerationTokens(dp_rank_, num_delivered);
  }
}

FinishedRequestStats RequestMetrics::Finished(const std::string& finish_reason,
                                              double now_s) const {
  // An interval whose ends are not both known (an engine that sends no times) counts as 0.
  auto interval = [](double from_s, double to_s) {
    return from_s > 0 && to_s > 0 ? std::max(0.0, to_s - from_s) : 0.0;
  };
  FinishedRequestStats r;
  r.finish_reason = finish_reason;
  r.num_prompt_tokens = num_prompt_tokens_;
  r.num_generation_tokens = num_generation_tokens_;
  r.e2e_latency_s = std::max(0.0, now_s - arrival_time_s_);
  r.queued_time_s = interval(queued_s_, scheduled_s_);        // QUEUED → first SCHEDULED
  r.prefill_time_s = interval(scheduled_s_, first_token_s_);  // preemptions included
  r.decode_time_s = interval(first_token_s_, last_token_s_);
  r.inference_time_s = interval(scheduled_s_, last_token_s_);
  // The first token came from the prefill: it is not a decode step.
  r.mean_time_per_output_token_s =
      num_generation_tokens_ > 1 ? r.decode_time_s / (num_generation_tokens_ - 1) : 0.0;
  return r;
}

void RequestMetrics::OnFinished(const std::string& finish_reason, double now_s) {
  metrics_.ObserveFinishedRequest(dp_rank_, Finished(finish_reason, now_s));
}

void RequestMetrics::OnEnded(const std::string& reason) {
  metrics_.AddRequestSuccess(dp_rank_, reason);
}

}  // namespace tandem::server
