// RequestState: what a worker remembers about one running request between steps.
// The engine sends a request in full once (NewRequestData) and then only diffs
// (CachedRequestData); the worker appends the tokens it samples itself.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/sampling_params.h"
#include "worker/request_generator.h"
#include "worker/structured_output.h"

namespace tandem::worker {

struct RequestState {
  std::vector<int32_t> token_ids;   // prompt + every generated token, in order
  int32_t num_prompt_tokens = 0;    // the prompt's share of token_ids
  int32_t num_computed_tokens = 0;  // tokens whose KV is in the cache before this step
  std::vector<int32_t> block_ids;   // block table: KV block ids, in position order
  protocol::SamplingParams sampling;
  RequestGenerator generator;               // this request's random stream
  int32_t state_slot = -1;                  // its recurrent-state slot (hybrid models); -1 = none
  std::unique_ptr<RequestGrammar> grammar;  // its structured-output constraint; null = none

  int32_t num_tokens() const { return static_cast<int32_t>(token_ids.size()); }
  std::span<const int32_t> prompt_token_ids() const {
    return std::span<const int32_t>(token_ids).first(num_prompt_tokens);
  }
  std::span<const int32_t> output_token_ids() const {
    return std::span<const int32_t>(token_ids).subspan(num_prompt_tokens);
  }
};

// Running requests by request id.
using RequestTable = std::unordered_map<std::string, RequestState>;

}  // namespace tandem::worker
