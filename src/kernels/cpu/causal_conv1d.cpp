// Depthwise causal conv1d + SiLU with a rolling state, one sequence at a time.
// Reference: HF transformers modeling_qwen3_5_moe.py (torch_causal_conv1d_update), QWEN35.md
// §3.2. The window of channel c at token t is [state (K−1 oldest first), x rows 0..t].
#include <cmath>
#include <vector>

#include "kernels/ops.h"

namespace tandem::kernels {
namespace {

inline float Silu(float x) { return x / (1.0f + std::exp(-x)); }

}  // namespace

void CausalConv1dSilu(const float* x, const float* weight, float* conv_state, float* out,
                      int64_t num_tokens, int64_t channels, int64_t kernel_size) {
  const int64_t history = kernel_size - 1;
#pragma omp parallel for if (num_tokens * channels >= 32768)
  for (int64_t c = 0; c < channels; ++c) {
    const float* w = weight + c * kernel_size;
    float* state = conv_state + c * history;
    // The last K − 1 inputs seen, oldest first: starts as the state, then slides over x.
    std::vector<float> window(state, state + history);
    for (int64_t t = 0; t < num_tokens; ++t) {
      const float current = x[t * channels + c];
      float acc = w[history] * current;
      for (int64_t i = 0; i < history; ++i) acc += w[i] * window[i];
      out[t * channels + c] = Silu(acc);
      for (int64_t i = 0; i + 1 < history; ++i) window[i] = window[i + 1];
      if (history > 0) window[history - 1] = current;
    }
    for (int64_t i = 0; i < history; ++i) state[i] = window[i];
  }
}

void CausalConv1dSiluNaive(const float* x, const float* weight, float* conv_state, float* out,
                           int64_t num_tokens, int64_t channels, int64_t kernel_size) {
  const int64_t history = kernel_size - 1;
  for (int64_t c = 0; c < channels; ++c) {
    // Input of channel c at time p, for p in [−(K − 1), T): the state, then x.
    auto input = [&](int64_t p) -> double {
      return p < 0 ? conv_state[c * history + (history + p)] : x[p * channels + c];
    };
    for (int64_t t = 0; t < num_tokens; ++t) {
      double acc = 0;
      for (int64_t i = 0; i < kernel_size; ++i) {
        acc += static_cast<double>(weight[c * kernel_size + i]) * input(t - kernel_size + 1 + i);
      }
      out[t * channels + c] = static_cast<float>(acc / (1.0 + std::exp(-acc)));
    }
    std::vector<float> last(history);
    for (int64_t i = 0; i < history; ++i)
      last[i] = static_cast<float>(input(num_tokens - history + i));
    for (int64_t i = 0; i < history; ++i) conv_state[c * history + i] = last[i];
  }
}

}  // namespace tandem::kernels
