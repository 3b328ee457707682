// RegexParser: the recursive-descent parser behind CompileRegex (regex_compiler.h), internal to
// the regex compiler. Its member functions live in two files: regex_compiler.cpp (the structure
// of a pattern: alternation, sequences and anchors, quantifiers, groups, and the error messages)
// and regex_escapes.cpp (escapes and [...] classes). Also here: the UTF-8 and character helpers
// both files use. Nothing here is used outside those two files.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "structured/grammar.h"

namespace tandem::structured::regex_detail {

// Decodes the UTF-8 code point at `pos` of `s` into *cp; returns its length in bytes, or 0 when
// the bytes there are not valid UTF-8 (truncated, overlong, a surrogate, above U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t pos, uint32_t* cp);

// `text` made safe to print inside an error message (itself sent as JSON, so it must be valid
// UTF-8): control characters and bytes that are not UTF-8 become \xHH. At most `max_bytes` of
// `text` are shown, cut at a code point boundary, followed by "..." when cut.
std::string Printable(std::string_view text, size_t max_bytes);

inline bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsAsciiAlnum(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// One element of a [...] class: a single code point or the ranges of a class escape like \d.
struct ClassItem {
  bool is_set = false;
  uint32_t cp = 0;
  std::vector<CodepointRange> set;
};

class RegexParser {
 public:
  explicit RegexParser(std::string_view pattern) : pattern_(pattern) {}

  Result<Expr> Parse();

 private:
  Status Error(size_t offset, std::string_view what) const;
  // "<construct> are not supported", quoting the pattern text from `offset` to pos_.
  Status Unsupported(size_t offset, std::string_view construct) const;

  bool AtEnd() const { return pos_ >= pattern_.size(); }
  // The byte `ahead` bytes on, or '\0' past the end (test AtEnd() where a NUL byte matters).
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < pattern_.size() ? pattern_[pos_ + ahead] : '\0';
  }
  bool LooksAt(std::string_view s) const { return pattern_.substr(pos_).starts_with(s); }
  // The code point at pos_ (the pattern is valid UTF-8 by now), moving past it.
  uint32_t NextCodepoint() {
    uint32_t cp = 0;
    const size_t len = DecodeUtf8(pattern_, pos_, &cp);
    pos_ += len > 0 ? len : 1;
    return cp;
  }

  // regex_compiler.cpp
  Result<Expr> ParseAlternation(int depth);
  Result<Expr> ParseSequence(int depth);
  size_t EndAnchorLength() const;
  Result<Expr> ParseQuantified(Expr atom);
  Result<bool> ParseBraces(int32_t* lo, int32_t* hi);
  Result<int32_t> ParseCount(size_t brace_offset);
  Result<Expr> ParseAtom(int depth);
  Result<Expr> ParseGroup(int depth);
  Status ParseGroupPrefix(size_t start);
  Status ParseGroupName(size_t start, char close);
  // regex_escapes.cpp
  Result<Expr> ParseEscape();
  Result<uint32_t> ParseCharEscape(size_t start);
  Result<uint32_t> ParseHex(size_t start, size_t digits, const char* form);
  Result<uint32_t> ParseUnicodeEscape(size_t start);
  Result<Expr> ParseClass();
  Status ParseClassItem(ClassItem* item);

  std::string_view pattern_;
  size_t pos_ = 0;
  std::set<std::string> group_names_;
};

}  // namespace tandem::structured::regex_detail
