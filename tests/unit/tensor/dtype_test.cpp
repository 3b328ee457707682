// f32 → f16 / bf16 rounding (round to nearest even, IEEE 754 §4.3.1) and the row operations the
// loader re-lays weights with, for every dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/tensor.h"

namespace tandem::tensor {
namespace {

TEST(FloatToHalfTest, RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f)))) << h;
    } else {
      ASSERT_EQ(FloatToHalf(f), h) << "half bits " << h;
    }
  }
}

TEST(FloatToHalfTest, RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f / 3.0f), 0x3555u);          // 0.333251953125 (nearest)
  EXPECT_EQ(FloatToHalf(1.0f + 0x1p-11f), 0x3c00u);      // tie → even (1.0)
  EXPECT_EQ(FloatToHalf(1.0f + 3 * 0x1p-11f), 0x3c02u);  // tie → even (1 + 2^-9)
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bffu);             // largest finite half
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bffu);             // below the tie: stays finite
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00u);             // tie with odd 65504 → inf
  EXPECT_EQ(FloatToHalf(-1e9f), 0xfc00u);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000u);      // tie between 0 and 2^-24 → 0
  EXPECT_EQ(FloatToHalf(0x1.8p-25f), 0x0001u);    // above the tie → smallest subnormal
  EXPECT_EQ(FloatToHalf(3 * 0x1p-25f), 0x0002u);  // 1.5 units → even (2)
  EXPECT_EQ(FloatToHalf(0x1.ff8p-15f), 0x03ffu);  // 1023 units: largest subnormal
  EXPECT_EQ(FloatToHalf(0x1.ffcp-15f), 0x0400u);  // 1023.5 units: tie → even = 2^-14
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000u);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00u);
}

TEST(FloatToBFloat16Test, RoundsToNearestEvenAndKeepsNan) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const float f = BFloat16ToFloat(static_cast<uint16_t>(b));
    if (!std::isnan(f)) {
      ASSERT_EQ(FloatToBFloat16(f), b) << b;
    }
  }
  EXPECT_EQ(FloatToBFloat16(1.0f + 0x1p-8f), 0x3f80u);      // tie → even
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * 0x1p-8f), 0x3f82u);  // tie → even (up)
  EXPECT_EQ(FloatToBFloat16(1.0f + 0x1.2p-8f), 0x3f81u);    // above the tie
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(std::nanf("")))));
}

TEST(TensorRowsTest, ConcatAndGatherMoveRowsOfAnyDtype) {
  Tensor a = Tensor::FromF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::FromF32({1, 3}, {7, 8, 9});
  Tensor a16 = a.To(DType::kBF16), b16 = b.To(DType::kBF16);
  Tensor cat = ConcatRows({&a16, &b16});
  ASSERT_EQ(cat.shape(), (Shape{3, 3}));
  ASSERT_EQ(cat.dtype(), DType::kBF16);
  Tensor back = GatherRows(cat, {2, 0}).ToF32();
  EXPECT_EQ(std::vector<float>(back.f32(), back.f32() + 6), (std::vector<float>{7, 8, 9, 1, 2, 3}));
  Tensor mixed = ConcatRows({&a, &b16});  // F32 + BF16 → F32
  ASSERT_EQ(mixed.dtype(), DType::kF32);
  EXPECT_EQ(mixed.f32()[6], 7.0f);
  Tensor wrong = Tensor::FromF32({1, 2}, {1, 2});
  EXPECT_DEATH(ConcatRows({&a, &wrong}), "does not stack");
}

TEST(TensorConvertTest, ToHalfRoundsEachElement) {
  Tensor t = Tensor::FromF32({3}, {1.0f / 3.0f, 65520.0f, -2.5f});
  Tensor h = t.To(DType::kF16);
  const auto* bits = static_cast<const uint16_t*>(h.raw());
  EXPECT_EQ(bits[0], 0x3555u);
  EXPECT_EQ(bits[1], 0x7c00u);
  EXPECT_EQ(h.ToF32().f32()[2], -2.5f);
}

}  // namespace
}  // namespace tandem::tensor
