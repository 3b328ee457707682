// MatmulInt8 and the activation quantizers of W8A8 (kernels/ops.h; docs/design/w8a8.md).
// The per-ISA files compute exact int32 sums for a chunk of weight rows; this file picks the
// ISA, splits the weight rows over the OpenMP threads in 64-row chunks and applies the f32
// epilogue, so every ISA gives the same bits.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/check.h"
#include "kernels/cpu/int8_matmul_isa_api.h"
#include "kernels/ops.h"
#include "tensor/dtype.h"

namespace tandem::kernels {
namespace {

enum class Int8Isa { kPortable, kAvx2, kAvx512Vnni };

Int8Isa DetectInt8Isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vnni")) {
    return Int8Isa::kAvx512Vnni;
  }
  if (__builtin_cpu_supports("avx2")) return Int8Isa::kAvx2;
  return Int8Isa::kPortable;
}

std::atomic<Int8Isa>& Int8IsaSlot() {
  static std::atomic<Int8Isa> isa{DetectInt8Isa()};
  return isa;
}

// rint in the default round-half-to-even mode, clamped to [lo, hi]; NaN → lo.
inline int8_t RoundClamp(float t, float lo, float hi) {
  const float r = std::nearbyint(t);
  if (!(r >= lo)) return static_cast<int8_t>(lo);
  return static_cast<int8_t>(r > hi ? hi : r);
}

// Exact sums over the packed layout, `groups` groups from `packed`: acc [m, groups·16].
void PortableRows(const int8_t* x_q, int64_t k, const int8_t* packed, int64_t groups, int64_t kq,
                  int32_t* acc, int64_t m) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t g = 0; g < groups; ++g) {
      for (int r = 0; r < 16; ++r) {
        int32_t s = 0;
        for (int64_t q = 0; q < kq; ++q) {
          for (int b = 0; b < 4 && 4 * q + b < k; ++b) {
            s += x_q[i * k + 4 * q + b] * packed[((g * kq + q) * 16 + r) * 4 + b];
          }
        }
        acc[i * groups * 16 + 16 * g + r] = s;
      }
    }
  }
}

// Below this many weight bytes one thread does the whole matmul (as the typed matmul).
constexpr int64_t kParallelMinBytes = 1 << 15;
constexpr int64_t kChunkGroups = 4;  // 64 weight rows per parallel task
// Below this many activation values one thread quantizes them (decode rows).
constexpr int64_t kParallelQuantizeValues = 1 << 16;

}  // namespace

void QuantizeRowsDynamicInt8(const float* x, int64_t m, int64_t k, int8_t* x_q, float* x_scale) {
  if (Int8IsaSlot().load(std::memory_order_relaxed) == Int8Isa::kAvx512Vnni) {
    // Same operations vectorised (division, round half to even, clamp): the same bits.
#pragma omp parallel for if (m * k >= kParallelQuantizeValues) schedule(static)
    for (int64_t i = 0; i < m; ++i)
      isa::QuantizeRowDynamicAvx512(x + i * k, k, x_q + i * k, x_scale + i);
    return;
  }
#pragma omp parallel for if (m * k >= kParallelQuantizeValues) schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    const float* xi = x + i * k;
    float mx = 0.0f;
    for (int64_t p = 0; p < k; ++p) mx = std::max(mx, std::fabs(xi[p]));
    const float s = mx == 0.0f ? 1.0f : mx / 127.0f;
    x_scale[i] = s;
    for (int64_t p = 0; p < k; ++p) x_q[i * k + p] = RoundClamp(xi[p] / s, -127.0f, 127.0f);
  }
}

void QuantizeRowsStaticInt8(const float* x, int64_t m, int64_t k, float input_scale,
                            float input_offset, int8_t* x_q) {
#pragma omp parallel for if (m * k >= kParallelQuantizeValues) schedule(static)
  for (int64_t i = 0; i < m * k; ++i) {
    const float t = x[i] / input_scale;  // two statements: a division, then an f32 addition
    x_q[i] = RoundClamp(t + input_offset, -128.0f, 127.0f);
  }
}

void Int8RowSums(const int8_t* w, int64_t n, int64_t k, int32_t* sums) {
  for (int64_t j = 0; j < n; ++j) {
    int32_t s = 0;
    for (int64_t p = 0; p < k; ++p) s += w[j * k + p];
    sums[j] = s;
  }
}

int64_t PackedInt8Bytes(int64_t n, int64_t k) {
  return (n + kInt8PackRows - 1) / kInt8PackRows * ((k + 3) / 4) * 64;
}

void PackInt8Weights(const int8_t* w, int64_t n, int64_t k, int8_t* packed) {
  const int64_t groups = (n + 15) / 16, kq = (k + 3) / 4;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t q = 0; q < kq; ++q) {
      int8_t* v = packed + (g * kq + q) * 64;
      for (int r = 0; r < 16; ++r) {
        for (int b = 0; b < 4; ++b) {
          const int64_t row = 16 * g + r, col = 4 * q + b;
          v[4 * r + b] = row < n && col < k ? w[row * k + col] : 0;
        }
      }
    }
  }
}

void MatmulInt8(const int8_t* x_q, const int8_t* w_packed, const int32_t* w_row_sums,
                const float* x_scale, const float* w_scale, const int32_t* bias, float* y,
                int64_t m, int64_t n, int64_t k) {
  TANDEM_CHECK(m >= 0 && n > 0 && k > 0 && k <= kMatmulInt8MaxK)
      << "int8 matmul shape m=" << m << " n=" << n << " k=" << k << " (k at most "
      << kMatmulInt8MaxK << ")";
  if (m == 0) return;
  const Int8Isa isa = Int8IsaSlot().load(std::memory_order_relaxed);
  const int64_t kq = (k + 3) / 4, kp = 4 * kq, groups = (n + 15) / 16;
  // The activation rows in the form the ISA multiplies, padded to whole quads (the padding
  // meets zero weights). Per calling thread, reused.
  thread_local std::vector<uint8_t> x_u8;
  thread_local std::vector<int16_t> x16;
  if (isa == Int8Isa::kAvx512Vnni) {
    x_u8.assign(static_cast<size_t>(m * kp), 128);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) x_u8[i * kp + p] = static_cast<uint8_t>(x_q[i * k + p] + 128);
    }
  } else if (isa == Int8Isa::kAvx2) {
    x16.assign(static_cast<size_t>(m * kp), 0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t p = 0; p < k; ++p) x16[i * kp + p] = x_q[i * k + p];
    }
  }
  const uint8_t* xu = x_u8.data();
  const int16_t* xw = x16.data();
  const int threads = n * k < kParallelMinBytes ? 1 : omp_get_max_threads();
  const int64_t chunks = (groups + kChunkGroups - 1) / kChunkGroups;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t g0 = c * kChunkGroups, count = std::min(groups - g0, kChunkGroups);
    const int64_t j0 = 16 * g0, rows = std::min(n, 16 * (g0 + count)) - j0;
    const int8_t* packed = w_packed + g0 * kq * 64;
    if (isa == Int8Isa::kAvx512Vnni) {
      isa::Int8MatmulAvx512Vnni(xu, packed, count, kq, w_row_sums + j0, x_scale, w_scale + j0,
                                bias != nullptr ? bias + j0 : nullptr, y + j0, n, m, rows);
      continue;
    }
    thread_local std::vector<int32_t> acc;
    const int64_t lda = 16 * count;
    acc.resize(static_cast<size_t>(m * lda));
    if (isa == Int8Isa::kAvx2) {
      isa::Int8MatmulAvx2(xw, packed, count, kq, acc.data(), m);
    } else {
      PortableRows(x_q, k, packed, count, kq, acc.data(), m);
    }
    for (int64_t i = 0; i < m; ++i) {
      const int32_t* a = acc.data() + i * lda;
      float* yi = y + i * n + j0;
      if (x_scale != nullptr) {
        const float sx = x_scale[i];
        for (int64_t r = 0; r < rows; ++r)
          yi[r] = (static_cast<float>(a[r]) * sx) * w_scale[j0 + r];
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t s = int64_t{a[r]} + (bias != nullptr ? bias[j0 + r] : 0);
          yi[r] = static_cast<float>(s) * w_scale[j0 + r];
        }
      }
    }
  }
}

void QuantizeRowsQ8_0(const float* x, int64_t m, int64_t k, int8_t* x_q, float* x_d) {
  const int64_t blocks = k / 32;
#pragma omp parallel for if (m * k >= kParallelQuantizeValues) schedule(static)
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t b = 0; b < blocks; ++b) {
      const float* xb = x + i * k + 32 * b;
      float amax = 0.0f;
      for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j]));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      x_d[i * blocks + b] = tensor::HalfToFloat(tensor::FloatToHalf(d));
      for (int j = 0; j < 32; ++j)
        x_q[i * k + 32 * b + j] = RoundClamp(xb[j] * id, -127.0f, 127.0f);
    }
  }
}

int64_t PackedQ8_0Bytes(int64_t n, int64_t k) { return (n + 15) / 16 * (k / 32) * 576; }

void PackQ8_0Weights(const void* w, int64_t n, int64_t k, uint8_t* packed) {
  const int64_t blocks = k / 32, groups = (n + 15) / 16;
  const auto* src = static_cast<const uint8_t*>(w);
  // Groups are independent: packed in parallel (a model's experts are gigabytes of them, and
  // this runs at load). Each row's 32 values go as eight runs of 4 (the VNNI dot's quads).
  const int threads = n * k < kParallelMinBytes ? 1 : omp_get_max_threads();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t b = 0; b < blocks; ++b) {
      uint8_t* out = packed + (g * blocks + b) * 576;
      std::memset(out, 0, 576);
      for (int r = 0; r < 16 && 16 * g + r < n; ++r) {
        const uint8_t* blk = src + ((16 * g + r) * blocks + b) * 34;
        std::memcpy(out + 512 + 2 * r, blk, 2);  // f16 d
        int sum = 0;
        for (int quad = 0; quad < 8; ++quad) {
          std::memcpy(out + 64 * quad + 4 * r, blk + 2 + 4 * quad, 4);
        }
        for (int p = 0; p < 32; ++p) {
          sum += static_cast<int8_t>(blk[2 + p]);
        }
        const auto sum16 = static_cast<int16_t>(sum);  // |sum| <= 32 * 128: fits
        std::memcpy(out + 544 + 2 * r, &sum16, 2);
      }
    }
  }
}

bool MatmulQ8_0Int8Available() {
  static const bool available = DetectInt8Isa() == Int8Isa::kAvx512Vnni;  // CPUID once
  return available;
}

void MatmulQ8_0Int8(const int8_t* x_q, const float* x_d, const uint8_t* w_packed, float* y,
                    int64_t m, int64_t n, int64_t k) {
  TANDEM_CHECK(MatmulQ8_0Int8Available()) << "MatmulQ8_0Int8 needs AVX-512 VNNI";
  TANDEM_CHECK(m >= 0 && n > 0 && k > 0 && k % 32 == 0)
      << "Q8_0 int8 matmul shape m=" << m << " n=" << n << " k=" << k;
  if (m == 0) return;
  thread_local std::vector<uint8_t> x_u8;
  x_u8.resize(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m * k; ++i) x_u8[i] = static_cast<uint8_t>(x_q[i] + 128);
  const uint8_t* xu = x_u8.data();
  const int64_t blocks = k / 32, groups = (n + 15) / 16;
  const int threads = n * k < kParallelMinBytes ? 1 : omp_get_max_threads();
  const int64_t chunks = (groups + kChunkGroups - 1) / kChunkGroups;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t g0 = c * kChunkGroups, count = std::min(groups - g0, kChunkGroups);
    const int64_t rows = std::min(n, 16 * (g0 + count)) - 16 * g0;
    isa::Q8_0MatmulAvx512Vnni(xu, x_d, w_packed + g0 * blocks * 576, count, blocks, y + 16 * g0, n,
                              m, rows);
  }
}

void MatmulQ8_0Int8Naive(const int8_t* x_q, const float* x_d, const void* w, float* y, int64_t m,
                         int64_t n, int64_t k) {
  const int64_t blocks = k / 32;
  const auto* src = static_cast<const uint8_t*>(w);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t b = 0; b < blocks; ++b) {
        const uint8_t* blk = src + (j * blocks + b) * 34;
        uint16_t dh;
        std::memcpy(&dh, blk, 2);
        int32_t sum = 0;
        for (int p = 0; p < 32; ++p)
          sum += x_q[i * k + 32 * b + p] * static_cast<int8_t>(blk[2 + p]);
        acc = std::fma(static_cast<float>(sum), x_d[i * blocks + b] * tensor::HalfToFloat(dh), acc);
      }
      y[i * n + j] = acc;
    }
  }
}

void MatmulInt8Naive(const int8_t* x_q, const int8_t* w_q, const float* x_scale,
                     const float* w_scale, const int32_t* bias, float* y, int64_t m, int64_t n,
                     int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t p = 0; p < k; ++p) s += int64_t{x_q[i * k + p]} * w_q[j * k + p];
      if (x_scale != nullptr) {
        y[i * n + j] = (static_cast<float>(s) * x_scale[i]) * w_scale[j];
      } else {
        y[i * n + j] = static_cast<float>(s + (bias != nullptr ? bias[j] : 0)) * w_scale[j];
      }
    }
  }
}

const char* MatmulInt8Isa() {
  switch (Int8IsaSlot().load(std::memory_order_relaxed)) {
    case Int8Isa::kAvx512Vnni:
      return "avx512vnni";
    case Int8Isa::kAvx2:
      return "avx2";
    case Int8Isa::kPortable:
      return "portable";
  }
  return "?";
}

bool ForceMatmulInt8Isa(const char* name) {
  const std::string want = name;
  const Int8Isa best = DetectInt8Isa();
  Int8Isa isa;
  if (want == "portable") {
    isa = Int8Isa::kPortable;
  } else if (want == "avx2" && best != Int8Isa::kPortable) {
    isa = Int8Isa::kAvx2;  // every AVX-512 VNNI CPU has AVX2
  } else if (want == "avx512vnni" && best == Int8Isa::kAvx512Vnni) {
    isa = Int8Isa::kAvx512Vnni;
  } else {
    return false;
  }
  Int8IsaSlot().store(isa);
  return true;
}

}  // namespace tandem::kernels
