// Qwen2-MoE: read config → declare + load weights → forward.
// Reference: HF transformers modeling_qwen2_moe.py (Qwen2MoeForCausalLM, Qwen2MoeDecoderLayer,
// Qwen2MoeAttention, Qwen2MoeSparseMoeBlock). Attention: q/k/v projections with bias
// (config.qkv_bias, default true), o_proj without; no q/k norm; NeoX RoPE with rope_theta.
// FFN of layer l: sparse iff l ∉ mlp_only_layers and (l + 1) % decoder_sparse_step == 0, else a
// dense SwiGLU MLP of intermediate_size. Sparse block: softmax over all router logits → top-k →
// renormalise only when norm_topk_prob (HF default false) → Σ_k w_k · expert_k(x), PLUS the
// shared expert: sigmoid(shared_expert_gate(x)) · shared_expert(x) (SwiGLU of
// shared_expert_intermediate_size).
// Deviations: none in the math; all compute is f32; top-k ties go to the lower expert id.
#include <optional>

#include "model/arch/qwen.h"
#include "model/decoder_model.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {

Result<std::unique_ptr<Model>> LoadQwen2Moe(const QwenConfig& c, const WeightSource& src,
                                            const TpContext& tp) {
  // 1. Config.
  if (c.architecture != "Qwen2MoeForCausalLM" || c.num_experts <= 0) {
    return InvalidArgument("LoadQwen2Moe got a config for '" + c.architecture + "' with " +
                           std::to_string(c.num_experts) +
                           " experts; expected Qwen2MoeForCausalLM with num_experts > 0");
  }
  TANDEM_RETURN_IF_ERROR(c.Validate());
  const AttentionDims dims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim};
  const RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  HfAttentionOptions attn;
  attn.qkv_bias = c.qkv_bias;
  const bool shared = c.shared_expert_intermediate_size > 0;
  auto prefix = [](int32_t l) { return "model.layers." + std::to_string(l); };
  // 2. Weights: declare every one with its TP split, check them all, then load this rank's.
  ShardedReader r(src, tp);
  DeclareHfEmbeddingAndHead(r, c.vocab_size, c.hidden_size, c.tie_word_embeddings);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    DeclareHfLayerNorms(r, l, c.hidden_size);
    DeclareHfAttention(r, prefix(l) + ".self_attn", dims, attn);
    if (!c.IsSparseLayer(l)) {
      DeclareHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size);
      continue;
    }
    DeclareHfMoe(r, prefix(l) + ".mlp", c.num_experts, c.hidden_size, c.moe_intermediate_size);
    if (shared) {
      DeclareHfSharedExpert(r, prefix(l) + ".mlp", c.hidden_size,
                            c.shared_expert_intermediate_size);
    }
  }
  TANDEM_RETURN_IF_ERROR(r.CheckAll());
  DecoderWeights w;
  TANDEM_RETURN_IF_ERROR(LoadHfEmbeddingAndHead(r, c.vocab_size, c.hidden_size,
                                                c.tie_word_embeddings, c.rms_norm_eps, w));
  const AttentionDims local = LocalAttentionDims(dims, tp);
  w.layers.resize(c.num_layers);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    DecoderLayer& layer = w.layers[l];
    TANDEM_RETURN_IF_ERROR(LoadHfLayerNorms(r, l, c.rms_norm_eps, layer));
    TANDEM_ASSIGN_OR_RETURN(auto aw, LoadHfAttention(r, prefix(l) + ".self_attn", attn));
    layer.mixer = std::make_unique<Attention>(local, std::move(aw), rope);
    if (!c.IsSparseLayer(l)) {
      TANDEM_ASSIGN_OR_RETURN(Mlp mlp,
                              LoadHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size));
      layer.ffn = std::make_unique<Mlp>(std::move(mlp));
      continue;
    }
    TANDEM_ASSIGN_OR_RETURN(Moe moe,
                            LoadHfMoe(r, prefix(l) + ".mlp", c.num_experts, c.num_experts_per_tok,
                                      c.hidden_size, c.moe_intermediate_size, c.norm_topk_prob));
    std::optional<SharedExpert> shared_expert;
    if (shared) {
      TANDEM_ASSIGN_OR_RETURN(shared_expert,
                              LoadHfSharedExpert(r, prefix(l) + ".mlp", c.hidden_size,
                                                 c.shared_expert_intermediate_size));
    }
    layer.ffn = MoeFeedForward(std::move(moe), std::move(shared_expert));
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w), tp));
}

}  // namespace tandem::model
