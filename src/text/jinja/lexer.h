// Jinja lexer: splits template source into text runs and the tokens inside {{ }} / {% %} tags,
// applying whitespace control ("{%-", "-%}") and the trim_blocks / lstrip_blocks options that
// Hugging Face chat templates are rendered with. Comments ({# #}) are dropped.
// Reference: jinja2/lexer.py (Jinja 3.1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tandem::text::jinja {

struct Token {
  enum class Kind {
    kText,        // literal template text (already whitespace-trimmed)
    kVarBegin,    // {{
    kVarEnd,      // }}
    kBlockBegin,  // {%
    kBlockEnd,    // %}
    kName,        // identifier or keyword
    kString,      // string literal, unescaped
    kInteger,
    kFloat,
    kOperator,  // punctuation: == != <= >= // ** + - * / % ~ < > = ( ) [ ] { } , . : |
    kEnd,       // end of source
  };
  Kind kind;
  std::string text;
  int line;    // 1-based
  int column;  // 1-based
};

struct LexerOptions {
  bool trim_blocks = true;    // drop the first newline after a block tag
  bool lstrip_blocks = true;  // drop spaces/tabs from the line start up to a block tag
};

// Throws TemplateError (with line/column) on an unterminated tag or string, or a bad character.
std::vector<Token> Tokenize(std::string_view source, const LexerOptions& options);

}  // namespace tandem::text::jinja
