// InputBuilder: turns one StepPlan plus the worker's request states into the flat batch of a
// forward pass (model::ForwardContext).
//
// Central rule (vLLM V1 scheduling): there is no prefill or decode phase. A scheduled request
// computes tokens [num_computed_tokens, num_computed_tokens + num_scheduled) of its token list
// followed by the step's draft tokens; it samples only when that reaches the end (all tokens
// and drafts). A request still short of the end is mid-prefill (a chunk of a long prompt): it
// runs, but asks for no logits.
// Reference: vLLM V1 GPUModelRunner._prepare_inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "model/forward_context.h"
#include "protocol/step_plan.h"
#include "worker/request_state.h"

namespace tandem::worker {

struct StepInputs {
  model::ForwardContext ctx;
  // Parallel to plan.scheduled_request_ids: the request's state, and its first row in the
  // logits (index into ctx.logits_indices), or -1 when it is mid-prefill and samples nothing.
  // A request verifying k drafts has k + 1 consecutive rows: the positions of its last token
  // and of each draft (speculative decoding).
  std::vector<RequestState*> requests;
  std::vector<int32_t> logits_rows;
  std::vector<const std::vector<int32_t>*> drafts;  // parallel: the drafts verified (may be empty)
  // Parallel: prompt_logprobs requests' rows for the prompt positions computed this step whose
  // next token is a prompt token: the first row (-1 = none), their count, and the position of
  // the first (its logits score the prompt token at position + 1).
  std::vector<int32_t> prompt_logprob_rows;
  std::vector<int32_t> num_prompt_logprob_rows;
  std::vector<int32_t> prompt_logprob_first_position;
};

class InputBuilder {
 public:
  explicit InputBuilder(int32_t block_size);

  // Builds the batch for `plan`, whose new/cached/finished parts must already be applied to
  // `requests`. Every scheduled id must be in `requests`, its scheduled tokens must lie within
  // its token list and its block table must cover them: the engine guarantees this (checked by
  // ModelRunner::ValidatePlan); a violation here aborts. Thread: the worker thread.
  StepInputs Build(const protocol::StepPlan& plan, RequestTable& requests) const;

 private:
  // Appends the rows of one request computing `num_scheduled_tokens` tokens of its token list
  // followed by `drafts`.
  void AppendRequest(const RequestState& state, const std::vector<int32_t>& drafts,
                     int32_t num_scheduled_tokens, model::ForwardContext& ctx) const;

  // prompt_logprobs: a logits row per computed prompt position that precedes a prompt token
  // (before the request's sampling rows), recorded in the three prompt_logprob_* arrays.
  void AppendPromptLogprobRows(const RequestState& state, int32_t num_scheduled,
                               StepInputs* inputs) const;

  int32_t block_size_;
};

}  // namespace tandem::worker
