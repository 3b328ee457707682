// LlamaConfig: the hyper-parameters of a Llama-family model (dense or Mixtral-style MoE), read
// from GGUF metadata (`llama.*` keys, llama.cpp's names) or an HF config.json.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "model/loader/gguf_reader.h"

namespace tandem::model {

struct LlamaConfig {
  std::string architecture;  // "llama" (GGUF) or "LlamaForCausalLM" (HF)
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;  // embedding_length
  int32_t num_layers = 0;   // block_count
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t intermediate_size = 0;  // FFN width (per expert for MoE)
  int32_t max_position_embeddings = 0;
  int32_t num_experts = 0;  // 0 = dense
  int32_t num_experts_per_tok = 0;
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;
  bool tie_word_embeddings = false;  // lm_head shares token embeddings

  // Checks positivity and divisibility (heads % kv_heads, hidden = heads * head_dim for q).
  // Errors: kInvalidArgument naming the field and the value.
  Status Validate() const;
};

// The vocabulary size of a GGUF model: the rows of its 2-d token_embd.weight, which must equal
// the tokens of tokenizer.ggml.tokens when the file has them (llama.cpp's rule).
// Errors: kInvalidArgument naming the file: no such tensor, or a token count that differs.
Result<int32_t> GgufVocabSize(const GgufReader& gguf);
// rms_norm_eps and rope_theta are finite and > 0 (shared by every config's Validate). Errors:
// kInvalidArgument naming the field and the value.
Status CheckNormEpsAndRopeTheta(float rms_norm_eps, float rope_theta);
// The float metadata `key` (or `fallback` when absent), which must be finite and > 0 as a float:
// an epsilon or a RoPE base of NaN, 0 or less makes every logit NaN. `field` is the config name
// (rms_norm_eps, rope_theta) the message adds. Errors: kInvalidArgument naming the file, the key
// and the value; the getter's errors for a key of another type.
Result<float> GgufPositiveFloatOr(const GgufReader& gguf, const std::string& key, const char* field,
                                  double fallback);
// `status` (e.g. a failed Validate()) with "GGUF file 'PATH': " in front; ok stays ok.
Status InGgufFile(const GgufReader& gguf, const Status& status);
// The metadata `key` (e.g. "qwen3.block_count") equals the number of blk.N tensor blocks the
// file holds (or that minus `may_lack_last`: trailing blocks a file may leave out, such as
// Qwen3.5's MTP block); checked before any per-layer work, so a block_count of 10^9 is refused
// at once. Errors: kInvalidArgument naming the file, the key and both counts.
Status CheckGgufBlockCount(const GgufReader& gguf, const std::string& key, int64_t block_count,
                           int64_t may_lack_last = 0);

// From GGUF `general.architecture` == "llama" and its `llama.*` keys; vocab from token_embd.
// Errors: kInvalidArgument (other architecture, missing/ill-typed key, naming it).
Result<LlamaConfig> LlamaConfigFromGguf(const GgufReader& gguf);

// From `dir`/config.json with architectures[0] == "LlamaForCausalLM".
// Errors: kNotFound (no config.json), kDataLoss (not JSON), kInvalidArgument (other
// architecture — named — or a missing field).
Result<LlamaConfig> LlamaConfigFromHf(const std::string& dir);

}  // namespace tandem::model
