// Model: one loaded architecture (weights + forward), as the worker sees it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/forward_context.h"
#include "model/kv_cache.h"

namespace tandem::model {

// What the rest of the system needs to know about a loaded model.
struct ModelInfo {
  std::string architecture;        // "llama", "LlamaForCausalLM", ...
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t num_layers = 0;
  int32_t num_heads = 0;
  int32_t num_kv_heads = 0;
  int32_t head_dim = 0;
  int32_t max_position_embeddings = 0;  // context length the model was built for
  int32_t num_experts = 0;              // 0 = dense
  int32_t num_experts_per_tok = 0;
  size_t weight_bytes = 0;              // bytes of all weights (for bandwidth ratios)
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelInfo& info() const = 0;
  virtual KvCacheSpec kv_cache_spec() const = 0;

  // Runs one step over ctx's flat batch: writes each token's K/V into `kv` at
  // ctx.slot_mapping, attends over each sequence's blocks (causal), and writes
  // logits [ctx.logits_indices.size(), vocab_size] f32 row-major into `logits`.
  // Thread: one caller at a time (the worker thread).
  virtual void Forward(const ForwardContext& ctx, KvCache& kv, std::vector<float>& logits) = 0;
};

struct LoadOptions {
  // auto|float32|bfloat16. All compute is f32 for now: bf16/f16 checkpoints are upcast
  // exactly at load; "bfloat16" is accepted, logged, and computed in f32.
  std::string dtype = "auto";
  int32_t num_threads = 0;     // 0 = all cores
};

// Loads a model from a .gguf file (llama) or a Hugging Face folder (config.json + safetensors;
// LlamaForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2MoeForCausalLM).
// Errors: kNotFound (no such path), kDataLoss (truncated/corrupt file, naming file + tensor),
// kInvalidArgument (unknown architecture or dtype, missing or misshaped tensor: name, expected,
// found), kUnimplemented (a config feature not supported yet, e.g. rope_scaling).
Result<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options);

}  // namespace tandem::model
