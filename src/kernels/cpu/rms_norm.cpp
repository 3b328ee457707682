// RmsNorm. Reference: llama2.c rmsnorm(), HF LlamaRMSNorm (variance in f32, eps inside sqrt).
#include <cmath>

#include "kernels/ops.h"

namespace tandem::kernels {

void RmsNorm(const float* x, const float* weight, float* y, int64_t rows, int64_t dim, float eps) {
#pragma omp parallel for if (rows * dim >= 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* yr = y + r * dim;
    float ss = 0.0f;
    for (int64_t i = 0; i < dim; ++i) ss += xr[i] * xr[i];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) yr[i] = xr[i] * inv * weight[i];
  }
}

void RmsNormNaive(const float* x, const float* weight, float* y, int64_t rows, int64_t dim,
                  float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0.0;
    for (int64_t i = 0; i < dim; ++i) ss += static_cast<double>(x[r * dim + i]) * x[r * dim + i];
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(dim) + eps);
    for (int64_t i = 0; i < dim; ++i) {
      y[r * dim + i] = static_cast<float>(x[r * dim + i] * inv * weight[i]);
    }
  }
}

}  // namespace tandem::kernels
