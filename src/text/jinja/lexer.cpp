#include "text/jinja/lexer.h"

#include <algorithm>
#include <cctype>

#include "text/jinja/error.h"

namespace tandem::text::jinja {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

class Lexer {
 public:
  Lexer(std::string_view source, const LexerOptions& options) : source_(source), options_(options) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < source.size(); ++i) {
      if (source[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  std::vector<Token> Run() {
    size_t pos = 0;
    bool strip_leading = false;  // the previous tag ended with "-"
    while (pos < source_.size()) {
      size_t tag = FindTagStart(pos);
      std::string text(source_.substr(pos, tag - pos));
      if (strip_leading) {
        text.erase(0, std::find_if(text.begin(), text.end(), [](char c) { return !IsSpace(c); }) -
                          text.begin());
      }
      if (tag < source_.size()) TrimBeforeTag(tag, pos, &text);
      if (!text.empty()) Push(Token::Kind::kText, text, pos);
      if (tag >= source_.size()) break;
      pos = LexTag(tag, &strip_leading);
    }
    Push(Token::Kind::kEnd, "", source_.size());
    return std::move(tokens_);
  }

 private:
  size_t FindTagStart(size_t pos) const {
    while (true) {
      size_t brace = source_.find('{', pos);
      if (brace == std::string_view::npos || brace + 1 >= source_.size()) return source_.size();
      char next = source_[brace + 1];
      if (next == '{' || next == '%' || next == '#') return brace;
      pos = brace + 1;
    }
  }

  // Whitespace control on the text before the tag at `tag` ("{%-" or lstrip_blocks).
  void TrimBeforeTag(size_t tag, size_t text_start, std::string* text) const {
    char kind = source_[tag + 1];
    char modifier = tag + 2 < source_.size() ? source_[tag + 2] : '\0';
    if (modifier == '-') {
      while (!text->empty() && IsSpace(text->back())) text->pop_back();
    } else if (modifier != '+' && options_.lstrip_blocks && (kind == '%' || kind == '#')) {
      size_t start = tag;
      while (start > text_start && (source_[start - 1] == ' ' || source_[start - 1] == '\t')) {
        --start;
      }
      bool at_line_start = start == 0 || source_[start - 1] == '\n';
      if (at_line_start && tag - start <= text->size()) text->resize(text->size() - (tag - start));
    }
  }

  // Lexes the tag starting at `tag`; returns the position after it.
  size_t LexTag(size_t tag, bool* strip_leading) {
    char kind = source_[tag + 1];
    size_t pos = tag + 2;
    if (pos < source_.size() && (source_[pos] == '-' || source_[pos] == '+')) ++pos;
    if (kind == '#') {
      size_t end = source_.find("#}", pos);
      if (end == std::string_view::npos) Fail("unterminated comment, expected '#}'", tag);
      *strip_leading = source_[end - 1] == '-';
      return AfterBlockEnd(end + 2, *strip_leading);
    }
    std::string_view close = kind == '{' ? "}}" : "%}";
    Push(kind == '{' ? Token::Kind::kVarBegin : Token::Kind::kBlockBegin, "", tag);
    while (true) {
      while (pos < source_.size() && IsSpace(source_[pos])) ++pos;
      if (pos >= source_.size())
        Fail("unterminated tag, expected '" + std::string(close) + "'", tag);
      bool dash = source_[pos] == '-' && source_.substr(pos + 1, 2) == close;
      if (dash || source_.substr(pos, 2) == close) {
        size_t end = pos + (dash ? 3 : 2);
        Push(kind == '{' ? Token::Kind::kVarEnd : Token::Kind::kBlockEnd, "", pos);
        *strip_leading = dash;
        return kind == '%' ? AfterBlockEnd(end, dash) : end;
      }
      pos = LexExpressionToken(pos);
    }
  }

  // trim_blocks: a newline right after a block tag is dropped.
  size_t AfterBlockEnd(size_t pos, bool dash) const {
    if (!dash && options_.trim_blocks) {
      if (source_.substr(pos, 2) == "\r\n") return pos + 2;
      if (pos < source_.size() && source_[pos] == '\n') return pos + 1;
    }
    return pos;
  }

  size_t LexExpressionToken(size_t pos) {
    char c = source_[pos];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos;
      while (end < source_.size() &&
             (std::isalnum(static_cast<unsigned char>(source_[end])) || source_[end] == '_')) {
        ++end;
      }
      Push(Token::Kind::kName, std::string(source_.substr(pos, end - pos)), pos);
      return end;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = pos;
      bool is_float = false;
      while (end < source_.size() &&
             (std::isdigit(static_cast<unsigned char>(source_[end])) || source_[end] == '_' ||
              (source_[end] == '.' && !is_float && end + 1 < source_.size() &&
               std::isdigit(static_cast<unsigned char>(source_[end + 1]))))) {
        is_float |= source_[end] == '.';
        ++end;
      }
      std::string digits(source_.substr(pos, end - pos));
      digits.erase(std::remove(digits.begin(), digits.end(), '_'), digits.end());
      Push(is_float ? Token::Kind::kFloat : Token::Kind::kInteger, digits, pos);
      return end;
    }
    if (c == '\'' || c == '"') return LexString(pos);
    static constexpr std::string_view kTwoChar[] = {"==", "!=", "<=", ">=", "//", "**"};
    for (std::string_view op : kTwoChar) {
      if (source_.substr(pos, 2) == op) {
        Push(Token::Kind::kOperator, std::string(op), pos);
        return pos + 2;
      }
    }
    if (std::string_view("+-*/%~<>=()[]{},.:|").find(c) != std::string_view::npos) {
      Push(Token::Kind::kOperator, std::string(1, c), pos);
      return pos + 1;
    }
    Fail(std::string("unexpected character '") + c + "' in tag", pos);
  }

  size_t LexString(size_t pos) {
    char quote = source_[pos];
    std::string value;
    size_t i = pos + 1;
    for (; i < source_.size() && source_[i] != quote; ++i) {
      if (source_[i] != '\\' || i + 1 >= source_.size()) {
        value += source_[i];
        continue;
      }
      char e = source_[++i];
      switch (e) {
        case 'n':
          value += '\n';
          break;
        case 't':
          value += '\t';
          break;
        case 'r':
          value += '\r';
          break;
        case '0':
          value += '\0';
          break;
        default:
          value += e;  // \\ \' \" and unknown escapes keep the character
      }
    }
    if (i >= source_.size()) Fail("unterminated string literal", pos);
    Push(Token::Kind::kString, value, pos);
    return i + 1;
  }

  void Push(Token::Kind kind, std::string text, size_t pos) {
    auto [line, column] = LineColumn(pos);
    tokens_.push_back({kind, std::move(text), line, column});
  }

  std::pair<int, int> LineColumn(size_t pos) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos) - 1;
    return {static_cast<int>(it - line_starts_.begin()) + 1, static_cast<int>(pos - *it) + 1};
  }

  [[noreturn]] void Fail(const std::string& message, size_t pos) const {
    auto [line, column] = LineColumn(pos);
    throw TemplateError(message, line, column);
  }

  std::string_view source_;
  LexerOptions options_;
  std::vector<size_t> line_starts_;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Tokenize(std::string_view source, const LexerOptions& options) {
  return Lexer(source, options).Run();
}

}  // namespace tandem::text::jinja
