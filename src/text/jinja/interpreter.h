// Jinja interpreter: renders a parsed template (ast.h) against a JSON context.
//
// Scoping follows Jinja: each loop iteration has its own scope, so `{% set %}` inside a loop
// does not leak out of it (templates use namespace() for that); `if` blocks share the
// enclosing scope.
// Reference: jinja2 (3.1) runtime semantics, with two leniencies: an attribute of an undefined
// value is undefined instead of an error, and a macro body sees the caller's variables
// (dynamic scope) besides its parameters and the globals.
//
// Every render is bounded (render_limits.h): loop iterations, macro recursion, stack bytes,
// output and value sizes, wall time and cancellation are checked as it runs, and hitting one is
// a TemplateError at the node that hit it, like any other template error.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "text/jinja/ast.h"
#include "text/jinja/render_limits.h"
#include "text/jinja/value.h"

namespace tandem::text::jinja {

class Interpreter {
 public:
  // `context` must be an object; its members are the template's global variables.
  Interpreter(const Json& context, const RenderLimits& limits);

  // Throws TemplateError (line/column of the failing node) on a runtime error,
  // raise_exception(), or a limit reached. Call once, on the thread that constructed it.
  std::string Render(const Body& body);

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow ExecBody(const Body& body, std::string* out);
  Flow ExecNode(const Node& node, std::string* out);
  Flow ExecFor(const Node& node, std::string* out);
  void ExecSet(const Node& node);

  // Eval = EvalValue plus the size checks every value passes (strings and lists no larger
  // than the limits), so no built value escapes them.
  Value Eval(const Expr& expr);
  Value EvalValue(const Expr& expr);
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

  // Budget checks, each failing at `line`/`column`: one more loop iteration; the stack, the
  // clock and cancellation (every call checks the stack, every 256th the rest); a string that
  // is about to be appended to an output; a list/dict the template built (bytes and depth).
  void CountIteration(int line, int column);
  void Tick(int line, int column);
  void CheckOutput(const std::string& out, int line, int column) const;
  // The render's live bytes (RenderMeter's values plus its outputs in progress) within
  // max_live_bytes.
  void CheckLive(int line, int column) const;
  void CheckBuilt(const Json& value, int line, int column,
                  int32_t max_depth = kMaxValueDepth) const;

  std::vector<std::map<std::string, Value>> scopes_;  // [0] = globals
  RenderMeter meter_;                                 // the values this render made
  std::vector<const std::string*> outputs_;           // outputs in progress, outermost first
  std::map<std::string, const Node*> macros_;         // defined so far, by name

  const RenderLimits limits_;
  double deadline_s_ = 0;             // MonotonicSeconds() past which the render stops; 0 = none
  const char* stack_base_ = nullptr;  // an address near the top of Render's frame
  int64_t iterations_ = 0;            // loop iterations so far
  uint32_t ticks_ = 0;
  int32_t call_depth_ = 0;  // macro calls in progress
};

}  // namespace tandem::text::jinja
