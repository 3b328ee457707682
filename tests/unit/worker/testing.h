// Builders and a fake model for the worker tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.h"
#include "protocol/step_plan.h"

namespace tandem::worker::testing {

// A model whose logits favour (last input token of the sequence + 1) % vocab_size, or are all
// equal (uniform = true). Records every ForwardContext it is given.
class FakeModel : public model::Model {
 public:
  explicit FakeModel(int32_t vocab_size, bool uniform = false) : uniform_(uniform) {
    info_.architecture = "fake";
    info_.vocab_size = vocab_size;
    groups_ = {model::PagedKvGroup({0}, /*num_kv_heads=*/1, /*head_dim=*/2)};
  }
  const model::ModelInfo& info() const override { return info_; }
  model::CacheGroups cache_groups() const override { return groups_; }
  using model::Model::Forward;
  void Forward(const model::ForwardContext& ctx, model::KvCache& kv,
               model::ForwardOutput& out) override {
    std::vector<float>& logits = out.logits;
    contexts_->push_back(ctx);
    logits.assign(ctx.logits_indices.size() * info_.vocab_size, 0.0f);
    for (size_t i = 0; i < ctx.logits_indices.size(); ++i) {
      const int32_t next = (ctx.token_ids[ctx.logits_indices[i]] + 1) % info_.vocab_size;
      if (!uniform_) logits[i * info_.vocab_size + next] = 10.0f;
    }
  }
  // Shared so the test keeps access after the runner owns the model.
  std::shared_ptr<std::vector<model::ForwardContext>> contexts_ =
      std::make_shared<std::vector<model::ForwardContext>>();

 private:
  bool uniform_;
  model::ModelInfo info_;
  model::CacheGroups groups_;
};

inline protocol::SamplingParams Greedy() {
  protocol::SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

inline protocol::SamplingParams Seeded(uint64_t seed) {
  protocol::SamplingParams p;
  p.has_seed = true;
  p.seed = seed;
  return p;
}

inline protocol::NewRequestData NewRequest(std::string id, std::vector<int32_t> tokens,
                                           std::vector<int32_t> block_ids,
                                           protocol::SamplingParams sampling = Greedy(),
                                           int32_t num_prompt_tokens = -1) {
  protocol::NewRequestData r;
  r.request_id = std::move(id);
  r.num_prompt_tokens =
      num_prompt_tokens < 0 ? static_cast<int32_t>(tokens.size()) : num_prompt_tokens;
  r.token_ids = std::move(tokens);
  r.block_ids = std::move(block_ids);
  r.sampling = sampling;
  return r;
}

inline protocol::CachedRequestData Cached(std::string id, int32_t num_computed_tokens,
                                          std::vector<int32_t> new_block_ids = {}) {
  return {std::move(id), std::move(new_block_ids), num_computed_tokens};
}

// Appends `id` to the plan's schedule for `num_tokens` tokens.
inline void Schedule(protocol::StepPlan& plan, const std::string& id, int32_t num_tokens) {
  plan.scheduled_request_ids.push_back(id);
  plan.num_scheduled_tokens.push_back(num_tokens);
}

// The first token each request gained in `result` (-1 = none): the shape of a result without
// speculative decoding, where a request gains at most one token per step.
inline std::vector<int32_t> FirstTokens(const protocol::StepResult& result) {
  std::vector<int32_t> first;
  for (const std::vector<int32_t>& tokens : result.sampled_token_ids) {
    first.push_back(tokens.empty() ? -1 : tokens.front());
  }
  return first;
}

}  // namespace tandem::worker::testing
