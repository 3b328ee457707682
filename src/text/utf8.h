// UTF-8 helpers shared by the tokenizers and the detokenizer: splitting text into code points
// and turning arbitrary bytes into valid UTF-8 (invalid sequences become U+FFFD).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::text {

// The replacement character U+FFFD, encoded ("\xEF\xBF\xBD").
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

// Splits `text` into UTF-8 characters. A byte that does not start a complete, valid sequence
// becomes a one-byte "character" of its own, so the concatenation always equals `text`.
std::vector<std::string_view> SplitUtf8Chars(std::string_view text);

// Length of the valid UTF-8 sequence starting at `bytes[0]`: 1..4 when complete and valid,
// 0 when the bytes are an incomplete but so far valid prefix (more bytes may complete it),
// -1 when invalid. `bytes` must be non-empty.
int Utf8SequenceLength(std::string_view bytes);

// Appends the valid UTF-8 of `bytes` to `out`, replacing each maximal invalid subsequence by
// U+FFFD (Python's errors="replace" / WHATWG semantics). When `final` is false, a trailing
// incomplete-but-valid prefix is not consumed. Returns the number of bytes consumed.
size_t AppendSanitizedUtf8(std::string_view bytes, bool final, std::string* out);

// AppendSanitizedUtf8(bytes, /*final=*/true) into a new string.
std::string SanitizeUtf8(std::string_view bytes);

}  // namespace tandem::text
