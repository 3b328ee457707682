// BpeWordCache: remembers the BPE token ids of pre-tokenized words, so the API server does not
// re-run the merge loop for words it has seen (most words of a prompt). Bounded: when it holds
// `capacity` words it is emptied and refills with what is in use now (cheap, no LRU lists).
// Thread-safe (one mutex; a lookup is a hash probe, short next to the BPE it saves).
// Reference: HF tokenizers utils/cache.rs (bounded word cache of the BPE model).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tandem::text {

class BpeWordCache {
 public:
  explicit BpeWordCache(size_t capacity) : capacity_(capacity) {}

  // Appends the cached ids of `word` to `out` and returns true; false (nothing appended) when
  // `word` is not cached.
  bool Lookup(std::string_view word, std::vector<int32_t>* out) const;

  // Remembers `ids` for `word`.
  void Insert(std::string_view word, const std::vector<int32_t>& ids);

  size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::vector<int32_t>, Hash, std::equal_to<>> ids_of_word_;
};

}  // namespace tandem::text
