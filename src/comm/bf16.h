// f32 → bf16 rounding for the bf16 all-reduce (bf16 → f32 is tensor::BFloat16ToFloat).
// Reference: PyTorch c10::BFloat16 round_to_nearest_even.
#pragma once

#include <cstdint>
#include <cstring>

namespace tandem::comm {

// f32 → bf16 bits, round to nearest even; NaN stays a (quiet) NaN.
inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace tandem::comm
