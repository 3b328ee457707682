// Row softmax, max-subtracted. Reference: llama2.c softmax().
#include <algorithm>
#include <cmath>

#include "kernels/ops.h"

namespace tandem::kernels {

void Softmax(float* x, int64_t rows, int64_t n) {
#pragma omp parallel for if (rows * n >= 32768)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * n;
    const float mx = *std::max_element(row, row + n);
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      row[i] = std::exp(row[i] - mx);
      sum += row[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) row[i] *= inv;
  }
}

void SoftmaxNaive(float* x, int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r) {
    double mx = x[r * n];
    for (int64_t i = 1; i < n; ++i) mx = std::max(mx, static_cast<double>(x[r * n + i]));
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - mx);
    for (int64_t i = 0; i < n; ++i)
      x[r * n + i] = static_cast<float>(std::exp(x[r * n + i] - mx) / sum);
  }
}

}  // namespace tandem::kernels
