#include "worker/model_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing.h"
#include "worker/worker.h"

namespace tandem::worker {
namespace model_runner_test {
namespace {

using testing::Cached;
using ::testing::ElementsAre;
using testing::FakeModel;
using testing::NewRequest;
using testing::Schedule;

constexpr int32_t kVocab = 16;
constexpr int32_t kBlockSize = 4;

TEST(ModelRunnerTest, NewCachedFinishedAndPreemptedResumeFlow) {
  auto model = std::make_unique<FakeModel>(kVocab);
  auto contexts = model->contexts_;
  ModelRunner runner(std::move(model), /*num_blocks=*/8, kBlockSize, /*engine_seed=*/0);

  // Step 1: "a" prefills 3 of its 5 prompt tokens: runs, samples nothing.
  protocol::StepPlan plan1;
  plan1.step_id = 1;
  plan1.new_requests.push_back(NewRequest("a", {1, 2, 3, 4, 5}, {0, 1}));
  Schedule(plan1, "a", 3);
  protocol::StepResult r1 = runner.Execute(plan1);
  EXPECT_EQ(r1.step_id, 1);
  EXPECT_THAT(r1.request_ids, ElementsAre("a"));
  EXPECT_THAT(testing::FirstTokens(r1), ElementsAre(-1));
  EXPECT_THAT(contexts->back().token_ids, ElementsAre(1, 2, 3));
  EXPECT_TRUE(contexts->back().logits_indices.empty());

  // Step 2: the last 2 prompt tokens; samples last token + 1 = 6.
  protocol::StepPlan plan2;
  plan2.cached_requests.push_back(Cached("a", 3));
  Schedule(plan2, "a", 2);
  EXPECT_THAT(testing::FirstTokens(runner.Execute(plan2)), ElementsAre(6));
  EXPECT_THAT(contexts->back().positions, ElementsAre(3, 4));
  EXPECT_THAT(runner.FindRequest("a")->token_ids, ElementsAre(1, 2, 3, 4, 5, 6));

  // Step 3: new "b" next to "a"'s decode, which feeds the token the worker sampled itself.
  protocol::StepPlan plan3;
  plan3.new_requests.push_back(NewRequest("b", {7}, {2}));
  plan3.cached_requests.push_back(Cached("a", 5));
  Schedule(plan3, "b", 1);
  Schedule(plan3, "a", 1);
  EXPECT_THAT(testing::FirstTokens(runner.Execute(plan3)), ElementsAre(8, 7));
  const model::ForwardContext& ctx3 = contexts->back();
  EXPECT_THAT(ctx3.token_ids, ElementsAre(7, 6));
  EXPECT_THAT(ctx3.positions, ElementsAre(0, 5));
  EXPECT_THAT(ctx3.slot_mapping, ElementsAre(2 * kBlockSize, 1 * kBlockSize + 1));
  EXPECT_THAT(ctx3.query_start_loc, ElementsAre(0, 1, 2));
  EXPECT_THAT(ctx3.seq_lens, ElementsAre(1, 6));

  // Step 4: "a" finished: dropped. "b" decodes and gets a new block appended.
  protocol::StepPlan plan4;
  plan4.finished_request_ids = {"a"};
  plan4.cached_requests.push_back(Cached("b", 1, {5}));
  Schedule(plan4, "b", 1);
  EXPECT_THAT(testing::FirstTokens(runner.Execute(plan4)), ElementsAre(9));
  EXPECT_EQ(runner.FindRequest("a"), nullptr);
  EXPECT_THAT(runner.FindRequest("b")->block_ids, ElementsAre(2, 5));

  // Step 5: "b" was preempted and comes back in full (prompt 1 + 2 generated), new blocks.
  protocol::StepPlan plan5;
  plan5.finished_request_ids = {"b"};
  plan5.new_requests.push_back(NewRequest("b", {7, 8, 9}, {3}, testing::Greedy(), 1));
  Schedule(plan5, "b", 3);
  EXPECT_THAT(testing::FirstTokens(runner.Execute(plan5)), ElementsAre(10));
  EXPECT_THAT(contexts->back().token_ids, ElementsAre(7, 8, 9));
  EXPECT_THAT(contexts->back().slot_mapping, ElementsAre(12, 13, 14));
  EXPECT_THAT(runner.FindRequest("b")->output_token_ids(), ElementsAre(8, 9, 10));
}

TEST(ModelRunnerTest, EmptyPlanRunsNoForward) {
  auto model = std::make_unique<FakeModel>(kVocab);
  auto contexts = model->contexts_;
  ModelRunner runner(std::move(model), 4, kBlockSize, 0);
  protocol::StepPlan plan;
  plan.step_id = 9;
  const protocol::StepResult result = runner.Execute(plan);
  EXPECT_EQ(result.step_id, 9);
  EXPECT_TRUE(result.sampled_token_ids.empty());
  EXPECT_TRUE(contexts->empty());
}

// Runs seeded request "s" (uniform logits, so tokens come only from its stream) for
// `num_tokens` decode steps starting from `tokens`; returns the tokens it generated.
std::vector<int32_t> Generate(ModelRunner& runner, std::vector<int32_t> tokens,
                              int32_t num_prompt_tokens, int num_tokens) {
  std::vector<int32_t> generated;
  protocol::StepPlan first;
  first.new_requests.push_back(
      NewRequest("s", tokens, {0, 1, 2, 3}, testing::Seeded(42), num_prompt_tokens));
  Schedule(first, "s", static_cast<int32_t>(tokens.size()));
  generated.push_back(testing::FirstTokens(runner.Execute(first))[0]);
  for (int i = 1; i < num_tokens; ++i) {
    protocol::StepPlan plan;
    plan.cached_requests.push_back(Cached("s", static_cast<int32_t>(tokens.size()) + i - 1));
    Schedule(plan, "s", 1);
    generated.push_back(testing::FirstTokens(runner.Execute(plan))[0]);
  }
  return generated;
}

TEST(ModelRunnerTest, SeededRequestResumedAfterPreemptionContinuesItsStream) {
  ModelRunner straight(std::make_unique<FakeModel>(kVocab, /*uniform=*/true), 8, kBlockSize, 0);
  const std::vector<int32_t> all = Generate(straight, {1, 2}, 2, 6);

  ModelRunner preempted(std::make_unique<FakeModel>(kVocab, true), 8, kBlockSize, 0);
  std::vector<int32_t> first = Generate(preempted, {1, 2}, 2, 3);
  protocol::StepPlan drop;
  drop.finished_request_ids = {"s"};
  preempted.Execute(drop);
  std::vector<int32_t> resumed_tokens = {1, 2};
  resumed_tokens.insert(resumed_tokens.end(), first.begin(), first.end());
  const std::vector<int32_t> rest = Generate(preempted, resumed_tokens, 2, 3);
  first.insert(first.end(), rest.begin(), rest.end());
  EXPECT_EQ(first, all);
}

TEST(WorkerTest, PlanThatDoesNotFitTheWorkerIsAnErrorNotACrash) {
  Worker worker(std::make_unique<FakeModel>(kVocab), {/*num_kv_blocks=*/4, kBlockSize, 0, -1});
  protocol::StepPlan unknown;
  unknown.cached_requests.push_back(Cached("ghost", 0));
  Schedule(unknown, "ghost", 1);
  Result<protocol::StepResult> r = worker.ExecuteStep(unknown);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("ghost"), std::string::npos);

  protocol::StepPlan too_few_blocks;  // 5 tokens in one block of 4
  too_few_blocks.new_requests.push_back(NewRequest("a", {1, 2, 3, 4, 5}, {0}));
  Schedule(too_few_blocks, "a", 5);
  EXPECT_FALSE(worker.ExecuteStep(too_few_blocks).ok());

  protocol::StepPlan bad_block;
  bad_block.new_requests.push_back(NewRequest("a", {1}, {4}));  // pool has blocks 0..3
  Schedule(bad_block, "a", 1);
  EXPECT_FALSE(worker.ExecuteStep(bad_block).ok());

  protocol::StepPlan bad_token;
  bad_token.new_requests.push_back(NewRequest("a", {kVocab}, {0}));
  Schedule(bad_token, "a", 1);
  EXPECT_FALSE(worker.ExecuteStep(bad_token).ok());

  protocol::StepPlan good;
  good.new_requests.push_back(NewRequest("a", {1, 2, 3, 4, 5}, {0, 1}));
  Schedule(good, "a", 5);
  Result<protocol::StepResult> ok = worker.ExecuteStep(good);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_THAT(testing::FirstTokens(*ok), ElementsAre(6));

  protocol::StepPlan again;  // "a" is running: sending it as new again is a disagreement
  again.new_requests.push_back(NewRequest("a", {1}, {2}));
  Schedule(again, "a", 1);
  EXPECT_FALSE(worker.ExecuteStep(again).ok());
}

}  // namespace
}  // namespace model_runner_test
}  // namespace tandem::worker
