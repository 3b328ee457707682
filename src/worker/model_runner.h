// ModelRunner: executes one StepPlan on one model: keeps the running requests' state and the
// KV cache, builds the step's inputs, runs the forward pass and samples.
//
// Reference: vLLM V1 GPUModelRunner (_update_states, _prepare_inputs, execute_model,
// propose_draft_token_ids), reduced to the CPU path. The engine sends new requests in full and
// running ones as diffs; the runner appends the tokens it samples to its own copy of the
// request (the engine appends the same tokens to its copy from the StepResult).
//
// Speculative decoding: a request may carry k draft tokens into a step. Their positions are
// computed with its last token in one forward pass; each position's logits verify the next
// draft (Sampler::VerifyRow) until one is rejected, which emits the target's own token there;
// all accepted also emits the bonus token of the last position. So a request gains 1..k+1
// tokens, and each uses its position's one random draw. Then the proposer drafts the next
// step's tokens from the updated sequence.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/kv_cache.h"
#include "model/model.h"
#include "protocol/speculative_config.h"
#include "protocol/step_plan.h"
#include "worker/input_builder.h"
#include "worker/ngram_proposer.h"
#include "worker/proposer.h"
#include "worker/request_state.h"
#include "worker/sampler.h"
#include "worker/structured_output.h"

namespace tandem::worker {

class ModelRunner {
 public:
  // Allocates a KV cache of `num_blocks` blocks of `block_size` tokens for the model's
  // cache_groups(). engine_seed (`--seed`) seeds the streams of unseeded requests.
  // `speculative` (off by default): the drafter whose proposals StepResult carries.
  // `num_state_slots`: recurrent-state slots of a hybrid model (the engine's cache manager
  // gives each running request one: NewRequestData::state_slot).
  ModelRunner(std::unique_ptr<model::Model> model, int32_t num_blocks, int32_t block_size,
              uint64_t engine_seed, const protocol::SpeculativeConfig& speculative = {},
              int32_t num_state_slots = 256);

  // Checks that `plan` fits the runner's state: parallel arrays of equal size, cached and
  // scheduled ids known (or new in this plan), scheduled tokens within each request's tokens
  // and its block table, block ids within the pool. Errors: kInternal naming the request and
  // what was expected — the engine and this worker disagree. Does not change state.
  Status ValidatePlan(const protocol::StepPlan& plan) const;

  // Runs one step: drop finished, add new, update cached; build inputs; forward; sample (and
  // verify drafts); append the tokens; propose the next drafts. Returns one entry per scheduled
  // request, in plan order (no tokens for a request mid-prefill). The plan must pass
  // ValidatePlan (a violation aborts). Thread: one caller at a time.
  protocol::StepResult Execute(const protocol::StepPlan& plan);

  // EOS id masked while a request is below min_tokens (the tokenizer's; -1 = none).
  void set_eos_token_id(int32_t eos_token_id) {
    sampler_.set_eos_token_id(eos_token_id);
    eos_token_id_ = eos_token_id;
  }
  // Where structured-output requests get the tokenizer's vocabulary (worker/structured_output.h).
  void set_token_vocabulary_loader(TokenVocabularyLoader loader) {
    structured_ = StructuredOutputs(std::move(loader), sampler_.vocab_size());
  }

  const model::ModelInfo& model_info() const { return model_->info(); }
  int32_t num_blocks() const { return kv_cache_.num_blocks; }
  int32_t block_size() const { return kv_cache_.block_size; }
  // The state of a running request, or nullptr. For tests and diagnostics.
  const RequestState* FindRequest(const std::string& request_id) const;

 private:
  void UpdateStates(const protocol::StepPlan& plan);
  void AddRequest(const protocol::NewRequestData& data);
  void Forward(const StepInputs& inputs);
  // Per scheduled request: its emitted tokens (none mid-prefill; 1..k+1 with k drafts).
  std::vector<std::vector<SampledToken>> SampleTokens(const StepInputs& inputs);
  std::vector<SampledToken> SampleRequest(const StepInputs& inputs, size_t i);
  // Hybrid models: each verifying request's recurrent state becomes the one after its
  // accepted drafts (the forward kept one per verified position).
  void CommitSpeculativeStates(const StepInputs& inputs,
                               const std::vector<std::vector<SampledToken>>& sampled);
  // prompt_logprobs requests: the logprobs of the prompt tokens scored this step (their rows'
  // raw logits, with the prompt token's rank), into result->prompt_logprobs.
  void AddPromptLogprobs(const StepInputs& inputs, protocol::StepResult* result);
  protocol::StepResult AppendAndReport(const protocol::StepPlan& plan, const StepInputs& inputs,
                                       const std::vector<std::vector<SampledToken>>& sampled);

  std::unique_ptr<model::Model> model_;
  model::KvCache kv_cache_;
  InputBuilder input_builder_;
  Sampler sampler_;
  RequestTable requests_;
  uint64_t engine_seed_;
  int32_t eos_token_id_ = -1;
  StructuredOutputs structured_{nullptr, 1};
  std::vector<uint32_t> token_bitmask_;  // [BitmaskWords(vocab)] scratch for grammar masks
  std::unique_ptr<Proposer> proposer_;   // null: no speculative decoding
  uint64_t num_requests_added_ = 0;      // counter mixed into unseeded requests' streams
  model::ForwardOutput output_;          // the last step's logits (+ hidden rows for MTP)
};

}  // namespace tandem::worker
