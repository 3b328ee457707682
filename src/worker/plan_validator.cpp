#include "worker/plan_validator.h"

#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tandem::worker {
namespace {

Status PlanError(const protocol::StepPlan& plan, const std::string& what) {
  return Internal(fmt::format("step plan {} rejected by the worker: {}", plan.step_id, what));
}

Status CheckBlockIds(const protocol::StepPlan& plan, const std::string& request_id,
                     const std::vector<int32_t>& block_ids, const PlanLimits& limits) {
  for (int32_t block_id : block_ids) {
    if (block_id < 0 || block_id >= limits.num_blocks) {
      return PlanError(plan, fmt::format("request '{}' has block id {}; expected [0, {})",
                                         request_id, block_id, limits.num_blocks));
    }
  }
  return Status::Ok();
}

Status CheckNewRequest(const protocol::StepPlan& plan, const protocol::NewRequestData& data,
                       const PlanLimits& limits) {
  const int32_t num_tokens = static_cast<int32_t>(data.token_ids.size());
  if (data.num_prompt_tokens < 0 || data.num_prompt_tokens > num_tokens) {
    return PlanError(plan, fmt::format("new request '{}' has num_prompt_tokens {}; expected "
                                       "[0, {}] (its token count)",
                                       data.request_id, data.num_prompt_tokens, num_tokens));
  }
  if (data.num_computed_tokens < 0 || data.num_computed_tokens > num_tokens) {
    return PlanError(plan, fmt::format("new request '{}' has num_computed_tokens {}; expected "
                                       "[0, {}]",
                                       data.request_id, data.num_computed_tokens, num_tokens));
  }
  for (int32_t token_id : data.token_ids) {
    if (token_id < 0 || token_id >= limits.vocab_size) {
      return PlanError(plan, fmt::format("new request '{}' has token id {}; expected [0, {})",
                                         data.request_id, token_id, limits.vocab_size));
    }
  }
  const bool has_state = limits.num_state_slots > 0;
  if (has_state ? data.state_slot < 0 || data.state_slot >= limits.num_state_slots
                : data.state_slot != -1) {
    return PlanError(
        plan, has_state ? fmt::format("new request '{}' has state slot {}; expected "
                                      "[0, {})",
                                      data.request_id, data.state_slot, limits.num_state_slots)
                        : fmt::format("new request '{}' has state slot {}; this "
                                      "worker's model keeps no recurrent state",
                                      data.request_id, data.state_slot));
  }
  return CheckBlockIds(plan, data.request_id, data.block_ids, limits);
}

// Token count, computed tokens and blocks a scheduled request will have once the plan applies.
struct Extent {
  int64_t num_tokens = 0;
  int64_t num_computed_tokens = 0;
  int64_t num_blocks = 0;
};

}  // namespace

Status ValidateStepPlan(const protocol::StepPlan& plan, const RequestTable& requests,
                        const PlanLimits& limits) {
  if (!plan.scheduled_spec_decode_tokens.empty() &&
      plan.scheduled_spec_decode_tokens.size() != plan.scheduled_request_ids.size()) {
    return PlanError(
        plan, fmt::format("{} scheduled ids but {} draft lists", plan.scheduled_request_ids.size(),
                          plan.scheduled_spec_decode_tokens.size()));
  }
  if (plan.scheduled_request_ids.size() != plan.num_scheduled_tokens.size()) {
    return PlanError(
        plan, fmt::format("{} scheduled ids but {} token counts", plan.scheduled_request_ids.size(),
                          plan.num_scheduled_tokens.size()));
  }
  const std::unordered_set<std::string> finished(plan.finished_request_ids.begin(),
                                                 plan.finished_request_ids.end());
  auto is_running = [&](const std::string& id) {
    return requests.contains(id) && !finished.contains(id);
  };
  std::unordered_map<std::string, Extent> extents;
  // State slots held once the plan applies: by the requests still running, then the new ones.
  std::unordered_map<int32_t, std::string> slot_holders;
  for (const auto& [id, state] : requests) {
    if (state.state_slot >= 0 && !finished.contains(id)) {
      slot_holders.emplace(state.state_slot, id);
    }
  }
  for (const protocol::NewRequestData& data : plan.new_requests) {
    if (is_running(data.request_id) || extents.contains(data.request_id)) {
      return PlanError(
          plan, fmt::format("new request '{}' is already running on this worker", data.request_id));
    }
    TANDEM_RETURN_IF_ERROR(CheckNewRequest(plan, data, limits));
    if (data.state_slot >= 0) {
      const auto [holder, fresh] = slot_holders.emplace(data.state_slot, data.request_id);
      if (!fresh) {
        return PlanError(plan, fmt::format("new request '{}' has state slot {}, which request "
                                           "'{}' holds",
                                           data.request_id, data.state_slot, holder->second));
      }
    }
    extents[data.request_id] = {static_cast<int64_t>(data.token_ids.size()),
                                data.num_computed_tokens,
                                static_cast<int64_t>(data.block_ids.size())};
  }
  for (const protocol::CachedRequestData& data : plan.cached_requests) {
    if (!is_running(data.request_id) || extents.contains(data.request_id)) {
      return PlanError(plan, fmt::format("cached request '{}' is not running on this worker "
                                         "(or listed twice)",
                                         data.request_id));
    }
    TANDEM_RETURN_IF_ERROR(CheckBlockIds(plan, data.request_id, data.new_block_ids, limits));
    const RequestState& state = requests.at(data.request_id);
    extents[data.request_id] = {
        state.num_tokens(), data.num_computed_tokens,
        static_cast<int64_t>(state.block_ids.size() + data.new_block_ids.size())};
  }
  std::unordered_set<std::string> scheduled;
  for (size_t i = 0; i < plan.scheduled_request_ids.size(); ++i) {
    const std::string& id = plan.scheduled_request_ids[i];
    const int64_t num_scheduled = plan.num_scheduled_tokens[i];
    if (!scheduled.insert(id).second) {
      return PlanError(plan, fmt::format("request '{}' is scheduled twice", id));
    }
    auto it = extents.find(id);
    if (it == extents.end() && is_running(id)) {
      const RequestState& state = requests.at(id);
      it = extents
               .emplace(id, Extent{state.num_tokens(), state.num_computed_tokens,
                                   static_cast<int64_t>(state.block_ids.size())})
               .first;
    }
    if (it == extents.end()) {
      return PlanError(plan, fmt::format("scheduled request '{}' is unknown to this worker", id));
    }
    const Extent& e = it->second;
    const int64_t end = e.num_computed_tokens + num_scheduled;
    const std::vector<int32_t>& drafts = plan.SpecTokens(i);
    const int64_t num_drafts = static_cast<int64_t>(drafts.size());
    if (num_drafts > 0 && end != e.num_tokens + num_drafts) {
      return PlanError(
          plan, fmt::format("request '{}' verifies {} drafts but schedules {} tokens "
                            "after {} computed of {}; drafts follow all its tokens",
                            id, num_drafts, num_scheduled, e.num_computed_tokens, e.num_tokens));
    }
    for (int32_t token_id : drafts) {
      if (token_id < 0 || token_id >= limits.vocab_size) {
        return PlanError(plan, fmt::format("request '{}' has draft token id {}; expected [0, {})",
                                           id, token_id, limits.vocab_size));
      }
    }
    if (num_scheduled <= 0 || e.num_computed_tokens < 0 || end > e.num_tokens + num_drafts) {
      return PlanError(plan, fmt::format("request '{}' schedules {} tokens after {} computed; "
                                         "expected > 0 tokens ending at most at its {} tokens",
                                         id, num_scheduled, e.num_computed_tokens, e.num_tokens));
    }
    if (end > e.num_blocks * limits.block_size) {
      return PlanError(plan, fmt::format("request '{}' needs {} tokens of KV but its block table "
                                         "has {} blocks of {}",
                                         id, end, e.num_blocks, limits.block_size));
    }
  }
  return Status::Ok();
}

}  // namespace tandem::worker
