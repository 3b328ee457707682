// MatmulTyped (weights in F32/F16/BF16) against its naive reference over shapes × dtypes × rows,
// on every SIMD path this CPU has (docs/design/weight-dtypes.md). Tolerance: the f32
// accumulation error, 1e-5 of Σ|x·w| per output (weights are widened exactly, so the dtype does
// not change it).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace tandem::kernels {
namespace {

using tensor::DType;

struct Weights {
  std::vector<float> f32;       // the values the kernel must see
  std::vector<uint16_t> bits;   // F16/BF16 encodings of them
  std::vector<uint8_t> blocks;  // Q8_0: 34-byte blocks (f16 d, 32 int8 q)
  const void* data(DType d) const {
    if (d == DType::kQ8_0) return blocks.data();
    return d == DType::kF32 ? static_cast<const void*>(f32.data()) : bits.data();
  }
};

// Random Q8_0 blocks (scales of either sign and size, q over the whole int8 range, one all-zero
// block) and their values d · q.
Weights MakeQ8Weights(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  std::uniform_int_distribution<int> q(-128, 127);
  Weights w;
  for (int64_t b = 0; b < count / 32; ++b) {
    const uint16_t d = tensor::FloatToHalf(b == 1 ? 0.0f : scale(rng));
    w.blocks.push_back(static_cast<uint8_t>(d & 0xff));
    w.blocks.push_back(static_cast<uint8_t>(d >> 8));
    for (int j = 0; j < 32; ++j) {
      const int8_t v = static_cast<int8_t>(q(rng));
      w.blocks.push_back(static_cast<uint8_t>(v));
      w.f32.push_back(tensor::HalfToFloat(d) * v);
    }
  }
  return w;
}

// Random weights exactly representable in `dtype`, plus a few f16 subnormals when F16.
Weights MakeWeights(DType dtype, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Weights w;
  w.f32.resize(count);
  for (int64_t i = 0; i < count; ++i) {
    float v = dist(rng);
    if (dtype == DType::kF16 && i % 97 == 5) v = 3e-6f;  // a subnormal half
    if (dtype == DType::kF16) {
      w.bits.push_back(tensor::FloatToHalf(v));
      w.f32[i] = tensor::HalfToFloat(w.bits.back());
    } else if (dtype == DType::kBF16) {
      w.bits.push_back(tensor::FloatToBFloat16(v));
      w.f32[i] = tensor::BFloat16ToFloat(w.bits.back());
    } else {
      w.f32[i] = v;
    }
  }
  return w;
}

std::vector<std::string> AvailableIsas() {
  std::vector<std::string> out;
  for (const char* isa : {"avx512", "avx2", "portable"}) {
    if (ForceMatmulTypedIsa(isa)) out.push_back(isa);
  }
  return out;
}

class TypedMatmulParityTest : public ::testing::Test {
 protected:
  void SetUp() override { restore_ = MatmulTypedIsa(); }
  void TearDown() override { ForceMatmulTypedIsa(restore_.c_str()); }
  std::string restore_;
};

TEST_F(TypedMatmulParityTest, MatchesNaiveOverShapesDtypesAndIsas) {
  const std::vector<std::string> isas = AvailableIsas();
  ASSERT_FALSE(isas.empty());
  ASSERT_EQ(isas.back(), "portable");
  const int64_t ms[] = {1, 2, 3, 4, 5, 8, 16, 17, 40};
  const int64_t shapes[][2] = {{1, 1},     {3, 15},   {4, 16},   {7, 17}, {64, 64},
                               {130, 100}, {96, 768}, {300, 33}, {5, 32}, {33, 96}};
  int cases = 0;
  for (const std::string& isa : isas) {
    ASSERT_TRUE(ForceMatmulTypedIsa(isa.c_str()));
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0}) {
      for (const auto& s : shapes) {
        const int64_t n = s[0], k = s[1];
        if (dtype == DType::kQ8_0 && k % 32 != 0) continue;  // Q8_0 rows are whole blocks
        const uint32_t seed = static_cast<uint32_t>(n * 31 + k);
        const Weights w =
            dtype == DType::kQ8_0 ? MakeQ8Weights(n * k, seed) : MakeWeights(dtype, n * k, seed);
        for (int64_t m : ms) {
          if (isa == "portable" && m > 5) continue;  // the slow loop: a few row counts suffice
          const Weights x = MakeWeights(DType::kF32, m * k, static_cast<uint32_t>(m + 7));
          std::vector<float> got(m * n, -1.0f), want(m * n);
          MatmulTyped(x.f32.data(), w.data(dtype), dtype, got.data(), m, n, k);
          MatmulTypedNaive(x.f32.data(), w.data(dtype), dtype, want.data(), m, n, k);
          SCOPED_TRACE(isa + " " + tensor::DTypeName(dtype) + " m=" + std::to_string(m) +
                       " n=" + std::to_string(n) + " k=" + std::to_string(k));
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double mag = 0.0;
              for (int64_t p = 0; p < k; ++p) mag += std::fabs(x.f32[i * k + p] * w.f32[j * k + p]);
              ASSERT_NEAR(got[i * n + j], want[i * n + j], 1e-5 * mag + 1e-30)
                  << "at row " << i << " column " << j;
            }
          }
          ++cases;
        }
      }
    }
  }
  EXPECT_GE(cases, 3 * 10 * 5 + 4 * 5);
}

TEST_F(TypedMatmulParityTest, Q8_0WidensToGgmlDequantizationOnEveryIsa) {
  const Weights w = MakeQ8Weights(32 * 37, 5);
  const tensor::Tensor reference =
      tensor::Tensor::View({37, 32}, DType::kQ8_0, w.blocks.data()).ToF32();
  for (const std::string& isa : AvailableIsas()) {
    ASSERT_TRUE(ForceMatmulTypedIsa(isa.c_str()));
    std::vector<float> got(w.f32.size());
    WidenToF32(w.blocks.data(), DType::kQ8_0, got.data(), static_cast<int64_t>(got.size()));
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i], reference.f32()[i]) << isa << " at " << i;
      ASSERT_EQ(got[i], w.f32[i]) << isa << " at " << i;
    }
  }
}

TEST_F(TypedMatmulParityTest, NaiveWidensExactly) {
  // x = e_p picks weight column p: the reference must return the widened weight bit for bit.
  const Weights w = MakeWeights(DType::kF16, 4 * 8, 3);
  std::vector<float> x(8, 0.0f), y(4);
  x[5] = 1.0f;
  MatmulTypedNaive(x.data(), w.data(DType::kF16), DType::kF16, y.data(), 1, 4, 8);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(y[j], tensor::HalfToFloat(w.bits[j * 8 + 5]));
}

TEST_F(TypedMatmulParityTest, WidenToF32IsExactOnEveryIsa) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
  for (const std::string& isa : AvailableIsas()) {
    ASSERT_TRUE(ForceMatmulTypedIsa(isa.c_str()));
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      std::vector<float> got(all.size() - 3);  // an odd count exercises the tail
      WidenToF32(all.data() + 3, dtype, got.data(), static_cast<int64_t>(got.size()));
      for (size_t i = 0; i < got.size(); ++i) {
        const uint16_t h = all[i + 3];
        const float want =
            dtype == DType::kF16 ? tensor::HalfToFloat(h) : tensor::BFloat16ToFloat(h);
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got[i])) << isa << " bits " << h;
        } else {
          ASSERT_EQ(got[i], want) << isa << " " << tensor::DTypeName(dtype) << " bits " << h;
        }
      }
    }
  }
}

// Paged attention reads a 16-bit KV cache through the same widening: against the naive
// reference on the same cache bytes, for every KV dtype and SIMD path; WriteKvCache rounds to
// nearest even.
TEST_F(TypedMatmulParityTest, PagedAttentionOverKvDtypesAndIsas) {
  // seq 0: decode at 37 (per-row path); seq 1: prefill of 20 (blocked, one block); seq 2: a
  // chunk of 150 query rows at length 170 (blocked, three query blocks, causal past context).
  const int heads = 8, kv_heads = 2, hd = 40, block = 16, blocks = 24;
  const int64_t slot = int64_t{kv_heads} * hd;
  const std::vector<int32_t> seq_lens = {37, 20, 170}, qsl = {0, 1, 21, 171};
  const std::vector<std::vector<int32_t>> tables = {
      {7, 2, 5}, {1, 3}, {23, 8, 9, 10, 11, 12, 13, 14, 15, 16, 22}};
  const Weights k = MakeWeights(DType::kF32, blocks * block * slot, 21);
  const Weights v = MakeWeights(DType::kF32, blocks * block * slot, 22);
  const Weights q = MakeWeights(DType::kF32, qsl.back() * heads * hd, 23);
  std::vector<int64_t> slots(blocks * block);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int64_t>(i);
  int cases = 0;
  for (const std::string& isa : AvailableIsas()) {
    ASSERT_TRUE(ForceMatmulTypedIsa(isa.c_str()));
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      std::vector<float> kc(k.f32.size()), vc(v.f32.size());  // 16-bit fills the first half
      WriteKvCache(k.f32.data(), v.f32.data(), slots.data(), blocks * block, slot, kc.data(),
                   vc.data(), dtype);
      if (dtype != DType::kF32) {
        const auto* bits = reinterpret_cast<const uint16_t*>(kc.data());
        for (int64_t i = 0; i < 50; ++i) {
          ASSERT_EQ(bits[i], dtype == DType::kF16 ? tensor::FloatToHalf(k.f32[i])
                                                  : tensor::FloatToBFloat16(k.f32[i]));
        }
      }
      PagedAttentionParams p;
      p.num_heads = heads;
      p.num_kv_heads = kv_heads;
      p.head_dim = hd;
      p.block_size = block;
      p.scale = 1.0f / std::sqrt(float{hd});
      p.kv_dtype = dtype;
      std::vector<float> got(q.f32.size()), want(q.f32.size());
      PagedAttention(q.f32.data(), kc.data(), vc.data(), qsl.data(), seq_lens.data(), 3, tables, p,
                     got.data());
      PagedAttentionNaive(q.f32.data(), kc.data(), vc.data(), qsl.data(), seq_lens.data(), 3,
                          tables, p, want.data());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-5 * (1.0 + std::fabs(want[i])))
            << isa << " " << tensor::DTypeName(dtype) << " at " << i;
      }
      ++cases;
    }
  }
  EXPECT_GE(cases, 6);
}

}  // namespace
}  // namespace tandem::kernels
