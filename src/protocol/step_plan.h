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
  std::vector<int32_t> token_ids;  // prompt + tokens generated before a preemption
  int32_t num_prompt_tokens = 0;   // the prompt's share of token_ids
  SamplingParams sampling;
  std::vector<int32_t> block_ids;   // block table so far (KV block ids, in order)
  int32_t num_computed_tokens = 0;  // tokens whose KV is already in those blocks (cache hits)
  // Hybrid models: the recurrent-state slot the engine's cache manager gave this request (the
  // same in every state-slot layer and on every TP rank); -1 when the model keeps no state.
  int32_t state_slot = -1;
  MSGPACK_DEFINE(request_id, token_ids, num_prompt_tokens, sampling, block_ids, num_computed_tokens,
                 state_slot)
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
  std::vector<int32_t> num_scheduled_tokens;  // parallel to scheduled_request_ids
  // Requests that finished or were preempted since the last plan: workers drop their state.
  std::vector<std::string> finished_request_ids;
  // Parallel to scheduled_request_ids: the draft tokens each request verifies this step (empty
  // = none), appended after its tokens and counted in num_scheduled_tokens (vLLM
  // SchedulerOutput.scheduled_spec_decode_tokens). Empty when speculation is off.
  std::vector<std::vector<int32_t>> scheduled_spec_decode_tokens;
  MSGPACK_DEFINE(step_id, new_requests, cached_requests, scheduled_request_ids,
                 num_scheduled_tokens, finished_request_ids, scheduled_spec_decode_tokens)

  // The drafts of scheduled request `i` (none when the plan carries none).
  const std::vector<int32_t>& SpecTokens(size_t i) const {
    static const std::vector<int32_t> kNone;
    return i < scheduled_spec_decode_tokens.size() ? scheduled_spec_decode_tokens[i] : kNone;
  }
};

// One entry per scheduled request, in plan order.
struct StepResult {
  int64_t step_id = 0;
  std::vector<std::string> request_ids;
  // [num_scheduled][0..k+1] the tokens each request gained this step, in order: empty while a
  // prompt is still prefilled in chunks; one without drafts; with k drafts, the accepted drafts
  // then the target's correction (or, all accepted, the bonus token).
  std::vector<std::vector<int32_t>> sampled_token_ids;
  // Parallel to sampled_token_ids, one entry per token; empty `top` when not requested.
  std::vector<std::vector<PositionLogprobs>> logprobs;
  // [num_scheduled][0..k] drafts proposed for each request's next step (empty = none).
  std::vector<std::vector<int32_t>> draft_token_ids;
  // [num_scheduled][...] prompt_logprobs requests: the logprobs of the prompt tokens whose
  // preceding position was computed this step, in order (a chunk of prompt positions 1..P-1);
  // empty for the others, or the whole array when no request asked.
  std::vector<std::vector<PositionLogprobs>> prompt_logprobs;
  MSGPACK_DEFINE(step_id, request_ids, sampled_token_ids, logprobs, draft_token_ids,
                 prompt_logprobs)
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
  std::string error;  // why the step failed, when !ok
  MSGPACK_DEFINE(tp_rank, step_id, ok, error)
};

}  // namespace tandem::protocol
