// Qwen3.5-MoE from a Hugging Face folder (arch/qwen3_5_moe.cpp).
#pragma once

#include <memory>

#include "core/status.h"
#include "model/config/qwen35_config.h"
#include "model/layers/tensor_parallel.h"
#include "model/loader/weight_source.h"
#include "model/model.h"
#include "model/mtp_module.h"

namespace tandem::model {

// Builds the text model of a Qwen3_5MoeForConditionalGeneration / Qwen3_5MoeForCausalLM
// checkpoint. Errors: kInvalidArgument (a missing or misshaped tensor: name, expected and found
// shape), kUnimplemented (TP > 1 or expert parallel, not built yet), kDataLoss from the source.
// With `load_mtp`, the MTP head is loaded and attached (LoadQwen35Mtp's errors).
Result<std::unique_ptr<Model>> LoadQwen35Moe(const Qwen35Config& config, const WeightSource& source,
                                             const TpContext& tp = {}, bool load_mtp = false);

// The checkpoint's MTP head (mtp.*: fc, its norms, one full-attention MoE layer), split like the
// trunk's full layers. Errors: kInvalidArgument when the checkpoint has none, or a missing or
// misshaped tensor.
Result<std::unique_ptr<MtpModule>> LoadQwen35Mtp(const Qwen35Config& config,
                                                 const WeightSource& source,
                                                 const TpContext& tp = {});

}  // namespace tandem::model
