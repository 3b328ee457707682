// Builds a ByteLevelBpeTokenizer from the tokenizer.ggml.* metadata of a GGUF file whose
// tokenizer.ggml.model is "gpt2" (byte-level BPE). Callers (apps/, tests) read the GGUF; this
// file only interprets the values, so text/ needs no GGUF reader.
// Reference: llama.cpp src/llama-vocab.cpp (llama_vocab::impl::load: "gpt2" model, the
// tokenizer.ggml.pre names and their regexes in llm_tokenizer_bpe). For "qwen2" we also apply
// NFC, as the model's HF tokenizer.json does (llama.cpp skips it; the two differ only on
// non-NFC input).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "text/tokenizer.h"

namespace tandem::text {

// The GGUF keys, as plain values.
struct GgufByteLevelVocabFields {
  std::string pre;                   // tokenizer.ggml.pre: "qwen2", "llama-bpe", "gpt2", "default"
  std::vector<std::string> tokens;   // tokenizer.ggml.tokens [vocab_size], byte-level alphabet
  std::vector<int32_t> token_types;  // tokenizer.ggml.token_type [vocab_size]; empty = all normal
  std::vector<std::string> merges;   // tokenizer.ggml.merges, "left right" in the alphabet
  int32_t bos_id = -1;               // tokenizer.ggml.bos_token_id; -1 = absent
  int32_t eos_id = -1;               // tokenizer.ggml.eos_token_id; -1 = absent
  std::optional<bool> add_bos;       // tokenizer.ggml.add_bos_token; absent = false
};

// The pre-tokenizer regexes of a tokenizer.ggml.pre name. Errors: kUnimplemented naming the
// supported names.
Result<std::vector<std::string>> ByteLevelPatternsForGgufPre(const std::string& pre);

// Errors: kUnimplemented (unknown `pre`), kInvalidArgument (a malformed merge or vocab, naming
// it).
Result<std::unique_ptr<Tokenizer>> MakeGgufByteLevelBpeTokenizer(GgufByteLevelVocabFields fields);

}  // namespace tandem::text
