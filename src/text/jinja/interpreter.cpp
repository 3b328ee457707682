#include "text/jinja/interpreter.h"

#include <climits>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/clock.h"
#include "text/jinja/builtins.h"
#include "text/jinja/error.h"

namespace tandem::text::jinja {
namespace {

// Items a for loop walks: list elements, dict keys, string characters; undefined/None = none.
std::vector<Value> IterationItems(const Value& value, const Expr& at) {
  if (value.undefined() || value.data().is_null()) {
    return {};
  }
  const Json& d = value.data();
  std::vector<Value> items;
  if (d.is_array()) {
    items.reserve(d.size());
    for (const Json& item : d) {
      items.push_back(Value::Of(item));
    }
  } else if (d.is_object()) {
    for (auto it = d.begin(); it != d.end(); ++it) {
      items.push_back(Value::Of(it.key()));
    }
  } else if (d.is_string()) {
    for (char c : d.get_ref<const std::string&>()) {
      items.push_back(Value::Of(std::string(1, c)));
    }
  } else {
    Fail("'" + TypeName(value) + "' object is not iterable", at);
  }
  return items;
}

// Bytes (strings and keys counted by length, other scalars as 8) and nesting depth of `value`,
// walked with an explicit stack; stops early once either passes its bound. Returns false then.
bool WithinBounds(const Json& value, int64_t max_bytes, int32_t max_depth, bool* too_deep) {
  std::vector<std::pair<const Json*, int32_t>> stack = {{&value, 1}};
  int64_t bytes = 0;
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (v->is_string()) {
      bytes += static_cast<int64_t>(v->get_ref<const std::string&>().size());
    } else if (v->is_array() || v->is_object()) {
      if (depth > max_depth) {
        *too_deep = true;
        return false;
      }
      for (auto it = v->begin(); it != v->end(); ++it) {
        if (v->is_object()) {
          bytes += static_cast<int64_t>(it.key().size());
        }
        stack.emplace_back(&*it, depth + 1);
      }
    }
    bytes += 8;
    if (bytes > max_bytes) {
      return false;
    }
  }
  return true;
}

int64_t NormalizeIndex(int64_t index, size_t size) {
  return index < 0 ? index + static_cast<int64_t>(size) : index;
}

}  // namespace

Interpreter::Interpreter(const Json& context, const RenderLimits& limits) : limits_(limits) {
  scopes_.emplace_back();
  for (auto it = context.begin(); it != context.end(); ++it) {
    scopes_[0][it.key()] = Value::Of(it.value());
  }
}

std::string Interpreter::Render(const Body& body) {
  char base = 0;
  stack_base_ = &base;
  deadline_s_ = limits_.timeout_s > 0 ? MonotonicSeconds() + limits_.timeout_s : 0;
  RenderMeter::Scope metered(&meter_);
  std::string out;
  outputs_.push_back(&out);
  ExecBody(body, &out);
  outputs_.pop_back();
  return out;
}

void Interpreter::CountIteration(int line, int column) {
  if (++iterations_ > limits_.max_loop_iterations) {
    throw TemplateError("the render ran more than " + std::to_string(limits_.max_loop_iterations) +
                            " loop iterations, the limit per render "
                            "(--chat-template-max-loop-iterations)",
                        line, column);
  }
  Tick(line, column);
}

void Interpreter::CheckLive(int line, int column) const {
  int64_t live = meter_.live_bytes();
  for (const std::string* out : outputs_) {
    live += static_cast<int64_t>(out->size());
  }
  if (live > limits_.max_live_bytes) {
    throw TemplateError("the render holds more than " + std::to_string(limits_.max_live_bytes) +
                            " bytes in the values it made and its output together, the limit (4 "
                            "× --chat-template-max-output-bytes)",
                        line, column);
  }
}

void Interpreter::Tick(int line, int column) {
  CheckLive(line, column);
  char here = 0;
  if (stack_base_ - &here > kMaxRenderStackBytes) {
    throw TemplateError("the render nests expressions and macro calls too deeply (more than " +
                            std::to_string(kMaxRenderStackBytes >> 20) + " MiB of stack)",
                        line, column);
  }
  if ((++ticks_ & 255) != 0) {
    return;
  }
  if (limits_.cancelled != nullptr && limits_.cancelled->load(std::memory_order_relaxed)) {
    throw TemplateError("the render was cancelled: the server is shutting down", line, column);
  }
  if (limits_.client_gone != nullptr && limits_.client_gone->load(std::memory_order_relaxed)) {
    throw TemplateError("the render was cancelled: the client closed the connection", line, column);
  }
  if (deadline_s_ > 0 && MonotonicSeconds() > deadline_s_) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g", limits_.timeout_s);
    throw TemplateError(std::string("the render took longer than ") + seconds +
                            " s, the limit (--chat-template-timeout)",
                        line, column);
  }
}

void Interpreter::CheckOutput(const std::string& out, int line, int column) const {
  CheckLive(line, column);
  if (static_cast<int64_t>(out.size()) > limits_.max_output_bytes) {
    throw TemplateError("the render's output grew past " +
                            std::to_string(limits_.max_output_bytes) +
                            " bytes, the limit (--chat-template-max-output-bytes)",
                        line, column);
  }
}

void Interpreter::CheckBuilt(const Json& value, int line, int column, int32_t max_depth) const {
  bool too_deep = false;
  if (WithinBounds(value, limits_.max_output_bytes, max_depth, &too_deep)) {
    return;
  }
  if (too_deep) {
    throw TemplateError("a list or dict built by the template nests deeper than " +
                            std::to_string(kMaxValueDepth) + " levels, the limit",
                        line, column);
  }
  throw TemplateError("a value built by the template is larger than " +
                          std::to_string(limits_.max_output_bytes) +
                          " bytes, the limit (--chat-template-max-output-bytes)",
                      line, column);
}

Interpreter::Flow Interpreter::ExecBody(const Body& body, std::string* out) {
  for (const NodePtr& node : body) {
    Flow flow = ExecNode(*node, out);
    if (flow != Flow::kNormal) {
      return flow;
    }
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::ExecNode(const Node& node, std::string* out) {
  Tick(node.line, node.column);
  switch (node.kind) {
    case Node::Kind::kText:
      *out += node.text;
      CheckOutput(*out, node.line, node.column);
      return Flow::kNormal;
    case Node::Kind::kOutput:
      *out += ToOutputString(Eval(*node.expr));
      CheckOutput(*out, node.line, node.column);
      return Flow::kNormal;
    case Node::Kind::kIf:
      for (const auto& [cond, body] : node.branches) {
        if (IsTruthy(Eval(*cond))) {
          return ExecBody(body, out);
        }
      }
      return ExecBody(node.else_body, out);
    case Node::Kind::kFor:
      return ExecFor(node, out);
    case Node::Kind::kSet:
      ExecSet(node);
      return Flow::kNormal;
    case Node::Kind::kBreak:
      return Flow::kBreak;
    case Node::Kind::kContinue:
      return Flow::kContinue;
    case Node::Kind::kMacro:
      macros_[node.text] = &node;
      return Flow::kNormal;
  }
  return Flow::kNormal;
}

Interpreter::Flow Interpreter::ExecFor(const Node& node, std::string* out) {
  const Value iterable = Eval(*node.expr);
  // Refused before the items are built (a 15 MB string is 15 million of them).
  const Json& d = iterable.data();
  int64_t num_items = 0;
  if (d.is_string()) {
    num_items = static_cast<int64_t>(d.get_ref<const std::string&>().size());
  }
  if (d.is_array() || d.is_object()) {
    num_items = static_cast<int64_t>(d.size());
  }
  if (num_items > limits_.max_loop_iterations - iterations_) {
    Fail("a loop over " + std::to_string(num_items) + " items would pass the limit of " +
             std::to_string(limits_.max_loop_iterations) +
             " loop iterations per render (--chat-template-max-loop-iterations)",
         *node.expr);
  }
  std::vector<Value> all_items = IterationItems(iterable, *node.expr);
  auto bind = [&](const Value& item) {
    if (node.targets.size() == 1) {
      scopes_.back()[node.targets[0]] = item;
      return;
    }
    const Json& d = item.data();
    if (!d.is_array() || d.size() != node.targets.size()) {
      Fail("cannot unpack " + ToOutputString(item).substr(0, 200) + " into " +
               std::to_string(node.targets.size()) + " loop variables",
           *node.expr);
    }
    for (size_t i = 0; i < node.targets.size(); ++i) {
      scopes_.back()[node.targets[i]] = Value::Of(d[i]);
    }
  };
  std::vector<Value> items;
  if (!node.filter) {
    items = std::move(all_items);
  } else {
    for (const Value& item : all_items) {
      CountIteration(node.line, node.column);
      scopes_.emplace_back();
      bind(item);
      bool keep = IsTruthy(Eval(*node.filter));
      scopes_.pop_back();
      if (keep) {
        items.push_back(item);
      }
    }
  }
  if (items.empty()) {
    return ExecBody(node.else_body, out);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    CountIteration(node.line, node.column);
    scopes_.emplace_back();
    bind(items[i]);
    Json loop = Json::object();
    loop["index0"] = i;
    loop["index"] = i + 1;
    loop["revindex"] = items.size() - i;
    loop["revindex0"] = items.size() - i - 1;
    loop["first"] = i == 0;
    loop["last"] = i + 1 == items.size();
    loop["length"] = items.size();
    if (i > 0) {
      loop["previtem"] = items[i - 1].data();
    }
    if (i + 1 < items.size()) {
      loop["nextitem"] = items[i + 1].data();
    }
    scopes_.back()["loop"] = Value::Of(std::move(loop));
    Flow flow = ExecBody(node.body, out);
    scopes_.pop_back();
    if (flow == Flow::kBreak) {
      break;
    }
  }
  return Flow::kNormal;
}

void Interpreter::ExecSet(const Node& node) {
  Value value;
  if (node.expr != nullptr) {
    value = Eval(*node.expr);
  } else {  // block set: the rendered body, a string
    std::string rendered;
    outputs_.push_back(&rendered);
    ExecBody(node.body, &rendered);  // checked against max_output_bytes as it grows
    outputs_.pop_back();
    value = Value::Of(std::move(rendered));
  }
  if (node.targets.size() == 1) {
    scopes_.back()[node.targets[0]] = std::move(value);
    return;
  }
  Value* object = Lookup(node.targets[0]);
  // (Positioned at the node: node.expr is null for a block set.)
  if (object == nullptr || !object->data().is_object()) {
    throw TemplateError("cannot set attribute '" + node.targets[1] + "' of '" + node.targets[0] +
                            "'; expected a namespace() object",
                        node.line, node.column);
  }
  // The value alone is measured (not the whole namespace, which a loop may set often): one
  // level below the depth limit, so a namespace holding itself stops there too.
  CheckBuilt(value.data(), node.line, node.column, kMaxValueDepth - 1);
  // A copy into the namespace, in place, replacing the attribute's old value.
  Json& attributes = object->MutableData();
  const auto old = attributes.find(node.targets[1]);
  meter_.Adjust(JsonBytes(value.data()) - (old == attributes.end() ? 0 : JsonBytes(*old)));
  attributes[node.targets[1]] = value.data();
  CheckLive(node.line, node.column);
}

Value* Interpreter::Lookup(const std::string& name) {
  for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
    auto it = scope->find(name);
    if (it != scope->end()) {
      return &it->second;
    }
  }
  return nullptr;
}

Value Interpreter::Eval(const Expr& expr) {
  Tick(expr.line, expr.column);
  Value value = EvalValue(expr);
  const Json& d = value.data();
  if (d.is_string()) {
    CheckOutput(d.get_ref<const std::string&>(), expr.line, expr.column);
  } else if (d.is_array() && static_cast<int64_t>(d.size()) > limits_.max_loop_iterations) {
    Fail("a list of " + std::to_string(d.size()) + " items is longer than the limit of " +
             std::to_string(limits_.max_loop_iterations) + " (--chat-template-max-loop-iterations)",
         expr);
  }
  return value;
}

Value Interpreter::EvalValue(const Expr& expr) {
  switch (expr.kind) {
    case Expr::Kind::kLiteral:
      return Value::Of(expr.literal);
    case Expr::Kind::kName: {
      Value* value = Lookup(expr.name);
      return value ? *value : Value::Undefined();
    }
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      Json list = Json::array();
      for (const ExprPtr& arg : expr.args) {
        list.push_back(Eval(*arg).data());
      }
      CheckBuilt(list, expr.line, expr.column);
      return Value::Of(std::move(list));
    }
    case Expr::Kind::kDict: {
      Json dict = Json::object();
      for (size_t i = 0; i + 1 < expr.args.size(); i += 2) {
        Value key = Eval(*expr.args[i]);
        if (!key.data().is_string()) {
          Fail("dict keys must be strings", *expr.args[i]);
        }
        dict[key.data().get<std::string>()] = Eval(*expr.args[i + 1]).data();
      }
      CheckBuilt(dict, expr.line, expr.column);
      return Value::Of(std::move(dict));
    }
    case Expr::Kind::kAttr: {
      Value object = Eval(*expr.args[0]);
      if (object.data().is_object() && object.data().contains(expr.name)) {
        return Value::Of(object.data()[expr.name]);
      }
      return Value::Undefined();
    }
    case Expr::Kind::kIndex:
      return EvalIndex(Eval(*expr.args[0]), Eval(*expr.args[1]), expr);
    case Expr::Kind::kSlice:
      return EvalSlice(expr);
    case Expr::Kind::kCall:
      return EvalCall(expr);
    case Expr::Kind::kFilter: {
      std::vector<Value> args = EvalArgs(expr, 0);
      return ApplyFilter(expr.name, args, EvalKwargs(expr), expr, limits_);
    }
    case Expr::Kind::kTest: {
      bool result = ApplyTest(expr.name, EvalArgs(expr, 0), expr);
      return Value::Of(result != expr.negated);
    }
    case Expr::Kind::kUnary: {
      Value operand = Eval(*expr.args[0]);
      if (expr.name == "not") {
        return Value::Of(!IsTruthy(operand));
      }
      if (!operand.data().is_number()) {
        Fail("bad operand type for unary " + expr.name + ": '" + TypeName(operand) + "'", expr);
      }
      if (expr.name == "+") {
        return operand;
      }
      if (operand.data().is_number_float()) {
        return Value::Of(-operand.data().get<double>());
      }
      if (operand.data().get<int64_t>() == INT64_MIN) {
        Fail("integer overflow in unary -", expr);
      }
      return Value::Of(-operand.data().get<int64_t>());
    }
    case Expr::Kind::kBinary:
      return EvalBinary(expr);
    case Expr::Kind::kTernary:
      if (IsTruthy(Eval(*expr.args[1]))) {
        return Eval(*expr.args[0]);
      }
      return expr.args[2] ? Eval(*expr.args[2]) : Value::Undefined();
  }
  Fail("unknown expression", expr);
}

Value Interpreter::EvalIndex(const Value& target, const Value& index, const Expr& at) {
  const Json& d = target.data();
  if (d.is_object() && index.data().is_string()) {
    auto it = d.find(index.data().get<std::string>());
    return it != d.end() ? Value::Of(*it) : Value::Undefined();
  }
  if ((d.is_array() || d.is_string()) && index.data().is_number_integer()) {
    size_t size = d.is_array() ? d.size() : d.get_ref<const std::string&>().size();
    int64_t i = NormalizeIndex(index.data().get<int64_t>(), size);
    if (i < 0 || i >= static_cast<int64_t>(size)) {
      return Value::Undefined();
    }
    if (d.is_array()) {
      return Value::Of(d[i]);
    }
    return Value::Of(std::string(1, d.get_ref<const std::string&>()[i]));
  }
  if (target.undefined()) {
    return Value::Undefined();
  }
  Fail("cannot index '" + TypeName(target) + "' with '" + TypeName(index) + "'", at);
}

Value Interpreter::EvalSlice(const Expr& expr) {
  Value target = Eval(*expr.args[0]);
  const Json& d = target.data();
  if (!d.is_array() && !d.is_string()) {
    Fail("cannot slice '" + TypeName(target) + "'", expr);
  }
  auto size =
      static_cast<int64_t>(d.is_array() ? d.size() : d.get_ref<const std::string&>().size());
  auto part = [&](int k, int64_t fallback) {
    if (!expr.args[k]) {
      return fallback;
    }
    Value v = Eval(*expr.args[k]);
    if (v.data().is_null()) {
      return fallback;
    }
    if (!v.data().is_number_integer()) {
      Fail("slice indices must be integers", *expr.args[k]);
    }
    return v.data().get<int64_t>();
  };
  int64_t step = part(3, 1);
  if (step == 0) {
    Fail("slice step cannot be zero", expr);
  }
  // Python slice semantics (PySlice_AdjustIndices).
  auto clamp = [&](int64_t i, bool is_stop) {
    if (i < 0) {
      i += size;
    }
    if (step > 0) {
      return std::clamp<int64_t>(i, 0, size);
    }
    return std::clamp<int64_t>(i, -1, size - 1);
  };
  int64_t start = expr.args[1] ? clamp(part(1, 0), false) : (step > 0 ? 0 : size - 1);
  int64_t stop = expr.args[2] ? clamp(part(2, 0), true) : (step > 0 ? size : -1);
  Json result = d.is_array() ? Json::array() : Json("");
  // Count first, in 128 bits: `i += step` with a step near INT64_MAX wrapped and indexed
  // outside the value.
  const __int128 span =
      step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
  const __int128 stride = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
  const int64_t count = span <= 0 ? 0 : static_cast<int64_t>((span - 1) / stride + 1);
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = static_cast<int64_t>(start + static_cast<__int128>(k) * step);
    if (d.is_array()) {
      result.push_back(d[i]);
    } else {
      result.get_ref<std::string&>() += d.get_ref<const std::string&>()[i];
    }
  }
  return Value::Of(std::move(result));
}

Value Interpreter::EvalCall(const Expr& expr) {
  const Expr& callee = *expr.args[0];
  std::vector<Value> args = EvalArgs(expr, 1);
  auto kwargs = EvalKwargs(expr);
  if (callee.kind == Expr::Kind::kAttr) {
    return CallMethod(Eval(*callee.args[0]), callee.name, args, kwargs, expr, limits_);
  }
  if (callee.kind == Expr::Kind::kName && !Lookup(callee.name)) {
    auto macro = macros_.find(callee.name);
    if (macro != macros_.end()) {
      return CallMacro(*macro->second, std::move(args), kwargs, expr);
    }
  }
  if (callee.kind == Expr::Kind::kName && !Lookup(callee.name) && IsGlobalFunction(callee.name)) {
    Value result = CallFunction(callee.name, args, kwargs, expr, limits_);
    if (callee.name == "namespace") {
      CheckBuilt(result.data(), expr.line, expr.column);
    }
    return result;
  }
  Fail("'" + (callee.kind == Expr::Kind::kName ? callee.name : std::string("expression")) +
           "' is not callable",
       expr);
}

Value Interpreter::CallMacro(const Node& macro, std::vector<Value> args,
                             const std::vector<std::pair<std::string, Value>>& kwargs,
                             const Expr& at) {
  if (args.size() > macro.targets.size()) {
    Fail("macro '" + macro.text + "' takes " + std::to_string(macro.targets.size()) +
             " arguments, got " + std::to_string(args.size()),
         at);
  }
  std::map<std::string, Value> scope;
  for (size_t i = 0; i < macro.targets.size(); ++i) {
    if (i < args.size()) {
      scope[macro.targets[i]] = std::move(args[i]);
    } else if (macro.defaults[i]) {
      scope[macro.targets[i]] = Eval(*macro.defaults[i]);
    } else {
      scope[macro.targets[i]] = Value::Undefined();
    }
  }
  for (const auto& [name, value] : kwargs) {
    if (!scope.count(name)) {
      Fail("macro '" + macro.text + "' has no parameter '" + name + "'", at);
    }
    scope[name] = value;
  }
  if (call_depth_ >= limits_.max_recursion_depth) {
    Fail("macro '" + macro.text + "' called with " + std::to_string(call_depth_) +
             " macro calls already in progress; the limit is " +
             std::to_string(limits_.max_recursion_depth) + " (--chat-template-max-recursion)",
         at);
  }
  ++call_depth_;
  scopes_.push_back(std::move(scope));
  std::string out;
  outputs_.push_back(&out);
  ExecBody(macro.body, &out);
  outputs_.pop_back();
  scopes_.pop_back();
  --call_depth_;
  return Value::Of(std::move(out));
}

std::vector<Value> Interpreter::EvalArgs(const Expr& expr, size_t first) {
  std::vector<Value> args;
  for (size_t i = first; i < expr.args.size(); ++i) {
    args.push_back(Eval(*expr.args[i]));
  }
  return args;
}

std::vector<std::pair<std::string, Value>> Interpreter::EvalKwargs(const Expr& expr) {
  std::vector<std::pair<std::string, Value>> kwargs;
  for (const auto& [name, value] : expr.kwargs) {
    kwargs.emplace_back(name, Eval(*value));
  }
  return kwargs;
}

}  // namespace tandem::text::jinja
