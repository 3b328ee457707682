#include "text/string_search.h"

#include <algorithm>
#include <string>
#include <vector>

namespace tandem::text {
namespace {

// KMP over a haystack and needle read through `at` (forwards or backwards): position of the
// first match, as an index into the read order, or npos.
template <typename HayAt, typename NeedleAt>
size_t Kmp(size_t haystack_size, size_t needle_size, HayAt hay_at, NeedleAt needle_at) {
  if (needle_size == 0) {
    return 0;
  }
  if (needle_size > haystack_size) {
    return std::string_view::npos;
  }
  std::vector<size_t> failure(needle_size, 0);  // longest proper border of needle[0..i]
  for (size_t i = 1, k = 0; i < needle_size; ++i) {
    while (k > 0 && needle_at(i) != needle_at(k)) {
      k = failure[k - 1];
    }
    if (needle_at(i) == needle_at(k)) {
      ++k;
    }
    failure[i] = k;
  }
  for (size_t i = 0, k = 0; i < haystack_size; ++i) {
    while (k > 0 && hay_at(i) != needle_at(k)) {
      k = failure[k - 1];
    }
    if (hay_at(i) == needle_at(k)) {
      ++k;
    }
    if (k == needle_size) {
      return i + 1 - needle_size;
    }
  }
  return std::string_view::npos;
}

}  // namespace

size_t FindFirst(std::string_view haystack, std::string_view needle, size_t from) {
  if (from > haystack.size()) {
    return std::string_view::npos;
  }
  if (needle.size() == 1) {  // the common case, memchr-fast
    return haystack.find(needle[0], from);
  }
  const std::string_view rest = haystack.substr(from);
  const size_t at = Kmp(
      rest.size(), needle.size(), [&](size_t i) { return rest[i]; },
      [&](size_t i) { return needle[i]; });
  return at == std::string_view::npos ? at : at + from;
}

size_t FindLast(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) {
    return haystack.size();
  }
  // The first match of the reversed needle in the reversed haystack is the last match.
  const size_t h = haystack.size(), n = needle.size();
  const size_t at = Kmp(
      h, n, [&](size_t i) { return haystack[h - 1 - i]; },
      [&](size_t i) { return needle[n - 1 - i]; });
  return at == std::string_view::npos ? at : h - at - n;
}

size_t PartialTagSuffix(std::string_view text, std::string_view tag) {
  if (tag.empty()) {
    return 0;
  }
  const size_t max_len = std::min(text.size(), tag.size() - 1);
  for (size_t len = max_len; len > 0; --len) {
    if (text.substr(text.size() - len) == tag.substr(0, len)) {
      return len;
    }
  }
  return 0;
}

}  // namespace tandem::text
