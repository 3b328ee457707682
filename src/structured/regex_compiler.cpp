// CompileRegex: a recursive-descent parser that builds the grammar Expr while it reads.
//
//   alternation := sequence ('|' sequence)*
//   sequence    := ['^'] quantified* ['$']     (anchors only at the ends of a top-level branch)
//   quantified  := atom [quantifier ['?' | '+']]
//   atom        := literal | '.' | escape | class | '(' group ')'
//
// Each atom becomes an Expr at once (a literal code point is Literal of its UTF-8 bytes, a class
// is CharClass over code points) and a quantifier wraps it in one Repeat node, so the Expr has
// about as many nodes as the pattern has bytes: {m,n} is never expanded into copies.
//
// Limits, so that no input can crash or blow up: groups nest at most kMaxGroupDepth deep (the
// recursion depth of the parser is a small multiple of that), repetition counts are at most
// kMaxRepeat, and the pattern is checked to be valid UTF-8 before parsing starts. Every error is
// kInvalidArgument "regex: <what> (at offset <byte> of '<pattern, first 80 bytes>')".
//
// Choices where ECMA-262 and Python `re` differ (all documented in the tests):
//   - \d \w \s and their complements are ASCII: [0-9], [A-Za-z0-9_], [ \t\n\r\f\v] (ECMA's \s
//     and all of Python's str classes are Unicode-aware). \D \W \S are the complements within
//     all code points.
//   - "." is any code point but "\n" (Python; ECMA also excludes \r, U+2028 and U+2029).
//   - ^ / \A and $ / \Z / \z are accepted at the start / end of each top-level branch, where
//     under full-match semantics they mean nothing; anywhere else they are refused.
//   - Lazy (*?) quantifiers are read as the plain greedy one: exact under full matching.
//     Possessive ones (*+) are refused: they can match fewer strings than the greedy form
//     (r'a*+a' matches nothing in Python), which a grammar cannot express.
//   - A '{' that does not start a well-formed {m} {m,} {m,n} is a literal (Python, ECMA Annex
//     B); {,n} is refused because Python reads it as {0,n} and ECMA as the literal text.
//   - Escapes of ASCII letters and digits that are not listed below are refused (Python refuses
//     them, ECMA's Unicode mode too); escaped punctuation and non-ASCII is the character itself.
//     \0 followed by a digit (octal) is refused, as are \1..\9 (back-references) in and out
//     of classes. \cX (ECMA control letters) and \UHHHHHHHH (Python) are accepted.
//   - A class starting with ']' ("[]" or "[^]") is refused: empty/any in ECMA, a literal ']' in
//     Python. POSIX "[:alpha:]" inside a class is refused.
#include "structured/regex_compiler.h"

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace tandem::structured {
namespace {

constexpr int kMaxGroupDepth = 256;
constexpr int32_t kMaxRepeat = 10000;
constexpr size_t kMaxQuoteBytes = 80;

// Decodes the UTF-8 code point at `pos` of `s` into *cp; returns its length in bytes, or 0 when
// the bytes there are not valid UTF-8 (truncated, overlong, a surrogate, above U+10FFFF).
size_t DecodeUtf8(std::string_view s, size_t pos, uint32_t* cp) {
  if (pos >= s.size()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  const unsigned char c = byte(0);
  const size_t len = c < 0x80          ? 1
                     : (c >> 5) == 0x6 ? 2
                     : (c >> 4) == 0xE ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
  if (len == 0 || pos + len > s.size()) return 0;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t i = 1; i < len; ++i) {
    if ((byte(i) >> 6) != 0x2) return 0;
    v = (v << 6) | (byte(i) & 0x3F);
  }
  static constexpr uint32_t kMinForLength[] = {0, 0, 0x80, 0x800, 0x10000};
  if (v < kMinForLength[len] || v > kMaxCodepoint || (v >= 0xD800 && v <= 0xDFFF)) return 0;
  *cp = v;
  return len;
}

// `text` made safe to print inside an error message (itself sent as JSON, so it must be valid
// UTF-8): control characters and bytes that are not UTF-8 become \xHH. At most `max_bytes` of
// `text` are shown, cut at a code point boundary, followed by "..." when cut.
std::string Printable(std::string_view text, size_t max_bytes) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    uint32_t cp = 0;
    size_t len = DecodeUtf8(text, pos, &cp);
    if (pos + std::max<size_t>(len, 1) > max_bytes) return out + "...";
    if (len == 0 || cp < 0x20 || cp == 0x7F) {
      out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[pos]));
      len = 1;
    } else {
      out.append(text.substr(pos, len));
    }
    pos += len;
  }
  return out;
}

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiAlnum(char c) {
  return IsAsciiDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The ranges of \d \w \s (ASCII), complemented within all code points for \D \W \S; empty when
// `letter` names no class escape.
std::vector<CodepointRange> ClassEscapeRanges(char letter) {
  std::vector<CodepointRange> ranges;
  switch (letter | 0x20) {  // lower case
    case 'd': ranges = {{'0', '9'}}; break;
    case 'w': ranges = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}; break;
    case 's': ranges = {{'\t', '\r'}, {' ', ' '}}; break;  // \t \n \v \f \r and space
    default: return {};
  }
  if (letter >= 'A' && letter <= 'Z') return CharClass(std::move(ranges), true).ranges;
  return ranges;
}

bool IsClassEscape(char letter) { return !ClassEscapeRanges(letter).empty(); }

// One element of a [...] class: a single code point or the ranges of a class escape like \d.
struct ClassItem {
  bool is_set = false;
  uint32_t cp = 0;
  std::vector<CodepointRange> set;
};

class RegexParser {
 public:
  explicit RegexParser(std::string_view pattern) : pattern_(pattern) {}

  Result<Expr> Parse() {
    for (size_t pos = 0; pos < pattern_.size();) {
      uint32_t cp = 0;
      const size_t len = DecodeUtf8(pattern_, pos, &cp);
      if (len == 0) {
        return Error(pos, fmt::format("invalid UTF-8 byte 0x{:02X}",
                                      static_cast<unsigned char>(pattern_[pos])));
      }
      pos += len;
    }
    TANDEM_ASSIGN_OR_RETURN(Expr root, ParseAlternation(0));
    if (!AtEnd()) return Error(pos_, "unbalanced ')' (no group is open)");
    return root;
  }

 private:
  Status Error(size_t offset, std::string_view what) const {
    return InvalidArgument(fmt::format("regex: {} (at offset {} of '{}')", what, offset,
                                       Printable(pattern_, kMaxQuoteBytes)));
  }
  // "<construct> are not supported", quoting the pattern text from `offset` to pos_.
  Status Unsupported(size_t offset, std::string_view construct) const {
    return Error(offset, fmt::format("{} ({}) are not supported", construct,
                                     Printable(pattern_.substr(offset, pos_ - offset), 40)));
  }

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

Result<Expr> RegexParser::ParseAlternation(int depth) {
  std::vector<Expr> branches;
  while (true) {
    TANDEM_ASSIGN_OR_RETURN(Expr branch, ParseSequence(depth));
    branches.push_back(std::move(branch));
    if (AtEnd() || Peek() != '|') break;
    ++pos_;
  }
  return Choice(std::move(branches));
}

// The length of a $ / \Z / \z at pos_ that ends a top-level branch, else 0.
size_t RegexParser::EndAnchorLength() const {
  const size_t len = Peek() == '$' ? 1 : (LooksAt("\\Z") || LooksAt("\\z")) ? 2 : 0;
  if (len == 0) return 0;
  const bool branch_ends = pos_ + len == pattern_.size() || pattern_[pos_ + len] == '|';
  return branch_ends ? len : 0;
}

// Items up to the end, a '|' or a ')'. At depth 0 a leading ^ / \A and a trailing $ / \Z / \z
// are skipped: the whole text is matched anyway.
Result<Expr> RegexParser::ParseSequence(int depth) {
  if (depth == 0 && Peek() == '^') {
    ++pos_;
  } else if (depth == 0 && LooksAt("\\A")) {
    pos_ += 2;
  }
  std::vector<Expr> items;
  while (!AtEnd() && Peek() != '|' && Peek() != ')') {
    if (depth == 0) {
      if (const size_t len = EndAnchorLength(); len > 0) {
        pos_ += len;
        break;
      }
    }
    TANDEM_ASSIGN_OR_RETURN(Expr atom, ParseAtom(depth));
    TANDEM_ASSIGN_OR_RETURN(Expr item, ParseQuantified(std::move(atom)));
    items.push_back(std::move(item));
  }
  return Sequence(std::move(items));
}

// An optional quantifier after `atom`, with its optional lazy '?' or possessive '+' suffix.
Result<Expr> RegexParser::ParseQuantified(Expr atom) {
  const size_t start = pos_;
  int32_t lo = 0;
  int32_t hi = -1;
  if (Peek() == '*') {
    ++pos_;
  } else if (Peek() == '+') {
    lo = 1;
    ++pos_;
  } else if (Peek() == '?') {
    hi = 1;
    ++pos_;
  } else if (Peek() == '{') {
    TANDEM_ASSIGN_OR_RETURN(const bool is_quantifier, ParseBraces(&lo, &hi));
    if (!is_quantifier) return atom;
  } else {
    return atom;
  }
  if (Peek() == '?') {
    ++pos_;  // lazy: the same strings under full matching (see top)
  } else if (Peek() == '+') {
    // Possessive: never gives back, so it can match fewer strings than the greedy form; a
    // grammar cannot express that, and a superset would let invalid output through.
    ++pos_;
    return Unsupported(start, "possessive quantifiers");
  }
  const size_t next = pos_;
  int32_t unused_lo = 0;
  int32_t unused_hi = 0;
  bool another = Peek() == '*' || Peek() == '+' || Peek() == '?';
  if (!another && Peek() == '{') {
    TANDEM_ASSIGN_OR_RETURN(another, ParseBraces(&unused_lo, &unused_hi));
  }
  if (another) {
    pos_ = next;
    return Error(next, fmt::format("a quantifier follows the quantifier '{}'; group the first "
                                   "with (?:...) to repeat it",
                                   pattern_.substr(start, next - start)));
  }
  return Repeat(std::move(atom), lo, hi);
}

// A decimal repetition count at pos_ (at least one digit there), at most kMaxRepeat.
Result<int32_t> RegexParser::ParseCount(size_t brace_offset) {
  const size_t start = pos_;
  int64_t value = 0;
  while (IsAsciiDigit(Peek())) {
    value = std::min<int64_t>(value * 10 + (Peek() - '0'), int64_t{kMaxRepeat} + 1);
    ++pos_;
  }
  if (value > kMaxRepeat) {
    return Error(brace_offset, fmt::format("repetition count {} is above the limit of {}",
                                           pattern_.substr(start, pos_ - start), kMaxRepeat));
  }
  return static_cast<int32_t>(value);
}

// At '{': reads {m}, {m,} or {m,n} into *lo / *hi and returns true; returns false with pos_
// unmoved when the text there is not a quantifier (the '{' is then a literal).
Result<bool> RegexParser::ParseBraces(int32_t* lo, int32_t* hi) {
  const size_t start = pos_;
  size_t end = pos_ + 1;
  while (end < pattern_.size() && (IsAsciiDigit(pattern_[end]) || pattern_[end] == ',')) ++end;
  const std::string_view body = pattern_.substr(start + 1, end - start - 1);
  const size_t comma = body.find(',');
  if (end >= pattern_.size() || pattern_[end] != '}' || body.empty() ||
      (comma != std::string_view::npos && body.find(',', comma + 1) != std::string_view::npos)) {
    return false;
  }
  if (comma == 0) {
    return Error(start, fmt::format("'{{{}}}' is ambiguous (Python reads {{0{}}}, ECMA-262 the "
                                    "literal text); write {{0{}}}",
                                    body, body, body));
  }
  ++pos_;
  TANDEM_ASSIGN_OR_RETURN(*lo, ParseCount(start));
  *hi = *lo;
  if (Peek() == ',') {
    ++pos_;
    *hi = -1;
    if (Peek() != '}') {
      TANDEM_ASSIGN_OR_RETURN(*hi, ParseCount(start));
    }
  }
  ++pos_;  // '}'
  if (*hi >= 0 && *lo > *hi) {
    return Error(start, fmt::format("bad repetition bounds {{{}}}: the minimum is above the "
                                    "maximum", body));
  }
  return true;
}

Result<Expr> RegexParser::ParseAtom(int depth) {
  const size_t start = pos_;
  const char c = Peek();
  switch (c) {
    case '(':
      return ParseGroup(depth);
    case '[':
      return ParseClass();
    case '\\':
      return ParseEscape();
    case '.':
      ++pos_;
      return CharClass({{'\n', '\n'}}, /*negated=*/true);
    case '^':
    case '$':
      return Error(start, fmt::format("anchor '{}' is only supported at the {} of the pattern "
                                      "(which is always matched in full)",
                                      c, c == '^' ? "start" : "end"));
    case '*':
    case '+':
    case '?':
      return Error(start, fmt::format("quantifier '{}' has nothing to repeat", c));
    case '{': {
      int32_t lo = 0;
      int32_t hi = 0;
      TANDEM_ASSIGN_OR_RETURN(const bool is_quantifier, ParseBraces(&lo, &hi));
      if (is_quantifier) {
        return Error(start, fmt::format("quantifier '{}' has nothing to repeat",
                                        pattern_.substr(start, pos_ - start)));
      }
      ++pos_;
      return Literal("{");
    }
    default:
      return Literal(EncodeUtf8(NextCodepoint()));
  }
}

Result<Expr> RegexParser::ParseGroup(int depth) {
  const size_t start = pos_;
  if (depth >= kMaxGroupDepth) {
    return Error(start, fmt::format("groups are nested more than {} deep", kMaxGroupDepth));
  }
  ++pos_;
  if (Peek() == '?') {
    TANDEM_RETURN_IF_ERROR(ParseGroupPrefix(start));
  }
  TANDEM_ASSIGN_OR_RETURN(Expr body, ParseAlternation(depth + 1));
  if (AtEnd()) return Error(start, "missing ')' for the group opened here");
  ++pos_;  // ')': ParseSequence stops only at the end, '|' or ')'
  return body;
}

// After "(" at a '?': accepts "?:", "?<name>" and "?P<name>"; refuses every other extension.
Status RegexParser::ParseGroupPrefix(size_t start) {
  const auto refuse = [&](size_t len, std::string_view construct) {
    pos_ += len;
    return Unsupported(start, construct);
  };
  if (LooksAt("?:")) {
    pos_ += 2;
    return Status::Ok();
  }
  if (LooksAt("?=") || LooksAt("?!")) return refuse(2, "lookahead assertions");
  if (LooksAt("?<=") || LooksAt("?<!")) return refuse(3, "lookbehind assertions");
  if (LooksAt("?P<")) {
    pos_ += 3;
    return ParseGroupName(start, '>');
  }
  if (LooksAt("?<")) {
    pos_ += 2;
    return ParseGroupName(start, '>');
  }
  if (LooksAt("?P=")) return refuse(3, "back-references");
  if (LooksAt("?#")) return refuse(2, "comment groups");
  if (LooksAt("?>")) return refuse(2, "atomic groups");
  if (LooksAt("?(")) return refuse(2, "conditional groups");
  if (IsAsciiAlnum(Peek(1)) || Peek(1) == '-') return refuse(2, "inline flags");
  return refuse(1, "group extensions");
}

// A group name (an identifier: ASCII letters, digits, '_' or non-ASCII; not starting with a
// digit) up to `close`, each name at most once.
Status RegexParser::ParseGroupName(size_t start, char close) {
  const size_t name_start = pos_;
  while (!AtEnd() && Peek() != close) {
    const char c = Peek();
    const bool ok = IsAsciiAlnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
    if (!ok || (pos_ == name_start && IsAsciiDigit(c))) {
      return Error(pos_, "bad character in a group name");
    }
    ++pos_;
  }
  if (AtEnd()) return Error(start, fmt::format("missing '{}' after the group name", close));
  if (pos_ == name_start) return Error(start, "empty group name");
  std::string name(pattern_.substr(name_start, pos_ - name_start));
  ++pos_;
  if (!group_names_.insert(name).second) {
    return Error(start, fmt::format("group name '{}' is used twice", Printable(name, 40)));
  }
  return Status::Ok();
}

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
    case 'n': return uint32_t{'\n'};
    case 't': return uint32_t{'\t'};
    case 'r': return uint32_t{'\r'};
    case 'f': return uint32_t{'\f'};
    case 'v': return uint32_t{'\v'};
    case '0': return uint32_t{0};
    case 'x': return ParseHex(start, 2, "\\xHH");
    case 'U': {
      TANDEM_ASSIGN_OR_RETURN(const uint32_t cp, ParseHex(start, 8, "\\UHHHHHHHH"));
      if (cp >= 0xD800 && cp <= 0xDFFF) return Error(start, "lone surrogate escape");
      return cp;
    }
    case 'u': return ParseUnicodeEscape(start);
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
    const int h = HexValue(Peek());
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
    for (; HexValue(Peek()) >= 0 && digits < 7; ++digits, ++pos_) {
      value = value * 16 + static_cast<uint32_t>(HexValue(Peek()));
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
    return Error(start, fmt::format("'{}' is ambiguous (ECMA-262: {}; Python: a class starting "
                                    "with a literal ']'); write \\] for a literal ']'",
                                    negated ? "[^]" : "[]",
                                    negated ? "any character" : "matches nothing"));
  }
  std::vector<CodepointRange> ranges;
  while (true) {
    if (AtEnd()) return Error(start, "missing ']' for the class opened here");
    if (Peek() == ']') break;
    const size_t item_start = pos_;
    ClassItem first;
    TANDEM_RETURN_IF_ERROR(ParseClassItem(&first));
    if (Peek() != '-' || pos_ + 1 >= pattern_.size() || Peek(1) == ']') {
      if (first.is_set) ranges.insert(ranges.end(), first.set.begin(), first.set.end());
      else ranges.push_back({first.cp, first.cp});
      continue;
    }
    ++pos_;  // '-'
    ClassItem last;
    TANDEM_RETURN_IF_ERROR(ParseClassItem(&last));
    const std::string_view text = pattern_.substr(item_start, pos_ - item_start);
    if (first.is_set || last.is_set) {
      return Error(item_start, fmt::format("bad range '{}': an end is a class like \\d",
                                           Printable(text, 40)));
    }
    if (first.cp > last.cp) {
      return Error(item_start, fmt::format("bad range '{}': it starts after it ends",
                                           Printable(text, 40)));
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

}  // namespace

Result<Expr> CompileRegex(std::string_view pattern) { return RegexParser(pattern).Parse(); }

}  // namespace tandem::structured
