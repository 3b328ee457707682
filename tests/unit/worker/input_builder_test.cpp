#include "worker/input_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing.h"

namespace tandem::worker {
namespace {

using ::testing::ElementsAre;

RequestState MakeState(std::vector<int32_t> tokens, int32_t num_prompt_tokens,
                       int32_t num_computed_tokens, std::vector<int32_t> block_ids) {
  return RequestState{std::move(tokens),          num_prompt_tokens,
                      num_computed_tokens,        std::move(block_ids),
                      protocol::SamplingParams{}, RequestGenerator::FromSeed(0)};
}

TEST(InputBuilderTest, OneMidPrefillChunkAndTwoDecodes) {
  RequestTable requests;
  // "a": 10-token prompt, 4 computed, chunk of 4 → positions 4..7 in block #1 (id 3).
  requests.emplace("a", MakeState({10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 10, 4, {7, 3, 9}));
  // "b": 5 prompt + 1 generated, decode at position 5 → block #1 (id 5), offset 1.
  requests.emplace("b", MakeState({20, 21, 22, 23, 24, 25}, 5, 5, {2, 5}));
  // "c": 2 prompt + 1 generated, decode at position 2 → block #0 (id 0), offset 2.
  requests.emplace("c", MakeState({30, 31, 32}, 2, 2, {0}));
  protocol::StepPlan plan;
  testing::Schedule(plan, "a", 4);
  testing::Schedule(plan, "b", 1);
  testing::Schedule(plan, "c", 1);

  const StepInputs inputs = InputBuilder(/*block_size=*/4).Build(plan, requests);
  const model::ForwardContext& ctx = inputs.ctx;
  EXPECT_THAT(ctx.token_ids, ElementsAre(14, 15, 16, 17, 25, 32));
  EXPECT_THAT(ctx.positions, ElementsAre(4, 5, 6, 7, 5, 2));
  EXPECT_THAT(ctx.slot_mapping, ElementsAre(12, 13, 14, 15, 21, 2));
  EXPECT_THAT(ctx.query_start_loc, ElementsAre(0, 4, 5, 6));
  EXPECT_THAT(ctx.seq_lens, ElementsAre(8, 6, 3));
  EXPECT_THAT(ctx.logits_indices, ElementsAre(4, 5));  // "a" is mid-prefill: no logits
  EXPECT_THAT(inputs.logits_rows, ElementsAre(-1, 0, 1));
  ASSERT_EQ(ctx.block_tables.size(), 3u);
  EXPECT_THAT(ctx.block_tables[0], ElementsAre(7, 3, 9));
  EXPECT_EQ(ctx.block_size, 4);
  EXPECT_EQ(inputs.requests[1], &requests.at("b"));
}

TEST(InputBuilderTest, LastPromptChunkSamples) {
  RequestTable requests;
  requests.emplace("a", MakeState({1, 2, 3, 4, 5}, 5, 3, {0, 1}));
  protocol::StepPlan plan;
  testing::Schedule(plan, "a", 2);
  const StepInputs inputs = InputBuilder(4).Build(plan, requests);
  EXPECT_THAT(inputs.ctx.logits_indices, ElementsAre(1));
  EXPECT_THAT(inputs.ctx.slot_mapping, ElementsAre(3, 4));
}

}  // namespace
}  // namespace tandem::worker
