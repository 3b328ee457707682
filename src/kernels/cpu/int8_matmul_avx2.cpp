// AVX2 instance of the int8 matmul (compiled with -mavx2; called only when CPUID reports AVX2,
// also on AVX-512 CPUs without VNNI). Reads the packed layout (ops.h PackInt8Weights): 4 rows ×
// 4 k-bytes are widened to int16 and multiplied by the activation quad (int16, repeated) with
// vpmaddwd — exact; vpmaddubsw would saturate at 2·255·127. No STL (see typed_matmul_isa.inc).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/int8_matmul_isa_api.h"

namespace tandem::kernels::isa {

void Int8MatmulAvx2(const int16_t* x16, const int8_t* packed, int64_t groups, int64_t kq,
                    int32_t* acc, int64_t m) {
  const int64_t ldx = 4 * kq, lda = 16 * groups;
  for (int64_t g = 0; g < groups; ++g) {
    const int8_t* pg = packed + g * kq * 64;
    for (int64_t i = 0; i < m; ++i) {
      // sum[j] lanes: (row 4j + l/2, half l%2) partial sums over the quads.
      __m256i sum[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                        _mm256_setzero_si256()};
      for (int64_t q = 0; q < kq; ++q) {
        long long quad;
        __builtin_memcpy(&quad, x16 + i * ldx + 4 * q, 8);
        const __m256i xq = _mm256_set1_epi64x(quad);
        const int8_t* v = pg + q * 64;
        for (int j = 0; j < 4; ++j) {
          const __m256i w =
              _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + 16 * j)));
          sum[j] = _mm256_add_epi32(sum[j], _mm256_madd_epi16(xq, w));
        }
      }
      for (int j = 0; j < 4; ++j) {
        alignas(32) int32_t lanes[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum[j]);
        for (int r = 0; r < 4; ++r)
          acc[i * lda + 16 * g + 4 * j + r] = lanes[2 * r] + lanes[2 * r + 1];
      }
    }
  }
}

}  // namespace tandem::kernels::isa
