#include "tensor/dtype.h"

namespace tandem::tensor {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "F32";
    case DType::kF16:
      return "F16";
    case DType::kBF16:
      return "BF16";
    case DType::kI32:
      return "I32";
    case DType::kQ8_0:
      return "Q8_0";
    case DType::kI8:
      return "I8";
  }
  return "?";
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;  // ±0
    } else {
      // Subnormal: normalise the mantissa.
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ffu;
      bits = sign | (exponent << 23) | (mantissa << 13);
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);  // inf / NaN
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | static_cast<uint16_t>((a >> 13) & 0x1ffu);  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u;  // ≥ 65520 rounds to inf (and inf itself)
  if (a >= 0x38800000u) {  // normal half: re-bias the exponent, round the low 13 bits to even
    return sign | static_cast<uint16_t>((a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13);
  }
  if (a < 0x33000000u) return sign;  // below 2^-25: rounds to ±0
  // Subnormal half: units of 2^-24. a = 1.mant · 2^(e-127), so the value in units is
  // (mant | 2^23) >> (126 - e), rounded to nearest even.
  const uint32_t e = a >> 23;
  const uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14 … 24
  uint32_t q = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (q & 1u) != 0)) ++q;
  return sign | static_cast<uint16_t>(q);
}

}  // namespace tandem::tensor
