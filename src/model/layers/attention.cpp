#include "model/layers/attention.h"

#include <cmath>
#include <cstring>

#include "core/check.h"
#include "core/step_profile.h"
#include "kernels/device_ops.h"
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

size_t Attention::scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const {
  const int64_t q_size = static_cast<int64_t>(dims_.num_heads) * dims_.head_dim;
  const int64_t kv_size = static_cast<int64_t>(dims_.num_kv_heads) * dims_.head_dim;
  const tensor::DType f32 = tensor::DType::kF32;
  // qkv rows, q, k, v, the attention output; with the output gate the q | gate rows and the gate.
  const size_t gated = output_gate_ ? arena.BytesFor({num_tokens, 2 * q_size}, f32) +
                                          arena.BytesFor({num_tokens, q_size}, f32)
                                    : 0;
  return arena.BytesFor({num_tokens, qkv_.out_features()}, f32) +
         2 * arena.BytesFor({num_tokens, q_size}, f32) +
         2 * arena.BytesFor({num_tokens, kv_size}, f32) + gated;
}

void Attention::Forward(kernels::Stream& stream, const tensor::TensorView& x,
                        const ForwardContext& ctx, LayerCache& cache, const tensor::TensorView& out,
                        tensor::DeviceArena& scratch) {
  const int64_t num_tokens = ctx.num_tokens();
  const int64_t d = dims_.head_dim;
  const int64_t q_size = static_cast<int64_t>(dims_.num_heads) * d;
  const int64_t kv_size = static_cast<int64_t>(dims_.num_kv_heads) * d;
  const int64_t q_rows = output_gate_ ? 2 * q_size : q_size;
  const tensor::DType f32 = tensor::DType::kF32;
  const tensor::ArenaScope scope(scratch);
  const tensor::TensorView qkv = scratch.AllocateOrDie({num_tokens, qkv_.out_features()}, f32);
  const tensor::TensorView q = scratch.AllocateOrDie({num_tokens, q_size}, f32);
  const tensor::TensorView k = scratch.AllocateOrDie({num_tokens, kv_size}, f32);
  const tensor::TensorView v = scratch.AllocateOrDie({num_tokens, kv_size}, f32);
  const tensor::TensorView attn = scratch.AllocateOrDie({num_tokens, q_size}, f32);
  qkv_.Forward(stream, x, qkv);
  tensor::TensorView gate;
  if (output_gate_) {  // per head [q_h | gate_h]: the q part as [tokens · heads, 2 · head_dim]
    const tensor::TensorView q_and_gate = scratch.AllocateOrDie({num_tokens, q_rows}, f32);
    kernels::CopyColumns(stream, qkv, 0, q_and_gate);
    const tensor::TensorView per_head = q_and_gate.Reshaped({num_tokens * dims_.num_heads, 2 * d});
    gate = scratch.AllocateOrDie({num_tokens, q_size}, f32);
    kernels::CopyColumns(stream, per_head, 0, q.Reshaped({num_tokens * dims_.num_heads, d}));
    kernels::CopyColumns(stream, per_head, d, gate.Reshaped({num_tokens * dims_.num_heads, d}));
  } else {
    kernels::CopyColumns(stream, qkv, 0, q);
  }
  kernels::CopyColumns(stream, qkv, q_rows, k);
  kernels::CopyColumns(stream, qkv, q_rows + kv_size, v);
  // Qwen3: RMSNorm over head_dim of every head, before RoPE (rows = tokens × heads).
  if (!q_norm_.weight.empty()) {
    const tensor::TensorView heads = q.Reshaped({num_tokens * dims_.num_heads, d});
    q_norm_.Forward(stream, heads, heads);
  }
  if (!k_norm_.weight.empty()) {
    const tensor::TensorView heads = k.Reshaped({num_tokens * dims_.num_kv_heads, d});
    k_norm_.Forward(stream, heads, heads);
  }
  // RoPE and the paged cache's kernels are host code so far; the caches become views with the
  // cache arena (docs/design/device-seam.md §8 step 7).
  kernels::CheckCpuOp("Attention (RoPE, paged KV cache)", stream, {&q, &k, &v, &attn});
  {
    const core::ScopedPhase phase(core::StepPhase::kNormAct);
    rope_.Apply(q.f32(), ctx.positions.data(), num_tokens, dims_.num_heads);
    rope_.Apply(k.f32(), ctx.positions.data(), num_tokens, dims_.num_kv_heads);
  }
  kernels::Fill(stream, attn, 0.0f);
  {
    const core::ScopedPhase phase(core::StepPhase::kAttention);
    kernels::WriteKvCache(k.f32(), v.f32(), ctx.slot_mapping.data(), num_tokens, kv_size,
                          cache.key_cache, cache.value_cache, cache.kv_dtype);
    kernels::PagedAttentionParams p;
    p.num_heads = dims_.num_heads;
    p.num_kv_heads = dims_.num_kv_heads;
    p.head_dim = dims_.head_dim;
    p.block_size = ctx.block_size;
    p.scale = 1.0f / std::sqrt(static_cast<float>(dims_.head_dim));
    p.kv_dtype = cache.kv_dtype;
    kernels::PagedAttention(q.f32(), cache.key_cache, cache.value_cache, ctx.query_start_loc.data(),
                            ctx.seq_lens.data(), ctx.num_seqs(), ctx.block_tables, p, attn.f32());
  }
  if (output_gate_) {
    kernels::MulSigmoid(stream, attn, gate);
  }
  o_.Forward(stream, attn, out);
}

}  // namespace tandem::model
