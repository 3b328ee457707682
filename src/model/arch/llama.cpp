// Llama architecture: read config → declare + load weights → forward.
// Reference: HF transformers modeling_llama.py (LlamaForCausalLM), llama.cpp
// src/models/llama.cpp (Mixtral-style MoE via ffn_gate_inp / ffn_*_exps),
// llama2.c run.c. RoPE layout: GGUF (llama.cpp convert) stores q/k rows
// permuted per head so that interleaved-pair rotation equals HF's rotate_half;
// we undo that permutation at load, keep every weight in HF layout and use
// rotate_half (kNeox) for both formats, so GGUF and HF give identical logits.
#include "model/arch/llama.h"

#include <algorithm>

#include "model/layers/attention.h"
#include "model/layers/embedding.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/layers/rms_norm.h"
#include "model/layers/tensor_parallel.h"
#include "model/loader/sharded_reader.h"

namespace tandem::model {
namespace {

struct LlamaLayer {
  RmsNormLayer attn_norm;
  Attention attention;
  RmsNormLayer ffn_norm;
  Mlp mlp; // dense
  Moe moe; // when num_experts > 0
};

// Inverse of llama.cpp convert_hf_to_gguf's LlamaModel.permute: GGUF row h*hd +
// 2j + half becomes HF row h*hd + half*hd/2 + j (see
// stories260k-hf/PROVENANCE.md).
std::vector<float> UnpermuteRope(const std::vector<float> &w, int64_t n_head,
                                 int64_t head_dim, int64_t in) {
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

std::string LayerName(WeightFormat f, int layer, const char *gguf,
                      const char *hf) {
  const std::string n = std::to_string(layer);
  return f == WeightFormat::kGguf ? "blk." + n + "." + gguf + ".weight"
                                  : "model.layers." + n + "." + hf + ".weight";
}

class LlamaModel : public Model {
public:
  LlamaModel(const LlamaConfig &c, const TpContext &tp) : config_(c), tp_(tp) {
    info_.architecture = c.architecture;
    info_.vocab_size = c.vocab_size;
    info_.hidden_size = c.hidden_size;
    info_.num_layers = c.num_layers;
    const LocalHeads heads = LocalHeadsOf(c.num_heads, c.num_kv_heads, tp);
    info_.num_heads = heads.num_heads; // this TP rank's
    info_.num_kv_heads = heads.num_kv_heads;
    info_.tp_rank = tp.rank;
    info_.tp_size = tp.size;
    info_.head_dim = c.head_dim;
    info_.max_position_embeddings = c.max_position_embeddings;
    info_.num_experts = c.num_experts;
    info_.num_experts_per_tok = c.num_experts_per_tok;
  }

  // Declares every weight with its TP split (vLLM LlamaForCausalLM /
  // MixtralForCausalLM, with or without expert parallel), checks them all against the
  // file headers, then reads this rank's shards.
  Status Load(const WeightSource &src, WeightFormat f) {
    const LlamaConfig &c = config_;
    const int64_t dim = c.hidden_size, hd = c.head_dim,
                  ff = c.intermediate_size;
    const int64_t q_size = c.num_heads * hd, kv_size = c.num_kv_heads * hd,
                  e = c.num_experts;
    const bool gguf = f == WeightFormat::kGguf;
    if (c.num_experts > 0 && !gguf)
      return Unimplemented("MoE weights from an HF LlamaForCausalLM folder");
    const std::string embd_name =
        gguf ? "token_embd.weight" : "model.embed_tokens.weight";
    const std::string head_name = gguf ? "output.weight" : "lm_head.weight";
    const std::string norm_name =
        gguf ? "output_norm.weight" : "model.norm.weight";
    const bool tied = !src.HasTensor(head_name) && c.tie_word_embeddings;
    ShardedReader r(src, tp_);
    r.Declare(embd_name, {c.vocab_size, dim}, VocabParallel());
    if (!tied)
      r.Declare(head_name, {c.vocab_size, dim}, VocabParallel());
    r.Declare(norm_name, {dim}, Replicated());
    for (int l = 0; l < c.num_layers; ++l) {
      auto name = [&](const char *g, const char *h) {
        return LayerName(f, l, g, h);
      };
      r.Declare(name("attn_norm", "input_layernorm"), {dim}, Replicated());
      r.Declare(name("ffn_norm", "post_attention_layernorm"), {dim},
                Replicated());
      r.Declare(name("attn_q", "self_attn.q_proj"), {q_size, dim},
                ColumnParallel("query heads", 0, hd));
      r.Declare(name("attn_k", "self_attn.k_proj"), {kv_size, dim},
                KvHeadParallel(hd));
      r.Declare(name("attn_v", "self_attn.v_proj"), {kv_size, dim},
                KvHeadParallel(hd));
      r.Declare(name("attn_output", "self_attn.o_proj"), {dim, q_size},
                RowParallel("query heads", hd));
      if (e > 0) {
        r.Declare(name("ffn_gate_inp", ""), {e, dim}, Replicated());
        // Expert parallel: this rank's experts, whole; else every expert split over TP.
        const bool ep = tp_.ep.enabled();
        r.Declare(name("ffn_gate_exps", ""), {e, ff, dim},
                  ep ? ExpertParallelRule() : ColumnParallel("intermediate rows", 1));
        r.Declare(name("ffn_up_exps", ""), {e, ff, dim},
                  ep ? ExpertParallelRule() : ColumnParallel("intermediate rows", 1));
        r.Declare(name("ffn_down_exps", ""), {e, dim, ff},
                  ep ? ExpertParallelRule() : RowParallel("intermediate columns"));
      } else {
        r.Declare(name("ffn_gate", "mlp.gate_proj"), {ff, dim},
                  ColumnParallel("intermediate rows"));
        r.Declare(name("ffn_up", "mlp.up_proj"), {ff, dim},
                  ColumnParallel("intermediate rows"));
        r.Declare(name("ffn_down", "mlp.down_proj"), {dim, ff},
                  RowParallel("intermediate columns"));
      }
    }
    TANDEM_RETURN_IF_ERROR(r.CheckAll());

    const LocalVocab vocab = LocalVocabOf(c.vocab_size, tp_);
    TANDEM_ASSIGN_OR_RETURN(auto embd, r.Read(embd_name));
    auto table = std::make_shared<const std::vector<float>>(std::move(embd));
    embedding_ = Embedding(table, c.vocab_size, dim, vocab);
    if (tied) {
      lm_head_ = Linear(table, vocab.padded, dim);
    } else {
      TANDEM_ASSIGN_OR_RETURN(auto head, r.Read(head_name));
      lm_head_ = Linear(std::move(head), vocab.padded, dim);
    }
    TANDEM_ASSIGN_OR_RETURN(final_norm_.weight, r.Read(norm_name));
    final_norm_.eps = c.rms_norm_eps;
    RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
    const AttentionDims dims = LocalAttentionDims(
        AttentionDims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim},
        tp_);
    const int64_t local_ff = ff / tp_.size;
    layers_.resize(c.num_layers);
    for (int l = 0; l < c.num_layers; ++l) {
      LlamaLayer &L = layers_[l];
      auto name = [&](const char *g, const char *h) {
        return LayerName(f, l, g, h);
      };
      TANDEM_ASSIGN_OR_RETURN(L.attn_norm.weight,
                              r.Read(name("attn_norm", "input_layernorm")));
      TANDEM_ASSIGN_OR_RETURN(
          L.ffn_norm.weight,
          r.Read(name("ffn_norm", "post_attention_layernorm")));
      L.attn_norm.eps = L.ffn_norm.eps = c.rms_norm_eps;
      TANDEM_ASSIGN_OR_RETURN(auto wq,
                              r.Read(name("attn_q", "self_attn.q_proj")));
      TANDEM_ASSIGN_OR_RETURN(auto wk,
                              r.Read(name("attn_k", "self_attn.k_proj")));
      TANDEM_ASSIGN_OR_RETURN(auto wv,
                              r.Read(name("attn_v", "self_attn.v_proj")));
      TANDEM_ASSIGN_OR_RETURN(auto wo,
                              r.Read(name("attn_output", "self_attn.o_proj")));
      if (gguf) { // the permutation is within each head, so it applies to
                  // whole-head shards
        wq = UnpermuteRope(wq, dims.num_heads, hd, dim);
        wk = UnpermuteRope(wk, dims.num_kv_heads, hd, dim);
      }
      L.attention = Attention(dims, wq, wk, wv, std::move(wo), rope);
      if (e > 0) {
        TANDEM_ASSIGN_OR_RETURN(auto router, r.Read(name("ffn_gate_inp", "")));
        TANDEM_ASSIGN_OR_RETURN(auto gate, r.Read(name("ffn_gate_exps", "")));
        TANDEM_ASSIGN_OR_RETURN(auto up, r.Read(name("ffn_up_exps", "")));
        TANDEM_ASSIGN_OR_RETURN(auto down, r.Read(name("ffn_down_exps", "")));
        L.moe = Moe(std::move(router), gate, up, std::move(down), e,
                    c.num_experts_per_tok, dim, tp_.ep.enabled() ? ff : local_ff,
                    /*norm_topk_prob=*/true, tp_.ep);
        info_.weight_bytes += L.moe.weight_bytes();
      } else {
        TANDEM_ASSIGN_OR_RETURN(auto gate,
                                r.Read(name("ffn_gate", "mlp.gate_proj")));
        TANDEM_ASSIGN_OR_RETURN(auto up, r.Read(name("ffn_up", "mlp.up_proj")));
        TANDEM_ASSIGN_OR_RETURN(auto down,
                                r.Read(name("ffn_down", "mlp.down_proj")));
        L.mlp = Mlp(gate, up, std::move(down), dim, local_ff);
        info_.weight_bytes += L.mlp.weight_bytes();
      }
      info_.weight_bytes +=
          L.attention.weight_bytes() + 2 * dim * sizeof(float);
    }
    info_.weight_bytes += table->size() * sizeof(float) + dim * sizeof(float);
    if (lm_head_.weight() != table)
      info_.weight_bytes += lm_head_.weight_bytes();
    return Status::Ok();
  }

  const ModelInfo &info() const override { return info_; }
  KvCacheSpec kv_cache_spec() const override {
    return KvCacheSpec{config_.num_layers, info_.num_kv_heads,
                       config_.head_dim};
  }

  void DummyForward() override {
    if (!NeedsLockstep()) return;
    for (LlamaLayer &L : layers_) L.moe.Forward(nullptr, nullptr, 0);
  }
  bool NeedsLockstep() const override {
    return config_.num_experts > 0 && tp_.ep.enabled();
  }

  void Forward(const ForwardContext &ctx, KvCache &kv,
               std::vector<float> &logits) override {
    CheckContext(ctx, kv);
    const int64_t n = ctx.num_tokens(), dim = config_.hidden_size;
    hidden_.resize(n * dim);
    normed_.resize(n * dim);
    delta_.resize(n * dim);
    embedding_.Forward(ctx.token_ids.data(), n, hidden_.data());
    tp_.AllReduceSum(hidden_.data(),
                     n * dim); // vocab-parallel: other ranks' rows were zeros
    for (int l = 0; l < config_.num_layers; ++l) {
      LlamaLayer &L = layers_[l];
      L.attn_norm.Forward(hidden_.data(), normed_.data(), n);
      L.attention.Forward(normed_.data(), ctx, kv.key_cache[l].data(),
                          kv.value_cache[l].data(), delta_.data());
      tp_.AllReduceSum(delta_.data(), n * dim); // o_proj is row-parallel
      AddInPlace(hidden_.data(), delta_.data(), n * dim);
      L.ffn_norm.Forward(hidden_.data(), normed_.data(), n);
      if (config_.num_experts > 0) {
        L.moe.Forward(normed_.data(), delta_.data(), n);
      } else {
        L.mlp.Forward(normed_.data(), delta_.data(), n);
      }
      tp_.AllReduceSum(delta_.data(), n * dim); // down_proj is row-parallel
      AddInPlace(hidden_.data(), delta_.data(), n * dim);
    }
    // Only the rows whose logits are wanted go through the final norm and
    // lm_head.
    const int64_t num_logits = static_cast<int64_t>(ctx.logits_indices.size());
    last_.resize(num_logits * dim);
    for (int64_t i = 0; i < num_logits; ++i) {
      const int32_t row = ctx.logits_indices[i];
      std::copy(&hidden_[row * dim], &hidden_[row * dim] + dim,
                &last_[i * dim]);
    }
    final_norm_.Forward(last_.data(), last_.data(), num_logits);
    local_logits_.resize(num_logits * lm_head_.out_features());
    lm_head_.Forward(last_.data(), local_logits_.data(), num_logits);
    GatherVocabLogits(tp_, local_logits_, num_logits, config_.vocab_size,
                      gathered_, logits);
  }

private:
  static void AddInPlace(float *x, const float *d, int64_t n) {
    for (int64_t i = 0; i < n; ++i)
      x[i] += d[i];
  }

  // The worker builds ctx; an inconsistent one is a bug there, not bad user
  // input.
  void CheckContext(const ForwardContext &ctx, const KvCache &kv) const {
    const size_t n = ctx.token_ids.size();
    TANDEM_CHECK(ctx.positions.size() == n && ctx.slot_mapping.size() == n)
        << "ForwardContext: " << n << " tokens but " << ctx.positions.size()
        << " positions, " << ctx.slot_mapping.size() << " slots";
    TANDEM_CHECK(ctx.query_start_loc.size() == ctx.seq_lens.size() + 1 &&
                 ctx.block_tables.size() == ctx.seq_lens.size())
        << "ForwardContext: " << ctx.seq_lens.size() << " seqs but "
        << ctx.query_start_loc.size() << " query_start_loc entries and "
        << ctx.block_tables.size() << " block tables";
    TANDEM_CHECK(ctx.query_start_loc.back() <= static_cast<int32_t>(n))
        << "ForwardContext: query_start_loc ends at "
        << ctx.query_start_loc.back() << " > " << n;
    TANDEM_CHECK(static_cast<int32_t>(kv.key_cache.size()) ==
                     config_.num_layers &&
                 kv.block_size == ctx.block_size)
        << "KvCache has " << kv.key_cache.size() << " layers, block_size "
        << kv.block_size << "; model has " << config_.num_layers
        << " layers, ctx block_size " << ctx.block_size;
    TANDEM_CHECK(kv.spec.num_kv_heads == info_.num_kv_heads &&
                 kv.spec.head_dim == config_.head_dim)
        << "KvCache has " << kv.spec.num_kv_heads << " KV heads of "
        << kv.spec.head_dim << "; TP rank " << tp_.rank << " holds "
        << info_.num_kv_heads << " of " << config_.head_dim;
    const int64_t num_slots =
        static_cast<int64_t>(kv.num_blocks) * kv.block_size;
    for (int64_t s : ctx.slot_mapping) {
      TANDEM_CHECK(s < num_slots)
          << "slot " << s << " beyond the KV cache's " << num_slots;
    }
    for (int32_t r : ctx.logits_indices) {
      TANDEM_CHECK(r >= 0 && r < static_cast<int32_t>(n))
          << "logits index " << r << " of " << n;
    }
  }

  LlamaConfig config_;
  TpContext tp_;
  ModelInfo info_;
  Embedding embedding_;
  std::vector<LlamaLayer> layers_;
  RmsNormLayer final_norm_;
  Linear lm_head_;
  std::vector<float> hidden_, normed_, delta_,
      last_; // scratch, reused across steps
  std::vector<float> local_logits_,
      gathered_; // scratch: vocab-parallel lm_head
};

} // namespace

Result<std::unique_ptr<Model>> LoadLlama(const LlamaConfig &config,
                                         const WeightSource &source,
                                         WeightFormat format,
                                         const TpContext &tp) {
  TANDEM_RETURN_IF_ERROR(config.Validate());
  auto model = std::make_unique<LlamaModel>(config, tp);
  TANDEM_RETURN_IF_ERROR(model->Load(source, format));
  return std::unique_ptr<Model>(std::move(model));
}

} // namespace tandem::model
