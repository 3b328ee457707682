// Proposer: where speculative decoding's draft tokens come from (docs/design/
// hybrid-and-speculative.md §3, device-seam.md §6). After a step's tokens are appended, the
// proposer drafts the next step's tokens of every request that gained some; the drafts travel
// in the same StepResult and the target model verifies them next step. Two today: prompt
// lookup (ngram_proposer.h, any model) and the model's own MTP head (mtp_proposer.h).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "worker/input_builder.h"
#include "worker/sampler.h"

namespace tandem::worker {

class Proposer {
 public:
  virtual ~Proposer() = default;

  // Whether Propose reads the target's hidden rows (ForwardOutput::hidden): the runner then
  // asks the model for them.
  virtual bool NeedsHidden() const { return false; }

  // inputs: the step just run (its requests already hold the tokens they gained); sampled:
  // per request of inputs, the tokens it gained (none mid-prefill); target: that step's
  // forward output (hidden rows when NeedsHidden()). Returns per request of
  // inputs its drafts (0..k ids; none for a request that gained nothing). Called on every TP
  // rank in lock-step with the same inputs (an MTP head enters TP collectives). Thread: the
  // worker thread.
  virtual std::vector<std::vector<int32_t>> Propose(
      const StepInputs& inputs, const std::vector<std::vector<SampledToken>>& sampled,
      const model::ForwardOutput& target) = 0;

  // A step with no tokens on this rank: enters the collectives Propose enters over other DP
  // ranks (an MTP head's expert-parallel MoE). Default: none.
  virtual void DummyStep() {}
};

}  // namespace tandem::worker
