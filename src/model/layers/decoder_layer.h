// DecoderLayer: one pre-norm transformer block over the residual stream h:
//   h += mixer(attn_norm(h));  h += ffn(ffn_norm(h))
// where mixer is a TokenMixer (Attention, GatedAttention, GatedDeltaNet) and ffn a FeedForward
// (a dense SwiGLU Mlp, a sparse Moe, or a Moe plus a sigmoid-gated SharedExpert).
// Reference: HF LlamaDecoderLayer, Qwen3DecoderLayer, Qwen3MoeDecoderLayer,
// Qwen2MoeDecoderLayer.
#pragma once

#include <cstdint>
#include <memory>

#include "kernels/backend.h"
#include "model/forward_context.h"
#include "model/layers/feed_forward.h"
#include "model/layers/rms_norm.h"
#include "model/layers/tensor_parallel.h"
#include "model/layers/token_mixer.h"

namespace tandem::model {

struct DecoderLayer {
  RmsNormLayer attn_norm;  // input_layernorm, [hidden]
  std::unique_ptr<TokenMixer> mixer;
  RmsNormLayer ffn_norm;  // post_attention_layernorm, [hidden]
  std::unique_ptr<FeedForward> ffn;

  // hidden: [num_tokens, dim] f32 residual stream, updated in place; normed, delta: scratch
  // views of the same shape, all on `stream`'s device; cache: this layer's cache (paged KV of
  // this TP rank's KV heads, or its state slots); scratch: the activation arena the mixer and the
  // feed-forward take their scratch from (scratch_bytes). Under TP the mixer's and the FFN's
  // partial outputs are each summed by ONE all-reduce over `tp` (for a sparse layer: after the
  // experts and the shared expert). Not thread-safe.
  void Forward(const ForwardContext& ctx, const TpContext& tp, LayerCache& cache,
               kernels::Stream& stream, const tensor::TensorView& hidden,
               const tensor::TensorView& normed, const tensor::TensorView& delta,
               tensor::DeviceArena& scratch);
  // A step with no rows on this rank: an expert-parallel feed-forward still enters its EP
  // group's collectives (every rank calls it as often); any other layer does nothing. Resets
  // `scratch` (nothing may be held in it) and reserves what the empty step needs.
  void DummyForward(kernels::Stream& stream, int64_t hidden_size, tensor::DeviceArena& scratch);
  // The most scratch Forward takes for `num_tokens` rows: the larger of the mixer's and the
  // feed-forward's (they run one after the other).
  size_t scratch_bytes(int64_t num_tokens, const tensor::DeviceArena& arena) const;
  size_t weight_bytes() const;
};

}  // namespace tandem::model
