// `tandem quantize`: writes a W8A8_DYNAMIC copy of a Hugging Face checkpoint in msModelSlim's
// layout (quant_model_description.json + quant_model_weights*.safetensors) or
// compressed-tensors' (config.json quantization_config + model*.safetensors), which tandem and
// vLLM(-Ascend) load (docs/design/w8a8.md; QWEN35.md §7).
// Which Linears: Qwen3.5(-MoE) follows the 397B recipe — q/k/v_proj of the full-attention
// layers and every routed expert (unfused per expert, as msModelSlim's convert_experts_to_mlp);
// other architectures quantize every *_proj Linear of the decoder layers. Embeddings, lm_head,
// norms, routers, shared-expert gates, everything under mtp.* and whatever an --ignore pattern
// matches stay FLOAT in their stored dtype.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/loader/w8a8_source.h"

namespace tandem::model {

// Symmetric per-output-channel min-max int8 of w [rows, cols] f32: scale[n] = max_k |w[n, k]| /
// 127 (f32 division); q[n, k] = clamp(rint(w[n, k] / scale[n]), -127, 127) (f32 division,
// round half to even). An all-zero row gets scale 0 and q 0. (Recipe of the shared W8A8
// folders' PROVENANCE.md; msModelSlim / llm-compressor min-max.)
void QuantizeRowsPerChannelInt8(const float* w, int64_t rows, int64_t cols, int8_t* q,
                                float* scale);

struct QuantizeOptions {
  std::string src_dir;
  std::string out_dir;  // created if absent; must not hold a checkpoint already
  QuantFormat format = QuantFormat::kAscend;  // kAscend or kCompressedTensors
  // fnmatch(3) patterns on module names ("model.layers.0.mlp.down_proj") or tensor names:
  // matching Linears stay FLOAT.
  std::vector<std::string> ignore;
  uint64_t max_shard_bytes = uint64_t{5} << 30;
};

struct QuantizeReport {
  int64_t int8_linears = 0;        // Linears written as int8 (+ scales)
  int64_t float_tensors = 0;       // tensors written as stored
  uint64_t bytes_in = 0;           // source tensor bytes
  uint64_t bytes_out = 0;          // written tensor bytes
  std::vector<std::string> files;  // written, relative to out_dir
};

// Quantizes src_dir into out_dir; `progress(done, total)` after each written tensor.
// Errors: kInvalidArgument (unknown architecture, a source that is already quantized, an
// out_dir that holds a checkpoint, a Linear of an unsupported dtype), kInternal (I/O).
Result<QuantizeReport> QuantizeCheckpoint(const QuantizeOptions& options,
                                          const std::function<void(size_t, size_t)>& progress);

}  // namespace tandem::model
