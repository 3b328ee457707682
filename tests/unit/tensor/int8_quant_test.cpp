// The int8 side car (tensor::Int8Quant, docs/design/w8a8.md) moves with its rows: ConcatRows
// concatenates scales and biases, GatherRows gathers them (per outer row of a stacked tensor),
// SliceColumns keeps every scale and the static bias only on the slice holding column 0;
// mismatched parts and widening a quantized weight are refused.
#include <gtest/gtest.h>

#include <memory>

#include "tensor/tensor.h"

namespace tandem::tensor {
namespace {

Tensor Int8(Shape shape, std::vector<float> scales, std::vector<int64_t> bias = {},
            Int8Quant::Activation a = Int8Quant::Activation::kDynamicPerToken) {
  Tensor t(std::move(shape), DType::kI8);
  auto* q = static_cast<int8_t*>(t.mutable_raw());
  for (int64_t i = 0; i < t.numel(); ++i) q[i] = static_cast<int8_t>(i - 5);
  auto quant = std::make_shared<Int8Quant>();
  quant->activation = a;
  quant->row_scale = std::move(scales);
  quant->row_bias = std::move(bias);
  t.set_int8_quant(std::move(quant));
  return t;
}

TEST(Int8QuantTest, ConcatRowsConcatenatesScales) {
  const Tensor a = Int8({2, 4}, {0.5f, 0.25f});
  const Tensor b = Int8({1, 4}, {2.0f});
  const Tensor c = ConcatRows({&a, &b});
  ASSERT_NE(c.int8_quant(), nullptr);
  EXPECT_EQ(c.int8_quant()->row_scale, (std::vector<float>{0.5f, 0.25f, 2.0f}));
  EXPECT_EQ(static_cast<const int8_t*>(c.raw())[8], -5);  // b's first byte
}

TEST(Int8QuantTest, GatherRowsMovesEachExpertsScales) {
  // [2 experts, 2 rows, 4]: gathering expert 1 takes its 2 scales.
  const Tensor t =
      Int8({2, 2, 4}, {1, 2, 3, 4}, {10, 20, 30, 40}, Int8Quant::Activation::kStaticPerTensor);
  const Tensor g = GatherRows(t, {1});
  EXPECT_EQ(g.int8_quant()->row_scale, (std::vector<float>{3, 4}));
  EXPECT_EQ(g.int8_quant()->row_bias, (std::vector<int64_t>{30, 40}));
}

TEST(Int8QuantTest, SliceColumnsKeepsScalesAndTheBiasOnColumnZero) {
  const Tensor t = Int8({2, 4}, {1, 2}, {7, 8}, Int8Quant::Activation::kStaticPerTensor);
  const Tensor left = SliceColumns(t, 0, 2), right = SliceColumns(t, 2, 2);
  EXPECT_EQ(left.int8_quant()->row_scale, (std::vector<float>{1, 2}));
  EXPECT_EQ(right.int8_quant()->row_scale, (std::vector<float>{1, 2}));
  EXPECT_EQ(left.int8_quant()->row_bias, (std::vector<int64_t>{7, 8}));
  EXPECT_TRUE(right.int8_quant()->row_bias.empty());
}

TEST(Int8QuantTest, MismatchedPartsAndWideningAreRefused) {
  const Tensor a = Int8({1, 4}, {1});
  const Tensor plain({1, 4}, DType::kF32);
  EXPECT_DEATH(ConcatRows({&a, &plain}), "cannot fuse an int8-quantized weight");
  EXPECT_DEATH(a.ToF32(), "cannot widen a W8A8 dynamic int8 weight");
  EXPECT_DEATH(Int8({2, 4}, {1}), "1 scales and 0 biases for 2 rows");
}

}  // namespace
}  // namespace tandem::tensor
