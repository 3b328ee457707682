// TokenVocabulary: the bytes of every token id, sorted so that tokens sharing a prefix are
// neighbours — a trie walked as a sorted list (each token's common prefix with the previous
// one says how much of the walk to keep). Built once per process; shared by every grammar.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::structured {

// Token bitmask: bit `id % 32` of word `id / 32` set = token id allowed.
inline size_t BitmaskWords(int32_t vocab_size) {
  return (static_cast<size_t>(vocab_size) + 31) / 32;
}
inline void SetBit(std::span<uint32_t> bitmask, int32_t id) { bitmask[id >> 5] |= 1u << (id & 31); }
inline bool TestBit(std::span<const uint32_t> bitmask, int32_t id) {
  return (bitmask[id >> 5] >> (id & 31)) & 1u;
}

class TokenVocabulary {
 public:
  // token_bytes[id]: the bytes token `id` adds to the generated text (the tokenizer's
  // TokenBytes); "" for ids no grammar may produce (special and control tokens, unused ids).
  // vocab_size: the width of a logits row, >= token_bytes.size() (a model may pad its vocab;
  // ids past token_bytes are never allowed).
  TokenVocabulary(std::vector<std::string> token_bytes, int32_t vocab_size);

  int32_t vocab_size() const { return vocab_size_; }
  std::string_view bytes(int32_t id) const { return token_bytes_[id]; }
  // Non-empty tokens in byte order, and each one's common prefix length with the one before.
  std::span<const int32_t> sorted_ids() const { return sorted_ids_; }
  std::span<const int32_t> common_prefix() const { return common_prefix_; }
  // The first index past `begin` in sorted_ids() whose token does not start with the first
  // `prefix_len` bytes of sorted_ids()[begin]'s token.
  size_t SkipPrefix(size_t begin, size_t prefix_len) const;

 private:
  std::vector<std::string> token_bytes_;
  int32_t vocab_size_;
  std::vector<int32_t> sorted_ids_;
  std::vector<int32_t> common_prefix_;
};

}  // namespace tandem::structured
