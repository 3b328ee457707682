// ValidateStepPlan on the state slots the engine's cache manager hands out: a new request of a
// hybrid model must carry a slot in range that no running request holds; a model without a
// state group takes none. (The rest of the checks run in every worker and e2e test.)
#include "worker/plan_validator.h"

#include <gtest/gtest.h>

#include <string>

namespace tandem::worker {
namespace {

constexpr PlanLimits kHybrid{/*num_blocks=*/8, /*block_size=*/16, /*vocab_size=*/32,
                             /*num_state_slots=*/2};

protocol::NewRequestData New(std::string id, int32_t state_slot) {
  protocol::NewRequestData data;
  data.request_id = std::move(id);
  data.token_ids = {1, 2, 3};
  data.num_prompt_tokens = 3;
  data.block_ids = {0};
  data.state_slot = state_slot;
  return data;
}

protocol::StepPlan PlanOf(protocol::NewRequestData data) {
  protocol::StepPlan plan;
  plan.step_id = 5;
  plan.scheduled_request_ids.push_back(data.request_id);
  plan.num_scheduled_tokens.push_back(3);
  plan.new_requests.push_back(std::move(data));
  return plan;
}

RequestTable Running(const std::string& id, int32_t state_slot) {
  RequestTable requests;
  RequestState state{{4, 5}, 2, 2, {1}, {}, RequestGenerator::FromSeed(1), state_slot, nullptr};
  requests.emplace(id, std::move(state));
  return requests;
}

TEST(PlanValidatorTest, ANewRequestsStateSlotIsInRangeAndFree) {
  EXPECT_TRUE(ValidateStepPlan(PlanOf(New("a", 1)), Running("r", 0), kHybrid).ok());
  const Status out_of_range = ValidateStepPlan(PlanOf(New("a", 2)), {}, kHybrid);
  EXPECT_EQ(out_of_range.message(),
            "step plan 5 rejected by the worker: new request 'a' has state slot 2; expected "
            "[0, 2)");
  EXPECT_FALSE(ValidateStepPlan(PlanOf(New("a", -1)), {}, kHybrid).ok());
  const Status held = ValidateStepPlan(PlanOf(New("a", 0)), Running("r", 0), kHybrid);
  EXPECT_EQ(held.message(),
            "step plan 5 rejected by the worker: new request 'a' has state slot 0, which request "
            "'r' holds");
  // A request finished in the same plan gave its slot back.
  protocol::StepPlan reuse = PlanOf(New("a", 0));
  reuse.finished_request_ids.push_back("r");
  EXPECT_TRUE(ValidateStepPlan(reuse, Running("r", 0), kHybrid).ok());
  // Two new requests on one slot.
  protocol::StepPlan twice = PlanOf(New("a", 1));
  twice.new_requests.push_back(New("b", 1));
  twice.scheduled_request_ids.push_back("b");
  twice.num_scheduled_tokens.push_back(3);
  EXPECT_FALSE(ValidateStepPlan(twice, {}, kHybrid).ok());
}

TEST(PlanValidatorTest, AModelWithoutStateTakesNoSlot) {
  PlanLimits plain = kHybrid;
  plain.num_state_slots = 0;
  EXPECT_TRUE(ValidateStepPlan(PlanOf(New("a", -1)), {}, plain).ok());
  EXPECT_EQ(ValidateStepPlan(PlanOf(New("a", 0)), {}, plain).message(),
            "step plan 5 rejected by the worker: new request 'a' has state slot 0; this worker's "
            "model keeps no recurrent state");
}

}  // namespace
}  // namespace tandem::worker
