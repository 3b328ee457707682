#include "worker/penalties.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace tandem::worker {
namespace {

TEST(PenaltiesTest, RepetitionThenFrequencyThenPresenceAsVllm) {
  std::vector<float> logits = {2.0f, -1.0f, 0.5f, 3.0f, 1.0f};
  const std::vector<int32_t> prompt = {0, 1};
  const std::vector<int32_t> output = {2, 2, 3};
  protocol::SamplingParams params;
  params.repetition_penalty = 2.0f;
  params.frequency_penalty = 0.5f;
  params.presence_penalty = 0.25f;
  std::vector<int32_t> scratch;
  ApplyPenalties(params, prompt, output, logits, scratch);
  // token 0 (prompt):  2 / 2                      =  1.0
  // token 1 (prompt): -1 * 2                      = -2.0
  // token 2 (output ×2): 0.5 / 2 - 0.5·2 - 0.25   = -1.0
  // token 3 (output ×1): 3 / 2 - 0.5·1 - 0.25     =  0.75
  // token 4 (unseen): unchanged                   =  1.0
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  EXPECT_FLOAT_EQ(logits[1], -2.0f);
  EXPECT_FLOAT_EQ(logits[2], -1.0f);
  EXPECT_FLOAT_EQ(logits[3], 0.75f);
  EXPECT_FLOAT_EQ(logits[4], 1.0f);
}

TEST(PenaltiesTest, FrequencyAndPresenceIgnoreThePrompt) {
  std::vector<float> logits = {1.0f, 1.0f};
  const std::vector<int32_t> prompt = {0, 0, 0};
  protocol::SamplingParams params;
  params.frequency_penalty = 1.0f;
  params.presence_penalty = 1.0f;
  std::vector<int32_t> scratch;
  ApplyPenalties(params, prompt, {}, logits, scratch);
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  EXPECT_FALSE(HasPenalties(protocol::SamplingParams{}));
  EXPECT_TRUE(HasPenalties(params));
}

TEST(PenaltiesTest, ZeroLogitIsMultipliedByRepetitionPenalty) {
  std::vector<float> logits = {0.0f};
  const std::vector<int32_t> output = {0};
  protocol::SamplingParams params;
  params.repetition_penalty = 3.0f;
  std::vector<int32_t> scratch;
  ApplyPenalties(params, {}, output, logits, scratch);
  EXPECT_FLOAT_EQ(logits[0], 0.0f);
}

TEST(PenaltiesTest, MinTokensMasksOnlyBelowTheMinimum) {
  protocol::SamplingParams params;
  params.min_tokens = 1;
  params.stop_token_ids = {1};
  std::vector<float> logits = {1.0f, 1.0f, 1.0f};
  ApplyMinTokens(params, 0, /*eos_token_id=*/2, logits);
  EXPECT_EQ(logits[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(logits[2], -std::numeric_limits<float>::infinity());
  EXPECT_FLOAT_EQ(logits[0], 1.0f);
  std::vector<float> later = {1.0f, 1.0f, 1.0f};
  ApplyMinTokens(params, 1, 2, later);
  EXPECT_FLOAT_EQ(later[1], 1.0f);
}

}  // namespace
}  // namespace tandem::worker
