#include "worker/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "testing.h"

namespace tandem::worker {
namespace {

using protocol::SamplingParams;
using testing::Greedy;
using testing::Seeded;

// Samples `num_draws` tokens from one fixed row, with one stream, returning per-token counts.
std::vector<int> Histogram(const std::vector<float>& logits, const SamplingParams& params,
                           int num_draws, uint64_t seed = 7) {
  Sampler sampler(static_cast<int32_t>(logits.size()));
  RequestGenerator generator = RequestGenerator::FromSeed(seed);
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < num_draws; ++i) {
    ++counts[sampler.SampleRow(logits, {&params, {}, {}, &generator}).token_id];
  }
  return counts;
}

std::vector<float> RandomLogits(int32_t vocab_size, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<float> logits(vocab_size);
  for (float& v : logits) v = static_cast<float>((engine() >> 40) % 1000) / 100.0f - 5.0f;
  return logits;
}

TEST(SamplerTest, GreedyPicksArgmaxAndLowestIdOnTies) {
  const SamplingParams params = Greedy();
  EXPECT_EQ(Histogram({1.0f, 3.0f, 3.0f, 2.0f}, params, 10)[1], 10);
  EXPECT_EQ(GreedyArgmax(std::vector<float>{-1.0f, -1.0f}), 0);
}

TEST(SamplerTest, TemperatureOneSamplesEvenCoinWithinFortyToSixtyPercent) {
  SamplingParams params;  // temperature 1
  const std::vector<int> counts = Histogram({0.5f, 0.5f}, params, 2000);
  EXPECT_GE(counts[0], 800);
  EXPECT_LE(counts[0], 1200);
}

TEST(SamplerTest, TemperatureDividesLogits) {
  // logits / 2 = {ln 3, 0}: p = {0.75, 0.25}. Undivided it would be p0 = 0.9.
  SamplingParams params;
  params.temperature = 2.0f;
  const std::vector<int> counts = Histogram({2.0f * std::log(3.0f), 0.0f}, params, 4000);
  EXPECT_GE(counts[0], 2800);  // 0.70
  EXPECT_LE(counts[0], 3200);  // 0.80
}

TEST(SamplerTest, TopKOneEqualsGreedy) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> logits = RandomLogits(100, seed);
    SamplingParams params;
    params.top_k = 1;
    const int32_t greedy = GreedyArgmax(logits);
    EXPECT_EQ(Histogram(logits, params, 5, seed)[greedy], 5) << "seed " << seed;
  }
}

TEST(SamplerTest, TinyTopPEqualsGreedy) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    const std::vector<float> logits = RandomLogits(100, seed);
    SamplingParams params;
    params.top_p = 1e-6f;
    EXPECT_EQ(Histogram(logits, params, 5, seed)[GreedyArgmax(logits)], 5) << "seed " << seed;
  }
}

TEST(SamplerTest, TopKKeepsTokensTiedWithTheKth) {
  SamplingParams params;
  params.top_k = 2;
  const std::vector<int> counts = Histogram({5.0f, 3.0f, 3.0f, 1.0f}, params, 3000);
  EXPECT_GT(counts[1], 0);
  EXPECT_GT(counts[2], 0);
  EXPECT_EQ(counts[3], 0);
}

TEST(SamplerTest, TopPDropsTheTailWhoseMassIsAtMostOneMinusP) {
  // p = {0.5, 0.3, 0.2}. top_p 0.7: tail {0.2} <= 0.3 is dropped, {0.3, 0.2} = 0.5 is not.
  const std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  SamplingParams params;
  params.top_p = 0.7f;
  std::vector<int> counts = Histogram(logits, params, 3000);
  EXPECT_EQ(counts[2], 0);
  EXPECT_GT(counts[1], 900);  // 0.3 / 0.8 = 37.5% of 3000 = 1125
  params.top_p = 0.85f;       // tail 0.2 > 0.15: everything stays
  counts = Histogram(logits, params, 3000);
  EXPECT_GT(counts[2], 400);  // 20% = 600
}

TEST(SamplerTest, MinPDropsTokensBelowMinPTimesTheMaxProbability) {
  // Relative to the max: {1, 0.5, 0.1, 0.05}. min_p 0.2 keeps tokens 0 and 1 only.
  const std::vector<float> logits = {std::log(10.0f), std::log(5.0f), 0.0f, std::log(0.5f)};
  SamplingParams params;
  params.min_p = 0.2f;
  const std::vector<int> counts = Histogram(logits, params, 3000);
  EXPECT_EQ(counts[2] + counts[3], 0);
  EXPECT_GE(counts[0], 1800);  // 2/3 of 3000 = 2000
  EXPECT_LE(counts[0], 2200);
}

TEST(SamplerTest, PresencePenaltyChangesTheGreedyChoice) {
  Sampler sampler(2);
  SamplingParams params = Greedy();
  params.presence_penalty = 0.2f;
  RequestGenerator generator = RequestGenerator::FromSeed(1);
  const std::vector<int32_t> output = {0};
  const std::vector<float> logits = {1.0f, 0.9f};
  EXPECT_EQ(sampler.SampleRow(logits, {&params, {}, output, &generator}).token_id, 1);
  EXPECT_EQ(sampler.SampleRow(logits, {&params, {}, {}, &generator}).token_id, 0);
}

TEST(SamplerTest, MinTokensMasksStopIdsAndEosUntilReached) {
  Sampler sampler(4, /*eos_token_id=*/3);
  SamplingParams params = Greedy();
  params.min_tokens = 2;
  params.stop_token_ids = {2};
  RequestGenerator generator = RequestGenerator::FromSeed(1);
  const std::vector<float> logits = {0.0f, 1.0f, 5.0f, 9.0f};
  const std::vector<int32_t> one = {0};
  const std::vector<int32_t> two = {0, 0};
  EXPECT_EQ(sampler.SampleRow(logits, {&params, {}, one, &generator}).token_id, 1);
  EXPECT_EQ(sampler.SampleRow(logits, {&params, {}, two, &generator}).token_id, 3);
  params.ignore_eos = true;  // EOS is not a stop then, so it is not masked
  EXPECT_EQ(sampler.SampleRow(logits, {&params, {}, one, &generator}).token_id, 3);
}

TEST(SamplerTest, SeededRequestGivesSameTokensAloneAndInABatchOfEight) {
  constexpr int32_t kVocab = 50;
  constexpr int kSteps = 20;
  const SamplingParams seeded = Seeded(1234);
  SamplingParams unseeded;
  unseeded.top_p = 0.9f;

  // Alone.
  Sampler sampler(kVocab);
  RequestGenerator alone_gen = RequestGenerator::FromSeed(seeded.seed);
  std::vector<int32_t> alone;
  for (int step = 0; step < kSteps; ++step) {
    alone.push_back(
        sampler.SampleRow(RandomLogits(kVocab, step), {&seeded, {}, {}, &alone_gen}).token_id);
  }
  // In a batch of 8, at a row that moves every step, next to unseeded random requests.
  RequestGenerator batch_gen = RequestGenerator::FromSeed(seeded.seed);
  std::vector<RequestGenerator> others;
  for (uint64_t i = 0; i < 7; ++i) others.push_back(RequestGenerator::FromEngineSeed(0, i));
  for (int step = 0; step < kSteps; ++step) {
    const int seeded_row = step % 8;
    std::vector<float> logits;
    std::vector<SamplingRow> rows;
    for (int row = 0, other = 0; row < 8; ++row) {
      const bool is_seeded = row == seeded_row;
      const std::vector<float> row_logits = RandomLogits(kVocab, is_seeded ? step : 1000 + row);
      logits.insert(logits.end(), row_logits.begin(), row_logits.end());
      rows.push_back(is_seeded ? SamplingRow{&seeded, {}, {}, &batch_gen}
                               : SamplingRow{&unseeded, {}, {}, &others[other++]});
    }
    EXPECT_EQ(sampler.Sample(logits, rows)[seeded_row].token_id, alone[step]) << "step " << step;
  }
  // A different seed is a different stream (20 draws over 50 tokens cannot all agree by chance).
  RequestGenerator other_gen = RequestGenerator::FromSeed(99);
  int num_equal = 0;
  for (int step = 0; step < kSteps; ++step) {
    num_equal +=
        sampler.SampleRow(RandomLogits(kVocab, step), {&seeded, {}, {}, &other_gen}).token_id ==
        alone[step];
  }
  EXPECT_LT(num_equal, kSteps);
}

TEST(SamplerTest, LogprobsAreRawLogSoftmaxWithTopListBestFirst) {
  const std::vector<float> logits = {1.0f, 2.0f, 3.0f, 0.5f};
  double z = 0;
  for (float v : logits) z += std::exp(static_cast<double>(v));
  const double log_z = std::log(z);
  SamplingParams params = Greedy();
  params.logprobs = 3;
  params.repetition_penalty = 2.0f;  // token 2: 3 / 2 = 1.5, so greedy picks token 1
  Sampler sampler(4);
  RequestGenerator generator = RequestGenerator::FromSeed(1);
  const std::vector<int32_t> prompt = {2};
  const SampledToken out = sampler.SampleRow(logits, {&params, prompt, {}, &generator});
  ASSERT_TRUE(out.has_logprobs);
  EXPECT_EQ(out.token_id, 1);
  // Logprobs stay raw: the penalty changed the choice, not the reported values.
  EXPECT_NEAR(out.logprobs.sampled.logprob, 2.0 - log_z, 1e-6);
  ASSERT_EQ(out.logprobs.top.size(), 3u);
  EXPECT_EQ(out.logprobs.top[0].token_id, 2);
  EXPECT_EQ(out.logprobs.top[1].token_id, 1);
  EXPECT_EQ(out.logprobs.top[2].token_id, 0);
  EXPECT_NEAR(out.logprobs.top[0].logprob, 3.0 - log_z, 1e-6);
  EXPECT_NEAR(out.logprobs.top[1].logprob, 2.0 - log_z, 1e-6);
  EXPECT_NEAR(out.logprobs.top[2].logprob, 1.0 - log_z, 1e-6);
}

TEST(SamplerTest, NoLogprobsWhenNotRequested) {
  SamplingParams params = Greedy();
  Sampler sampler(2);
  RequestGenerator generator = RequestGenerator::FromSeed(1);
  EXPECT_FALSE(sampler.SampleRow(std::vector<float>{0.0f, 1.0f}, {&params, {}, {}, &generator})
                   .has_logprobs);
}

}  // namespace
}  // namespace tandem::worker
