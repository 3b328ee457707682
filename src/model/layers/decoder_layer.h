// DecoderLayer: one pre-norm transformer block over the residual stream h:
//   h += mixer(attn_norm(h));  h += ffn(ffn_norm(h))
// where mixer is a TokenMixer (Attention today) and ffn a dense SwiGLU Mlp, or a sparse Moe
// plus an optional sigmoid-gated SharedExpert.
// Reference: HF LlamaDecoderLayer, Qwen3DecoderLayer, Qwen3MoeDecoderLayer,
// Qwen2MoeDecoderLayer.
#pragma once

#include <cstdint>
#include <memory>

#include "model/forward_context.h"
#include "model/layers/attention.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/layers/rms_norm.h"
#include "model/layers/shared_expert.h"
#include "model/layers/tensor_parallel.h"

namespace tandem::model {

struct DecoderLayer {
  RmsNormLayer attn_norm;  // input_layernorm, [hidden]
  std::unique_ptr<TokenMixer> mixer;
  RmsNormLayer ffn_norm;  // post_attention_layernorm, [hidden]
  bool sparse = false;    // true: moe (+ shared_expert); false: mlp
  Mlp mlp;
  Moe moe;
  bool has_shared_expert = false;
  SharedExpert shared_expert;

  // hidden: [num_tokens, dim] residual stream, updated in place; normed, delta: scratch of the
  // same size; cache: this layer's cache (paged KV of this TP rank's KV heads). Under TP the
  // mixer's and the FFN's partial outputs are each summed by ONE all-reduce over `tp` (for a
  // sparse layer: after the experts and the shared expert). Not thread-safe.
  void Forward(const ForwardContext& ctx, const TpContext& tp, LayerCache& cache, float* hidden,
               float* normed, float* delta, int64_t dim);
  size_t weight_bytes() const;
};

}  // namespace tandem::model
