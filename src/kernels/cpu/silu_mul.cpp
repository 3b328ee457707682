// SwiGLU activation on a fused gate|up projection. Reference: HF LlamaMLP
// (down(act(gate(x)) * up(x))), llama2.c run.c.
#include <cmath>

#include "kernels/ops.h"

namespace tandem::kernels {

void SiluMul(const float* gate_up, float* out, int64_t rows, int64_t ff) {
#pragma omp parallel for if (rows * ff >= 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* g = gate_up + r * 2 * ff;
    const float* u = g + ff;
    float* o = out + r * ff;
    for (int64_t j = 0; j < ff; ++j) o[j] = g[j] / (1.0f + std::exp(-g[j])) * u[j];
  }
}

void SiluMulNaive(const float* gate_up, float* out, int64_t rows, int64_t ff) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < ff; ++j) {
      const double g = gate_up[r * 2 * ff + j];
      const double u = gate_up[r * 2 * ff + ff + j];
      out[r * ff + j] = static_cast<float>(g / (1.0 + std::exp(-g)) * u);
    }
  }
}

}  // namespace tandem::kernels
