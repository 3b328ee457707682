// MaskedCopy: dst = src where a token bitmask allows, -inf elsewhere (structured outputs'
// grammar mask applied to a logits row). Portable word loop + an AVX2 path picked by CPUID.
#include <algorithm>
#include <limits>

#include "kernels/cpu/token_mask_isa.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

bool HasAvx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return has;
}

}  // namespace

void MaskedCopyNaive(const float* src, const uint32_t* bitmask, int64_t n, float* dst) {
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    dst[i] = ((bitmask[i >> 5] >> (i & 31)) & 1u) ? src[i] : kMasked;
  }
}

void MaskedCopy(const float* src, const uint32_t* bitmask, int64_t n, float* dst) {
  const int64_t vector_part = HasAvx2() ? n / 32 * 32 : 0;
  if (vector_part > 0) isa::MaskedCopyAvx2(src, bitmask, vector_part, dst);
  // The tail (and everything without AVX2): whole words of all-clear / all-set take one fill
  // or copy, mixed ones go element by element.
  constexpr float kMasked = -std::numeric_limits<float>::infinity();
  for (int64_t begin = vector_part; begin < n; begin += 32) {
    const int64_t count = std::min<int64_t>(32, n - begin);
    const uint32_t word = bitmask[begin >> 5];
    if (word == 0) {
      std::fill(dst + begin, dst + begin + count, kMasked);
    } else if (word == 0xFFFFFFFFu) {
      if (dst != src) std::copy(src + begin, src + begin + count, dst + begin);
    } else {
      for (int64_t j = 0; j < count; ++j) {
        dst[begin + j] = ((word >> j) & 1u) ? src[begin + j] : kMasked;
      }
    }
  }
}

}  // namespace tandem::kernels
