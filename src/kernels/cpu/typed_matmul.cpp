// MatmulTyped: y = x · wᵀ with the weight in its stored dtype (F32/F16/BF16/Q8_0); design and
// arithmetic in docs/design/weight-dtypes.md. Small m: the fused per-ISA kernel over column
// blocks split across the OpenMP threads. Large m: f32 weights straight to oneDNN; 16-bit
// weights widened one L2-sized tile of rows at a time, each tile one oneDNN matmul on the thread
// that widened it.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/check.h"
#include "kernels/cpu/matmul_internal.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/typed_matmul_isa_api.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

enum class Isa { kPortable, kAvx2, kAvx512 };

Isa DetectIsa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
      __builtin_cpu_supports("f16c")) {
    return Isa::kAvx2;
  }
  return Isa::kPortable;
}

std::atomic<Isa>& IsaSlot() {
  static std::atomic<Isa> isa{DetectIsa()};
  return isa;
}

Isa TheIsa() { return IsaSlot().load(std::memory_order_relaxed); }

int WeightCodeOf(tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::kF32:
      return isa::kWeightF32;
    case tensor::DType::kF16:
      return isa::kWeightF16;
    case tensor::DType::kBF16:
      return isa::kWeightBF16;
    case tensor::DType::kQ8_0:
      return isa::kWeightQ8_0;
    default:
      break;
  }
  TANDEM_CHECK(false) << "matmul weight dtype " << tensor::DTypeName(dtype)
                      << " has no kernel (F32, F16, BF16, Q8_0)";
  return 0;
}

float WidenOne(const void* w, tensor::DType dtype, int64_t i) {
  if (dtype == tensor::DType::kF32) return static_cast<const float*>(w)[i];
  if (dtype == tensor::DType::kQ8_0) {  // ggml dequantize_row_q8_0: d · q
    const unsigned char* block = static_cast<const unsigned char*>(w) + (i / 32) * 34;
    uint16_t d;
    std::memcpy(&d, block, 2);
    return tensor::HalfToFloat(d) * static_cast<int8_t>(block[2 + i % 32]);
  }
  uint16_t h;
  std::memcpy(&h, static_cast<const unsigned char*>(w) + 2 * i, 2);
  return dtype == tensor::DType::kF16 ? tensor::HalfToFloat(h) : tensor::BFloat16ToFloat(h);
}

void FusedRange(const float* x, const void* w, tensor::DType dtype, float* y, int64_t m, int64_t n,
                int64_t k, int64_t j0, int64_t j1) {
  switch (TheIsa()) {
    case Isa::kAvx512:
      return isa::FusedMatmulAvx512(x, w, WeightCodeOf(dtype), y, m, n, k, j0, j1);
    case Isa::kAvx2:
      return isa::FusedMatmulAvx2(x, w, WeightCodeOf(dtype), y, m, n, k, j0, j1);
    case Isa::kPortable:
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = j0; j < j1; ++j) {
          float acc = 0.0f;
          for (int64_t p = 0; p < k; ++p) acc += x[i * k + p] * WidenOne(w, dtype, j * k + p);
          y[i * n + j] = acc;
        }
      }
      return;
  }
}

// Below this many weight elements one thread does the whole matmul (a parallel region costs
// more than it saves on stories260K-sized layers).
constexpr int64_t kParallelMinElements = 1 << 15;

void FusedMatmul(const float* x, const void* w, tensor::DType dtype, float* y, int64_t m, int64_t n,
                 int64_t k) {
  const int threads = n * k < kParallelMinElements ? 1 : omp_get_max_threads();
  if (threads == 1) return FusedRange(x, w, dtype, y, m, n, k, 0, n);
  // Chunks of kChunkRows weight rows (whole 4-row blocks), handed out dynamically: a thread
  // slowed by a neighbour or a page walk takes fewer chunks instead of making the others wait
  // at the barrier (a static split left ~10% of decode spinning there).
  constexpr int64_t kChunkRows = 64;
  const int64_t chunks = (n + kChunkRows - 1) / kChunkRows;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t j0 = c * kChunkRows, j1 = std::min(n, j0 + kChunkRows);
    FusedRange(x, w, dtype, y, m, n, k, j0, j1);
  }
}

void TiledMatmul(const float* x, const void* w, tensor::DType dtype, float* y, int64_t m, int64_t n,
                 int64_t k) {
  // Rows per tile: about 512 KiB of f32 (in L2 while oneDNN multiplies it), 64 … 256 rows
  // (oneDNN's GEMM loses half its speed below 64 output columns).
  const int64_t tile = std::clamp<int64_t>((int64_t{1} << 17) / k / 16 * 16, 64, 256);
  const int64_t tiles = (n + tile - 1) / tile;
#pragma omp parallel
  {
    // Reused across calls: a fresh vector per call was an mmap + page faults of up to 2.9 MB
    // per thread for every prefill matmul.
    thread_local std::vector<float> widened;
    widened.resize(static_cast<size_t>(std::min(tile, n) * k));
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tiles; ++t) {
      const int64_t j0 = t * tile, rows = std::min(tile, n - j0);
      WidenToF32(static_cast<const unsigned char*>(w) + tensor::DTypeBytes(dtype, j0 * k), dtype,
                 widened.data(), rows * k);
      MatmulStrided(x, widened.data(), y + j0, m, rows, k, n);
    }
  }
}

}  // namespace

void WidenToF32(const void* src, tensor::DType dtype, float* dst, int64_t count) {
  switch (TheIsa()) {
    case Isa::kAvx512:
      return isa::WidenAvx512(src, WeightCodeOf(dtype), dst, count);
    case Isa::kAvx2:
      return isa::WidenAvx2(src, WeightCodeOf(dtype), dst, count);
    case Isa::kPortable:
      for (int64_t i = 0; i < count; ++i) dst[i] = WidenOne(src, dtype, i);
      return;
  }
}

void MatmulTyped(const float* x, const void* w, tensor::DType w_dtype, float* y, int64_t m,
                 int64_t n, int64_t k) {
  TANDEM_CHECK(m >= 0 && n > 0 && k > 0) << "matmul shape m=" << m << " n=" << n << " k=" << k;
  TANDEM_CHECK(k % tensor::DTypeBlockValues(w_dtype) == 0)
      << "matmul k=" << k << " is not whole " << tensor::DTypeName(w_dtype) << " blocks";
  if (m == 0) return;
  if (m <= kFusedMatmulMaxRows) return FusedMatmul(x, w, w_dtype, y, m, n, k);
  if (w_dtype == tensor::DType::kF32) return Matmul(x, static_cast<const float*>(w), y, m, n, k);
  WeightCodeOf(w_dtype);  // refuses a dtype without a kernel before any thread starts
  TiledMatmul(x, w, w_dtype, y, m, n, k);
}

void MatmulTypedNaive(const float* x, const void* w, tensor::DType w_dtype, float* y, int64_t m,
                      int64_t n, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        acc += static_cast<double>(x[i * k + p]) * WidenOne(w, w_dtype, j * k + p);
      }
      y[i * n + j] = static_cast<float>(acc);
    }
  }
}

bool ForceMatmulTypedIsa(const char* name) {
  const std::string want = name;
  const Isa best = DetectIsa();
  Isa isa;
  if (want == "portable") {
    isa = Isa::kPortable;
  } else if (want == "avx2" && best != Isa::kPortable) {
    isa = Isa::kAvx2;  // every AVX-512F CPU has AVX2, FMA and F16C
  } else if (want == "avx512" && best == Isa::kAvx512) {
    isa = Isa::kAvx512;
  } else {
    return false;
  }
  IsaSlot().store(isa);
  return true;
}

float DotWidened(const float* a, const void* b, tensor::DType b_dtype, int64_t n) {
  switch (TheIsa()) {
    case Isa::kAvx512:
      return isa::DotAvx512(a, b, WeightCodeOf(b_dtype), n);
    case Isa::kAvx2:
      return isa::DotAvx2(a, b, WeightCodeOf(b_dtype), n);
    case Isa::kPortable:
      break;
  }
  float acc = 0.0f;
  for (int64_t p = 0; p < n; ++p) acc += a[p] * WidenOne(b, b_dtype, p);
  return acc;
}

void AxpyWidened(float alpha, const void* x, tensor::DType x_dtype, float* y, int64_t n) {
  switch (TheIsa()) {
    case Isa::kAvx512:
      return isa::AxpyAvx512(alpha, x, WeightCodeOf(x_dtype), y, n);
    case Isa::kAvx2:
      return isa::AxpyAvx2(alpha, x, WeightCodeOf(x_dtype), y, n);
    case Isa::kPortable:
      break;
  }
  for (int64_t p = 0; p < n; ++p) y[p] += alpha * WidenOne(x, x_dtype, p);
}

const char* MatmulTypedIsa() {
  switch (TheIsa()) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kPortable:
      return "portable";
  }
  return "?";
}

}  // namespace tandem::kernels
