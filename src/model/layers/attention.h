// Attention: one self-attention layer over the paged KV cache:
// fused QKV projection (+ optional q/k/v bias, Qwen2) → optional per-head RMSNorm of q and k
// (q_norm/k_norm, Qwen3) → RoPE on q, k (optionally partial) → write k, v at ctx.slot_mapping →
// paged attention (causal, GQA) → optional sigmoid output gate (Qwen3.5 gated attention: q_proj
// rows per head are [q_h | gate_h], the output is attn ⊙ σ(gate)) → o_proj.
// Reference: HF LlamaAttention, Qwen2MoeAttention, Qwen3Attention, Qwen3_5MoeAttention;
// vLLM Attention + PagedAttention.
#pragma once

#include <cstdint>
#include <vector>

#include "model/forward_context.h"
#include "model/layers/linear.h"
#include "model/layers/rms_norm.h"
#include "model/layers/rope.h"
#include "model/layers/tensor_parallel.h"
#include "model/layers/token_mixer.h"
#include "tensor/tensor.h"

namespace tandem::model {

struct AttentionDims {
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
};

// `dims` of the full model → the dims of TP rank tp.rank's shard (its query and KV heads).
inline AttentionDims LocalAttentionDims(const AttentionDims& dims, const TpContext& tp) {
  const LocalHeads h = LocalHeadsOf(dims.num_heads, dims.num_kv_heads, tp);
  return AttentionDims{dims.hidden_size, h.num_heads, h.num_kv_heads, dims.head_dim};
}

// Weights of one attention layer, row-major f32, q/k rows in HF (rotate_half) order.
struct AttentionWeights {
  // Projections in their stored dtype (F32/F16/BF16, all four the same).
  tensor::Tensor q;           // [num_heads * head_dim, hidden]; with output_gate
                              //   [num_heads * 2 * head_dim, hidden], per head [q_h | gate_h]
  tensor::Tensor k;           // [num_kv_heads * head_dim, hidden]
  tensor::Tensor v;           // [num_kv_heads * head_dim, hidden]
  tensor::Tensor o;           // [hidden, num_heads * head_dim]
  std::vector<float> q_bias;  // [num_heads * head_dim] or empty (no bias); k_bias/v_bias alike
  std::vector<float> k_bias;  // [num_kv_heads * head_dim] or empty
  std::vector<float> v_bias;  // [num_kv_heads * head_dim] or empty
  std::vector<float> o_bias;  // [hidden] or empty
  std::vector<float> q_norm;  // [head_dim] RMSNorm scale over each q head, or empty (no norm)
  std::vector<float> k_norm;  // [head_dim] RMSNorm scale over each k head, or empty
  float qk_norm_eps = 1e-6f;
  bool output_gate = false;  // q carries a gate per head: out = attn ⊙ sigmoid(gate)
};

class Attention : public TokenMixer {
 public:
  Attention() = default;
  // q: [num_heads * head_dim, hidden]; k, v: [num_kv_heads * head_dim, hidden];
  // o: [hidden, num_heads * head_dim]; q/k rows in HF (rotate_half) order.
  // Any one dtype of F32/F16/BF16 (kept; q|k|v fused into one matmul).
  Attention(const AttentionDims& dims, const tensor::Tensor& q, const tensor::Tensor& k,
            const tensor::Tensor& v, tensor::Tensor o, RotaryEmbedding rope);
  // Biases and q/k norms are used when present (non-empty). Sizes are checked (TANDEM_CHECK):
  // the loader has already validated every shape against the config.
  Attention(const AttentionDims& dims, AttentionWeights weights, RotaryEmbedding rope);

  // x: [num_tokens, hidden] (normed input); out: [num_tokens, hidden]; cache: this layer's
  // paged key_cache / value_cache. Scratch from `scratch` (scratch_bytes).
  void Forward(kernels::Stream& stream, const tensor::TensorView& x, const ForwardContext& ctx,
               LayerCache& cache, const tensor::TensorView& out,
               tensor::DeviceArena& scratch) override;
  size_t scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const override;
  size_t weight_bytes() const override {
    return qkv_.weight_bytes() + o_.weight_bytes() +
           (q_norm_.weight.size() + k_norm_.weight.size()) * sizeof(float);
  }

 private:
  AttentionDims dims_;
  Linear qkv_;  // [(num_heads + 2 * num_kv_heads) * head_dim, hidden]
  Linear o_;
  RotaryEmbedding rope_;
  RmsNormLayer q_norm_, k_norm_;  // over head_dim; empty weight = not applied
  bool output_gate_ = false;
};

}  // namespace tandem::model
