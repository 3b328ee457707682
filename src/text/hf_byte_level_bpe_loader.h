// The byte-level half of LoadHfTokenizerJson: reads an HF tokenizer.json whose pre-tokenizer or
// decoder is ByteLevel (Qwen2/2.5/3, GPT-2, Llama-3) into a ByteLevelBpeTokenizer.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "text/tokenizer.h"
#include "text/tokenizer_json_reader.h"

namespace tandem::text {

// `file` is the tokenizer.json read from `path` (named in errors) by ReadTokenizerJson;
// `tokenizer_config_json_path` may be empty. Supported: normalizer NFC (or none); pre-tokenizer
// Split(Regex|String, behavior Isolated) steps followed by ByteLevel (use_regex adds the GPT-2
// pattern); model BPE with merges as "a b" or ["a", "b"]; added_tokens with `special`;
// BOS from a TemplateProcessing post-processor, overridden by tokenizer_config.json's
// add_bos_token / bos_token; eos_token from tokenizer_config.json.
// Errors: kInvalidArgument (malformed fields, naming them), kUnimplemented (another normalizer,
// pre-tokenizer step or BPE option), kNotFound (config file missing).
Result<std::unique_ptr<Tokenizer>> LoadHfByteLevelBpe(
    TokenizerJsonFile file, const std::string& path, const std::string& tokenizer_config_json_path);

}  // namespace tandem::text
