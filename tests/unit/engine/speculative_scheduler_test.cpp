// Speculative decoding in the scheduler: drafts scheduled after a request's own tokens, the
// rollback of rejected ones, a stop among accepted tokens, the caps, and the counters.
#include <gtest/gtest.h>

#include "engine/scheduler.h"
#include "testing.h"

namespace tandem::engine {
namespace {

using protocol::FinishReason;
using protocol::StepPlan;
using protocol::StepResult;
using testing::Iota;
using testing::MakeConfig;
using testing::MakeRequest;

SchedulerConfig SpecConfig(int32_t k = 3) {
  SchedulerConfig config = MakeConfig();
  config.num_speculative_tokens = k;
  return config;
}

// A result for a one-request plan: `tokens` gained, `drafts` proposed for the next step.
StepResult Result(const StepPlan& plan, std::vector<int32_t> tokens,
                  std::vector<int32_t> drafts = {}) {
  StepResult result;
  result.step_id = plan.step_id;
  result.request_ids = plan.scheduled_request_ids;
  result.sampled_token_ids = {std::move(tokens)};
  result.logprobs = {{}};
  result.draft_token_ids = {std::move(drafts)};
  return result;
}

// "a": prompt of 6, prefilled in one step that samples 100 and proposes `drafts`.
void Prefill(Scheduler& scheduler, std::vector<int32_t> drafts, int32_t max_tokens = 20) {
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(6), max_tokens)).ok());
  const StepPlan plan = scheduler.Schedule();
  ASSERT_EQ(plan.num_scheduled_tokens, std::vector<int32_t>{6});
  scheduler.UpdateFromOutput(plan, Result(plan, {100}, std::move(drafts)));
}

TEST(SpeculativeSchedulerTest, DraftsFollowTheLastTokenAndRejectedOnesRollBack) {
  Scheduler scheduler(SpecConfig());
  Prefill(scheduler, {101, 102, 103});
  const StepPlan plan = scheduler.Schedule();
  ASSERT_EQ(plan.scheduled_spec_decode_tokens.size(), 1u);
  EXPECT_EQ(plan.scheduled_spec_decode_tokens[0], (std::vector<int32_t>{101, 102, 103}));
  EXPECT_EQ(plan.num_scheduled_tokens, std::vector<int32_t>{4});  // token 100 + 3 drafts
  // Two drafts accepted, the third replaced by the target's 55.
  const auto outputs = scheduler.UpdateFromOutput(plan, Result(plan, {101, 102, 55}, {56}));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].new_token_ids, (std::vector<int32_t>{101, 102, 55}));
  const Request* a = scheduler.FindRequest("a");
  EXPECT_EQ(a->num_tokens(), 10);        // 6 + 100, 101, 102, 55
  EXPECT_EQ(a->num_computed_tokens, 9);  // 103's KV rolled back; 55 not computed yet
  EXPECT_EQ(a->spec_token_ids, std::vector<int32_t>{56});
  const protocol::EngineStats stats = scheduler.MakeStats();
  EXPECT_EQ(stats.spec_num_drafts, 1);
  EXPECT_EQ(stats.spec_num_draft_tokens, 3);
  EXPECT_EQ(stats.spec_num_accepted_tokens, 2);
  EXPECT_EQ(stats.spec_num_accepted_per_pos, (std::vector<int64_t>{1, 1, 0}));
  // The next step verifies the new draft after 55.
  const StepPlan next = scheduler.Schedule();
  EXPECT_EQ(next.num_scheduled_tokens, std::vector<int32_t>{2});
  EXPECT_EQ(next.cached_requests[0].num_computed_tokens, 9);
}

TEST(SpeculativeSchedulerTest, StopTokenIdAmongAcceptedDraftsFinishesThere) {
  Scheduler scheduler(SpecConfig());
  protocol::EngineRequest request = MakeRequest("a", Iota(6), 20);
  request.sampling.stop_token_ids = {7};
  ASSERT_TRUE(scheduler.AddRequest(request).ok());
  StepPlan plan = scheduler.Schedule();
  scheduler.UpdateFromOutput(plan, Result(plan, {100}, {101, 7, 103}));
  plan = scheduler.Schedule();
  const auto outputs = scheduler.UpdateFromOutput(plan, Result(plan, {101, 7, 103, 9}, {1}));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].new_token_ids, (std::vector<int32_t>{101, 7}));
  EXPECT_EQ(outputs[0].finish_reason, static_cast<uint8_t>(FinishReason::kStop));
  EXPECT_EQ(outputs[0].stop_token_id, 7);
  EXPECT_EQ(scheduler.FindRequest("a"), nullptr);
}

TEST(SpeculativeSchedulerTest, DraftsAreCappedByMaxTokensAndTheBudget) {
  // max_tokens 3: after the first token, 2 more may come, so at most 1 draft (+ its bonus).
  Scheduler scheduler(SpecConfig());
  Prefill(scheduler, {101, 102, 103}, /*max_tokens=*/3);
  const StepPlan plan = scheduler.Schedule();
  EXPECT_EQ(plan.scheduled_spec_decode_tokens[0], std::vector<int32_t>{101});
  const auto outputs = scheduler.UpdateFromOutput(plan, Result(plan, {101, 5}, {6, 7}));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].finish_reason, static_cast<uint8_t>(FinishReason::kLength));

  // A token budget of 2 verifies only the first draft.
  SchedulerConfig config = SpecConfig();
  config.max_num_batched_tokens = 2;
  config.max_num_seqs = 1;
  Scheduler tight(config);
  ASSERT_TRUE(tight.AddRequest(MakeRequest("b", Iota(2), 20)).ok());
  StepPlan first = tight.Schedule();
  tight.UpdateFromOutput(first, Result(first, {50}, {51, 52, 53}));
  const StepPlan second = tight.Schedule();
  EXPECT_EQ(second.num_scheduled_tokens, std::vector<int32_t>{2});
  EXPECT_EQ(second.scheduled_spec_decode_tokens[0], std::vector<int32_t>{51});
}

TEST(SpeculativeSchedulerTest, PreemptionDropsTheDrafts) {
  // 3 blocks of 4: "a" and "b" (prompts of 4) take one each; then "a" with 3 drafts needs a
  // second block and takes the last, so "b", needing one too, is preempted.
  SchedulerConfig config = SpecConfig();
  config.num_gpu_blocks = 3;
  config.max_model_len = 12;
  Scheduler scheduler(config);
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("a", Iota(4))).ok());
  ASSERT_TRUE(scheduler.AddRequest(MakeRequest("b", Iota(4, 10))).ok());
  StepPlan plan = scheduler.Schedule();
  ASSERT_EQ(plan.scheduled_request_ids.size(), 2u);
  StepResult result;
  result.step_id = plan.step_id;
  result.request_ids = plan.scheduled_request_ids;
  result.sampled_token_ids = {{5}, {15}};
  result.logprobs = {{}, {}};
  result.draft_token_ids = {{6, 7, 8}, {16, 17, 18}};
  scheduler.UpdateFromOutput(plan, result);
  plan = scheduler.Schedule();
  EXPECT_EQ(plan.scheduled_request_ids, std::vector<std::string>{"a"});
  EXPECT_EQ(scheduler.num_preemptions(), 1);
  EXPECT_TRUE(scheduler.FindRequest("b")->spec_token_ids.empty());
  EXPECT_EQ(scheduler.FindRequest("b")->num_computed_tokens, 0);
}

}  // namespace
}  // namespace tandem::engine
