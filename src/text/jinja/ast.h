// Jinja syntax tree: expressions (Expr) and statements (Node), each with its source position
// for error messages. Built by Parser, walked by Interpreter.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem::text::jinja {

// Template values are ordered JSON so dicts keep insertion order, as Python's do (tojson output).
using Json = nlohmann::ordered_json;

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,  // literal
    kName,     // name
    kList,     // [args...]
    kTuple,    // (args...)
    kDict,     // {args[0]: args[1], args[2]: args[3], ...}
    kAttr,     // args[0].name
    kIndex,    // args[0][args[1]]
    kSlice,    // args[0][args[1]:args[2]:args[3]], omitted parts are null
    kCall,     // args[0](args[1:]..., kwargs...)
    kFilter,   // args[0] | name(args[1:]..., kwargs...)
    kTest,     // args[0] is [not] name(args[1:]...)
    kUnary,    // name args[0], name in {"not", "-", "+"}
    kBinary,   // args[0] name args[1], name an operator, "and", "or", "in", "not in"
    kTernary,  // args[0] if args[1] else args[2] (args[2] may be null)
  };
  Kind kind;
  int line = 0;
  int column = 0;
  Json literal;
  std::string name;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  bool negated = false;  // kTest: "is not"
  int32_t height = 1;    // 1 + the tallest child's height (Parser bounds it: Eval and the
                         // destructor recurse over it)
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct Node {
  enum class Kind {
    kText,    // text
    kOutput,  // {{ expr }}
    kIf,      // branches (cond, body)...; else_body
    kFor,     // {% for targets in expr [if filter] %} body [else else_body]
    kSet,     // {% set targets[0][.targets[1]] = expr %}, or body: {% set x %}body{% endset %}
    kBreak,
    kContinue,
    kMacro,  // {% macro text(targets[i]=defaults[i]...) %} body {% endmacro %}
  };
  Kind kind;
  int line = 0;
  int column = 0;
  std::string text;
  ExprPtr expr;
  std::vector<std::string> targets;
  ExprPtr filter;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<ExprPtr> defaults;  // kMacro: one per parameter, null = required
};

}  // namespace tandem::text::jinja
