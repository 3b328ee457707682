// Loads a Hugging Face tokenizer.json (+ tokenizer_config.json) into a Tokenizer.
#pragma once

#include <memory>
#include <string>

#include "core/status.h"
#include "text/tokenizer.h"

namespace tandem::text {

// Builds the tokenizer described by `tokenizer_json_path`. Supported: the "Llama-2 style"
// SentencePiece-BPE layout (model.type "BPE" with byte_fallback; normalizer
// Prepend("▁") + Replace(" " -> "▁") or a Metaspace pre-tokenizer; merges as "a b" strings or
// ["a", "b"] arrays; added_tokens with `special`). `tokenizer_config_json_path` may be empty;
// when given, its add_bos_token / bos_token / eos_token override what tokenizer.json implies.
// Errors: kNotFound (file missing), kInvalidArgument (malformed JSON or fields, naming the
// field), kUnimplemented (another model type or an unsupported normalizer/pre-tokenizer step).
// Byte-level tokenizers (a ByteLevel pre-tokenizer or decoder: Qwen, GPT-2, Llama-3) become a
// ByteLevelBpeTokenizer, see hf_byte_level_bpe_loader.h.
// Reference: HF tokenizers (models/bpe, normalizers, decoders); transformers LlamaTokenizerFast.
Result<std::unique_ptr<Tokenizer>> LoadHfTokenizerJson(
    const std::string& tokenizer_json_path, const std::string& tokenizer_config_json_path);

}  // namespace tandem::text
