// Jinja parser: tokens (lexer.h) -> statement tree (ast.h), by recursive descent with Jinja's
// operator precedence: ternary < or < and < not < comparisons/in/is < + - < ~ < * / // % <
// unary < postfix (. [] () |filter).
// Reference: jinja2/parser.py (Jinja 3.1). Not supported yet: call blocks, {% set %}
// blocks, {% raw %}, includes/extends/imports.
#pragma once

#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/lexer.h"

namespace tandem::text::jinja {

// Throws TemplateError naming the line and column of the offending token.
Body Parse(const std::vector<Token>& tokens);

}  // namespace tandem::text::jinja
