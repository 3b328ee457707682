#include "model/layers/attention.h"

#include <cmath>
#include <cstring>

#include "kernels/ops.h"

namespace tandem::model {

Attention::Attention(const AttentionDims& dims, const std::vector<float>& q,
                     const std::vector<float>& k, const std::vector<float>& v,
                     std::vector<float> o, RotaryEmbedding rope)
    : dims_(dims), rope_(rope) {
  std::vector<float> fused;
  fused.reserve(q.size() + k.size() + v.size());
  fused.insert(fused.end(), q.begin(), q.end());
  fused.insert(fused.end(), k.begin(), k.end());
  fused.insert(fused.end(), v.begin(), v.end());
  const int64_t q_size = static_cast<int64_t>(dims.num_heads) * dims.head_dim;
  const int64_t kv_size = static_cast<int64_t>(dims.num_kv_heads) * dims.head_dim;
  qkv_ = Linear(std::move(fused), q_size + 2 * kv_size, dims.hidden_size);
  o_ = Linear(std::move(o), dims.hidden_size, q_size);
}

void Attention::Forward(const float* x, const ForwardContext& ctx, float* key_cache,
                        float* value_cache, float* out) {
  const int64_t num_tokens = ctx.num_tokens();
  const int64_t q_size = static_cast<int64_t>(dims_.num_heads) * dims_.head_dim;
  const int64_t kv_size = static_cast<int64_t>(dims_.num_kv_heads) * dims_.head_dim;
  const int64_t row = q_size + 2 * kv_size;
  qkv_out_.resize(num_tokens * row);
  q_.resize(num_tokens * q_size);
  k_.resize(num_tokens * kv_size);
  v_.resize(num_tokens * kv_size);
  attn_out_.assign(num_tokens * q_size, 0.0f);
  qkv_.Forward(x, qkv_out_.data(), num_tokens);
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* r = &qkv_out_[t * row];
    std::memcpy(&q_[t * q_size], r, q_size * sizeof(float));
    std::memcpy(&k_[t * kv_size], r + q_size, kv_size * sizeof(float));
    std::memcpy(&v_[t * kv_size], r + q_size + kv_size, kv_size * sizeof(float));
  }
  rope_.Apply(q_.data(), ctx.positions.data(), num_tokens, dims_.num_heads);
  rope_.Apply(k_.data(), ctx.positions.data(), num_tokens, dims_.num_kv_heads);
  kernels::WriteKvCache(k_.data(), v_.data(), ctx.slot_mapping.data(), num_tokens, kv_size,
                        key_cache, value_cache);
  kernels::PagedAttentionParams p;
  p.num_heads = dims_.num_heads;
  p.num_kv_heads = dims_.num_kv_heads;
  p.head_dim = dims_.head_dim;
  p.block_size = ctx.block_size;
  p.scale = 1.0f / std::sqrt(static_cast<float>(dims_.head_dim));
  kernels::PagedAttention(q_.data(), key_cache, value_cache, ctx.query_start_loc.data(),
                          ctx.seq_lens.data(), ctx.num_seqs(), ctx.block_tables, p,
                          attn_out_.data());
  o_.Forward(attn_out_.data(), out, num_tokens);
}

}  // namespace tandem::model
