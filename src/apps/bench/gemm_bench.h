// GEMM throughput of oneDNN's f32 matmul at the shapes a decoder layer runs (decode: M = batch
// of 1..16 rows; prefill: M = 512), against a naive triple loop measured in the same run.
//   C[M, N] = A[M, K] · W[K, N]   (f32, row-major A and C)
// Two implementations: "tandem" is kernels::Matmul, what the model runs (W kept as [N, K]
// row-major, its file layout); "onednn-packed" is a oneDNN matmul whose W was reordered once into
// oneDNN's preferred blocked layout — the ceiling a prepacking loader could reach.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "tensor/dtype.h"

namespace tandem::apps::bench {

struct GemmShape {
  int m = 1;
  int k = 4096;
  int n = 4096;
};

struct GemmResult {
  GemmShape shape;
  std::string impl;            // "tandem", "onednn-packed" or "naive"
  double seconds = 0;          // best time of one C = A·W
  double gflop_per_s = 0;      // 2·M·K·N / seconds / 1e9
  double weight_gb_per_s = 0;  // K·N·4 bytes / seconds / 1e9 (weight streaming rate)
};

// Both timers: one warm-up call, then the best of `repeats` timings, each the mean over enough
// back-to-back calls to last ~0.1 s. Weights rotate through copies totalling >= 512 MiB so that
// W is read from memory, not cache, as in a real model.

// Times kernels::Matmul (runs on the oneDNN threads of the process).
GemmResult BenchTandemMatmul(const GemmShape& shape, int repeats);

// Times kernels::MatmulTyped with W [N, K] stored in `dtype` (F32, F16, BF16, Q8_0 — K a
// multiple of 32): what a Linear of that dtype runs. impl = "typed-f32" / "typed-f16" /
// "typed-bf16" / "typed-q8_0"; weight_gb_per_s counts the dtype's bytes (K·N·2 for 16-bit,
// K·N·34/32 for Q8_0).
GemmResult BenchTypedMatmul(const GemmShape& shape, tensor::DType dtype, int repeats);

// Times an int8 W8A8 Linear (model::MultiplyWeight on an I8 weight with per-row scales):
// per-token int8 quantization of A, kernels::MatmulInt8 (impl "w8a8-int8", path
// kernels::MatmulInt8Isa()); weight_gb_per_s counts K·N bytes (+ 4·N of scales).
GemmResult BenchInt8Matmul(const GemmShape& shape, int repeats);

// Times a GGUF Q8_0 weight multiplied as a Q8_0 Linear does with --additional-config q8_0_dot
// int8 (activations quantized to Q8_0, kernels::MatmulQ8_0Int8 over packed weights; impl
// "q8_0-int8"); weight_gb_per_s counts the Q8_0 bytes (K·N·34/32). Only on AVX-512 VNNI
// CPUs (kernels::MatmulQ8_0Int8Available).
GemmResult BenchQ8_0Int8Matmul(const GemmShape& shape, int repeats);

// Times a oneDNN matmul with prepacked weights. Internal naming the shape when oneDNN fails.
Result<GemmResult> BenchOnednnPackedMatmul(const GemmShape& shape, int repeats);

// Times the single-threaded naive i-j-k loop (W as [N, K]) on `shape`; best of `repeats`.
GemmResult BenchNaiveMatmul(const GemmShape& shape, int repeats);

// Largest |C − naive C| of kernels::Matmul and of the prepacked oneDNN matmul for `shape` with
// random inputs in [-1, 1]: a sanity check that the timed code computes the right product.
struct MatmulCheck {
  double tandem_max_abs_diff = 0;
  double onednn_packed_max_abs_diff = 0;
};
Result<MatmulCheck> CheckMatmulsAgainstNaive(const GemmShape& shape);

}  // namespace tandem::apps::bench
