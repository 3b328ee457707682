#include "worker/model_runner.h"

#include "core/check.h"
#include "worker/plan_validator.h"

namespace tandem::worker {

ModelRunner::ModelRunner(std::unique_ptr<model::Model> model, int32_t num_blocks,
                         int32_t block_size, uint64_t engine_seed)
    : model_(std::move(model)),
      input_builder_(block_size),
      sampler_(model_ ? model_->info().vocab_size : 1),
      engine_seed_(engine_seed) {
  TANDEM_CHECK(model_ != nullptr) << "ModelRunner needs a model";
  TANDEM_CHECK(num_blocks > 0) << "ModelRunner needs at least one KV block, got " << num_blocks;
  kv_cache_.Allocate(model_->kv_cache_spec(), num_blocks, block_size);
}

Status ModelRunner::ValidatePlan(const protocol::StepPlan& plan) const {
  return ValidateStepPlan(plan, requests_,
                          {kv_cache_.num_blocks, kv_cache_.block_size, sampler_.vocab_size()});
}

protocol::StepResult ModelRunner::Execute(const protocol::StepPlan& plan) {
  UpdateStates(plan);
  const StepInputs inputs = input_builder_.Build(plan, requests_);
  Forward(inputs);
  const std::vector<SampledToken> sampled = SampleTokens(inputs);
  return AppendAndReport(plan, inputs, sampled);
}

const RequestState* ModelRunner::FindRequest(const std::string& request_id) const {
  auto it = requests_.find(request_id);
  return it == requests_.end() ? nullptr : &it->second;
}

void ModelRunner::UpdateStates(const protocol::StepPlan& plan) {
  // Finished first: a preempted request can come back as new in the same plan.
  for (const std::string& request_id : plan.finished_request_ids) requests_.erase(request_id);
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
  requests_.insert_or_assign(
      data.request_id, RequestState{data.token_ids, data.num_prompt_tokens,
                                    data.num_computed_tokens, data.block_ids, data.sampling,
                                    generator});
}

void ModelRunner::Forward(const StepInputs& inputs) {
  logits_.clear();
  if (inputs.ctx.num_tokens() == 0) {
    model_->DummyForward();  // an idle rank's step: still enter the other DP ranks' collectives
    return;
  }
  model_->Forward(inputs.ctx, kv_cache_, logits_);
  const size_t expected = inputs.ctx.logits_indices.size() * sampler_.vocab_size();
  TANDEM_CHECK(logits_.size() == expected)
      << "model '" << model_->info().architecture << "' returned " << logits_.size()
      << " logits; expected " << inputs.ctx.logits_indices.size() << " rows × vocabulary "
      << sampler_.vocab_size();
}

std::vector<SampledToken> ModelRunner::SampleTokens(const StepInputs& inputs) {
  std::vector<SamplingRow> rows(inputs.ctx.logits_indices.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    if (inputs.logits_rows[i] < 0) continue;
    RequestState& state = *inputs.requests[i];
    rows[inputs.logits_rows[i]] = {&state.sampling, state.prompt_token_ids(),
                                   state.output_token_ids(), &state.generator};
  }
  return sampler_.Sample(logits_, rows);
}

protocol::StepResult ModelRunner::AppendAndReport(const protocol::StepPlan& plan,
                                                  const StepInputs& inputs,
                                                  const std::vector<SampledToken>& sampled) {
  protocol::StepResult result;
  result.step_id = plan.step_id;
  result.request_ids = plan.scheduled_request_ids;
  result.sampled_token_ids.assign(inputs.requests.size(), -1);
  result.logprobs.resize(inputs.requests.size());
  for (size_t i = 0; i < inputs.requests.size(); ++i) {
    const int32_t row = inputs.logits_rows[i];
    if (row < 0) continue;
    inputs.requests[i]->token_ids.push_back(sampled[row].token_id);
    result.sampled_token_ids[i] = sampled[row].token_id;
    if (sampled[row].has_logprobs) result.logprobs[i] = sampled[row].logprobs;
  }
  return result;
}

}  // namespace tandem::worker
