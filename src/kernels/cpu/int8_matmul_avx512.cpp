// AVX-512 VNNI instance of the int8 matmul (compiled with -mavx512f -mavx512bw -mavx512vnni;
// called only when CPUID reports all three). vpdpbusd multiplies 64 unsigned by 64 signed bytes
// into 16 int32 lanes (4 products each), so the activation row comes offset to u8 and the
// weight row sums undo the offset (int8_matmul_isa_api.h). No STL (see typed_matmul_isa.h).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/int8_matmul_isa_api.h"

namespace {

// acc[a, r] for a < IR activation rows from x (row stride k) and r < JR weight rows from w.
template <int IR, int JR>
void BlockVnni(const uint8_t* x, const int8_t* w, const int32_t* row_sums, int32_t* acc,
               int64_t acc_stride, int64_t k) {
  __m512i sum[IR][JR];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) sum[a][r] = _mm512_setzero_si512();
  }
  int64_t p = 0;
  for (; p + 64 <= k; p += 64) {
    __m512i wv[JR];
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      __builtin_prefetch(w + r * k + p + 512);
      wv[r] = _mm512_loadu_si512(w + r * k + p);
    }
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const __m512i xv = _mm512_loadu_si512(x + a * k + p);
#pragma GCC unroll 4
      for (int r = 0; r < JR; ++r) sum[a][r] = _mm512_dpbusd_epi32(sum[a][r], xv, wv[r]);
    }
  }
  if (p < k) {  // masked tail: absent bytes load as 0 on both sides and add nothing
    const __mmask64 mask = (~0ULL) >> (64 - (k - p));
    __m512i wv[JR];
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) wv[r] = _mm512_maskz_loadu_epi8(mask, w + r * k + p);
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const __m512i xv = _mm512_maskz_loadu_epi8(mask, x + a * k + p);
#pragma GCC unroll 4
      for (int r = 0; r < JR; ++r) sum[a][r] = _mm512_dpbusd_epi32(sum[a][r], xv, wv[r]);
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      acc[a * acc_stride + r] = _mm512_reduce_add_epi32(sum[a][r]) - 128 * row_sums[r];
    }
  }
}

using BlockFn = void (*)(const uint8_t*, const int8_t*, const int32_t*, int32_t*, int64_t, int64_t);

template <int IR>
BlockFn BlockFor(int jr) {
  switch (jr) {
    case 1: return &BlockVnni<IR, 1>;
    case 2: return &BlockVnni<IR, 2>;
    case 3: return &BlockVnni<IR, 3>;
    default: return &BlockVnni<IR, 4>;
  }
}

BlockFn BlockFor(int ir, int jr) {
  switch (ir) {
    case 1: return BlockFor<1>(jr);
    case 2: return BlockFor<2>(jr);
    case 3: return BlockFor<3>(jr);
    default: return BlockFor<4>(jr);
  }
}

}  // namespace

namespace tandem::kernels::isa {

void Int8MatmulAvx512Vnni(const uint8_t* x_u8, const int8_t* w, const int32_t* row_sums,
                          int32_t* acc, int64_t m, int64_t rows, int64_t k) {
  // 4 weight rows (outer) × 4 activation rows (inner): a weight block is read from memory once
  // and from L1 for the other activation rows.
  for (int64_t j = 0; j < rows; j += 4) {
    const int jr = static_cast<int>(rows - j < 4 ? rows - j : 4);
    for (int64_t i = 0; i < m; i += 4) {
      const int ir = static_cast<int>(m - i < 4 ? m - i : 4);
      BlockFor(ir, jr)(x_u8 + i * k, w + j * k, row_sums + j, acc + i * rows + j, rows, k);
    }
  }
}

}  // namespace tandem::kernels::isa
