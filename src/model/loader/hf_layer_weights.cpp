#include "model/loader/hf_layer_weights.h"

#include <memory>
#include <utility>
#include <vector>

namespace tandem::model {

Result<AttentionWeights> LoadHfAttention(const WeightSource& src, const std::string& prefix,
                                         const AttentionDims& dims,
                                         const HfAttentionOptions& options) {
  const int64_t hidden = dims.hidden_size, hd = dims.head_dim;
  const int64_t q_size = dims.num_heads * hd, kv_size = dims.num_kv_heads * hd;
  AttentionWeights w;
  TANDEM_ASSIGN_OR_RETURN(w.q, LoadWeight(src, prefix + ".q_proj.weight", {q_size, hidden}));
  TANDEM_ASSIGN_OR_RETURN(w.k, LoadWeight(src, prefix + ".k_proj.weight", {kv_size, hidden}));
  TANDEM_ASSIGN_OR_RETURN(w.v, LoadWeight(src, prefix + ".v_proj.weight", {kv_size, hidden}));
  TANDEM_ASSIGN_OR_RETURN(w.o, LoadWeight(src, prefix + ".o_proj.weight", {hidden, q_size}));
  if (options.qkv_bias) {
    TANDEM_ASSIGN_OR_RETURN(w.q_bias, LoadWeight(src, prefix + ".q_proj.bias", {q_size}));
    TANDEM_ASSIGN_OR_RETURN(w.k_bias, LoadWeight(src, prefix + ".k_proj.bias", {kv_size}));
    TANDEM_ASSIGN_OR_RETURN(w.v_bias, LoadWeight(src, prefix + ".v_proj.bias", {kv_size}));
  }
  if (options.o_bias) {
    TANDEM_ASSIGN_OR_RETURN(w.o_bias, LoadWeight(src, prefix + ".o_proj.bias", {hidden}));
  }
  if (options.qk_norm) {
    TANDEM_ASSIGN_OR_RETURN(w.q_norm, LoadWeight(src, prefix + ".q_norm.weight", {hd}));
    TANDEM_ASSIGN_OR_RETURN(w.k_norm, LoadWeight(src, prefix + ".k_norm.weight", {hd}));
    w.qk_norm_eps = options.eps;
  }
  return w;
}

Result<Mlp> LoadHfMlp(const WeightSource& src, const std::string& prefix, int64_t dim, int64_t ff) {
  TANDEM_ASSIGN_OR_RETURN(auto gate, LoadWeight(src, prefix + ".gate_proj.weight", {ff, dim}));
  TANDEM_ASSIGN_OR_RETURN(auto up, LoadWeight(src, prefix + ".up_proj.weight", {ff, dim}));
  TANDEM_ASSIGN_OR_RETURN(auto down, LoadWeight(src, prefix + ".down_proj.weight", {dim, ff}));
  return Mlp(gate, up, std::move(down), dim, ff);
}

Result<Moe> LoadHfMoe(const WeightSource& src, const std::string& prefix, int64_t num_experts,
                      int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob) {
  TANDEM_ASSIGN_OR_RETURN(auto router,
                          LoadWeight(src, prefix + ".gate.weight", {num_experts, dim}));
  // Moe takes every expert's matrices stacked: [num_experts][ff][dim] and [num_experts][dim][ff].
  std::vector<float> gate, up, down;
  gate.reserve(num_experts * ff * dim);
  up.reserve(num_experts * ff * dim);
  down.reserve(num_experts * dim * ff);
  for (int64_t e = 0; e < num_experts; ++e) {
    const std::string p = prefix + ".experts." + std::to_string(e);
    TANDEM_ASSIGN_OR_RETURN(auto g, LoadWeight(src, p + ".gate_proj.weight", {ff, dim}));
    TANDEM_ASSIGN_OR_RETURN(auto u, LoadWeight(src, p + ".up_proj.weight", {ff, dim}));
    TANDEM_ASSIGN_OR_RETURN(auto d, LoadWeight(src, p + ".down_proj.weight", {dim, ff}));
    gate.insert(gate.end(), g.begin(), g.end());
    up.insert(up.end(), u.begin(), u.end());
    down.insert(down.end(), d.begin(), d.end());
  }
  return Moe(std::move(router), gate, up, std::move(down), num_experts, top_k, dim, ff,
             norm_topk_prob);
}

Result<SharedExpert> LoadHfSharedExpert(const WeightSource& src, const std::string& prefix,
                                        int64_t dim, int64_t ff) {
  TANDEM_ASSIGN_OR_RETURN(Mlp mlp, LoadHfMlp(src, prefix + ".shared_expert", dim, ff));
  TANDEM_ASSIGN_OR_RETURN(auto gate,
                          LoadWeight(src, prefix + ".shared_expert_gate.weight", {1, dim}));
  return SharedExpert(std::move(mlp), std::move(gate), dim);
}

Status LoadHfLayerNorms(const WeightSource& src, int32_t layer, int64_t dim, float eps,
                        DecoderLayer& out) {
  const std::string p = "model.layers." + std::to_string(layer);
  TANDEM_ASSIGN_OR_RETURN(out.attn_norm.weight,
                          LoadWeight(src, p + ".input_layernorm.weight", {dim}));
  TANDEM_ASSIGN_OR_RETURN(out.ffn_norm.weight,
                          LoadWeight(src, p + ".post_attention_layernorm.weight", {dim}));
  out.attn_norm.eps = out.ffn_norm.eps = eps;
  return Status::Ok();
}

Status LoadHfEmbeddingAndHead(const WeightSource& src, int64_t vocab_size, int64_t dim, bool tied,
                              float eps, DecoderWeights& out) {
  TANDEM_ASSIGN_OR_RETURN(auto embd,
                          LoadWeight(src, "model.embed_tokens.weight", {vocab_size, dim}));
  auto table = std::make_shared<const std::vector<float>>(std::move(embd));
  out.embedding = Embedding(table, vocab_size, dim);
  if (tied) {
    out.lm_head = Linear(table, vocab_size, dim);
  } else {
    TANDEM_ASSIGN_OR_RETURN(auto head, LoadWeight(src, "lm_head.weight", {vocab_size, dim}));
    out.lm_head = Linear(std::move(head), vocab_size, dim);
  }
  TANDEM_ASSIGN_OR_RETURN(out.final_norm.weight, LoadWeight(src, "model.norm.weight", {dim}));
  out.final_norm.eps = eps;
  return Status::Ok();
}

}  // namespace tandem::model
