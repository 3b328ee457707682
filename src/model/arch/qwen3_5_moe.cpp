// Qwen3.5-MoE (the seed's Qwen3.5-397B-A17B family): read config → declare + load weights →
// forward on the shared decoder, each layer a token mixer chosen by layer_types plus MoE.
// Reference: HF transformers modeling_qwen3_5_moe.py (Qwen3_5MoeForConditionalGeneration's text
// model, Qwen3_5MoeDecoderLayer, Qwen3_5MoeAttention, Qwen3_5MoeGatedDeltaNet,
// Qwen3_5MoeSparseMoeBlock); QWEN35.md §1–§4, §6.1.
//   linear layers: GatedDeltaNet (model/layers/gated_delta_net.h), state per sequence
//   full layers: attention with a per-head output gate, zero-centred q/k norms, partial NeoX
//     rotary (head_dim · partial_rotary_factor dims; text positions make M-RoPE plain 1-D)
//   every layer: softmax router → top-k renormalised → SwiGLU experts (fused gate_up_proj
//     [E, 2I, H], gate rows first; down_proj [E, H, I]) + σ(shared_expert_gate · x) ·
//     shared_expert(x)
// Zero-centred RMSNorms ((1 + w), HF init 0) are loaded as 1 + w so the standard RMSNorm
// computes them; the GDN output norm is a plain weight. The vision tower and the MTP layer are
// not loaded (one info line). Not yet: TP > 1, expert parallel (refused by name).
#include "core/logging.h"
#include "model/arch/qwen35.h"
#include "model/decoder_model.h"
#include "model/layers/gated_delta_net.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {
namespace {

void AddOne(std::vector<float>& w) {
  for (float& v : w) v += 1.0f;
}

struct Names {
  std::string p;  // "model.language_model." (multimodal checkpoint) or "model." (text-only)
  std::string Layer(int32_t l) const { return p + "layers." + std::to_string(l) + "."; }
};

void DeclareAttention(ShardedReader& r, const Qwen35Config& c, const std::string& a) {
  const int64_t h = c.hidden_size, d = c.head_dim;
  r.Declare(a + "q_proj.weight", {2 * c.num_heads * d, h}, Replicated());
  r.Declare(a + "k_proj.weight", {c.num_kv_heads * d, h}, Replicated());
  r.Declare(a + "v_proj.weight", {c.num_kv_heads * d, h}, Replicated());
  r.Declare(a + "o_proj.weight", {h, c.num_heads * d}, Replicated());
  r.Declare(a + "q_norm.weight", {d}, Replicated());
  r.Declare(a + "k_norm.weight", {d}, Replicated());
}

GatedDeltaNetDims GdnDims(const Qwen35Config& c) {
  GatedDeltaNetDims d;
  d.hidden_size = c.hidden_size;
  d.num_k_heads = c.linear_num_key_heads;
  d.num_v_heads = c.linear_num_value_heads;
  d.key_dim = c.linear_key_head_dim;
  d.value_dim = c.linear_value_head_dim;
  d.conv_kernel = c.linear_conv_kernel_dim;
  d.eps = c.rms_norm_eps;
  return d;
}

void DeclareGdn(ShardedReader& r, const Qwen35Config& c, const std::string& g) {
  const GatedDeltaNetDims d = GdnDims(c);
  const int64_t h = c.hidden_size, hv = d.num_v_heads, value = hv * d.value_dim;
  r.Declare(g + "in_proj_qkv.weight", {d.conv_channels(), h}, Replicated());
  r.Declare(g + "in_proj_z.weight", {value, h}, Replicated());
  r.Declare(g + "in_proj_b.weight", {hv, h}, Replicated());
  r.Declare(g + "in_proj_a.weight", {hv, h}, Replicated());
  r.Declare(g + "conv1d.weight", {d.conv_channels(), 1, d.conv_kernel}, Replicated());
  r.Declare(g + "dt_bias", {hv}, Replicated());
  r.Declare(g + "A_log", {hv}, Replicated());
  r.Declare(g + "norm.weight", {d.value_dim}, Replicated());
  r.Declare(g + "out_proj.weight", {h, value}, Replicated());
}

// The fused experts' names: HF has no ".weight" suffix; some re-exports add one.
std::string ExpertTensor(const WeightSource& src, const std::string& name) {
  return src.HasTensor(name) ? name : name + ".weight";
}

Result<std::unique_ptr<TokenMixer>> LoadAttention(const ShardedReader& r, const Qwen35Config& c,
                                                  const std::string& a) {
  AttentionWeights w;
  TANDEM_ASSIGN_OR_RETURN(w.q, r.Read(a + "q_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.k, r.Read(a + "k_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.v, r.Read(a + "v_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.o, r.Read(a + "o_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.q_norm, r.Read(a + "q_norm.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.k_norm, r.Read(a + "k_norm.weight"));
  AddOne(w.q_norm);
  AddOne(w.k_norm);
  w.qk_norm_eps = c.rms_norm_eps;
  w.output_gate = true;
  RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  rope.rotary_dim = c.rotary_dim();
  const AttentionDims dims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim};
  return std::unique_ptr<TokenMixer>(std::make_unique<Attention>(dims, std::move(w), rope));
}

Result<std::unique_ptr<TokenMixer>> LoadGdn(const ShardedReader& r, const Qwen35Config& c,
                                            const std::string& g) {
  GatedDeltaNetWeights w;
  TANDEM_ASSIGN_OR_RETURN(w.in_proj_qkv, r.Read(g + "in_proj_qkv.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.in_proj_z, r.Read(g + "in_proj_z.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.in_proj_b, r.Read(g + "in_proj_b.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.in_proj_a, r.Read(g + "in_proj_a.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.conv1d, r.Read(g + "conv1d.weight"));  // [C, 1, K] = [C, K]
  TANDEM_ASSIGN_OR_RETURN(w.dt_bias, r.Read(g + "dt_bias"));
  TANDEM_ASSIGN_OR_RETURN(w.a_log, r.Read(g + "A_log"));
  TANDEM_ASSIGN_OR_RETURN(w.norm, r.Read(g + "norm.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.out_proj, r.Read(g + "out_proj.weight"));
  return std::unique_ptr<TokenMixer>(std::make_unique<GatedDeltaNet>(GdnDims(c), std::move(w)));
}

// Router, fused experts split into the stacked gate/up/down Moe takes, renormalised top-k.
Result<Moe> LoadMoe(const ShardedReader& r, const Qwen35Config& c, const std::string& m,
                    const std::string& gate_up_name, const std::string& down_name) {
  const int64_t e = c.num_experts, h = c.hidden_size, ff = c.moe_intermediate_size;
  TANDEM_ASSIGN_OR_RETURN(auto router, r.Read(m + "gate.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto gate_up, r.Read(gate_up_name));  // [E, 2·ff, H]
  TANDEM_ASSIGN_OR_RETURN(auto down, r.Read(down_name));        // [E, H, ff]
  std::vector<float> gate, up;
  gate.reserve(e * ff * h);
  up.reserve(e * ff * h);
  for (int64_t x = 0; x < e; ++x) {
    const float* base = gate_up.data() + x * 2 * ff * h;
    gate.insert(gate.end(), base, base + ff * h);
    up.insert(up.end(), base + ff * h, base + 2 * ff * h);
  }
  return Moe(std::move(router), gate, up, std::move(down), e, c.num_experts_per_tok, h, ff,
             /*norm_topk_prob=*/true);
}

}  // namespace

Result<std::unique_ptr<Model>> LoadQwen35Moe(const Qwen35Config& c, const WeightSource& src,
                                             const TpContext& tp) {
  // 1. Config.
  TANDEM_RETURN_IF_ERROR(c.Validate());
  if (tp.size > 1 || tp.ep.enabled()) {
    return Unimplemented(c.architecture + " is served on one rank only so far; drop "
                         "--tensor-parallel-size " + std::to_string(tp.size) +
                         (tp.ep.enabled() ? " and --enable-expert-parallel" : ""));
  }
  const Names n{src.HasTensor("model.language_model.embed_tokens.weight")
                    ? "model.language_model." : "model."};
  const bool tied = c.tie_word_embeddings && !src.HasTensor("lm_head.weight");
  TLOG_INFO("{}: text model only (vision tower not loaded); {} MTP layer(s) in the checkpoint "
            "not loaded (no MTP drafter yet)", c.architecture, c.mtp_num_hidden_layers);
  // 2. Weights: declare every one, check them all against the file, then read.
  ShardedReader r(src, tp);
  const int64_t h = c.hidden_size;
  r.Declare(n.p + "embed_tokens.weight", {c.vocab_size, h}, VocabParallel());
  if (!tied) r.Declare("lm_head.weight", {c.vocab_size, h}, VocabParallel());
  r.Declare(n.p + "norm.weight", {h}, Replicated());
  std::vector<std::string> gate_up_names, down_names;
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = n.Layer(l);
    r.Declare(p + "input_layernorm.weight", {h}, Replicated());
    r.Declare(p + "post_attention_layernorm.weight", {h}, Replicated());
    if (c.full_attention[l]) {
      DeclareAttention(r, c, p + "self_attn.");
    } else {
      DeclareGdn(r, c, p + "linear_attn.");
    }
    const int64_t e = c.num_experts, ff = c.moe_intermediate_size;
    r.Declare(p + "mlp.gate.weight", {e, h}, Replicated());
    gate_up_names.push_back(ExpertTensor(src, p + "mlp.experts.gate_up_proj"));
    down_names.push_back(ExpertTensor(src, p + "mlp.experts.down_proj"));
    r.Declare(gate_up_names.back(), {e, 2 * ff, h}, Replicated());
    r.Declare(down_names.back(), {e, h, ff}, Replicated());
    if (c.shared_expert_intermediate_size > 0) {
      DeclareHfSharedExpert(r, p + "mlp", h, c.shared_expert_intermediate_size);
    }
  }
  TANDEM_RETURN_IF_ERROR(r.CheckAll());
  DecoderWeights w;
  TANDEM_ASSIGN_OR_RETURN(auto embd, r.Read(n.p + "embed_tokens.weight"));
  auto table = std::make_shared<const std::vector<float>>(std::move(embd));
  const LocalVocab vocab = LocalVocabOf(c.vocab_size, tp);
  w.embedding = Embedding(table, c.vocab_size, h, vocab);
  if (tied) {
    w.lm_head = Linear(table, vocab.padded, h);
  } else {
    TANDEM_ASSIGN_OR_RETURN(auto head, r.Read("lm_head.weight"));
    w.lm_head = Linear(std::move(head), vocab.padded, h);
  }
  TANDEM_ASSIGN_OR_RETURN(w.final_norm.weight, r.Read(n.p + "norm.weight"));
  AddOne(w.final_norm.weight);
  w.final_norm.eps = c.rms_norm_eps;
  w.layers.resize(c.num_layers);
  for (int32_t l = 0; l < c.num_layers; ++l) {
    const std::string p = n.Layer(l);
    DecoderLayer& layer = w.layers[l];
    TANDEM_ASSIGN_OR_RETURN(layer.attn_norm.weight, r.Read(p + "input_layernorm.weight"));
    TANDEM_ASSIGN_OR_RETURN(layer.ffn_norm.weight, r.Read(p + "post_attention_layernorm.weight"));
    AddOne(layer.attn_norm.weight);
    AddOne(layer.ffn_norm.weight);
    layer.attn_norm.eps = layer.ffn_norm.eps = c.rms_norm_eps;
    if (c.full_attention[l]) {
      TANDEM_ASSIGN_OR_RETURN(layer.mixer, LoadAttention(r, c, p + "self_attn."));
    } else {
      TANDEM_ASSIGN_OR_RETURN(layer.mixer, LoadGdn(r, c, p + "linear_attn."));
    }
    layer.sparse = true;
    TANDEM_ASSIGN_OR_RETURN(layer.moe, LoadMoe(r, c, p + "mlp.", gate_up_names[l], down_names[l]));
    layer.has_shared_expert = c.shared_expert_intermediate_size > 0;
    if (layer.has_shared_expert) {
      TANDEM_ASSIGN_OR_RETURN(layer.shared_expert,
                              LoadHfSharedExpert(r, p + "mlp", h, c.shared_expert_intermediate_size));
    }
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w), tp));
}

}  // namespace tandem::model
