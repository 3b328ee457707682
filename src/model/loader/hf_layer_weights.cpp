#include "model/loader/hf_layer_weights.h"

#include <memory>
#include <utility>
#include <vector>

namespace tandem::model {

void DeclareHfAttention(ShardedReader& r, const std::string& prefix, const AttentionDims& dims,
                        const HfAttentionOptions& options) {
  const int64_t hidden = dims.hidden_size, hd = dims.head_dim;
  const int64_t q_size = dims.num_heads * hd, kv_size = dims.num_kv_heads * hd;
  r.Declare(prefix + ".q_proj.weight", {q_size, hidden}, ColumnParallel("query heads", 0, hd));
  r.Declare(prefix + ".k_proj.weight", {kv_size, hidden}, KvHeadParallel(hd));
  r.Declare(prefix + ".v_proj.weight", {kv_size, hidden}, KvHeadParallel(hd));
  r.Declare(prefix + ".o_proj.weight", {hidden, q_size}, RowParallel("query heads", hd));
  if (options.qkv_bias) {
    r.Declare(prefix + ".q_proj.bias", {q_size}, ColumnParallel("query heads", 0, hd));
    r.Declare(prefix + ".k_proj.bias", {kv_size}, KvHeadParallel(hd));
    r.Declare(prefix + ".v_proj.bias", {kv_size}, KvHeadParallel(hd));
  }
  if (options.o_bias) r.Declare(prefix + ".o_proj.bias", {hidden}, RowParallelBias());
  if (options.qk_norm) {
    r.Declare(prefix + ".q_norm.weight", {hd}, Replicated());
    r.Declare(prefix + ".k_norm.weight", {hd}, Replicated());
  }
}

Result<AttentionWeights> LoadHfAttention(const ShardedReader& r, const std::string& prefix,
                                         const HfAttentionOptions& options) {
  AttentionWeights w;
  TANDEM_ASSIGN_OR_RETURN(w.q, r.ReadStored(prefix + ".q_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.k, r.ReadStored(prefix + ".k_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.v, r.ReadStored(prefix + ".v_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(w.o, r.ReadStored(prefix + ".o_proj.weight"));
  if (options.qkv_bias) {
    TANDEM_ASSIGN_OR_RETURN(w.q_bias, r.Read(prefix + ".q_proj.bias"));
    TANDEM_ASSIGN_OR_RETURN(w.k_bias, r.Read(prefix + ".k_proj.bias"));
    TANDEM_ASSIGN_OR_RETURN(w.v_bias, r.Read(prefix + ".v_proj.bias"));
  }
  if (options.o_bias) {
    TANDEM_ASSIGN_OR_RETURN(w.o_bias, r.Read(prefix + ".o_proj.bias"));
  }
  if (options.qk_norm) {
    TANDEM_ASSIGN_OR_RETURN(w.q_norm, r.Read(prefix + ".q_norm.weight"));
    TANDEM_ASSIGN_OR_RETURN(w.k_norm, r.Read(prefix + ".k_norm.weight"));
    w.qk_norm_eps = options.eps;
  }
  return w;
}

void DeclareHfMlp(ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff) {
  r.Declare(prefix + ".gate_proj.weight", {ff, dim}, ColumnParallel("intermediate rows"));
  r.Declare(prefix + ".up_proj.weight", {ff, dim}, ColumnParallel("intermediate rows"));
  r.Declare(prefix + ".down_proj.weight", {dim, ff}, RowParallel("intermediate columns"));
}

Result<Mlp> LoadHfMlp(const ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff) {
  TANDEM_ASSIGN_OR_RETURN(auto gate, r.ReadStored(prefix + ".gate_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto up, r.ReadStored(prefix + ".up_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto down, r.ReadStored(prefix + ".down_proj.weight"));
  TANDEM_CHECK(gate.dim(1) == dim && gate.dim(0) == ff / r.tp().size)
      << prefix << ".gate_proj shard is " << tensor::ShapeToString(gate.shape());
  return Mlp(gate, up, std::move(down));
}

void DeclareHfMoe(ShardedReader& r, const std::string& prefix, int64_t num_experts, int64_t dim,
                  int64_t ff) {
  r.Declare(prefix + ".gate.weight", {num_experts, dim}, Replicated());
  const EpContext& ep = r.tp().ep;
  if (!ep.enabled()) {
    for (int64_t e = 0; e < num_experts; ++e) {
      DeclareHfMlp(r, prefix + ".experts." + std::to_string(e), dim, ff);
    }
    return;
  }
  // Expert parallel: this rank's experts, whole (vLLM FusedMoE with EP: no TP split inside).
  const ExpertRange local = LocalExpertsOf(num_experts, ep.rank, ep.size);
  for (int64_t e = local.first; e < local.first + local.count; ++e) {
    const std::string p = prefix + ".experts." + std::to_string(e);
    r.Declare(p + ".gate_proj.weight", {ff, dim}, Replicated());
    r.Declare(p + ".up_proj.weight", {ff, dim}, Replicated());
    r.Declare(p + ".down_proj.weight", {dim, ff}, Replicated());
  }
}

namespace {

// The experts' tensors are stacked into one multiply (tensor::ConcatRows): they must share one
// int8 scheme (tensor::SameInt8Scheme), else kInvalidArgument naming `what` and the first part
// that differs, instead of ConcatRows' abort.
Status CheckStackable(const std::vector<const tensor::Tensor*>& parts, const std::string& what) {
  const tensor::Int8Quant* first = parts.empty() ? nullptr : parts[0]->int8_quant().get();
  for (size_t i = 1; i < parts.size(); ++i) {
    const tensor::Int8Quant* q = parts[i]->int8_quant().get();
    if (!tensor::SameInt8Scheme(first, q)) {
      return InvalidArgument(
          "the experts of " + what + " are stacked into one matmul but part " + std::to_string(i) +
          " is " + (q ? q->name() : "FLOAT") + " and part 0 is " +
          (first ? first->name() : "FLOAT") +
          (q && first ? " (or their static input_scale / input_offset differ)" : "") +
          "; every routed expert of a layer must share one quantization (per-expert static "
          "activation parameters are not supported)");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Moe> LoadHfMoe(const ShardedReader& r, const std::string& prefix, int64_t num_experts,
                      int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob) {
  TANDEM_ASSIGN_OR_RETURN(auto router, r.Read(prefix + ".gate.weight"));
  // Moe takes the experts stacked in their stored dtype: gate_up [L, 2·ff', dim] (per expert
  // gate rows then up rows) and down [L, dim, ff'], where ff' is this rank's share of each
  // expert's intermediate size (all of it with EP) and L the experts held here (all without EP).
  const EpContext& ep = r.tp().ep;
  const ExpertRange local =
      ep.enabled() ? LocalExpertsOf(num_experts, ep.rank, ep.size) : ExpertRange{0, num_experts};
  const int64_t local_ff = ep.enabled() ? ff : ff / r.tp().size;
  std::vector<tensor::Tensor> parts;  // g0, u0, g1, u1, ... then d0, d1, ...
  std::vector<tensor::Tensor> downs;
  for (int64_t e = local.first; e < local.first + local.count; ++e) {
    const std::string p = prefix + ".experts." + std::to_string(e);
    TANDEM_ASSIGN_OR_RETURN(auto g, r.ReadStored(p + ".gate_proj.weight"));
    TANDEM_ASSIGN_OR_RETURN(auto u, r.ReadStored(p + ".up_proj.weight"));
    TANDEM_ASSIGN_OR_RETURN(auto d, r.ReadStored(p + ".down_proj.weight"));
    parts.push_back(std::move(g));
    parts.push_back(std::move(u));
    downs.push_back(std::move(d));
  }
  std::vector<const tensor::Tensor*> gate_up_parts, down_parts;
  for (const auto& t : parts) gate_up_parts.push_back(&t);
  for (const auto& t : downs) down_parts.push_back(&t);
  TANDEM_RETURN_IF_ERROR(CheckStackable(gate_up_parts, prefix + ".experts.*.gate_proj/up_proj"));
  TANDEM_RETURN_IF_ERROR(CheckStackable(down_parts, prefix + ".experts.*.down_proj"));
  tensor::Tensor gate_up = tensor::ConcatRows(gate_up_parts);  // [L·2·ff', dim]
  tensor::Tensor down = tensor::ConcatRows(down_parts);        // [L·dim, ff']
  gate_up.Reshape({local.count, 2 * local_ff, dim});
  down.Reshape({local.count, dim, local_ff});
  return Moe(std::move(router), std::move(gate_up), std::move(down), num_experts, top_k, dim,
             local_ff, norm_topk_prob, ep);
}

void DeclareHfSharedExpert(ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff) {
  if (r.tp().ep.enabled()) {
    // Expert parallel: whole on every rank, run over the rows this TP rank dispatches.
    const std::string p = prefix + ".shared_expert";
    r.Declare(p + ".gate_proj.weight", {ff, dim}, Replicated());
    r.Declare(p + ".up_proj.weight", {ff, dim}, Replicated());
    r.Declare(p + ".down_proj.weight", {dim, ff}, Replicated());
  } else {
    DeclareHfMlp(r, prefix + ".shared_expert", dim, ff);
  }
  r.Declare(prefix + ".shared_expert_gate.weight", {1, dim}, Replicated());
}

Result<SharedExpert> LoadHfSharedExpert(const ShardedReader& r, const std::string& prefix,
                                        int64_t dim, int64_t ff) {
  const EpContext& ep = r.tp().ep;
  const std::string p = prefix + ".shared_expert";
  TANDEM_ASSIGN_OR_RETURN(auto gate_proj, r.Read(p + ".gate_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto up_proj, r.Read(p + ".up_proj.weight"));
  TANDEM_ASSIGN_OR_RETURN(auto down_proj, r.Read(p + ".down_proj.weight"));
  Mlp mlp(gate_proj, up_proj, std::move(down_proj), dim, ep.enabled() ? ff : ff / r.tp().size);
  TANDEM_ASSIGN_OR_RETURN(auto gate, r.Read(prefix + ".shared_expert_gate.weight"));
  return SharedExpert(std::move(mlp), std::move(gate), dim, ep);
}

void DeclareHfLayerNorms(ShardedReader& r, int32_t layer, int64_t dim) {
  const std::string p = "model.layers." + std::to_string(layer);
  r.Declare(p + ".input_layernorm.weight", {dim}, Replicated());
  r.Declare(p + ".post_attention_layernorm.weight", {dim}, Replicated());
}

Status LoadHfLayerNorms(const ShardedReader& r, int32_t layer, float eps, DecoderLayer& out) {
  const std::string p = "model.layers." + std::to_string(layer);
  TANDEM_ASSIGN_OR_RETURN(out.attn_norm.weight, r.Read(p + ".input_layernorm.weight"));
  TANDEM_ASSIGN_OR_RETURN(out.ffn_norm.weight, r.Read(p + ".post_attention_layernorm.weight"));
  out.attn_norm.eps = out.ffn_norm.eps = eps;
  return Status::Ok();
}

void DeclareHfEmbeddingAndHead(ShardedReader& r, int64_t vocab_size, int64_t dim, bool tied) {
  r.Declare("model.embed_tokens.weight", {vocab_size, dim}, VocabParallel());
  if (!tied) r.Declare("lm_head.weight", {vocab_size, dim}, VocabParallel());
  r.Declare("model.norm.weight", {dim}, Replicated());
}

Status LoadHfEmbeddingAndHead(const ShardedReader& r, int64_t vocab_size, int64_t dim, bool tied,
                              float eps, DecoderWeights& out) {
  const LocalVocab v = LocalVocabOf(vocab_size, r.tp());
  TANDEM_ASSIGN_OR_RETURN(auto embd, r.ReadEmbeddingTable("model.embed_tokens.weight"));
  auto table = std::make_shared<const tensor::Tensor>(std::move(embd));
  out.embedding = Embedding(table, vocab_size, dim, v);
  if (tied) {
    out.lm_head = Linear(table);
  } else {
    TANDEM_ASSIGN_OR_RETURN(auto head, r.ReadStored("lm_head.weight"));
    out.lm_head = Linear(std::move(head));
  }
  TANDEM_ASSIGN_OR_RETURN(out.final_norm.weight, r.Read("model.norm.weight"));
  out.final_norm.eps = eps;
  return Status::Ok();
}

}  // namespace tandem::model
