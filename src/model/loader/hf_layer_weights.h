// Loaders of the Hugging Face-named weights of the shared layers (attention, dense MLP, sparse
// MoE, shared expert, norms, embedding/lm_head), so each arch/ file only says which blocks a
// layer has. Every weight's shape is checked against the config (LoadWeight): a missing or
// misshaped tensor is kInvalidArgument naming it, the expected and the found shape.
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
#include "model/loader/weight_source.h"

namespace tandem::model {

struct HfAttentionOptions {
  bool qkv_bias = false;  // read q_proj/k_proj/v_proj .bias
  bool o_bias = false;    // read o_proj.bias
  bool qk_norm = false;   // read q_norm/k_norm .weight [head_dim]
  float eps = 1e-6f;      // q/k norm epsilon (the model's rms_norm_eps)
};

// `prefix` = "model.layers.{l}.self_attn".
Result<AttentionWeights> LoadHfAttention(const WeightSource& src, const std::string& prefix,
                                         const AttentionDims& dims,
                                         const HfAttentionOptions& options);

// SwiGLU MLP at `prefix` ("model.layers.{l}.mlp" or "...mlp.shared_expert"): gate_proj/up_proj
// [ff, dim], down_proj [dim, ff].
Result<Mlp> LoadHfMlp(const WeightSource& src, const std::string& prefix, int64_t dim, int64_t ff);

// Sparse MoE at `prefix` ("model.layers.{l}.mlp"): router gate.weight [num_experts, dim] and
// experts.{e}.{gate,up,down}_proj.weight of width ff.
Result<Moe> LoadHfMoe(const WeightSource& src, const std::string& prefix, int64_t num_experts,
                      int64_t top_k, int64_t dim, int64_t ff, bool norm_topk_prob);

// Qwen2-MoE shared expert at `prefix` ("model.layers.{l}.mlp"): shared_expert.* MLP of width ff
// and shared_expert_gate.weight [1, dim].
Result<SharedExpert> LoadHfSharedExpert(const WeightSource& src, const std::string& prefix,
                                        int64_t dim, int64_t ff);

// input_layernorm / post_attention_layernorm [dim] of "model.layers.{layer}".
Status LoadHfLayerNorms(const WeightSource& src, int32_t layer, int64_t dim, float eps,
                        DecoderLayer& out);

// model.embed_tokens.weight [vocab, dim], model.norm.weight [dim] and lm_head.weight
// [vocab, dim] — or, when `tied`, the embedding table as lm_head (lm_head.weight ignored, as HF).
Status LoadHfEmbeddingAndHead(const WeightSource& src, int64_t vocab_size, int64_t dim, bool tied,
                              float eps, DecoderWeights& out);

}  // namespace tandem::model
