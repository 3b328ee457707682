// Sampler::VerifyRow, the acceptance step of speculative decoding: greedy rows accept exactly
// the argmax; sampled rows emit tokens with the target distribution whatever the draft.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "testing.h"
#include "worker/sampler.h"

namespace tandem::worker {
namespace {

using protocol::SamplingParams;

TEST(VerifyRowTest, GreedyAcceptsOnlyTheArgmaxAndReturnsIt) {
  Sampler sampler(4);
  const SamplingParams params = testing::Greedy();
  RequestGenerator generator = RequestGenerator::FromSeed(3);
  const std::vector<float> logits = {0.1f, 2.0f, 1.0f, -1.0f};
  bool accepted = false;
  EXPECT_EQ(sampler.VerifyRow(logits, {&params, {}, {}, &generator}, 1, &accepted).token_id, 1);
  EXPECT_TRUE(accepted);
  EXPECT_EQ(sampler.VerifyRow(logits, {&params, {}, {}, &generator}, 2, &accepted).token_id, 1);
  EXPECT_FALSE(accepted);
}

// Pearson's chi-square of `counts` against probabilities `p` (all > 0).
double ChiSquare(const std::vector<int>& counts, const std::vector<double>& p, int n) {
  double chi2 = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = n * p[i];
    chi2 += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return chi2;
}

// 2,000 seeded single-step draws: plain sampling and verification of a fixed draft give the
// target distribution (softmax of logits / T over the top-p set), chi-square p > 0.001 each.
TEST(VerifyRowTest, SampledRowsKeepTheTargetDistributionWhateverTheDraft) {
  const std::vector<float> logits = {1.0f, 0.2f, -0.5f, 0.8f, 0.0f};
  SamplingParams params;
  params.temperature = 0.8f;
  std::vector<double> p(logits.size());
  double z = 0;
  for (size_t i = 0; i < logits.size(); ++i) z += p[i] = std::exp(logits[i] / 0.8);
  for (double& v : p) v /= z;
  constexpr int kDraws = 2000;
  // Critical chi-square for 4 degrees of freedom at p = 0.001.
  constexpr double kCritical = 18.467;
  Sampler sampler(static_cast<int32_t>(logits.size()));
  for (int32_t draft : {-1, 0, 2, 4}) {  // -1: plain SampleRow
    std::vector<int> counts(logits.size(), 0);
    int num_accepted = 0;
    for (int i = 0; i < kDraws; ++i) {
      RequestGenerator generator = RequestGenerator::FromSeed(1000 + i);  // one seeded draw
      const SamplingRow row{&params, {}, {}, &generator};
      bool accepted = false;
      const int32_t token = draft < 0 ? sampler.SampleRow(logits, row).token_id
                                      : sampler.VerifyRow(logits, row, draft, &accepted).token_id;
      ++counts[token];
      num_accepted += accepted;
    }
    EXPECT_LT(ChiSquare(counts, p, kDraws), kCritical) << "draft " << draft;
    if (draft >= 0) {  // accepted with probability P(draft): within 5 sigma
      const double mean = kDraws * p[draft];
      EXPECT_NEAR(num_accepted, mean, 5 * std::sqrt(mean * (1 - p[draft]))) << "draft " << draft;
    }
  }
}

}  // namespace
}  // namespace tandem::worker
