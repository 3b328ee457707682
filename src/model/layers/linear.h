// Linear: y[rows, out] = x[rows, in] · Wᵀ (+ b) with W row-major [out, in] f32 and an optional
// bias b [out] f32 (Qwen2 q/k/v). The weight is shared (shared_ptr) so a tied lm_head reuses the
// token embeddings.
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

  // Adds a bias [out_features] f32, applied after the matmul (empty = no bias).
  void set_bias(std::vector<float> bias) {
    TANDEM_CHECK(bias.empty() || static_cast<int64_t>(bias.size()) == out_features_)
        << "linear bias has " << bias.size() << " values; expected " << out_features_;
    bias_ = std::move(bias);
  }

  // x: [rows, in_features]; y: [rows, out_features] (must not alias x).
  void Forward(const float* x, float* y, int64_t rows) const {
    kernels::Matmul(x, weight_->data(), y, rows, out_features_, in_features_);
    if (bias_.empty()) return;
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = y + r * out_features_;
      for (int64_t o = 0; o < out_features_; ++o) yr[o] += bias_[o];
    }
  }
  int64_t out_features() const { return out_features_; }
  int64_t in_features() const { return in_features_; }
  size_t weight_bytes() const {
    return (weight_ ? weight_->size() * sizeof(float) : 0) + bias_.size() * sizeof(float);
  }
  const std::shared_ptr<const std::vector<float>>& weight() const { return weight_; }

 private:
  std::shared_ptr<const std::vector<float>> weight_;
  int64_t out_features_ = 0;
  int64_t in_features_ = 0;
  std::vector<float> bias_;  // [out_features] f32, or empty
};

}  // namespace tandem::model
