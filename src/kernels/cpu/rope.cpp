// Rotary position embedding, both pair conventions.
// Reference: HF transformers apply_rotary_pos_emb (rotate_half, kNeox); llama2.c run.c and
// llama.cpp ggml_rope ROPE_NORM (adjacent pairs, kInterleaved). llama.cpp's converter permutes
// HF q/k rows so that kInterleaved on GGUF weights equals kNeox on HF weights.
// Angles: pos * theta^(-2j/head_dim); the inverse frequencies are computed in f32 like llama2.c
// (powf) and the angle product in f32, then cos/sin in f32.
#include <cmath>
#include <vector>

#include "core/check.h"
#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

inline void RotatePair(float* a, float* b, float c, float s) {
  const float x0 = *a;
  const float x1 = *b;
  *a = x0 * c - x1 * s;
  *b = x0 * s + x1 * c;
}

}  // namespace

void Rope(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads,
          int64_t head_dim, float theta, RopeStyle style) {
  TANDEM_CHECK(head_dim % 2 == 0) << "rope head_dim must be even, got " << head_dim;
  const int64_t half = head_dim / 2;
  thread_local std::vector<float> inv_freq;
  inv_freq.resize(half);
  for (int64_t j = 0; j < half; ++j) {
    inv_freq[j] = 1.0f / std::pow(theta, static_cast<float>(2 * j) / static_cast<float>(head_dim));
  }
  const float* freq = inv_freq.data();
#pragma omp parallel for if (num_tokens * num_heads * head_dim >= 32768)
  for (int64_t t = 0; t < num_tokens; ++t) {
    // cos/sin once per token, shared by all heads.
    float cs[512];
    float sn[512];
    float* c = half <= 512 ? cs : new float[half];
    float* s = half <= 512 ? sn : new float[half];
    for (int64_t j = 0; j < half; ++j) {
      const float angle = static_cast<float>(positions[t]) * freq[j];
      c[j] = std::cos(angle);
      s[j] = std::sin(angle);
    }
    for (int64_t h = 0; h < num_heads; ++h) {
      float* row = x + (t * num_heads + h) * head_dim;
      if (style == RopeStyle::kNeox) {
        for (int64_t j = 0; j < half; ++j) RotatePair(row + j, row + j + half, c[j], s[j]);
      } else {
        for (int64_t j = 0; j < half; ++j) RotatePair(row + 2 * j, row + 2 * j + 1, c[j], s[j]);
      }
    }
    if (c != cs) {
      delete[] c;
      delete[] s;
    }
  }
}

void RopeNaive(float* x, const int32_t* positions, int64_t num_tokens, int64_t num_heads,
               int64_t head_dim, float theta, RopeStyle style) {
  const int64_t half = head_dim / 2;
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t h = 0; h < num_heads; ++h) {
      float* row = x + (t * num_heads + h) * head_dim;
      for (int64_t j = 0; j < half; ++j) {
        const double angle = positions[t] * std::pow(static_cast<double>(theta),
                                                     -2.0 * static_cast<double>(j) / head_dim);
        const int64_t a = style == RopeStyle::kNeox ? j : 2 * j;
        const int64_t b = style == RopeStyle::kNeox ? j + half : 2 * j + 1;
        const double x0 = row[a];
        const double x1 = row[b];
        row[a] = static_cast<float>(x0 * std::cos(angle) - x1 * std::sin(angle));
        row[b] = static_cast<float>(x0 * std::sin(angle) + x1 * std::cos(angle));
      }
    }
  }
}

}  // namespace tandem::kernels
