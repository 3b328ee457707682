// The body of the fused typed matmul (see kernels/ops.h MatmulTyped and
// docs/design/weight-dtypes.md), written once for every SIMD width. Included ONLY by
// typed_matmul_avx512.cpp / typed_matmul_avx2.cpp, each compiled with its ISA flags, after they
// define `struct Isa` with:
//   using V; kLanes; Zero(); LoadF32(const float*); LoadF16(const uint16_t*);
//   LoadBF16(const uint16_t*); Fma(a, b, acc) = a·b + acc; Sum(V) (horizontal f32 sum);
//   Store(float*, V); Add(a, b); Set1(float); Mul(a, b); LoadQ8(const int8_t*) (kLanes int8
//   widened to f32); HalfToFloat(uint16_t) (one f16 scale).
// Everything here is in an anonymous namespace and uses no STL, so no inline function compiled
// with wider instructions can be merged by the linker into code that runs on older CPUs.
#pragma once

#include <cstdint>

#include "kernels/cpu/typed_matmul_isa_api.h"

namespace {

template <int D>
inline Isa::V LoadW(const void* w, int64_t idx) {
  if constexpr (D == tandem::kernels::isa::kWeightF32) {
    return Isa::LoadF32(static_cast<const float*>(w) + idx);
  } else if constexpr (D == tandem::kernels::isa::kWeightF16) {
    return Isa::LoadF16(static_cast<const uint16_t*>(w) + idx);
  } else {
    return Isa::LoadBF16(static_cast<const uint16_t*>(w) + idx);
  }
}

#ifndef TANDEM_PREFETCH
#define TANDEM_PREFETCH 512
#endif
constexpr int64_t kPrefetchBytes = TANDEM_PREFETCH;

template <int D>
constexpr int64_t ElemBytes() {
  return D == tandem::kernels::isa::kWeightF32 ? 4 : 2;
}

// y[i0 + a, j0 + r] = Σ_p x[i0 + a, p] · w[j0 + r, p] for a < IR, r < JR (IR·JR f32
// accumulators in registers; the JR weight vectors are widened once per k step and reused for
// every activation row).
template <int D, int IR, int JR>
void Block(const float* x, const void* w, float* y, int64_t n, int64_t k, int64_t i0,
           int64_t j0) {
  constexpr int L = Isa::kLanes;
  using V = typename Isa::V;
  V acc[IR][JR];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) acc[a][r] = Isa::Zero();
  }
  const int64_t kv = k - k % L;
  for (int64_t p = 0; p < kv; p += L) {
    V wv[JR];
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      __builtin_prefetch(static_cast<const char*>(w) + ((j0 + r) * k + p) * ElemBytes<D>() + kPrefetchBytes);
      wv[r] = LoadW<D>(w, (j0 + r) * k + p);
    }
#pragma GCC unroll 4
    for (int a = 0; a < IR; ++a) {
      const V xv = Isa::LoadF32(x + (i0 + a) * k + p);
#pragma GCC unroll 4
      for (int r = 0; r < JR; ++r) acc[a][r] = Isa::Fma(xv, wv[r], acc[a][r]);
    }
  }
  if (kv < k) {  // the last k % L columns, through zero-padded copies
    const int64_t rest = k - kv;
    alignas(64) float xt[L];
    alignas(64) unsigned char wt[JR][L * 4];
    V wv[JR];
    for (int r = 0; r < JR; ++r) {
      __builtin_memset(wt[r], 0, sizeof(wt[r]));
      __builtin_memcpy(wt[r], static_cast<const unsigned char*>(w) + ((j0 + r) * k + kv) * ElemBytes<D>(),
                       rest * ElemBytes<D>());
      wv[r] = LoadW<D>(wt[r], 0);
    }
    for (int a = 0; a < IR; ++a) {
      __builtin_memset(xt, 0, sizeof(xt));
      __builtin_memcpy(xt, x + (i0 + a) * k + kv, rest * sizeof(float));
      const V xv = Isa::LoadF32(xt);
      for (int r = 0; r < JR; ++r) acc[a][r] = Isa::Fma(xv, wv[r], acc[a][r]);
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) y[(i0 + a) * n + j0 + r] = Isa::Sum(acc[a][r]);
  }
}

using BlockFn = void (*)(const float*, const void*, float*, int64_t, int64_t, int64_t, int64_t);

// Q8_0 rows (34-byte blocks: f16 d, 32 int8 q): the JR weight vectors of each block are
// d · q (exact in f32: an 11-bit by 8-bit product), then as Block.
template <int IR, int JR>
void BlockQ8(const float* x, const void* w, float* y, int64_t n, int64_t k, int64_t i0,
             int64_t j0) {
  constexpr int L = Isa::kLanes;
  constexpr int kPerBlock = 32 / L;
  using V = typename Isa::V;
  const int64_t num_blocks = k / 32, row_bytes = num_blocks * 34;
  const unsigned char* rows[JR];
  for (int r = 0; r < JR; ++r) rows[r] = static_cast<const unsigned char*>(w) + (j0 + r) * row_bytes;
  V acc[IR][JR];
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) acc[a][r] = Isa::Zero();
  }
  for (int64_t b = 0; b < num_blocks; ++b) {
    V scale[JR];
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) {
      const unsigned char* blk = rows[r] + b * 34;
      __builtin_prefetch(blk + kPrefetchBytes);
      uint16_t d;
      __builtin_memcpy(&d, blk, 2);
      scale[r] = Isa::Set1(Isa::HalfToFloat(d));
    }
#pragma GCC unroll 4
    for (int v = 0; v < kPerBlock; ++v) {
      V wv[JR];
#pragma GCC unroll 4
      for (int r = 0; r < JR; ++r) {
        wv[r] = Isa::Mul(Isa::LoadQ8(reinterpret_cast<const int8_t*>(rows[r] + b * 34 + 2 + v * L)),
                         scale[r]);
      }
#pragma GCC unroll 4
      for (int a = 0; a < IR; ++a) {
        const V xv = Isa::LoadF32(x + (i0 + a) * k + b * 32 + v * L);
#pragma GCC unroll 4
        for (int r = 0; r < JR; ++r) acc[a][r] = Isa::Fma(xv, wv[r], acc[a][r]);
      }
    }
  }
#pragma GCC unroll 4
  for (int a = 0; a < IR; ++a) {
#pragma GCC unroll 4
    for (int r = 0; r < JR; ++r) y[(i0 + a) * n + j0 + r] = Isa::Sum(acc[a][r]);
  }
}

template <int IR>
BlockFn BlockQ8For(int jr) {
  switch (jr) {
    case 1: return &BlockQ8<IR, 1>;
    case 2: return &BlockQ8<IR, 2>;
    case 3: return &BlockQ8<IR, 3>;
    default: return &BlockQ8<IR, 4>;
  }
}

BlockFn BlockQ8For(int ir, int jr) {
  switch (ir) {
    case 1: return BlockQ8For<1>(jr);
    case 2: return BlockQ8For<2>(jr);
    case 3: return BlockQ8For<3>(jr);
    default: return BlockQ8For<4>(jr);
  }
}

template <int D, int IR>
BlockFn BlockFor(int jr) {
  switch (jr) {
    case 1: return &Block<D, IR, 1>;
    case 2: return &Block<D, IR, 2>;
    case 3: return &Block<D, IR, 3>;
    default: return &Block<D, IR, 4>;
  }
}

template <int D>
BlockFn BlockFor(int ir, int jr) {
  if constexpr (D == tandem::kernels::isa::kWeightQ8_0) return BlockQ8For(ir, jr);
  switch (ir) {
    case 1: return BlockFor<D, 1>(jr);
    case 2: return BlockFor<D, 2>(jr);
    case 3: return BlockFor<D, 3>(jr);
    default: return BlockFor<D, 4>(jr);
  }
}

// Columns [j0, j1) of y for every row: 4 weight rows at a time (outer), 4 activation rows at a
// time (inner), so a weight block is read from memory once and from L1 for the other rows.
template <int D>
void Fused(const float* x, const void* w, float* y, int64_t m, int64_t n, int64_t k, int64_t j0,
           int64_t j1) {
  for (int64_t j = j0; j < j1; j += 4) {
    const int jr = static_cast<int>(j1 - j < 4 ? j1 - j : 4);
    for (int64_t i = 0; i < m; i += 4) {
      const int ir = static_cast<int>(m - i < 4 ? m - i : 4);
      BlockFor<D>(ir, jr)(x, w, y, n, k, i, j);
    }
  }
}

void FusedAny(const float* x, const void* w, int wtype, float* y, int64_t m, int64_t n,
              int64_t k, int64_t j0, int64_t j1) {
  switch (wtype) {
    case tandem::kernels::isa::kWeightF32: return Fused<tandem::kernels::isa::kWeightF32>(x, w, y, m, n, k, j0, j1);
    case tandem::kernels::isa::kWeightF16: return Fused<tandem::kernels::isa::kWeightF16>(x, w, y, m, n, k, j0, j1);
    case tandem::kernels::isa::kWeightQ8_0: return Fused<tandem::kernels::isa::kWeightQ8_0>(x, w, y, m, n, k, j0, j1);
    default: return Fused<tandem::kernels::isa::kWeightBF16>(x, w, y, m, n, k, j0, j1);
  }
}

template <int D>
void Widen(const void* src, float* dst, int64_t count) {
  constexpr int L = Isa::kLanes;
  const int64_t cv = count - count % L;
  for (int64_t i = 0; i < cv; i += L) Isa::Store(dst + i, LoadW<D>(src, i));
  if (cv < count) {
    alignas(64) unsigned char tail[L * 4] = {};
    alignas(64) float out[L];
    __builtin_memcpy(tail, static_cast<const unsigned char*>(src) + cv * ElemBytes<D>(),
                     (count - cv) * ElemBytes<D>());
    Isa::Store(out, LoadW<D>(tail, 0));
    for (int64_t i = cv; i < count; ++i) dst[i] = out[i - cv];
  }
}

// Σ_p a[p] · widen(b[p]), two vector accumulators, the tail through a zero-padded copy.
template <int D>
float Dot(const float* a, const void* b, int64_t n) {
  constexpr int L = Isa::kLanes;
  typename Isa::V acc0 = Isa::Zero(), acc1 = Isa::Zero();
  int64_t p = 0;
  for (; p + 2 * L <= n; p += 2 * L) {
    acc0 = Isa::Fma(Isa::LoadF32(a + p), LoadW<D>(b, p), acc0);
    acc1 = Isa::Fma(Isa::LoadF32(a + p + L), LoadW<D>(b, p + L), acc1);
  }
  for (; p + L <= n; p += L) acc0 = Isa::Fma(Isa::LoadF32(a + p), LoadW<D>(b, p), acc0);
  if (p < n) {
    alignas(64) float at[L] = {};
    alignas(64) unsigned char bt[L * 4] = {};
    __builtin_memcpy(at, a + p, (n - p) * sizeof(float));
    __builtin_memcpy(bt, static_cast<const unsigned char*>(b) + p * ElemBytes<D>(),
                     (n - p) * ElemBytes<D>());
    acc1 = Isa::Fma(Isa::LoadF32(at), LoadW<D>(bt, 0), acc1);
  }
  return Isa::Sum(Isa::Add(acc0, acc1));
}

// y[p] += alpha · widen(x[p]).
template <int D>
void Axpy(float alpha, const void* x, float* y, int64_t n) {
  constexpr int L = Isa::kLanes;
  const typename Isa::V va = Isa::Set1(alpha);
  int64_t p = 0;
  for (; p + L <= n; p += L) Isa::Store(y + p, Isa::Fma(va, LoadW<D>(x, p), Isa::LoadF32(y + p)));
  if (p < n) {
    alignas(64) float yt[L] = {};
    alignas(64) unsigned char xt[L * 4] = {};
    __builtin_memcpy(yt, y + p, (n - p) * sizeof(float));
    __builtin_memcpy(xt, static_cast<const unsigned char*>(x) + p * ElemBytes<D>(),
                     (n - p) * ElemBytes<D>());
    Isa::Store(yt, Isa::Fma(va, LoadW<D>(xt, 0), Isa::LoadF32(yt)));
    __builtin_memcpy(y + p, yt, (n - p) * sizeof(float));
  }
}

float DotAny(const float* a, const void* b, int wtype, int64_t n) {
  switch (wtype) {
    case tandem::kernels::isa::kWeightF32: return Dot<tandem::kernels::isa::kWeightF32>(a, b, n);
    case tandem::kernels::isa::kWeightF16: return Dot<tandem::kernels::isa::kWeightF16>(a, b, n);
    default: return Dot<tandem::kernels::isa::kWeightBF16>(a, b, n);
  }
}

void AxpyAny(float alpha, const void* x, int wtype, float* y, int64_t n) {
  switch (wtype) {
    case tandem::kernels::isa::kWeightF32: return Axpy<tandem::kernels::isa::kWeightF32>(alpha, x, y, n);
    case tandem::kernels::isa::kWeightF16: return Axpy<tandem::kernels::isa::kWeightF16>(alpha, x, y, n);
    default: return Axpy<tandem::kernels::isa::kWeightBF16>(alpha, x, y, n);
  }
}

// Q8_0 blocks → f32 (count a multiple of 32).
void WidenQ8(const void* src, float* dst, int64_t count) {
  constexpr int L = Isa::kLanes;
  for (int64_t b = 0; b < count / 32; ++b) {
    const unsigned char* blk = static_cast<const unsigned char*>(src) + b * 34;
    uint16_t d;
    __builtin_memcpy(&d, blk, 2);
    const typename Isa::V scale = Isa::Set1(Isa::HalfToFloat(d));
    for (int v = 0; v < 32 / L; ++v) {
      Isa::Store(dst + b * 32 + v * L,
                 Isa::Mul(Isa::LoadQ8(reinterpret_cast<const int8_t*>(blk + 2 + v * L)), scale));
    }
  }
}

void WidenAny(const void* src, int wtype, float* dst, int64_t count) {
  if (wtype == tandem::kernels::isa::kWeightQ8_0) return WidenQ8(src, dst, count);
  switch (wtype) {
    case tandem::kernels::isa::kWeightF32: return Widen<tandem::kernels::isa::kWeightF32>(src, dst, count);
    case tandem::kernels::isa::kWeightF16: return Widen<tandem::kernels::isa::kWeightF16>(src, dst, count);
    default: return Widen<tandem::kernels::isa::kWeightBF16>(src, dst, count);
  }
}

}  // namespace
