#include "text/bpe_word_cache.h"

namespace tandem::text {

bool BpeWordCache::Lookup(std::string_view word, std::vector<int32_t>* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = ids_of_word_.find(word);
  if (it == ids_of_word_.end()) return false;
  out->insert(out->end(), it->second.begin(), it->second.end());
  return true;
}

void BpeWordCache::Insert(std::string_view word, const std::vector<int32_t>& ids) {
  if (capacity_ == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (ids_of_word_.size() >= capacity_) ids_of_word_.clear();
  ids_of_word_.emplace(std::string(word), ids);
}

size_t BpeWordCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ids_of_word_.size();
}

}  // namespace tandem::text
