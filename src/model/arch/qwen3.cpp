// Qwen3 (dense): read config → declare + load weights → forward.
// Reference: HF transformers modeling_qwen3.py (Qwen3ForCausalLM, Qwen3DecoderLayer,
// Qwen3Attention, Qwen3MLP). Per layer: h += o(attn(rope(k_norm(k)), rope(q_norm(q)), v)) on
// input_layernorm(h); h += down(silu(gate(x)) * up(x)) on post_attention_layernorm(h).
// q_norm/k_norm: RMSNorm over head_dim applied to every head before RoPE; NeoX (rotate_half)
// RoPE over the full head_dim with rope_theta; head_dim from config (may be ≠ hidden/heads);
// no bias unless attention_bias; lm_head tied to the embeddings when tie_word_embeddings.
// Deviations: none in the math; all compute is f32 (bf16 weights are upcast exactly).
#include "model/arch/qwen.h"
#include "model/decoder_model.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {

Result<std::unique_ptr<Model>> LoadQwen3(const QwenConfig& c, const WeightSource& src,
                                         const TpContext& tp) {
  // 1. Config.
  if (c.architecture != "Qwen3ForCausalLM" || c.num_experts > 0) {
    return InvalidArgument("LoadQwen3 got a config for '" + c.architecture + "' with " +
                           std::to_string(c.num_experts) +
                           " experts; expected Qwen3ForCausalLM (dense)");
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
    DeclareHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size);
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
    TANDEM_ASSIGN_OR_RETURN(Mlp mlp,
                            LoadHfMlp(r, prefix(l) + ".mlp", c.hidden_size, c.intermediate_size));
    layer.ffn = std::make_unique<Mlp>(std::move(mlp));
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w), tp));
}

}  // namespace tandem::model
