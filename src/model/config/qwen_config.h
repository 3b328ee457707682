// QwenConfig: the hyper-parameters of the Qwen decoder family read from a Hugging Face
// config.json: Qwen3ForCausalLM (dense, q/k norm), Qwen3MoeForCausalLM (sparse MoE, q/k norm) and
// Qwen2MoeForCausalLM (sparse MoE + sigmoid-gated shared expert, q/k/v bias).
// Reference: HF transformers configuration_qwen3.py, configuration_qwen3_moe.py,
// configuration_qwen2_moe.py (field names and defaults).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"

namespace tandem::model {

struct QwenConfig {
  std::string architecture;  // "Qwen3ForCausalLM" | "Qwen3MoeForCausalLM" | "Qwen2MoeForCausalLM"
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t num_layers = 0;         // num_hidden_layers
  int32_t num_heads = 0;          // num_attention_heads
  int32_t num_kv_heads = 0;       // num_key_value_heads (default num_heads)
  int32_t head_dim = 0;           // may differ from hidden_size / num_heads (Qwen3)
  int32_t intermediate_size = 0;  // FFN width of dense layers
  int32_t max_position_embeddings = 0;
  float rope_theta = 10000.0f;  // NeoX (rotate_half) RoPE over the full head_dim
  float rms_norm_eps = 1e-6f;
  bool tie_word_embeddings = false;  // no lm_head.weight: logits use model.embed_tokens.weight
  bool qk_norm = false;   // Qwen3*: RMSNorm over head_dim of each q and k head, before RoPE
  bool qkv_bias = false;  // q/k/v projections have a bias (Qwen2-MoE; Qwen3 attention_bias)
  bool o_bias = false;    // o_proj has a bias (Qwen3 attention_bias)
  // MoE (num_experts == 0: dense everywhere)
  int32_t num_experts = 0;
  int32_t num_experts_per_tok = 0;              // top-k
  int32_t moe_intermediate_size = 0;            // FFN width of one routed expert
  int32_t shared_expert_intermediate_size = 0;  // > 0: Qwen2-MoE shared expert + gate
  bool norm_topk_prob = false;                  // renormalise the top-k probabilities to sum 1
  int32_t decoder_sparse_step = 1;              // layer l is sparse iff (l + 1) % step == 0 ...
  std::vector<int32_t> mlp_only_layers;         // ... and l is not listed here

  // Whether layer `layer` uses the sparse MoE block (HF Qwen*MoeDecoderLayer rule).
  bool IsSparseLayer(int32_t layer) const;

  // Checks positivity, head divisibility, even head_dim, top-k in [1, num_experts], sparse
  // step > 0, mlp_only_layers inside [0, num_layers). Errors: kInvalidArgument naming the field.
  Status Validate() const;
};

// The ModelInfo the worker sees (weight_bytes left 0: DecoderModel fills it).
ModelInfo ModelInfoOf(const QwenConfig& config);

// Whether `architecture` (config.json architectures[0]) is one QwenConfigFromHf reads.
bool IsQwenArchitecture(const std::string& architecture);

// Reads `dir`/config.json (a Qwen architecture above). Unsupported features (rope_scaling,
// use_sliding_window: true, hidden_act other than silu) are kUnimplemented naming the field.
// Errors: kNotFound (no config.json), kDataLoss (not JSON), kInvalidArgument (other architecture
// — named —, missing or ill-typed field, failed Validate()).
Result<QwenConfig> QwenConfigFromHf(const std::string& dir);

}  // namespace tandem::model
