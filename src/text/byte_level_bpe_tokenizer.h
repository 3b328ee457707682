// Byte-level BPE tokenizer (GPT-2 family: Qwen2/2.5/3, Llama-3): text → added tokens matched
// verbatim → NFC → regex pre-tokenizer → bytes → rank-ordered BPE merges over byte symbols.
//
// Central invariant: BPE runs on raw bytes. Vocab pieces and merges arrive in the byte-level
// alphabet ("Ġthe", see byte_level_alphabet.h) and are translated to raw bytes once, at load; a
// word's initial symbols are its bytes, each a single-byte token, so every text is encodable and
// TokenBytes is exact (a token may hold part of a UTF-8 character).
// Reference: HF tokenizers models/bpe (merge lowest rank first, leftmost on ties; cache),
// added_vocabulary.rs (added tokens split out before normalization, leftmost-longest),
// pre_tokenizers/byte_level.rs; llama.cpp src/llama-vocab.cpp llm_tokenizer_bpe_session.
// Deviations: added tokens are matched on the raw text even when marked "normalized" (Qwen's
// are not), and their lstrip/rstrip/single_word flags are ignored.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "text/bpe_word_cache.h"
#include "text/regex_splitter.h"
#include "text/spm_bpe_tokenizer.h"  // TokenType
#include "text/tokenizer.h"

namespace tandem::text {

// Everything ByteLevelBpeTokenizer needs; filled from an HF tokenizer.json or GGUF metadata.
struct ByteLevelBpeVocab {
  // [vocab_size] per id: the byte-level-alphabet piece ("Ġthe") for kNormal ids, the raw text
  // ("<|im_start|>") for added tokens (kControl = special, kUserDefined = not special), any
  // name for kUnused ids (no text; never produced by Encode).
  std::vector<std::string> tokens;
  std::vector<int32_t> token_types;  // [vocab_size] TokenType values
  // (left, right) pieces in the byte-level alphabet; rank = index, lower merges first.
  std::vector<std::pair<std::string, std::string>> merges;
  // PCRE2 patterns of the pre-tokenizer, applied in order (HF Split, behavior Isolated).
  std::vector<std::string> split_patterns;
  bool normalize_nfc = false;     // HF normalizer "NFC"
  bool add_prefix_space = false;  // ByteLevel add_prefix_space: " " before each text fragment
  bool ignore_merges = false;     // HF BPE ignore_merges: a word in the vocab is one token
  int32_t bos_id = -1;            // -1 = none
  int32_t eos_id = -1;            // -1 = none
  bool add_bos = false;           // Encode(..., add_special_tokens=true) prepends BOS
};

class ByteLevelBpeTokenizer final : public Tokenizer {
 public:
  // Validates sizes, ids, merges and patterns and builds the lookup tables (~1 s for Qwen's
  // 151k merges). Errors: kInvalidArgument naming the field, the merge or the pattern.
  static Result<std::unique_ptr<ByteLevelBpeTokenizer>> Create(ByteLevelBpeVocab vocab);

  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const override;
  // Encode, with a choice: `match_added_tokens` false tokenizes "<|im_start|>" and other added
  // tokens' text as plain text (HF split_special_tokens=True). Invalid UTF-8 in `text` is
  // replaced by U+FFFD first. Thread-safe.
  std::vector<int32_t> EncodeText(std::string_view text, bool add_special_tokens,
                                  bool match_added_tokens) const;

  std::string IdToPiece(int32_t id) const override;
  std::string TokenBytes(int32_t id) const override;
  bool decode_strips_leading_space() const override { return false; }
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos_token_id() const override { return vocab_.bos_id; }
  int32_t eos_token_id() const override { return vocab_.eos_id; }
  std::string bos_token() const override { return IdToPiece(vocab_.bos_id); }
  std::string eos_token() const override { return IdToPiece(vocab_.eos_id); }
  bool IsSpecial(int32_t id) const override;
  bool add_bos() const override { return vocab_.add_bos; }

  // Number of words whose ids are cached now (for tests).
  size_t num_cached_words() const { return word_cache_.size(); }

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };

  explicit ByteLevelBpeTokenizer(ByteLevelBpeVocab vocab);
  Status BuildTables();
  // Normalizes and pre-tokenizes one fragment without added tokens; appends its ids.
  void EncodeFragment(std::string_view text, std::vector<int32_t>* out) const;
  // Ids of one pre-tokenized word (raw bytes), from the cache or MergeWord.
  void EncodeWord(std::string_view word, std::vector<int32_t>* out) const;
  void MergeWord(std::string_view word, std::vector<int32_t>* out) const;
  const Merge* FindMerge(int32_t left_id, int32_t right_id) const;

  ByteLevelBpeVocab vocab_;
  std::vector<std::string> token_bytes_;  // [vocab_size] raw bytes each id decodes to
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // raw bytes -> id, for kNormal ids (first id wins on duplicates)
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> id_of_bytes_;
  std::unordered_map<uint64_t, Merge> merges_;  // (left_id << 32 | right_id) -> merge
  std::array<int32_t, 256> byte_id_;            // single-byte token of each byte; -1 = none
  std::vector<std::pair<std::string, int32_t>> added_tokens_;  // longest first
  std::array<bool, 256> starts_added_token_;  // first bytes of added tokens (fast skip)
  std::vector<std::unique_ptr<RegexSplitter>> splitters_;
  mutable BpeWordCache word_cache_;
};

}  // namespace tandem::text
