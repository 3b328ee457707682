// ModelFiles: what the API server reads from a model's files without loading weights —
// tokenizer, chat template, context length, EOS ids, generation defaults.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "server/server_config.h"
#include "text/tokenizer.h"

namespace tandem::apps {

struct ModelFiles {
  bool is_gguf = false;
  std::string model_path;      // .gguf file or HF folder
  std::string tokenizer_path;  // --tokenizer or the model path
  int32_t context_length = 0;  // llama.context_length / max_position_embeddings
  std::vector<int32_t> eos_token_ids;
  std::string chat_template;           // "" when the model has none
  nlohmann::json generation_config;    // generation_config.json, or null
  std::string generation_config_path;  // where it was read; "" when the model has none
};

// Reads metadata of `model_path` (and `tokenizer_path` when non-empty). Every file is opened only
// if it is a regular file (a FIFO is refused at once, never waited on). Errors: kNotFound for a
// missing path, kDataLoss / kInvalidArgument for unreadable or non-regular files, naming the file.
Result<ModelFiles> InspectModelFiles(const std::string& model_path,
                                     const std::string& tokenizer_path);

// --max-model-len resolved: the flag, or the model's context length. Errors: kInvalidArgument
// when the flag exceeds the model's length (vLLM refuses that too) or nothing is known.
Result<int> ResolveMaxModelLen(int flag_value, const ModelFiles& files);

// The tokenizer from a GGUF's tokenizer.ggml.* keys or a folder's tokenizer.json.
Result<std::shared_ptr<const text::Tokenizer>> LoadTokenizer(const ModelFiles& files);

// Whole file as text, if it is a regular file. Errors: kNotFound naming `what` (e.g.
// "--chat-template") and the path; kInvalidArgument "WHAT: 'PATH' is not a regular file (a FIFO)".
Result<std::string> ReadTextFile(const std::string& path, const std::string& what);

// --generation-config: "auto" applies generation_config.json's temperature/top_p/top_k/
// repetition_penalty as request defaults (vLLM's behaviour), "vllm" ignores it, a PATH reads
// that folder's generation_config.json. Errors: kNotFound for a bad PATH; kInvalidArgument for a
// default out of range (top_p 7, temperature < 0, top_k < -1, repetition_penalty <= 0) naming
// the file and the field: at start-up, instead of a 400 for every request that omits the field.
Status ApplyGenerationConfig(const std::string& mode, const std::string& override_json,
                             const ModelFiles& files, server::ServerConfig* config);

}  // namespace tandem::apps
