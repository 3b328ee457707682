// Llama architecture: read config → declare + load weights → forward.
// Reference: HF transformers modeling_llama.py (LlamaForCausalLM), llama.cpp src/models/llama.cpp
// (Mixtral-style MoE via ffn_gate_inp / ffn_*_exps), llama2.c run.c.
// RoPE layout: GGUF (llama.cpp convert) stores q/k rows permuted per head so that interleaved-pair
// rotation equals HF's rotate_half; we undo that permutation at load, keep every weight in HF
// layout and use rotate_half (kNeox) for both formats, so GGUF and HF give identical logits.
#include "model/arch/llama.h"

#include <algorithm>

#include "model/layers/attention.h"
#include "model/layers/embedding.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/layers/rms_norm.h"

namespace tandem::model {
namespace {

struct LlamaLayer {
  RmsNormLayer attn_norm;
  Attention attention;
  RmsNormLayer ffn_norm;
  Mlp mlp;  // dense
  Moe moe;  // when num_experts > 0
};

// Inverse of llama.cpp convert_hf_to_gguf's LlamaModel.permute: GGUF row h*hd + 2j + half
// becomes HF row h*hd + half*hd/2 + j (see stories260k-hf/PROVENANCE.md).
std::vector<float> UnpermuteRope(const std::vector<float>& w, int64_t n_head, int64_t head_dim,
                                 int64_t in) {
  std::vector<float> out(w.size());
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t j = 0; j < head_dim / 2; ++j) {
      for (int64_t half = 0; half < 2; ++half) {
        const int64_t src = h * head_dim + 2 * j + half;
        const int64_t dst = h * head_dim + half * head_dim / 2 + j;
        std::copy(&w[src * in], &w[src * in] + in, &out[dst * in]);
      }
    }
  }
  return out;
}

std::string LayerName(WeightFormat f, int layer, const char* gguf, const char* hf) {
  const std::string n = std::to_string(layer);
  return f == WeightFormat::kGguf ? "blk." + n + "." + gguf + ".weight"
                                  : "model.layers." + n + "." + hf + ".weight";
}

class LlamaModel : public Model {
 public:
  explicit LlamaModel(const LlamaConfig& c) : config_(c) {
    info_.architecture = c.architecture;
    info_.vocab_size = c.vocab_size;
    info_.hidden_size = c.hidden_size;
    info_.num_layers = c.num_layers;
    info_.num_heads = c.num_heads;
    info_.num_kv_heads = c.num_kv_heads;
    info_.head_dim = c.head_dim;
    info_.max_position_embeddings = c.max_position_embeddings;
    info_.num_experts = c.num_experts;
    info_.num_experts_per_tok = c.num_experts_per_tok;
  }

  Status Load(const WeightSource& src, WeightFormat f) {
    const LlamaConfig& c = config_;
    const int64_t dim = c.hidden_size, hd = c.head_dim, ff = c.intermediate_size;
    const int64_t q_size = c.num_heads * hd, kv_size = c.num_kv_heads * hd;
    const bool gguf = f == WeightFormat::kGguf;
    const std::string embd_name = gguf ? "token_embd.weight" : "model.embed_tokens.weight";
    TANDEM_ASSIGN_OR_RETURN(auto embd, LoadWeight(src, embd_name, {c.vocab_size, dim}));
    auto table = std::make_shared<const std::vector<float>>(std::move(embd));
    embedding_ = Embedding(table, c.vocab_size, dim);
    const std::string head_name = gguf ? "output.weight" : "lm_head.weight";
    if (src.HasTensor(head_name) || !c.tie_word_embeddings) {
      TANDEM_ASSIGN_OR_RETURN(auto head, LoadWeight(src, head_name, {c.vocab_size, dim}));
      lm_head_ = Linear(std::move(head), c.vocab_size, dim);
    } else {
      lm_head_ = Linear(table, c.vocab_size, dim);
    }
    TANDEM_ASSIGN_OR_RETURN(final_norm_.weight,
                            LoadWeight(src, gguf ? "output_norm.weight" : "model.norm.weight", {dim}));
    final_norm_.eps = c.rms_norm_eps;
    RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
    AttentionDims dims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim};
    layers_.resize(c.num_layers);
    for (int l = 0; l < c.num_layers; ++l) {
      LlamaLayer& L = layers_[l];
      auto name = [&](const char* g, const char* h) { return LayerName(f, l, g, h); };
      TANDEM_ASSIGN_OR_RETURN(L.attn_norm.weight, LoadWeight(src, name("attn_norm", "input_layernorm"), {dim}));
      TANDEM_ASSIGN_OR_RETURN(L.ffn_norm.weight, LoadWeight(src, name("ffn_norm", "post_attention_layernorm"), {dim}));
      L.attn_norm.eps = L.ffn_norm.eps = c.rms_norm_eps;
      TANDEM_ASSIGN_OR_RETURN(auto wq, LoadWeight(src, name("attn_q", "self_attn.q_proj"), {q_size, dim}));
      TANDEM_ASSIGN_OR_RETURN(auto wk, LoadWeight(src, name("attn_k", "self_attn.k_proj"), {kv_size, dim}));
      TANDEM_ASSIGN_OR_RETURN(auto wv, LoadWeight(src, name("attn_v", "self_attn.v_proj"), {kv_size, dim}));
      TANDEM_ASSIGN_OR_RETURN(auto wo, LoadWeight(src, name("attn_output", "self_attn.o_proj"), {dim, q_size}));
      if (gguf) {
        wq = UnpermuteRope(wq, c.num_heads, hd, dim);
        wk = UnpermuteRope(wk, c.num_kv_heads, hd, dim);
      }
      L.attention = Attention(dims, wq, wk, wv, std::move(wo), rope);
      if (c.num_experts > 0) {
        if (!gguf) return Unimplemented("MoE weights from an HF LlamaForCausalLM folder");
        const int64_t e = c.num_experts;
        TANDEM_ASSIGN_OR_RETURN(auto router, LoadWeight(src, name("ffn_gate_inp", ""), {e, dim}));
        TANDEM_ASSIGN_OR_RETURN(auto gate, LoadWeight(src, name("ffn_gate_exps", ""), {e, ff, dim}));
        TANDEM_ASSIGN_OR_RETURN(auto up, LoadWeight(src, name("ffn_up_exps", ""), {e, ff, dim}));
        TANDEM_ASSIGN_OR_RETURN(auto down, LoadWeight(src, name("ffn_down_exps", ""), {e, dim, ff}));
        L.moe = Moe(std::move(router), gate, up, std::move(down), e, c.num_experts_per_tok, dim, ff);
        info_.weight_bytes += L.moe.weight_bytes();
      } else {
        TANDEM_ASSIGN_OR_RETURN(auto gate, LoadWeight(src, name("ffn_gate", "mlp.gate_proj"), {ff, dim}));
        TANDEM_ASSIGN_OR_RETURN(auto up, LoadWeight(src, name("ffn_up", "mlp.up_proj"), {ff, dim}));
        TANDEM_ASSIGN_OR_RETURN(auto down, LoadWeight(src, name("ffn_down", "mlp.down_proj"), {dim, ff}));
        L.mlp = Mlp(gate, up, std::move(down), dim, ff);
        info_.weight_bytes += L.mlp.weight_bytes();
      }
      info_.weight_bytes += L.attention.weight_bytes() + 2 * dim * sizeof(float);
    }
    info_.weight_bytes += table->size() * sizeof(float) + dim * sizeof(float);
    if (lm_head_.weight() != table) info_.weight_bytes += lm_head_.weight_bytes();
    return Status::Ok();
  }

  const ModelInfo& info() const override { return info_; }
  KvCacheSpec kv_cache_spec() const override {
    return KvCacheSpec{config_.num_layers, config_.num_kv_heads, config_.head_dim};
  }

  void Forward(const ForwardContext& ctx, KvCache& kv, std::vector<float>& logits) override {
    CheckContext(ctx, kv);
    const int64_t n = ctx.num_tokens(), dim = config_.hidden_size;
    hidden_.resize(n * dim);
    normed_.resize(n * dim);
    delta_.resize(n * dim);
    embedding_.Forward(ctx.token_ids.data(), n, hidden_.data());
    for (int l = 0; l < config_.num_layers; ++l) {
      LlamaLayer& L = layers_[l];
      L.attn_norm.Forward(hidden_.data(), normed_.data(), n);
      L.attention.Forward(normed_.data(), ctx, kv.key_cache[l].data(), kv.value_cache[l].data(),
                          delta_.data());
      AddInPlace(hidden_.data(), delta_.data(), n * dim);
      L.ffn_norm.Forward(hidden_.data(), normed_.data(), n);
      if (config_.num_experts > 0) {
        L.moe.Forward(normed_.data(), delta_.data(), n);
      } else {
        L.mlp.Forward(normed_.data(), delta_.data(), n);
      }
      AddInPlace(hidden_.data(), delta_.data(), n * dim);
    }
    // Only the rows whose logits are wanted go through the final norm and lm_head.
    const int64_t num_logits = static_cast<int64_t>(ctx.logits_indices.size());
    last_.resize(num_logits * dim);
    for (int64_t i = 0; i < num_logits; ++i) {
      const int32_t row = ctx.logits_indices[i];
      std::copy(&hidden_[row * dim], &hidden_[row * dim] + dim, &last_[i * dim]);
    }
    final_norm_.Forward(last_.data(), last_.data(), num_logits);
    logits.resize(num_logits * config_.vocab_size);
    lm_head_.Forward(last_.data(), logits.data(), num_logits);
  }

 private:
  static void AddInPlace(float* x, const float* d, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += d[i];
  }

  // The worker builds ctx; an inconsistent one is a bug there, not bad user input.
  void CheckContext(const ForwardContext& ctx, const KvCache& kv) const {
    const size_t n = ctx.token_ids.size();
    TANDEM_CHECK(ctx.positions.size() == n && ctx.slot_mapping.size() == n)
        << "ForwardContext: " << n << " tokens but " << ctx.positions.size() << " positions, "
        << ctx.slot_mapping.size() << " slots";
    TANDEM_CHECK(ctx.query_start_loc.size() == ctx.seq_lens.size() + 1 &&
                 ctx.block_tables.size() == ctx.seq_lens.size())
        << "ForwardContext: " << ctx.seq_lens.size() << " seqs but " << ctx.query_start_loc.size()
        << " query_start_loc entries and " << ctx.block_tables.size() << " block tables";
    TANDEM_CHECK(ctx.query_start_loc.back() <= static_cast<int32_t>(n))
        << "ForwardContext: query_start_loc ends at " << ctx.query_start_loc.back() << " > " << n;
    TANDEM_CHECK(static_cast<int32_t>(kv.key_cache.size()) == config_.num_layers &&
                 kv.block_size == ctx.block_size)
        << "KvCache has " << kv.key_cache.size() << " layers, block_size " << kv.block_size
        << "; model has " << config_.num_layers << " layers, ctx block_size " << ctx.block_size;
    const int64_t num_slots = static_cast<int64_t>(kv.num_blocks) * kv.block_size;
    for (int64_t s : ctx.slot_mapping) {
      TANDEM_CHECK(s < num_slots) << "slot " << s << " beyond the KV cache's " << num_slots;
    }
    for (int32_t r : ctx.logits_indices) {
      TANDEM_CHECK(r >= 0 && r < static_cast<int32_t>(n)) << "logits index " << r << " of " << n;
    }
  }

  LlamaConfig config_;
  ModelInfo info_;
  Embedding embedding_;
  std::vector<LlamaLayer> layers_;
  RmsNormLayer final_norm_;
  Linear lm_head_;
  std::vector<float> hidden_, normed_, delta_, last_;  // scratch, reused across steps
};

}  // namespace

Result<std::unique_ptr<Model>> LoadLlama(const LlamaConfig& config, const WeightSource& source,
                                         WeightFormat format) {
  TANDEM_RETURN_IF_ERROR(config.Validate());
  auto model = std::make_unique<LlamaModel>(config);
  TANDEM_RETURN_IF_ERROR(model->Load(source, format));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace tandem::model
