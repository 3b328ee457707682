// Llama (dense and Mixtral-style MoE) from GGUF or an HF folder.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "model/config/model_config.h"
#include "model/loader/weight_source.h"
#include "model/model.h"

namespace tandem::model {

enum class WeightFormat {
  kGguf,  // llama.cpp names; q/k rows permuted for interleaved RoPE (un-permuted at load)
  kHf,    // HF transformers names; rotate_half RoPE layout
};

// Builds a Llama model from `config` and the weights of `source`.
// Errors: kInvalidArgument naming a missing or misshaped tensor (expected vs found shape),
// kDataLoss from the source.
Result<std::unique_ptr<Model>> LoadLlama(const LlamaConfig& config, const WeightSource& source,
                                         WeightFormat format);

}  // namespace tandem::model
