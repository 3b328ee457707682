// Builders and a fake worker for the engine tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/executor.h"
#include "engine/scheduler_config.h"
#include "protocol/engine_request.h"
#include "protocol/step_plan.h"

namespace tandem::engine::testing {

// Small pool and budget so tests can reason about every block: 4 tokens per block.
inline SchedulerConfig MakeConfig(int32_t num_gpu_blocks = 64, int32_t max_num_batched_tokens = 64,
                                  int32_t max_num_seqs = 16, int32_t max_model_len = 64) {
  SchedulerConfig config;
  config.num_gpu_blocks = num_gpu_blocks;
  config.block_size = 4;
  config.max_num_batched_tokens = max_num_batched_tokens;
  config.max_num_seqs = max_num_seqs;
  config.max_model_len = max_model_len;
  return config;
}

// [start, start + n)
inline std::vector<int32_t> Iota(int32_t n, int32_t start = 0) {
  std::vector<int32_t> ids(n);
  std::iota(ids.begin(), ids.end(), start);
  return ids;
}

inline protocol::EngineRequest MakeRequest(const std::string& request_id,
                                           std::vector<int32_t> prompt_token_ids,
                                           int32_t max_tokens = 8) {
  protocol::EngineRequest request;
  request.request_id = request_id;
  request.prompt_token_ids = std::move(prompt_token_ids);
  request.sampling.max_tokens = max_tokens;
  request.sampling.temperature = 0;
  return request;
}

// The result a worker gives for `plan` when every request samples `token_id` (or -1 for
// those listed in `partial`).
inline protocol::StepResult MakeResult(const protocol::StepPlan& plan, int32_t token_id,
                                       const std::vector<std::string>& partial = {}) {
  protocol::StepResult result;
  result.step_id = plan.step_id;
  for (const std::string& id : plan.scheduled_request_ids) {
    result.request_ids.push_back(id);
    const bool is_partial = std::find(partial.begin(), partial.end(), id) != partial.end();
    result.sampled_token_ids.push_back(is_partial ? std::vector<int32_t>{}
                                                  : std::vector<int32_t>{token_id});
    result.logprobs.push_back({protocol::PositionLogprobs{{token_id, -0.5f}, {}}});
  }
  return result;
}

// A fake worker that keeps the state a real one keeps from the plans (token ids, block table,
// computed count), "writes KV" by storing each computed token id in its slot, and checks every
// protocol invariant: block tables cover the scheduled tokens, diffs agree with its state, and
// every already-computed position (prefix-cache hits included) holds the right token.
// Samples token = (last token + 1) % vocab_size once a request's tokens are all computed.
class FakeExecutor : public Executor {
 public:
  FakeExecutor(int32_t num_gpu_blocks, int32_t block_size, int32_t vocab_size = 1000)
      : block_size_(block_size), vocab_size_(vocab_size), kv_(num_gpu_blocks * block_size, -1) {}

  Result<protocol::StepResult> ExecuteStep(const protocol::StepPlan& plan) override {
    plans.push_back(plan);
    if (fail_next_step) {
      fail_next_step = false;
      return Internal("fake forward failed");
    }
    for (const std::string& id : plan.finished_request_ids) states_.erase(id);
    for (const protocol::NewRequestData& data : plan.new_requests) {
      EXPECT_FALSE(states_.contains(data.request_id)) << data.request_id << " sent twice";
      states_[data.request_id] = {data.token_ids, data.block_ids, data.num_computed_tokens};
    }
    for (const protocol::CachedRequestData& data : plan.cached_requests) {
      auto it = states_.find(data.request_id);
      EXPECT_NE(it, states_.end()) << data.request_id << " diff for an unknown request";
      if (it == states_.end()) continue;
      EXPECT_EQ(it->second.num_computed_tokens, data.num_computed_tokens) << data.request_id;
      it->second.block_ids.insert(it->second.block_ids.end(), data.new_block_ids.begin(),
                                  data.new_block_ids.end());
    }
    protocol::StepResult result;
    result.step_id = plan.step_id;
    for (size_t i = 0; i < plan.scheduled_request_ids.size(); ++i) {
      const std::string& id = plan.scheduled_request_ids[i];
      result.request_ids.push_back(id);
      const int32_t token_id = Compute(id, plan.num_scheduled_tokens[i]);
      result.sampled_token_ids.push_back(token_id < 0 ? std::vector<int32_t>{}
                                                      : std::vector<int32_t>{token_id});
      result.logprobs.push_back({protocol::PositionLogprobs{{token_id, -1.0f}, {}}});
    }
    return result;
  }

  std::vector<protocol::StepPlan> plans;
  bool fail_next_step = false;

 private:
  struct State {
    std::vector<int32_t> token_ids;
    std::vector<int32_t> block_ids;
    int32_t num_computed_tokens = 0;
  };

  int32_t& Slot(const State& state, int32_t position) {
    return kv_[state.block_ids[position / block_size_] * block_size_ + position % block_size_];
  }

  int32_t Compute(const std::string& id, int32_t num_new_tokens) {
    State& state = states_.at(id);
    const int32_t end = state.num_computed_tokens + num_new_tokens;
    EXPECT_LE(end, static_cast<int32_t>(state.token_ids.size())) << id;
    EXPECT_GE(static_cast<int32_t>(state.block_ids.size()) * block_size_, end) << id;
    for (int32_t pos = 0; pos < state.num_computed_tokens; ++pos) {
      EXPECT_EQ(Slot(state, pos), state.token_ids[pos]) << id << ": stale KV at position " << pos;
    }
    for (int32_t pos = state.num_computed_tokens; pos < end; ++pos) {
      Slot(state, pos) = state.token_ids[pos];
    }
    state.num_computed_tokens = end;
    if (end < static_cast<int32_t>(state.token_ids.size())) return -1;
    const int32_t token_id = (state.token_ids.back() + 1) % vocab_size_;
    state.token_ids.push_back(token_id);
    return token_id;
  }

  int32_t block_size_;
  int32_t vocab_size_;
  std::vector<int32_t> kv_;  // [num_gpu_blocks * block_size] token id written at each slot
  std::unordered_map<std::string, State> states_;
};

}  // namespace tandem::engine::testing
