// Every CPU kernel against its naive reference over a few shapes (f32; tolerance per op).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

std::vector<float> RandomVector(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i]))) << "at index " << i;
  }
}

TEST(MatmulParityTest, OneDnnMatchesNaiveOverShapes) {
  const int64_t shapes[][3] = {{1, 64, 64}, {16, 96, 64}, {5, 172, 64}, {33, 512, 64}, {7, 3, 129}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    auto x = RandomVector(m * k, 1);
    auto w = RandomVector(n * k, 2);
    std::vector<float> got(m * n), want(m * n);
    Matmul(x.data(), w.data(), got.data(), m, n, k);
    Matmul(x.data(), w.data(), got.data(), m, n, k);  // second call hits the primitive cache
    MatmulNaive(x.data(), w.data(), want.data(), m, n, k);
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
    ExpectNear(got, want, 1e-5f);
  }
}

// Words all clear, all set and mixed; lengths with and without a partial last word; in place.
TEST(MaskedCopyParityTest, MatchesNaiveOutOfPlaceAndInPlace) {
  std::mt19937 rng(11);
  for (int64_t n : {2, 31, 32, 33, 95, 1000, 151936}) {
    const std::vector<float> src = RandomVector(static_cast<size_t>(n), 3);
    std::vector<uint32_t> bitmask((n + 31) / 32);
    for (size_t w = 0; w < bitmask.size(); ++w) {
      const uint32_t kind = rng() % 3;
      bitmask[w] = kind == 0 ? 0u : kind == 1 ? 0xFFFFFFFFu : static_cast<uint32_t>(rng());
    }
    bitmask[0] = 0xA5A5A5A5u;  // mixed, so every length keeps some and masks some
    std::vector<float> want(n), got(n, 7.0f);
    MaskedCopyNaive(src.data(), bitmask.data(), n, want.data());
    MaskedCopy(src.data(), bitmask.data(), n, got.data());
    ASSERT_EQ(got, want) << "n " << n;
    std::vector<float> in_place = src;
    MaskedCopy(in_place.data(), bitmask.data(), n, in_place.data());
    ASSERT_EQ(in_place, want) << "in place, n " << n;
    int64_t kept = 0;
    for (int64_t i = 0; i < n; ++i) kept += std::isfinite(want[i]);
    EXPECT_GT(kept, 0) << n;  // the case masks something and keeps something
    EXPECT_LT(kept, n) << n;
  }
}

TEST(RmsNormParityTest, MatchesNaive) {
  for (int64_t rows : {1, 7, 300}) {
    for (int64_t dim : {8, 64, 333}) {
      auto x = RandomVector(rows * dim, 3, 3.0f);
      auto w = RandomVector(dim, 4);
      std::vector<float> got(rows * dim), want(rows * dim);
      RmsNorm(x.data(), w.data(), got.data(), rows, dim, 1e-5f);
      RmsNormNaive(x.data(), w.data(), want.data(), rows, dim, 1e-5f);
      ExpectNear(got, want, 1e-5f);
    }
  }
}

TEST(RopeParityTest, BothStylesMatchNaive) {
  for (RopeStyle style : {RopeStyle::kNeox, RopeStyle::kInterleaved}) {
    for (int64_t head_dim : {8, 64, 128}) {
      const int64_t tokens = 9, heads = 3;
      std::vector<int32_t> pos = {0, 1, 2, 5, 17, 100, 511, 1000, 4095};
      auto got = RandomVector(tokens * heads * head_dim, 5);
      auto want = got;
      Rope(got.data(), pos.data(), tokens, heads, head_dim, 10000.0f, style);
      RopeNaive(want.data(), pos.data(), tokens, heads, head_dim, 10000.0f, style);
      ExpectNear(got, want, 2e-3f);  // f32 angle at position 4095 vs f64
    }
  }
}

// llama.cpp's converter permutes each head's rows so that interleaved rotation of the permuted
// vector equals rotate_half rotation of the original.
TEST(RopeParityTest, InterleavedOnPermutedEqualsNeoxOnOriginal) {
  const int64_t heads = 2, hd = 8;
  std::vector<int32_t> pos = {3};
  auto neox = RandomVector(heads * hd, 6);
  std::vector<float> inter(neox.size());
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t j = 0; j < hd / 2; ++j) {
      inter[h * hd + 2 * j] = neox[h * hd + j];
      inter[h * hd + 2 * j + 1] = neox[h * hd + hd / 2 + j];
    }
  }
  Rope(neox.data(), pos.data(), 1, heads, hd, 10000.0f, RopeStyle::kNeox);
  Rope(inter.data(), pos.data(), 1, heads, hd, 10000.0f, RopeStyle::kInterleaved);
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t j = 0; j < hd / 2; ++j) {
      EXPECT_FLOAT_EQ(inter[h * hd + 2 * j], neox[h * hd + j]);
      EXPECT_FLOAT_EQ(inter[h * hd + 2 * j + 1], neox[h * hd + hd / 2 + j]);
    }
  }
}

TEST(SiluMulParityTest, MatchesNaive) {
  for (int64_t rows : {1, 16, 200}) {
    const int64_t ff = 172;
    auto gu = RandomVector(rows * 2 * ff, 7, 6.0f);
    std::vector<float> got(rows * ff), want(rows * ff);
    SiluMul(gu.data(), got.data(), rows, ff);
    SiluMulNaive(gu.data(), want.data(), rows, ff);
    ExpectNear(got, want, 1e-5f);
  }
}

TEST(SoftmaxParityTest, MatchesNaiveAndSumsToOne) {
  for (int64_t n : {1, 8, 512, 5000}) {
    auto got = RandomVector(4 * n, 8, 20.0f);
    auto want = got;
    Softmax(got.data(), 4, n);
    SoftmaxNaive(want.data(), 4, n);
    ExpectNear(got, want, 1e-5f);
    EXPECT_NEAR(std::accumulate(got.begin(), got.begin() + n, 0.0), 1.0, 1e-4);
  }
}

TEST(TopKRoutingParityTest, MatchesNaiveAndRenormalises) {
  for (auto [experts, k] :
       std::vector<std::pair<int64_t, int64_t>>{{8, 2}, {8, 4}, {64, 8}, {4, 4}}) {
    const int64_t tokens = 37;
    auto logits = RandomVector(tokens * experts, 9, 4.0f);
    std::vector<int32_t> ids(tokens * k), ids_ref(tokens * k);
    std::vector<float> w(tokens * k), w_ref(tokens * k);
    TopKRouting(logits.data(), tokens, experts, k, ids.data(), w.data());
    TopKRoutingNaive(logits.data(), tokens, experts, k, ids_ref.data(), w_ref.data());
    EXPECT_EQ(ids, ids_ref);
    ExpectNear(w, w_ref, 1e-5f);
    EXPECT_NEAR(std::accumulate(w.begin(), w.begin() + k, 0.0), 1.0, 1e-5);
  }
}

TEST(TopKRoutingParityTest, TiesGoToLowerExpertId) {
  std::vector<float> logits = {1.0f, 3.0f, 3.0f, 3.0f};
  std::vector<int32_t> ids(2);
  std::vector<float> w(2);
  TopKRouting(logits.data(), 1, 4, 2, ids.data(), w.data());
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2}));
  EXPECT_FLOAT_EQ(w[0], 0.5f);
}

// Decode and prefill rows mixed in one batch, GQA, a shuffled block table.
TEST(PagedAttentionParityTest, MixedBatchMatchesNaive) {
  for (auto [heads, kv_heads, hd] :
       std::vector<std::tuple<int, int, int>>{{8, 4, 8}, {4, 4, 16}, {8, 1, 64}}) {
    PagedAttentionParams p;
    p.num_heads = heads;
    p.num_kv_heads = kv_heads;
    p.head_dim = hd;
    p.block_size = 16;
    p.scale = 1.0f / std::sqrt(static_cast<float>(hd));
    const int32_t num_blocks = 32;
    const int64_t slot_floats = static_cast<int64_t>(kv_heads) * hd;
    auto kc = RandomVector(num_blocks * 16 * slot_floats, 10);
    auto vc = RandomVector(num_blocks * 16 * slot_floats, 11);
    // seq 0: decode at len 37; seq 1: prefill of 20 from scratch; seq 2: chunk of 5 at len 50.
    std::vector<int32_t> seq_lens = {37, 20, 50};
    std::vector<int32_t> qsl = {0, 1, 21, 26};
    std::vector<std::vector<int32_t>> tables = {{31, 4, 17}, {2, 9}, {30, 1, 8, 12}};
    const int64_t tokens = qsl.back();
    auto q = RandomVector(tokens * heads * hd, 12);
    std::vector<float> got(q.size()), want(q.size());
    PagedAttention(q.data(), kc.data(), vc.data(), qsl.data(), seq_lens.data(), 3, tables, p,
                   got.data());
    PagedAttentionNaive(q.data(), kc.data(), vc.data(), qsl.data(), seq_lens.data(), 3, tables, p,
                        want.data());
    ExpectNear(got, want, 1e-5f);
  }
}

TEST(WriteKvCacheTest, WritesSlotsAndSkipsPadding) {
  const int64_t row = 4;
  std::vector<float> k = {1, 2, 3, 4, 5, 6, 7, 8}, v = {-1, -2, -3, -4, -5, -6, -7, -8};
  std::vector<int64_t> slots = {3, -1};
  std::vector<float> kc(5 * row, 0.0f), vc(5 * row, 0.0f);
  WriteKvCache(k.data(), v.data(), slots.data(), 2, row, kc.data(), vc.data());
  EXPECT_EQ(kc[3 * row], 1.0f);
  EXPECT_EQ(vc[3 * row + 3], -4.0f);
  EXPECT_EQ(std::count(kc.begin(), kc.end(), 0.0f), 4 * row);
}

}  // namespace
}  // namespace tandem::kernels
