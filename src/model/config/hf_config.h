// The `architectures[0]` entry of a Hugging Face config.json: how LoadModel picks the
// architecture of a model folder before reading its typed config.
#pragma once

#include <string>

#include "core/status.h"

namespace tandem::model {

// Returns architectures[0] of `dir`/config.json (e.g. "Qwen3ForCausalLM").
// Errors: kNotFound (no config.json), kDataLoss (not a JSON object), kInvalidArgument (no
// non-empty "architectures" list of strings).
Result<std::string> ReadHfArchitecture(const std::string& dir);

}  // namespace tandem::model
