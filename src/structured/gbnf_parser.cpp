#include "structured/gbnf_parser.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

namespace tandem::structured {
namespace {

constexpr int kMaxDepth = 256;
constexpr int32_t kMaxRepeat = 10000;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view text) : text_(text) {}

  Result<Grammar> Parse() {
    Grammar grammar;
    SkipSpace(true);
    while (pos_ < text_.size()) {
      const std::string name = ParseName();
      if (name.empty()) return Error("a rule name");
      SkipSpace(false);
      if (!Consume("::=")) return Error("'::=' after rule name '" + name + "'");
      SkipSpace(true);
      TANDEM_ASSIGN_OR_RETURN(Expr body, ParseAlternatives(0));
      if (grammar.Find(name) != nullptr) {
        return InvalidArgument(
            fmt::format("grammar: rule '{}' is defined twice ({})", name, Where()));
      }
      grammar.Add(name, std::move(body));
      SkipSpace(false);
      if (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') {
        return Error("the end of the line after rule '" + name + "'");
      }
      SkipSpace(true);
    }
    if (grammar.Find("root") == nullptr) {
      return InvalidArgument("grammar has no 'root' rule (the start rule)");
    }
    return grammar;
  }

 private:
  Status Error(const std::string& expected) const {
    std::string found = pos_ < text_.size() ? fmt::format("'{}'", text_.substr(pos_, 10))
                                            : std::string("the end of the grammar");
    return InvalidArgument(
        fmt::format("grammar: expected {} at {}, found {}", expected, Where(), found));
  }
  std::string Where() const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return fmt::format("line {}, column {}", line, col);
  }

  // Spaces, tabs and comments; newlines too when `newline_ok`.
  void SkipSpace(bool newline_ok) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else {
        break;
      }
    }
  }
  bool Consume(std::string_view token) {
    if (text_.substr(pos_).starts_with(token)) {
      pos_ += token.size();
      return true;
    }
    return false;
  }
  std::string ParseName() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }
  // A name followed by "::=" starts the next rule.
  bool AtRuleStart() const {
    size_t p = pos_;
    while (p < text_.size() && IsNameChar(text_[p])) ++p;
    if (p == pos_) return false;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t')) ++p;
    return text_.substr(p).starts_with("::=");
  }

  Result<Expr> ParseAlternatives(int depth) {
    if (depth > kMaxDepth) return InvalidArgument("grammar: nesting deeper than 256 groups");
    std::vector<Expr> alternatives;
    while (true) {
      TANDEM_ASSIGN_OR_RETURN(Expr seq, ParseSequence(depth));
      alternatives.push_back(std::move(seq));
      SkipSpace(depth > 0);
      if (pos_ < text_.size() && text_[pos_] == '|') {
        ++pos_;
        SkipSpace(true);
        continue;
      }
      return Choice(std::move(alternatives));
    }
  }

  Result<Expr> ParseSequence(int depth) {
    std::vector<Expr> items;
    while (true) {
      SkipSpace(depth > 0);
      if (pos_ >= text_.size()) break;
      const char c = text_[pos_];
      if (c == '|' || c == ')' || c == '\n' || c == '\r' || AtRuleStart()) break;
      TANDEM_ASSIGN_OR_RETURN(Expr item, ParsePrimary(depth));
      TANDEM_ASSIGN_OR_RETURN(item, ParseQuantifier(std::move(item)));
      items.push_back(std::move(item));
    }
    return Sequence(std::move(items));
  }

  Result<Expr> ParsePrimary(int depth) {
    const char c = text_[pos_];
    if (c == '"') return ParseLiteral();
    if (c == '[') return ParseClass();
    if (c == '.') {
      ++pos_;
      return AnyCodepoint();
    }
    if (c == '(') {
      ++pos_;
      SkipSpace(true);
      TANDEM_ASSIGN_OR_RETURN(Expr inner, ParseAlternatives(depth + 1));
      SkipSpace(true);
      if (!Consume(")")) return Error("')'");
      return inner;
    }
    const std::string name = ParseName();
    if (name.empty()) return Error("a literal, a class, a rule name or '('");
    referenced_.insert(name);
    return RuleRef(name);
  }

  Result<Expr> ParseQuantifier(Expr item) {
    if (pos_ >= text_.size()) return item;
    switch (text_[pos_]) {
      case '*':
        ++pos_;
        return Star(std::move(item));
      case '+':
        ++pos_;
        return Plus(std::move(item));
      case '?':
        ++pos_;
        return Optional(std::move(item));
      case '{':
        break;
      default:
        return item;
    }
    ++pos_;
    TANDEM_ASSIGN_OR_RETURN(int32_t min, ParseCount());
    int32_t max = min;
    if (Consume(",")) {
      max = -1;
      if (pos_ < text_.size() && text_[pos_] != '}') {
        TANDEM_ASSIGN_OR_RETURN(max, ParseCount());
      }
    }
    if (!Consume("}")) return Error("'}' closing a repetition");
    if (max >= 0 && max < min) {
      return InvalidArgument(
          fmt::format("grammar: repetition {{{},{}}} has max < min ({})", min, max, Where()));
    }
    return Repeat(std::move(item), min, max);
  }

  Result<int32_t> ParseCount() {
    const size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      value = value * 10 + (text_[pos_++] - '0');
      if (value > kMaxRepeat) {
        return InvalidArgument(
            fmt::format("grammar: repetition count above {} ({})", kMaxRepeat, Where()));
      }
    }
    if (pos_ == start) return Error("a repetition count");
    return static_cast<int32_t>(value);
  }

  // One code point of a literal or class, escapes decoded. Raw bytes must be valid UTF-8.
  Result<uint32_t> ParseChar() {
    if (pos_ >= text_.size()) return Error("a character");
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '\\') return ParseEscape();
    if (c < 0x80) {
      ++pos_;
      return static_cast<uint32_t>(c);
    }
    const int len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t cp = len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    if (len == 0 || pos_ + len > text_.size()) return Error("valid UTF-8");
    for (int k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text_[pos_ + k]);
      if ((cc >> 6) != 2) return Error("valid UTF-8");
      cp = (cp << 6) | (cc & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  Result<uint32_t> ParseEscape() {
    ++pos_;  // the backslash
    if (pos_ >= text_.size()) return Error("an escaped character");
    const char e = text_[pos_++];
    switch (e) {
      case 'n':
        return uint32_t{'\n'};
      case 'r':
        return uint32_t{'\r'};
      case 't':
        return uint32_t{'\t'};
      case 'x':
        return ParseHex(2);
      case 'u':
        return ParseHex(4);
      case 'U':
        return ParseHex(8);
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^':
      case '/':
      case '.':
        return static_cast<uint32_t>(e);
      default:
        --pos_;
        return Error("a known escape (\\n \\r \\t \\\\ \\\" \\[ \\] \\- \\^ \\xHH \\uHHHH)");
    }
  }

  Result<uint32_t> ParseHex(int digits) {
    uint32_t value = 0;
    for (int k = 0; k < digits; ++k, ++pos_) {
      if (pos_ >= text_.size() || !std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
        return Error(fmt::format("{} hex digits", digits));
      }
      const char h = text_[pos_];
      value = value * 16 + (h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    if (value > kMaxCodepoint || (value >= 0xD800 && value <= 0xDFFF)) {
      return Error("a code point (not a surrogate, at most U+10FFFF)");
    }
    return value;
  }

  Result<Expr> ParseLiteral() {
    ++pos_;
    std::string bytes;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      TANDEM_ASSIGN_OR_RETURN(uint32_t cp, ParseChar());
      bytes += EncodeUtf8(cp);
    }
    if (!Consume("\"")) return Error("'\"' closing the literal");
    return Literal(std::move(bytes));
  }

  Result<Expr> ParseClass() {
    ++pos_;
    const bool negated = Consume("^");
    std::vector<CodepointRange> ranges;
    while (pos_ < text_.size() && text_[pos_] != ']') {
      TANDEM_ASSIGN_OR_RETURN(uint32_t lo, ParseChar());
      uint32_t hi = lo;
      if (pos_ + 1 < text_.size() && text_[pos_] == '-' && text_[pos_ + 1] != ']') {
        ++pos_;
        TANDEM_ASSIGN_OR_RETURN(hi, ParseChar());
        if (hi < lo) return Error("a range whose end is not below its start");
      }
      ranges.push_back({lo, hi});
    }
    if (!Consume("]")) return Error("']' closing the character class");
    return CharClass(std::move(ranges), negated);
  }

 public:
  Status CheckReferences(const Grammar& grammar) const {
    for (const std::string& name : referenced_) {
      if (grammar.Find(name) == nullptr) {
        return InvalidArgument(fmt::format("grammar: rule '{}' is used but not defined", name));
      }
    }
    return Status::Ok();
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::set<std::string> referenced_;
};

}  // namespace

Result<Grammar> ParseGbnf(std::string_view text) {
  GbnfParser parser(text);
  TANDEM_ASSIGN_OR_RETURN(Grammar grammar, parser.Parse());
  TANDEM_RETURN_IF_ERROR(parser.CheckReferences(grammar));
  return grammar;
}

}  // namespace tandem::structured
