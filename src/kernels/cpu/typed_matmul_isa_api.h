// Entry points of the per-ISA typed matmul translation units (typed_matmul_avx512.cpp,
// typed_matmul_avx2.cpp), called by typed_matmul.cpp after a CPUID check. Internal to kernels/.
#pragma once

#include <cstdint>

namespace tandem::kernels::isa {

// Weight element types the fused kernels read (codes, so this header needs no STL/tensor).
// Q8_0: rows of 34-byte blocks (f16 scale d, 32 int8 q; value d·q), k a multiple of 32.
enum WeightCode : int { kWeightF32 = 0, kWeightF16 = 1, kWeightBF16 = 2, kWeightQ8_0 = 3 };

// y[i, j] = Σ_p x[i, p] · widen(w[j, p]) for i < m, j0 <= j < j1. x: [m, k] f32,
// w: [n, k] in `wtype`, y: [m, n] f32 (only columns [j0, j1) written). f32 FMA accumulation.
void FusedMatmulAvx512(const float* x, const void* w, int wtype, float* y, int64_t m, int64_t n,
                       int64_t k, int64_t j0, int64_t j1);
void FusedMatmulAvx2(const float* x, const void* w, int wtype, float* y, int64_t m, int64_t n,
                     int64_t k, int64_t j0, int64_t j1);
// Σ_{p<n} a[p] · widen(b[p]) (f32 FMA in vector lanes, then a horizontal sum).
float DotAvx512(const float* a, const void* b, int wtype, int64_t n);
float DotAvx2(const float* a, const void* b, int wtype, int64_t n);
// y[p] += alpha · widen(x[p]) for p < n.
void AxpyAvx512(float alpha, const void* x, int wtype, float* y, int64_t n);
void AxpyAvx2(float alpha, const void* x, int wtype, float* y, int64_t n);
// dst[i] = widen(src[i]) for i < count (exact).
void WidenAvx512(const void* src, int wtype, float* dst, int64_t count);
void WidenAvx2(const void* src, int wtype, float* dst, int64_t count);

}  // namespace tandem::kernels::isa
