// AVX2 instance of the int8 matmul (compiled with -mavx2; called only when CPUID reports AVX2,
// also on AVX-512 CPUs without VNNI). Weights are widened to int16 in registers and multiplied
// by the int16 activations with vpmaddwd (exact: vpmaddubsw would saturate at 2·255·127).
// No STL (see typed_matmul_isa.h).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/int8_matmul_isa_api.h"

namespace {

int32_t HorizontalSum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

template <int IR, int JR>
void BlockAvx2(const int16_t* x, const int8_t* w, int32_t* acc, int64_t acc_stride, int64_t k) {
  __m256i sum[IR][JR];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) sum[a][r] = _mm256_setzero_si256();
  }
  const int64_t kv = k - k % 16;
  for (int64_t p = 0; p < kv; p += 16) {
    __m256i wv[JR];
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      __builtin_prefetch(w + r * k + p + 512);
      wv[r] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + r * k + p)));
    }
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + a * k + p));
#pragma GCC unroll 4
      for (int r = 0; r < JR; ++r) {
        sum[a][r] = _mm256_add_epi32(sum[a][r], _mm256_madd_epi16(xv, wv[r]));
      }
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      int32_t s = HorizontalSum(sum[a][r]);
      for (int64_t p = kv; p < k; ++p) s += x[a * k + p] * w[r * k + p];
      acc[a * acc_stride + r] = s;
    }
  }
}

using BlockFn = void (*)(const int16_t*, const int8_t*, int32_t*, int64_t, int64_t);

template <int IR>
BlockFn BlockFor(int jr) {
  switch (jr) {
    case 1: return &BlockAvx2<IR, 1>;
    case 2: return &BlockAvx2<IR, 2>;
    case 3: return &BlockAvx2<IR, 3>;
    default: return &BlockAvx2<IR, 4>;
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

void Int8MatmulAvx2(const int16_t* x16, const int8_t* w, int32_t* acc, int64_t m, int64_t rows,
                    int64_t k) {
  for (int64_t j = 0; j < rows; j += 4) {
    const int jr = static_cast<int>(rows - j < 4 ? rows - j : 4);
    for (int64_t i = 0; i < m; i += 4) {
      const int ir = static_cast<int>(m - i < 4 ? m - i : 4);
      BlockFor(ir, jr)(x16 + i * k, w + j * k, acc + i * rows + j, rows, k);
    }
  }
}

}  // namespace tandem::kernels::isa
