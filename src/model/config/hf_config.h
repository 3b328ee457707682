// A Hugging Face folder's config.json: read as a JSON object (only if it is a regular file),
// its `architectures[0]` (how LoadModel picks the architecture before reading the typed config),
// and its layer count checked against the checkpoint's tensors before anything is sized by it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::model {

// `dir`/config.json parsed. Errors: kNotFound (no config.json), kInvalidArgument (not a regular
// file: a FIFO is refused without blocking), kDataLoss (not a JSON object), each naming the path.
Result<nlohmann::json> ReadHfConfigJson(const std::string& dir);

// Returns architectures[0] of `dir`/config.json (e.g. "Qwen3ForCausalLM").
// Errors: as ReadHfConfigJson; kInvalidArgument (no non-empty "architectures" list of strings).
Result<std::string> ReadHfArchitecture(const std::string& dir);

// The decoder layers a checkpoint holds: 1 + the largest N of a tensor named "…layers.N.…"
// (model.layers.N, model.language_model.layers.N), MTP layers (mtp.*) left out; 0 for none.
int64_t CountCheckpointLayers(const std::vector<std::string>& tensor_names);

// config.json's num_hidden_layers (under text_config for a multimodal checkpoint; `config` as
// read from `config_path`) must equal the layers the checkpoint holds: checked before any typed
// config or per-layer allocation, so num_hidden_layers 10^9 is refused at once instead of
// allocating until the machine runs out. A field that is absent or not an integer is left to the
// typed config's own error. Errors: kInvalidArgument naming the file, the field and both counts.
Status CheckLayerCount(const std::string& config_path, const nlohmann::json& config,
                       const std::vector<std::string>& tensor_names);

// CheckLayerCount on `dir`/config.json. Errors: ReadHfConfigJson's and CheckLayerCount's.
Status CheckHfLayerCount(const std::string& dir, const std::vector<std::string>& tensor_names);

}  // namespace tandem::model
