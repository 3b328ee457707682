// AVX-512 VNNI instance of the int8 matmul and the AVX-512 activation quantizer (compiled with
// -mavx512f -mavx512bw -mavx512vnni; called only when CPUID reports all three). Weights come
// packed 16 rows × 4 k-bytes per 64-byte vector (ops.h PackInt8Weights): 4 activation bytes are
// broadcast to every lane and one vpdpbusd adds their products with 16 rows at once, so each
// lane ends holding one output's sum — no horizontal reductions. vpdpbusd multiplies unsigned by
// signed bytes, so activations come offset to u8 and the row sums undo the offset
// (int8_matmul_isa_api.h). No STL (see typed_matmul_isa.inc).
#include <immintrin.h>

#include <cstdint>

#include "kernels/cpu/int8_matmul_isa_api.h"

namespace {

// y[a, 16·g + lane] for a < IR activation rows and g < JG groups of 16 packed rows.
template <int IR, int JG>
void Tile(const uint8_t* x, int64_t ldx, const int8_t* packed, int64_t kq, const int32_t* row_sums,
          const float* x_scale, const float* w_scale, const int32_t* bias, float* y, int64_t ldy,
          int64_t rows) {
  __m512i acc[IR][JG];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int g = 0; g < JG; ++g) acc[a][g] = _mm512_setzero_si512();
  }
  for (int64_t q = 0; q < kq; ++q) {
    __m512i w[JG];
#pragma GCC unroll 4
    for (int g = 0; g < JG; ++g) {
      const int8_t* v = packed + (g * kq + q) * 64;
      _mm_prefetch(reinterpret_cast<const char*>(v) + 1024, _MM_HINT_T0);
      w[g] = _mm512_loadu_si512(v);
    }
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      int32_t quad;
      __builtin_memcpy(&quad, x + a * ldx + 4 * q, 4);
      const __m512i xb = _mm512_set1_epi32(quad);
#pragma GCC unroll 4
      for (int g = 0; g < JG; ++g) acc[a][g] = _mm512_dpbusd_epi32(acc[a][g], xb, w[g]);
    }
  }
  // Epilogue, lane by lane the scalar formulas of ops.h: two separate f32 multiplies (no FMA).
#pragma GCC unroll 4
  for (int g = 0; g < JG; ++g) {
    const int64_t left = rows - 16 * g;
    if (left <= 0) break;
    const __mmask16 mask =
        left >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << left) - 1);
    const __m512i correction =
        _mm512_slli_epi32(_mm512_maskz_loadu_epi32(mask, row_sums + 16 * g), 7);
    const __m512 ws = _mm512_maskz_loadu_ps(mask, w_scale + 16 * g);
    const __m512i b =
        bias != nullptr ? _mm512_maskz_loadu_epi32(mask, bias + 16 * g) : _mm512_setzero_si512();
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const __m512i sum = _mm512_sub_epi32(acc[a][g], correction);
      __m512 f;
      if (x_scale != nullptr) {
        f = _mm512_mul_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(sum), _mm512_set1_ps(x_scale[a])), ws);
      } else {
        f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(sum, b)), ws);
      }
      _mm512_mask_storeu_ps(y + a * ldy + 16 * g, mask, f);
    }
  }
}

using TileFn = void (*)(const uint8_t*, int64_t, const int8_t*, int64_t, const int32_t*,
                        const float*, const float*, const int32_t*, float*, int64_t, int64_t);

template <int IR>
TileFn TileFor(int jg) {
  switch (jg) {
    case 1:
      return &Tile<IR, 1>;
    case 2:
      return &Tile<IR, 2>;
    case 3:
      return &Tile<IR, 3>;
    default:
      return &Tile<IR, 4>;
  }
}

TileFn TileFor(int ir, int jg) {
  switch (ir) {
    case 1:
      return TileFor<1>(jg);
    case 2:
      return TileFor<2>(jg);
    case 3:
      return TileFor<3>(jg);
    default:
      return TileFor<4>(jg);
  }
}

// Q8_0: y[a, lane] for a < IR activation rows and one group of 16 rows; per block of 32, eight
// vpdpbusd give the block's exact int32 sums, then acc += f32(sum) · (d_x · d_w) (FMA).
template <int IR, int NS = (IR == 1 ? 1 : 2)>
void TileQ8(const uint8_t* x, int64_t ldx, const float* x_d, int64_t blocks, const uint8_t* group,
            float* y, int64_t ldy, int64_t rows) {
  __m512 acc[IR];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) acc[a] = _mm512_setzero_ps();
  for (int64_t b = 0; b < blocks; ++b) {
    const uint8_t* blk = group + b * 576;
    _mm_prefetch(reinterpret_cast<const char*>(blk) + 1152, _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(blk) + 1216, _MM_HINT_T0);
    __m512i w[8];
#pragma GCC unroll 8
    for (int q = 0; q < 8; ++q) w[q] = _mm512_loadu_si512(blk + 64 * q);
    const __m512 dw =
        _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 512)));
    const __m512i correction = _mm512_slli_epi32(
        _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 544))), 7);
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const uint8_t* xa = x + a * ldx + 32 * b;
      // NS independent partial sums: eight dependent vpdpbusd would wait on each other's
      // latency (M = 8 ran at half the rate).
      __m512i part[NS];
#pragma GCC unroll 4
      for (int t = 0; t < NS; ++t) part[t] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int q = 0; q < 8; ++q) {
        int32_t quad;
        __builtin_memcpy(&quad, xa + 4 * q, 4);
        part[q % NS] = _mm512_dpbusd_epi32(part[q % NS], _mm512_set1_epi32(quad), w[q]);
      }
      __m512i sum = part[0];
#pragma GCC unroll 4
      for (int t = 1; t < NS; ++t) sum = _mm512_add_epi32(sum, part[t]);
      const __m512 scale = _mm512_mul_ps(_mm512_set1_ps(x_d[a * blocks + b]), dw);
      acc[a] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(sum, correction)), scale, acc[a]);
    }
  }
  const __mmask16 mask =
      rows >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rows) - 1);
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) _mm512_mask_storeu_ps(y + a * ldy, mask, acc[a]);
}

}  // namespace

namespace tandem::kernels::isa {

void Q8_0MatmulAvx512Vnni(const uint8_t* x_u8, const float* x_d, const uint8_t* packed,
                          int64_t groups, int64_t blocks, float* y, int64_t ldy, int64_t m,
                          int64_t rows) {
  const int64_t k = 32 * blocks;
  for (int64_t g = 0; g < groups; ++g) {
    const uint8_t* group = packed + g * blocks * 576;
    for (int64_t i = 0; i < m; i += 4) {
      const int64_t left = rows - 16 * g;
      const uint8_t* xi = x_u8 + i * k;
      const float* di = x_d + i * blocks;
      float* yi = y + i * ldy + 16 * g;
      switch (m - i < 4 ? m - i : 4) {
        case 1:
          TileQ8<1>(xi, k, di, blocks, group, yi, ldy, left);
          break;
        case 2:
          TileQ8<2>(xi, k, di, blocks, group, yi, ldy, left);
          break;
        case 3:
          TileQ8<3>(xi, k, di, blocks, group, yi, ldy, left);
          break;
        default:
          TileQ8<4>(xi, k, di, blocks, group, yi, ldy, left);
          break;
      }
    }
  }
}

void Int8MatmulAvx512Vnni(const uint8_t* x_u8, const int8_t* packed, int64_t groups, int64_t kq,
                          const int32_t* row_sums, const float* x_scale, const float* w_scale,
                          const int32_t* bias, float* y, int64_t ldy, int64_t m, int64_t rows) {
  const int64_t ldx = 4 * kq;
  // Up to 4 groups (64 rows) × 4 activation rows per tile: 16 accumulators; the groups' bytes
  // are read from memory by the first tile and from L1/L2 by the others.
  for (int64_t g = 0; g < groups; g += 4) {
    const int jg = static_cast<int>(groups - g < 4 ? groups - g : 4);
    for (int64_t i = 0; i < m; i += 4) {
      const int ir = static_cast<int>(m - i < 4 ? m - i : 4);
      TileFor(ir, jg)(x_u8 + i * ldx, ldx, packed + g * kq * 64, kq, row_sums + 16 * g,
                      x_scale != nullptr ? x_scale + i : nullptr, w_scale + 16 * g,
                      bias != nullptr ? bias + 16 * g : nullptr, y + i * ldy + 16 * g, ldy,
                      rows - 16 * g);
    }
  }
}

void QuantizeRowDynamicAvx512(const float* x, int64_t k, int8_t* x_q, float* x_scale) {
  // max |x| (NaN ignored: vmaxps returns its second operand when either is NaN, as std::max).
  __m512 mx = _mm512_setzero_ps();
  int64_t p = 0;
  for (; p + 16 <= k; p += 16) mx = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + p)), mx);
  const __mmask16 tail = static_cast<__mmask16>((1u << (k - p)) - 1);
  if (p < k) mx = _mm512_max_ps(_mm512_abs_ps(_mm512_maskz_loadu_ps(tail, x + p)), mx);
  const float m = _mm512_reduce_max_ps(mx);
  const float s = m == 0.0f ? 1.0f : m / 127.0f;
  *x_scale = s;
  const __m512 vs = _mm512_set1_ps(s), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f);
  for (p = 0; p < k; p += 16) {
    const __mmask16 mask = k - p >= 16 ? static_cast<__mmask16>(0xffff) : tail;
    const __m512 t = _mm512_div_ps(_mm512_maskz_loadu_ps(mask, x + p), vs);
    // rint (round half to even); NaN → -127 (vmaxps returns lo), as the scalar RoundClamp.
    __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
    _mm512_mask_cvtsepi32_storeu_epi8(x_q + p, mask, _mm512_cvtps_epi32(r));
  }
}

}  // namespace tandem::kernels::isa
