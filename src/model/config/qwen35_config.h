// Qwen35Config: the text model of a Qwen3.5-MoE checkpoint (hybrid Gated DeltaNet + gated
// attention + MoE with a shared expert), from config.json: Qwen3_5MoeForConditionalGeneration
// (fields under "text_config") or the text-only Qwen3_5MoeForCausalLM (flat).
// Reference: HF transformers configuration_qwen3_5_moe.py; QWEN35.md §1.1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/model.h"

namespace tandem::model {

struct Qwen35Config {
  std::string architecture;
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t num_layers = 0;            // num_hidden_layers (the MTP layer not counted)
  std::vector<bool> full_attention;  // [num_layers]: layer_types == "full_attention"
  // Gated attention (full layers)
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  float partial_rotary_factor = 0.25f;  // rotary dims = head_dim · this
  float rope_theta = 10000000.0f;
  // Gated DeltaNet (linear layers)
  int32_t linear_num_key_heads = 0;
  int32_t linear_num_value_heads = 0;
  int32_t linear_key_head_dim = 0;
  int32_t linear_value_head_dim = 0;
  int32_t linear_conv_kernel_dim = 4;
  // MoE (every layer; top-k renormalised) with a sigmoid-gated shared expert
  int32_t num_experts = 0;
  int32_t num_experts_per_tok = 0;
  int32_t moe_intermediate_size = 0;
  int32_t shared_expert_intermediate_size = 0;
  float rms_norm_eps = 1e-6f;
  int32_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;
  int32_t mtp_num_hidden_layers = 0;  // MTP layers in the checkpoint (not loaded yet)

  int32_t rotary_dim() const { return static_cast<int32_t>(head_dim * partial_rotary_factor); }
  int32_t num_full_attention_layers() const;

  // full_attention for num_layers layers when the file lists no layer types: every
  // `interval`-th layer is full attention. Errors: kInvalidArgument for an interval below 1.
  Status SetLayerTypesByInterval(int32_t interval);

  // Positivity, head divisibility, an even rotary dim, top-k in [1, num_experts], finite
  // positive rms_norm_eps and rope_theta, one layer type per layer. Errors: kInvalidArgument
  // naming the field.
  Status Validate() const;
};

ModelInfo ModelInfoOf(const Qwen35Config& config);

bool IsQwen35Architecture(const std::string& architecture);

// Reads `dir`/config.json. Errors: kNotFound (no config.json), kDataLoss (not JSON),
// kInvalidArgument (a missing or ill-typed field, an unknown layer type, failed Validate()),
// kUnimplemented (hidden_act other than silu, mlp_only_layers, rope scaling).
Result<Qwen35Config> Qwen35ConfigFromHf(const std::string& dir);

}  // namespace tandem::model
