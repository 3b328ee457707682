// StepPlan / StepResult: what the engine core asks its workers to compute in one step, and
// what they answer. New requests travel in full, running ones as diffs (vLLM V1
// SchedulerOutput: NewRequestData + CachedRequestData).
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/engine_output.h"
#include "protocol/sampling_params.h"

namespace tandem::protocol {

// First time a request is scheduled (or again after preemption, with all its tokens).
struct NewRequestData {
  std::string request_id;
  std::vector<int32_t> token_ids;      // prompt + tokens generated before a preemption
  int32_t num_prompt_tokens = 0;       // the prompt's share of token_ids
  SamplingParams sampling;
  std::vector<int32_t> block_ids;      // block table so far (KV block ids, in order)
  int32_t num_computed_tokens = 0;     // tokens whose KV is already in those blocks (cache hits)
  MSGPACK_DEFINE(request_id, token_ids, num_prompt_tokens, sampling, block_ids,
                 num_computed_tokens)
};

// A request the worker already holds: only what changed.
struct CachedRequestData {
  std::string request_id;
  std::vector<int32_t> new_block_ids;  // appended to its block table
  int32_t num_computed_tokens = 0;     // tokens with KV before this step
  MSGPACK_DEFINE(request_id, new_block_ids, num_computed_tokens)
};

struct StepPlan {
  int64_t step_id = 0;
  std::vector<NewRequestData> new_requests;
  std::vector<CachedRequestData> cached_requests;
  // Tokens to compute this step per request, in batch order (new requests first, then cached).
  std::vector<std::string> scheduled_request_ids;
  std::vector<int32_t> num_scheduled_tokens;   // parallel to scheduled_request_ids
  // Requests that finished or were preempted since the last plan: workers drop their state.
  std::vector<std::string> finished_request_ids;
  MSGPACK_DEFINE(step_id, new_requests, cached_requests, scheduled_request_ids,
                 num_scheduled_tokens, finished_request_ids)
};

// One entry per scheduled request, in plan order. A request whose prompt is still being
// prefilled in chunks (computed + scheduled < its token count) samples nothing: -1.
struct StepResult {
  int64_t step_id = 0;
  std::vector<std::string> request_ids;
  std::vector<int32_t> sampled_token_ids;          // -1 = no token this step
  std::vector<PositionLogprobs> logprobs;          // parallel; empty `top` when not requested
  MSGPACK_DEFINE(step_id, request_ids, sampled_token_ids, logprobs)
};

// Engine → TP workers once, before the first plan: the KV pool size rank 0 decided.
struct WorkerInit {
  int32_t num_kv_blocks = 0;
  MSGPACK_DEFINE(num_kv_blocks)
};

// TP worker → engine: after init (step_id -1) and after every plan.
struct WorkerAck {
  int32_t tp_rank = 0;
  int64_t step_id = -1;
  bool ok = true;
  std::string error;     // why the step failed, when !ok
  MSGPACK_DEFINE(tp_rank, step_id, ok, error)
};

}  // namespace tandem::protocol
