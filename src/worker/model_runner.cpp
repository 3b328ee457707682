#include "worker/model_runner.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"
#include "core/clock.h"
#include "core/logging.h"
#include "core/step_profile.h"
#include "worker/logprobs.h"
#include "worker/mtp_proposer.h"
#include "worker/plan_validator.h"

namespace tandem::worker {

ModelRunner::ModelRunner(std::unique_ptr<model::Model> model, int32_t num_blocks,
                         int32_t block_size, uint64_t engine_seed,
                         const protocol::SpeculativeConfig& speculative, int32_t num_state_slots)
    : model_(std::move(model)),
      input_builder_(block_size),
      sampler_(model_ ? model_->info().vocab_size : 1),
      engine_seed_(engine_seed) {
  TANDEM_CHECK(model_ != nullptr) << "ModelRunner needs a model";
  TANDEM_CHECK(num_blocks > 0) << "ModelRunner needs at least one KV block, got " << num_blocks;
  kv_cache_.Allocate(model_->cache_groups(), num_blocks, block_size, num_state_slots);
  if (speculative.enabled() && speculative.method == "ngram") {
    proposer_ = std::make_unique<NgramProposer>(speculative.prompt_lookup_min,
                                                speculative.prompt_lookup_max,
                                                speculative.num_speculative_tokens);
  } else if (speculative.enabled()) {
    TANDEM_CHECK(model_->draft_head() != nullptr)
        << "speculative method '" << speculative.method << "' needs the model's MTP head";
    proposer_ =
        std::make_unique<MtpProposer>(*model_, kv_cache_, speculative.num_speculative_tokens);
  }
  output_.want_hidden = proposer_ != nullptr && proposer_->NeedsHidden();
}

Status ModelRunner::ValidatePlan(const protocol::StepPlan& plan) const {
  return ValidateStepPlan(plan, requests_,
                          {kv_cache_.num_blocks, kv_cache_.block_size, sampler_.vocab_size(),
                           kv_cache_.num_state_slots});
}

protocol::StepResult ModelRunner::Execute(const protocol::StepPlan& plan) {
  const double started = core::StepProfile::enabled() ? MonotonicSeconds() : 0.0;
  UpdateStates(plan);
  const StepInputs inputs = input_builder_.Build(plan, requests_);
  Forward(inputs);
  std::vector<std::vector<SampledToken>> sampled;
  {
    const core::ScopedPhase phase(core::StepPhase::kSampling);
    sampled = SampleTokens(inputs);
  }
  CommitSpeculativeStates(inputs, sampled);
  protocol::StepResult result = AppendAndReport(plan, inputs, sampled);
  AddPromptLogprobs(inputs, &result);
  if (proposer_ && inputs.ctx.num_tokens() > 0) {
    const core::ScopedPhase phase(core::StepPhase::kDrafting);
    result.draft_token_ids = proposer_->Propose(inputs, sampled, output_);
  }
  for (size_t i = 0; i < result.draft_token_ids.size(); ++i) {
    if (!result.draft_token_ids[i].empty()) {
      TLOG_DEBUG("step {}: request {} drafts [{}]", plan.step_id, plan.scheduled_request_ids[i],
                 fmt::join(result.draft_token_ids[i], ", "));
    }
  }
  if (started > 0) {
    core::StepProfile::EndStep(MonotonicSeconds() - started, inputs.ctx.num_tokens(),
                               inputs.ctx.num_seqs());
  }
  return result;
}

const RequestState* ModelRunner::FindRequest(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : &it->second;
}

void ModelRunner::UpdateStates(const protocol::StepPlan& plan) {
  // Finished first: a preempted request can come back as new in the same plan.
  for (const std::string& request_id : plan.finished_request_ids) {
    auto it = requests_.find(request_id);
    if (it == requests_.end()) {
      continue;
    }
    requests_.erase(it);
  }
  for (const protocol::NewRequestData& data : plan.new_requests) {
    AddRequest(data);
  }
  for (const protocol::CachedRequestData& data : plan.cached_requests) {
    auto it = requests_.find(data.request_id);
    TANDEM_CHECK(it != requests_.end())
        << "step " << plan.step_id << " updates unknown request '" << data.request_id << "'";
    RequestState& state = it->second;
    state.block_ids.insert(state.block_ids.end(), data.new_block_ids.begin(),
                           data.new_block_ids.end());
    state.num_computed_tokens = data.num_computed_tokens;
  }
}

void ModelRunner::AddRequest(const protocol::NewRequestData& data) {
  TANDEM_CHECK(data.num_prompt_tokens >= 0 &&
               static_cast<size_t>(data.num_prompt_tokens) <= data.token_ids.size())
      << "new request '" << data.request_id << "' has " << data.num_prompt_tokens
      << " prompt tokens of " << data.token_ids.size();
  RequestGenerator generator =
      data.sampling.has_seed ? RequestGenerator::FromSeed(data.sampling.seed)
                             : RequestGenerator::FromEngineSeed(engine_seed_, num_requests_added_);
  ++num_requests_added_;
  // A request resumed after preemption already drew once per generated token.
  generator.Skip(data.token_ids.size() - data.num_prompt_tokens);
  RequestState state{data.token_ids, data.num_prompt_tokens, data.num_computed_tokens,
                     data.block_ids, data.sampling,          generator};
  // The engine's cache manager chose the slot (ValidateStepPlan checked it is in range and
  // free); a sequence starting at position 0 starts from zeros whatever the slot held.
  state.state_slot = data.state_slot;
  state.grammar = structured_.ForRequest(data.sampling, state.output_token_ids(), eos_token_id_,
                                         data.request_id);
  requests_.insert_or_assign(data.request_id, std::move(state));
}

void ModelRunner::Forward(const StepInputs& inputs) {
  output_.logits.clear();
  if (inputs.ctx.num_tokens() == 0) {
    model_->DummyForward();  // an idle rank's step: still enter the other DP ranks' collectives
    if (proposer_) {
      proposer_->DummyStep();  // ... the MTP head's too
    }
    return;
  }
  model_->Forward(inputs.ctx, kv_cache_, output_);
  const size_t expected = inputs.ctx.logits_indices.size() * sampler_.vocab_size();
  TANDEM_CHECK(output_.logits.size() == expected)
      << "model '" << model_->info().architecture << "' returned " << output_.logits.size()
      << " logits; expected " << inputs.ctx.logits_indices.size() << " rows × vocabulary "
      << sampler_.vocab_size();
}

void ModelRunner::CommitSpeculativeStates(const StepInputs& inputs,
                                          const std::vector<std::vector<SampledToken>>& sampled) {
  if (kv_cache_.num_state_slots == 0) {
    return;  // paged KV only: nothing to roll back
  }
  std::vector<int32_t> num_accepted(inputs.requests.size(), 0);
  bool any = false;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (inputs.drafts[i]->empty()) {
      continue;
    }
    any = true;
    // Every emitted token but the last is an accepted draft (a mid-prefill request has none).
    num_accepted[i] = std::max(0, static_cast<int32_t>(sampled[i].size()) - 1);
  }
  if (any) {
    model_->CommitSpeculativeStates(inputs.ctx, num_accepted, kv_cache_);
  }
}

std::vector<std::vector<SampledToken>> ModelRunner::SampleTokens(const StepInputs& inputs) {
  std::vector<std::vector<SampledToken>> sampled(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (inputs.logits_rows[i] >= 0) {
      sampled[i] = SampleRequest(inputs, i);
    }
  }
  return sampled;
}

std::vector<SampledToken> ModelRunner::SampleRequest(const StepInputs& inputs, size_t i) {
  RequestState& state = *inputs.requests[i];
  const std::vector<int32_t>& drafts = *inputs.drafts[i];
  const size_t vocab = static_cast<size_t>(sampler_.vocab_size());
  // A constrained request's row k is masked from its grammar state after the tokens before it:
  // inside the sampler's copy of the row, or in place when logprobs are asked for (vLLM's
  // logprobs see the grammar's mask).
  auto row_logits = [&](size_t k) {
    return std::span<float>(output_.logits).subspan((inputs.logits_rows[i] + k) * vocab, vocab);
  };
  auto make_row = [&](std::span<const int32_t> output, std::span<float> logits) {
    SamplingRow row{&state.sampling, state.prompt_token_ids(), output, &state.generator};
    if (state.grammar && state.grammar->FillBitmask(&token_bitmask_)) {
      if (state.sampling.logprobs >= 0) {
        ApplyTokenBitmask(token_bitmask_, logits);
      } else {
        row.allowed_tokens = token_bitmask_;
      }
    }
    return row;
  };
  auto advance_grammar = [&](const SampledToken& token) {
    if (state.grammar) {
      state.grammar->Accept(token.token_id);
    }
  };
  if (drafts.empty()) {
    const std::span<float> logits = row_logits(0);
    SampledToken token = sampler_.SampleRow(logits, make_row(state.output_token_ids(), logits));
    advance_grammar(token);
    return {std::move(token)};
  }
  // Penalties at draft position k see the output so far plus the drafts accepted before it.
  std::vector<int32_t> history(state.output_token_ids().begin(), state.output_token_ids().end());
  std::vector<SampledToken> emitted;
  for (size_t k = 0; k <= drafts.size(); ++k) {
    const std::span<float> logits = row_logits(k);
    const SamplingRow row = make_row(history, logits);
    if (k == drafts.size()) {  // every draft accepted: the bonus token
      emitted.push_back(sampler_.SampleRow(logits, row));
      advance_grammar(emitted.back());
      break;
    }
    bool accepted = false;
    emitted.push_back(sampler_.VerifyRow(logits, row, drafts[k], &accepted));
    advance_grammar(emitted.back());
    if (!accepted) {
      break;
    }
    history.push_back(drafts[k]);
  }
  return emitted;
}

void ModelRunner::AddPromptLogprobs(const StepInputs& inputs, protocol::StepResult* result) {
  const size_t vocab = static_cast<size_t>(sampler_.vocab_size());
  std::vector<int32_t> scratch;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    const int32_t first_row = inputs.prompt_logprob_rows[i];
    if (first_row < 0) {
      continue;
    }
    if (result->prompt_logprobs.empty()) {
      result->prompt_logprobs.resize(inputs.requests.size());
    }
    const RequestState& state = *inputs.requests[i];
    for (int32_t r = 0; r < inputs.num_prompt_logprob_rows[i]; ++r) {
      const auto row =
          std::span<const float>(output_.logits).subspan((first_row + r) * vocab, vocab);
      const int32_t target = state.token_ids[inputs.prompt_logprob_first_position[i] + r + 1];
      protocol::PositionLogprobs lp =
          ComputeRawLogprobs(row, target, state.sampling.prompt_logprobs, scratch);
      const float target_logit = row[target];
      lp.sampled_rank = 1 + static_cast<int32_t>(std::count_if(
                                row.begin(), row.end(), [&](float v) { return v > target_logit; }));
      result->prompt_logprobs[i].push_back(std::move(lp));
    }
  }
}

protocol::StepResult ModelRunner::AppendAndReport(
    const protocol::StepPlan& plan, const StepInputs& inputs,
    const std::vector<std::vector<SampledToken>>& sampled) {
  protocol::StepResult result;
  result.step_id = plan.step_id;
  result.request_ids = plan.scheduled_request_ids;
  result.sampled_token_ids.resize(inputs.requests.size());
  result.logprobs.resize(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (sampled[i].empty()) {
      continue;
    }
    RequestState& state = *inputs.requests[i];
    for (const SampledToken& token : sampled[i]) {
      state.token_ids.push_back(token.token_id);
      result.sampled_token_ids[i].push_back(token.token_id);
      result.logprobs[i].push_back(token.has_logprobs ? token.logprobs
                                                      : protocol::PositionLogprobs{});
    }
  }
  return result;
}

}  // namespace tandem::worker
