// Messages from an API server to an engine core (over ipc/, msgpack-encoded).
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/sampling_params.h"

namespace tandem::protocol {

// A new request, fully tokenized. Parse-at-the-edge: no JSON, no text past this point.
struct EngineRequest {
  std::string request_id;                 // unique per engine; "cmpl-<uuid>-<choice index>"
  std::vector<int32_t> prompt_token_ids;  // [num_prompt_tokens]
  SamplingParams sampling;
  std::vector<int32_t> eos_token_ids;  // the model's EOS ids (end unless ignore_eos)
  double arrival_time_s = 0;           // API server's monotonic clock, for queue metrics
  int32_t client_index = 0;            // which API server gets the outputs
  int32_t data_parallel_rank = -1;     // pin to this DP rank (X-data-parallel-rank); -1 = any
  std::string cache_salt;              // vLLM cache_salt: only requests with the same salt
                                       // share prefix-cache blocks; "" = the common pool
  int64_t priority = 0;                // vLLM's: lower is served earlier (priority policy)
  MSGPACK_DEFINE(request_id, prompt_token_ids, sampling, eos_token_ids, arrival_time_s,
                 client_index, data_parallel_rank, cache_salt, priority)
};

// Ends requests early (client gone, stop string matched): frees their blocks.
struct AbortRequests {
  std::vector<std::string> request_ids;
  MSGPACK_DEFINE(request_ids)
};

}  // namespace tandem::protocol
