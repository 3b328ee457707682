#include "model/layers/attention.h"

#include <cmath>
#include <cstring>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/ops.h"

namespace tandem::model {

namespace {

std::vector<float> Concat3(const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& c) {
  std::vector<float> fused;
  fused.reserve(a.size() + b.size() + c.size());
  fused.insert(fused.end(), a.begin(), a.end());
  fused.insert(fused.end(), b.begin(), b.end());
  fused.insert(fused.end(), c.begin(), c.end());
  return fused;
}

}  // namespace

Attention::Attention(const AttentionDims& dims, const tensor::Tensor& q, const tensor::Tensor& k,
                     const tensor::Tensor& v, tensor::Tensor o, RotaryEmbedding rope)
    : dims_(dims), rope_(rope) {
  const int64_t q_size = static_cast<int64_t>(dims.num_heads) * dims.head_dim;
  const int64_t kv_size = static_cast<int64_t>(dims.num_kv_heads) * dims.head_dim;
  // q may carry a gate per head (twice the rows); the other constructor says which.
  qkv_ = Linear(tensor::ConcatRows({&q, &k, &v}));
  o_ = Linear(std::move(o));
  TANDEM_CHECK(qkv_.in_features() == dims.hidden_size &&
               qkv_.out_features() >= q_size + 2 * kv_size && o_.in_features() == q_size &&
               o_.out_features() == dims.hidden_size)
      << "attention weights qkv [" << qkv_.out_features() << ", " << qkv_.in_features() << "], o ["
      << o_.out_features() << ", " << o_.in_features() << "] do not fit hidden " << dims.hidden_size
      << ", " << q_size << " query and " << kv_size << " KV features";
}

Attention::Attention(const AttentionDims& dims, AttentionWeights w, RotaryEmbedding rope)
    : Attention(dims, w.q, w.k, w.v, std::move(w.o), rope) {
  output_gate_ = w.output_gate;
  const int64_t q_rows =
      static_cast<int64_t>(dims.num_heads) * dims.head_dim * (output_gate_ ? 2 : 1);
  TANDEM_CHECK(qkv_.out_features() == q_rows + 2 * int64_t{dims.num_kv_heads} * dims.head_dim)
      << "attention q has " << w.q.dim(0) << " rows; expected " << q_rows;
  const bool any_bias = !w.q_bias.empty() || !w.k_bias.empty() || !w.v_bias.empty();
  if (any_bias) {
    const size_t q_size = static_cast<size_t>(dims.num_heads) * dims.head_dim;
    const size_t kv_size = static_cast<size_t>(dims.num_kv_heads) * dims.head_dim;
    // A missing part of the bias is zero (HF: each of q/k/v may have its own bias flag).
    if (w.q_bias.empty()) w.q_bias.assign(q_size, 0.0f);
    if (w.k_bias.empty()) w.k_bias.assign(kv_size, 0.0f);
    if (w.v_bias.empty()) w.v_bias.assign(kv_size, 0.0f);
    qkv_.set_bias(Concat3(w.q_bias, w.k_bias, w.v_bias));
  }
  if (!w.o_bias.empty()) o_.set_bias(std::move(w.o_bias));
  for (const auto* norm : {&w.q_norm, &w.k_norm}) {
    TANDEM_CHECK(norm->empty() || static_cast<int32_t>(norm->size()) == dims.head_dim)
        << "q/k norm weight has " << norm->size() << " values; expected head_dim " << dims.head_dim;
  }
  q_norm_ = RmsNormLayer{std::move(w.q_norm), w.qk_norm_eps};
  k_norm_ = RmsNormLayer{std::move(w.k_norm), w.qk_norm_eps};
}

void Attention::Forward(const float* x, const ForwardContext& ctx, LayerCache& cache, float* out) {
  void* key_cache = cache.key_cache;
  void* value_cache = cache.value_cache;
  const int64_t num_tokens = ctx.num_tokens();
  const int64_t q_size = static_cast<int64_t>(dims_.num_heads) * dims_.head_dim;
  const int64_t kv_size = static_cast<int64_t>(dims_.num_kv_heads) * dims_.head_dim;
  const int64_t q_rows = output_gate_ ? 2 * q_size : q_size;
  const int64_t row = q_rows + 2 * kv_size;
  thread_local std::vector<float> qkv_out_, q_, k_, v_, gate_, attn_out_;  // scratch
  qkv_out_.resize(num_tokens * row);
  q_.resize(num_tokens * q_size);
  k_.resize(num_tokens * kv_size);
  v_.resize(num_tokens * kv_size);
  attn_out_.assign(num_tokens * q_size, 0.0f);
  qkv_.Forward(x, qkv_out_.data(), num_tokens);
  if (output_gate_) gate_.resize(num_tokens * q_size);
  const int64_t d = dims_.head_dim;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* r = &qkv_out_[t * row];
    if (output_gate_) {  // per head [q_h | gate_h]
      for (int64_t h = 0; h < dims_.num_heads; ++h) {
        std::memcpy(&q_[t * q_size + h * d], r + 2 * h * d, d * sizeof(float));
        std::memcpy(&gate_[t * q_size + h * d], r + 2 * h * d + d, d * sizeof(float));
      }
    } else {
      std::memcpy(&q_[t * q_size], r, q_size * sizeof(float));
    }
    std::memcpy(&k_[t * kv_size], r + q_rows, kv_size * sizeof(float));
    std::memcpy(&v_[t * kv_size], r + q_rows + kv_size, kv_size * sizeof(float));
  }
  // Qwen3: RMSNorm over head_dim of every head, before RoPE (rows = tokens × heads).
  if (!q_norm_.weight.empty()) q_norm_.Forward(q_.data(), q_.data(), num_tokens * dims_.num_heads);
  if (!k_norm_.weight.empty()) {
    k_norm_.Forward(k_.data(), k_.data(), num_tokens * dims_.num_kv_heads);
  }
  {
    const core::ScopedPhase phase(core::StepPhase::kNormAct);
    rope_.Apply(q_.data(), ctx.positions.data(), num_tokens, dims_.num_heads);
    rope_.Apply(k_.data(), ctx.positions.data(), num_tokens, dims_.num_kv_heads);
  }
  {
    const core::ScopedPhase phase(core::StepPhase::kAttention);
    kernels::WriteKvCache(k_.data(), v_.data(), ctx.slot_mapping.data(), num_tokens, kv_size,
                          key_cache, value_cache, cache.kv_dtype);
    kernels::PagedAttentionParams p;
    p.num_heads = dims_.num_heads;
    p.num_kv_heads = dims_.num_kv_heads;
    p.head_dim = dims_.head_dim;
    p.block_size = ctx.block_size;
    p.scale = 1.0f / std::sqrt(static_cast<float>(dims_.head_dim));
    p.kv_dtype = cache.kv_dtype;
    kernels::PagedAttention(q_.data(), key_cache, value_cache, ctx.query_start_loc.data(),
                            ctx.seq_lens.data(), ctx.num_seqs(), ctx.block_tables, p,
                            attn_out_.data());
  }
  if (output_gate_) {
    for (size_t i = 0; i < attn_out_.size(); ++i) {
      attn_out_[i] *= 1.0f / (1.0f + std::exp(-gate_[i]));
    }
  }
  o_.Forward(attn_out_.data(), out, num_tokens);
}

}  // namespace tandem::model
