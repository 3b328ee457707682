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
// Choices where ECMA-262 and Python `re` differ (all documented in the tests; those about escapes
// and classes are at the top of regex_escapes.cpp):
//   - "." is any code point but "\n" (Python; ECMA also excludes \r, U+2028 and U+2029).
//   - ^ / \A and $ / \Z / \z are accepted at the start / end of each top-level branch, where
//     under full-match semantics they mean nothing; anywhere else they are refused.
//   - Lazy (*?) quantifiers are read as the plain greedy one: exact under full matching.
//     Possessive ones (*+) are refused: they can match fewer strings than the greedy form
//     (r'a*+a' matches nothing in Python), which a grammar cannot express.
//   - A '{' that does not start a well-formed {m} {m,} {m,n} is a literal (Python, ECMA Annex
//     B); {,n} is refused because Python reads it as {0,n} and ECMA as the literal text.
//
// The parser (regex_parser.h) reads the structure of the pattern here; escapes and [...] classes
// are read in regex_escapes.cpp.
#include "structured/regex_compiler.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "structured/regex_parser.h"

namespace tandem::structured {
namespace regex_detail {
namespace {

constexpr int kMaxGroupDepth = 256;
constexpr int32_t kMaxRepeat = 10000;
constexpr size_t kMaxQuoteBytes = 80;

}  // namespace

size_t DecodeUtf8(std::string_view s, size_t pos, uint32_t* cp) {
  if (pos >= s.size()) return 0;
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[pos + i]); };
  const unsigned char c = byte(0);
  const size_t len = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
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

Result<Expr> RegexParser::Parse() {
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

Status RegexParser::Error(size_t offset, std::string_view what) const {
  return InvalidArgument(fmt::format("regex: {} (at offset {} of '{}')", what, offset,
                                     Printable(pattern_, kMaxQuoteBytes)));
}

Status RegexParser::Unsupported(size_t offset, std::string_view construct) const {
  return Error(offset, fmt::format("{} ({}) are not supported", construct,
                                   Printable(pattern_.substr(offset, pos_ - offset), 40)));
}

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
                                    "maximum",
                                    body));
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

}  // namespace regex_detail

Result<Expr> CompileRegex(std::string_view pattern) {
  return regex_detail::RegexParser(pattern).Parse();
}

}  // namespace tandem::structured
