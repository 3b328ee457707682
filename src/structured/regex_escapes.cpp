// The regex compiler's character-level atoms: escapes, in and out of classes (\n \xHH \uHHHH
// \u{H...} \UHHHHHHHH \cX, escaped punctuation, the class escapes \d \w \s and their
// complements), and [...] / [^...] classes with ranges and class escapes inside. These are
// RegexParser member functions (regex_parser.h); the structure of a pattern is read in
// regex_compiler.cpp.
//
// Choices where ECMA-262 and Python `re` differ here (all documented in the tests):
//   - \d \w \s and their complements are ASCII: [0-9], [A-Za-z0-9_], [ \t\n\r\f\v] (ECMA's \s
//     and all of Python's str classes are Unicode-aware). \D \W \S are the complements within
//     all code points.
//   - Escapes of ASCII letters and digits that are not listed below are refused (Python refuses
//     them, ECMA's Unicode mode too); escaped punctuation and non-ASCII is the character itself.
//     \0 followed by a digit (octal) is refused, as are \1..\9 (back-references) in and out
//     of classes. \cX (ECMA control letters) and \UHHHHHHHH (Python) are accepted.
//   - A class starting with ']' ("[]" or "[^]") is refused: empty/any in ECMA, a literal ']' in
//     Python. POSIX "[:alpha:]" inside a class is refused.
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/hex.h"
#include "structured/regex_parser.h"

namespace tandem::structured::regex_detail {
namespace {

// The ranges of \d \w \s (ASCII), complemented within all code points for \D \W \S; empty when
// `letter` names no class escape.
std::vector<CodepointRange> ClassEscapeRanges(char letter) {
  std::vector<CodepointRange> ranges;
  switch (letter | 0x20) {  // lower case
    case 'd':
      ranges = {{'0', '9'}};
      break;
    case 'w':
      ranges = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
      break;
    case 's':
      ranges = {{'\t', '\r'}, {' ', ' '}};
      break;  // \t \n \v \f \r and space
    default:
      return {};
  }
  if (letter >= 'A' && letter <= 'Z') return CharClass(std::move(ranges), true).ranges;
  return ranges;
}

bool IsClassEscape(char letter) { return !ClassEscapeRanges(letter).empty(); }

}  // namespace

// At '\' outside a class.
Result<Expr> RegexParser::ParseEscape() {
  const size_t start = pos_;
  ++pos_;
  if (AtEnd()) return Error(start, "the pattern ends with a lone backslash");
  const char c = Peek();
  if (IsClassEscape(c)) {
    ++pos_;
    return CharClass(ClassEscapeRanges(c));
  }
  if (c == 'b' || c == 'B') {
    ++pos_;
    return Unsupported(start, "word boundaries");
  }
  if (c == 'A' || c == 'Z' || c == 'z') {
    return Error(start, fmt::format("anchor '\\{}' is only supported at the {} of the pattern "
                                    "(which is always matched in full)",
                                    c, c == 'A' ? "start" : "end"));
  }
  TANDEM_ASSIGN_OR_RETURN(const uint32_t cp, ParseCharEscape(start));
  return Literal(EncodeUtf8(cp));
}

// After '\' at pos_ (in or out of a class; `start` is the '\'): the code point of a character
// escape, or an error naming the unsupported or unknown escape.
Result<uint32_t> RegexParser::ParseCharEscape(size_t start) {
  const char c = Peek();
  if (c >= '1' && c <= '9') {
    while (IsAsciiDigit(Peek())) ++pos_;
    return Unsupported(start, "back-references");
  }
  if (c == 'k' && Peek(1) == '<') {
    pos_ += 2;
    while (!AtEnd() && Peek() != '>') ++pos_;
    if (!AtEnd()) ++pos_;
    return Unsupported(start, "back-references");
  }
  if ((c == 'p' || c == 'P') && Peek(1) == '{') {
    pos_ += 2;
    while (!AtEnd() && Peek() != '}') ++pos_;
    if (!AtEnd()) ++pos_;
    return Unsupported(start, "Unicode property escapes");
  }
  if (c == '0' && IsAsciiDigit(Peek(1))) {
    pos_ += 2;
    return Unsupported(start, "octal escapes");
  }
  if (!IsAsciiAlnum(c)) return NextCodepoint();  // \. \\ \( \é ...: the character itself
  ++pos_;
  switch (c) {
    case 'n':
      return uint32_t{'\n'};
    case 't':
      return uint32_t{'\t'};
    case 'r':
      return uint32_t{'\r'};
    case 'f':
      return uint32_t{'\f'};
    case 'v':
      return uint32_t{'\v'};
    case '0':
      return uint32_t{0};
    case 'x':
      return ParseHex(start, 2, "\\xHH");
    case 'U': {
      TANDEM_ASSIGN_OR_RETURN(const uint32_t cp, ParseHex(start, 8, "\\UHHHHHHHH"));
      if (cp >= 0xD800 && cp <= 0xDFFF) return Error(start, "lone surrogate escape");
      return cp;
    }
    case 'u':
      return ParseUnicodeEscape(start);
    case 'c':
      if ((Peek() >= 'a' && Peek() <= 'z') || (Peek() >= 'A' && Peek() <= 'Z')) {
        return static_cast<uint32_t>(pattern_[pos_++] % 32);
      }
      return Error(start, "\\c must be followed by an ASCII letter");
    default:
      return Error(start, fmt::format("unknown escape '\\{}'", c));
  }
}

// Exactly `digits` hex digits at pos_, a code point UTF-8 can encode.
Result<uint32_t> RegexParser::ParseHex(size_t start, size_t digits, const char* form) {
  uint32_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    const int h = HexDigitValue(Peek());
    if (h < 0) return Error(start, fmt::format("escape needs the form {}", form));
    value = value * 16 + static_cast<uint32_t>(h);
    ++pos_;
  }
  if (value > kMaxCodepoint) return Error(start, "escape is above U+10FFFF");
  return value;
}

// After "\u": HHHH (a UTF-16 surrogate pair \uHHHH\uHHHH joins into one code point) or {H...}.
Result<uint32_t> RegexParser::ParseUnicodeEscape(size_t start) {
  if (Peek() == '{') {
    ++pos_;
    uint32_t value = 0;
    size_t digits = 0;
    for (; HexDigitValue(Peek()) >= 0 && digits < 7; ++digits, ++pos_) {
      value = value * 16 + static_cast<uint32_t>(HexDigitValue(Peek()));
    }
    if (digits == 0 || digits > 6 || Peek() != '}') {
      return Error(start, "escape needs the form \\u{H...} with 1 to 6 hex digits");
    }
    ++pos_;
    if (value > kMaxCodepoint) return Error(start, "escape is above U+10FFFF");
    if (value >= 0xD800 && value <= 0xDFFF) return Error(start, "lone surrogate escape");
    return value;
  }
  TANDEM_ASSIGN_OR_RETURN(const uint32_t unit, ParseHex(start, 4, "\\uHHHH"));
  if (unit < 0xD800 || unit > 0xDFFF) return unit;
  if (unit <= 0xDBFF && LooksAt("\\u")) {
    const size_t saved = pos_;
    pos_ += 2;
    TANDEM_ASSIGN_OR_RETURN(const uint32_t low, ParseHex(saved, 4, "\\uHHHH"));
    if (low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
  }
  return Error(start, "lone surrogate escape (UTF-8 cannot encode it)");
}

// At '['.
Result<Expr> RegexParser::ParseClass() {
  const size_t start = pos_;
  ++pos_;
  const bool negated = Peek() == '^';
  if (negated) ++pos_;
  if (Peek() == ']') {
    return Error(
        start, fmt::format("'{}' is ambiguous (ECMA-262: {}; Python: a class starting "
                           "with a literal ']'); write \\] for a literal ']'",
                           negated ? "[^]" : "[]", negated ? "any character" : "matches nothing"));
  }
  std::vector<CodepointRange> ranges;
  while (true) {
    if (AtEnd()) return Error(start, "missing ']' for the class opened here");
    if (Peek() == ']') break;
    const size_t item_start = pos_;
    ClassItem first;
    TANDEM_RETURN_IF_ERROR(ParseClassItem(&first));
    if (Peek() != '-' || pos_ + 1 >= pattern_.size() || Peek(1) == ']') {
      if (first.is_set)
        ranges.insert(ranges.end(), first.set.begin(), first.set.end());
      else
        ranges.push_back({first.cp, first.cp});
      continue;
    }
    ++pos_;  // '-'
    ClassItem last;
    TANDEM_RETURN_IF_ERROR(ParseClassItem(&last));
    const std::string_view text = pattern_.substr(item_start, pos_ - item_start);
    if (first.is_set || last.is_set) {
      return Error(item_start,
                   fmt::format("bad range '{}': an end is a class like \\d", Printable(text, 40)));
    }
    if (first.cp > last.cp) {
      return Error(item_start,
                   fmt::format("bad range '{}': it starts after it ends", Printable(text, 40)));
    }
    ranges.push_back({first.cp, last.cp});
  }
  ++pos_;  // ']'
  return CharClass(std::move(ranges), negated);
}

// One class member at pos_ (not at the end, not at the closing ']').
Status RegexParser::ParseClassItem(ClassItem* item) {
  const size_t start = pos_;
  if (Peek() == '[' && (Peek(1) == ':' || Peek(1) == '=' || Peek(1) == '.')) {
    const size_t close = pattern_.find(std::string{Peek(1), ']'}, pos_ + 2);
    if (close != std::string_view::npos) {
      pos_ = close + 2;
      return Unsupported(start, "POSIX classes");
    }
  }
  if (Peek() != '\\') {
    item->cp = NextCodepoint();
    return Status::Ok();
  }
  ++pos_;
  if (AtEnd()) return Error(start, "the pattern ends with a lone backslash");
  const char c = Peek();
  if (IsClassEscape(c)) {
    ++pos_;
    item->is_set = true;
    item->set = ClassEscapeRanges(c);
    return Status::Ok();
  }
  if (c == 'b') {  // backspace inside a class, in Python and ECMA-262 alike
    ++pos_;
    item->cp = '\b';
    return Status::Ok();
  }
  if (c == 'B' || c == 'A' || c == 'Z' || c == 'z') {
    ++pos_;
    return Error(start, fmt::format("escape '\\{}' is not allowed in a class", c));
  }
  TANDEM_ASSIGN_OR_RETURN(item->cp, ParseCharEscape(start));
  return Status::Ok();
}

}  // namespace tandem::structured::regex_detail
