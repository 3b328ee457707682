// Linear: y[rows, out] = x[rows, in] · Wᵀ with W row-major [out, in] f32 (no bias).
// The weight is shared (shared_ptr) so a tied lm_head reuses the token embeddings.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/check.h"
#include "kernels/ops.h"

namespace tandem::model {

class Linear {
 public:
  Linear() = default;
  Linear(std::shared_ptr<const std::vector<float>> weight, int64_t out_features,
         int64_t in_features)
      : weight_(std::move(weight)), out_features_(out_features), in_features_(in_features) {
    TANDEM_CHECK(weight_ != nullptr &&
                 static_cast<int64_t>(weight_->size()) == out_features * in_features)
        << "linear weight has " << (weight_ ? weight_->size() : 0) << " values; expected "
        << out_features << " x " << in_features;
  }
  Linear(std::vector<float> weight, int64_t out_features, int64_t in_features)
      : Linear(std::make_shared<const std::vector<float>>(std::move(weight)), out_features,
               in_features) {}

  // x: [rows, in_features]; y: [rows, out_features] (must not alias x).
  void Forward(const float* x, float* y, int64_t rows) const {
    kernels::Matmul(x, weight_->data(), y, rows, out_features_, in_features_);
  }
  int64_t out_features() const { return out_features_; }
  int64_t in_features() const { return in_features_; }
  size_t weight_bytes() const { return weight_ ? weight_->size() * sizeof(float) : 0; }
  const std::shared_ptr<const std::vector<float>>& weight() const { return weight_; }

 private:
  std::shared_ptr<const std::vector<float>> weight_;
  int64_t out_features_ = 0;
  int64_t in_features_ = 0;
};

}  // namespace tandem::model
