// Entry points of the per-ISA int8 matmul translation units (int8_matmul_avx512.cpp,
// int8_matmul_avx2.cpp), called by int8_matmul.cpp after a CPUID check. Internal to kernels/.
// Weights come packed (kernels/ops.h PackInt8Weights): `groups` groups of 16 rows, kq quads of
// 4 bytes each, 64 bytes per (group, quad). Activation rows are padded to kq·4 bytes.
#pragma once

#include <cstdint>

namespace tandem::kernels::isa {

// AVX-512 VNNI: y[i, r] for i < m and the `rows` (≤ groups·16) rows of this chunk, with the
// ops.h epilogue. x_u8 = x_q + 128 as unsigned bytes [m, kq·4]; row_sums[r] = Σ_p w[r, p]
// undoes the offset (Σ (x_q + 128)·w − 128·row_sum = Σ x_q·w). y: row stride ldy.
void Int8MatmulAvx512Vnni(const uint8_t* x_u8, const int8_t* packed, int64_t groups, int64_t kq,
                          const int32_t* row_sums, const float* x_scale, const float* w_scale,
                          const int32_t* bias, float* y, int64_t ldy, int64_t m, int64_t rows);
// AVX2 (vpmaddwd on int16): exact sums acc[i, r] ([m, groups·16]) for x16 = x_q widened to
// int16 [m, kq·4].
void Int8MatmulAvx2(const int16_t* x16, const int8_t* packed, int64_t groups, int64_t kq,
                    int32_t* acc, int64_t m);
// GGUF Q8_0 weights × Q8_0 activations (llama.cpp's vec_dot_q8_0_q8_0 arithmetic), AVX-512
// VNNI, over the packed Q8_0 layout (ops.h PackQ8_0Weights: per group of 16 rows and block of
// 32: 512 weight bytes, 16 f16 scales, 16 int16 block sums). x_u8 = x_q + 128 [m, k]; x_d
// [m, k/32] f32 activation block scales. y[i, r] for the `rows` rows of `groups` groups.
void Q8_0MatmulAvx512Vnni(const uint8_t* x_u8, const float* x_d, const uint8_t* packed,
                          int64_t groups, int64_t blocks, float* y, int64_t ldy, int64_t m,
                          int64_t rows);
// Dynamic per-row quantization of one row (ops.h QuantizeRowsDynamicInt8), AVX-512.
void QuantizeRowDynamicAvx512(const float* x, int64_t k, int8_t* x_q, float* x_scale);

}  // namespace tandem::kernels::isa
