// RmsNormLayer: RMSNorm with a learned scale [dim] f32. Reference: HF LlamaRMSNorm.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/ops.h"

namespace tandem::model {

struct RmsNormLayer {
  std::vector<float> weight;  // [dim] f32
  float eps = 1e-5f;

  // x, y: [rows, dim]; y may equal x.
  void Forward(const float* x, float* y, int64_t rows) const {
    kernels::RmsNorm(x, weight.data(), y, rows, static_cast<int64_t>(weight.size()), eps);
  }
};

}  // namespace tandem::model
