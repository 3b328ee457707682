// Attention: one Llama self-attention layer over the paged KV cache:
// fused QKV projection → RoPE on q, k → write k, v at ctx.slot_mapping → paged attention
// (causal, GQA) → o_proj. Reference: HF LlamaAttention, vLLM Attention + PagedAttention.
#pragma once

#include <cstdint>
#include <vector>

#include "model/forward_context.h"
#include "model/layers/linear.h"
#include "model/layers/rope.h"

namespace tandem::model {

struct AttentionDims {
  int32_t hidden_size = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
};

class Attention {
 public:
  Attention() = default;
  // q: [num_heads * head_dim, hidden]; k, v: [num_kv_heads * head_dim, hidden];
  // o: [hidden, num_heads * head_dim]; q/k rows in HF (rotate_half) order.
  Attention(const AttentionDims& dims, const std::vector<float>& q, const std::vector<float>& k,
            const std::vector<float>& v, std::vector<float> o, RotaryEmbedding rope);

  // x: [num_tokens, hidden] (normed input); out: [num_tokens, hidden]; key_cache/value_cache:
  // this layer's [num_blocks, block_size, num_kv_heads, head_dim] f32.
  // Not thread-safe (scratch buffers).
  void Forward(const float* x, const ForwardContext& ctx, float* key_cache, float* value_cache,
               float* out);
  size_t weight_bytes() const { return qkv_.weight_bytes() + o_.weight_bytes(); }

 private:
  AttentionDims dims_;
  Linear qkv_;  // [(num_heads + 2 * num_kv_heads) * head_dim, hidden]
  Linear o_;
  RotaryEmbedding rope_;
  std::vector<float> qkv_out_, q_, k_, v_, attn_out_;
};

}  // namespace tandem::model
