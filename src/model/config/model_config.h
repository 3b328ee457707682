// LlamaConfig: the hyper-parameters of a Llama-family model (dense or Mixtral-style MoE), read
// from GGUF metadata (`llama.*` keys, llama.cpp's names) or an HF config.json.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/loader/gguf_reader.h"

namespace tandem::model {

struct LlamaConfig {
  std::string architecture;           // "llama" (GGUF) or "LlamaForCausalLM" (HF)
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;            // embedding_length
  int32_t num_layers = 0;             // block_count
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t intermediate_size = 0;      // FFN width (per expert for MoE)
  int32_t max_position_embeddings = 0;
  int32_t num_experts = 0;            // 0 = dense
  int32_t num_experts_per_tok = 0;
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;
  bool tie_word_embeddings = false;   // lm_head shares token embeddings

  // Checks positivity and divisibility (heads % kv_heads, hidden = heads * head_dim for q).
  // Errors: kInvalidArgument naming the field and the value.
  Status Validate() const;
};

// The vocabulary size of a GGUF model: the rows of its 2-d token_embd.weight.
// Errors: kInvalidArgument naming the file when there is no such tensor.
Result<int32_t> GgufVocabSize(const GgufReader& gguf);
// rms_norm_eps and rope_theta are finite and > 0 (shared by every config's Validate). Errors:
// kInvalidArgument naming the field and the value.
Status CheckNormEpsAndRopeTheta(float rms_norm_eps, float rope_theta);
// The metadata `key` (e.g. "qwen3.block_count") equals the number of blk.N tensor blocks the
// file holds; checked before any per-layer work, so a block_count of 10^9 is refused at once.
// Errors: kInvalidArgument naming the file, the key and both counts.
Status CheckGgufBlockCount(const GgufReader& gguf, const std::string& key, int64_t block_count);

// From GGUF `general.architecture` == "llama" and its `llama.*` keys; vocab from token_embd.
// Errors: kInvalidArgument (other architecture, missing/ill-typed key, naming it).
Result<LlamaConfig> LlamaConfigFromGguf(const GgufReader& gguf);

// From `dir`/config.json with architectures[0] == "LlamaForCausalLM".
// Errors: kNotFound (no config.json), kDataLoss (not JSON), kInvalidArgument (other
// architecture — named — or a missing field).
Result<LlamaConfig> LlamaConfigFromHf(const std::string& dir);

}  // namespace tandem::model
