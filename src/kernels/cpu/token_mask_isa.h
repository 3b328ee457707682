// The AVX2 translation unit of MaskedCopy (token_mask_avx2.cpp), called by token_mask.cpp after
// a CPUID check. Internal to kernels/.
#pragma once

#include <cstdint>

namespace tandem::kernels::isa {

// dst[i] = bit i of bitmask ? src[i] : -inf for i < n; n a multiple of 32. dst may be src.
void MaskedCopyAvx2(const float* src, const uint32_t* bitmask, int64_t n, float* dst);

}  // namespace tandem::kernels::isa
