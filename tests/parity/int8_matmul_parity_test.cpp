// MatmulInt8 (W8A8, docs/design/w8a8.md) against its naive int64 reference over shapes × rows ×
// both epilogues, on every SIMD path this CPU has: the sums are exact integers and the epilogue
// is the same f32 arithmetic, so every output must be bit-identical. The quantizers against
// hand-computed rows (ties, zero row, clamping).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tensor/dtype.h"

namespace tandem::kernels {
namespace {

std::vector<std::string> Int8Isas() {
  std::vector<std::string> isas;
  for (const char* name : {"avx512vnni", "avx2", "portable"}) {
    if (ForceMatmulInt8Isa(name)) isas.push_back(name);
  }
  ForceMatmulInt8Isa(isas.front().c_str());  // back to the best
  std::string names;
  for (const auto& i : isas) names += " " + i;
  std::printf("int8 matmul paths on this CPU:%s\n", names.c_str());
  return isas;
}

std::vector<int8_t> RandomInt8(int64_t count, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<int8_t>(dist(rng));
  return v;
}

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

TEST(Int8MatmulParity, EveryIsaMatchesTheNaiveSumsBitForBit) {
  const std::vector<std::string> isas = Int8Isas();
  ASSERT_FALSE(isas.empty());
  // k: below one vector, not a multiple of 16 or 64, exactly 64, long; n: not a multiple of 4
  // or of the 64-row chunk, and big enough to be split over threads.
  const std::vector<std::array<int64_t, 2>> shapes = {{5, 3},    {64, 4},     {100, 67},
                                                      {77, 130}, {1024, 257}, {300, 64}};
  int checked = 0;
  for (const std::string& isa : isas) {
    ASSERT_TRUE(ForceMatmulInt8Isa(isa.c_str()));
    for (const auto& [k, n] : shapes) {
      // Extreme values: activations at -128/127 (static) and weights at ±127 with -128 too,
      // so an offset or saturation slip shows.
      const std::vector<int8_t> w = RandomInt8(n * k, -128, 127, static_cast<uint32_t>(k * 31 + n));
      std::vector<int32_t> sums(static_cast<size_t>(n));
      Int8RowSums(w.data(), n, k, sums.data());
      std::vector<int8_t> packed(static_cast<size_t>(PackedInt8Bytes(n, k)));
      PackInt8Weights(w.data(), n, k, packed.data());
      std::vector<float> w_scale(static_cast<size_t>(n));
      std::vector<int32_t> bias(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) {
        w_scale[j] = 0.001f * static_cast<float>(j % 13 + 1) / 7.0f;
        bias[j] = static_cast<int32_t>(j * 977 % 20001) - 10000;
      }
      for (int64_t m : {1, 3, 4, 9, 17}) {
        std::vector<int8_t> x = RandomInt8(m * k, -128, 127, static_cast<uint32_t>(m + k));
        x[0] = -128;
        if (m * k > 1) x[1] = 127;
        std::vector<float> x_scale(static_cast<size_t>(m));
        for (int64_t i = 0; i < m; ++i) x_scale[i] = 0.01f * static_cast<float>(i + 1) / 3.0f;
        for (bool dynamic : {true, false}) {
          const float* xs = dynamic ? x_scale.data() : nullptr;
          const int32_t* b = dynamic ? nullptr : bias.data();
          std::vector<float> got(static_cast<size_t>(m * n)), want(got.size());
          MatmulInt8(x.data(), packed.data(), sums.data(), xs, w_scale.data(), b, got.data(), m, n,
                     k);
          MatmulInt8Naive(x.data(), w.data(), xs, w_scale.data(), b, want.data(), m, n, k);
          for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_TRUE(SameBits(got[i], want[i]))
                << isa << " m=" << m << " n=" << n << " k=" << k << " dynamic=" << dynamic
                << " output " << i << ": " << got[i] << " vs " << want[i];
            ++checked;
          }
        }
      }
    }
  }
  ForceMatmulInt8Isa(isas.front().c_str());
  EXPECT_GT(checked, 1000);
}

// Random ggml Q8_0 rows [n, k]: f16 scales of either sign, q over the whole int8 range.
std::vector<uint8_t> RandomQ8_0(int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  std::uniform_int_distribution<int> q(-128, 127);
  std::vector<uint8_t> w;
  for (int64_t b = 0; b < n * k / 32; ++b) {
    const uint16_t d = tensor::FloatToHalf(b == 1 ? 0.0f : scale(rng));
    w.push_back(static_cast<uint8_t>(d & 0xff));
    w.push_back(static_cast<uint8_t>(d >> 8));
    for (int j = 0; j < 32; ++j) w.push_back(static_cast<uint8_t>(static_cast<int8_t>(q(rng))));
  }
  return w;
}

TEST(Q8_0Int8Parity, PackedKernelMatchesTheNaiveDotBitForBit) {
  if (!MatmulQ8_0Int8Available()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  int checked = 0;
  for (int64_t k : {32, 64, 1024}) {
    for (int64_t n : {1, 16, 17, 67, 300}) {
      const std::vector<uint8_t> w = RandomQ8_0(n, k, static_cast<uint32_t>(k + n));
      std::vector<uint8_t> packed(static_cast<size_t>(PackedQ8_0Bytes(n, k)));
      PackQ8_0Weights(w.data(), n, k, packed.data());
      for (int64_t m : {1, 3, 4, 5, 17}) {
        std::mt19937 rng(static_cast<uint32_t>(m * k));
        std::normal_distribution<float> dist(0.0f, 1.0f);
        std::vector<float> x(static_cast<size_t>(m * k));
        for (auto& v : x) v = dist(rng);
        for (int64_t p = 0; p < 32; ++p) x[p] = 0.0f;  // an all-zero block: d = 0, q = 0
        std::vector<int8_t> x_q(x.size());
        std::vector<float> x_d(static_cast<size_t>(m * k / 32));
        QuantizeRowsQ8_0(x.data(), m, k, x_q.data(), x_d.data());
        EXPECT_EQ(x_d[0], 0.0f);
        std::vector<float> got(static_cast<size_t>(m * n)), want(got.size());
        MatmulQ8_0Int8(x_q.data(), x_d.data(), packed.data(), got.data(), m, n, k);
        MatmulQ8_0Int8Naive(x_q.data(), x_d.data(), w.data(), want.data(), m, n, k);
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_TRUE(SameBits(got[i], want[i]))
              << "m=" << m << " n=" << n << " k=" << k << " output " << i << ": " << got[i]
              << " vs " << want[i];
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

TEST(Q8_0Int8Parity, ActivationBlocksAreQuantizedAsGgml) {
  // One block: max 2.54 → d = 0.02 (as f16: 0.0200042724609375), q = rint(x · 50): 0.01 → 0
  // (0.5 to even), 0.03 → 2 (1.5 to even), -2.54 → -127, 1.0 → 50.
  std::vector<float> x(32, 0.0f);
  x[0] = 0.01f;
  x[1] = 0.03f;
  x[2] = -2.54f;
  x[3] = 1.0f;
  std::vector<int8_t> q(32);
  float d = 0;
  QuantizeRowsQ8_0(x.data(), 1, 32, q.data(), &d);
  const float d32 = 2.54f / 127.0f;
  EXPECT_EQ(d, tensor::HalfToFloat(tensor::FloatToHalf(d32)));
  EXPECT_EQ(q[0], static_cast<int8_t>(std::nearbyint(0.01f * (1.0f / d32))));
  EXPECT_EQ(q[2], -127);
  EXPECT_EQ(q[3], static_cast<int8_t>(std::nearbyint(1.0f * (1.0f / d32))));
}

TEST(Int8Quantize, DynamicRowsFollowTheDefinition) {
  // Row 0: max 2.54 → s = 2.54/127 = 0.02; 0.01/0.02 = 0.5 ties to 0, 0.03/0.02 = 1.5 to 2,
  // -2.54 → -127. Row 1: all zeros → s = 1, q = 0.
  const std::vector<float> x = {0.01f, 0.03f, -2.54f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  std::vector<int8_t> q(8);
  std::vector<float> s(2);
  QuantizeRowsDynamicInt8(x.data(), 2, 4, q.data(), s.data());
  EXPECT_EQ(s[0], 2.54f / 127.0f);
  EXPECT_EQ(s[1], 1.0f);
  const float s0 = 2.54f / 127.0f;
  EXPECT_EQ(q[0], static_cast<int8_t>(std::nearbyint(0.01f / s0)));
  EXPECT_EQ(q[2], -127);
  EXPECT_EQ(q[3], static_cast<int8_t>(std::nearbyint(1.0f / s0)));
  for (int i = 4; i < 8; ++i) EXPECT_EQ(q[i], 0);
  // Exact ties (scale 1 when max is 127): 0.5 → 0, 1.5 → 2, 2.5 → 2, -0.5 → 0, -1.5 → -2.
  const std::vector<float> ties = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 127.0f};
  std::vector<int8_t> tq(6);
  float ts = 0;
  QuantizeRowsDynamicInt8(ties.data(), 1, 6, tq.data(), &ts);
  EXPECT_EQ(ts, 1.0f);
  EXPECT_EQ(tq, (std::vector<int8_t>{0, 2, 2, 0, -2, 127}));
}

TEST(Int8Quantize, EveryIsaQuantizesDynamicRowsToTheSameBits) {
  // Random rows of several lengths (below, at and past a vector) with exact ties, zeros, a NaN
  // and an infinity mixed in; the portable loop is the reference.
  const std::vector<std::string> isas = Int8Isas();
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 2.0f);
  for (int64_t k : {1, 15, 16, 17, 100, 1000}) {
    const int64_t m = 5;
    std::vector<float> x(static_cast<size_t>(m * k));
    for (auto& v : x) v = dist(rng);
    for (int64_t p = 0; p < k; p += 7) x[p] = 127.0f * 0.5f * static_cast<float>(p % 5);  // ties
    for (int64_t p = 0; p < k; ++p) x[k + p] = 0.0f;                                      // row 1
    x[2 * k] = std::nanf("");
    x[3 * k + k / 2] = INFINITY;
    ASSERT_TRUE(ForceMatmulInt8Isa("portable"));
    std::vector<int8_t> want(x.size()), got(x.size());
    std::vector<float> want_s(m), got_s(m);
    QuantizeRowsDynamicInt8(x.data(), m, k, want.data(), want_s.data());
    for (const std::string& isa : isas) {
      ASSERT_TRUE(ForceMatmulInt8Isa(isa.c_str()));
      QuantizeRowsDynamicInt8(x.data(), m, k, got.data(), got_s.data());
      EXPECT_EQ(got, want) << isa << " k=" << k;
      for (int64_t i = 0; i < m; ++i)
        EXPECT_TRUE(SameBits(got_s[i], want_s[i])) << isa << " row " << i;
    }
  }
  ForceMatmulInt8Isa(isas.front().c_str());
}

TEST(Int8Quantize, StaticRowsClampAtTheInt8Range) {
  // scale 0.5, offset -3: x/0.5 - 3.
  const std::vector<float> x = {0.0f, 1.75f, 1.25f, 1000.0f, -1000.0f, -62.5f};
  std::vector<int8_t> q(6);
  QuantizeRowsStaticInt8(x.data(), 2, 3, 0.5f, -3.0f, q.data());
  // 0 → -3; 3.5 - 3 = 0.5 → 0; 2.5 - 3 = -0.5 → -0; 1997 → 127; -2003 → -128; -128 → -128.
  EXPECT_EQ(q, (std::vector<int8_t>{-3, 0, 0, 127, -128, -128}));
}

}  // namespace
}  // namespace tandem::kernels
