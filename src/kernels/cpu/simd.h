// Vector helpers shared by the kernels (paged attention), on the SIMD path MatmulTyped uses
// (cpu/typed_matmul.cpp picks it by CPUID). Internal to kernels/.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace tandem::kernels {

// Σ_{p<n} a[p] · b[p], b in F32/F16/BF16 widened exactly; f32 lanes then a horizontal sum.
float DotWidened(const float* a, const void* b, tensor::DType b_dtype, int64_t n);
// y[p] += alpha · x[p] for p < n, x in F32/F16/BF16 widened exactly.
void AxpyWidened(float alpha, const void* x, tensor::DType x_dtype, float* y, int64_t n);

}  // namespace tandem::kernels
