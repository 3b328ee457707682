// oneDNN matmul writing into a column block of a wider output; internal to kernels/ (the
// prefill tiles of MatmulTyped, cpu/typed_matmul.cpp).
#pragma once

#include <cstdint>

namespace tandem::kernels {

// y[i, j] (row i at y + i·ldy) = x[m, k] · w[n, k]ᵀ, for j < n; ldy >= n. Same primitive cache
// as Matmul. Inside an OpenMP parallel region oneDNN runs on the calling thread only.
void MatmulStrided(const float* x, const float* w, float* y, int64_t m, int64_t n, int64_t k,
                   int64_t ldy);

}  // namespace tandem::kernels
