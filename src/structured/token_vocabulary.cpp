#include "structured/token_vocabulary.h"

#include <algorithm>

#include "core/check.h"

namespace tandem::structured {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, int32_t vocab_size)
    : token_bytes_(std::move(token_bytes)), vocab_size_(vocab_size) {
  TANDEM_CHECK(vocab_size_ >= static_cast<int32_t>(token_bytes_.size()))
      << "vocabulary has " << token_bytes_.size() << " tokens, more than the logits width "
      << vocab_size_;
  for (int32_t id = 0; id < static_cast<int32_t>(token_bytes_.size()); ++id) {
    if (!token_bytes_[id].empty()) sorted_ids_.push_back(id);
  }
  std::sort(sorted_ids_.begin(), sorted_ids_.end(), [this](int32_t a, int32_t b) {
    return token_bytes_[a] < token_bytes_[b] || (token_bytes_[a] == token_bytes_[b] && a < b);
  });
  common_prefix_.resize(sorted_ids_.size(), 0);
  for (size_t i = 1; i < sorted_ids_.size(); ++i) {
    const std::string& prev = token_bytes_[sorted_ids_[i - 1]];
    const std::string& cur = token_bytes_[sorted_ids_[i]];
    size_t n = 0;
    while (n < prev.size() && n < cur.size() && prev[n] == cur[n]) ++n;
    common_prefix_[i] = static_cast<int32_t>(n);
  }
}

size_t TokenVocabulary::SkipPrefix(size_t begin, size_t prefix_len) const {
  const std::string_view prefix =
      std::string_view(token_bytes_[sorted_ids_[begin]]).substr(0, prefix_len);
  size_t i = begin + 1;
  // Tokens with the prefix are contiguous; usually few, so walk before searching.
  for (int step = 0; step < 8 && i < sorted_ids_.size(); ++step, ++i) {
    if (static_cast<size_t>(common_prefix_[i]) < prefix_len) return i;
  }
  auto it = std::partition_point(sorted_ids_.begin() + i, sorted_ids_.end(), [&](int32_t id) {
    return std::string_view(token_bytes_[id]).starts_with(prefix);
  });
  return static_cast<size_t>(it - sorted_ids_.begin());
}

}  // namespace tandem::structured
