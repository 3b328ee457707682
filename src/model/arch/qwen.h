// Qwen decoder architectures from Hugging Face folders, one file each:
//   arch/qwen3.cpp      Qwen3ForCausalLM     (dense; q/k norm)
//   arch/qwen3_moe.cpp  Qwen3MoeForCausalLM  (sparse MoE; q/k norm)
//   arch/qwen2_moe.cpp  Qwen2MoeForCausalLM  (sparse MoE + shared expert; q/k/v bias)
// All three are compositions of layers/ assembled into a DecoderModel; weights are f32 in memory
// (bf16/f16/f32 safetensors are converted exactly at load).
#pragma once

#include <memory>

#include "core/status.h"
#include "model/config/qwen_config.h"
#include "model/layers/tensor_parallel.h"
#include "model/loader/weight_source.h"
#include "model/model.h"

namespace tandem::model {

// Each builds its architecture from `config` (whose `architecture` must name it) and the
// HF-named weights of `source`. Errors: kInvalidArgument (config for another architecture, or
// a missing/misshaped tensor: name, expected and found shape; a TP split that does not divide
// tp.size, found before any weight is read), kDataLoss/kUnimplemented from the source (corrupt
// bytes, unsupported dtype). The model holds TP rank tp.rank's shard (see sharded_reader.h).
Result<std::unique_ptr<Model>> LoadQwen3(const QwenConfig& config, const WeightSource& source,
                                         const TpContext& tp = {});
Result<std::unique_ptr<Model>> LoadQwen3Moe(const QwenConfig& config, const WeightSource& source,
                                            const TpContext& tp = {});
Result<std::unique_ptr<Model>> LoadQwen2Moe(const QwenConfig& config, const WeightSource& source,
                                            const TpContext& tp = {});

}  // namespace tandem::model
