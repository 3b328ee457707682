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
#include "model/arch/qwen.h"
#include "model/decoder_model.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {

Result<std::unique_ptr<Model>> LoadQwen2Moe(const QwenConfig& c, const WeightSource& src) {
  // 1. Config.
  if (c.architecture != "Qwen2MoeForCausalLM" || c.num_experts <= 0) {
    return InvalidArgument("LoadQwen2Moe got a config for '" + c.architecture + "' with " +
                           std::to_string(c.num_experts) +
                           " experts; expected Qwen2MoeForCausalLM with num_experts > 0");
  }
  TANDEM_RETURN_IF_ERROR(c.Validate());
  // 2. Weights.
  DecoderWeights w;
  TANDEM_RETURN_IF_ERROR(LoadHfEmbeddingAndHead(src, c.vocab_size, c.hidden_size,
                                                c.tie_word_embeddings, c.rms_norm_eps, w));
  const AttentionDims dims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim};
  const RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  HfAttentionOptions attn;
  attn.qkv_bias = c.qkv_bias;
  w.layers.resize(c.num_layers);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    DecoderLayer& layer = w.layers[l];
    const std::string prefix = "model.layers." + std::to_string(l);
    TANDEM_RETURN_IF_ERROR(LoadHfLayerNorms(src, l, c.hidden_size, c.rms_norm_eps, layer));
    TANDEM_ASSIGN_OR_RETURN(auto aw, LoadHfAttention(src, prefix + ".self_attn", dims, attn));
    layer.attention = Attention(dims, std::move(aw), rope);
    layer.sparse = c.IsSparseLayer(l);
    if (!layer.sparse) {
      TANDEM_ASSIGN_OR_RETURN(layer.mlp,
                              LoadHfMlp(src, prefix + ".mlp", c.hidden_size, c.intermediate_size));
      continue;
    }
    TANDEM_ASSIGN_OR_RETURN(layer.moe,
                            LoadHfMoe(src, prefix + ".mlp", c.num_experts, c.num_experts_per_tok,
                                      c.hidden_size, c.moe_intermediate_size, c.norm_topk_prob));
    layer.has_shared_expert = c.shared_expert_intermediate_size > 0;
    if (layer.has_shared_expert) {
      TANDEM_ASSIGN_OR_RETURN(layer.shared_expert,
                              LoadHfSharedExpert(src, prefix + ".mlp", c.hidden_size,
                                                 c.shared_expert_intermediate_size));
    }
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w)));
}

}  // namespace tandem::model
