// Qwen3-MoE: read config → declare + load weights → forward.
// Reference: HF transformers modeling_qwen3_moe.py (Qwen3MoeForCausalLM, Qwen3MoeDecoderLayer,
// Qwen3MoeSparseMoeBlock, Qwen3MoeAttention). Attention exactly as Qwen3 (per-head q_norm/k_norm
// before NeoX RoPE, no bias). FFN of layer l: sparse iff l ∉ mlp_only_layers and
// (l + 1) % decoder_sparse_step == 0, else a dense SwiGLU MLP of intermediate_size. Sparse block:
// router logits = gate(x) [num_experts]; softmax over ALL experts (f32); top-k
// (num_experts_per_tok); when norm_topk_prob the k weights are renormalised to sum 1;
// out = Σ_k w_k · expert_k(x), expert = SwiGLU of moe_intermediate_size. No shared expert.
// Deviations: none in the math; all compute is f32; top-k ties go to the lower expert id.
#include "model/arch/qwen.h"
#include "model/decoder_model.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {

Result<std::unique_ptr<Model>> LoadQwen3Moe(const QwenConfig& c, const WeightSource& src,
                                            const TpContext& tp) {
  // 1. Config.
  if (c.architecture != "Qwen3MoeForCausalLM" || c.num_experts <= 0) {
    return InvalidArgument("LoadQwen3Moe got a config for '" + c.architecture + "' with " +
                           std::to_string(c.num_experts) +
                           " experts; expected Qwen3MoeForCausalLM with num_experts > 0");
  }
  TANDEM_RETURN_IF_ERROR(c.Validate());
  const AttentionDims dims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim};
  const RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  HfAttentionOptions attn;
  attn.qkv_bias = c.qkv_bias;
  attn.o_bias = c.o_bias;
  attn.qk_norm = true;
  attn.eps = c.rms_norm_eps;
  auto prefix = [](int32_t l) { return "model.layers." + std::to_string(l); };
  // 2. Weights: declare every one with its TP split, check them all, then load this rank's.
  ShardedReader r(src, tp);
  DeclareHfEmbeddingAndHead(r, c.vocab_size, c.hidden_size, c.tie_word_embeddings);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    DeclareHfLayerNorms(r, l, c.hidden_size);
    DeclareHfAttention(r, prefix(l) + ".self_attn", dims, attn);
    if (c.IsSparseLayer(l)) {
      DeclareHfMoe(r, prefix(l) + ".mlp", c.num_experts, c.hidden_size, c.moe_intermediate_size);
    } else {
      DeclareHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size);
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
    if (c.IsSparseLayer(l)) {
      TANDEM_ASSIGN_OR_RETURN(Moe moe,
                              LoadHfMoe(r, prefix(l) + ".mlp", c.num_experts, c.num_experts_per_tok,
                                        c.hidden_size, c.moe_intermediate_size, c.norm_topk_prob));
      layer.ffn = std::make_unique<Moe>(std::move(moe));
    } else {
      TANDEM_ASSIGN_OR_RETURN(Mlp mlp,
                              LoadHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size));
      layer.ffn = std::make_unique<Mlp>(std::move(mlp));
    }
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w), tp));
}

}  // namespace tandem::model
