// Llama architecture: read config → declare + load weights → forward.
// Reference: HF transformers modeling_llama.py (LlamaForCausalLM), llama.cpp
// src/models/llama.cpp (Mixtral-style MoE via ffn_gate_inp / ffn_*_exps),
// llama2.c run.c. RoPE layout: GGUF (llama.cpp convert) stores q/k rows
// permuted per head so that interleaved-pair rotation equals HF's rotate_half;
// we undo that permutation at load, keep every weight in HF layout and use
// rotate_half (kNeox) for both formats, so GGUF and HF give identical logits.
// Forward: the shared DecoderModel (pre-norm attention + SwiGLU MLP or MoE per layer).
#include "model/arch/llama.h"

#include <algorithm>

#include "model/decoder_model.h"
#include "model/layers/attention.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/loader/sharded_reader.h"

namespace tandem::model {
namespace {

// Inverse of llama.cpp convert_hf_to_gguf's LlamaModel.permute: GGUF row h*hd +
// 2j + half becomes HF row h*hd + half*hd/2 + j (see
// stories260k-hf/PROVENANCE.md).
// Rows move whole, so this works for every dtype.
tensor::Tensor UnpermuteRope(const tensor::Tensor& w, int64_t n_head, int64_t head_dim) {
  std::vector<int64_t> src_row(n_head * head_dim);
  for (int64_t h = 0; h < n_head; ++h) {
    for (int64_t j = 0; j < head_dim / 2; ++j) {
      for (int64_t half = 0; half < 2; ++half) {
        src_row[h * head_dim + half * head_dim / 2 + j] = h * head_dim + 2 * j + half;
      }
    }
  }
  return tensor::GatherRows(w, src_row);
}

std::string LayerName(WeightFormat f, int layer, const char* gguf, const char* hf) {
  const std::string n = std::to_string(layer);
  return f == WeightFormat::kGguf ? "blk." + n + "." + gguf + ".weight"
                                  : "model.layers." + n + "." + hf + ".weight";
}

ModelInfo LlamaInfo(const LlamaConfig& c) { return ModelInfoFromConfig(c); }

// 2a. Declares every weight with its TP split (vLLM LlamaForCausalLM / MixtralForCausalLM,
// with or without expert parallel) so that all are checked against the file headers before
// any is read.
void DeclareLlama(const LlamaConfig& c, WeightFormat f, bool tied, const TpContext& tp,
                  ShardedReader& r) {
  const bool gguf = f == WeightFormat::kGguf;
  const int64_t dim = c.hidden_size, hd = c.head_dim, ff = c.intermediate_size;
  const int64_t q_size = c.num_heads * hd, kv_size = c.num_kv_heads * hd, e = c.num_experts;
  r.Declare(gguf ? "token_embd.weight" : "model.embed_tokens.weight", {c.vocab_size, dim},
            VocabParallel());
  if (!tied) {
    r.Declare(gguf ? "output.weight" : "lm_head.weight", {c.vocab_size, dim}, VocabParallel());
  }
  r.Declare(gguf ? "output_norm.weight" : "model.norm.weight", {dim}, Replicated());
  for (int l = 0; l < c.num_layers; ++l) {
    auto name = [&](const char* g, const char* h) { return LayerName(f, l, g, h); };
    r.Declare(name("attn_norm", "input_layernorm"), {dim}, Replicated());
    r.Declare(name("ffn_norm", "post_attention_layernorm"), {dim}, Replicated());
    r.Declare(name("attn_q", "self_attn.q_proj"), {q_size, dim},
              ColumnParallel("query heads", 0, hd));
    r.Declare(name("attn_k", "self_attn.k_proj"), {kv_size, dim}, KvHeadParallel(hd));
    r.Declare(name("attn_v", "self_attn.v_proj"), {kv_size, dim}, KvHeadParallel(hd));
    r.Declare(name("attn_output", "self_attn.o_proj"), {dim, q_size},
              RowParallel("query heads", hd));
    if (e > 0) {
      r.Declare(name("ffn_gate_inp", ""), {e, dim}, Replicated());
      // Expert parallel: this rank's experts, whole; else every expert split over TP.
      const bool ep = tp.ep.enabled();
      r.Declare(name("ffn_gate_exps", ""), {e, ff, dim},
                ep ? ExpertParallelRule() : ColumnParallel("intermediate rows", 1));
      r.Declare(name("ffn_up_exps", ""), {e, ff, dim},
                ep ? ExpertParallelRule() : ColumnParallel("intermediate rows", 1));
      r.Declare(name("ffn_down_exps", ""), {e, dim, ff},
                ep ? ExpertParallelRule() : RowParallel("intermediate columns"));
    } else {
      r.Declare(name("ffn_gate", "mlp.gate_proj"), {ff, dim}, ColumnParallel("intermediate rows"));
      r.Declare(name("ffn_up", "mlp.up_proj"), {ff, dim}, ColumnParallel("intermediate rows"));
      r.Declare(name("ffn_down", "mlp.down_proj"), {dim, ff}, RowParallel("intermediate columns"));
    }
  }
}

// 2b. Reads layer `l`'s shard: norms, attention (GGUF q/k rows un-permuted), MLP or MoE.
Status LoadLlamaLayer(const LlamaConfig& c, WeightFormat f, int l, const TpContext& tp,
                      ShardedReader& r, DecoderLayer& layer) {
  auto name = [&](const char* g, const char* h) { return LayerName(f, l, g, h); };
  const int64_t dim = c.hidden_size, hd = c.head_dim;
  TANDEM_ASSIGN_OR_RETURN(layer.attn_norm.weight, r.Read(name("attn_norm", "input_layernorm")));
  TANDEM_ASSIGN_OR_RETURN(layer.ffn_norm.weight,
                          r.Read(name("ffn_norm", "post_attention_layernorm")));
  layer.attn_norm.eps = layer.ffn_norm.eps = c.rms_norm_eps;
  TANDEM_ASSIGN_OR_RETURN(auto wq, r.ReadStored(name("attn_q", "self_attn.q_proj")));
  TANDEM_ASSIGN_OR_RETURN(auto wk, r.ReadStored(name("attn_k", "self_attn.k_proj")));
  TANDEM_ASSIGN_OR_RETURN(auto wv, r.ReadStored(name("attn_v", "self_attn.v_proj")));
  TANDEM_ASSIGN_OR_RETURN(auto wo, r.ReadStored(name("attn_output", "self_attn.o_proj")));
  const AttentionDims dims =
      LocalAttentionDims(AttentionDims{c.hidden_size, c.num_heads, c.num_kv_heads, c.head_dim}, tp);
  if (f == WeightFormat::kGguf) {  // the permutation is within each head: whole-head shards
    wq = UnpermuteRope(wq, dims.num_heads, hd);
    wk = UnpermuteRope(wk, dims.num_kv_heads, hd);
  }
  const RotaryEmbedding rope{c.head_dim, c.rope_theta, kernels::RopeStyle::kNeox};
  layer.mixer = std::make_unique<Attention>(dims, wq, wk, wv, std::move(wo), rope);
  if (c.num_experts > 0) {
    TANDEM_ASSIGN_OR_RETURN(auto router, r.Read(name("ffn_gate_inp", "")));
    TANDEM_ASSIGN_OR_RETURN(auto gate, r.ReadStored(name("ffn_gate_exps", "")));  // [L, ff', dim]
    TANDEM_ASSIGN_OR_RETURN(auto up, r.ReadStored(name("ffn_up_exps", "")));      // [L, ff', dim]
    TANDEM_ASSIGN_OR_RETURN(auto down, r.ReadStored(name("ffn_down_exps", "")));  // [L, dim, ff']
    const int64_t experts = gate.dim(0), local_ff = gate.dim(1);
    // Per expert its gate rows then its up rows, in the stored dtype (row moves).
    gate.Reshape({experts * local_ff, dim});
    up.Reshape({experts * local_ff, dim});
    std::vector<int64_t> rows;
    for (int64_t x = 0; x < experts; ++x) {
      for (int64_t half = 0; half < 2; ++half) {
        for (int64_t f = 0; f < local_ff; ++f)
          rows.push_back(half * experts * local_ff + x * local_ff + f);
      }
    }
    tensor::Tensor gate_up = tensor::GatherRows(tensor::ConcatRows({&gate, &up}), rows);
    gate_up.Reshape({experts, 2 * local_ff, dim});
    layer.ffn = std::make_unique<Moe>(std::move(router), std::move(gate_up), std::move(down),
                                      c.num_experts, c.num_experts_per_tok, dim, local_ff,
                                      /*norm_topk_prob=*/true, tp.ep);
    return Status::Ok();
  }
  TANDEM_ASSIGN_OR_RETURN(auto gate, r.ReadStored(name("ffn_gate", "mlp.gate_proj")));
  TANDEM_ASSIGN_OR_RETURN(auto up, r.ReadStored(name("ffn_up", "mlp.up_proj")));
  TANDEM_ASSIGN_OR_RETURN(auto down, r.ReadStored(name("ffn_down", "mlp.down_proj")));
  layer.ffn = std::make_unique<Mlp>(gate, up, std::move(down));
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Model>> LoadLlama(const LlamaConfig& c, const WeightSource& src,
                                         WeightFormat f, const TpContext& tp) {
  // 1. Config.
  TANDEM_RETURN_IF_ERROR(c.Validate());
  const bool gguf = f == WeightFormat::kGguf;
  if (c.num_experts > 0 && !gguf) {
    return Unimplemented("MoE weights from an HF LlamaForCausalLM folder");
  }
  const std::string embd_name = gguf ? "token_embd.weight" : "model.embed_tokens.weight";
  const std::string head_name = gguf ? "output.weight" : "lm_head.weight";
  const std::string norm_name = gguf ? "output_norm.weight" : "model.norm.weight";
  const bool tied = !src.HasTensor(head_name) && c.tie_word_embeddings;
  // 2. Weights: declare and check every one, then read this rank's shards.
  ShardedReader r(src, tp);
  DeclareLlama(c, f, tied, tp, r);
  TANDEM_RETURN_IF_ERROR(r.CheckAll());
  DecoderWeights w;
  const LocalVocab vocab = LocalVocabOf(c.vocab_size, tp);
  TANDEM_ASSIGN_OR_RETURN(auto embd, r.ReadEmbeddingTable(embd_name));
  auto table = std::make_shared<const tensor::Tensor>(std::move(embd));
  w.embedding = Embedding(table, c.vocab_size, c.hidden_size, vocab);
  if (tied) {
    w.lm_head = Linear(table);
  } else {
    TANDEM_ASSIGN_OR_RETURN(auto head, r.ReadStored(head_name));
    w.lm_head = Linear(std::move(head));
  }
  TANDEM_ASSIGN_OR_RETURN(w.final_norm.weight, r.Read(norm_name));
  w.final_norm.eps = c.rms_norm_eps;
  w.layers.resize(c.num_layers);
  for (int l = 0; l < c.num_layers; ++l) {
    TANDEM_RETURN_IF_ERROR(LoadLlamaLayer(c, f, l, tp, r, w.layers[l]));
  }
  // 3. Forward: the shared decoder stack.
  return std::unique_ptr<Model>(std::make_unique<DecoderModel>(LlamaInfo(c), std::move(w), tp));
}

}  // namespace tandem::model
