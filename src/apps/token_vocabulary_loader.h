// The worker's token vocabulary for structured outputs: the tokenizer of the served model
// (--tokenizer or the model's own), read in the engine process on the first constrained request.
#pragma once

#include "apps/engine_core_config.h"
#include "worker/structured_output.h"

namespace tandem::apps {

// A loader that reads the tokenizer named by `config` (model_path, tokenizer_path) and keeps
// every non-special token's bytes (special and control tokens are never produced by a grammar;
// the end tokens are added by the matcher). Aborts with the file's error if the tokenizer no
// longer loads: the API server loaded the same files at start-up.
worker::TokenVocabularyLoader MakeTokenVocabularyLoader(const EngineCoreConfig& config);

}  // namespace tandem::apps
