// DType: element types a Tensor may hold, plus scalar conversions of the 16-bit float formats.
// Reference: IEEE 754 binary16; bfloat16 = the upper 16 bits of an f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tandem::tensor {

enum class DType { kF32, kF16, kBF16, kI32 };

// Bytes of one element.
constexpr size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kI32: return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype);

// IEEE half (binary16) bits → f32, exact for every value incl. subnormals, inf, NaN.
float HalfToFloat(uint16_t h);

// bfloat16 bits → f32 (exact: bf16 is a truncated f32).
inline float BFloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

// f32 → IEEE half bits, rounded to nearest even; beyond ±65504 (after rounding) → ±inf, NaN
// stays NaN (quiet), tiny values become subnormals or ±0.
uint16_t FloatToHalf(float f);

// f32 → bfloat16 bits, rounded to nearest even (the upper half of the f32 after rounding); NaN
// stays NaN (quiet).
inline uint16_t FloatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

}  // namespace tandem::tensor
