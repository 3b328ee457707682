// DType: element types a Tensor may hold, plus scalar conversions of the 16-bit float formats.
// Reference: IEEE 754 binary16; bfloat16 = the upper 16 bits of an f32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tandem::tensor {

// kQ8_0: GGUF's block quantization (ggml-quants.c block_q8_0): each block of 32 consecutive
// values along the last axis is an f16 scale d followed by 32 int8 q, value = d · q (34 bytes).
// kI8: signed 8-bit integers (the weights of a W8A8 Linear carry their scales in a
// tensor::Int8Quant side car; docs/design/w8a8.md).
enum class DType { kF32, kF16, kBF16, kI32, kQ8_0, kI8 };

// Values per block: 32 for Q8_0, 1 for the element types.
constexpr int64_t DTypeBlockValues(DType dtype) { return dtype == DType::kQ8_0 ? 32 : 1; }

// Bytes of one block (of one element for the element types).
constexpr size_t DTypeBlockBytes(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF16:
      return 2;
    case DType::kBF16:
      return 2;
    case DType::kI32:
      return 4;
    case DType::kQ8_0:
      return 34;
    case DType::kI8:
      return 1;
  }
  return 0;
}

// Bytes of one element of an element type; 0 for a block type (use DTypeBytes).
constexpr size_t DTypeSize(DType dtype) {
  return DTypeBlockValues(dtype) == 1 ? DTypeBlockBytes(dtype) : 0;
}

// Bytes of `count` consecutive values (a multiple of DTypeBlockValues for a block type).
constexpr size_t DTypeBytes(DType dtype, int64_t count) {
  return static_cast<size_t>(count / DTypeBlockValues(dtype)) * DTypeBlockBytes(dtype);
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
