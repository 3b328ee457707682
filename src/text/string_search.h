// Substring search in linear time, for text that requests control: std::string::find and rfind
// compare naively and take O(|haystack| · |needle|) on crafted input (a 300 KB needle in a 1 MB
// haystack took seconds), which a template's `in`, find(), split() or replace(), or the
// continue_final_message cut, would let one request spend.
// Reference: Knuth, Morris, Pratt, "Fast pattern matching in strings" (1977): the failure table.
#pragma once

#include <cstddef>
#include <string_view>

namespace tandem::text {

// Index of the first occurrence of `needle` in `haystack` at or after `from`, or npos. An empty
// needle is found at `from` (when from <= haystack.size()). O(|haystack| + |needle|) time,
// O(|needle|) memory. Thread-safe.
size_t FindFirst(std::string_view haystack, std::string_view needle, size_t from = 0);

// Index of the last occurrence of `needle` in `haystack`, or npos; an empty needle is found at
// haystack.size(). Same bounds.
size_t FindLast(std::string_view haystack, std::string_view needle);

// Length of the longest suffix of `text` that is a proper prefix of `tag`: the bytes a stream
// parser holds back because the next piece of text may complete the tag. O(|tag|²) time, for
// short tags (tool-call and reasoning markers).
size_t PartialTagSuffix(std::string_view text, std::string_view tag);

}  // namespace tandem::text
