// Loaders of the Hugging Face-named weights of the shared layers (attention, dense MLP, sparse
// MoE, shared expert, norms, embedding/lm_head), so each arch/ file only says which blocks a
// layer has. Each block has a Declare* (names, full shapes and TP split rules, see
// sharded_reader.h) and a Load* (this TP rank's shards, built into the layer): an arch declares
// everything, calls ShardedReader::CheckAll(), then loads. A missing or misshaped tensor, or a
// split that does not divide the TP size, is kInvalidArgument naming it.
// Names: HF transformers Qwen2/Qwen3/Qwen2-MoE/Qwen3-MoE state dicts
// ("model.layers.{l}.self_attn.q_proj.weight", "model.layers.{l}.mlp.experts.{e}.up_proj.weight").
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/decoder_model.h"
#include "model/layers/attention.h"
#include "model/layers/mlp.h"
#include "model/layers/moe.h"
#include "model/layers/shared_expert.h"
#include "model/loader/sharded_reader.h"

namespace tandem::model {

struct HfAttentionOptions {
  bool qkv_bias = false;  // read q_proj/k_proj/v_proj .bias
  bool o_bias = false;    // read o_proj.bias
  bool qk_norm = false;   // read q_norm/k_norm .weight [head_dim]
  float eps = 1e-6f;      // q/k norm epsilon (the model's rms_norm_eps)
};

// `prefix` = "model.layers.{l}.self_attn"; `dims`: the full (unsharded) model's.
// q_proj: column-parallel by query heads; k/v_proj: by KV heads (replicated when fewer than TP
// ranks); o_proj: row-parallel by query heads; o bias on rank 0 only; q/k norm replicated.
void DeclareHfAttention(ShardedReader& r, const std::string& prefix, const AttentionDims& dims,
                        const HfAttentionOptions& options);
// This rank's attention weights (q/k/v rows of its heads, o columns of its query heads).
Result<AttentionWeights> LoadHfAttention(const ShardedReader& r, const std::string& prefix,
                                         const HfAttentionOptions& options);

// SwiGLU MLP at `prefix` ("model.layers.{l}.mlp" or "...mlp.shared_expert"): gate_proj/up_proj
// [ff, dim] column-parallel, down_proj [dim, ff] row-parallel (the caller all-reduces).
void DeclareHfMlp(ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff);
Result<Mlp> LoadHfMlp(const ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff);

// Sparse MoE at `prefix` ("model.layers.{l}.mlp"): router gate.weight [num_experts, dim]
// (replicated) and experts.{e}.{gate,up,down}_proj.weight of width ff, each expert split over
// the TP ranks like the dense MLP — or, with expert parallel (r.tp().ep), only this EP rank's
// experts, whole.
void DeclareHfMoe(ShardedReader& r, const std::string& prefix, int64_t num_experts, int64_t dim,
                  int64_t ff);
Result<Moe> LoadHfMoe(const ShardedReader& r, const std::string& prefix, int64_t num_experts,
                      int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob);

// Qwen2-MoE shared expert at `prefix` ("model.layers.{l}.mlp"): shared_expert.* MLP of width ff
// (split as the dense MLP; whole with expert parallel, see SharedExpert) and
// shared_expert_gate.weight [1, dim] (replicated).
void DeclareHfSharedExpert(ShardedReader& r, const std::string& prefix, int64_t dim, int64_t ff);
Result<SharedExpert> LoadHfSharedExpert(const ShardedReader& r, const std::string& prefix,
                                        int64_t dim, int64_t ff);

// input_layernorm / post_attention_layernorm [dim] of "model.layers.{layer}" (replicated).
void DeclareHfLayerNorms(ShardedReader& r, int32_t layer, int64_t dim);
Status LoadHfLayerNorms(const ShardedReader& r, int32_t layer, float eps, DecoderLayer& out);

// model.embed_tokens.weight [vocab, dim] and lm_head.weight [vocab, dim] (vocab-parallel) — or,
// when `tied`, the embedding slice as lm_head (lm_head.weight ignored, as HF) — and
// model.norm.weight [dim] (replicated).
void DeclareHfEmbeddingAndHead(ShardedReader& r, int64_t vocab_size, int64_t dim, bool tied);
Status LoadHfEmbeddingAndHead(const ShardedReader& r, int64_t vocab_size, int64_t dim, bool tied,
                              float eps, DecoderWeights& out);

}  // namespace tandem::model
