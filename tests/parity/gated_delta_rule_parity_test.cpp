// Gated DeltaNet kernels against their f64 naive references (STYLE.md 17): the recurrent
// (decode) and chunked (prefill) delta rule over lengths around the chunk size, zero and random
// initial states, GQA-style head grouping; the short causal convolution; and that splitting a
// sequence across calls (carrying the state) changes nothing — what chunked prefill and
// token-by-token decode rely on.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

struct DeltaInputs {
  GatedDeltaRuleDims dims;
  std::vector<float> q, k, v, g, beta, state;
};

// Inputs shaped like a real layer's: q/k l2-normalised per head (q scaled by dk^-½), decays as
// in the tiny-qwen3.5 golden's kernel check (g = −e^U(0,2.7) · U(0.001,1.5)), β in (0.05, 0.95).
DeltaInputs MakeInputs(int64_t num_tokens, bool random_state, uint32_t seed) {
  DeltaInputs in;
  in.dims = {num_tokens, /*num_k_heads=*/2, /*num_v_heads=*/4, /*key_dim=*/16, /*value_dim=*/16};
  const GatedDeltaRuleDims& d = in.dims;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  auto normalised = [&](float scale) {
    std::vector<float> x(num_tokens * d.num_k_heads * d.key_dim);
    for (int64_t row = 0; row < num_tokens * d.num_k_heads; ++row) {
      double norm = 0;
      for (int64_t i = 0; i < d.key_dim; ++i) {
        x[row * d.key_dim + i] = normal(rng);
        norm += x[row * d.key_dim + i] * x[row * d.key_dim + i];
      }
      for (int64_t i = 0; i < d.key_dim; ++i) {
        x[row * d.key_dim + i] *= static_cast<float>(scale / std::sqrt(norm + 1e-6));
      }
    }
    return x;
  };
  in.q = normalised(1.0f / std::sqrt(static_cast<float>(d.key_dim)));
  in.k = normalised(1.0f);
  in.v.resize(num_tokens * d.num_v_heads * d.value_dim);
  for (float& x : in.v) x = normal(rng);
  in.g.resize(num_tokens * d.num_v_heads);
  in.beta.resize(num_tokens * d.num_v_heads);
  for (size_t i = 0; i < in.g.size(); ++i) {
    in.g[i] = -std::exp(2.7f * unit(rng)) * (0.001f + 1.499f * unit(rng));
    in.beta[i] = 0.05f + 0.9f * unit(rng);
  }
  in.state.assign(d.num_v_heads * d.key_dim * d.value_dim, 0.0f);
  if (random_state) {
    for (float& x : in.state) x = 0.5f * normal(rng);
  }
  return in;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol,
                const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << what << " at " << i;
  }
}

TEST(GatedDeltaRuleParityTest, RecurrentAndChunkedMatchTheNaiveRecurrence) {
  for (int64_t num_tokens : {1, 2, 63, 64, 65, 200}) {
    for (bool random_state : {false, true}) {
      const DeltaInputs in = MakeInputs(num_tokens, random_state, 7 + num_tokens);
      const GatedDeltaRuleDims& d = in.dims;
      const size_t out_size = num_tokens * d.num_v_heads * d.value_dim;
      std::vector<float> want_state = in.state, want(out_size);
      GatedDeltaRuleNaive(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                          want_state.data(), want.data(), d);
      SCOPED_TRACE("T=" + std::to_string(num_tokens) + (random_state ? " random" : " zero") +
                   " state");
      std::vector<float> state = in.state, got(out_size);
      GatedDeltaRuleRecurrent(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                              state.data(), got.data(), d);
      ExpectNear(got, want, 1e-4f, "recurrent output");
      ExpectNear(state, want_state, 1e-4f, "recurrent state");
      for (int64_t chunk : {16, 32, 64}) {
        SCOPED_TRACE("chunk " + std::to_string(chunk));
        state = in.state;
        GatedDeltaRuleChunked(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                              state.data(), got.data(), d, chunk);
        ExpectNear(got, want, 1e-4f, "chunked output");
        ExpectNear(state, want_state, 1e-4f, "chunked state");
      }
    }
  }
}

TEST(GatedDeltaRuleParityTest, ChunkedPrefillThenTokenByTokenDecodeEqualsOnePass) {
  const DeltaInputs in = MakeInputs(100, /*random_state=*/false, 11);
  const GatedDeltaRuleDims& d = in.dims;
  std::vector<float> want_state = in.state, want(100 * d.num_v_heads * d.value_dim);
  GatedDeltaRuleNaive(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                      want_state.data(), want.data(), d);
  // 70 tokens of prefill (chunks of 64 + 6), then 30 decode steps of one token.
  std::vector<float> state = in.state, got(want.size());
  GatedDeltaRuleDims prefill = d;
  prefill.num_tokens = 70;
  GatedDeltaRuleChunked(in.q.data(), in.k.data(), in.v.data(), in.g.data(), in.beta.data(),
                        state.data(), got.data(), prefill, 64);
  GatedDeltaRuleDims one = d;
  one.num_tokens = 1;
  for (int64_t t = 70; t < 100; ++t) {
    const int64_t kr = t * d.num_k_heads * d.key_dim, vr = t * d.num_v_heads * d.value_dim;
    GatedDeltaRuleRecurrent(in.q.data() + kr, in.k.data() + kr, in.v.data() + vr,
                            in.g.data() + t * d.num_v_heads, in.beta.data() + t * d.num_v_heads,
                            state.data(), got.data() + vr, one);
  }
  ExpectNear(got, want, 1e-4f, "output");
  ExpectNear(state, want_state, 1e-4f, "state");
}

TEST(CausalConv1dParityTest, MatchesNaiveAndCarriesTheStateAcrossCalls) {
  constexpr int64_t kChannels = 33, kKernel = 4;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random = [&](size_t n) {
    std::vector<float> x(n);
    for (float& e : x) e = normal(rng);
    return x;
  };
  const std::vector<float> weight = random(kChannels * kKernel);
  for (int64_t num_tokens : {1, 3, 17}) {
    const std::vector<float> x = random(num_tokens * kChannels);
    const std::vector<float> initial = random(kChannels * (kKernel - 1));
    std::vector<float> want_state = initial, want(x.size());
    CausalConv1dSiluNaive(x.data(), weight.data(), want_state.data(), want.data(), num_tokens,
                          kChannels, kKernel);
    std::vector<float> state = initial, got(x.size());
    CausalConv1dSilu(x.data(), weight.data(), state.data(), got.data(), num_tokens, kChannels,
                     kKernel);
    SCOPED_TRACE("T=" + std::to_string(num_tokens));
    ExpectNear(got, want, 1e-5f, "conv output");
    ExpectNear(state, want_state, 0.0f, "conv state");
    // The same tokens one at a time, state carried.
    state = initial;
    for (int64_t t = 0; t < num_tokens; ++t) {
      CausalConv1dSilu(x.data() + t * kChannels, weight.data(), state.data(),
                       got.data() + t * kChannels, 1, kChannels, kKernel);
    }
    ExpectNear(got, want, 1e-5f, "conv output, token by token");
    ExpectNear(state, want_state, 0.0f, "conv state, token by token");
  }
}

}  // namespace
}  // namespace tandem::kernels
