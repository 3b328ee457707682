// AVX2 MaskedCopy: eight lanes per step; each lane's bit is tested against its own power of
// two and the compare selects src or -inf (one blend, no branch).
#include <immintrin.h>

#include <limits>

#include "kernels/cpu/token_mask_isa.h"

namespace tandem::kernels::isa {

void MaskedCopyAvx2(const float* src, const uint32_t* bitmask, int64_t n, float* dst) {
  const __m256 masked = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  for (int64_t w = 0; w < n / 32; ++w) {
    const uint32_t word = bitmask[w];
    const float* s = src + w * 32;
    float* d = dst + w * 32;
    if (word == 0xFFFFFFFFu) {
      if (d != s) {
        for (int q = 0; q < 4; ++q) _mm256_storeu_ps(d + 8 * q, _mm256_loadu_ps(s + 8 * q));
      }
      continue;
    }
    for (int q = 0; q < 4; ++q) {
      const __m256i bits = _mm256_set1_epi32(static_cast<int>((word >> (8 * q)) & 0xFFu));
      const __m256i keep = _mm256_cmpeq_epi32(_mm256_and_si256(bits, lane_bits), lane_bits);
      const __m256 value = _mm256_loadu_ps(s + 8 * q);
      _mm256_storeu_ps(d + 8 * q, _mm256_blendv_ps(masked, value, _mm256_castsi256_ps(keep)));
    }
  }
}

}  // namespace tandem::kernels::isa
