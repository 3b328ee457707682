// Entry points of the per-ISA int8 matmul translation units (int8_matmul_avx512.cpp,
// int8_matmul_avx2.cpp), called by int8_matmul.cpp after a CPUID check. Internal to kernels/.
// Each computes exact int32 sums acc[i, r] = Σ_p x_q[i, p] · w[r, p] for i < m, r < rows over
// `rows` consecutive weight rows w [rows, k] int8; acc is [m, rows] row-major.
#pragma once

#include <cstdint>

namespace tandem::kernels::isa {

// AVX-512 VNNI (vpdpbusd): x_u8 = x_q + 128 as unsigned bytes [m, k]; row_sums[r] = Σ_p w[r, p]
// corrects the offset: Σ (x_q + 128)·w − 128·row_sum = Σ x_q·w.
void Int8MatmulAvx512Vnni(const uint8_t* x_u8, const int8_t* w, const int32_t* row_sums,
                          int32_t* acc, int64_t m, int64_t rows, int64_t k);
// AVX2 (vpmaddwd on int16): x16 = x_q widened to int16 [m, k].
void Int8MatmulAvx2(const int16_t* x16, const int8_t* w, int32_t* acc, int64_t m, int64_t rows,
                    int64_t k);

}  // namespace tandem::kernels::isa
