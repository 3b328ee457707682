// The pieces of HF tokenizer.json / tokenizer_config.json that both loaders read the same way
// (SentencePiece-style BPE: hf_tokenizer_loader.cpp; byte-level BPE:
// hf_byte_level_bpe_loader.cpp; GGUF's byte-level vocabularies: gguf_byte_level_vocab.cpp).
// Reference: HF tokenizers' serialized forms (tokenizers/src/{normalizers,pre_tokenizers}).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/status.h"

namespace tandem::text {

// ByteLevel(use_regex=true)'s split pattern: GPT-2's (HF pre_tokenizers/byte_level.rs).
inline constexpr const char* kGpt2SplitPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// A node's "type" string ("Sequence", "NFC", "ByteLevel", ...); "" when it has none.
std::string TokenizerNodeType(const nlohmann::json& node);

// The steps of a normalizer / pre-tokenizer / decoder node: the node itself, or the members of
// {"type": "Sequence", <list_key>: [...]}; none for null (a Sequence whose list is not an array
// is one step, which the caller then refuses by its type).
std::vector<nlohmann::json> SequenceSteps(const nlohmann::json& node, const char* list_key);

// One entry of tokenizer.json's added_tokens.
struct AddedTokenEntry {
  std::string content;
  int64_t id = -1;
  bool special = false;
};

// tokenizer.json's added_tokens (from `path`, named in errors): a list of objects with a string
// "content", an integer "id" and an optional boolean "special"; none when the key is absent.
// Errors: kInvalidArgument naming the entry's index and the field that is missing or of the
// wrong type, e.g. "'<path>': added_tokens[0].id should be an integer".
Result<std::vector<AddedTokenEntry>> ReadAddedTokens(const nlohmann::json& root,
                                                     const std::string& path);

// An AddedToken's text (tokenizer_config's bos_token, eos_token, ...): a string or an object
// {"content": ...}; "" otherwise.
std::string AddedTokenContent(const nlohmann::json& node);

}  // namespace tandem::text
