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
// not loaded (one info line).
// TP (as vLLM shards it): attention by query heads ([q_h | gate_h] rows together), KV heads;
// GatedDeltaNet by key heads with their value-head groups (the q, k and v channel blocks of
// in_proj_qkv and conv1d, z/b/a rows, dt_bias/A_log, out_proj columns); experts' intermediate
// rows/columns — or, with expert parallel, whole experts per EP rank. Fused tensors are read
// whole and sliced here.
#include <initializer_list>
#include <optional>
#include <utility>

#include "core/logging.h"
#include "model/arch/qwen35.h"
#include "model/decoder_model.h"
#include "model/layers/expert_parallel.h"
#include "model/layers/feed_forward.h"
#include "model/layers/gated_delta_net.h"
#include "model/loader/hf_layer_weights.h"

namespace tandem::model {
namespace {

void AddOne(std::vector<float>& w) {
  for (float& v : w) v += 1.0f;
}

struct Names {
  // "model.language_model." (HF multimodal checkpoint), "language_model.model." (vLLM-Ascend's
  // remapped keys, QWEN35.md §7.1) or "model." (text-only)
  std::string p;
  std::string lm_head = "lm_head.weight";  // or "language_model.lm_head.weight"
  std::string Layer(int32_t l) const { return p + "layers." + std::to_string(l) + "."; }
};

Names NamesOf(const WeightSource& src) {
  if (src.HasTensor("model.language_model.embed_tokens.weight")) return {"model.language_model."};
  if (src.HasTensor("language_model.model.embed_tokens.weight")) {
    return {"language_model.model.", src.HasTensor("language_model.lm_head.weight")
                                         ? "language_model.lm_head.weight"
                                         : "lm_head.weight"};
  }
  return {"model."};
}

// Rows [first, first + count) of a row-major [rows, width] matrix.
std::vector<float> Rows(const std::vector<float>& x, int64_t width, int64_t first, int64_t count) {
  return std::vector<float>(x.begin() + first * width, x.begin() + (first + count) * width);
}

void DeclareAttention(ShardedReader& r, const Qwen35Config& c, const std::string& a) {
  const int64_t h = c.hidden_size, d = c.head_dim;
  r.Declare(a + "q_proj.weight", {2 * c.num_heads * d, h}, ColumnParallel("query heads", 0, 2 * d));
  r.Declare(a + "k_proj.weight", {c.num_kv_heads * d, h}, KvHeadParallel(d));
  r.Declare(a + "v_proj.weight", {c.num_kv_heads * d, h}, KvHeadParallel(d));
  r.Declare(a + "o_proj.weight", {h, c.num_heads * d}, RowParallel("query heads", d));
  r.Declare(a + "q_norm.weight", {d}, Replicated());
  r.Declare(a + "k_norm.weight", {d}, Replicated());
}

// The full model's GDN dims, or with `tp` this rank's share of the heads.
GatedDeltaNetDims GdnDims(const Qwen35Config& c, const TpContext& tp = {}) {
  GatedDeltaNetDims d;
  d.hidden_size = c.hidden_size;
  d.num_k_heads = c.linear_num_key_heads / tp.size;
  d.num_v_heads = c.linear_num_value_heads / tp.size;
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

// Declares the router and experts of the MoE block at `m` ("….mlp."): HF's fused
// experts.gate_up_proj [E, 2·ff, H] / experts.down_proj [E, H, ff] — or, when the checkpoint
// has experts.0.gate_proj.weight, one gate/up/down per expert (msModelSlim unfuses them:
// QWEN35.md §7.1), whose names `gate_up_names` / `down_names` get as "" (LoadMoe reads them
// with LoadHfMoe).
void DeclareExperts(ShardedReader& r, const WeightSource& src, const Qwen35Config& c,
                    const std::string& m, std::vector<std::string>& gate_up_names,
                    std::vector<std::string>& down_names) {
  const int64_t e = c.num_experts, h = c.hidden_size, ff = c.moe_intermediate_size;
  if (src.HasTensor(m + "experts.0.gate_proj.weight")) {
    DeclareHfMoe(r, m.substr(0, m.size() - 1), e, h, ff);
    gate_up_names.emplace_back();
    down_names.emplace_back();
    return;
  }
  r.Declare(m + "gate.weight", {e, h}, Replicated());
  gate_up_names.push_back(ExpertTensor(src, m + "experts.gate_up_proj"));
  down_names.push_back(ExpertTensor(src, m + "experts.down_proj"));
  r.Declare(gate_up_names.back(), {e, 2 * ff, h}, Replicated());
  r.Declare(down_names.back(), {e, h, ff}, Replicated());
}

Result<std::unique_ptr<TokenMixer>> LoadAttention(const ShardedReader& r, const Qwen35Config& c,
                                                  const std::string& a, const TpContext& tp) {
  AttentionWeights w;
  TANDEM_ASSIGN_OR_RETURN(w.q, r.ReadStored(a + "q_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.k, r.ReadStored(a + "k_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.v, r.ReadStored(a + "v_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.o, r.ReadStored(a + "o_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.q_norm, r.Read(a + "q_norm.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.k_norm, r.Read(a + "k_norm.weight"));
  AddOne(w.q_norm);
  AddOne(w.k_norm);
  w.qk_norm_eps = c.rms_norm_eps;
  w.output_gate = true;
  RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  rope.rotary_dim = c.rotary_dim();
  const AttentionDims dims =
      LocalAttentionDims(AttentionDims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim}, tp);
  return std::unique_ptr<TokenMixer>(std::make_unique<Attention>(dims, std::move(w), rope));
}

Result<std::unique_ptr<TokenMixer>> LoadGdn(const ShardedReader& r, const Qwen35Config& c,
                                            const std::string& g, const TpContext& tp) {
  const GatedDeltaNetDims full = GdnDims(c), local = GdnDims(c, tp);
  const int64_t h = c.hidden_size, dk = full.key_dim, dv = full.value_dim;
  const int64_t k0 = int64_t{tp.rank} * local.num_k_heads;  // this rank's first key head
  const int64_t v0 = int64_t{tp.rank} * local.num_v_heads;  // ... and first value head
  const int64_t lk = local.num_k_heads, lv = local.num_v_heads;
  // This rank's channels of a q | k | v block layout, rows of `width` values.
  auto qkv_rows = [&](const std::vector<float>& x, int64_t width) {
    std::vector<float> out = Rows(x, width, k0 * dk, lk * dk);
    const auto k = Rows(x, width, full.num_k_heads * dk + k0 * dk, lk * dk);
    const auto v = Rows(x, width, 2 * full.num_k_heads * dk + v0 * dv, lv * dv);
    out.insert(out.end(), k.begin(), k.end());
    out.insert(out.end(), v.begin(), v.end());
    return out;
  };
  // The projections in their stored dtype: this rank's rows (or out_proj's columns) of each.
  auto row_ranges = [](tensor::Tensor t,
                       std::initializer_list<std::pair<int64_t, int64_t>> ranges) {
    std::vector<int64_t> rows;
    for (const auto& [first, count] : ranges) {
      for (int64_t i = first; i < first + count; ++i) {
        rows.push_back(i);
      }
    }
    if (static_cast<int64_t>(rows.size()) == t.dim(0)) {
      return t;  // one TP rank: all of them
    }
    return tensor::GatherRows(t, rows);
  };
  GatedDeltaNetWeights w;
  TANDEM_ASSIGN_OR_RETURN(auto qkv, r.ReadStored(g + "in_proj_qkv.weight"));
  w.in_proj_qkv = row_ranges(std::move(qkv), {{k0 * dk, lk * dk},
                                              {full.num_k_heads * dk + k0 * dk, lk * dk},
                                              {2 * full.num_k_heads * dk + v0 * dv, lv * dv}});
  TANDEM_ASSIGN_OR_RETURN(auto z, r.ReadStored(g + "in_proj_z.weight"));
  w.in_proj_z = row_ranges(std::move(z), {{v0 * dv, lv * dv}});
  TANDEM_ASSIGN_OR_RETURN(auto b, r.ReadStored(g + "in_proj_b.weight"));
  w.in_proj_b = row_ranges(std::move(b), {{v0, lv}});
  TANDEM_ASSIGN_OR_RETURN(auto a, r.ReadStored(g + "in_proj_a.weight"));
  w.in_proj_a = row_ranges(std::move(a), {{v0, lv}});
  TANDEM_ASSIGN_OR_RETURN(auto conv, r.Read(g + "conv1d.weight"));  // [C, 1, K] = [C, K]
  w.conv1d = qkv_rows(conv, full.conv_kernel);
  TANDEM_ASSIGN_OR_RETURN(auto dt_bias, r.Read(g + "dt_bias"));
  w.dt_bias = Rows(dt_bias, 1, v0, lv);
  TANDEM_ASSIGN_OR_RETURN(auto a_log, r.Read(g + "A_log"));
  w.a_log = Rows(a_log, 1, v0, lv);
  TANDEM_ASSIGN_OR_RETURN(w.norm, r.Read(g + "norm.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto out, r.ReadStored(g + "out_proj.weight"));  // row-parallel
  w.out_proj =
      lv == full.num_v_heads ? std::move(out) : tensor::SliceColumns(out, v0 * dv, lv * dv);
  return std::unique_ptr<TokenMixer>(std::make_unique<GatedDeltaNet>(local, std::move(w)));
}

// Router, fused experts split into the stacked gate/up/down Moe takes (this rank's experts
// whole with expert parallel, else every expert's share of the intermediate size), top-k
// renormalised.
Result<Moe> LoadMoe(const ShardedReader& r, const Qwen35Config& c, const std::string& m,
                    const std::string& gate_up_name, const std::string& down_name,
                    const TpContext& tp) {
  const int64_t e = c.num_experts, h = c.hidden_size, ff = c.moe_intermediate_size;
  if (gate_up_name.empty()) {  // per-expert tensors (msModelSlim's unfused layout)
    return LoadHfMoe(r, m.substr(0, m.size() - 1), e, c.num_experts_per_tok, h, ff,
                     /*norm_topk_prob=*/true);
  }
  const bool ep = tp.ep.enabled();
  const ExpertRange experts = ep ? LocalExpertsOf(e, tp.ep.rank, tp.ep.size) : ExpertRange{0, e};
  const int64_t local_ff = ep ? ff : ff / tp.size;
  const int64_t f0 = ep ? 0 : int64_t{tp.rank} * local_ff;  // first intermediate row held
  TANDEM_ASSIGN_OR_RETURN(auto router, r.Read(m + "gate.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto gate_up_all, r.ReadStored(gate_up_name));  // [E, 2·ff, H]
  TANDEM_ASSIGN_OR_RETURN(auto down_all, r.ReadStored(down_name));        // [E, H, ff]
  // This rank's experts, in the stored dtype: gate rows f0 … f0+local_ff then the same up rows
  // of each expert (row moves), and the matching columns of each expert's down.
  std::vector<int64_t> rows;
  for (int64_t x = experts.first; x < experts.first + experts.count; ++x) {
    for (int64_t half = 0; half < 2; ++half) {
      for (int64_t f = f0; f < f0 + local_ff; ++f) rows.push_back(x * 2 * ff + half * ff + f);
    }
  }
  gate_up_all.Reshape({e * 2 * ff, h});
  // Every row, in order (one rank holds all experts whole): no copy (gigabytes at real width).
  tensor::Tensor gate_up = static_cast<int64_t>(rows.size()) == e * 2 * ff
                               ? std::move(gate_up_all)
                               : tensor::GatherRows(gate_up_all, rows);
  gate_up.Reshape({experts.count, 2 * local_ff, h});
  down_all.Reshape({e * h, ff});
  std::vector<int64_t> down_rows;
  for (int64_t x = experts.first; x < experts.first + experts.count; ++x) {
    for (int64_t row = 0; row < h; ++row) down_rows.push_back(x * h + row);
  }
  tensor::Tensor down = static_cast<int64_t>(down_rows.size()) == e * h
                            ? std::move(down_all)
                            : tensor::GatherRows(down_all, down_rows);
  if (local_ff != ff) {
    const int64_t block = tensor::DTypeBlockValues(down.dtype());
    if (f0 % block != 0 || local_ff % block != 0) {
      return InvalidArgument(
          "'" + down_name + "' is " + tensor::DTypeName(down.dtype()) + " (blocks of " +
          std::to_string(block) + " values) and --tensor-parallel-size " + std::to_string(tp.size) +
          " splits each expert's " + std::to_string(ff) + " intermediate columns into " +
          std::to_string(local_ff) +
          ", cutting a block; use a size that keeps whole blocks, or expert parallel "
          "(--enable-expert-parallel)");
    }
    down = tensor::SliceColumns(down, f0, local_ff);
  }
  down.Reshape({experts.count, h, local_ff});
  return Moe(std::move(router), std::move(gate_up), std::move(down), e, c.num_experts_per_tok, h,
             local_ff, /*norm_topk_prob=*/true, tp.ep);
}

// The sparse block at `m` ("….mlp"): LoadMoe's experts, plus the sigmoid-gated shared expert
// when the config has one.
Result<std::unique_ptr<FeedForward>> LoadSparseFfn(const ShardedReader& r, const Qwen35Config& c,
                                                   const std::string& m,
                                                   const std::string& gate_up_name,
                                                   const std::string& down_name,
                                                   const TpContext& tp) {
  TANDEM_ASSIGN_OR_RETURN(Moe moe, LoadMoe(r, c, m + ".", gate_up_name, down_name, tp));
  std::optional<SharedExpert> shared;
  if (c.shared_expert_intermediate_size > 0) {
    TANDEM_ASSIGN_OR_RETURN(
        shared, LoadHfSharedExpert(r, m, c.hidden_size, c.shared_expert_intermediate_size));
  }
  return MoeFeedForward(std::move(moe), std::move(shared));
}

}  // namespace

Result<std::unique_ptr<Model>> LoadQwen35Moe(const Qwen35Config& c, const WeightSource& src,
                                             const TpContext& tp, bool load_mtp) {
  // 1. Config.
  TANDEM_RETURN_IF_ERROR(c.Validate());
  for (const auto& [what, count] : std::vector<std::pair<const char*, int64_t>>{
           {"linear_num_key_heads", c.linear_num_key_heads},
           {"linear_num_value_heads", c.linear_num_value_heads},
           {"num_attention_heads", c.num_heads},
           {"moe_intermediate_size", tp.ep.enabled() ? tp.size : c.moe_intermediate_size}}) {
    if (count % tp.size != 0) {
      return InvalidArgument(c.architecture + ": " + what + " " + std::to_string(count) +
                             " does not divide by --tensor-parallel-size " +
                             std::to_string(tp.size));
    }
  }
  const Names n = NamesOf(src);
  const bool tied = c.tie_word_embeddings && !src.HasTensor(n.lm_head);
  TLOG_INFO(
      "{}: text model only (vision tower not loaded); {} MTP layer(s) in the checkpoint, "
      "{}",
      c.architecture, c.mtp_num_hidden_layers,
      load_mtp ? "loaded as the drafter" : "not loaded (no MTP speculation asked)");
  // 2. Weights: declare every one, check them all against the file, then read.
  ShardedReader r(src, tp);
  const int64_t h = c.hidden_size;
  r.Declare(n.p + "embed_tokens.weight", {c.vocab_size, h}, VocabParallel());
  if (!tied) r.Declare(n.lm_head, {c.vocab_size, h}, VocabParallel());
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
    DeclareExperts(r, src, c, p + "mlp.", gate_up_names, down_names);
    if (c.shared_expert_intermediate_size > 0) {
      DeclareHfSharedExpert(r, p + "mlp", h, c.shared_expert_intermediate_size);
    }
  }
  TANDEM_RETURN_IF_ERROR(r.CheckAll());
  DecoderWeights w;
  TANDEM_ASSIGN_OR_RETURN(auto embd, r.ReadEmbeddingTable(n.p + "embed_tokens.weight"));
  auto table = std::make_shared<const tensor::Tensor>(std::move(embd));
  const LocalVocab vocab = LocalVocabOf(c.vocab_size, tp);
  w.embedding = Embedding(table, c.vocab_size, h, vocab);
  if (tied) {
    w.lm_head = Linear(table);
  } else {
    TANDEM_ASSIGN_OR_RETURN(auto head, r.ReadStored(n.lm_head));
    w.lm_head = Linear(std::move(head));
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
      TANDEM_ASSIGN_OR_RETURN(layer.mixer, LoadAttention(r, c, p + "self_attn.", tp));
    } else {
      TANDEM_ASSIGN_OR_RETURN(layer.mixer, LoadGdn(r, c, p + "linear_attn.", tp));
    }
    TANDEM_ASSIGN_OR_RETURN(layer.ffn,
                            LoadSparseFfn(r, c, p + "mlp", gate_up_names[l], down_names[l], tp));
  }
  // 3. Forward: the shared decoder stack (+ the MTP head when asked).
  auto model = std::make_unique<DecoderModel>(ModelInfoOf(c), std::move(w), tp);
  if (load_mtp) {
    TANDEM_ASSIGN_OR_RETURN(std::unique_ptr<MtpModule> mtp, LoadQwen35Mtp(c, src, tp));
    model->AttachMtp(std::move(mtp));
  }
  return std::unique_ptr<Model>(std::move(model));
}

Result<std::unique_ptr<MtpModule>> LoadQwen35Mtp(const Qwen35Config& c, const WeightSource& src,
                                                 const TpContext& tp) {
  if (c.mtp_num_hidden_layers < 1 || !src.HasTensor("mtp.fc.weight")) {
    return InvalidArgument(c.architecture + " checkpoint '" + src.source_name() +
                           "' has no MTP layer (mtp.fc.weight)");
  }
  const int64_t h = c.hidden_size;
  const std::string p = "mtp.layers.0.";
  ShardedReader r(src, tp);
  r.Declare("mtp.fc.weight", {h, 2 * h}, Replicated());
  for (const char* norm :
       {"mtp.pre_fc_norm_embedding.weight", "mtp.pre_fc_norm_hidden.weight", "mtp.norm.weight"}) {
    r.Declare(norm, {h}, Replicated());
  }
  r.Declare(p + "input_layernorm.weight", {h}, Replicated());
  r.Declare(p + "post_attention_layernorm.weight", {h}, Replicated());
  DeclareAttention(r, c, p + "self_attn.");
  std::vector<std::string> gate_up_names, down_names;
  DeclareExperts(r, src, c, p + "mlp.", gate_up_names, down_names);
  const std::string& gate_up = gate_up_names.back();
  const std::string& down = down_names.back();
  if (c.shared_expert_intermediate_size > 0) {
    DeclareHfSharedExpert(r, p + "mlp", h, c.shared_expert_intermediate_size);
  }
  TANDEM_RETURN_IF_ERROR(r.CheckAll());
  MtpWeights w;
  TANDEM_ASSIGN_OR_RETURN(auto fc, r.Read("mtp.fc.weight"));
  w.fc = Linear(std::move(fc), h, 2 * h);
  for (auto [norm, name] : {std::pair{&w.enorm, "mtp.pre_fc_norm_embedding.weight"},
                            std::pair{&w.hnorm, "mtp.pre_fc_norm_hidden.weight"},
                            std::pair{&w.norm, "mtp.norm.weight"}}) {
    TANDEM_ASSIGN_OR_RETURN(norm->weight, r.Read(name));
    AddOne(norm->weight);
    norm->eps = c.rms_norm_eps;
  }
  DecoderLayer& layer = w.layer;
  TANDEM_ASSIGN_OR_RETURN(layer.attn_norm.weight, r.Read(p + "input_layernorm.weight"));
  TANDEM_ASSIGN_OR_RETURN(layer.ffn_norm.weight, r.Read(p + "post_attention_layernorm.weight"));
  AddOne(layer.attn_norm.weight);
  AddOne(layer.ffn_norm.weight);
  layer.attn_norm.eps = layer.ffn_norm.eps = c.rms_norm_eps;
  TANDEM_ASSIGN_OR_RETURN(layer.mixer, LoadAttention(r, c, p + "self_attn.", tp));
  TANDEM_ASSIGN_OR_RETURN(layer.ffn, LoadSparseFfn(r, c, p + "mlp", gate_up, down, tp));
  return std::make_unique<MtpModule>(std::move(w), h, tp);
}

}  // namespace tandem::model
