// AVX-512F instance of the fused typed matmul (compiled with -mavx512f -mfma -mf16c; called only
// when CPUID reports AVX-512F). 16 f32 lanes; f16 widened by vcvtph2ps, bf16 by a 16-bit shift.
#include <immintrin.h>

#include <cstdint>

namespace {
struct Isa {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V Zero() { return _mm512_setzero_ps(); }
  static V LoadF32(const float* p) { return _mm512_loadu_ps(p); }
  static V LoadF16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static V LoadBF16(const uint16_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static V Fma(V a, V b, V acc) { return _mm512_fmadd_ps(a, b, acc); }
  static float Sum(V v) { return _mm512_reduce_add_ps(v); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Set1(float x) { return _mm512_set1_ps(x); }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V LoadQ8(const int8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }
};
}  // namespace

#include "kernels/cpu/typed_matmul_isa.inc"

namespace tandem::kernels::isa {

void FusedMatmulAvx512(const float* x, const void* w, int wtype, float* y, int64_t m, int64_t n,
                       int64_t k, int64_t j0, int64_t j1) {
  FusedAny(x, w, wtype, y, m, n, k, j0, j1);
}

float DotAvx512(const float* a, const void* b, int wtype, int64_t n) {
  return DotAny(a, b, wtype, n);
}

void AxpyAvx512(float alpha, const void* x, int wtype, float* y, int64_t n) {
  AxpyAny(alpha, x, wtype, y, n);
}

void WidenAvx512(const void* src, int wtype, float* dst, int64_t count) {
  WidenAny(src, wtype, dst, count);
}

}  // namespace tandem::kernels::isa
