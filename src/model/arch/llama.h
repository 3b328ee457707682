// Llama (dense and Mixtral-style MoE) from GGUF or an HF folder.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "model/config/model_config.h"
#include "model/layers/tensor_parallel.h"
#include "model/loader/weight_source.h"
#include "model/model.h"

namespace tandem::model {

enum class WeightFormat {
  kGguf,  // llama.cpp names; q/k rows permuted for interleaved RoPE (un-permuted at load)
  kHf,    // HF transformers names; rotate_half RoPE layout
};

// Builds TP rank tp.rank's shard of a Llama model from `config` and the weights of `source`.
// Errors: kInvalidArgument naming a missing or misshaped tensor (expected vs found shape) or a
// TP split that does not divide tp.size (before any weight is read), kDataLoss from the source.
Result<std::unique_ptr<Model>> LoadLlama(const LlamaConfig& config, const WeightSource& source,
                                         WeightFormat format, const TpContext& tp = {});

}  // namespace tandem::model
