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
  std::string dtype = "auto";  // auto|float32 (bf16 later)
  int32_t num_threads = 0;     // 0 = all cores
};

// Loads a model from a .gguf file or a Hugging Face folder (config.json + safetensors).
// Errors: kNotFound (no such path), kDataLoss (truncated/corrupt file, naming file + tensor),
// kInvalidArgument (unknown architecture, missing or misshaped tensor: name, expected, found).
Result<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options);

}  // namespace tandem::model
