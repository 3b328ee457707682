// Linear: y[rows, out] = x[rows, in] · Wᵀ (+ b) with W row-major [out, in] kept in the dtype it
// was stored in (F32, F16, BF16 or GGUF Q8_0; docs/design/weight-dtypes.md; or I8 with its W8A8
// scales, which quantizes the activations: docs/design/w8a8.md) and an optional bias b [out]
// f32 (Qwen2 q/k/v). x and y are f32. The weight is shared (shared_ptr) so a tied lm_head
// reuses the token embeddings.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/check.h"
#include "kernels/device_ops.h"
#include "kernels/ops.h"
#include "model/layers/weight_matmul.h"
#include "tensor/tensor.h"
#include "tensor/tensor_view.h"

namespace tandem::model {

class Linear {
 public:
  Linear() = default;
  // weight: [out_features, in_features] in F32, F16, BF16, Q8_0 or I8 with its Int8Quant
  // (checked).
  explicit Linear(std::shared_ptr<const tensor::Tensor> weight) : weight_(std::move(weight)) {
    TANDEM_CHECK(weight_ != nullptr && weight_->rank() == 2)
        << "linear weight must be [out, in]; got "
        << (weight_ ? tensor::ShapeToString(weight_->shape()) : "none");
    const tensor::DType d = weight_->dtype();
    TANDEM_CHECK(d == tensor::DType::kF32 || d == tensor::DType::kF16 ||
                 d == tensor::DType::kBF16 || d == tensor::DType::kQ8_0 ||
                 (d == tensor::DType::kI8 && weight_->int8_quant() != nullptr))
        << "linear weight dtype " << tensor::DTypeName(d) << " has no matmul kernel";
    out_features_ = weight_->dim(0);
    in_features_ = weight_->dim(1);
    plan_ = PlanWeight(*weight_);
    if (plan_.kind != Int8WeightPlan::Kind::kNone) {  // its bytes now live packed in plan_
      weight_ = std::make_shared<const tensor::Tensor>(DropPackedBytes(*weight_, plan_));
    }
  }
  explicit Linear(tensor::Tensor weight)
      : Linear(std::make_shared<const tensor::Tensor>(std::move(weight))) {}
  // f32 values, row-major [out_features, in_features] (size checked).
  Linear(std::vector<float> weight, int64_t out_features, int64_t in_features)
      : Linear(F32Matrix(std::move(weight), out_features, in_features)) {}

  // Adds a bias [out_features] f32, applied after the matmul (empty = no bias).
  void set_bias(std::vector<float> bias) {
    TANDEM_CHECK(bias.empty() || static_cast<int64_t>(bias.size()) == out_features_)
        << "linear bias has " << bias.size() << " values; expected " << out_features_;
    bias_ = std::move(bias);
  }

  // x: [rows, in_features]; y: [rows, out_features] (must not alias x).
  void Forward(const float* x, float* y, int64_t rows) const {
    MultiplyWeight(*weight_, plan_, x, y, rows, 0, out_features_);
    if (bias_.empty()) return;
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = y + r * out_features_;
      for (int64_t o = 0; o < out_features_; ++o) yr[o] += bias_[o];
    }
  }
  // The same over views on the stream's device: x [rows, in_features], y [rows, out_features]
  // f32 (checked). The weight kernels are host code so far: CPU streams only (kernels::
  // CheckCpuOp).
  void Forward(kernels::Stream& stream, const tensor::TensorView& x,
               const tensor::TensorView& y) const {
    kernels::CheckCpuOp("Linear", stream, {&x, &y});
    TANDEM_CHECK(x.rank() == 2 && y.rank() == 2 && x.dim(0) == y.dim(0) &&
                 x.dim(1) == in_features_ && y.dim(1) == out_features_)
        << "Linear [" << out_features_ << ", " << in_features_ << "]: x "
        << tensor::ShapeToString(x.shape) << ", y " << tensor::ShapeToString(y.shape);
    if (x.dim(0) == 0) {
      return;
    }
    Forward(x.f32(), y.f32(), x.dim(0));
  }
  int64_t out_features() const { return out_features_; }
  int64_t in_features() const { return in_features_; }
  // Resident bytes: the weight in its dtype (an int8 one packed, with its scales), plus the f32
  // bias.
  size_t weight_bytes() const {
    const size_t w = plan_.kind != Int8WeightPlan::Kind::kNone
                         ? plan_.bytes()
                         : (weight_ ? weight_->size_bytes() : 0);
    return w + bias_.size() * sizeof(float);
  }
  // The weight (an int8 one without its bytes, which live packed: DropInt8Bytes).
  const std::shared_ptr<const tensor::Tensor>& weight() const { return weight_; }

 private:
  static tensor::Tensor F32Matrix(std::vector<float> values, int64_t rows, int64_t cols) {
    TANDEM_CHECK(static_cast<int64_t>(values.size()) == rows * cols)
        << "linear weight has " << values.size() << " values; expected " << rows << " x " << cols;
    return tensor::Tensor::FromF32({rows, cols}, std::move(values));
  }

  std::shared_ptr<const tensor::Tensor> weight_;
  Int8WeightPlan plan_;  // int8 row sums / static bias (empty unless weight_ is I8)
  int64_t out_features_ = 0;
  int64_t in_features_ = 0;
  std::vector<float> bias_;  // [out_features] f32, or empty
};

}  // namespace tandem::model
