// Jinja interpreter: renders a parsed template (ast.h) against a JSON context.
//
// Scoping follows Jinja: each loop iteration has its own scope, so `{% set %}` inside a loop
// does not leak out of it (templates use namespace() for that); `if` blocks share the
// enclosing scope.
// Reference: jinja2 (3.1) runtime semantics, with two leniencies: an attribute of an undefined
// value is undefined instead of an error, and a macro body sees the caller's variables
// (dynamic scope) besides its parameters and the globals.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/value.h"

namespace tandem::text::jinja {

class Interpreter {
 public:
  // `context` must be an object; its members are the template's global variables.
  explicit Interpreter(const Json& context);

  // Throws TemplateError (line/column of the failing node) on a runtime error or
  // raise_exception().
  std::string Render(const Body& body);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow ExecBody(const Body& body, std::string* out);
  Flow ExecNode(const Node& node, std::string* out);
  Flow ExecFor(const Node& node, std::string* out);
  void ExecSet(const Node& node);

  Value Eval(const Expr& expr);
  Value EvalBinary(const Expr& expr);
  Value EvalCall(const Expr& expr);
  // Renders macro `macro` with the call's arguments bound as its parameters.
  Value CallMacro(const Node& macro, std::vector<Value> args,
                  const std::vector<std::pair<std::string, Value>>& kwargs, const Expr& at);
  Value EvalIndex(const Value& target, const Value& index, const Expr& at);
  Value EvalSlice(const Expr& expr);
  // Evaluates args[first..] and kwargs of a call/filter/test node.
  std::vector<Value> EvalArgs(const Expr& expr, size_t first);
  std::vector<std::pair<std::string, Value>> EvalKwargs(const Expr& expr);

  Value* Lookup(const std::string& name);

  std::vector<std::map<std::string, Value>> scopes_;  // [0] = globals
  std::map<std::string, const Node*> macros_;         // defined so far, by name
};

}  // namespace tandem::text::jinja
