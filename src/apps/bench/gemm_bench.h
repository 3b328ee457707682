// GEMM throughput of oneDNN's f32 matmul at the shapes a decoder layer runs (decode: M = batch
// of 1..16 rows; prefill: M = 512), against a naive triple loop measured in the same run.
//   C[M, N] = A[M, K] · W[K, N]   (f32, row-major A and C)
// W is either oneDNN's preferred packed layout ("packed", what a loader would prepare once) or
// [N, K] row-major as stored in HF checkpoints ("nk").
#pragma once

#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::apps::bench {

struct GemmShape {
  int m = 1;
  int k = 4096;
  int n = 4096;
};

struct GemmResult {
  GemmShape shape;
  std::string impl;           // "onednn" or "naive"
  std::string weight_layout;  // "packed", "nk"
  double seconds = 0;         // best time of one C = A·W
  double gflop_per_s = 0;     // 2·M·K·N / seconds / 1e9
  double weight_gb_per_s = 0; // K·N·4 bytes / seconds / 1e9 (weight streaming rate)
};

// Times oneDNN's matmul: one warm-up, then the best of `repeats` timings, each the mean over
// enough back-to-back calls to last ~0.1 s. Weights rotate through copies totalling ≥ 512 MiB
// so that small W is read from memory, not cache, as in a real model. Internal naming the shape
// when oneDNN rejects it.
Result<GemmResult> BenchOnednnMatmul(const GemmShape& shape, bool packed_weights, int repeats);

// Times the single-threaded naive i-j-k loop (W as [N, K]) on `shape`; best of `repeats`.
GemmResult BenchNaiveMatmul(const GemmShape& shape, int repeats);

// Largest |oneDNN − naive| over C for `shape` with random inputs in [-1, 1] (sanity check that
// the timed primitive computes the right product). Internal when oneDNN fails.
Result<double> MatmulMaxAbsDiff(const GemmShape& shape);

}  // namespace tandem::apps::bench
