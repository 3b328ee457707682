// ValidateStepPlan: checks that a StepPlan from the engine fits what this worker holds, before
// any state changes, so a disagreement becomes an error naming the request instead of an
// out-of-range read in the forward pass.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "protocol/step_plan.h"
#include "worker/request_state.h"

namespace tandem::worker {

struct PlanLimits {
  int32_t num_blocks = 0;       // KV blocks in the pool: block ids lie in [0, num_blocks)
  int32_t block_size = 16;      // tokens per block
  int32_t vocab_size = 0;       // token ids lie in [0, vocab_size)
  int32_t num_state_slots = 0;  // hybrid models: state slots lie in [0, num_state_slots)
};

// Checks: scheduled ids and token counts are parallel; a new request is not already running
// (unless finished in the same plan) and has valid token ids, prompt length, computed count
// and block ids, and a state slot in range that no other running request holds (-1 when the
// worker keeps no state); a cached request is running; each scheduled request is known, scheduled
// once, for > 0 tokens, with computed + scheduled <= its tokens and enough blocks to hold them.
// `requests` is the state before the plan is applied. Errors: kInternal with the request id,
// the expected and the found values.
Status ValidateStepPlan(const protocol::StepPlan& plan, const RequestTable& requests,
                        const PlanLimits& limits);

}  // namespace tandem::worker
