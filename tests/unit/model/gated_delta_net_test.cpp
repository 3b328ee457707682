// GatedDeltaNet's state handling: a sequence computed in one step, in a chunk then token by
// token, or next to another sequence in one batch gives the same outputs; a sequence starting
// at position 0 starts from zeros whatever its slot held.
#include "model/layers/gated_delta_net.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "layer_harness.h"

namespace tandem::model {
namespace {

constexpr int64_t kHidden = 16;

GatedDeltaNetDims Dims() {
  GatedDeltaNetDims d;
  d.hidden_size = kHidden;
  d.num_k_heads = 2;
  d.num_v_heads = 4;
  d.key_dim = 8;
  d.value_dim = 8;
  d.conv_kernel = 4;
  return d;
}

std::vector<float> Random(size_t n, std::mt19937& rng, float scale) {
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> x(n);
  for (float& v : x) v = normal(rng);
  return x;
}

GatedDeltaNet MakeLayer() {
  const GatedDeltaNetDims d = Dims();
  std::mt19937 rng(3);
  const int64_t value_size = int64_t{d.num_v_heads} * d.value_dim;
  GatedDeltaNetWeights w;
  w.in_proj_qkv = tensor::Tensor::FromF32({d.conv_channels(), kHidden},
                                          Random(d.conv_channels() * kHidden, rng, 0.25f));
  w.in_proj_z =
      tensor::Tensor::FromF32({value_size, kHidden}, Random(value_size * kHidden, rng, 0.25f));
  w.in_proj_b = tensor::Tensor::FromF32({d.num_v_heads, kHidden},
                                        Random(d.num_v_heads * kHidden, rng, 0.25f));
  w.in_proj_a = tensor::Tensor::FromF32({d.num_v_heads, kHidden},
                                        Random(d.num_v_heads * kHidden, rng, 0.25f));
  w.conv1d = Random(d.conv_channels() * d.conv_kernel, rng, 0.5f);
  w.dt_bias = Random(d.num_v_heads, rng, 1.0f);
  w.a_log = Random(d.num_v_heads, rng, 0.5f);
  w.norm = Random(d.value_dim, rng, 0.1f);
  for (float& v : w.norm) v += 1.0f;
  w.out_proj =
      tensor::Tensor::FromF32({kHidden, value_size}, Random(kHidden * value_size, rng, 0.25f));
  return GatedDeltaNet(d, std::move(w));
}

// One step over sequences given as (first position, rows, slot).
struct Seq {
  int32_t start;
  int32_t rows;
  int32_t slot;
};
ForwardContext Context(const std::vector<Seq>& seqs) {
  ForwardContext ctx;
  ctx.query_start_loc.push_back(0);
  for (const Seq& s : seqs) {
    for (int32_t i = 0; i < s.rows; ++i) ctx.token_ids.push_back(0);
    ctx.query_start_loc.push_back(static_cast<int32_t>(ctx.token_ids.size()));
    ctx.seq_lens.push_back(s.start + s.rows);
    ctx.state_slots.push_back(s.slot);
  }
  return ctx;
}

void ExpectNear(const float* got, const float* want, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << "at " << i;
  }
}

TEST(GatedDeltaNetTest, OneStepChunkThenDecodeAndBatchedSequencesAgree) {
  GatedDeltaNet layer = MakeLayer();
  layer_testing::LayerHarness harness;
  // One step of ctx's rows from x into out, with the scratch the layer declares.
  const auto forward = [&](const float* x, const ForwardContext& ctx, LayerCache& cache,
                           float* out) {
    const int64_t n = ctx.num_tokens();
    tensor::DeviceArena& arena = harness.Arena(layer.scratch_bytes(n, harness.probe()));
    layer.Forward(harness.stream(), layer_testing::Rows(x, n, kHidden), ctx, cache,
                  layer_testing::Rows(out, n, kHidden), arena);
    harness.ExpectReleased();
  };
  const int64_t state_floats = Dims().state_floats();
  std::vector<float> states(3 * state_floats, 0.0f);
  LayerCache cache{nullptr, nullptr, states.data(), state_floats};
  std::mt19937 rng(9);
  constexpr int32_t kTokens = 80;  // more than one 64-token chunk
  const std::vector<float> x = Random(kTokens * kHidden, rng, 1.0f);
  const std::vector<float> other = Random(5 * kHidden, rng, 1.0f);

  std::vector<float> whole(kTokens * kHidden);
  forward(x.data(), Context({{0, kTokens, 0}}), cache, whole.data());

  // Slot 1: 70 tokens (a chunked step), then 10 decode steps; slot 0 still holds the state
  // above, and a new sequence on it must not see that.
  std::vector<float> split(kTokens * kHidden);
  forward(x.data(), Context({{0, 70, 1}}), cache, split.data());
  for (int32_t t = 70; t < kTokens; ++t) {
    forward(x.data() + t * kHidden, Context({{t, 1, 1}}), cache, split.data() + t * kHidden);
  }
  ExpectNear(split.data(), whole.data(), whole.size());

  // In one batch: another sequence (slot 2) first, then ours restarted on slot 0.
  std::vector<float> batch_x(other);
  batch_x.insert(batch_x.end(), x.begin(), x.end());
  std::vector<float> batched(batch_x.size());
  forward(batch_x.data(), Context({{0, 5, 2}, {0, kTokens, 0}}), cache, batched.data());
  ExpectNear(batched.data() + 5 * kHidden, whole.data(), whole.size());
  std::vector<float> alone(5 * kHidden);
  forward(other.data(), Context({{0, 5, 2}}), cache, alone.data());
  ExpectNear(batched.data(), alone.data(), alone.size());
}

}  // namespace
}  // namespace tandem::model
