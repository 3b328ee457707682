// MtpProposer: drafts from the model's own multi-token-prediction head (Qwen3.5 / Qwen3-Next
// `mtp.*`; model/mtp_module.h has the head's arithmetic). After the target's forward, the head
// runs over every row of the step (filling its own KV layer) and drafts the first token of
// each request that gained tokens from the row of its last accepted position; each further
// draft comes from the head's own output, one row per request. Always num_drafts
// applications, so expert-parallel ranks enter the same collectives.
// Reference: vLLM v1/spec_decode/eagle.py (propose) with the MTP head as the drafter;
// docs/design/hybrid-and-speculative.md §3.
#pragma once

#include <cstdint>
#include <vector>

#include "model/kv_cache.h"
#include "model/model.h"
#include "worker/proposer.h"

namespace tandem::worker {

class MtpProposer : public Proposer {
 public:
  // model (with its MTP head: model.draft_head(), checked) and kv (the runner's cache, whose
  // last paged layer is the head's) must outlive the proposer. num_drafts >= 1.
  MtpProposer(model::Model& model, model::KvCache& kv, int32_t num_drafts);

  bool NeedsHidden() const override { return true; }
  std::vector<std::vector<int32_t>> Propose(const StepInputs& inputs,
                                            const std::vector<std::vector<SampledToken>>& sampled,
                                            const model::ForwardOutput& target) override;
  void DummyStep() override;

 private:
  model::DraftHead& head_;
  model::KvCache& kv_;
  int32_t num_drafts_;
  int32_t vocab_;
  std::vector<float> mtp_hidden_, mtp_logits_;  // scratch
};

}  // namespace tandem::worker
