#include "worker/model_runner.h"

#include <algorithm>
#include <cstdint>
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"
#include "core/logging.h"
#include "worker/logprobs.h"
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
  kv_cache_.Allocate(model_->kv_cache_spec(), num_blocks, block_size, num_state_slots);
  for (int32_t slot = kv_cache_.num_state_slots - 1; slot >= 0; --slot) {
    free_state_slots_.push_back(slot);
  }
  if (speculative.enabled() && speculative.method == "ngram") {
    ngram_ = std::make_unique<NgramProposer>(speculative.prompt_lookup_min,
                                             speculative.prompt_lookup_max,
                                             speculative.num_speculative_tokens);
  } else if (speculative.enabled()) {
    TANDEM_CHECK(model_->HasMtp())
        << "speculative method '" << speculative.method << "' needs the model's MTP head";
    num_mtp_drafts_ = speculative.num_speculative_tokens;
  }
}

Status ModelRunner::ValidatePlan(const protocol::StepPlan& plan) const {
  return ValidateStepPlan(plan, requests_,
                          {kv_cache_.num_blocks, kv_cache_.block_size, sampler_.vocab_size()});
}

protocol::StepResult ModelRunner::Execute(const protocol::StepPlan& plan) {
  UpdateStates(plan);
  const StepInputs inputs = input_builder_.Build(plan, requests_);
  Forward(inputs);
  const std::vector<std::vector<SampledToken>> sampled = SampleTokens(inputs);
  CommitSpeculativeStates(inputs, sampled);
  protocol::StepResult result = AppendAndReport(plan, inputs, sampled);
  AddPromptLogprobs(inputs, &result);
  if (num_mtp_drafts_ > 0 && inputs.ctx.num_tokens() > 0) ProposeMtp(inputs, sampled, &result);
  for (size_t i = 0; i < result.draft_token_ids.size(); ++i) {
    if (!result.draft_token_ids[i].empty()) {
      TLOG_DEBUG("step {}: request {} drafts [{}]", plan.step_id, plan.scheduled_request_ids[i],
                 fmt::join(result.draft_token_ids[i], ", "));
    }
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
    if (it == requests_.end()) continue;
    if (it->second.state_slot >= 0) free_state_slots_.push_back(it->second.state_slot);
    requests_.erase(it);
  }
  for (const protocol::NewRequestData& data : plan.new_requests) AddRequest(data);
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
  if (kv_cache_.num_state_slots > 0) {
    // The engine runs at most max_num_seqs requests, and there are that many slots.
    TANDEM_CHECK(!free_state_slots_.empty())
        << "no free recurrent-state slot for request '" << data.request_id << "'";
    state.state_slot = free_state_slots_.back();
    free_state_slots_.pop_back();
  }
  state.grammar = structured_.ForRequest(data.sampling, state.output_token_ids(), eos_token_id_,
                                         data.request_id);
  requests_.insert_or_assign(data.request_id, std::move(state));
}

void ModelRunner::Forward(const StepInputs& inputs) {
  logits_.clear();
  if (inputs.ctx.num_tokens() == 0) {
    model_->DummyForward();  // an idle rank's step: still enter the other DP ranks' collectives
    for (int32_t k = 0; k < num_mtp_drafts_; ++k) {  // ... the MTP head's too
      model_->MtpForward(model::ForwardContext{}, nullptr, nullptr, kv_cache_, mtp_hidden_,
                         mtp_logits_);
    }
    return;
  }
  model_->Forward(inputs.ctx, kv_cache_, logits_);
  const size_t expected = inputs.ctx.logits_indices.size() * sampler_.vocab_size();
  TANDEM_CHECK(logits_.size() == expected)
      << "model '" << model_->info().architecture << "' returned " << logits_.size()
      << " logits; expected " << inputs.ctx.logits_indices.size() << " rows × vocabulary "
      << sampler_.vocab_size();
}

void ModelRunner::ProposeMtp(const StepInputs& inputs,
                             const std::vector<std::vector<SampledToken>>& sampled,
                             protocol::StepResult* result) {
  const model::ForwardContext& ctx = inputs.ctx;
  const int32_t vocab = sampler_.vocab_size();
  model_->TargetHidden(&target_hidden_);
  const int64_t h = static_cast<int64_t>(target_hidden_.size()) / ctx.num_tokens();
  // Pass 1 over every row: row at position p pairs h_p with the token at p + 1 (the request's
  // own token when known — its KV entry is then right; a filler for rejected drafts' rows,
  // whose entries later steps overwrite).
  std::vector<int32_t> next(ctx.num_tokens());
  model::ForwardContext pass = ctx;
  pass.logits_indices.clear();
  struct Drafting {
    size_t request;    // index in inputs
    int32_t position;  // MTP position of its next draft row
  };
  std::vector<Drafting> drafting;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    const RequestState& state = *inputs.requests[i];
    for (int32_t row = ctx.query_start_loc[i]; row < ctx.query_start_loc[i + 1]; ++row) {
      const int32_t p = ctx.positions[row];
      next[row] = p + 1 < state.num_tokens() ? state.token_ids[p + 1] : state.token_ids.back();
    }
    if (sampled[i].empty()) continue;
    // The last token gained sits at num_tokens − 1; the row before it drafts what follows.
    const int32_t p = state.num_tokens() - 2;
    const int32_t row = ctx.query_start_loc[i] + (p - ctx.positions[ctx.query_start_loc[i]]);
    pass.logits_indices.push_back(row);
    drafting.push_back({i, p});
  }
  model_->MtpForward(pass, next.data(), target_hidden_.data(), kv_cache_, mtp_hidden_, mtp_logits_);
  std::vector<std::vector<int32_t>> drafts(inputs.requests.size());
  std::vector<float> previous_hidden(drafting.size() * h);
  for (size_t d = 0; d < drafting.size(); ++d) {
    const auto row = std::span<const float>(mtp_logits_).subspan(d * vocab, vocab);
    drafts[drafting[d].request].push_back(GreedyArgmax(row));
    const int64_t src = pass.logits_indices[d];
    std::copy(mtp_hidden_.begin() + src * h, mtp_hidden_.begin() + (src + 1) * h,
              previous_hidden.begin() + d * h);
  }
  // Drafts 2..k: one row per request still drafting, from the head's own output.
  for (int32_t k = 1; k < num_mtp_drafts_; ++k) {
    model::ForwardContext step;
    step.block_size = ctx.block_size;
    step.query_start_loc.push_back(0);
    std::vector<int32_t> tokens;
    std::vector<float> hidden;
    std::vector<size_t> kept;
    for (size_t d = 0; d < drafting.size(); ++d) {
      if (drafting[d].request == SIZE_MAX) continue;
      const RequestState& state = *inputs.requests[drafting[d].request];
      const int32_t p = drafting[d].position + k;
      if (p / ctx.block_size >= static_cast<int32_t>(state.block_ids.size())) {
        drafting[d].request = SIZE_MAX;  // no room (max_model_len): stop drafting
        continue;
      }
      tokens.push_back(drafts[drafting[d].request].back());
      hidden.insert(hidden.end(), previous_hidden.begin() + d * h,
                    previous_hidden.begin() + (d + 1) * h);
      step.token_ids.push_back(tokens.back());
      step.positions.push_back(p);
      step.slot_mapping.push_back(int64_t{state.block_ids[p / ctx.block_size]} * ctx.block_size +
                                  p % ctx.block_size);
      step.query_start_loc.push_back(step.num_tokens());
      step.seq_lens.push_back(p + 1);
      step.block_tables.push_back(state.block_ids);
      step.state_slots.push_back(state.state_slot);
      step.logits_indices.push_back(step.num_tokens() - 1);
      kept.push_back(d);
    }
    model_->MtpForward(step, tokens.data(), hidden.data(), kv_cache_, mtp_hidden_, mtp_logits_);
    for (size_t r = 0; r < kept.size(); ++r) {
      const size_t d = kept[r];
      const auto row = std::span<const float>(mtp_logits_).subspan(r * vocab, vocab);
      drafts[drafting[d].request].push_back(GreedyArgmax(row));
      std::copy(mtp_hidden_.begin() + r * h, mtp_hidden_.begin() + (r + 1) * h,
                previous_hidden.begin() + d * h);
    }
  }
  result->draft_token_ids = std::move(drafts);
}

void ModelRunner::CommitSpeculativeStates(const StepInputs& inputs,
                                          const std::vector<std::vector<SampledToken>>& sampled) {
  if (kv_cache_.num_state_slots == 0) return;  // paged KV only: nothing to roll back
  std::vector<int32_t> num_accepted(inputs.requests.size(), 0);
  bool any = false;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (inputs.drafts[i]->empty()) continue;
    any = true;
    // Every emitted token but the last is an accepted draft (a mid-prefill request has none).
    num_accepted[i] = std::max(0, static_cast<int32_t>(sampled[i].size()) - 1);
  }
  if (any) model_->CommitSpeculativeStates(inputs.ctx, num_accepted, kv_cache_);
}

std::vector<std::vector<SampledToken>> ModelRunner::SampleTokens(const StepInputs& inputs) {
  std::vector<std::vector<SampledToken>> sampled(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (inputs.logits_rows[i] >= 0) sampled[i] = SampleRequest(inputs, i);
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
    return std::span<float>(logits_).subspan((inputs.logits_rows[i] + k) * vocab, vocab);
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
    if (state.grammar) state.grammar->Accept(token.token_id);
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
    if (!accepted) break;
    history.push_back(drafts[k]);
  }
  return emitted;
}

void ModelRunner::AddPromptLogprobs(const StepInputs& inputs, protocol::StepResult* result) {
  const size_t vocab = static_cast<size_t>(sampler_.vocab_size());
  std::vector<int32_t> scratch;
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    const int32_t first_row = inputs.prompt_logprob_rows[i];
    if (first_row < 0) continue;
    if (result->prompt_logprobs.empty()) result->prompt_logprobs.resize(inputs.requests.size());
    const RequestState& state = *inputs.requests[i];
    for (int32_t r = 0; r < inputs.num_prompt_logprob_rows[i]; ++r) {
      const auto row = std::span<const float>(logits_).subspan((first_row + r) * vocab, vocab);
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
  if (ngram_) result.draft_token_ids.resize(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (sampled[i].empty()) continue;
    RequestState& state = *inputs.requests[i];
    for (const SampledToken& token : sampled[i]) {
      state.token_ids.push_back(token.token_id);
      result.sampled_token_ids[i].push_back(token.token_id);
      result.logprobs[i].push_back(token.has_logprobs ? token.logprobs
                                                      : protocol::PositionLogprobs{});
    }
    if (ngram_) result.draft_token_ids[i] = ngram_->Propose(state.token_ids);
  }
  return result;
}

}  // namespace tandem::worker
