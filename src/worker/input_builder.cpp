#include "worker/input_builder.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::worker {

InputBuilder::InputBuilder(int32_t block_size) : block_size_(block_size) {
  TANDEM_CHECK(block_size > 0) << "KV block size must be positive, got " << block_size;
}

StepInputs InputBuilder::Build(const protocol::StepPlan& plan, RequestTable& requests) const {
  TANDEM_CHECK(plan.scheduled_request_ids.size() == plan.num_scheduled_tokens.size())
      << "step " << plan.step_id << ": " << plan.scheduled_request_ids.size()
      << " scheduled ids but " << plan.num_scheduled_tokens.size() << " token counts";
  StepInputs inputs;
  model::ForwardContext& ctx = inputs.ctx;
  ctx.block_size = block_size_;
  ctx.query_start_loc.push_back(0);
  for (size_t i = 0; i < plan.scheduled_request_ids.size(); ++i) {
    const std::string& request_id = plan.scheduled_request_ids[i];
    auto it = requests.find(request_id);
    TANDEM_CHECK(it != requests.end())
        << "step " << plan.step_id << " schedules unknown request '" << request_id << "'";
    RequestState& state = it->second;
    const int32_t num_scheduled = plan.num_scheduled_tokens[i];
    const std::vector<int32_t>& drafts = plan.SpecTokens(i);
    const int32_t num_drafts = static_cast<int32_t>(drafts.size());
    AppendRequest(state, drafts, num_scheduled, ctx);
    inputs.requests.push_back(&state);
    inputs.drafts.push_back(&drafts);
    AppendPromptLogprobRows(state, num_scheduled, &inputs);
    const bool samples =
        state.num_computed_tokens + num_scheduled == state.num_tokens() + num_drafts;
    if (samples) {
      inputs.logits_rows.push_back(static_cast<int32_t>(ctx.logits_indices.size()));
      for (int32_t k = num_drafts; k >= 0; --k) {
        ctx.logits_indices.push_back(ctx.num_tokens() - 1 - k);
      }
    } else {
      inputs.logits_rows.push_back(-1);
    }
  }
  return inputs;
}

void InputBuilder::AppendPromptLogprobRows(const RequestState& state, int32_t num_scheduled,
                                           StepInputs* inputs) const {
  model::ForwardContext& ctx = inputs->ctx;
  const int32_t begin = state.num_computed_tokens;
  // Positions whose next token is a prompt token: [begin, min(end, P - 1)).
  const int32_t end = std::min(begin + num_scheduled, state.num_prompt_tokens - 1);
  if (state.sampling.prompt_logprobs < 0 || begin >= end) {
    inputs->prompt_logprob_rows.push_back(-1);
    inputs->num_prompt_logprob_rows.push_back(0);
    inputs->prompt_logprob_first_position.push_back(-1);
    return;
  }
  inputs->prompt_logprob_rows.push_back(static_cast<int32_t>(ctx.logits_indices.size()));
  inputs->num_prompt_logprob_rows.push_back(end - begin);
  inputs->prompt_logprob_first_position.push_back(begin);
  const int32_t first_token = ctx.num_tokens() - num_scheduled;  // this request's first row
  for (int32_t pos = begin; pos < end; ++pos) {
    ctx.logits_indices.push_back(first_token + (pos - begin));
  }
}

void InputBuilder::AppendRequest(const RequestState& state, const std::vector<int32_t>& drafts,
                                 int32_t num_scheduled_tokens, model::ForwardContext& ctx) const {
  const int32_t begin = state.num_computed_tokens;
  const int32_t end = begin + num_scheduled_tokens;
  const int32_t num_tokens = state.num_tokens();
  TANDEM_CHECK(num_scheduled_tokens > 0 && begin >= 0 &&
               end <= num_tokens + static_cast<int32_t>(drafts.size()))
      << "scheduled tokens [" << begin << ", " << end << ") outside the request's " << num_tokens
      << " tokens and " << drafts.size() << " drafts";
  const int64_t num_block_tokens = static_cast<int64_t>(state.block_ids.size()) * block_size_;
  TANDEM_CHECK(end <= num_block_tokens)
      << "block table of " << state.block_ids.size() << " blocks (" << num_block_tokens
      << " slots) cannot hold " << end << " tokens";
  for (int32_t pos = begin; pos < end; ++pos) {
    ctx.token_ids.push_back(pos < num_tokens ? state.token_ids[pos] : drafts[pos - num_tokens]);
    ctx.positions.push_back(pos);
    const int64_t block_id = state.block_ids[pos / block_size_];
    ctx.slot_mapping.push_back(block_id * block_size_ + pos % block_size_);
  }
  ctx.query_start_loc.push_back(ctx.num_tokens());
  ctx.seq_lens.push_back(end);
  ctx.block_tables.push_back(state.block_ids);
  ctx.state_slots.push_back(state.state_slot);
  ctx.num_draft_tokens.push_back(static_cast<int32_t>(drafts.size()));
}

}  // namespace tandem::worker
