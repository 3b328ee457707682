// AVX2 instance of the fused typed matmul (compiled with -mavx2 -mfma -mf16c; called when CPUID
// reports AVX2, FMA and F16C but not AVX-512F). 8 f32 lanes.
#include <immintrin.h>

#include <cstdint>

namespace {
struct Isa {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V Zero() { return _mm256_setzero_ps(); }
  static V LoadF32(const float* p) { return _mm256_loadu_ps(p); }
  static V LoadF16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V LoadBF16(const uint16_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static V Fma(V a, V b, V acc) { return _mm256_fmadd_ps(a, b, acc); }
  static float Sum(V v) {
    const __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 h = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
  }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Set1(float x) { return _mm256_set1_ps(x); }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V LoadQ8(const int8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
  static float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }
};
}  // namespace

#include "kernels/cpu/typed_matmul_isa.inc"

namespace tandem::kernels::isa {

void FusedMatmulAvx2(const float* x, const void* w, int wtype, float* y, int64_t m, int64_t n,
                     int64_t k, int64_t j0, int64_t j1) {
  FusedAny(x, w, wtype, y, m, n, k, j0, j1);
}

float DotAvx2(const float* a, const void* b, int wtype, int64_t n) {
  return DotAny(a, b, wtype, n);
}

void AxpyAvx2(float alpha, const void* x, int wtype, float* y, int64_t n) {
  AxpyAny(alpha, x, wtype, y, n);
}

void WidenAvx2(const void* src, int wtype, float* dst, int64_t count) {
  WidenAny(src, wtype, dst, count);
}

}  // namespace tandem::kernels::isa
