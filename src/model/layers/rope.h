// RotaryEmbedding: applies RoPE to q or k rows at their token positions.
// tandem keeps every Llama weight in HF layout (GGUF q/k rows are un-permuted at load, see
// arch/llama.cpp), so Llama uses kNeox (rotate_half) whatever the file format.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/ops.h"

namespace tandem::model {

struct RotaryEmbedding {
  int32_t head_dim = 0;
  float theta = 10000.0f;
  kernels::RopeStyle style = kernels::RopeStyle::kNeox;
  // Partial rotary (Qwen3.5: head_dim · partial_rotary_factor): only the first rotary_dim dims
  // of each head rotate, as a head of that size (frequencies θ^(−2j / rotary_dim), NeoX pairs
  // inside the slice); the rest pass through. 0 = the whole head.
  int32_t rotary_dim = 0;

  // x: [num_tokens, num_heads, head_dim], rotated in place; positions: [num_tokens].
  void Apply(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads) const {
    if (rotary_dim == 0 || rotary_dim == head_dim) {
      kernels::Rope(x, positions, num_tokens, num_heads, head_dim, theta, style);
      return;
    }
    const int64_t rows = num_tokens * num_heads;
    std::vector<float> slice(rows * rotary_dim);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(x + r * head_dim, x + r * head_dim + rotary_dim, slice.data() + r * rotary_dim);
    }
    kernels::Rope(slice.data(), positions, num_tokens, num_heads, rotary_dim, theta, style);
    for (int64_t r = 0; r < rows; ++r) {
      std::copy(slice.data() + r * rotary_dim, slice.data() + (r + 1) * rotary_dim,
                x + r * head_dim);
    }
  }
};

}  // namespace tandem::model
