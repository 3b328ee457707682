#include "engine/stop_checker.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::engine {

namespace {

bool Contains(const std::vector<int32_t>& ids, int32_t id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

protocol::FinishReason CheckStop(Request& request, int32_t max_model_len) {
  TANDEM_CHECK(request.num_output_tokens() > 0)
      << "CheckStop on request " << request.request_id() << " with no output token";
  const protocol::SamplingParams& sampling = request.sampling();
  const int32_t last_token_id = request.output_token_ids().back();
  if (request.num_output_tokens() >= sampling.min_tokens) {
    if (!sampling.ignore_eos && Contains(request.eos_token_ids(), last_token_id)) {
      request.status = RequestStatus::kFinishedStopped;
      return protocol::FinishReason::kStop;
    }
    if (Contains(sampling.stop_token_ids, last_token_id)) {
      request.status = RequestStatus::kFinishedStopped;
      request.stop_token_id = last_token_id;
      return protocol::FinishReason::kStop;
    }
  }
  if (request.num_output_tokens() >= sampling.max_tokens || request.num_tokens() >= max_model_len) {
    request.status = RequestStatus::kFinishedLength;
    return protocol::FinishReason::kLength;
  }
  return protocol::FinishReason::kNone;
}

}  // namespace tandem::engine
