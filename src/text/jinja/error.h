// TemplateError: how the Jinja lexer, parser and interpreter report a bad template or a failed
// render internally. It never leaves text/: ChatTemplate converts it into a Status.
#pragma once

#include <stdexcept>
#include <string>

namespace tandem::text::jinja {

class TemplateError : public std::runtime_error {
 public:
  // `line`/`column` are 1-based positions in the template source; 0 = unknown.
  // `raised` marks raise_exception() called by the template itself (its message is shown as is).
  TemplateError(std::string message, int line, int column, bool raised = false)
      : std::runtime_error(message), line_(line), column_(column), raised_(raised) {}
  int line() const { return line_; }
  int column() const { return column_; }
  bool raised() const { return raised_; }

 private:
  int line_;
  int column_;
  bool raised_;
};

// Throws a TemplateError at the position of `at` (an Expr or Stmt of ast.h: anything with
// `line` and `column`).
template <typename Node>
[[noreturn]] void Fail(const std::string& message, const Node& at) {
  throw TemplateError(message, at.line, at.column);
}

}  // namespace tandem::text::jinja
