// RotaryEmbedding: applies RoPE to q or k rows at their token positions.
// tandem keeps every Llama weight in HF layout (GGUF q/k rows are un-permuted at load, see
// arch/llama.cpp), so Llama uses kNeox (rotate_half) whatever the file format.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace tandem::model {

struct RotaryEmbedding {
  int32_t head_dim = 0;
  float theta = 10000.0f;
  kernels::RopeStyle style = kernels::RopeStyle::kNeox;

  // x: [num_tokens, num_heads, head_dim], rotated in place; positions: [num_tokens].
  void Apply(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads) const {
    kernels::Rope(x, positions, num_tokens, num_heads, head_dim, theta, style);
  }
};

}  // namespace tandem::model
