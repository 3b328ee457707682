// SentencePiece-BPE tokenizer (Llama-2 style): dummy-prefix space, '▁' for spaces, greedy pair
// merges, byte fallback <0xXX> for characters outside the vocab.
// Reference: llama.cpp src/llama-vocab.cpp llm_tokenizer_spm_session (merge by highest piece
// score, leftmost on ties) and HF tokenizers BPE (merge by lowest rank of the pair in `merges`).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/status.h"
#include "text/tokenizer.h"

namespace tandem::text {

// Token types as GGUF stores them (tokenizer.ggml.token_type).
enum class TokenType : int32_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Everything SpmBpeTokenizer needs; filled from a GGUF file or an HF tokenizer.json by callers.
struct SpmVocab {
  std::vector<std::string> tokens;   // [vocab_size] piece of each id ("▁the", "<0x0A>", "<s>")
  std::vector<float> scores;         // [vocab_size] SentencePiece score; higher merges first
  std::vector<int32_t> token_types;  // [vocab_size] TokenType values
  int32_t bos_id = -1;               // -1 = none
  int32_t eos_id = -1;               // -1 = none
  int32_t unk_id = -1;               // -1 = none
  bool add_bos = true;               // Encode(..., add_special_tokens=true) prepends BOS
  bool add_space_prefix = true;      // prepend '▁' to each text fragment; strip it in Decode
  // HF-style merges (left piece, right piece), rank = index. When non-empty they decide the
  // merge order (lowest rank first) instead of `scores`, and only listed pairs merge.
  std::vector<std::pair<std::string, std::string>> merges;
};

class SpmBpeTokenizer final : public Tokenizer {
 public:
  // Validates sizes and ids. Errors: kInvalidArgument naming the field and the sizes found.
  static Result<std::unique_ptr<SpmBpeTokenizer>> Create(SpmVocab vocab);

  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const override;
  std::string IdToPiece(int32_t id) const override;
  std::string TokenBytes(int32_t id) const override;
  bool decode_strips_leading_space() const override { return vocab_.add_space_prefix; }
  int32_t vocab_size() const override { return static_cast<int32_t>(vocab_.tokens.size()); }
  int32_t bos_token_id() const override { return vocab_.bos_id; }
  int32_t eos_token_id() const override { return vocab_.eos_id; }
  std::string bos_token() const override { return PieceOrEmpty(vocab_.bos_id); }
  std::string eos_token() const override { return PieceOrEmpty(vocab_.eos_id); }
  bool IsSpecial(int32_t id) const override;
  bool add_bos() const override { return vocab_.add_bos; }

 private:
  explicit SpmBpeTokenizer(SpmVocab vocab);
  std::string PieceOrEmpty(int32_t id) const;
  // BPE over one fragment of plain text (no special tokens inside), appending ids to `out`.
  void EncodeFragment(std::string_view text, std::vector<int32_t>* out) const;
  // Priority of merging `left`+`right` (higher first); false when the pair may not merge.
  bool MergePriority(std::string_view left, std::string_view right, double* priority) const;
  // Appends the ids of one final BPE symbol: its vocab id, else its bytes as <0xXX> pieces
  // (unk_id for a byte without a piece). Merged symbols are always in the vocab.
  void AppendSymbolIds(std::string_view symbol, std::vector<int32_t>* out) const;

  SpmVocab vocab_;
  std::unordered_map<std::string, int32_t> piece_to_id_;
  // MergeKey(left, right) -> rank; empty in score mode
  std::unordered_map<std::string, int32_t> merge_rank_;
  int32_t byte_to_id_[256];  // -1 = no <0xXX> piece for that byte
  // Special pieces matched verbatim in input text, longest first.
  std::vector<std::pair<std::string, int32_t>> special_pieces_;
};

}  // namespace tandem::text
