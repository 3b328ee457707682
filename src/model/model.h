// Model: one loaded architecture (weights + forward), as the worker sees it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "core/status.h"
#include "model/forward_context.h"
#include "model/kv_cache.h"

namespace tandem::model {

// What the rest of the system needs to know about a loaded model.
struct ModelInfo {
  std::string architecture;  // "llama", "LlamaForCausalLM", ...
  int32_t vocab_size = 0;
  int32_t hidden_size = 0;
  int32_t num_layers = 0;
  int32_t num_heads = 0;     // query heads on this TP rank
  int32_t num_kv_heads = 0;  // KV heads on this TP rank (the paged cache group's)
  int32_t head_dim = 0;
  int32_t max_position_embeddings = 0;  // context length the model was built for
  int32_t num_experts = 0;              // 0 = dense
  int32_t num_experts_per_tok = 0;
  size_t weight_bytes = 0;  // bytes of this rank's weights (for bandwidth ratios)
  int32_t tp_rank = 0;      // this model instance's TP rank
  int32_t tp_size = 1;      // --tensor-parallel-size
};

// The ModelInfo of a full (unsharded) model from any architecture config with the usual
// fields (architecture, vocab_size, hidden_size, num_layers, num_heads, num_kv_heads, head_dim,
// max_position_embeddings, num_experts, num_experts_per_tok); weight_bytes and the TP fields
// are filled by the model (DecoderModel).
template <typename Config>
ModelInfo ModelInfoFromConfig(const Config& c) {
  ModelInfo info;
  info.architecture = c.architecture;
  info.vocab_size = c.vocab_size;
  info.hidden_size = c.hidden_size;
  info.num_layers = c.num_layers;
  info.num_heads = c.num_heads;  // the full model's: DecoderModel keeps this rank's share
  info.num_kv_heads = c.num_kv_heads;
  info.head_dim = c.head_dim;
  info.max_position_embeddings = c.max_position_embeddings;
  info.num_experts = c.num_experts;
  info.num_experts_per_tok = c.num_experts_per_tok;
  return info;
}

// What one forward pass gives back (docs/design/device-seam.md §6).
struct ForwardOutput {
  // In: also return the hidden rows (a draft head reads them).
  bool want_hidden = false;
  // [ctx.logits_indices.size(), vocab_size] f32 row-major: the logits of the rows asked for.
  std::vector<float> logits;
  // With want_hidden: the final-normed hidden state of every row, [num_tokens, hidden] f32 (a
  // draft head's h_p). Else empty.
  std::vector<float> hidden;
};

// A drafter a model carries with it (its MTP head): one application over ctx's rows from the
// target's hidden rows, with its own paged KV layer in the model's KvCache.
class DraftHead {
 public:
  virtual ~DraftHead() = default;
  // next_tokens [num_tokens] = x_{p+1}, hidden [num_tokens, hidden] = h_p (the target's
  // final-normed rows, or this head's own output for later drafts); writes hidden_out
  // [num_tokens, hidden] = h' and logits [ctx.logits_indices.size(), vocab]. With no rows it
  // only enters the collectives other DP ranks' heads enter (expert parallel). Thread: as
  // Model::Forward.
  virtual void Draft(const ForwardContext& ctx, const int32_t* next_tokens, const float* hidden,
                     KvCache& kv, std::vector<float>& hidden_out, std::vector<float>& logits) = 0;
};

class Model {
 public:
  virtual ~Model() = default;
  virtual const ModelInfo& info() const = 0;
  // The model's cache groups (model/kv_cache.h): which layers keep paged K/V blocks, which a
  // state slot per sequence, and their sizes on this TP rank. The worker allocates a KvCache of
  // exactly these groups for Forward.
  virtual CacheGroups cache_groups() const = 0;
  // The element type of the paged K/V blocks cache_groups() will ask for (--kv-cache-dtype):
  // F32 (default), F16 or BF16. Call before the cache is allocated. Errors: kInvalidArgument for
  // another dtype or a model that keeps no paged KV in another type.
  virtual Status SetKvCacheDtype(tensor::DType dtype) {
    if (dtype == tensor::DType::kF32) return Status::Ok();
    return InvalidArgument(std::string("--kv-cache-dtype ") + tensor::DTypeName(dtype) +
                           " is not supported by this model");
  }

  // Runs one step over ctx's flat batch: writes each token's K/V into `kv` at
  // ctx.slot_mapping, attends over each sequence's blocks (causal), and fills `out` (logits of
  // ctx.logits_indices; the hidden rows when out.want_hidden).
  // Thread: one caller at a time (the worker thread).
  virtual void Forward(const ForwardContext& ctx, KvCache& kv, ForwardOutput& out) = 0;
  // Logits only: logits [ctx.logits_indices.size(), vocab_size] f32 row-major.
  void Forward(const ForwardContext& ctx, KvCache& kv, std::vector<float>& logits) {
    ForwardOutput out;
    out.logits = std::move(logits);  // keeps the caller's capacity
    Forward(ctx, kv, out);
    logits = std::move(out.logits);
  }

  // Speculative decoding with recurrent (linear-attention) layers: after the Forward of `ctx`,
  // sequence s (index in ctx) accepted num_accepted[s] of its ctx.num_draft_tokens[s] drafts;
  // its state becomes the one after its last token plus those drafts. Default: nothing to do
  // (paged KV needs no rollback: rejected positions are overwritten later). Thread: as Forward.
  virtual void CommitSpeculativeStates(const ForwardContext& ctx,
                                       const std::vector<int32_t>& num_accepted, KvCache& kv) {}

  // The model's own draft head (its MTP head, loaded with LoadOptions::load_mtp), or null.
  virtual DraftHead* draft_head() { return nullptr; }

  // A step with no tokens on this rank (vLLM execute_dummy_batch): enters every collective
  // that other ranks' Forward enter outside this rank's TP group — with expert parallel, each
  // MoE layer's dispatch and combine — so an idle DP rank does not leave busy ones waiting.
  // Default: nothing (no such collectives). Thread: as Forward.
  virtual void DummyForward() {}
  // True when Forward enters collectives over other DP ranks (expert parallel MoE): DP ranks
  // must then step together (waves), idle ones with DummyForward.
  virtual bool NeedsLockstep() const { return false; }
};

struct LoadOptions {
  // --dtype: auto (each weight as stored: F32/F16/BF16) | float32 | float | bfloat16 | float16 |
  // half (Linear/embedding weights converted at load). Activations are f32 in every case.
  std::string dtype = "auto";
  // --kv-cache-dtype: auto (float32, the activations' dtype) | float32 | bfloat16 | float16;
  // fp8 variants are refused by name (no CPU kernel).
  std::string kv_cache_dtype = "auto";
  // --device: auto | cpu | cuda, resolved by kernels::BackendFor (a device this build or machine
  // cannot give is kInvalidArgument naming --device). The model runs on that backend.
  std::string device = "auto";
  // --quantization: "" (detect from the folder) | ascend | compressed-tensors (W8A8 int8;
  // docs/design/w8a8.md). A value the folder does not match is kInvalidArgument.
  std::string quantization;
  // --additional-config q8_0_dot: "int8" (GGUF Q8_0 weights × activations quantized to Q8_0,
  // llama.cpp's arithmetic, on AVX-512 VNNI CPUs; elsewhere as float32) | "float32" (exact
  // widening, f32 activations). Process-wide (SetQ8_0Dot).
  std::string q8_0_dot = "int8";
  // --additional-config profile_steps: > 0 logs where every N engine steps' time went
  // (core/step_profile.h). Process-wide (StepProfile::Enable).
  int32_t profile_steps = 0;
  int32_t num_threads = 0;  // 0 = all cores
  // --additional-config enable_cpu_binding: this process's slot among the ranks of its machine
  // (local DP rank × TP size + TP rank); its threads are pinned to cores
  // [slot × threads, (slot + 1) × threads) of the CPUs it may use. -1 = no binding.
  int32_t cpu_binding_slot = -1;
  // Tensor parallel: this instance holds TP rank tp_rank's shard of every weight (vLLM's split,
  // see model/loader/sharded_reader.h) and its Forward enters tp_group's collectives (two
  // all-reduces per layer, one for the embedding, one all-gather for the logits), so all
  // tp_size ranks must call Forward in lock-step with the same ForwardContext. Logits come out
  // full [num_logits, vocab] on every rank.
  int32_t tp_rank = 0;
  int32_t tp_size = 1;
  comm::ProcessGroup* tp_group = nullptr;  // non-owning; required when tp_size > 1
  // Expert parallel (--enable-expert-parallel): with ep_size > 1 every MoE layer holds only EP
  // rank ep_rank's experts (model/layers/expert_parallel.h) and Forward / DummyForward enter
  // ep_group's collectives. ep_rank = dp_rank · tp_size + tp_rank. Dense models ignore it.
  int32_t ep_rank = 0;
  int32_t ep_size = 1;
  comm::ProcessGroup* ep_group = nullptr;  // non-owning; required when ep_size > 1
  // Load the checkpoint's MTP head too (--speculative-config method mtp / qwen3_5_mtp); a
  // model without one is kInvalidArgument.
  bool load_mtp = false;
};

// Loads a model from a .gguf file (llama) or a Hugging Face folder (config.json + safetensors;
// LlamaForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2MoeForCausalLM).
// Errors: kNotFound (no such path), kDataLoss (truncated/corrupt file, naming file + tensor),
// kInvalidArgument (unknown architecture or dtype, missing or misshaped tensor: name, expected,
// found; a TP split that does not divide tp_size, naming the tensor and its size — reported
// before any weight is read; a tp_group missing or of another size/rank), kUnimplemented (a
// config feature not supported yet, e.g. rope_scaling).
Result<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options);

}  // namespace tandem::model
