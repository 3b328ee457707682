#include "engine/request.h"

#include <algorithm>
#include <utility>

namespace tandem::engine {

bool IsFinished(RequestStatus status) {
  switch (status) {
    case RequestStatus::kWaiting:
    case RequestStatus::kRunning:
    case RequestStatus::kPreempted:
      return false;
    default:
      return true;
  }
}

Request::Request(protocol::EngineRequest request)
    : request_id_(std::move(request.request_id)),
      sampling_(std::move(request.sampling)),
      eos_token_ids_(std::move(request.eos_token_ids)),
      arrival_time_s_(request.arrival_time_s),
      priority_(request.priority),
      num_prompt_tokens_(static_cast<int32_t>(request.prompt_token_ids.size())),
      all_token_ids_(std::move(request.prompt_token_ids)),
      root_block_hash_(RootBlockHash(request.cache_salt)) {
  all_token_ids_.reserve(all_token_ids_.size() + std::max(sampling_.max_tokens, 0));
}

void Request::AppendOutputToken(int32_t token_id) {
  all_token_ids_.push_back(token_id);
  output_token_ids_.push_back(token_id);
}

}  // namespace tandem::engine
